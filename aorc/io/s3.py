"""S3 and S3-compatible object stores: reading (:class:`S3Store`) and writing (:class:`S3Output`).

Reading. Opening an object is one ``GetObject`` for a suffix range (``Range: bytes=-N``): the
response's ``Content-Range`` gives the object's size and its ``ETag`` identifies the version,
so no ``HEAD`` is needed; an object shorter than ``N`` comes back whole. Every later request
carries ``If-Match: <etag>``; when the object is replaced mid-read S3 answers 412 and the
read fails with :class:`~aorc.errors.ObjectChangedError` instead of mixing two versions.
Ranges are coalesced and fetched concurrently by :class:`~aorc.io.base.BaseStore`.

Writing. :class:`S3Output` buffers the file. A file of at most ``part_size`` bytes is sent by
one ``PutObject`` when it is completed. A longer one becomes a multipart upload, created when
the first part is full; each full part is uploaded in the background (at most
``max_concurrency`` at once) while the writer goes on encoding, and :meth:`S3Output.write`
waits only when the bytes buffered plus those in flight exceed the memory budget.
:meth:`S3Output.complete` sends the last part and ``CompleteMultipartUpload``;
:meth:`S3Output.abort` (called by the writer on any exception or cancellation) cancels the part
uploads and sends ``AbortMultipartUpload``, shielded from cancellation, so no object appears
and no parts are left. Parts carry a checksum (CRC32 by default) that S3 verifies.

S3 allows at most 10,000 parts, so the part size doubles after every 1,000 parts (8 MiB parts
for the first 8 GB, 16 MiB for the next 16 GB, ...; at most 5 GiB): any file up to S3's
object size limit fits, while small and medium files keep small parts.

Retries are botocore's (``retry_mode`` "standard" or "adaptive", ``max_attempts``), not a
loop of ours; the retries made are counted in :class:`~aorc.io.base.IOStats`.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
from collections.abc import Mapping
from typing import Any

from aorc.errors import SchemaError, StoreError
from aorc.io.base import BaseStore, IOStats
from aorc.io.s3_clients import (
    ClientLease,
    acquire_client,
    map_s3_error,
    retry_attempts,
    s3_failures,
)
from aorc.io.s3_config import MAX_PART_SIZE, MAX_PARTS, S3Config, parse_s3_url

__all__ = ["PARTS_PER_DOUBLING", "S3Output", "S3Store"]

logger = logging.getLogger(__name__)

#: The part size doubles after this many parts (see the module docstring).
PARTS_PER_DOUBLING = 1000

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+)")


def _error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


# =========================================================================== reading

class S3Store(BaseStore):
    """One S3 object, read with ranged ``GetObject`` requests.

    Args:
        bucket: the bucket.
        key: the object's key.
        config: connection settings and tuning (default: the AWS chain, 8 requests in flight).

    Attributes:
        etag: the object's ETag seen by the first read (or given as the ``if_match`` storage
            option); later reads require it.
    """

    def __init__(self, bucket: str, key: str, config: S3Config | None = None) -> None:
        self.config = config or S3Config()
        super().__init__(f"s3://{bucket}/{key}", self.config.store)
        self.bucket = bucket
        self.key = key
        self.etag: str | None = None
        self._lease: ClientLease | None = None

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> S3Store:
        """The store of ``s3://bucket/key`` with ``storage_options`` (see
        :mod:`aorc.io.s3_config`).

        Raises:
            SchemaError: a malformed URL or a bad storage option.
        """
        bucket, key = parse_s3_url(url)
        options = dict(storage_options or {})
        etag = options.pop("if_match", None)
        if etag is not None and (not isinstance(etag, str) or not etag):
            raise SchemaError(f"storage option if_match must be an ETag string, got {etag!r}")
        store = cls(bucket, key, S3Config.from_options(options))
        store.etag = etag  # every read, the first one too, is then pinned to that version
        return store

    async def _open(self) -> None:
        self._lease = await acquire_client(self.config)

    async def _close(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    async def _get(self, byte_range: str, action: str) -> tuple[dict[str, Any], bytes] | None:
        """One ranged GetObject (pinned to :attr:`etag` once known); ``None`` when the range
        lies beyond the object's end."""
        assert self._lease is not None
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self.key, "Range": byte_range}
        if self.etag is not None:
            kwargs["IfMatch"] = self.etag
        try:
            response = await self._lease.client.get_object(**kwargs)
            self.stats.retries += retry_attempts(response)
            async with response["Body"] as body:
                data = await body.read()
        except s3_failures() as exc:
            self.stats.retries += retry_attempts(exc)
            if _error_code(exc) == "InvalidRange":
                return None
            raise map_s3_error(exc, self.path, action) from exc
        return response, data

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        got = await self._get(f"bytes=-{max(n, 1)}", "read the end of the object")
        if got is None:  # no suffix is satisfiable: the object is empty
            return b"", 0
        response, data = got
        if self.etag is None:
            self.etag = response.get("ETag")
        content_range = response.get("ContentRange")
        if content_range:
            match = _CONTENT_RANGE.fullmatch(content_range.strip())
            if match is None:
                raise StoreError(f"{self.path}: unexpected Content-Range {content_range!r}")
            size = int(match.group(3))
        else:  # the whole object came back (an empty one, or a store ignoring Range)
            size = len(data)
        return data[len(data) - min(n, len(data)):], size

    async def _fetch(self, offset: int, length: int) -> bytes:
        got = await self._get(f"bytes={offset}-{offset + length - 1}",
                              f"read bytes [{offset}, {offset + length})")
        if got is None:  # the range starts beyond the end
            return b""
        response, data = got
        if not response.get("ContentRange"):  # a store that ignored Range sent everything
            return data[offset:offset + length]
        return data[:length]


