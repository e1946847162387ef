"""S3 reads and listings through obstore (Rust's object_store) instead of aiobotocore:
``storage_options={"engine": "obstore"}`` (``pip install 'aorc[obstore]'``).

The same promises as :class:`aorc.io.s3.store.S3Store`: one suffix-range GET to open, ranges
coalesced and concurrent, every request pinned to the ETag first seen (``If-Match``), a store
that ignores ``Range`` read once. What changes is the cost: obstore sends a request for about
a quarter of aiobotocore's CPU time (see ``docs/stores.md``), which counts when a dataset
opens thousands of files or a service serves many point lookups.

Settings come from :class:`aorc.io.s3.config.S3Config` as for aiobotocore: endpoint, region,
explicit keys, ``anon``, and otherwise the AWS chain as botocore resolves it (environment,
profiles, SSO, instance metadata), whose credentials obstore asks for before they expire.
obstore's own retries are turned off: aorc retries transient failures with exponential
backoff and full jitter, counted in ``io_stats.retries`` (``max_attempts``, 5 by default;
``retry_base_delay``, ``retry_max_delay``). Writes go through aiobotocore whatever the engine
(part uploads are few and large, so the per-request cost does not matter there).
"""

from __future__ import annotations

import asyncio
import datetime
import re
import threading
from typing import Any

from aorc.errors import (
    AccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    SchemaError,
    StoreError,
)
from aorc.io.base import IOStats
from aorc.io.remote import Ranged, RemoteStore
from aorc.io.s3.config import S3Config, parse_s3_url

__all__ = ["ObstoreS3Store", "level_with_obstore", "list_with_obstore", "obstore_store",
           "size_with_obstore"]

_STATUS = re.compile(r"status code: (\d{3})")
_stores: dict[tuple[str, str], Any] = {}
_stores_lock = threading.Lock()


def _import() -> Any:
    try:
        import obstore
    except ImportError:
        raise SchemaError("storage option engine='obstore' needs obstore: pip install "
                          "'aorc[obstore]'") from None
    return obstore


class _Credentials:
    """obstore's credential provider backed by botocore's chain (refreshed as it expires)."""

    def __init__(self, profile: str | None) -> None:
        import botocore.session
        session = botocore.session.Session(profile=profile)
        self._credentials = session.get_credentials()
        self.region = session.get_config_variable("region")

    def __call__(self) -> dict[str, Any]:
        if self._credentials is None:
            raise AccessDeniedError("no usable AWS credentials: set them in the environment, "
                                    "a profile, or storage_options")
        frozen = self._credentials.get_frozen_credentials()
        expiry = getattr(self._credentials, "_expiry_time", None)
        return {"access_key_id": frozen.access_key, "secret_access_key": frozen.secret_key,
                "token": frozen.token,
                "expires_at": expiry if isinstance(expiry, datetime.datetime) else None}

    def __repr__(self) -> str:
        return "<botocore credentials>"


def obstore_store(config: S3Config, bucket: str) -> Any:
    """The process's obstore ``S3Store`` of ``bucket`` with ``config``'s settings."""
    key = (config.client_key(), bucket)
    with _stores_lock:
        store = _stores.get(key)
        if store is not None:
            return store
    obstore = _import()
    settings: dict[str, Any] = {}
    provider = None
    if config.endpoint_url:
        settings["endpoint"] = config.endpoint_url
    if config.anon:
        settings["skip_signature"] = True
    elif config.access_key_id is not None:
        settings["access_key_id"] = config.access_key_id
        settings["secret_access_key"] = config.secret_access_key
        if config.session_token:
            settings["session_token"] = config.session_token
    else:
        provider = _Credentials(config.profile)
        if provider.region and not config.region:
            settings["region"] = provider.region
    if config.region:
        settings["region"] = config.region
    settings.setdefault("region", "us-east-1")
    client: dict[str, Any] = {"allow_http": True, "pool_max_idle_per_host": "32"}
    if config.verify is False:
        client["allow_invalid_certificates"] = True
    store = obstore.store.S3Store(bucket, config=settings, client_options=client,
                                  retry_config={"max_retries": 0},
                                  credential_provider=provider)
    with _stores_lock:
        if len(_stores) >= 64:
            _stores.pop(next(iter(_stores)))
        return _stores.setdefault(key, store)


def _classify(exc: BaseException, path: str, action: str) -> StoreError | None:
    """The StoreError for an obstore failure; ``None`` when it is worth another attempt."""
    from obstore import exceptions as ox

    if isinstance(exc, (FileNotFoundError, ox.NotFoundError)):
        return ObjectNotFoundError(f"{path}: no such object")
    if isinstance(exc, (ox.PermissionDeniedError, ox.UnauthenticatedError, PermissionError)):
        return AccessDeniedError(f"{path}: access denied while trying to {action}")
    if isinstance(exc, ox.PreconditionError):
        return ObjectChangedError(f"{path}: the object was replaced while it was being read "
                                  f"(its ETag no longer matches the one seen when it was "
                                  f"opened, or given as if_match); open it again")
    match = _STATUS.search(str(exc))
    if match is None:
        return None  # no answer: a connection that failed or broke, a timeout
    status = int(match.group(1))
    if status in (408, 429) or status >= 500:
        return None
    return StoreError(f"{path}: cannot {action}: HTTP {status}")


