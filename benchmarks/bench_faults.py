"""Store faults (issue 34): the share of reads and writes that succeed, and their slowdown
against the fault-free run, when a seeded share of the requests fail; and how long a write
waits through a burst of 100% 503s.

Every store sits behind the test proxy (``tests/helpers/s3proxy.py``), whose
:class:`FaultPlan` injects, into a seeded share of the requests, the fault kinds of the
issue: 503 SlowDown, 500 InternalError, a connection closed before the store sees the
request, an answer lost after the request took effect, a GET body cut in half. The stores:
moto's S3, the GCS emulator behind its front, Azurite (``stores_server.py``, a child
process), and the HTTP test file server (reads only, in this process).

For each store and each fault rate (0, 1%, 10%, 30%): ``--reads`` whole reads of one ORC
file (each checked equal to the file) and ``--writes`` multipart writes (object stores), with
aorc's default retry settings; the table gives the share that succeeded and the time against
the fault-free run. Then one multipart write per object store starts as a 5-second burst of
100% 503s begins: the time it took, and whether it succeeded.

Usage::

    python benchmarks/bench_faults.py [--reads 10] [--writes 4] [--rates 0.01,0.1,0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stores import BUCKET, KEY, aorc_options, upload  # noqa: E402
from stores_server import StoresProcess  # noqa: E402

import aorc  # noqa: E402

WRITABLE = ("s3", "gs", "az")
#: Part sizes: S3's smallest; 1 MiB for GCS and Azure.
PART_SIZE = {"s3": 5 << 20, "gs": 1 << 20, "az": 1 << 20}


def make_table(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({"id": np.arange(rows, dtype=np.int64),
                     "v": rng.integers(0, 1 << 62, rows, dtype=np.int64)})


def orc_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pa_orc.write_table(table, sink, stripe_size=1 << 20, compression="uncompressed")
    return sink.getvalue()


class HttpFaults:
    """The HTTP file server and a proxy with a :class:`FaultPlan`, in this process."""

    def __init__(self, data: bytes) -> None:
        from helpers.http_server import HttpFile, HttpFiles
        from helpers.s3proxy import S3Proxy

        self.files = HttpFiles().start()
        self.files.files[f"/{KEY}"] = HttpFile(data)
        self.proxy = S3Proxy(self.files.url).start()
        self.plan: Any = None

    def faults(self, rate: float, seed: int) -> None:
        from helpers.s3proxy import FaultPlan

        self.proxy.rules.clear()
        self.plan = FaultPlan(rate, seed) if rate else None
        if self.plan is not None:
            self.proxy.rules.append(self.plan)

    def stop(self) -> None:
        self.proxy.stop()
        self.files.stop()


async def timed_reads(url: str, options: dict[str, Any], expected: pa.Table,
                      count: int) -> tuple[int, float]:
    """(successes, seconds) of ``count`` whole reads, one after another."""
    ok = 0
    start = time.perf_counter()
    for _ in range(count):
        try:
            got = await aorc.read_table(url, storage_options=options)
        except aorc.AorcError:
            continue
        ok += got.equals(expected)
    return ok, time.perf_counter() - start


async def timed_writes(store: str, options: dict[str, Any], table: pa.Table, count: int,
                       tag: str) -> tuple[int, float]:
    ok = 0
    start = time.perf_counter()
    for i in range(count):
        url = f"{_root(store)}/faults/{tag}-{i}.orc"
        try:
            await aorc.write_table(table, url, storage_options=options, compression="none")
        except aorc.AorcError:
            continue
        ok += 1
    return ok, time.perf_counter() - start


def _root(store: str) -> str:
    return {"s3": f"s3://{BUCKET}", "gs": f"gs://{BUCKET}", "az": f"az://{BUCKET}"}[store]


async def run(args: argparse.Namespace, servers: StoresProcess, http: HttpFaults,
              expected: pa.Table, big: dict[str, pa.Table]) -> list[dict[str, Any]]:
    rows = []
    rates = [0.0, *args.rates]
    for store in (*WRITABLE, "http"):
        if store == "http":
            url, options = f"{http.proxy.url}/{KEY}", {}
        else:
            url, options = f"{_root(store)}/{KEY}", aorc_options(store, servers.urls)
        base: dict[str, float] = {}
        await timed_reads(url, options, expected, 2)  # warm-up: clients, server caches
        if store != "http":
            await timed_writes(store, {**options, "part_size": PART_SIZE[store]},
                               big[store], 1, "warm")
        for rate in rates:
            seed = int(rate * 1000) + 34
            if store == "http":
                http.faults(rate, seed)
            else:
                servers.faults(store, rate, seed)
            ok, seconds = await timed_reads(url, options, expected, args.reads)
            row = {"store": store, "rate": rate, "reads_ok": ok / args.reads,
                   "read_s": seconds}
            if store != "http":
                woptions = {**options, "part_size": PART_SIZE[store]}
                wok, wseconds = await timed_writes(store, woptions, big[store], args.writes,
                                                   f"r{rate}")
                row.update(writes_ok=wok / args.writes, write_s=wseconds)
                row["injected"] = sum(servers.injected(store).values())
            else:
                row["injected"] = http.plan.total if http.plan is not None else 0
            if rate == 0.0:
                base = {"read_s": seconds, "write_s": row.get("write_s", 0.0)}
            row["read_x"] = seconds / base["read_s"]
            if "write_s" in row:
                row["write_x"] = row["write_s"] / base["write_s"]
            rows.append(row)
            print(_line(row), flush=True)
        if store == "http":
            http.faults(0.0, 0)
        else:
            servers.faults(store, 0.0)
    return rows


async def bursts(servers: StoresProcess, big: dict[str, pa.Table]) -> list[str]:
    out = []
    for store in WRITABLE:
        options = {**aorc_options(store, servers.urls), "part_size": PART_SIZE[store]}
        servers.faults(store, 0.0, burst=5.0)
        start = time.perf_counter()
        try:
            await aorc.write_table(big[store], f"{_root(store)}/faults/burst.orc",
                                   storage_options=options, compression="none")
            result = "succeeded"
        except aorc.AorcError as exc:
            result = f"failed: {type(exc).__name__}"
        seconds = time.perf_counter() - start
        injected = servers.injected(store).get("503", 0)
        servers.faults(store, 0.0)
        out.append(f"| {store} | {seconds:.1f} s | {injected} | {result} |")
        print(out[-1], flush=True)
    return out


def _line(row: dict[str, Any]) -> str:
    writes = (f"{row['writes_ok']:.0%} | {row['write_x']:.2f}x" if "writes_ok" in row
              else "- | -")
    return (f"| {row['store']} | {row['rate']:.0%} | {row['injected']} | "
            f"{row['reads_ok']:.0%} | {row['read_x']:.2f}x | {writes} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reads", type=int, default=10)
    parser.add_argument("--writes", type=int, default=4)
    parser.add_argument("--rates", type=lambda s: [float(x) for x in s.split(",")],
                        default=[0.01, 0.10, 0.30])
    args = parser.parse_args(argv)
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1"})
    expected = make_table(400_000, 1)
    data = orc_bytes(expected)
    expected = pa_orc.ORCFile(pa.BufferReader(data)).read()
    big = {"s3": make_table(1_400_000, 2), "gs": make_table(400_000, 2),
           "az": make_table(400_000, 2)}
    with tempfile.TemporaryDirectory() as workdir:
        servers = StoresProcess(latency=0.0, workdir=Path(workdir)).start()
        http = HttpFaults(data)
        try:
            upload(servers.urls, data, [])
            print(f"file: {len(data) / 1e6:.1f} MB, {args.reads} reads and {args.writes} "
                  f"writes per store and rate")
            print("| store | fault rate | faults injected | reads ok | read time | "
                  "writes ok | write time |")
            print("| --- | --- | --- | --- | --- | --- | --- |")
            asyncio.run(run(args, servers, http, expected, big))
            print("\n| store | 5 s burst of 100% 503s: write took | 503s | result |")
            print("| --- | --- | --- | --- |")
            asyncio.run(bursts(servers, big))
        finally:
            http.stop()
            servers.stop()


if __name__ == "__main__":
    main()
