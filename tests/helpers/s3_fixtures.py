"""pytest fixtures for S3 tests: moto's server on 127.0.0.1, a bucket per test, a proxy.

Registered as a plugin by ``tests/conftest.py``. The moto server starts once per session (on
a free port, on first use) and is reset before each test that uses it. ``s3_env`` points the
standard AWS environment at it with dummy credentials and no config files, so both aorc and
plain boto3 clients reach moto and nothing else (no instance-metadata lookups).
"""

from __future__ import annotations

import logging
import os
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from helpers.moto_speed import cache_moto_module_list
from helpers.s3proxy import S3Proxy

REGION = "us-east-1"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a moto server running for the whole session."""
    pytest.importorskip("moto.server", reason="moto[server] is not installed")
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    cache_moto_module_list()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def reset_moto(endpoint: str) -> None:
    """Forget every bucket and object of the moto server."""
    request = urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST", data=b"")
    with urllib.request.urlopen(request, timeout=10) as response:
        response.read()


@pytest.fixture
def s3_env(moto_endpoint: str, monkeypatch: pytest.MonkeyPatch,
           tmp_path_factory: pytest.TempPathFactory) -> str:
    """A freshly reset moto server, with the AWS environment pointing at it. Returns its
    endpoint URL."""
    reset_moto(moto_endpoint)
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    missing = str(tmp_path_factory.getbasetemp() / "no-aws-config")
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION, "AWS_ENDPOINT_URL": moto_endpoint,
        "AWS_CONFIG_FILE": missing, "AWS_SHARED_CREDENTIALS_FILE": missing,
        "AWS_EC2_METADATA_DISABLED": "true",
    }.items():
        monkeypatch.setenv(name, value)
    return moto_endpoint


@pytest.fixture
def s3_client(s3_env: str) -> Iterator[Any]:
    """A plain (synchronous) boto3 S3 client talking to moto, to set up and inspect."""
    boto3 = pytest.importorskip("boto3")
    client = boto3.client("s3", endpoint_url=s3_env, region_name=REGION)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def s3_bucket(s3_client: Any) -> str:
    """A new empty bucket's name."""
    name = f"aorc-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="session")
def _proxy_server(moto_endpoint: str) -> Iterator[S3Proxy]:
    proxy = S3Proxy(moto_endpoint).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def s3_proxy(_proxy_server: S3Proxy, s3_env: str) -> Iterator[S3Proxy]:
    """A proxy in front of moto (no latency, no faults, empty log); pass
    ``{"endpoint_url": s3_proxy.url}`` as storage options to go through it."""
    _proxy_server.reset()
    try:
        yield _proxy_server
    finally:
        _proxy_server.reset()


@pytest.fixture
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Shrink botocore's standard/adaptive retry backoff (random, up to 1 s, then 2 s, ...)
    to 10 ms so retry tests stay fast; retries still go through botocore's retry handler.
    Returns the list of the backoffs botocore asked for (its own computed delays)."""
    from botocore.retries.standard import ExponentialBackoff

    asked: list[float] = []
    original = ExponentialBackoff.delay_amount

    def delay_amount(self: Any, context: Any) -> float:
        asked.append(original(self, context))
        return 0.01

    monkeypatch.setattr(ExponentialBackoff, "delay_amount", delay_amount)
    return asked
