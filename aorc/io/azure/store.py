"""Azure Blob Storage (and ADLS Gen2 through its Blob endpoint): reading
(:class:`AzureStore`), writing (:class:`AzureOutput`) and the ``az://``, ``abfs://`` and
``abfss://`` schemes (:class:`AzureScheme`).

Reading. Azure has no suffix ranges, so opening a blob whose size is unknown is a HEAD (size
and ETag) and a ranged GET of its tail; when a listing gave the size (datasets), the tail is
one ranged GET, checked against the ``Content-Range`` it comes with. The first ETag pins
every later request (``If-Match``): a replaced blob fails with
:class:`~aorc.errors.ObjectChangedError`. Ranges are coalesced and fetched concurrently.

Writing. A file of at most ``part_size`` bytes is one Put Blob when completed. A longer one is
sent as blocks (Put Block, at most ``max_concurrency`` at once, in the background while the
writer goes on) and made visible by one Put Block List. Until then the blob does not exist
(or keeps its old content); an abort stops the block uploads and never commits them. Azure
keeps uncommitted blocks for at most seven days and never shows them; there is no request
to drop them sooner.

Listing is List Blobs (5,000 names a page, with continuation markers); a file's size comes
from the listing. Settings and credentials: :mod:`aorc.io.azure.config`.
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from aorc.errors import ObjectNotFoundError, StoreError
from aorc.io.azure.config import (
    MAX_BLOCK_SIZE,
    AzureAuth,
    AzureConfig,
    auth_for,
    parse_azure_url,
)
from aorc.io.base import IOStats
from aorc.io.listing import FileInfo, Level, ObjectNamespace, folder_prefix, level_of, visible_files
from aorc.io.pool import ClientLease
from aorc.io.remote import Ranged, RemoteStore, UploadOutput
from aorc.io.transport import Response, SessionHolder, acquire_session, quote_path, send

__all__ = ["BLOCKS_PER_DOUBLING", "AzureOutput", "AzureScheme", "AzureStore"]

#: The block size doubles after this many blocks (Azure allows 50,000).
BLOCKS_PER_DOUBLING = 5000
#: Azure's largest number of blocks in a blob.
MAX_BLOCKS = 50_000
#: Names asked for per List Blobs request (Azure's maximum).
AZURE_PAGE_SIZE = 5000


def _error_code(response: Response) -> str:
    code = response.header("x-ms-error-code")
    if code:
        return code
    try:
        node = ET.fromstring(response.body).find("Code")
    except ET.ParseError:
        return ""
    return node.text or "" if node is not None else ""


def _xml(response: Response, path: str) -> ET.Element:
    try:
        return ET.fromstring(response.body)
    except ET.ParseError as exc:
        raise StoreError(f"{path}: an unreadable listing ({exc})") from None


class _Blob(SessionHolder):
    """The requests of one blob (or container): URLs, signing, ``send``'s arguments."""

    def __init__(self, config: AzureConfig, url: str, stats: IOStats, *,
                 folder: bool = False) -> None:
        super().__init__(config.http)
        location = parse_azure_url(url, folder=folder)
        self.config = config
        self.location = location
        self.path = url
        self.stats = stats
        self.endpoint, account = config.blob_endpoint(location.account)
        self.auth: AzureAuth = auth_for(config, account)

    def url(self, params: Mapping[str, str] | None = None, *, container: bool = False) -> str:
        path = f"/{quote_path(self.location.container, safe='')}"
        if not container:
            path += f"/{quote_path(self.location.name)}"
        query = urllib_encode(params or {})
        return f"{self.endpoint}{path}" + (f"?{query}" if query else "")

    async def send(self, method: str, url: str, action: str, *, session: Any = None,
                   **kwargs: Any) -> Response:
        return await send(session if session is not None else await self.session(), method,
                          url, path=self.path, action=action, stats=self.stats,
                          retry=self.config.retry, sign=self.auth.sign,
                          error_code=_error_code, **kwargs)


def urllib_encode(params: Mapping[str, str]) -> str:
    """A query string with every reserved character percent-encoded."""
    import urllib.parse
    return urllib.parse.urlencode(params, quote_via=urllib.parse.quote)


# =========================================================================== reading

