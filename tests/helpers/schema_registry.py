"""A small Confluent-REST-compatible schema registry for the tests (in memory, a thread on
127.0.0.1): register a schema under a subject, look schemas up by id and subjects' versions.
Enough for confluent-kafka's ``SchemaRegistryClient``/``AvroSerializer`` and aorc's client.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

__all__ = ["RegistryServer", "schema_registry"]


class RegistryServer:
    """The registry's state and its HTTP server.

    Attributes:
        url: its base URL.
        schemas: schema text by id.
        subjects: ids by subject, in version order.
        requests: the paths asked for (GET by id counts the client's caching).
    """

    def __init__(self) -> None:
        self.schemas: dict[int, str] = {}
        self.subjects: dict[str, list[int]] = {}
        self.requests: list[str] = []
        self.lock = threading.Lock()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def reply(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                path = urlparse(self.path).path.strip("/").split("/")
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with registry.lock:
                    registry.requests.append("POST " + self.path)
                    if len(path) >= 2 and path[0] == "subjects":
                        subject = unquote(path[1])
                        text = body["schema"]
                        found = [i for i, t in registry.schemas.items() if t == text]
                        sid = found[0] if found else len(registry.schemas) + 1
                        registry.schemas[sid] = text
                        versions = registry.subjects.setdefault(subject, [])
                        if sid not in versions:
                            versions.append(sid)
                        self.reply(200, {"id": sid, "subject": subject,
                                         "version": versions.index(sid) + 1,
                                         "schema": text})
                        return
                self.reply(404, {"error_code": 404, "message": "not found"})

            def do_GET(self) -> None:  # noqa: N802
                path = urlparse(self.path).path.strip("/").split("/")
                with registry.lock:
                    registry.requests.append("GET " + self.path)
                    if path[:2] == ["schemas", "ids"] and int(path[2]) in registry.schemas:
                        self.reply(200, {"schema": registry.schemas[int(path[2])]})
                        return
                    if path[0] == "subjects" and len(path) == 4 and path[2] == "versions":
                        ids = registry.subjects.get(unquote(path[1]), [])
                        if ids:
                            n = len(ids) if path[3] == "latest" else int(path[3])
                            self.reply(200, {"id": ids[n - 1], "version": n,
                                             "subject": unquote(path[1]),
                                             "schema": registry.schemas[ids[n - 1]]})
                            return
                self.reply(404, {"error_code": 40401, "message": "not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def schema_registry() -> Iterator[RegistryServer]:
    """A fresh registry server."""
    server = RegistryServer()
    try:
        yield server
    finally:
        server.stop()