# =========================================================================== writing

class S3Output:
    """Writes one S3 object: a single PUT when small, a streaming multipart upload otherwise.

    The object appears only when :meth:`complete` succeeds. Use it through
    :func:`aorc.io.output.open_output` (``s3://bucket/key``) or directly.

    Args:
        bucket: the bucket.
        key: the object's key.
        config: connection settings and tuning (``part_size``, ``max_concurrency``,
            ``memory_budget``, ``checksum_algorithm``).

    Attributes:
        path: ``s3://bucket/key``.
        stats: requests, bytes sent, retries and parts so far.
        bytes_written: bytes accepted by :meth:`write` so far.
        upload_id: the multipart upload's id, once one was created.
        abort_error: why the last abort failed to clean up, if it did (parts may then be
            left for the bucket's lifecycle rules to remove).
    """

    def __init__(self, bucket: str, key: str, config: S3Config | None = None) -> None:
        self.config = config or S3Config()
        self.bucket = bucket
        self.key = key
        self.path = f"s3://{bucket}/{key}"
        self.stats = IOStats()
        self.bytes_written = 0
        self.upload_id: str | None = None
        self.abort_error: BaseException | None = None
        self._chunks: collections.deque[memoryview] = collections.deque()
        self._buffered = 0
        self._lease: ClientLease | None = None
        self._create_task: asyncio.Task[str] | None = None
        self._abort_task: asyncio.Task[None] | None = None
        self._inflight: dict[asyncio.Task[None], int] = {}
        self._parts: list[dict[str, Any]] = []
        self._next_part = 1
        self._state = "open"  # open -> completing -> completed | aborted; open -> failed

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> S3Output:
        """The output of ``s3://bucket/key`` with ``storage_options`` (see
        :mod:`aorc.io.s3_config`).

        Raises:
            SchemaError: a malformed URL or a bad storage option.
        """
        bucket, key = parse_s3_url(url)
        if storage_options and "if_match" in storage_options:
            raise SchemaError("storage option if_match pins reads to an object's version; "
                              "it does not apply to writes")
        return cls(bucket, key, S3Config.from_options(storage_options))

    def __repr__(self) -> str:
        return f"<S3Output {self.path!r} {self._state}>"

    # ----------------------------------------------------------------- sizes

    def part_size(self, number: int) -> int:
        """The size of part ``number`` (1-based): doubled every :data:`PARTS_PER_DOUBLING`
        parts, at most 5 GiB."""
        return min(MAX_PART_SIZE,
                   self.config.part_size << ((number - 1) // PARTS_PER_DOUBLING))

    @property
    def buffered_bytes(self) -> int:
        """Bytes written but not yet in a part being uploaded."""
        return self._buffered

    @property
    def uploads(self) -> list[asyncio.Future[None]]:
        """The part uploads running (to wait for one to finish; their errors are raised by
        the next :meth:`write` or :meth:`complete`)."""
        return [t for t in self._inflight if not t.done()]

    @property
    def in_flight_bytes(self) -> int:
        """Bytes of the part uploads currently running."""
        return sum(n for t, n in self._inflight.items() if not t.done())

    @property
    def memory_budget(self) -> int:
        """Bytes buffered plus in flight beyond which :meth:`write` waits."""
        return max(self.config.effective_memory_budget, 2 * self.part_size(self._next_part))

    # ----------------------------------------------------------------- public API

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``; full parts start uploading in the background.

        Waits while the bytes buffered plus those being uploaded exceed the memory budget,
        and while every upload slot is busy.

        Raises:
            StoreError: an upload failed (a subclass says why: access denied, retries
                exhausted, ...). Call :meth:`abort` (the writer does).
        """
        self._check_open("write")
        chunk = data if isinstance(data, bytes) else bytes(data)
        if not chunk:
            return
        self._chunks.append(memoryview(chunk))
        self._buffered += len(chunk)
        self.bytes_written += len(chunk)
        try:
            self._reap()
            while self._buffered > self.part_size(self._next_part):
                await self._send_part(self._take(self.part_size(self._next_part)))
            while self._inflight and self._buffered + self.in_flight_bytes > self.memory_budget:
                await self._wait_one()
        except BaseException:
            self._state = "failed"  # a part may be lost: only abort() is possible now
            raise

    async def complete(self) -> None:
        """Upload what is left and make the object visible.

        On failure the upload is aborted (no object, no parts) and the error raised.

        Raises:
            StoreError: an upload or the completion failed.
        """
        self._check_open("complete")
        self._state = "completing"
        try:
            await self._ensure_client()
            if self._create_task is None:
                await self._put_whole(self._take(self._buffered))
            else:
                if self._buffered:
                    await self._send_part(self._take(self._buffered))
                while self._inflight:
                    await self._wait_one()
                await self._complete_upload()
        except BaseException:
            await self.abort()
            raise
        self._state = "completed"
        self._release()

    async def abort(self) -> None:
        """Drop the object being written: cancel the part uploads and abort the multipart
        upload, so nothing appears and no parts are left.

        The clean-up runs to the end even when the caller is cancelled. It never raises;
        a failed clean-up is logged and kept in :attr:`abort_error`. Safe to repeat.
        """
        if self._state == "completed":
            return
        self._state = "aborted"
        self._chunks.clear()
        self._buffered = 0
        if self._abort_task is None:
            if self._lease is None:
                return
            self._abort_task = self._lease.detach(self._abort_sequence())
        await asyncio.shield(self._abort_task)

    @property
    def completed(self) -> bool:
        """Whether :meth:`complete` succeeded."""
        return self._state == "completed"

    # ----------------------------------------------------------------- internals

    def _check_open(self, action: str) -> None:
        if self._state == "aborted":
            raise StoreError(f"cannot {action} {self.path}: the write was aborted")
        if self._state == "failed":
            raise StoreError(f"cannot {action} {self.path}: an earlier write failed or was "
                             f"cancelled; abort() is all that is left")
        if self._state != "open":
            raise StoreError(f"cannot {action} {self.path}: the object is already "
                             f"{'being completed' if self._state == 'completing' else 'complete'}")

    async def _ensure_client(self) -> ClientLease:
        if self._lease is None:
            self._lease = await acquire_client(self.config)
        return self._lease

    def _release(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    def _take(self, size: int) -> bytes:
        """The first ``size`` buffered bytes, removed from the buffer."""
        if size == 0:
            return b""
        first = self._chunks[0]
        if len(first) == size and isinstance(first.obj, bytes) and len(first.obj) == size:
            self._chunks.popleft()
            self._buffered -= size
            return first.obj
        pieces = []
        need = size
        while need:
            chunk = self._chunks[0]
            if len(chunk) <= need:
                pieces.append(self._chunks.popleft())
                need -= len(chunk)
            else:
                pieces.append(chunk[:need])
                self._chunks[0] = chunk[need:]
                need = 0
        self._buffered -= size
        return b"".join(pieces)

    def _reap(self) -> None:
        """Forget finished uploads; raise the first failure among them."""
        for task in [t for t in self._inflight if t.done()]:
            del self._inflight[task]
            task.result()

    async def _wait_one(self) -> None:
        """Wait until an upload finishes; raise if one failed."""
        await asyncio.wait(list(self._inflight), return_when=asyncio.FIRST_COMPLETED)
        self._reap()

    async def _send_part(self, data: bytes) -> None:
        """Start uploading the next part once an upload slot is free."""
        number = self._next_part
        if number > MAX_PARTS:
            raise StoreError(f"{self.path}: the object needs more than {MAX_PARTS} parts")
        while len(self._inflight) >= self.config.store.max_concurrency:
            await self._wait_one()
        upload_id = await self._ensure_upload()
        self._next_part += 1
        task = asyncio.ensure_future(self._upload_part(upload_id, number, data))
        self._inflight[task] = len(data)

    async def _call(self, action: str, method: str, params: dict[str, Any], sent: int = 0
                    ) -> dict[str, Any]:
        """One API call, counted in :attr:`stats`; failures become StoreErrors."""
        lease = await self._ensure_client()
        try:
            response: dict[str, Any] = await getattr(lease.client, method)(
                Bucket=self.bucket, Key=self.key, **params)
        except s3_failures() as exc:
            self.stats.retries += retry_attempts(exc)
            raise map_s3_error(exc, self.path, action) from exc
        self.stats.requests += 1
        self.stats.bytes += sent
        self.stats.retries += retry_attempts(response)
        return response

    def _checksum(self) -> dict[str, str]:
        algorithm = self.config.checksum_algorithm
        return {"ChecksumAlgorithm": algorithm} if algorithm else {}

    async def _put_whole(self, data: bytes) -> None:
        await self._call("write the object", "put_object",
                         {"Body": data, **self._checksum()}, len(data))

    async def _ensure_upload(self) -> str:
        """The multipart upload's id, creating the upload on first use. The creation runs
        detached: a cancelled caller cannot lose the id (abort waits for it)."""
        if self.upload_id is None:
            lease = await self._ensure_client()
            if self._create_task is None:
                self._create_task = lease.detach(self._create_upload())
            self.upload_id = await asyncio.shield(self._create_task)
        return self.upload_id

    async def _create_upload(self) -> str:
        response = await self._call("start a multipart upload", "create_multipart_upload",
                                    self._checksum())
        upload_id: str = response["UploadId"]
        return upload_id

    async def _upload_part(self, upload_id: str, number: int, data: bytes) -> None:
        params = {"UploadId": upload_id, "PartNumber": number, "Body": data,
                  **self._checksum()}
        response = await self._call(f"upload part {number}", "upload_part", params, len(data))
        self.stats.parts += 1
        part = {"PartNumber": number, "ETag": response["ETag"]}
        algorithm = self.config.checksum_algorithm
        if algorithm and response.get(f"Checksum{algorithm}"):
            part[f"Checksum{algorithm}"] = response[f"Checksum{algorithm}"]
        self._parts.append(part)

    async def _complete_upload(self) -> None:
        parts = sorted(self._parts, key=lambda p: int(p["PartNumber"]))
        await self._call("complete the multipart upload", "complete_multipart_upload",
                         {"UploadId": self.upload_id, "MultipartUpload": {"Parts": parts}})

    async def _abort_sequence(self) -> None:
        """Cancel the part uploads, then abort the multipart upload if one was created."""
        tasks = list(self._inflight)
        self._inflight.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        upload_id = self.upload_id
        if upload_id is None and self._create_task is not None:
            try:
                upload_id = await self._create_task
            except Exception:  # noqa: BLE001 - no upload was created: nothing to abort
                upload_id = None
        try:
            if upload_id is not None:
                await self._call("abort the multipart upload", "abort_multipart_upload",
                                 {"UploadId": upload_id})
        except Exception as exc:  # noqa: BLE001 - reported, never raised over the cause
            if _error_code(exc.__cause__ or exc) != "NoSuchUpload":
                self.abort_error = exc
                logger.warning("%s: aborting the multipart upload failed: %s; its parts "
                               "may remain until the bucket's lifecycle rules remove them",
                               self.path, exc)
        finally:
            self._release()
