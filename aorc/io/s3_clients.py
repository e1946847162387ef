"""aiobotocore clients shared by the S3 files of an event loop, and S3 error translation.

Creating a client is costly (it loads botocore's service model and opens a connection pool),
so clients are created once per event loop and per distinct connection settings (see
:meth:`S3Config.client_key`) and reused by every file opened with those settings. A client
and its connections belong to the event loop that created it.

The clients of a loop are closed when the loop shuts down through ``asyncio.run`` (or an
``asyncio.Runner``): the pool registers an async generator with the loop, and the loop
closes its async generators (``loop.shutdown_asyncgens()``) before it closes itself. A loop
driven otherwise should call :func:`close_clients` before it stops, or aiohttp warns about
unclosed sessions.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import os
import threading
import weakref
from collections.abc import AsyncGenerator, Coroutine
from dataclasses import dataclass, field
from typing import Any

from aorc.errors import (
    AccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    StoreError,
)
from aorc.io.s3_config import S3Config

__all__ = [
    "DEFAULT_RETRY_MODE",
    "ClientLease",
    "acquire_client",
    "close_clients",
    "map_s3_error",
    "parse_timestamp",
    "retry_attempts",
    "s3_failures",
]

#: botocore's retry mode when neither storage_options nor the AWS chain choose one (botocore
#: itself would use "legacy").
DEFAULT_RETRY_MODE = "standard"
#: Idle clients kept per loop beyond which the least recently used idle ones are closed.
MAX_IDLE_CLIENTS = 8

_NOT_FOUND = {"NoSuchKey", "NoSuchBucket", "NotFound", "NoSuchVersion", "404"}
_DENIED = {"AccessDenied", "Forbidden", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch",
           "ExpiredToken", "InvalidToken", "AllAccessDisabled", "AccountProblem"}
_CHANGED = {"PreconditionFailed", "412"}
_TRANSIENT = {"InternalError", "ServiceUnavailable", "SlowDown", "Throttling",
              "ThrottlingException", "RequestTimeout", "RequestLimitExceeded",
              "BandwidthLimitExceeded", "TooManyRequestsException", "RequestTimeTooSkewed"}

_loader_lock = threading.Lock()
_loader: Any = None


def _data_loader() -> Any:
    """botocore's loader of service models, shared so each new client skips the parsing."""
    global _loader
    with _loader_lock:
        if _loader is None:
            from botocore.loaders import create_loader
            _loader = create_loader()
        return _loader


def parse_timestamp(value: Any) -> datetime.datetime:
    """A response's timestamp (ISO 8601 in XML bodies, RFC 7231 dates in headers) as the
    datetime botocore's parser returns, without dateutil's general parser (70 us a value,
    two values a GetObject, against 6 us); botocore's parser for any other form."""
    try:
        if isinstance(value, str) and value.endswith(" GMT"):
            parsed = email.utils.parsedate_to_datetime(value)
        elif isinstance(value, str) and value[:4].isdigit() and "T" in value:
            parsed = datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
        else:
            raise ValueError(value)
    except (ValueError, TypeError, IndexError):
        from botocore.utils import parse_timestamp as botocore_parse
        result: datetime.datetime = botocore_parse(value)
        return result
    return parsed


# =========================================================================== errors

def retry_attempts(response_or_error: Any) -> int:
    """The retries botocore made for a response (or a ClientError), 0 when unknown."""
    response = getattr(response_or_error, "response", response_or_error)
    if not isinstance(response, dict):
        return 0
    attempts = response.get("ResponseMetadata", {}).get("RetryAttempts", 0)
    return attempts if isinstance(attempts, int) else 0