class AzureStore(RemoteStore):
    """One blob, read with ranged GETs pinned to its ETag.

    Args:
        url: the blob's ``az://``, ``abfs://`` or ``abfss://`` URL.
        config: connection settings and tuning.
        version: an ETag to require (the ``if_match`` storage option).
    """

    suffix_ranges = False

    def __init__(self, url: str, config: AzureConfig | None = None,
                 version: str | None = None) -> None:
        self.config = config or AzureConfig()
        super().__init__(url, self.config.store, version=version,
                         max_unranged=self.config.max_unranged)
        self._blob = _Blob(self.config, url, self.stats)

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any], version: str | None) -> AzureStore:
        return cls(url, AzureConfig.from_options(options), version=version)

    async def _open(self) -> None:
        await self._blob.session()

    async def _close(self) -> None:
        self._blob.release()

    def _pinned(self) -> dict[str, str]:
        return {"If-Match": self.etag} if self.etag is not None else {}

    async def _head(self) -> tuple[int, str | None]:
        response = await self._blob.send("HEAD", self._blob.url(), "look up the blob",
                                         headers=self._pinned())
        return int(response.header("content-length") or 0), response.header("etag")

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        if suffix is not None:  # pragma: no cover - suffix_ranges is False
            raise StoreError("Azure has no suffix ranges")
        response = await self._blob.send(
            "GET", self._blob.url(), action,
            headers={"x-ms-range": f"bytes={first}-{last}", **self._pinned()},
            accept=(200, 206, 416), max_unranged=self.max_unranged)
        return self._answer(response, response.header("etag"))


# =========================================================================== writing

class AzureOutput(UploadOutput):
    """Writes one blob: one Put Blob when small, blocks and a Put Block List otherwise.

    The blob appears (or changes) only when :meth:`complete` succeeds.

    Args:
        url: the blob's URL.
        config: connection settings and tuning (``part_size``, ``max_concurrency``,
            ``memory_budget``, ``overwrite``).
    """

    max_parts = MAX_BLOCKS
    parts_per_doubling = BLOCKS_PER_DOUBLING
    max_part_size = MAX_BLOCK_SIZE

    def __init__(self, url: str, config: AzureConfig | None = None) -> None:
        self.config = config or AzureConfig()
        super().__init__(url, max_concurrency=self.config.store.max_concurrency,
                         memory_budget=self.config.effective_memory_budget,
                         part_size=self.config.part_size)
        self._blob = _Blob(self.config, url, self.stats)
        self._blocks: dict[int, str] = {}

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any]) -> AzureOutput:
        return cls(url, AzureConfig.from_options(options))

    async def _client(self) -> ClientLease:
        return await acquire_session(self.config.http)

    async def _send(self, method: str, url: str, action: str, **kwargs: Any) -> Response:
        lease = await self._ensure_client()
        return await self._blob.send(method, url, action, session=lease.client,
                                     precondition="exists", patient=True, **kwargs)

    def _create_only(self) -> dict[str, str]:
        return {} if self.config.overwrite else {"If-None-Match": "*"}

    async def _put_whole(self, data: bytes) -> None:
        await self._send("PUT", self._blob.url(), "write the blob", body=data,
                         headers={"x-ms-blob-type": "BlockBlob",
                                  "Content-Type": "application/octet-stream",
                                  "Content-Length": str(len(data)), **self._create_only()})

    async def _create_upload(self) -> str:
        return "blocks"  # blocks need no session: they belong to the blob's name

    async def _upload_part(self, upload_id: str, number: int, offset: int, data: bytes,
                           total: int | None) -> None:
        block_id = base64.b64encode(f"aorc-{number:08d}".encode()).decode()
        await self._send("PUT", self._blob.url({"comp": "block", "blockid": block_id}),
                         f"upload block {number}", body=data,
                         headers={"Content-Type": "application/octet-stream",
                                  "Content-Length": str(len(data))})
        self._blocks[number] = block_id

    async def _complete_upload(self, upload_id: str, total: int) -> None:
        ids = "".join(f"<Latest>{escape(self._blocks[n])}</Latest>"
                      for n in sorted(self._blocks))
        body = f'<?xml version="1.0" encoding="utf-8"?><BlockList>{ids}</BlockList>'.encode()
        await self._send("PUT", self._blob.url({"comp": "blocklist"}),
                         "commit the block list", body=body,
                         headers={"Content-Type": "application/xml",
                                  "Content-Length": str(len(body)),
                                  "x-ms-blob-content-type": "application/octet-stream",
                                  **self._create_only()})

    async def _abort_upload(self, upload_id: str) -> None:
        self._blocks.clear()  # never committed: Azure discards them (see the module)


# =========================================================================== scheme

