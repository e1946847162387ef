"""A loopback HTTP proxy in front of an S3 endpoint (moto's server), for tests and benchmarks.

It runs its own event loop in a daemon thread, so synchronous clients (boto3, pyarrow's S3
filesystem) and asyncio clients can both use it. For every request it can

- add a fixed latency (``latency`` seconds before the request is forwarded), like a distant
  region;
- answer instead of the server with an injected error (``rules``: callables returning a
  :class:`Fault` or ``None``), e.g. 503 for the first attempts of some requests, which the
  client's own retry logic must then handle; or hold some requests back (:class:`Delay`,
  :class:`Hold` until the test opens a gate), or forward them and hold or replace the
  answer (:class:`HoldReply`: the request took effect, the client waits or sees an error);
- break the connection: :class:`Drop` (closed before the server sees the request),
  :class:`Lost` (the request took effect, the answer never comes), :class:`CutBody` (the
  answer's head promises the whole body, half of it comes, then the connection closes);
  :class:`FaultPlan` injects those and error answers into a seeded share of the requests,
  or into every request during a burst;
- record a :class:`Record` (operation, start and end times, status) in :attr:`S3Proxy.log`,
  to count requests or to see which ones overlapped.

Each client connection gets its own kept-alive upstream connection; responses are passed
back with a ``Content-Length`` so the client's connection stays alive too.
"""

from __future__ import annotations

import asyncio
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field

_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "proxy-connection", "te",
               "upgrade", "trailer"}


@dataclass
class ProxyRequest:
    """A request as the proxy saw it (header names in lower case)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    @property
    def query(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.target).query,
                                     keep_blank_values=True)

    @property
    def operation(self) -> str:
        """The S3 operation, as far as tests need to tell them apart."""
        q = self.query
        has_key = len([p for p in self.path.split("/") if p]) >= 2
        if self.method == "PUT" and "partNumber" in q and "uploadId" in q:
            return "UploadPart"
        if self.method == "POST" and "uploads" in q:
            return "CreateMultipartUpload"
        if self.method == "POST" and "uploadId" in q:
            return "CompleteMultipartUpload"
        if self.method == "DELETE" and "uploadId" in q:
            return "AbortMultipartUpload"
        if self.method == "GET" and "uploads" in q:
            return "ListMultipartUploads"
        if has_key:
            return {"GET": "GetObject", "HEAD": "HeadObject", "PUT": "PutObject",
                    "DELETE": "DeleteObject"}.get(self.method, self.method)
        return f"{self.method} bucket"


@dataclass(frozen=True)
class Fault:
    """An injected answer: an S3 error with this status and code, after ``delay`` seconds."""

    status: int = 503
    code: str = "ServiceUnavailable"
    delay: float = 0.0


@dataclass(frozen=True)
class Delay:
    """Forward the request, but only after ``seconds`` more than the proxy's latency."""

    seconds: float


@dataclass(frozen=True)
class Hold:
    """Forward the request once ``gate`` is set (a ``threading.Event`` set by the test)."""

    gate: threading.Event


@dataclass(frozen=True)
class HoldReply:
    """Forward the request at once, then hold the server's answer: ``arrived`` is set once
    the server has processed the request (its effect is visible), and the answer reaches the
    client once ``gate`` is set. With ``fault``, the client gets that error instead of the
    server's answer (a lost response: the request took effect, the client saw it fail)."""

    arrived: threading.Event = field(default_factory=threading.Event)
    gate: threading.Event | None = None
    fault: Fault | None = None


@dataclass(frozen=True)
class Drop:
    """Close the client's connection without forwarding the request."""


@dataclass(frozen=True)
class Lost:
    """Forward the request (it takes effect), then close the connection unanswered."""


@dataclass(frozen=True)
class CutBody:
    """Forward the request, send the answer's head and half its body, then close."""


Rule = Callable[[ProxyRequest],
               "Fault | Delay | Hold | HoldReply | Drop | Lost | CutBody | None"]

#: The fault kinds of :class:`FaultPlan`, by name.
FAULT_KINDS: dict[str, Fault | Drop | Lost | CutBody] = {
    "503": Fault(503, "SlowDown"),
    "500": Fault(500, "InternalError"),
    "drop": Drop(),
    "lost": Lost(),
    "cut": CutBody(),
}


