"""HTTP requests for the REST stores (GCS, Azure Blob, plain HTTP(S)): sessions, retries,
error translation and the scrubbing of secrets.

Every request of those stores goes through :func:`send`: one logical operation, sent again
after a transient failure (HTTP 408, 429, 5xx, a dropped or refused connection, a timeout)
with exponential backoff and full jitter (as botocore's "standard" mode and object_store do),
every repetition counted in the store's :class:`~aorc.io.base.IOStats` ``retries``. Requests
are signed again before every attempt (a token may have been refreshed, a date must be
fresh). A ranged GET whose body breaks off (the connection drops, or ends before the
promised length) is resumed: the next attempt asks only for the bytes still missing, with
the same version precondition, and the pieces are checked to come from one version. Writes
are *patient* (``patient=True``): they are retried at least ``max_attempts`` times and, past
that, for as long as the policy's time budget (``retry_budget``) lasts, so that a
throttling burst of several seconds does not fail an upload. Time comes from
:data:`clock` (tests replace it with a simulated one). What remains is translated into the
:class:`~aorc.errors.StoreError` tree:

* 404 -> :class:`~aorc.errors.ObjectNotFoundError`;
* 401, 403 -> :class:`~aorc.errors.AccessDeniedError`;
* 412 -> :class:`~aorc.errors.ObjectChangedError` (a read pinned to a version), or
  :class:`~aorc.errors.ObjectExistsError` for a create-only write (the caller says which);
* a transient failure on the last attempt -> :class:`~aorc.errors.RetriesExhaustedError`;
* anything else -> :class:`~aorc.errors.StoreError`.

Messages name the object by its URL without query string or user info (a SAS token or a
presigned URL's signature never shows), and carry the server's error code, never its echo of
the request's authorization.

Sessions (``aiohttp.ClientSession``) are shared per event loop and per connection settings
through :mod:`aorc.io.pool`.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import hashlib
import logging
import random
import re
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Self

from aorc.errors import (
    AccessDeniedError,
    ObjectChangedError,
    ObjectExistsError,
    ObjectNotFoundError,
    RetriesExhaustedError,
    SchemaError,
    StoreError,
)
from aorc.io.base import IOStats, StoreOptions
from aorc.io.pool import ClientLease, acquire
from aorc.io.remote import parse_content_range

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RETRY_BUDGET",
    "TRANSIENT_STATUSES",
    "Clock",
    "HttpSettings",
    "Response",
    "RetryPolicy",
    "SessionHolder",
    "Signer",
    "acquire_session",
    "check_positive",
    "clock",
    "counting",
    "endpoint_problem",
    "pop_rest_options",
    "quote_path",
    "redact_url",
    "resend_tracer",
    "retry_until",
    "scalar_options_key",
    "send",
    "set_clock",
]

logger = logging.getLogger(__name__)

#: Attempts of one operation (the first one included) unless ``max_attempts`` says otherwise.
DEFAULT_MAX_ATTEMPTS = 5
#: Seconds during which a write request keeps being retried after its ``max_attempts``
#: (Hadoop S3A retries throttled requests 20 times with backoff: about this long).
DEFAULT_RETRY_BUDGET = 20.0
#: Statuses worth another attempt.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: Connections per session (shared by every file read or written with the same settings).
DEFAULT_POOL_CONNECTIONS = 32

#: Called before every attempt with the method, the URL (encoded) and the headers, which it
#: may complete (authorization, dates); returns the URL to send (a SAS token may extend it).
Signer = Callable[[str, str, dict[str, str]], Awaitable[str]]

_SECRET_PARAMS = re.compile(r"([?&](?:sig|signature|x-goog-signature|x-amz-signature|"
                            r"x-amz-credential|x-amz-security-token|token|access_token|"
                            r"key|code)=)[^&\s'\"]*", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` for messages: no user info, no query string (SAS tokens, signatures)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    netloc = parts.hostname or ""
    if parts.port is not None:
        netloc += f":{parts.port}"
    suffix = "?..." if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", "")) + suffix


def endpoint_problem(url: str) -> str | None:
    """Why ``url`` cannot be a store's endpoint without risking a secret in messages: user
    info (``user:password@``) or a query string or fragment (signatures, tokens), which
    clients echo in their errors. ``None`` when it can."""
    authority, _, rest = url.partition("://")[2].partition("/")
    if "@" in authority:
        return "must not hold credentials (user:password@)"
    if "?" in authority or "#" in authority or "?" in rest or "#" in rest:
        return "must not have a query string or fragment"
    return None


def _scrub(text: str) -> str:
    """Drop signature-like query values from a server's message."""
    return _SECRET_PARAMS.sub(r"\1***", text)


