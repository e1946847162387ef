"""Google Cloud Storage through its JSON API: reading (:class:`GCSStore`), writing
(:class:`GCSOutput`) and the ``gs://`` / ``gcs://`` scheme (:class:`GCSScheme`).

Reading. Opening an object is one media download of a suffix range (``Range: bytes=-N``):
``Content-Range`` gives the size and ``x-goog-generation`` the object's generation, which
pins every later request (``ifGenerationMatch``): a replaced object fails with
:class:`~aorc.errors.ObjectChangedError`. Ranges are coalesced and fetched concurrently.

Writing. A file of at most ``part_size`` bytes is one upload request when completed. A longer
one is a resumable upload: the session starts when the first chunk is full, each chunk is
sent in the background (in order, as the protocol requires) while the writer goes on, and
the last chunk, which declares the total size, makes the object visible. Until then nothing
is visible; an abort cancels the session (``DELETE``), so nothing is kept. A chunk that fails
transiently is sent again from the offset the server reports it holds.

Listing is the paginated ``objects.list`` (1,000 names a page); a file's size comes from the
listing. Settings and credentials: :mod:`aorc.io.gcs.config`.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping
from typing import Any

from aorc.errors import ObjectNotFoundError, RetriesExhaustedError, SchemaError, StoreError
from aorc.io import transport
from aorc.io.base import IOStats
from aorc.io.gcs.config import GCSConfig, auth_for, parse_gcs_url
from aorc.io.listing import (
    LIST_PAGE_SIZE,
    FileInfo,
    Level,
    ObjectNamespace,
    folder_prefix,
    level_of,
    listed_files,
    visible_files,
)
from aorc.io.pool import ClientLease
from aorc.io.remote import (
    Ranged,
    RemoteStore,
    UploadOutput,
)
from aorc.io.transport import (
    Response,
    RetryPolicy,
    SessionHolder,
    acquire_session,
    quote_path,
    send,
)

__all__ = ["GCSOutput", "GCSScheme", "GCSStore"]


def _error_code(response: Response) -> str:
    """The ``reason`` (or message) of a JSON API error body."""
    try:
        error = json.loads(response.body or b"{}").get("error", {})
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    errors = error.get("errors") or [{}]
    reason = errors[0].get("reason") if isinstance(errors[0], dict) else None
    return str(reason or error.get("status") or "")


class _Requests(SessionHolder):
    """The requests of one object: URLs, authorization, the shared ``send`` arguments."""

    def __init__(self, config: GCSConfig, bucket: str, name: str, path: str,
                 stats: IOStats) -> None:
        super().__init__(config.http)
        self.config = config
        self.bucket = bucket
        self.name = name
        self.path = path
        self.stats = stats
        self.auth = auth_for(config)

    def url(self, kind: str, params: Mapping[str, str] | None = None) -> str:
        """The URL of the object (``kind`` "object"), its media ("media"), its bucket's
        objects ("list") or uploads ("upload")."""
        base = self.config.endpoint
        bucket = quote_path(self.bucket, safe="")
        query = dict(params or {})
        if self.config.user_project:
            query["userProject"] = self.config.user_project
        if kind == "media":
            query = {"alt": "media", **query}
            path = f"/download/storage/v1/b/{bucket}/o/{quote_path(self.name, safe='')}"
        elif kind == "object":
            path = f"/storage/v1/b/{bucket}/o/{quote_path(self.name, safe='')}"
        elif kind == "list":
            path = f"/storage/v1/b/{bucket}/o"
        else:
            path = f"/upload/storage/v1/b/{bucket}/o"
        encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        return f"{base}{path}" + (f"?{encoded}" if encoded else "")

    async def sign(self, method: str, url: str, headers: dict[str, str]) -> str:
        headers.update(await self.auth.headers())
        return url

    async def send(self, method: str, url: str, action: str, *,
                   retry: RetryPolicy | None = None, **kwargs: Any) -> Response:
        return await send(await self.session(), method, url, path=self.path, action=action,
                          stats=self.stats, retry=retry or self.config.retry, sign=self.sign,
                          error_code=_error_code, **kwargs)


# =========================================================================== reading

class GCSStore(RemoteStore):
    """One GCS object, read with ranged media downloads pinned to its generation.

    Args:
        bucket: the bucket.
        name: the object's name.
        config: connection settings and tuning.
        version: a generation to require (the ``if_match`` storage option).

    Attributes:
        etag: the generation every read requires (a string of digits).
    """

    version_form = ("a GCS generation (a string of digits)", str.isdigit)

    def __init__(self, bucket: str, name: str, config: GCSConfig | None = None,
                 version: str | None = None) -> None:
        self.config = config or GCSConfig()
        super().__init__(f"gs://{bucket}/{name}", self.config.store, version=version,
                         max_unranged=self.config.max_unranged)
        self._requests = _Requests(self.config, bucket, name, self.path, self.stats)

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any], version: str | None) -> GCSStore:
        bucket, name = parse_gcs_url(url)
        return cls(bucket, name, GCSConfig.from_options(options), version=version)

    async def _open(self) -> None:
        await self._requests.session()

    async def _close(self) -> None:
        self._requests.release()

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        params = {"ifGenerationMatch": self.etag} if self.etag is not None else {}
        byte_range = f"bytes=-{suffix}" if suffix is not None else f"bytes={first}-{last}"
        response = await self._requests.send(
            "GET", self._requests.url("media", params), action,
            headers={"Range": byte_range}, accept=(200, 206, 416),
            max_unranged=self.max_unranged)
        return self._answer(response, response.header("x-goog-generation"))


# =========================================================================== writing

class GCSOutput(UploadOutput):
    """Writes one GCS object: one upload when small, a resumable upload otherwise.

    The object appears only when :meth:`complete` succeeds (see the module docstring).

    Args:
        bucket: the bucket.
        name: the object's name.
        config: connection settings and tuning (``part_size``, ``memory_budget``,
            ``overwrite``).
    """

    max_parts = 1 << 40  # a resumable upload has no limit on its chunks

    def __init__(self, bucket: str, name: str, config: GCSConfig | None = None) -> None:
        self.config = config or GCSConfig()
        super().__init__(f"gs://{bucket}/{name}", max_concurrency=1,
                         memory_budget=self.config.effective_memory_budget,
                         part_size=self.config.part_size)
        self._requests = _Requests(self.config, bucket, name, self.path, self.stats)
        self._finished = False

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any]) -> GCSOutput:
        bucket, name = parse_gcs_url(url)
        return cls(bucket, name, GCSConfig.from_options(options))

    def _create_only(self) -> dict[str, str]:
        return {} if self.config.overwrite else {"ifGenerationMatch": "0"}

    async def _client(self) -> ClientLease:
        return await acquire_session(self.config.http)

    async def _send(self, method: str, url: str, action: str, **kwargs: Any) -> Response:
        lease = await self._ensure_client()
        return await send(lease.client, method, url, path=self.path, action=action,
                          stats=self.stats, retry=kwargs.pop("retry", self.config.retry),
                          sign=self._requests.sign, error_code=_error_code,
                          precondition="exists", patient=True, **kwargs)

    async def _put_whole(self, data: bytes) -> None:
        params = {"uploadType": "media", "name": self._requests.name, **self._create_only()}
        await self._send("POST", self._requests.url("upload", params), "write the object",
                         headers={"Content-Type": "application/octet-stream"}, body=data)

    async def _create_upload(self) -> str:
        params = {"uploadType": "resumable", "name": self._requests.name,
                  **self._create_only()}
        response = await self._send("POST", self._requests.url("upload", params),
                                    "start a resumable upload",
                                    headers={"X-Upload-Content-Type":
                                             "application/octet-stream"})
        location = response.header("location")
        if not location:
            raise StoreError(f"{self.path}: the resumable upload has no session URL")
        return location

    async def _upload_part(self, upload_id: str, number: int, offset: int, data: bytes,
                           total: int | None) -> None:
        """Send one chunk; after a transient failure, ask the server how much it holds and
        send the rest (each repetition counted as a retry)."""
        attempts = 0
        started = transport.clock.monotonic()
        start = offset
        end = offset + len(data)
        size = "*" if total is None else str(total)
        while True:
            attempts += 1
            piece = data[start - offset:]
            try:
                response = await self._send(
                    "PUT", upload_id, f"upload bytes [{start}, {end})",
                    headers={"Content-Range": f"bytes {start}-{end - 1}/{size}"
                             if piece else f"bytes */{size}"},
                    body=piece, accept=(200, 201, 308),
                    retry=RetryPolicy(max_attempts=1, budget=0.0))
            except RetriesExhaustedError:
                if not self.config.retry.again(attempts, started, True):
                    raise
                self.stats.retries += 1
                await transport.clock.sleep(self.config.retry.backoff(attempts))
                start = max(start, await self._persisted(upload_id, size))
                if start >= end and total is None:
                    return
                continue
            if total is not None and response.status in (200, 201):
                self._finished = True
            return

    async def _persisted(self, upload_id: str, size: str) -> int:
        """The number of bytes the session holds (a status query)."""
        response = await self._send("PUT", upload_id, "query the upload's progress",
                                    headers={"Content-Range": f"bytes */{size}"},
                                    accept=(200, 201, 308))
        if response.status in (200, 201):
            self._finished = True
            return 1 << 62
        held = response.header("range")  # "bytes=0-N", absent when nothing was kept
        if not held or "-" not in held:
            return 0
        return int(held.rpartition("-")[2]) + 1

    async def _complete_upload(self, upload_id: str, total: int) -> None:
        if not self._finished:  # every chunk was a full one: say the size
            await self._send("PUT", upload_id, "complete the resumable upload",
                             headers={"Content-Range": f"bytes */{total}"},
                             accept=(200, 201))

    async def _abort_upload(self, upload_id: str) -> None:
        await self._send("DELETE", upload_id, "cancel the resumable upload",
                         accept=(200, 204, 404, 410, 499))


# =========================================================================== scheme

class GCSScheme(ObjectNamespace):
    """``gs://`` and ``gcs://`` URLs (Google Cloud Storage)."""

    remote = True

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Parse the GCS settings (endpoint, credentials, retries, part size, ...)."""
        GCSConfig.from_options({k: v for k, v in storage_options.items() if k != "if_match"})

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> GCSStore:
        return GCSStore.from_url(url, storage_options)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> GCSOutput:
        return GCSOutput.from_url(url, storage_options)

    @staticmethod
    def _split(url: str) -> tuple[str, str, str]:
        scheme, _, rest = url.partition("://")
        bucket, _, key = rest.partition("/")
        if not bucket:
            raise SchemaError(f"a GCS URL must name a bucket, got {url!r}")
        return scheme, bucket, key

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                      stats: IOStats) -> list[FileInfo]:
        scheme, bucket, key = self._split(url)
        config = GCSConfig.from_options(storage_options)
        requests = _Requests(config, bucket, key, url, stats)
        with requests:
            prefix = folder_prefix(key)
            found, _ = await self._pages(requests, prefix)
            if not found and key and not key.endswith("/"):
                try:
                    meta = await requests.send("GET", requests.url("object"), "look up the object")
                except ObjectNotFoundError:
                    meta = None
                if meta is not None:
                    return [FileInfo(url, int(json.loads(meta.body).get("size") or 0))]
        return listed_files(url, f"{scheme}://{bucket}/", prefix, found)

    async def listing_head(self, url: str, storage_options: Mapping[str, Any] | None,
                           stats: IOStats, max_pages: int) -> tuple[list[FileInfo], bool]:
        """The first ``max_pages`` pages of the prefix's flat listing (:meth:`listing`'s
        files up to the last name listed), and whether more names follow."""
        scheme, bucket, key = self._split(url)
        prefix = folder_prefix(key)
        requests = _Requests(GCSConfig.from_options(storage_options), bucket, key, url, stats)
        with requests:
            found, more = await self._pages(requests, prefix, max_pages)
        base = f"{scheme}://{bucket}/"
        return visible_files(base, prefix, found), more

    @staticmethod
    async def _pages(requests: _Requests, prefix: str, max_pages: int | None = None
                     ) -> tuple[list[tuple[str, int]], bool]:
        """Every (name, size) under ``prefix`` (one request per 1,000 names), or those of the
        first ``max_pages`` pages; and whether names were left."""
        params = {"prefix": prefix, "maxResults": str(LIST_PAGE_SIZE),
                  "fields": "items(name,size),nextPageToken"}

        async def page(token: str | None) -> tuple[list[tuple[str, int]], str | None]:
            if token:
                params["pageToken"] = token
            response = await requests.send("GET", requests.url("list", params),
                                           f"list {prefix or 'the bucket'}")
            body = json.loads(response.body or b"{}")
            return [(item["name"], int(item.get("size") or 0))
                    for item in body.get("items") or []], body.get("nextPageToken")

        return await ObjectNamespace.flat_pages(page, max_pages)

    async def level(self, url: str, storage_options: Mapping[str, Any] | None,
                    stats: IOStats) -> Level:
        """One delimiter listing (``delimiter=/``, 1,000 entries a page) of the prefix."""
        scheme, bucket, key = self._split(url)
        prefix = folder_prefix(key)
        requests = _Requests(GCSConfig.from_options(storage_options), bucket, key, url, stats)
        found: list[tuple[str, int]] = []
        prefixes: list[str] = []
        params = {"prefix": prefix, "delimiter": "/", "maxResults": str(LIST_PAGE_SIZE),
                  "fields": "items(name,size),prefixes,nextPageToken"}
        with requests:
            while True:
                response = await requests.send("GET", requests.url("list", params),
                                               f"list {prefix or 'the bucket'}")
                page = json.loads(response.body or b"{}")
                found += [(i["name"], int(i.get("size") or 0)) for i in page.get("items") or []]
                prefixes += list(page.get("prefixes") or [])
                token = page.get("nextPageToken")
                if not token:
                    break
                params["pageToken"] = token
        return level_of(f"{scheme}://{bucket}/", found, prefixes)

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        bucket, name = parse_gcs_url(url)
        requests = _Requests(GCSConfig.from_options(storage_options), bucket, name, url,
                             IOStats())
        with requests:
            await requests.send("DELETE", requests.url("object"), "delete the object",
                                accept=(200, 204, 404))

