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

Retries are botocore's (``retry_mode`` "standard" or "adaptive", ``max_attempts``), with
two additions of aorc's: a body that breaks off is resumed (a ranged GET for the bytes still
missing, ``If-Match`` the ETag of the first piece), and a write request (``PutObject``,
``UploadPart``, ``CompleteMultipartUpload``, ``AbortMultipartUpload``) that botocore gave up on
after a throttling or transient failure is sent again for as long as ``retry_budget``
seconds allow (see :mod:`aorc.io.transport`). A ``CompleteMultipartUpload`` whose answer was
lost and whose repetition hears ``NoSuchUpload`` (the first one did complete) is settled by
comparing the object's ETag with the one the parts make. Every retry is counted in
:class:`~aorc.io.base.IOStats`.
"""

from __future__ import annotations

import binascii
import dataclasses
import hashlib
from typing import Any

from aorc.errors import ObjectExistsError, RetriesExhaustedError, StoreError
from aorc.io import transport
from aorc.io.remote import (
    Ranged,
    RemoteStore,
    UploadOutput,
    parse_content_range,
)
from aorc.io.s3.clients import (
    ClientLease,
    acquire_client,
    map_s3_error,
    retry_attempts,
    s3_failures,
)
from aorc.io.s3.config import MAX_PART_SIZE, MAX_PARTS, S3Config, parse_s3_url

__all__ = ["PARTS_PER_DOUBLING", "S3Output", "S3Store"]

#: The part size doubles after this many parts (see the module docstring).
PARTS_PER_DOUBLING = 1000


def _error_code(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code", ""))
    return ""


# =========================================================================== reading

class S3Store(RemoteStore):
    """One S3 object, read with ranged ``GetObject`` requests.

    Args:
        bucket: the bucket.
        key: the object's key.
        config: connection settings and tuning (default: the AWS chain, 8 requests in flight).

    Attributes:
        etag: the object's ETag seen by the first read (or given as the ``if_match`` storage
            option); later reads require it.
    """

    def __init__(self, bucket: str, key: str, config: S3Config | None = None,
                 version: str | None = None) -> None:
        self.config = config or S3Config()
        super().__init__(f"s3://{bucket}/{key}", self.config.store, version=version,
                         max_unranged=self.config.max_unranged)
        self.bucket = bucket
        self.key = key
        self._lease: ClientLease | None = None

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any], version: str | None) -> S3Store:
        bucket, key = parse_s3_url(url)
        return cls(bucket, key, S3Config.from_options(options), version=version)

    async def _open(self) -> None:
        self._lease = await acquire_client(self.config)

    async def _close(self) -> None:
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        assert self._lease is not None
        byte_range = f"bytes=-{suffix}" if suffix is not None else f"bytes={first}-{last}"
        received = bytearray()
        span: tuple[int, int, int | None] | None = None
        pin = self.etag
        attempt = 0
        while True:
            attempt += 1
            got = await self._get_rounds(byte_range, pin, action)
            if got is None:
                return None
            response, content_range, piece, cut = got
            if span is None and content_range is None:  # the whole object came back (an
                if cut is not None:  # empty one, or a store ignoring Range): not resumable
                    raise map_s3_error(cut, self.path, action) from cut
                return Ranged(piece, 0, len(piece), response.get("ETag"), whole=True)
            if span is None:
                span, pin = content_range, response.get("ETag")
            elif content_range is None or response.get("ETag") != pin:
                raise StoreError(f"{self.path}: a resumed read got another version or range")
            received += piece
            if cut is None:
                return Ranged(bytes(received), span[0], span[2], pin)
            if attempt >= self.config.retry.max_attempts:
                raise map_s3_error(cut, self.path, action) from cut
            self.stats.retries += 1  # resume: ask for the bytes still missing
            byte_range = f"bytes={span[0] + len(received)}-{span[1]}"
            await transport.clock.sleep(self.config.retry.backoff(attempt))

    async def _get_rounds(self, byte_range: str, pin: str | None, action: str) -> Any:
        """:meth:`_get_once`, handed to botocore again after it gave up on a transient
        failure, ``read_rounds`` times at most."""
        policy = dataclasses.replace(self.config.retry, max_attempts=self.config.read_rounds,
                                     budget=0.0)
        async def once() -> Any:
            with transport.counting(self.stats):
                return await self._get_once(byte_range, pin, action)

        return await transport.retry_until(once, retry=policy, stats=self.stats,
                                           transient=_transient, path=self.path,
                                           action=action)

    async def _get_once(self, byte_range: str, pin: str | None, action: str
                        ) -> tuple[dict[str, Any], tuple[int, int, int | None] | None, bytes,
                                   BaseException | None] | None:
        """One GetObject (botocore retries the request); the response, its range, the body
        and why the body broke off (``None``: it is complete). ``None``: an unsatisfiable
        range."""
        assert self._lease is not None
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self.key, "Range": byte_range}
        if pin is not None:
            kwargs["IfMatch"] = pin
        try:
            response = await self._lease.client.get_object(**kwargs)
        except s3_failures() as exc:
            self.stats.retries += retry_attempts(exc)
            if _error_code(exc) == "InvalidRange":
                self.stats.requests += 1
                return None
            raise map_s3_error(exc, self.path, action) from exc
        self.stats.retries += retry_attempts(response)
        self.stats.requests += 1
        content_range = parse_content_range(response.get("ContentRange"))
        if content_range is None and int(response.get("ContentLength") or 0) \
                > self.max_unranged:
            response["Body"].close()
            raise StoreError(
                f"{self.path}: the store ignored the Range header and would send the "
                f"whole object ({response.get('ContentLength')} bytes) for a ranged "
                f"read; refusing to download more than max_unranged_bytes="
                f"{self.max_unranged}")
        pieces: list[bytes] = []
        cut: BaseException | None = None
        broken: tuple[type[BaseException], ...] = (*s3_failures(), ConnectionError,
                                                   TimeoutError)
        try:
            async with response["Body"] as body:
                while piece := await body.read(1 << 20):
                    pieces.append(piece)
        except broken as exc:
            cut = exc
        data = b"".join(pieces)
        if cut is None and len(data) < int(response.get("ContentLength") or 0):
            cut = ConnectionError("the body ended early")
        self.stats.bytes += len(data)
        return response, content_range, data, cut


# =========================================================================== writing

class S3Output(UploadOutput):
    """Writes one S3 object: a single PUT when small, a streaming multipart upload otherwise.

    The object appears only when :meth:`complete` succeeds. Use it through
    :func:`aorc.io.output.open_output` (``s3://bucket/key``) or directly.

    Args:
        bucket: the bucket.
        key: the object's key.
        config: connection settings and tuning (``part_size``, ``max_concurrency``,
            ``memory_budget``, ``checksum_algorithm``, ``overwrite``).

    Attributes:
        path: ``s3://bucket/key``.
        stats: requests, bytes sent, retries and parts so far.
        bytes_written: bytes accepted by :meth:`write` so far.
        upload_id: the multipart upload's id, once one was created.
        abort_error: why the last abort failed to clean up, if it did (parts may then be
            left for the bucket's lifecycle rules to remove).
    """

    max_parts = MAX_PARTS
    parts_per_doubling = PARTS_PER_DOUBLING
    max_part_size = MAX_PART_SIZE

    def __init__(self, bucket: str, key: str, config: S3Config | None = None) -> None:
        self.config = config or S3Config()
        super().__init__(f"s3://{bucket}/{key}", max_concurrency=self.config.store.max_concurrency,
                         memory_budget=self.config.effective_memory_budget,
                         part_size=self.config.part_size)
        self.bucket = bucket
        self.key = key
        self._parts: list[dict[str, Any]] = []

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any]) -> S3Output:
        bucket, key = parse_s3_url(url)
        return cls(bucket, key, S3Config.from_options(options))

    async def _client(self) -> ClientLease:
        return await acquire_client(self.config)

    async def _call(self, action: str, method: str, params: dict[str, Any], sent: int = 0
                    ) -> dict[str, Any]:
        """One API call (botocore retries it), sent again after a transient failure within
        the retry budget; failures become StoreErrors."""
        policy = dataclasses.replace(self.config.retry, max_attempts=1)  # botocore's count
        async def once() -> dict[str, Any]:
            with transport.counting(self.stats):
                return await self._call_once(action, method, params, sent)

        result: dict[str, Any] = await transport.retry_until(
            once, retry=policy, stats=self.stats, transient=_transient, path=self.path,
            action=action)
        return result

    async def _call_once(self, action: str, method: str, params: dict[str, Any],
                         sent: int = 0) -> dict[str, Any]:
        """One API call, counted in :attr:`stats`; failures become StoreErrors."""
        lease = await self._ensure_client()
        try:
            response: dict[str, Any] = await getattr(lease.client, method)(
                Bucket=self.bucket, Key=self.key, **params)
        except s3_failures() as exc:
            self.stats.retries += retry_attempts(exc)
            if not self.config.overwrite and _error_code(exc) in ("PreconditionFailed", "412"):
                raise ObjectExistsError(f"{self.path}: the object already exists and the "
                                        f"write does not overwrite (overwrite=False)") from exc
            raise map_s3_error(exc, self.path, action) from exc
        self.stats.requests += 1
        self.stats.bytes += sent
        self.stats.retries += retry_attempts(response)
        return response

    def _checksum(self) -> dict[str, str]:
        algorithm = self.config.checksum_algorithm
        return {"ChecksumAlgorithm": algorithm} if algorithm else {}

    def _create_only(self) -> dict[str, str]:
        return {} if self.config.overwrite else {"IfNoneMatch": "*"}

    async def _put_whole(self, data: bytes) -> None:
        try:
            await self._call("write the object", "put_object",
                             {"Body": data, **self._checksum(), **self._create_only()},
                             len(data))
        except ObjectExistsError:  # perhaps our own earlier attempt, whose answer was lost
            if self.stats.retries == 0 or not await self._has_etag(
                    f'"{hashlib.md5(data, usedforsecurity=False).hexdigest()}"'):
                raise

    async def _create_upload(self) -> str:
        response = await self._call("start a multipart upload", "create_multipart_upload",
                                    self._checksum())
        upload_id: str = response["UploadId"]
        return upload_id

    async def _upload_part(self, upload_id: str, number: int, offset: int, data: bytes,
                           total: int | None) -> None:
        params = {"UploadId": upload_id, "PartNumber": number, "Body": data,
                  **self._checksum()}
        response = await self._call(f"upload part {number}", "upload_part", params, len(data))
        part = {"PartNumber": number, "ETag": response["ETag"]}
        algorithm = self.config.checksum_algorithm
        if algorithm and response.get(f"Checksum{algorithm}"):
            part[f"Checksum{algorithm}"] = response[f"Checksum{algorithm}"]
        self._parts.append(part)

    async def _complete_upload(self, upload_id: str, total: int) -> None:
        parts = sorted(self._parts, key=lambda p: int(p["PartNumber"]))
        retries = self.stats.retries
        try:
            await self._call("complete the multipart upload", "complete_multipart_upload",
                             {"UploadId": upload_id, "MultipartUpload": {"Parts": parts},
                              **self._create_only()})
        except StoreError as exc:
            # A repetition after a lost answer hears NoSuchUpload (or, create-only, that the
            # object exists): the first attempt completed if the object has the parts' ETag.
            lost = self.stats.retries > retries and (
                isinstance(exc, ObjectExistsError)
                or _error_code(exc.__cause__ or exc) == "NoSuchUpload")
            if not lost or not await self._has_etag(_multipart_etag(parts)):
                raise

    async def _has_etag(self, etag: str) -> bool:
        """Whether the object exists with this ETag (one HeadObject)."""
        try:
            head = await self._call("look up the object", "head_object", {})
        except StoreError:
            return False
        return str(head.get("ETag", "")) == etag

    async def _abort_upload(self, upload_id: str) -> None:
        """Abort the upload (patiently: parts left behind cost money until the bucket's
        lifecycle rules remove them)."""
        try:
            await self._call("abort the multipart upload", "abort_multipart_upload",
                             {"UploadId": upload_id})
        except StoreError as exc:
            if _error_code(exc.__cause__ or exc) != "NoSuchUpload":
                raise


def _transient(exc: BaseException) -> bool:
    """A failure worth more attempts after botocore's: throttling, 5xx, connections."""
    return isinstance(exc, RetriesExhaustedError)


def _multipart_etag(parts: list[dict[str, Any]]) -> str:
    """The ETag S3 gives the object made of ``parts``: the MD5 of their MD5s, "-" count."""
    try:
        digests = b"".join(binascii.unhexlify(str(p["ETag"]).strip('"')) for p in parts)
    except (ValueError, binascii.Error):  # not MD5s (encrypted with KMS): cannot tell
        return "?"
    return f'"{hashlib.md5(digests, usedforsecurity=False).hexdigest()}-{len(parts)}"'
