"""moto's S3 server and the delaying proxy, run in a child process for the S3 benchmarks.

A real object store does not run inside the reader's process. Run in threads of the
benchmark's own process (as the tests run them), moto and the proxy compete with the reader
for the GIL: every call of the reader that releases the GIL (a socket send, ``os.urandom``,
botocore's CRC32 of a response body) then waits up to the interpreter's switch interval
(5 ms) to get it back, which made a 60 us CRC32 of a 100 KB file cost 2 ms. That penalises
a Python (asyncio) reader and hardly a C++ one (pyarrow's S3 filesystem runs without the
GIL). Here both run in a child process, so both readers see a server that costs them no
CPU of their own, as S3 does.

:class:`ServerProcess` has the parts of :class:`helpers.s3proxy.S3Proxy` the benchmarks
use: :attr:`url` (the delaying proxy), :attr:`upstream` (moto, undelayed) and :attr:`log`
(the proxy's records, fetched from the child; ``log.clear()`` clears them there).

Usage::

    server = ServerProcess(latency=0.02).start()
    try:
        ...  # read through server.url; len(server.log) requests
    finally:
        server.stop()
"""

from __future__ import annotations

import logging
import multiprocessing
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["ServerProcess", "cache_moto_object_bytes", "start_moto_and_proxy"]


@dataclass(frozen=True)
class LogRecord:
    """A request the proxy saw: its operation and its start and end (``perf_counter``,
    a system-wide monotonic clock on Linux, so comparable across the two processes)."""

    operation: str
    start: float
    end: float
    range: str | None = None  # a GET's Range header (``None``: none or not a GET)


def cache_moto_object_bytes() -> None:
    """Make moto serve ranged GETs in time proportional to the range, as a real store does.

    moto re-reads the whole object from its spooled temporary file for every GetObject,
    ranged or not (about 0.15 s per request for a 90 MiB object here), which would bury the
    latency being measured under a server cost proportional to the number of requests. The
    benchmark object is written once before any read, so its bytes can be kept: the value
    is cached per key, and any write to the key drops the cache.
    """
    from moto.s3.models import FakeKey

    original: Any = FakeKey.__dict__["value"]  # the property object

    def get(self: Any) -> bytes:
        cached: bytes | None = self.__dict__.get("_bench_bytes")
        if cached is None:
            cached = self.__dict__["_bench_bytes"] = original.fget(self)
        return cached

    def set_(self: Any, new_value: bytes) -> None:
        self.__dict__.pop("_bench_bytes", None)
        original.fset(self, new_value)

    setattr(FakeKey, "value", property(get, set_))  # noqa: B010 - patching a property


def start_moto_and_proxy(latency: float) -> tuple[Any, Any]:
    """Start moto's threaded server on 127.0.0.1 and the delaying proxy in front of it, in
    this process; returns ``(server, proxy)``, each stopped with ``stop()``."""
    from helpers.moto_speed import cache_moto_module_list
    from helpers.s3proxy import S3Proxy
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    cache_moto_object_bytes()
    cache_moto_module_list()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, S3Proxy(f"http://{host}:{port}", latency=latency).start()


def _load(bucket: str, prefix: str, folder: str) -> int:
    """Put every file under ``folder`` into moto's ``bucket`` (made first, with the
    parent's client) as ``prefix/<relative path>``, straight into moto's backend: no HTTP
    request per object, so 20,000 objects take seconds. Returns the count."""
    import os

    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.s3.models import s3_backends

    backend = s3_backends[DEFAULT_ACCOUNT_ID]["aws"]
    n = 0
    for top, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            if name.startswith("."):
                continue
            path = os.path.join(top, name)
            relative = os.path.relpath(path, folder).replace(os.sep, "/")
            with open(path, "rb") as fh:
                backend.put_object(bucket, f"{prefix}/{relative}", fh.read())
            n += 1
    return n


def _serve(conn: Connection, latency: float) -> None:
    """The child: moto, the proxy, and a loop answering the parent's commands."""
    server, proxy = start_moto_and_proxy(latency)
    conn.send((proxy.upstream, proxy.url))
    try:
        while True:
            command = conn.recv()
            if command == "log":
                conn.send([(r.operation, r.start, r.end,
                            r.headers.get("range") or r.headers.get("Range"))
                           for r in list(proxy.log)])
            elif command == "clear":
                proxy.log.clear()
                conn.send(None)
            elif isinstance(command, tuple) and command[0] == "load":
                conn.send(_load(*command[1:]))
            else:  # "stop"
                break
    finally:
        proxy.stop()
        server.stop()
        conn.send(None)


class _RemoteLog:
    """The child proxy's log: ``len``, iteration and ``clear`` as for a list."""

    def __init__(self, owner: ServerProcess) -> None:
        self._owner = owner

    def _records(self) -> list[LogRecord]:
        return [LogRecord(*r) for r in self._owner.call("log")]

    def __len__(self) -> int:
        return len(self._records())

    def __iter__(self) -> Iterator[LogRecord]:
        return iter(self._records())

    def clear(self) -> None:
        self._owner.call("clear")


class ServerProcess:
    """moto and the delaying proxy in a child process (see the module's docstring).

    Args:
        latency: seconds the proxy adds before forwarding each request.
    """

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.upstream = ""
        self.url = ""
        self._conn: Connection | None = None
        self._process: Any = None
        self._lock = threading.Lock()

    def start(self) -> ServerProcess:
        """Start the child and wait until its servers listen."""
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child, self.latency),
                                        name="s3-server", daemon=True)
        self._process.start()
        self._conn = parent
        self.upstream, self.url = parent.recv()
        return self

    def call(self, command: str | tuple[str, ...]) -> Any:
        """Send a command to the child and return its answer."""
        assert self._conn is not None, "the server process is not running"
        with self._lock:
            self._conn.send(command)
            return self._conn.recv()

    @property
    def log(self) -> _RemoteLog:
        """The proxy's records (each call fetches them from the child)."""
        return _RemoteLog(self)

    def load(self, bucket: str, prefix: str, folder: str) -> int:
        """Put the files under the local ``folder`` into the existing ``bucket`` under
        ``prefix/`` directly in moto's backend (see :func:`_load`); their count."""
        count: int = self.call(("load", bucket, prefix, folder))
        return count

    def stop(self) -> None:
        """Stop the servers and the child."""
        if self._conn is None:
            return
        try:
            self.call("stop")
        finally:
            self._conn.close()
            self._conn = None
            self._process.join(timeout=30)
            if self._process.is_alive():
                self._process.terminate()
