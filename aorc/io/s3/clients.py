"""aiobotocore clients shared by the S3 files of an event loop, and S3 error translation.

Creating a client is costly (it loads botocore's service model and opens a connection pool),
so clients are created once per event loop and per distinct connection settings (see
:meth:`S3Config.client_key`) and reused by every file opened with those settings, through
the loop's pool of :mod:`aorc.io.pool` (which also closes them when the loop shuts down).
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import os
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from aorc.errors import (
    AccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    StoreError,
)
from aorc.io.pool import ClientLease, acquire, close_clients
from aorc.io.s3.config import S3Config
from aorc.io.transport import resend_tracer

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


# =========================================================================== clients

async def _create(config: S3Config) -> tuple[Any, Callable[[], Awaitable[Any]]]:
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
    kwargs.setdefault("http_session_cls", _session_class())
    context = session.create_client("s3", config=AioConfig(**kwargs), **config.client_kwargs())
    client = await context.__aenter__()
    return client, lambda: context.__aexit__(None, None, None)


_session_cls: Any = None


def _session_class() -> Any:
    """aiobotocore's HTTP session, whose aiohttp sessions count aiohttp's own repetitions
    of a request (see :func:`aorc.io.transport.resend_tracer`)."""
    global _session_cls
    if _session_cls is None:
        from aiobotocore.httpsession import AIOHTTPSession

        class CountedSession(AIOHTTPSession):  # type: ignore[misc]
            async def _get_session(self, proxy_url: Any) -> Any:
                session = await super()._get_session(proxy_url)
                tracers = getattr(session, "_trace_configs", None)  # aiohttp keeps no
                if isinstance(tracers, list) and not any(  # public way to add one later
                        getattr(t, "aorc_resends", False) for t in tracers):
                    tracer = resend_tracer()
                    tracer.aorc_resends = True
                    tracers.append(tracer)
                return session

        _session_cls = CountedSession
    return _session_cls


async def acquire_client(config: S3Config) -> ClientLease:
    """Borrow the running loop's client for ``config``, creating it on first use.

    Raises:
        StoreError: the client cannot be created (bad settings, unknown profile, ...).
    """
    try:
        return await acquire("s3:" + config.client_key(), lambda: _create(config))
    except Exception as exc:
        from botocore.exceptions import BotoCoreError
        if isinstance(exc, (BotoCoreError, ValueError)):
            raise StoreError(f"cannot create an S3 client: {exc}") from exc
        raise
