"""A small Hadoop KMS test server (the documented REST API, ``/kms/v1/...``) over master keys
in memory, on 127.0.0.1 in a background thread: aorc's :class:`aorc.keys.HadoopKMS` and ORC
Java's own ``KMSClientProvider`` are pointed at it as peers.

It implements what key clients call: key names, metadata, current version, and the
encrypted-key operations ``generate`` and ``decrypt`` as Hadoop's
``KeyProviderCryptoExtension`` computes them (AES/CTR with the master key and the IV's bits
flipped). Every request is recorded (method, path, operation) so tests can check which were
made.
"""

from __future__ import annotations

import asyncio
import base64
import os
import threading
from typing import Any

from aiohttp import web
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

__all__ = ["KmsServer"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_")
                                    + "=" * (-len(text) % 4))


def _ctr(key: bytes, iv: bytes, data: bytes) -> bytes:
    op = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    return op.update(data) + op.finalize()


def _flip(iv: bytes) -> bytes:
    return bytes(b ^ 0xFF for b in iv)


class KmsServer:
    """The server; ``keys``: name -> list of versions' key bytes."""

    def __init__(self, keys: dict[str, list[bytes]]) -> None:
        self.keys = keys
        self.requests: list[tuple[str, str, str]] = []
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, ``http://127.0.0.1:PORT/kms``."""
        return f"http://127.0.0.1:{self.port}/kms"

    def __enter__(self) -> KmsServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)
        self._loop.close()

    async def _start(self) -> None:
        app = web.Application(middlewares=[self._record])
        app.router.add_route("OPTIONS", "/kms/{tail:.*}", self._options)
        app.router.add_get("/kms/v1/keys/names", self._names)
        app.router.add_get("/kms/v1/key/{name}/_metadata", self._metadata)
        app.router.add_get("/kms/v1/key/{name}/_currentversion", self._current)
        app.router.add_get("/kms/v1/key/{name}/_eek", self._generate)
        app.router.add_post("/kms/v1/keyversion/{version}/_eek", self._decrypt)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server  # noqa: SLF001 - aiohttp gives the bound port only here
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    @web.middleware
    async def _record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.requests.append((request.method, request.path, request.query.get("eek_op", "")))
        response: web.StreamResponse = await handler(request)
        return response

    async def _options(self, request: web.Request) -> web.Response:
        """Hadoop's pseudo authentication (the ``user.name`` parameter): the client's first
        request to a URL; the answer carries the auth cookie it then sends."""
        user = request.query.get("user.name", "anonymous")
        response = web.Response(status=200)
        response.headers["Set-Cookie"] = (f'hadoop.auth="u={user}&p={user}&t=simple'
                                          f'&e=9999999999999&s=test"; Path=/; HttpOnly')
        return response

    async def _names(self, request: web.Request) -> web.Response:
        return web.json_response(sorted(self.keys))

    def _key(self, name: str) -> list[bytes]:
        if name not in self.keys:
            raise web.HTTPNotFound()
        return self.keys[name]

    async def _metadata(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        versions = self._key(name)
        return web.json_response({"name": name, "cipher": "AES/CTR/NoPadding",
                                  "length": 8 * len(versions[-1]), "description": None,
                                  "attributes": {}, "created": 1_700_000_000_000,
                                  "versions": len(versions)})

    async def _current(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        versions = self._key(name)
        return web.json_response({"name": name, "versionName": f"{name}@{len(versions) - 1}",
                                  "material": _b64(versions[-1])})

    async def _generate(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        master = self._key(name)[-1]
        out = []
        for _ in range(int(request.query.get("num_keys", "1"))):
            iv, key = os.urandom(16), os.urandom(len(master))
            out.append({"versionName": f"{name}@{len(self.keys[name]) - 1}", "iv": _b64(iv),
                        "encryptedKeyVersion": {"versionName": "EEK", "name": name,
                                                "material": _b64(_ctr(master, _flip(iv), key))}})
        return web.json_response(out)

    async def _decrypt(self, request: web.Request) -> web.Response:
        if request.query.get("eek_op") != "decrypt":
            raise web.HTTPBadRequest()
        name, _, version = request.match_info["version"].rpartition("@")
        versions = self._key(name)
        if not version.isdigit() or int(version) >= len(versions):
            raise web.HTTPNotFound()
        body = await request.json()
        iv, material = _unb64(body["iv"]), _unb64(body["material"])
        return web.json_response({"name": name, "versionName": "EK",
                                  "material": _b64(_ctr(versions[int(version)], _flip(iv),
                                                        material))})