@dataclass
class FaultPlan:
    """A rule faulting a seeded share of the requests, and every request during a burst.

    Attributes:
        rate: the share of eligible requests faulted (0 to 1).
        seed: seeds the choice of requests and kinds.
        kinds: names from :data:`FAULT_KINDS` (a cut body only applies to a GET; another
            request drawn for it loses its answer instead).
        eligible: which requests may be faulted (default: all).
        burst: while it returns true, every eligible request gets a 503 (a throttling
            burst; e.g. ``lambda: clock.now < 30``).
        injected: how many of each kind were injected.
    """

    rate: float
    seed: int
    kinds: tuple[str, ...] = tuple(FAULT_KINDS)
    eligible: Callable[[ProxyRequest], bool] = lambda request: True
    burst: Callable[[], bool] = lambda: False
    injected: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        import random
        self._random = random.Random(self.seed)
        self._lock = threading.Lock()

    @property
    def total(self) -> int:
        return sum(self.injected.values())

    def __call__(self, request: ProxyRequest) -> Fault | Drop | Lost | CutBody | None:
        if not self.eligible(request):
            return None
        with self._lock:
            if self.burst():
                kind = "503"
            elif self._random.random() < self.rate:
                kind = self._random.choice(self.kinds)
            else:
                return None
            if kind == "cut" and request.method != "GET":
                kind = "lost"
            self.injected[kind] = self.injected.get(kind, 0) + 1
        return FAULT_KINDS[kind]


@dataclass
class Record:
    """One request through the proxy (times from ``time.perf_counter``)."""

    operation: str
    method: str
    target: str
    headers: dict[str, str]
    start: float
    end: float = 0.0
    status: int = 0
    injected: bool = False