def quote_path(path: str, safe: str = "/") -> str:
    """Percent-encode an object name for a URL path (UTF-8; ``safe`` characters kept)."""
    return urllib.parse.quote(path, safe=safe)


class Clock:
    """Where retries take their time from: the monotonic clock and ``asyncio.sleep``.

    Tests replace the module's :data:`clock` (:func:`set_clock`) with one that simulates
    time, so that a retry budget of tens of seconds is spent without waiting.
    """

    def monotonic(self) -> float:
        """Seconds from an arbitrary start."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``."""
        await asyncio.sleep(seconds)


#: The clock every retry loop of :mod:`aorc.io` uses.
clock = Clock()


def set_clock(new: Clock) -> Clock:
    """Make ``new`` the clock of every retry loop; the previous one (to restore it)."""
    global clock
    previous, clock = clock, new
    return previous


@dataclass(frozen=True)
class RetryPolicy:
    """How transient failures are retried.

    Attributes:
        max_attempts: attempts of one operation, the first included (``1``: no retries).
        base_delay: seconds: the backoff before retry ``k`` (1-based) is random in
            ``[0, min(max_delay, base_delay * 2**(k-1))]`` ("full jitter").
        max_delay: seconds: the longest backoff.
        budget: seconds: a write request (a part, a whole object, the request that makes an
            upload visible) that failed ``max_attempts`` times is retried again as long as
            this much time has not passed since its first attempt (``0``: count only).
    """

    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    base_delay: float = 0.1
    max_delay: float = 10.0
    budget: float = DEFAULT_RETRY_BUDGET

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int) \
                or self.max_attempts < 1:
            raise SchemaError(f"storage option max_attempts must be a positive integer, "
                              f"got {self.max_attempts!r}")
        for name in ("base_delay", "max_delay", "budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise SchemaError(f"storage option retry_{name} must be a number of "
                                  f"seconds >= 0, got {value!r}")

    def backoff(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        ceiling = min(self.max_delay, self.base_delay * (2.0 ** min(retry - 1, 60)))
        return random.uniform(0.0, ceiling)

    def again(self, attempt: int, started: float, patient: bool) -> bool:
        """Whether an operation that failed its ``attempt``-th time (1-based) may be tried
        again: within ``max_attempts``, or, when ``patient``, within the time budget since
        ``started`` (a :data:`clock` reading)."""
        if attempt < self.max_attempts:
            return True
        return patient and clock.monotonic() - started < self.budget

    @classmethod
    def pop_from(cls, options: dict[str, Any]) -> RetryPolicy:
        """Take ``max_attempts``, ``retry_base_delay``, ``retry_max_delay`` and
        ``retry_budget`` out of ``options`` (a mutable copy)."""
        fields: dict[str, Any] = {}
        if "max_attempts" in options:
            fields["max_attempts"] = options.pop("max_attempts")
        for name in ("base_delay", "max_delay", "budget"):
            if f"retry_{name}" in options:
                fields[name] = options.pop(f"retry_{name}")
        return cls(**fields)


def pop_rest_options(options: dict[str, Any], *, max_concurrency: int,
                     max_request_size: int) -> dict[str, Any]:
    """The settings every REST store shares, taken out of ``options`` (a mutable copy):
    ``store`` (:class:`~aorc.io.base.StoreOptions`, with these defaults), ``retry``
    (:class:`RetryPolicy`) and ``http`` (:class:`HttpSettings`), as config fields."""
    options.setdefault("max_concurrency", max_concurrency)
    options.setdefault("max_request_size", max_request_size)
    return {"store": StoreOptions.pop_from(options), "retry": RetryPolicy.pop_from(options),
            "http": HttpSettings.pop_from(options)}


def scalar_options_key(options: Mapping[str, Any]) -> tuple[tuple[str, str, Any], ...] | None:
    """A hashable key of storage options made only of scalars (to parse them once), else
    ``None``."""
    if all(isinstance(k, str) and isinstance(v, (str, int, float, bool, type(None)))
           for k, v in options.items()):
        return tuple(sorted((k, type(v).__name__, v) for k, v in options.items()))
    return None


def check_positive(config: object, names: Collection[str]) -> None:
    """Raise SchemaError unless each of ``config``'s attributes ``names`` is ``None`` or a
    positive integer."""
    for name in names:
        value = getattr(config, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise SchemaError(f"storage option {name} must be a positive integer, "
                              f"got {value!r}")


@dataclass(frozen=True)
class HttpSettings:
    """Connection settings of a session.

    Attributes:
        verify: check TLS certificates (``False``: don't), or the path of a CA bundle.
        connect_timeout: seconds to open a connection.
        read_timeout: seconds without data before a request fails (and is retried).
        pool_connections: connections kept per session.
    """

    verify: bool | str = True
    connect_timeout: float = 10.0
    read_timeout: float = 60.0
    pool_connections: int = DEFAULT_POOL_CONNECTIONS

    def __post_init__(self) -> None:
        if not isinstance(self.verify, (bool, str)):
            raise SchemaError(f"storage option verify must be a bool or a CA bundle path, "
                              f"got {type(self.verify).__name__}")
        for name in ("connect_timeout", "read_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise SchemaError(f"storage option {name} must be a positive number of "
                                  f"seconds, got {value!r}")
        if isinstance(self.pool_connections, bool) or not isinstance(self.pool_connections,
                                                                     int) \
                or self.pool_connections < 1:
            raise SchemaError(f"storage option max_pool_connections must be a positive "
                              f"integer, got {self.pool_connections!r}")

    @classmethod
    def pop_from(cls, options: dict[str, Any]) -> HttpSettings:
        """Take ``verify``, ``connect_timeout``, ``read_timeout`` and
        ``max_pool_connections`` out of ``options`` (a mutable copy)."""
        names = {"verify": "verify", "connect_timeout": "connect_timeout",
                 "read_timeout": "read_timeout", "max_pool_connections": "pool_connections"}
        return cls(**{field: options.pop(name) for name, field in names.items()
                      if name in options})

    def key(self) -> str:
        """A digest naming the session these settings make."""
        text = repr(dataclasses.astuple(self))
        return "http:" + hashlib.sha256(text.encode()).hexdigest()


async def _new_session(settings: HttpSettings) -> tuple[Any, Callable[[], Awaitable[Any]]]:
    import ssl

    import aiohttp

    ssl_arg: Any = None
    if settings.verify is False:
        ssl_arg = False
    elif isinstance(settings.verify, str):
        ssl_arg = ssl.create_default_context(cafile=settings.verify)
    connector = aiohttp.TCPConnector(limit=settings.pool_connections, ssl=ssl_arg,
                                     enable_cleanup_closed=False)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout,
                                    sock_read=settings.read_timeout)
    session = aiohttp.ClientSession(connector=connector, timeout=timeout,
                                    auto_decompress=False, raise_for_status=False,
                                    skip_auto_headers=("Content-Type",),
                                    trace_configs=[resend_tracer()])
    # aiohttp would send an idempotent request again, at once and unseen, when the kept-alive
    # connection it used turns out closed; a GCS resumable chunk sent again that way (after
    # the server took it) is refused. aorc's loop repeats it instead, asking the server
    # first what it holds. aiohttp 3.10+ keeps the switch in _retry_connection.
    if hasattr(session, "_retry_connection"):
        session._retry_connection = False
    return session, session.close


_counting: contextvars.ContextVar[IOStats | None] = contextvars.ContextVar(
    "aorc_io_counting", default=None)


def resend_tracer() -> Any:
    """An ``aiohttp.TraceConfig`` counting aiohttp's own repetitions of a request.

    aiohttp sends an idempotent request again, at once, when the kept-alive connection it
    used turns out to be closed (the server dropped it); neither aorc's retry loop nor
    botocore's sees that. Each repetition is counted in the :class:`IOStats` of the
    enclosing :func:`counting` block, as a request and a retry.
    """
    import aiohttp

    async def sent(session: Any, context: Any, params: Any) -> None:
        context.sends = getattr(context, "sends", 0) + 1
        stats = _counting.get()
        if context.sends > 1 and stats is not None:
            stats.requests += 1
            stats.retries += 1

    tracer = aiohttp.TraceConfig()
    tracer.on_request_headers_sent.append(sent)
    tracer.freeze()
    return tracer


@contextlib.contextmanager
def counting(stats: IOStats) -> Iterator[None]:
    """Count aiohttp's repetitions of the requests sent in this block (in this task) in
    ``stats`` (see :func:`resend_tracer`)."""
    token = _counting.set(stats)
    try:
        yield
    finally:
        _counting.reset(token)


async def acquire_session(settings: HttpSettings) -> ClientLease:
    """Borrow the running loop's ``aiohttp.ClientSession`` for ``settings``."""
    return await acquire(settings.key(), lambda: _new_session(settings))


class SessionHolder:
    """Borrows the running loop's session for some :class:`HttpSettings` on first use
    (:meth:`session`) and gives it back (:meth:`release`, or at the end of a ``with``
    block): the base of a store's request helpers."""

    def __init__(self, settings: HttpSettings) -> None:
        self.settings = settings
        self.lease: ClientLease | None = None

    async def session(self) -> Any:
        """The ``aiohttp.ClientSession``, borrowed on first use."""
        if self.lease is None:
            self.lease = await acquire_session(self.settings)
        return self.lease.client

    def release(self) -> None:
        """Give the session back (until the next :meth:`session`)."""
        if self.lease is not None:
            self.lease.release()
            self.lease = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


@dataclass
class Response:
    """A response: status, headers (names in lower case) and body."""

    status: int
    headers: dict[str, str]
    body: bytes

    def header(self, name: str) -> str | None:
        """A header's value, ``None`` when absent."""
        return self.headers.get(name.lower())


class _Transient(Exception):
    """One attempt failed in a way worth another attempt."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _CutBody(Exception):
    """A response's body broke off: its status and headers, and the bytes that came."""

    def __init__(self, response: Response, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.response = response
        self.cause = cause


_RANGE_HEADERS = ("Range", "x-ms-range")
_VERSION_HEADERS = ("etag", "x-goog-generation", "last-modified")


class _Resume:
    """The bytes of a ranged GET received so far, over attempts whose bodies broke off."""

    def __init__(self, headers: dict[str, str]) -> None:
        self.name = next((h for h in _RANGE_HEADERS if h in headers), None)
        self.received = bytearray()
        self.first: Response | None = None  # the first piece's response (status, headers)
        self.span: tuple[int, int, int | None] | None = None

    def keep(self, cut: _CutBody) -> bool:
        """Keep a piece that broke off; whether the rest can be asked for."""
        response = cut.response
        if self.name is None or response.status != 206:
            return False
        span = parse_content_range(response.header("content-range"))
        if span is None:
            return False
        if self.first is None:
            self.first, self.span = response, span
        elif _version(response) != _version(self.first):
            return False  # the object changed between pieces: start over
        self.received += response.body
        return True

    def headers(self, base: dict[str, str]) -> dict[str, str]:
        """The request's headers, asking only for the bytes still missing."""
        if self.span is None or self.name is None:
            return base
        first, last, _ = self.span
        return {**base, self.name: f"bytes={first + len(self.received)}-{last}"}

    def joined(self, response: Response, path: str) -> Response:
        """The whole answer: the pieces kept, then ``response`` (the rest)."""
        if self.first is None or self.span is None:
            return response
        if response.status != 206 or _version(response) != _version(self.first):
            raise ObjectChangedError(f"{path}: the object was replaced while a read was "
                                     f"being resumed; open it again to read the new version")
        first, last, total = self.span
        headers = dict(response.headers)
        headers["content-range"] = f"bytes {first}-{last}/{'*' if total is None else total}"
        return Response(206, headers, bytes(self.received) + response.body)


def _version(response: Response) -> tuple[str | None, ...]:
    return tuple(response.header(h) for h in _VERSION_HEADERS)


async def retry_until(call: Callable[[], Awaitable[Any]], *, retry: RetryPolicy,
                      stats: IOStats, transient: Callable[[BaseException], bool],
                      path: str, action: str) -> Any:
    """``await call()``, again after a failure ``transient`` accepts, while ``retry`` allows
    (patiently: within its time budget), every repetition counted in ``stats.retries``.

    For clients that retry each request themselves (botocore): this loop adds the time
    budget on top of their attempts. The last failure is raised as it is.
    """
    started = clock.monotonic()
    attempt = 0
    while True:
        attempt += 1
        try:
            return await call()
        except Exception as exc:
            if not transient(exc) or not retry.again(attempt, started, True):
                raise
            reason = str(exc)
        stats.retries += 1
        delay = retry.backoff(attempt)
        logger.debug("%s: %s failed (%s); retry %d in %.3f s", path, action, reason,
                     attempt, delay)
        await clock.sleep(delay)


async def send(session: Any, method: str, url: str, *, path: str, action: str,
               stats: IOStats, retry: RetryPolicy, headers: Mapping[str, str] | None = None,
               body: bytes | memoryview = b"", sign: Signer | None = None,
               accept: Collection[int] = (200, 201, 206), precondition: str = "changed",
               error_code: Callable[[Response], str] | None = None,
               max_unranged: int | None = None, patient: bool = False) -> Response:
    """One operation: a request sent (and sent again after transient failures) until a
    status in ``accept`` comes back; other statuses raise.

    Args:
        session: an ``aiohttp.ClientSession`` (:func:`acquire_session`).
        method: the HTTP method.
        url: the request's URL, already percent-encoded.
        path: the object's printable name, for messages (never holds secrets).
        action: what the request does, for messages ("read bytes [0, 10)").
        stats: counts requests, bytes sent and received, and retries.
        retry: the retry policy.
        headers: request headers.
        body: the request body (kept for repetitions).
        sign: completes the headers (and URL) before every attempt.
        accept: statuses returned to the caller.
        precondition: what a 412 means: ``"changed"`` (a read pinned to a version:
            ObjectChangedError) or ``"exists"`` (a create-only write: ObjectExistsError).
        error_code: extracts the service's error code from an error response.
        max_unranged: for a ranged GET: the most bytes accepted when the server ignores
            ``Range`` and answers 200 with the whole object (more raises StoreError before
            the body is read).
        patient: retry within the policy's time budget too, not only ``max_attempts``
            times (writes).

    Raises:
        StoreError: the subclass that fits (see the module docstring).
    """
    import aiohttp

    base = dict(headers or {})
    resume = _Resume(base) if method == "GET" else None
    started = clock.monotonic()
    attempt = 0
    while True:
        attempt += 1
        request_headers = resume.headers(base) if resume is not None else dict(base)
        target = await sign(method, url, request_headers) if sign is not None else url
        try:
            response = await _attempt(session, method, target, request_headers, body, stats,
                                      max_unranged, path)
        except _CutBody as cut:
            if resume is not None and not resume.keep(cut):
                resume = _Resume(base)  # cannot resume this one: ask for all of it again
            failure = _Transient(_connection_reason(cut.cause))
        except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
            failure = _Transient(_connection_reason(exc))
        else:
            if response.status in accept:
                return resume.joined(response, path) if resume is not None else response
            if response.status not in TRANSIENT_STATUSES:
                raise _status_error(response, path, action, precondition, error_code)
            failure = _Transient(_status_text(response, error_code))
        if not retry.again(attempt, started, patient):
            raise RetriesExhaustedError(f"{path}: cannot {action}: {failure.reason} after "
                                        f"{attempt} attempt(s)") from None
        stats.retries += 1
        delay = retry.backoff(attempt)
        logger.debug("%s: %s failed (%s); retry %d in %.3f s", path, action, failure.reason,
                     attempt, delay)
        await clock.sleep(delay)


async def _attempt(session: Any, method: str, url: str, headers: dict[str, str],
                   body: bytes | memoryview, stats: IOStats, max_unranged: int | None,
                   path: str) -> Response:
    data = bytes(body) if isinstance(body, memoryview) else body
    with counting(stats):
        return await _exchange(session, method, url, headers, data, stats, max_unranged, path)


async def _exchange(session: Any, method: str, url: str, headers: dict[str, str],
                    data: bytes, stats: IOStats, max_unranged: int | None,
                    path: str) -> Response:
    import aiohttp
    import yarl

    async with session.request(method, yarl.URL(url, encoded=True), headers=headers,
                               data=_payload(data) if data or method in ("PUT", "POST")
                               else None, allow_redirects=False) as raw:
        found = {k.lower(): v for k, v in raw.headers.items()}
        if (max_unranged is not None and raw.status == 200
                and int(found.get("content-length", "0") or 0) > max_unranged):
            raise StoreError(
                f"{path}: the server ignored the Range header and would send the whole "
                f"object ({found.get('content-length')} bytes) for a ranged read; "
                f"refusing to download more than max_unranged_bytes={max_unranged}")
        content = b""
        if method != "HEAD":
            pieces: list[bytes] = []
            try:
                async for piece in raw.content.iter_any():
                    pieces.append(piece)
                expected = found.get("content-length", "")
                if expected.isdigit() and sum(map(len, pieces)) < int(expected):
                    raise aiohttp.ClientPayloadError("the body ended early")
            except (TimeoutError, aiohttp.ClientError, ConnectionError) as exc:
                stats.requests += 1
                got = b"".join(pieces)
                stats.bytes += len(got) + len(data)
                raise _CutBody(Response(raw.status, found, got), exc) from exc
            content = b"".join(pieces)
    stats.requests += 1
    stats.bytes += len(content) + len(data)
    return Response(raw.status, found, content)


def _payload(data: bytes) -> Any:
    """The body as aiohttp's payload. aiohttp warns (ResourceWarning) about bodies over 1 MiB
    given as bytes, fearing a compression on the event loop; aorc sends parts of several MiB
    uncompressed, which the transport writes as the socket drains, so the warning is silenced
    here (synchronously: no other task runs meanwhile)."""
    import warnings

    from aiohttp.payload import BytesPayload

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        return BytesPayload(data, content_type="application/octet-stream")


def _connection_reason(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "the request timed out"
    name = type(exc).__name__
    text = str(exc).split(" [", 1)[0] if str(exc) else ""
    return f"connection failed ({name}{': ' + _scrub(text) if text else ''})"


def _status_text(response: Response, error_code: Callable[[Response], str] | None) -> str:
    code = ""
    if error_code is not None:
        try:
            code = error_code(response)
        except Exception:  # noqa: BLE001 - an unparsable error body still has a status
            code = ""
    return f"HTTP {response.status}" + (f" {code}" if code else "")


def _status_error(response: Response, path: str, action: str, precondition: str,
                  error_code: Callable[[Response], str] | None) -> StoreError:
    status = response.status
    text = _status_text(response, error_code)
    if status == 404:
        return ObjectNotFoundError(f"{path}: no such object ({text})")
    if status in (401, 403):
        return AccessDeniedError(f"{path}: access denied while trying to {action} ({text}); "
                                 f"check the credentials and their permissions")
    if status == 409 and precondition == "exists":
        return ObjectExistsError(f"{path}: the object already exists and the write does not "
                                 f"overwrite (overwrite=False) ({text})")
    if status == 412:
        if precondition == "exists":
            return ObjectExistsError(f"{path}: the object already exists and the write "
                                     f"does not overwrite (overwrite=False)")
        return ObjectChangedError(f"{path}: the object was replaced while it was being read "
                                  f"(its version no longer matches the one seen when it was "
                                  f"opened, or given as if_match); open it again to read "
                                  f"the new version")
    return StoreError(f"{path}: cannot {action}: {text}")
