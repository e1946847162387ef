"""The three object stores of ``bench_stores.py``, each behind a delaying proxy, in a child
process (so that neither the servers nor the proxies take the GIL from the readers timed in
the parent; see ``s3_server.py``):

* ``s3``: moto's server (with the benchmark's cache of object bytes);
* ``gs``: gcp-storage-emulator (a grandchild process) behind the test suite's fidelity layer
  (``tests/helpers/gcs_front.py``: generations, suffix ranges, pagination), which keeps each
  object's bytes after its first download (the emulator copies a whole object and serves one
  request at a time: a server cost that would bury the client's, as ``bench_s3.py``'s cache
  of moto's bytes avoids for S3);
* ``az``: Azurite (a Node grandchild, installed into the tests' cache folder if needed).

Each store has an undelayed upstream (to upload and to measure CPU per request) and a proxy
adding the same latency to every request (to time reads), whose request log the parent can
fetch and clear.

Usage::

    servers = StoresProcess(latency=0.02).start()
    try:
        servers.urls["gs"]       # (upstream, proxy)
        len(servers.log("gs"))   # requests through the proxy since the last clear
    finally:
        servers.stop()
"""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

__all__ = ["STORES", "StoresProcess"]

STORES = ("s3", "gs", "az")
ROOT = Path(__file__).resolve().parents[1]


def _start_gcs() -> tuple[Any, Any, str]:
    from helpers.gcs_front import GcsFront

    child = subprocess.Popen([sys.executable, str(ROOT / "tests" / "helpers" / "gcs_front.py")],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()
    if not line.startswith("PORT "):
        raise RuntimeError(f"gcp-storage-emulator did not start: {line!r}")
    front = GcsFront(f"http://127.0.0.1:{int(line.split()[1])}", cache=True).start()
    return child, front, front.url


def _start_azurite(workdir: Path) -> tuple[Any, str]:
    from helpers.store_fixtures import start_azurite

    started = start_azurite(workdir)
    if started is None:
        raise RuntimeError("Azurite is not available (needs Node and npm)")
    return started


def _serve(conn: Connection, latency: float, workdir: str) -> None:
    """The child: the stores and their proxies, and a loop answering the parent."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from helpers.s3proxy import S3Proxy
    from s3_server import start_moto_and_proxy

    moto, s3_proxy = start_moto_and_proxy(latency)
    gcs_child, front, gcs_url = _start_gcs()
    az_child, az_url = _start_azurite(Path(workdir))
    proxies = {"s3": s3_proxy, "gs": S3Proxy(gcs_url, latency=latency).start(),
               "az": S3Proxy(az_url, latency=latency).start()}
    upstreams = {"s3": s3_proxy.upstream, "gs": gcs_url, "az": az_url}
    conn.send({name: (upstreams[name], proxies[name].url) for name in STORES})
    plans: dict[str, Any] = {}
    try:
        while True:
            command, store, *args = conn.recv()
            if command == "faults":  # (rate, seed, burst seconds): a FaultPlan, or none
                plans[store] = _fault_plan(proxies[store], *args)
                conn.send(None)
            elif command == "injected":
                plan = plans.get(store)
                conn.send(dict(plan.injected) if plan is not None else {})
            elif command == "log":
                conn.send([(r.method, r.target, r.start, r.end) for r in
                           list(proxies[store].log)])
            elif command == "clear":
                proxies[store].log.clear()
                conn.send(None)
            else:  # "stop"
                break
    finally:
        for proxy in proxies.values():
            proxy.stop()
        moto.stop()
        front.stop()
        assert gcs_child.stdin is not None
        gcs_child.stdin.close()
        gcs_child.wait(timeout=30)
        from helpers.store_fixtures import stop_azurite
        stop_azurite(az_child)
        conn.send(None)


def _fault_plan(proxy: Any, rate: float, seed: int, burst: float) -> Any:
    """Replace ``proxy``'s rules with a seeded :class:`FaultPlan` (none when both are 0)."""
    import time

    from helpers.s3proxy import FaultPlan

    proxy.rules.clear()
    if not rate and not burst:
        return None
    until = time.monotonic() + burst
    plan = FaultPlan(rate, seed, burst=lambda: time.monotonic() < until)
    proxy.rules.append(plan)
    return plan


class StoresProcess:
    """The stores and proxies in a child process (see the module docstring).

    Args:
        latency: seconds each proxy adds before forwarding a request.
        workdir: a folder for Azurite's log.
    """

    def __init__(self, latency: float, workdir: Path) -> None:
        self.latency = latency
        self.workdir = workdir
        self.urls: dict[str, tuple[str, str]] = {}
        self._conn: Connection | None = None
        self._process: Any = None
        self._lock = threading.Lock()

    def start(self) -> StoresProcess:
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(target=_serve, name="stores-server", daemon=True,
                                        args=(child, self.latency, str(self.workdir)))
        self._process.start()
        self._conn = parent
        self.urls = parent.recv()
        return self

    def _call(self, command: str, store: str = "", *args: Any) -> Any:
        assert self._conn is not None, "the server process is not running"
        with self._lock:
            self._conn.send((command, store, *args))
            return self._conn.recv()

    def faults(self, store: str, rate: float, seed: int = 0, burst: float = 0.0) -> None:
        """Fault a seeded share ``rate`` of ``store``'s requests (the kinds of
        :class:`helpers.s3proxy.FaultPlan`), and all of them for ``burst`` seconds from now
        (503s); ``faults(store, 0)`` stops."""
        self._call("faults", store, rate, seed, burst)

    def injected(self, store: str) -> dict[str, int]:
        """The faults injected into ``store``'s requests since the last :meth:`faults`."""
        found: dict[str, int] = self._call("injected", store)
        return found

    def log(self, store: str) -> list[tuple[str, str, float, float]]:
        """(method, target, start, end) of every request through ``store``'s proxy."""
        records: list[tuple[str, str, float, float]] = self._call("log", store)
        return records

    def clear(self, store: str) -> None:
        self._call("clear", store)

    def stop(self) -> None:
        if self._conn is None:
            return
        try:
            self._call("stop")
        finally:
            self._conn.close()
            self._conn = None
            self._process.join(timeout=60)
            if self._process.is_alive():
                self._process.terminate()
