"""What is particular to GCS (the store-level suite covers the common promises): URLs and
settings, the credential chain (emulator, anonymous, an access token, a service-account key
through GOOGLE_APPLICATION_CREDENTIALS and google-auth, against a token endpoint on
loopback), secrets kept out of messages, requester pays, and resumable chunks resumed from
what the server holds after a failure.

The emulator runs behind helpers/gcs_front.py (see tests/io/test_stores.py); for the
credential tests that layer requires the bearer token a real GCS would check.
"""

from __future__ import annotations

import json
import pathlib
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pyarrow as pa
import pytest
from helpers.gcs_front import GcsFront
from helpers.s3proxy import Fault, S3Proxy
from helpers.store_fixtures import gcs_get, gcs_put

import aorc
from aorc.errors import AccessDeniedError, SchemaError
from aorc.io import open_output, open_store
from aorc.io.gcs.config import GCSConfig, parse_gcs_url

TOKEN = "ya29.test-access-token-0123456789"
TABLE = pa.table({"id": pa.array(range(20_000), pa.int64())})


def test_urls_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STORAGE_EMULATOR_HOST", raising=False)
    assert parse_gcs_url("gs://b/a/x.orc") == ("b", "a/x.orc")
    assert parse_gcs_url("GCS://b/x y#z") == ("b", "x y#z")
    for bad in ("gs://", "gs://b", "gs://b/", "gs://b/dir/", "s3://b/k"):
        with pytest.raises(SchemaError):
            parse_gcs_url(bad)
    config = GCSConfig.from_options(None)
    assert config.endpoint == "https://storage.googleapis.com" and not config.emulator
    assert config.store.max_concurrency == 8 and config.part_size == 8 << 20
    assert config.effective_memory_budget == 16 << 20
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", "localhost:9023")
    assert GCSConfig.from_options({}).endpoint == "http://localhost:9023"
    assert GCSConfig.from_options({}).emulator
    with pytest.raises(SchemaError, match="multiple of 262144"):
        GCSConfig.from_options({"part_size": 5_000_000})
    with pytest.raises(SchemaError, match="unknown storage option.*bogus"):
        GCSConfig.from_options({"bogus": 1})
    with pytest.raises(SchemaError, match="must not hold credentials"):
        GCSConfig.from_options({"endpoint_url": "https://user:pw@example.com"})
    with pytest.raises(SchemaError, match="generation"):
        open_store("gs://b/k.orc", {"if_match": '"etag"'})


async def test_the_emulator_is_reached_anonymously(gcs_bucket: str, gcs_emulator: str,
                                                   gcs_proxy: S3Proxy) -> None:
    await aorc.write_table(TABLE, f"gs://{gcs_bucket}/t.orc")
    assert (await aorc.read_table(f"gs://{gcs_bucket}/t.orc")).equals(TABLE)
    assert gcs_proxy.log and not any("authorization" in r.headers for r in gcs_proxy.log)


