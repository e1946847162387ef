"""gcp-storage-emulator for tests, and a thin layer in front of it for what it lacks.

Run as a script (``python gcs_front.py``), this module starts the emulator (in memory) on a
free port of 127.0.0.1, prints ``PORT <n>`` and serves until its standard input closes, so
it never outlives the test session that started it.

:class:`GcsFront` is a small HTTP server in front of the emulator that adds the behaviour of
real GCS that aorc's guarantees rest on and the emulator lacks (measured: it ignores
``generation=`` and ``ifGenerationMatch``, sends no ``x-goog-generation`` with downloads,
answers a suffix range with the whole object and a range past the end with an empty 206,
ignores ``maxResults``, and cannot cancel a resumable session):

* downloads carry ``x-goog-generation`` (the emulator's own generation of the object, read
  from its metadata) and ``ETag``; ``ifGenerationMatch`` answers 412 when the live generation
  differs and ``generation=`` 404;
* ``Range: bytes=-N`` is turned into the explicit range it means; a range starting at or past
  the end answers 416, as GCS does;
* uploads with ``ifGenerationMatch=0`` answer 412 when the object exists;
* listings are paginated by ``maxResults`` with ``nextPageToken``;
* ``DELETE`` of a resumable session cancels it (499); later chunks for it answer 404;
* an empty media upload (which crashes the emulator) is made as an empty resumable upload;
* a resumable session's URL names the host the client came through (the emulator names
  itself, which would bypass the proxy);
* a status query of a session that holds no byte answers 308 without ``Range`` (the emulator
  claims ``bytes=0-0``, one byte).

Everything else, the bytes above all, is the emulator's. The layer runs its own event loop in
a daemon thread, like :class:`helpers.s3proxy.S3Proxy` (which tests put in front of it for
request logs, faults and latency).
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
import threading
import urllib.parse
from typing import Any

_FORWARDED = ("content-type", "content-range", "range", "x-upload-content-type",
              "x-upload-content-length", "authorization")


class GcsFront:
    """The layer: ``start()`` it, send clients to :attr:`url`, ``stop()`` it.

    Attributes:
        upstream: the emulator, ``http://127.0.0.1:<port>``.
        cancelled: the resumable sessions cancelled by a DELETE.
        required_token: when set, requests without ``Authorization: Bearer <it>`` get 401.
        cache: keep each object's metadata and bytes after its first download and serve
            later downloads from them (benchmarks: the emulator copies the whole object and
            serves one request at a time, a cost no real store has). Only for objects that
            are never replaced.
    """

    def __init__(self, upstream: str, *, cache: bool = False) -> None:
        self.upstream = upstream.rstrip("/")
        self.cache = cache
        self._objects: dict[tuple[str, str], tuple[dict[str, Any], bytes]] = {}
        self.cancelled: set[str] = set()
        self._received: dict[str, int] = {}
        self._finished: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.required_token: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._port = 0
        self._session: Any = None
        self._runner: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> GcsFront:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            loop.run_until_complete(self._start())
            ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self._stop())
                loop.close()

        self._thread = threading.Thread(target=run, name="gcs-front", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join()
            self._loop = None

    async def _start(self) -> None:
        import aiohttp
        from aiohttp import web

        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=1 << 30)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def _stop(self) -> None:
        await self._runner.cleanup()
        await self._session.close()

    # ------------------------------------------------------------------ emulator calls
    async def _forward(self, method: str, target: str, headers: dict[str, str],
                       body: bytes) -> tuple[int, dict[str, str], bytes]:
        async with self._session.request(method, self.upstream + target, headers=headers,
                                         data=io.BytesIO(body) if body else None,
                                         allow_redirects=False) as r:
            data = await r.read()
            return r.status, {k: v for k, v in r.headers.items()}, data

    async def _metadata(self, bucket: str, name: str) -> dict[str, Any] | None:
        path = (f"/storage/v1/b/{urllib.parse.quote(bucket, safe='')}/o/"
                f"{urllib.parse.quote(name, safe='')}")
        status, _, body = await self._forward("GET", path, {}, b"")
        return json.loads(body) if status == 200 else None

    # ------------------------------------------------------------------ serving
    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        if self.required_token is not None and request.headers.get("Authorization") != \
                f"Bearer {self.required_token}":
            return _error(web, 401, "required", "Anonymous caller does not have access")
        path = request.rel_url.raw_path
        query = urllib.parse.parse_qs(request.rel_url.raw_query_string, keep_blank_values=True)
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() in _FORWARDED}
        parts = [urllib.parse.unquote(p) for p in path.split("/")]
        if request.method == "GET" and query.get("alt") == ["media"] and "o" in parts:
            return await self._download(web, request, parts, query, headers)
        if path.startswith("/upload/") and "upload_id" in query:
            upload = query["upload_id"][0]
            if upload in self.cancelled:
                return _error(web, 404, "notFound", "No such upload session")
            if request.method == "DELETE":
                self.cancelled.add(upload)
                return web.Response(status=499)
            if request.method == "PUT":
                return await self._chunk(web, request, upload, headers, body)
        elif path.startswith("/upload/") and request.method == "POST" \
                and query.get("ifGenerationMatch") == ["0"]:
            bucket = parts[5]
            if await self._metadata(bucket, query["name"][0]) is not None:
                return _error(web, 412, "conditionNotMet", "At least one of the pre-"
                              "conditions you specified did not hold.")
        elif request.method == "GET" and path.endswith("/o") and "maxResults" in query:
            return await self._list(web, path, query, headers)
        if path.startswith("/upload/") and request.method == "POST" and not body \
                and query.get("uploadType") == ["media"]:
            status, found, data = await empty_upload(self._forward, path, query["name"][0])
            return _response(web, status, found, data)
        status, found, data = await self._forward(request.method, request.rel_url.raw_path_qs,
                                                  headers, body)
        if "Location" in found:  # the emulator names itself: send clients back the way
            location = urllib.parse.urlsplit(found["Location"])  # they came (proxy, front)
            found["Location"] = urllib.parse.urlunsplit(
                ("http", request.host, location.path, location.query, ""))
        return _response(web, status, found, data)

    async def _chunk(self, web: Any, request: Any, upload: str, headers: dict[str, str],
                     body: bytes) -> Any:
        """A chunk or a status query of a resumable session; the bytes the session holds
        are counted here, as the emulator misreports an empty session."""
        span = headers.get("Content-Range", "")
        if upload in self._finished:  # GCS answers a finished session with its object (the
            status, found, data = self._finished[upload]  # emulator forgets the session)
            return _response(web, status, found, data)
        if span.startswith("bytes */") and span != "bytes */0" and (
                not self._received.get(upload) or span == "bytes */*"):
            held = self._received.get(upload)  # a status query: answered here, as the
            return web.Response(status=308, headers=(  # emulator refuses "bytes */*"
                {"Range": f"bytes=0-{held - 1}"} if held else {}))
        status, found, data = await self._forward("PUT", request.rel_url.raw_path_qs,
                                                  headers, body)
        if status == 308 and "-" in found.get("Range", ""):
            self._received[upload] = int(found["Range"].rpartition("-")[2]) + 1
        if status in (200, 201):
            self._finished[upload] = (status, dict(found), data)
        return _response(web, status, found, data)

    async def _download(self, web: Any, request: Any, parts: list[str],
                        query: dict[str, list[str]], headers: dict[str, str]) -> Any:
        index = parts.index("o")
        bucket, name = parts[index - 1], "/".join(parts[index + 1:])
        cached = self._objects.get((bucket, name))
        meta = cached[0] if cached is not None else await self._metadata(bucket, name)
        if meta is None:
            return _error(web, 404, "notFound", "No such object")
        generation, size = str(meta["generation"]), int(meta.get("size") or 0)
        if query.get("ifGenerationMatch", [generation])[0] != generation:
            return _error(web, 412, "conditionNotMet", "At least one of the pre-conditions "
                          "you specified did not hold.")
        if query.get("generation", [generation])[0] != generation:
            return _error(web, 404, "notFound", "No such object")
        wanted = headers.pop("Range", headers.pop("range", None))
        if wanted:
            spec = wanted.split("=", 1)[1]
            first_text, _, last_text = spec.partition("-")
            if not first_text:  # a suffix
                if size == 0:
                    return _error(web, 416, "invalid", "Requested range not satisfiable")
                first, last = max(0, size - int(last_text)), size - 1
            else:
                first = int(first_text)
                last = min(int(last_text), size - 1) if last_text else size - 1
                if first >= size:
                    return _error(web, 416, "invalid", "Requested range not satisfiable")
            headers["Range"] = f"bytes={first}-{last}"
        if self.cache:
            if cached is None:
                _, _, whole = await self._forward("GET", request.rel_url.raw_path, {}, b"")
                cached = self._objects[(bucket, name)] = (meta, whole)
            whole = cached[1]
            if wanted:
                found = {"Content-Range": f"bytes {first}-{last}/{size}"}
                return web.Response(status=206, body=whole[first:last + 1], headers={
                    **found, "x-goog-generation": generation, "ETag": f'"{generation}"'})
            return web.Response(status=200, body=whole, headers={
                "x-goog-generation": generation, "ETag": f'"{generation}"'})
        status, found, data = await self._forward("GET", request.rel_url.raw_path_qs, headers,
                                                  b"")
        found["x-goog-generation"] = generation
        found["ETag"] = f'"{generation}"'
        return _response(web, status, found, data)

    async def _list(self, web: Any, path: str, query: dict[str, list[str]],
                    headers: dict[str, str]) -> Any:
        page_size = int(query.pop("maxResults")[0])
        start = int(query.pop("pageToken", ["0"])[0])
        query.pop("fields", None)
        target = path + "?" + urllib.parse.urlencode(query, doseq=True)
        status, found, data = await self._forward("GET", target, headers, b"")
        if status != 200:
            return _response(web, status, found, data)
        listing = json.loads(data)
        items = sorted(listing.get("items") or [], key=lambda item: item["name"])
        page: dict[str, Any] = {"kind": "storage#objects",
                                "items": items[start:start + page_size]}
        if start == 0 and listing.get("prefixes"):
            page["prefixes"] = sorted(listing["prefixes"])
        if start + page_size < len(items):
            page["nextPageToken"] = str(start + page_size)
        return web.json_response(page)


async def empty_upload(forward: Any, path: str, name: str) -> tuple[int, dict[str, str], bytes]:
    """Store an empty object as a resumable upload of nothing (a media upload of nothing
    crashes the emulator)."""
    query = urllib.parse.urlencode({"uploadType": "resumable", "name": name})
    status, found, data = await forward("POST", f"{path}?{query}",
                                        {"Content-Type": "application/json"}, b"{}")
    if status != 200:
        return status, found, data
    location = urllib.parse.urlsplit(found["Location"])
    return await forward("PUT", f"{location.path}?{location.query}",
                         {"Content-Range": "bytes */0"}, b"")


def _response(web: Any, status: int, headers: dict[str, str], body: bytes) -> Any:
    kept = {k: v for k, v in headers.items()
            if k.lower() not in ("content-length", "transfer-encoding", "connection",
                                 "server", "date", "content-encoding")}
    return web.Response(status=status, headers=kept, body=body)


def _error(web: Any, status: int, reason: str, message: str) -> Any:
    return web.json_response({"error": {"code": status, "message": message,
                                        "errors": [{"reason": reason, "message": message}]}},
                             status=status)


def _serve_emulator() -> None:
    """Start the emulator on a free port, print it, serve until stdin closes."""
    import logging

    from gcp_storage_emulator.server import Server

    logging.disable(logging.CRITICAL)
    server = Server("127.0.0.1", 0, in_memory=True)
    server.start()
    port = server._api._httpd.server_address[1]
    print(f"PORT {port}", flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


if __name__ == "__main__":
    _serve_emulator()
