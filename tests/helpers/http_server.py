"""A small static file server on 127.0.0.1 for the HTTP(S) store's tests, whose behaviour each
test chooses per file: ranges served or ignored, a strong or weak ETag, a Last-Modified date,
or no validator at all; ``If-Match`` and ``If-Unmodified-Since`` honoured as RFC 9110 says.
It runs its own event loop in a daemon thread and logs every request.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HttpFile", "HttpFiles"]


@dataclass
class HttpFile:
    """One file and how the server treats it.

    Attributes:
        data: the bytes.
        ranges: whether ``Range`` is honoured (else the whole file comes back, 200).
        validator: ``"strong"`` (an ETag), ``"weak"`` (``W/"..."``), ``"date"``
            (Last-Modified only) or ``None``.
        version: bumped on every replacement (part of the ETag and the date).
    """

    data: bytes
    ranges: bool = True
    validator: str | None = "strong"
    version: int = 1

    @property
    def etag(self) -> str:
        digest = hashlib.sha256(self.data).hexdigest()[:16]
        return f'W/"{digest}"' if self.validator == "weak" else f'"{digest}"'

    @property
    def last_modified(self) -> str:
        return email.utils.formatdate(1_700_000_000 + self.version * 3600, usegmt=True)


@dataclass
class HttpFiles:
    """The server: ``start()``, put files in :attr:`files` (path -> :class:`HttpFile`),
    read :attr:`log` (method, path, headers), ``stop()``."""

    files: dict[str, HttpFile] = field(default_factory=dict)
    log: list[tuple[str, str, dict[str, str]]] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _runner: Any = None
    _port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> HttpFiles:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self._start())
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._runner.cleanup())
                loop.close()

        self._thread = threading.Thread(target=run, name="http-files", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop = None

    async def _start(self) -> None:
        from aiohttp import web

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        headers = {k.lower(): v for k, v in request.headers.items()}
        self.log.append((request.method, request.path_qs, headers))
        file = self.files.get(request.path)
        if file is None or request.method not in ("GET", "HEAD"):
            return web.Response(status=404 if file is None else 405)
        out = {}
        if file.validator in ("strong", "weak"):
            out["ETag"] = file.etag
        if file.validator == "date":
            out["Last-Modified"] = file.last_modified
        if "if-match" in headers and (file.validator != "strong"
                                      or headers["if-match"] != file.etag):
            return web.Response(status=412)
        since = headers.get("if-unmodified-since")
        if since and file.validator == "date" and since != file.last_modified:
            return web.Response(status=412)
        wanted = headers.get("range")
        size = len(file.data)
        if not wanted or not file.ranges:
            return web.Response(status=200, body=file.data, headers=out)
        first_text, _, last_text = wanted.split("=", 1)[1].partition("-")
        if not first_text:
            first, last = max(0, size - int(last_text)), size - 1
        else:
            first = int(first_text)
            last = min(int(last_text), size - 1) if last_text else size - 1
        if first >= size:
            return web.Response(status=416, headers={"Content-Range": f"bytes */{size}"})
        out["Content-Range"] = f"bytes {first}-{last}/{size}"
        return web.Response(status=206, body=file.data[first:last + 1], headers=out)