class _TokenEndpoint(BaseHTTPRequestHandler):
    """OAuth 2's token endpoint: any JWT assertion gets TOKEN (the grants are counted)."""

    grants: list[dict[str, list[str]]] = []

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        length = int(self.headers.get("Content-Length", "0"))
        self.grants.append(urllib.parse.parse_qs(self.rfile.read(length).decode()))
        body = json.dumps({"access_token": TOKEN, "expires_in": 3600,
                           "token_type": "Bearer"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def service_account(tmp_path: pathlib.Path) -> Iterator[dict[str, Any]]:
    """A service-account key (a fresh RSA key) whose token endpoint runs on loopback."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    server = HTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _TokenEndpoint.grants = []
    info = {"type": "service_account", "project_id": "test", "private_key_id": "k1",
            "private_key": pem, "client_email": "aorc@test.iam.gserviceaccount.com",
            "client_id": "1", "token_uri": f"http://127.0.0.1:{server.server_port}/token"}
    try:
        yield info
    finally:
        server.shutdown()
        server.server_close()


async def test_application_default_credentials(
        gcs_bucket: str, gcs_proxy: S3Proxy, gcs_front: GcsFront,
        service_account: dict[str, Any], tmp_path: pathlib.Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """GOOGLE_APPLICATION_CREDENTIALS names a key file: google-auth signs a JWT with its key,
    the token endpoint grants a token, and every request carries it; the layer in front of
    the emulator refuses requests without it, as GCS does."""
    key_file = tmp_path / "key.json"
    key_file.write_text(json.dumps(service_account))
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key_file))
    gcs_front.required_token = TOKEN
    options = {"endpoint_url": gcs_proxy.url}
    url = f"gs://{gcs_bucket}/adc/t.orc"
    await aorc.write_table(TABLE, url, storage_options=options)
    assert (await aorc.read_table(url, storage_options=options)).equals(TABLE)
    assert (await aorc.read_dataset(f"gs://{gcs_bucket}/adc/",
                                    storage_options=options)).equals(TABLE)
    assert gcs_proxy.log and all(r.headers.get("authorization") == f"Bearer {TOKEN}"
                                 for r in gcs_proxy.log)
    assert len(_TokenEndpoint.grants) == 1  # the token is cached while valid
    assert _TokenEndpoint.grants[0]["grant_type"] == ["urn:ietf:params:oauth:grant-type:"
                                                      "jwt-bearer"]
    # the same key given as a dict; nothing secret is ever shown
    config = GCSConfig.from_options({**options, "credentials": service_account})
    for text in (repr(config), str(config)):
        assert "PRIVATE KEY" not in text and service_account["private_key"][40:80] not in text
    gcs_front.required_token = "another-token"  # the store now refuses ours
    with pytest.raises(AccessDeniedError) as info:
        await aorc.read_table(url, storage_options=options)
    assert TOKEN not in str(info.value) and "PRIVATE" not in str(info.value)


async def test_token_option_and_missing_credentials(
        gcs_bucket: str, gcs_emulator: str, gcs_proxy: S3Proxy, gcs_front: GcsFront,
        monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    gcs_put(gcs_emulator, gcs_bucket, "t.orc", _orc(TABLE))
    url = f"gs://{gcs_bucket}/t.orc"
    gcs_front.required_token = TOKEN
    got = await aorc.read_table(url, storage_options={"token": TOKEN})
    assert got.equals(TABLE)
    with pytest.raises(AccessDeniedError) as info:  # anonymous: refused
        await aorc.read_table(url, storage_options={"token": "anon"})
    assert TOKEN not in str(info.value)
    assert "***" in repr(GCSConfig.from_options({"token": TOKEN}))
    assert TOKEN not in repr(GCSConfig.from_options({"token": TOKEN}))
    # no emulator and no credentials anywhere: a clear error, before any request
    monkeypatch.delenv("STORAGE_EMULATOR_HOST")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))
    gcs_proxy.log.clear()
    with pytest.raises(AccessDeniedError, match="no usable GCS credentials"):
        await aorc.read_table(url, storage_options={"endpoint_url": gcs_proxy.url})
    assert gcs_proxy.log == []


async def test_requester_pays_project(gcs_bucket: str, gcs_emulator: str,
                                      gcs_proxy: S3Proxy) -> None:
    gcs_put(gcs_emulator, gcs_bucket, "t.orc", _orc(TABLE))
    await aorc.read_table(f"gs://{gcs_bucket}/t.orc", storage_options={"project": "payer"})
    assert gcs_proxy.log and all("userProject=payer" in r.target for r in gcs_proxy.log)


async def test_a_failed_chunk_resumes_where_the_server_stopped(
        gcs_bucket: str, gcs_emulator: str, gcs_proxy: S3Proxy) -> None:
    """The second chunk fails once: aorc asks the session how much it holds (a status
    query) and sends the rest; the object is whole and the retry counted."""
    chunk = 256 * 1024
    data = bytes(range(256)) * (3 * chunk // 256 + 10)
    failed: list[str] = []

    def fail_second_chunk(request: Any) -> Fault | None:
        span = request.headers.get("content-range", "")
        if span.startswith(f"bytes {chunk}-") and not failed:
            failed.append(span)
            return Fault(503, "backendError")
        return None

    gcs_proxy.rules.append(fail_second_chunk)
    out = open_output(f"gs://{gcs_bucket}/r.bin", {"part_size": chunk,
                                                   "retry_base_delay": 0.0})
    await out.write(data)
    await out.complete()
    assert gcs_get(gcs_emulator, gcs_bucket, "r.bin") == data
    spans = [r.headers.get("content-range") for r in gcs_proxy.log if r.method == "PUT"]
    assert failed and "bytes */*" in spans  # the status query after the failure
    assert spans.count(f"bytes {chunk}-{2 * chunk - 1}/*") == 2  # sent again, once
    assert out.stats.retries == 1  # type: ignore[attr-defined]


def _orc(table: pa.Table) -> bytes:
    import io

    import pyarrow.orc as po
    sink = io.BytesIO()
    po.write_table(table, sink)
    return sink.getvalue()