def map_s3_error(exc: BaseException, path: str, action: str) -> StoreError:
    """The :class:`StoreError` subclass for a botocore/aiohttp failure while ``action``-ing
    ``path``; the caller raises it ``from exc``.

    Missing objects or buckets give :class:`ObjectNotFoundError`, refused access
    :class:`AccessDeniedError`, a failed ``If-Match`` :class:`ObjectChangedError`, and
    server errors, throttling and connection failures that botocore already retried
    :class:`RetriesExhaustedError`.
    """
    from botocore import exceptions as bx

    if isinstance(exc, bx.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = error.get("Message") or code
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        attempts = retry_attempts(exc) + 1
        if code in _NOT_FOUND or status == 404:
            what = "bucket" if code == "NoSuchBucket" else "object"
            return ObjectNotFoundError(f"{path}: no such {what} ({code or status})")
        if code in _DENIED or status == 403:
            return AccessDeniedError(f"{path}: access denied while trying to {action} "
                                     f"({code or status}: {message})")
        if code in _CHANGED or status == 412:
            return ObjectChangedError(f"{path}: the object was replaced while it was being "
                                      f"read (its ETag no longer matches the one seen when "
                                      f"it was opened, or given as if_match); open it again "
                                      f"to read the new version")
        if code in _TRANSIENT or (isinstance(status, int) and (status >= 500 or status == 429)):
            return RetriesExhaustedError(f"{path}: cannot {action}: {code or status} "
                                         f"({message}) after {attempts} attempt(s)")
        return StoreError(f"{path}: cannot {action}: {code or status}: {message}")
    if isinstance(exc, (bx.NoCredentialsError, bx.PartialCredentialsError)):
        return AccessDeniedError(f"{path}: no usable AWS credentials ({exc}); set them in "
                                 f"the environment, a profile, or storage_options")
    if isinstance(exc, (bx.ConnectionError, bx.HTTPClientError)):
        return RetriesExhaustedError(f"{path}: cannot {action}: {exc}")
    return StoreError(f"{path}: cannot {action}: {type(exc).__name__}: {exc}")


def s3_failures() -> tuple[type[BaseException], ...]:
    """The exception types :func:`map_s3_error` translates (botocore's and aiohttp's)."""
    import aiohttp
    from botocore.exceptions import BotoCoreError, ClientError
    return (ClientError, BotoCoreError, aiohttp.ClientError, asyncio.TimeoutError)


# =========================================================================== client pool

@dataclass
class _Entry:
    client: Any
    context: Any
    users: int = 0


@dataclass
class _LoopPool:
    """The clients (and detached tasks) of one event loop."""

    entries: dict[str, _Entry] = field(default_factory=dict)
    creating: dict[str, asyncio.Future[_Entry]] = field(default_factory=dict)
    detached: set[asyncio.Task[Any]] = field(default_factory=set)
    closer: AsyncGenerator[None, None] | None = None
    closed: bool = False

    async def acquire(self, config: S3Config) -> tuple[str, Any]:
        key = config.client_key()
        while True:
            entry = self.entries.get(key)
            if entry is not None:
                entry.users += 1
                self.entries[key] = self.entries.pop(key)  # most recently used last
                return key, entry.client
            pending = self.creating.get(key)
            if pending is None:
                break
            try:  # another file is creating the same client: share its outcome
                await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # this caller was cancelled
                # the creator was cancelled: create it here instead
        future: asyncio.Future[_Entry] = asyncio.get_running_loop().create_future()
        self.creating[key] = future
        try:
            entry = await _create(config)
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # marked retrieved: the waiters (if any) get it too
            raise
        finally:
            del self.creating[key]
        if not future.done():
            future.set_result(entry)
        self.entries[key] = entry
        entry.users += 1
        self._evict()
        return key, entry.client

    def release(self, key: str) -> None:
        entry = self.entries.get(key)
        if entry is not None and entry.users > 0:
            entry.users -= 1
            self._evict()

    def _evict(self) -> None:
        idle = [k for k, e in self.entries.items() if e.users == 0]
        for key in idle[:max(0, len(idle) - MAX_IDLE_CLIENTS)]:
            entry = self.entries.pop(key)
            self.detach(entry.context.__aexit__(None, None, None))

    def detach(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self.detached.add(task)
        task.add_done_callback(self.detached.discard)
        return task

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        while self.detached:  # aborts of uploads still running go out first
            await asyncio.gather(*list(self.detached), return_exceptions=True)
        entries, self.entries = list(self.entries.values()), {}
        for entry in entries:
            try:
                await entry.context.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001, S110 - closing is best effort at shutdown
                pass


async def _create(config: S3Config) -> _Entry:
    from aiobotocore.config import AioConfig
    from aiobotocore.session import AioSession

    session = AioSession(profile=config.profile)
    session.register_component("data_loader", _data_loader())
    session.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp)
    kwargs = config.botocore_config_kwargs()
    retries = dict(kwargs.get("retries") or {})
    if "mode" not in retries and not (os.environ.get("AWS_RETRY_MODE")
                                      or session.get_scoped_config().get("retry_mode")):
        kwargs["retries"] = {**retries, "mode": DEFAULT_RETRY_MODE}
    context = session.create_client("s3", config=AioConfig(**kwargs), **config.client_kwargs())
    client = await context.__aenter__()
    return _Entry(client, context)


_pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopPool] = (
    weakref.WeakKeyDictionary())


async def _close_at_shutdown(pool: _LoopPool) -> AsyncGenerator[None, None]:
    """Suspended for the life of the loop; the loop's shutdown closes it, closing the pool."""
    try:
        yield
    finally:
        loop = asyncio.get_running_loop()
        if _pools.get(loop) is pool:
            del _pools[loop]
        await pool.aclose()


async def _current_pool() -> _LoopPool:
    loop = asyncio.get_running_loop()
    pool = _pools.get(loop)
    if pool is None or pool.closed:
        pool = _LoopPool()
        _pools[loop] = pool
        pool.closer = _close_at_shutdown(pool)
        await pool.closer.__anext__()  # registers it with the loop's shutdown_asyncgens
    return pool


class ClientLease:
    """A client borrowed from the loop's pool; :meth:`release` gives it back."""

    def __init__(self, pool: _LoopPool, key: str, client: Any) -> None:
        self._pool = pool
        self._key = key
        self.client = client
        self._released = False

    def release(self) -> None:
        """Return the client to the pool (it stays open for the next file)."""
        if not self._released:
            self._released = True
            self._pool.release(self._key)

    def detach(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` as a task that the loop's shutdown waits for before closing the
        clients (for clean-up requests that must outlive a cancelled caller)."""
        return self._pool.detach(coro)


async def acquire_client(config: S3Config) -> ClientLease:
    """Borrow the running loop's client for ``config``, creating it on first use.

    Raises:
        StoreError: the client cannot be created (bad settings, unknown profile, ...).
    """
    pool = await _current_pool()
    try:
        key, client = await pool.acquire(config)
    except Exception as exc:
        from botocore.exceptions import BotoCoreError
        if isinstance(exc, (BotoCoreError, ValueError)):
            raise StoreError(f"cannot create an S3 client: {exc}") from exc
        raise
    return ClientLease(pool, key, client)


async def close_clients() -> None:
    """Close the running loop's S3 clients and their connections.

    Not needed under ``asyncio.run`` (its shutdown does it); call it before stopping a loop
    driven in another way. Files opened later create new clients.
    """
    loop = asyncio.get_running_loop()
    pool = _pools.pop(loop, None)
    if pool is not None:
        await pool.aclose()
        if pool.closer is not None:
            await pool.closer.aclose()