class ObstoreS3Store(RemoteStore):
    """One S3 object read through obstore (see the module docstring).

    Args:
        bucket: the bucket.
        key: the object's key.
        config: settings.
        version: an ETag to require (``if_match``).
    """

    def __init__(self, bucket: str, key: str, config: S3Config,
                 version: str | None = None) -> None:
        self.config = config
        super().__init__(f"s3://{bucket}/{key}", config.store, version=version,
                         max_unranged=config.max_unranged)
        self.bucket = bucket
        self.key = key
        self.retry = config.retry
        self._store: Any = None

    @classmethod
    def _for_url(cls, url: str, options: dict[str, Any],
                 version: str | None) -> ObstoreS3Store:
        bucket, key = parse_s3_url(url)
        return cls(bucket, key, S3Config.from_options(options), version=version)

    async def _open(self) -> None:
        self._store = obstore_store(self.config, self.bucket)

    async def _attempts(self, action: str, call: Any) -> Any:
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except Exception as exc:  # noqa: BLE001 - obstore's errors, classified below
                if isinstance(exc, StoreError) or "non-partial" in str(exc).lower():
                    raise
                error = _classify(exc, self.path, action)
                if error is not None:
                    raise error from None
                if attempt >= self.retry.max_attempts:
                    raise RetriesExhaustedError(f"{self.path}: cannot {action} after "
                                                f"{attempt} attempt(s)") from None
                self.stats.retries += 1
                await asyncio.sleep(self.retry.backoff(attempt))

    async def _get(self, first: int | None, last: int | None, suffix: int | None,
                   action: str) -> Ranged | None:
        obstore = _import()
        options: dict[str, Any] = {"range": {"suffix": suffix} if suffix is not None
                                   else (first, (last or 0) + 1)}
        if self.etag is not None:
            options["if_match"] = self.etag

        async def get() -> tuple[Any, bytes]:
            result = await obstore.get_async(self._store, self.key, options=options)
            return result, bytes(await result.bytes_async())

        try:
            result, data = await self._attempts(action, get)
        except StoreError as exc:
            if "HTTP 416" in str(exc):
                self.stats.requests += 1
                return None
            raise
        except Exception as exc:  # noqa: BLE001 - "non-partial response": no ranges served
            if "non-partial" not in str(exc).lower():
                raise
            return await self._unranged(action)
        self.stats.requests += 1
        self.stats.bytes += len(data)
        meta = result.meta
        start, _ = result.range
        return Ranged(data, start, int(meta["size"]), meta.get("e_tag"))

    async def _unranged(self, action: str) -> Ranged:
        """The object when the store answered a range with all of it (an empty object, or a
        store ignoring ``Range``): its size first, then all of it if small enough."""
        obstore = _import()
        meta = await self._attempts(action, lambda: obstore.head_async(self._store, self.key))
        self.stats.requests += 2
        size = int(meta["size"])
        if size > self.max_unranged:
            raise StoreError(f"{self.path}: the store ignored the Range header for an object "
                             f"of {size} bytes; refusing to download more than "
                             f"max_unranged_bytes={self.max_unranged}")
        result = await self._attempts(action, lambda: obstore.get_async(self._store, self.key))
        data = bytes(await result.bytes_async())
        self.stats.bytes += len(data)
        return Ranged(data, 0, len(data), meta.get("e_tag"), whole=True)


async def list_with_obstore(config: S3Config, bucket: str, prefix: str, stats: IOStats,
                            max_pages: int | None = None) -> tuple[list[tuple[str, int]], bool]:
    """Every (key, size) under ``prefix`` through obstore's paginated listing (one request
    per 1,000 keys), or those of the first ``max_pages`` pages; and whether keys were left
    (a last page full: more may follow)."""
    obstore = _import()
    out: list[tuple[str, int]] = []
    store = obstore_store(config, bucket)
    pages = 0
    more = False
    try:  # object_store asks for 1,000 keys a request: a chunk of 1,000 is about a request
        async for page in obstore.list(store, prefix or None, chunk_size=1000):
            pages += 1
            out.extend((item["path"], int(item["size"])) for item in page)
            if max_pages is not None and pages >= max_pages:
                more = len(page) >= 1000
                break
    except Exception as exc:  # noqa: BLE001 - obstore's errors
        error = _classify(exc, f"s3://{bucket}/{prefix}", "list")
        raise (error or RetriesExhaustedError(f"s3://{bucket}/{prefix}: cannot list")) \
            from None
    finally:
        stats.requests += max(1, pages)
    return [(key, size) for key, size in out if key.startswith(prefix)], more


async def size_with_obstore(config: S3Config, bucket: str, key: str,
                            stats: IOStats) -> int | None:
    """The size of the object ``key`` (a HEAD), ``None`` when there is none."""
    obstore = _import()
    try:
        meta = await obstore.head_async(obstore_store(config, bucket), key)
    except Exception as exc:  # noqa: BLE001 - obstore's errors
        error = _classify(exc, f"s3://{bucket}/{key}", "look up the object")
        if isinstance(error, ObjectNotFoundError):
            return None
        raise (error or RetriesExhaustedError(f"s3://{bucket}/{key}: cannot look up the "
                                              f"object")) from None
    finally:
        stats.requests += 1
    return int(meta["size"])


async def level_with_obstore(config: S3Config, bucket: str, prefix: str, stats: IOStats
                             ) -> tuple[list[tuple[str, int]], list[str]]:
    """The (key, size) pairs and the sub-prefixes (ending with ``/``) directly under
    ``prefix``: obstore's delimiter listing."""
    obstore = _import()
    try:
        result = await obstore.list_with_delimiter_async(obstore_store(config, bucket),
                                                         prefix or None)
    except Exception as exc:  # noqa: BLE001 - obstore's errors
        error = _classify(exc, f"s3://{bucket}/{prefix}", "list")
        raise (error or RetriesExhaustedError(f"s3://{bucket}/{prefix}: cannot list")) \
            from None
    finally:
        stats.requests += 1
    found = [(item["path"], int(item["size"])) for item in result["objects"]]
    return found, [p.rstrip("/") + "/" for p in result["common_prefixes"]]