class AzureScheme(ObjectNamespace):
    """``az://``, ``abfs://`` and ``abfss://`` URLs (Azure Blob Storage, ADLS Gen2)."""

    remote = True

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Parse the Azure settings (account, credentials, retries, part size, ...)."""
        AzureConfig.from_options({k: v for k, v in storage_options.items()
                                  if k != "if_match"})

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> AzureStore:
        return AzureStore.from_url(url, storage_options)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None
                    ) -> AzureOutput:
        return AzureOutput.from_url(url, storage_options)

    async def is_folder(self, url: str) -> bool:
        """Whether ``url`` ends with ``/`` or names a bare container (no request)."""
        rest = url.partition("://")[2]
        return url.endswith("/") or "/" not in rest

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                      stats: IOStats) -> list[FileInfo]:
        blob = _Blob(AzureConfig.from_options(storage_options), url, stats, folder=True)
        key = blob.location.name
        with blob:
            prefix = folder_prefix(key)
            found, _ = await self._pages(blob, prefix)
            if not found and key and not key.endswith("/"):
                try:
                    head = await blob.send("HEAD", blob.url(), "look up the blob")
                except ObjectNotFoundError:
                    head = None
                if head is not None:
                    return [FileInfo(url, int(head.header("content-length") or 0))]
        if not found:
            raise ObjectNotFoundError(f"{url}: no files found")
        base = url[:len(url) - len(key)] if key else url.rstrip("/") + "/"
        return visible_files(base, prefix, found)

    async def level(self, url: str, storage_options: Mapping[str, Any] | None,
                    stats: IOStats) -> Level:
        """One delimiter listing (``delimiter=/``, 5,000 entries a page) of the prefix."""
        blob = _Blob(AzureConfig.from_options(storage_options), url, stats, folder=True)
        key = blob.location.name
        prefix = folder_prefix(key)
        base = url[:len(url) - len(key)] if key else url.rstrip("/") + "/"
        with blob:
            found, prefixes = await self._delimited(blob, prefix)
        return level_of(base, found, prefixes)

    @staticmethod
    async def _delimited(blob: _Blob, prefix: str) -> tuple[list[tuple[str, int]], list[str]]:
        found: list[tuple[str, int]] = []
        prefixes: list[str] = []
        params = {"restype": "container", "comp": "list", "prefix": prefix, "delimiter": "/",
                  "maxresults": str(AZURE_PAGE_SIZE)}
        while True:
            response = await blob.send("GET", blob.url(params, container=True),
                                       f"list {prefix or 'the container'}")
            root = _xml(response, blob.path)
            found += [(b.findtext("Name") or "", int(b.findtext("Properties/Content-Length")
                                                     or "0")) for b in root.iter("Blob")]
            prefixes += [p.findtext("Name") or "" for p in root.iter("BlobPrefix")]
            marker = root.findtext("NextMarker")
            if not marker:
                return found, prefixes
            params["marker"] = marker

    async def listing_head(self, url: str, storage_options: Mapping[str, Any] | None,
                           stats: IOStats, max_pages: int) -> tuple[list[FileInfo], bool]:
        """The first ``max_pages`` pages of the prefix's flat listing (:meth:`listing`'s
        files up to the last name listed), and whether more names follow."""
        blob = _Blob(AzureConfig.from_options(storage_options), url, stats, folder=True)
        key = blob.location.name
        prefix = folder_prefix(key)
        base = url[:len(url) - len(key)] if key else url.rstrip("/") + "/"
        with blob:
            found, more = await self._pages(blob, prefix, max_pages)
        return visible_files(base, prefix, found), more

    @staticmethod
    async def _pages(blob: _Blob, prefix: str, max_pages: int | None = None
                     ) -> tuple[list[tuple[str, int]], bool]:
        """Every (name, size) under ``prefix`` (one request per 5,000 names), or those of the
        first ``max_pages`` pages; and whether names were left."""
        params = {"restype": "container", "comp": "list", "prefix": prefix,
                  "maxresults": str(AZURE_PAGE_SIZE)}

        async def page(marker: str | None) -> tuple[list[tuple[str, int]], str | None]:
            if marker:
                params["marker"] = marker
            response = await blob.send("GET", blob.url(params, container=True),
                                       f"list {prefix or 'the container'}")
            root = _xml(response, blob.path)
            return [(item.findtext("Name") or "",
                     int(item.findtext("Properties/Content-Length") or "0"))
                    for item in root.iter("Blob")], root.findtext("NextMarker")

        return await ObjectNamespace.flat_pages(page, max_pages)

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        blob = _Blob(AzureConfig.from_options(storage_options), url, IOStats())
        with blob:
            await blob.send("DELETE", blob.url(), "delete the blob", accept=(200, 202, 404))
