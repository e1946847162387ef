"""The ``s3://`` and ``s3a://`` URL schemes (:class:`S3Scheme`): opening S3 objects for
reading (aiobotocore, or obstore with ``engine="obstore"``) and writing, paginated
``ListObjectsV2`` listings (flat, one level, or the first pages), deletes, and the abort
of a prefix's pending multipart uploads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aorc.io.base import IOStats, Store
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
from aorc.io.output import Output

__all__ = ["S3Scheme"]


class S3Scheme(ObjectNamespace):
    """``s3://`` and ``s3a://`` URLs (Amazon S3 and S3-compatible stores)."""

    remote = True

    def check_options(self, storage_options: Mapping[str, Any]) -> None:
        """Parse the S3 settings (endpoint, credentials, retries, part size, ...)."""
        from aorc.io.s3.config import S3Config

        S3Config.from_options(storage_options)

    def open_input(self, url: str, storage_options: Mapping[str, Any] | None) -> Store:
        from aorc.io.s3.store import S3Store
        if storage_options and storage_options.get("engine") == "obstore":
            from aorc.io.s3.obstore_client import ObstoreS3Store
            return ObstoreS3Store.from_url(url, storage_options)
        return S3Store.from_url(url, storage_options)

    def open_output(self, url: str, storage_options: Mapping[str, Any] | None) -> Output:
        from aorc.io.s3.store import S3Output
        return S3Output.from_url(url, storage_options)

    async def listing(self, url: str, storage_options: Mapping[str, Any] | None,
                   stats: IOStats) -> list[FileInfo]:
        from aorc.io.s3.clients import acquire_client, map_s3_error, s3_failures
        from aorc.io.s3.config import S3Config, s3_bucket_of

        scheme = url.partition("://")[0]
        bucket, key = s3_bucket_of(url)
        config = S3Config.from_options(storage_options)
        if config.engine == "obstore":
            return await self._obstore_listing(url, config, stats)
        lease = await acquire_client(config)
        try:
            prefix = folder_prefix(key)
            found, _ = await self._pages(lease.client, bucket, prefix, stats)
            if not found and key and not key.endswith("/"):
                exact, _ = await self._pages(lease.client, bucket, key, stats, limit=1)
                if exact and exact[0][0] == key:
                    return [FileInfo(url, exact[0][1])]
        except s3_failures() as exc:
            raise map_s3_error(exc, url, "list") from exc
        finally:
            lease.release()
        return listed_files(url, f"{scheme}://{bucket}/", prefix, found)

    async def level(self, url: str, storage_options: Mapping[str, Any] | None,
                    stats: IOStats) -> Level:
        """One delimiter listing (``Delimiter=/``, 1,000 entries a page) of the prefix."""
        from aorc.io.s3.clients import acquire_client, map_s3_error, s3_failures
        from aorc.io.s3.config import S3Config, s3_bucket_of

        scheme = url.partition("://")[0]
        bucket, key = s3_bucket_of(url)
        prefix = folder_prefix(key)
        config = S3Config.from_options(storage_options)
        if config.engine == "obstore":
            from aorc.io.s3.obstore_client import level_with_obstore
            found, prefixes = await level_with_obstore(config, bucket, prefix, stats)
            return level_of(f"{scheme}://{bucket}/", found, prefixes)
        lease = await acquire_client(config)
        found, prefixes = [], []
        params: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix, "Delimiter": "/",
                                  "MaxKeys": LIST_PAGE_SIZE}
        try:
            while True:
                response = await lease.client.list_objects_v2(**params)
                stats.requests += 1
                found += [(i["Key"], int(i["Size"])) for i in response.get("Contents", [])]
                prefixes += [p["Prefix"] for p in response.get("CommonPrefixes", [])]
                token = response.get("NextContinuationToken")
                if not response.get("IsTruncated") or not token:
                    break
                params["ContinuationToken"] = token
        except s3_failures() as exc:
            raise map_s3_error(exc, url, "list") from exc
        finally:
            lease.release()
        return level_of(f"{scheme}://{bucket}/", found, prefixes)

    @staticmethod
    async def _obstore_listing(url: str, config: Any, stats: IOStats) -> list[FileInfo]:
        from aorc.io.s3.obstore_client import list_with_obstore, size_with_obstore

        scheme, _, rest = url.partition("://")
        bucket, _, key = rest.partition("/")
        prefix = folder_prefix(key)
        found, _ = await list_with_obstore(config, bucket, prefix, stats)
        if not found and key and not key.endswith("/"):
            size = await size_with_obstore(config, bucket, key, stats)
            if size is not None:
                return [FileInfo(url, size)]
        return listed_files(url, f"{scheme}://{bucket}/", prefix, found)

    async def listing_head(self, url: str, storage_options: Mapping[str, Any] | None,
                           stats: IOStats, max_pages: int) -> tuple[list[FileInfo], bool]:
        """The first ``max_pages`` pages of the prefix's flat listing (:meth:`listing`'s
        files up to the last key listed), and whether more keys follow."""
        from aorc.io.s3.clients import acquire_client, map_s3_error, s3_failures
        from aorc.io.s3.config import S3Config, s3_bucket_of
        from aorc.io.s3.obstore_client import list_with_obstore

        scheme = url.partition("://")[0]
        bucket, key = s3_bucket_of(url)
        prefix = folder_prefix(key)
        config = S3Config.from_options(storage_options)
        if config.engine == "obstore":
            found, more = await list_with_obstore(config, bucket, prefix, stats, max_pages)
        else:
            lease = await acquire_client(config)
            try:
                found, more = await self._pages(lease.client, bucket, prefix, stats,
                                                max_pages=max_pages)
            except s3_failures() as exc:
                raise map_s3_error(exc, url, "list") from exc
            finally:
                lease.release()
        base = f"{scheme}://{bucket}/"
        return visible_files(base, prefix, found), more

    @staticmethod
    async def _pages(client: Any, bucket: str, prefix: str, stats: IOStats,
                     limit: int | None = None, max_pages: int | None = None
                     ) -> tuple[list[tuple[str, int]], bool]:
        """Every (key, size) under ``prefix``: one request per page of
        :data:`LIST_PAGE_SIZE` keys (only the first page when ``limit`` is given, the first
        ``max_pages`` pages when that is); and whether keys were left."""
        out: list[tuple[str, int]] = []
        params: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix,
                                  "MaxKeys": limit or LIST_PAGE_SIZE}
        pages = 0
        while True:
            response = await client.list_objects_v2(**params)
            stats.requests += 1
            pages += 1
            out.extend((item["Key"], int(item["Size"])) for item in response.get("Contents", []))
            token = response.get("NextContinuationToken")
            more = bool(response.get("IsTruncated") and token)
            if limit is not None or not more or pages == max_pages:
                return out, more
            params["ContinuationToken"] = token

    async def delete(self, url: str, storage_options: Mapping[str, Any] | None) -> None:
        from aorc.io.s3.clients import acquire_client, map_s3_error, s3_failures
        from aorc.io.s3.config import S3Config, parse_s3_url

        bucket, key = parse_s3_url(url)
        lease = await acquire_client(S3Config.from_options(storage_options))
        try:
            await lease.client.delete_object(Bucket=bucket, Key=key)
        except s3_failures() as exc:
            raise map_s3_error(exc, url, "delete") from exc
        finally:
            lease.release()

    async def abort_uploads(self, prefix: str, name: re.Pattern[str],
                            storage_options: Mapping[str, Any] | None) -> list[str]:
        """Abort the incomplete multipart uploads of keys starting with ``prefix`` whose
        last component matches ``name``; their URLs."""
        from aorc.io.s3.clients import acquire_client, map_s3_error, s3_failures
        from aorc.io.s3.config import S3Config, s3_bucket_of

        scheme = prefix.partition("://")[0]
        bucket, key = s3_bucket_of(prefix)
        lease = await acquire_client(S3Config.from_options(storage_options))
        aborted = []
        try:
            pages = lease.client.get_paginator("list_multipart_uploads")
            async for page in pages.paginate(Bucket=bucket, Prefix=key):
                for upload in page.get("Uploads", []):
                    if name.fullmatch(upload["Key"].rpartition("/")[2]):
                        await lease.client.abort_multipart_upload(
                            Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
                        aborted.append(f"{scheme}://{bucket}/{upload['Key']}")
        except s3_failures() as exc:
            raise map_s3_error(exc, prefix, "abort stale uploads under") from exc
        finally:
            lease.release()
        return aborted
