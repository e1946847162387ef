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

from collections.abc import Mapping
from typing import Any

from aorc.errors import ObjectExistsError, SchemaError, StoreError
from aorc.io.remote import Ranged, RemoteStore, UploadOutput, parse_content_range
from aorc.io.s3_clients import (
    ClientLease,
    acquire_client,
    map_s3_error,
    retry_attempts,
    s3_failures,
)
from aorc.io.s3_config import MAX_PART_SIZE, MAX_PARTS, S3Config, parse_s3_url

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
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> S3Store:
        """The store of ``s3://bucket/key`` with ``storage_options`` (see
        :mod:`aorc.io.s3_config`).

        Raises:
            SchemaError: a malformed URL or a bad storage option.

        Args:
            url: the ``s3://`` URL.
            storage_options: the store's settings (see the module docstring).

        Returns:
            The store.
        """
        bucket, key = parse_s3_url(url)
        options = dict(storage_options or {})
        etag = options.pop("if_match", None)
        if etag is not None and (not isinstance(etag, str) or not etag):
            raise SchemaError(f"storage option if_match must be an ETag string, got {etag!r}")
        # every read, the first one too, is then pinned to that version
        return cls(bucket, key, S3Config.from_options(options), version=etag)

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
        kwargs: dict[str, Any] = {"Bucket": self.bucket, "Key": self.key, "Range": byte_range}
        if self.etag is not None:
            kwargs["IfMatch"] = self.etag
        try:
            response = await self._lease.client.get_object(**kwargs)
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
            async with response["Body"] as body:
                data = await body.read()
        except s3_failures() as exc:
            self.stats.retries += retry_attempts(exc)
            if _error_code(exc) == "InvalidRange":
                self.stats.requests += 1
                return None
            raise map_s3_error(exc, self.path, action) from exc
        self.stats.bytes += len(data)
        version = response.get("ETag")
        if content_range is None:  # the whole object came back (an empty one, or a store
            return Ranged(data, 0, len(data), version, whole=True)  # ignoring Range)
        start, _, total = content_range
        return Ranged(data, start, total, version)


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

    def __init__(self, bucket: str, key: str, config: S3Config | None = None) -> None:
        self.config = config or S3Config()
        super().__init__(f"s3://{bucket}/{key}", max_concurrency=self.config.store.max_concurrency,
                         memory_budget=self.config.effective_memory_budget)
        self.bucket = bucket
        self.key = key
        self._parts: list[dict[str, Any]] = []

    @classmethod
    def from_url(cls, url: str, storage_options: Mapping[str, Any] | None = None) -> S3Output:
        """The output of ``s3://bucket/key`` with ``storage_options`` (see
        :mod:`aorc.io.s3_config`).

        Raises:
            SchemaError: a malformed URL or a bad storage option.

        Args:
            url: the ``s3://`` URL.
            storage_options: the store's settings (see the module docstring).

        Returns:
            The output.
        """
        bucket, key = parse_s3_url(url)
        if storage_options and "if_match" in storage_options:
            raise SchemaError("storage option if_match pins reads to an object's version; "
                              "it does not apply to writes")
        return cls(bucket, key, S3Config.from_options(storage_options))

    def part_size(self, number: int) -> int:
        """The size of part ``number`` (1-based): doubled every :data:`PARTS_PER_DOUBLING`
        parts, at most 5 GiB.

        Args:
            number: the part's number, 1-based.

        Returns:
            Its size in bytes.
        """
        return min(MAX_PART_SIZE,
                   self.config.part_size << ((number - 1) // PARTS_PER_DOUBLING))

    async def _client(self) -> ClientLease:
        return await acquire_client(self.config)

    async def _call(self, action: str, method: str, params: dict[str, Any], sent: int = 0
                    ) -> dict[str, Any]:
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
        await self._call("write the object", "put_object",
                         {"Body": data, **self._checksum(), **self._create_only()}, len(data))

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
        await self._call("complete the multipart upload", "complete_multipart_upload",
                         {"UploadId": upload_id, "MultipartUpload": {"Parts": parts},
                          **self._create_only()})

    async def _abort_upload(self, upload_id: str) -> None:
        try:
            await self._call("abort the multipart upload", "abort_multipart_upload",
                             {"UploadId": upload_id})
        except StoreError as exc:
            if _error_code(exc.__cause__ or exc) != "NoSuchUpload":
                raise