@dataclass
class S3Proxy:
    """The proxy. ``start()`` it, point clients at :attr:`url`, ``stop()`` it.

    Attributes:
        upstream: the real endpoint, ``http://host:port``.
        latency: seconds added before each request is forwarded (or answered by a fault).
        rules: consulted in order for each request; the first non-None answer applies.
        log: a record per request, in arrival order.
    """

    upstream: str
    latency: float = 0.0
    rules: list[Rule] = field(default_factory=list)
    log: list[Record] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _server: asyncio.AbstractServer | None = None
    _thread: threading.Thread | None = None
    _port: int = 0
    _handlers: set[asyncio.Task[None]] = field(default_factory=set)

    # ------------------------------------------------------------------ life cycle
    def start(self) -> S3Proxy:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", 0))
            self._port = self._server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                self._server.close()
                tasks = asyncio.all_tasks(loop)
                for task in tasks:
                    task.cancel()
                loop.run_until_complete(_settle(tasks))
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name="s3-proxy", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def reset(self) -> None:
        """No latency, no rules, an empty log."""
        self.latency = 0.0
        self.rules.clear()
        self.log.clear()

    def records(self, operation: str) -> list[Record]:
        return [r for r in self.log if r.operation == operation]

    # ------------------------------------------------------------------ serving
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # asyncio drops its own reference to this task when the client hangs up; without one
        # here, a handler still waiting for the upstream's answer would be garbage collected
        # (pending, its sockets unclosed) instead of finishing the request.
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        upstream = _Upstream(self.upstream)
        try:
            while True:
                request = await _read_request(reader, writer)
                if request is None:
                    break
                response, close = await self._serve(request, upstream)
                writer.write(response)
                await writer.drain()
                if close or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            await upstream.close()
            writer.close()
            self._handlers.discard(task)

    async def _serve(self, request: ProxyRequest, upstream: _Upstream) -> tuple[bytes, bool]:
        """The bytes to send back, and whether to close the connection after them."""
        record = Record(request.operation, request.method, request.target, request.headers,
                        time.perf_counter())
        self.log.append(record)
        action = None
        for rule in list(self.rules):
            action = rule(request)
            if action is not None:
                break
        delay = self.latency + (action.delay if isinstance(action, Fault) else
                                action.seconds if isinstance(action, Delay) else 0.0)
        try:
            if delay:
                await asyncio.sleep(delay)
            if isinstance(action, Hold):
                await asyncio.get_running_loop().run_in_executor(None, action.gate.wait)
            if isinstance(action, HoldReply):
                record.status, response = await upstream.forward(request)
                action.arrived.set()
                if action.gate is not None:
                    await asyncio.get_running_loop().run_in_executor(None, action.gate.wait)
                if action.fault is not None:
                    record.injected = True
                    record.status = action.fault.status
                    response = _error_response(request, action.fault)
            elif isinstance(action, Fault):
                record.injected = True
                record.status = action.status
                response = _error_response(request, action)
            elif isinstance(action, Drop):
                record.injected = True
                return b"", True
            elif isinstance(action, (Lost, CutBody)):
                record.injected = True
                record.status, response = await upstream.forward(request)
                if isinstance(action, Lost):
                    return b"", True
                head, _, body = response.partition(b"\r\n\r\n")
                if not body:
                    return b"", True
                return head + b"\r\n\r\n" + body[:len(body) // 2], True
            else:
                record.status, response = await upstream.forward(request)
        finally:  # ``end`` is set once the request is over, even when forwarding failed
            record.end = time.perf_counter()
        return response, False


class _Upstream:
    """A kept-alive connection to the real endpoint (one per client connection)."""

    def __init__(self, url: str) -> None:
        parsed = urllib.parse.urlsplit(url)
        self._address = (parsed.hostname, parsed.port)
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def forward(self, request: ProxyRequest) -> tuple[int, bytes]:
        head = [f"{request.method} {request.target} HTTP/1.1"]
        for name, value in request.headers.items():
            if name not in _HOP_BY_HOP and name != "content-length":
                head.append(f"{name}: {value}")
        head.append(f"content-length: {len(request.body)}")
        raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + request.body
        for attempt in range(2):  # the server may have closed an idle kept-alive connection
            if self._writer is None:
                self._reader, self._writer = await asyncio.open_connection(*self._address)
            assert self._reader is not None
            try:
                self._writer.write(raw)
                await self._writer.drain()
                status, response, reusable = await _read_response(self._reader, request)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt:
                    raise
                continue
            if not reusable:
                await self.close()
            return status, response
        raise AssertionError("unreachable")

    async def close(self) -> None:
        writer, self._writer, self._reader = self._writer, None, None
        if writer is not None:
            writer.close()


async def _read_response(reader: asyncio.StreamReader,
                         request: ProxyRequest) -> tuple[int, bytes, bool]:
    """Read one response; re-frame it with a Content-Length for the client. Returns the
    status, the bytes to send and whether the upstream connection can be reused."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").rstrip("\r\n").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = _parse_headers(lines[1:])
    reusable = headers.get("connection", "").lower() != "close"
    if request.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
        body = b""
    elif headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
        headers["content-length"] = str(len(body))
    elif "content-length" in headers:
        body = await reader.readexactly(int(headers["content-length"]))
    else:
        body = await reader.read()
        headers["content-length"] = str(len(body))
        reusable = False
    out = [lines[0]] + [f"{k}: {v}" for k, v in headers.items() if k not in _HOP_BY_HOP]
    out.append("connection: keep-alive")
    return status, ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body, reusable


async def _settle(tasks: set[asyncio.Task[object]]) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


async def _read_request(reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> ProxyRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = lines[0].split(" ", 2)
    headers = _parse_headers(lines[1:])
    if headers.pop("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        await writer.drain()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = await _read_chunked(reader)
    else:
        body = await reader.readexactly(int(headers.get("content-length", "0")))
    return ProxyRequest(method, target, headers, body)


def _parse_headers(lines: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in lines:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return headers


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":
                pass  # trailers
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)


def _error_response(request: ProxyRequest, fault: Fault) -> bytes:
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{fault.code}</Code>'
            f"<Message>injected by the test proxy</Message><RequestId>proxy</RequestId>"
            f"</Error>").encode()
    reason = {500: "Internal Server Error", 503: "Service Unavailable",
              429: "Too Many Requests"}.get(fault.status, "Error")
    head = [f"HTTP/1.1 {fault.status} {reason}", "content-type: application/xml",
            f"content-length: {len(body)}", "connection: keep-alive",
            "x-amz-request-id: proxy"]
    if request.method == "HEAD":
        body = b""
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


def fail_first(operation: str, times: int, status: int = 503,
               code: str = "ServiceUnavailable") -> Rule:
    """A rule failing the first ``times`` requests of an operation (then letting them by)."""
    count = 0

    def rule(request: ProxyRequest) -> Fault | None:
        nonlocal count
        if request.operation == operation and count < times:
            count += 1
            return Fault(status, code)
        return None

    return rule


def fail_every(operation: str, period: int, status: int = 503,
               code: str = "ServiceUnavailable") -> Rule:
    """A rule failing every ``period``-th request of an operation (1st, period+1-th, ...)."""
    count = 0

    def rule(request: ProxyRequest) -> Fault | None:
        nonlocal count
        if request.operation != operation:
            return None
        count += 1
        return Fault(status, code) if (count - 1) % period == 0 else None

    return rule
