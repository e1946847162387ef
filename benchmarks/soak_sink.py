"""Soak test of RollingSink: 8 streams for N minutes on S3 with faults.

A moto S3 server (a subprocess) behind the test proxy (``tests/helpers/s3proxy.py``), which
answers about 2% of the requests each with 503 SlowDown, with 500 InternalError, with a reset
connection (closed without an answer) and slowly (0.2-1.5 s late). 8 streams (Kafka-like
partitions, 3 region folders and hourly folders each) are written at a steady rate through one
sink; commits are recorded. Then the sink is closed and the run checked:

- every record is in exactly one complete file (all objects read back with aorc), and the
  last commit of each stream covers its last record;
- no multipart upload is left pending;
- the process's RSS is flat over the second half: the median RSS of the last tenth of the run
  is within 5% of that of the tenth after the midpoint.

Usage (from a checkout)::

    python benchmarks/soak_sink.py                 # 10 minutes
    python benchmarks/soak_sink.py --minutes 1     # CI

Prints a JSON summary; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import statistics
import sys
import threading
import time
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from helpers.s3proxy import Delay, Fault, ProxyRequest, S3Proxy  # noqa: E402
from helpers.sink_stream import list_objects, moto_subprocess, pending_uploads  # noqa: E402

import aorc  # noqa: E402
from aorc.sink import RollingSink, SinkCommit  # noqa: E402

MiB = 1 << 20
STREAMS = 8
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
               "region": "us-east-1"}
BASE_TIME = np.datetime64("2026-11-22T06:00:00", "ms")


class Reset:
    """Close the client's connection without an answer."""


class FaultyProxy(S3Proxy):
    """The test proxy, plus connection resets."""

    async def _serve(self, request: ProxyRequest, upstream: Any) -> bytes:
        for rule in list(self.rules):
            if isinstance(rule(request), Reset):
                raise ConnectionResetError("reset by the soak proxy")
        return await super()._serve(request, upstream)


class FaultPlan:
    """Decides each request's fate with a seeded generator; counts what it injected."""

    def __init__(self, seed: int, share: float) -> None:
        self.rng = np.random.default_rng(seed)
        self.share = share
        self.counts = {"slowdown": 0, "500": 0, "reset": 0, "slow": 0, "requests": 0}
        self.lock = threading.Lock()
        self._pending: dict[int, Any] = {}

    def __call__(self, request: ProxyRequest) -> Fault | Delay | Reset | None:
        key = id(request)
        if key in self._pending:  # (FaultyProxy asks first for resets, then S3Proxy)
            return self._pending.pop(key)
        with self.lock:
            self.counts["requests"] += 1
            r = float(self.rng.random())
            s = self.share
            action: Fault | Delay | Reset | None = None
            if r < s:
                self.counts["slowdown"] += 1
                action = Fault(503, "SlowDown")
            elif r < 2 * s:
                self.counts["500"] += 1
                action = Fault(500, "InternalError")
            elif r < 3 * s:
                self.counts["reset"] += 1
                return Reset()
            elif r < 4 * s:
                self.counts["slow"] += 1
                action = Delay(0.2 + 1.3 * float(self.rng.random()))
        self._pending[key] = action
        return None if isinstance(action, (Fault, Delay)) else action


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def make_batch(stream: int, start: int, n: int, seed: int) -> pa.RecordBatch:
    rng = np.random.default_rng([seed, stream, start])
    ts = BASE_TIME + ((start + np.arange(n)) * 50).astype("timedelta64[ms]")
    return pa.record_batch({
        "offset": pa.array(np.arange(start, start + n, dtype=np.int64)),
        "ts": pa.array(ts),
        "region": pa.array(np.array(["eu", "us", "ap"])[rng.integers(0, 3, n)]),
        "amount": pa.array(np.round(rng.random(n) * 100, 2)),
        "payload": pa.array(np.frombuffer(rng.bytes(40 * n), "S40").tolist(), pa.binary()),
    })


async def produce(sink: RollingSink, args: argparse.Namespace, written: list[int],
                  rss: list[tuple[float, int]]) -> None:
    """Write batches round robin at ``args.rate`` rows per second for ``args.minutes``."""
    start = time.monotonic()
    deadline = start + 60 * args.minutes
    rows = 0
    k = 0
    next_sample = start
    while time.monotonic() < deadline:
        stream = k % STREAMS
        batch = make_batch(stream, written[stream], args.batch, args.seed)
        await sink.write(batch, topic="soak", partition=stream, offsets=written[stream])
        written[stream] += args.batch
        rows += args.batch
        k += 1
        now = time.monotonic()
        if now >= next_sample:
            rss.append((now - start, rss_bytes()))
            next_sample = now + 1.0
        ahead = start + rows / args.rate - now
        if ahead > 0:
            await asyncio.sleep(ahead)


async def run(args: argparse.Namespace, endpoint: str, proxy: S3Proxy) -> dict[str, Any]:
    commits: dict[int, int] = {}

    async def on_commit(c: SinkCommit) -> None:
        assert c.offset > commits.get(c.partition, -1)
        commits[c.partition] = c.offset

    options = {"endpoint_url": proxy.url, "max_attempts": 10, **CREDENTIALS}
    written = [0] * STREAMS
    rss: list[tuple[float, int]] = []
    sink = RollingSink(f"s3://{args.bucket}/soak", make_batch(0, 0, 1, 0).schema,
                       partition_by=["region"], event_time="ts", max_bytes=args.max_bytes * MiB,
                       max_age=args.max_age, memory_budget=args.budget * MiB,
                       compression="zstd", storage_options=options, on_commit=on_commit)
    began = time.monotonic()
    async with sink:
        await produce(sink, args, written, rss)
    elapsed = time.monotonic() - began
    return {"written": written, "commits": commits, "rss": rss, "elapsed": elapsed,
            "stats": sink.stats}


async def verify(bucket: str, keys: list[str], endpoint: str, written: list[int]
                 ) -> dict[str, Any]:
    """Read every object back; check each stream's offsets are 0..n-1, each once."""
    options = {"endpoint_url": endpoint, **CREDENTIALS}
    seen: dict[int, list[np.ndarray]] = {s: [] for s in range(STREAMS)}
    for key in keys:
        name = key.rsplit("/", 1)[-1]
        stream = int(name.split("+")[1])
        table = await aorc.read_table(f"s3://{bucket}/{key}", columns=["offset"],
                                      storage_options=options)
        seen[stream].append(table.column("offset").to_numpy())
    problems = []
    for s in range(STREAMS):
        got = np.sort(np.concatenate(seen[s])) if seen[s] else np.zeros(0, np.int64)
        if len(got) != written[s] or not np.array_equal(got, np.arange(written[s])):
            dup = len(got) - len(np.unique(got))
            problems.append(f"stream {s}: {len(got)} rows for {written[s]}, {dup} duplicates")
    return {"problems": problems, "rows_read": sum(len(x) for v in seen.values() for x in v)}


def rss_growth(rss: list[tuple[float, int]]) -> tuple[float, int, int]:
    """(growth, median of the tenth after the midpoint, median of the last tenth)."""
    total = rss[-1][0]
    early = [v for t, v in rss if total / 2 <= t < total * 0.6]
    late = [v for t, v in rss if t >= total * 0.9]
    a, b = int(statistics.median(early)), int(statistics.median(late))
    return (b - a) / a, a, b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--rate", type=int, default=40_000, help="rows per second")
    parser.add_argument("--batch", type=int, default=2_000, help="rows per write")
    parser.add_argument("--fault-share", type=float, default=0.02,
                        help="share of requests for each kind of fault")
    parser.add_argument("--max-bytes", type=int, default=4, help="MiB")
    parser.add_argument("--max-age", type=float, default=5.0, help="seconds")
    parser.add_argument("--budget", type=int, default=96, help="memory_budget in MiB")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--bucket", default="soak-bucket")
    args = parser.parse_args()
    import boto3

    with moto_subprocess() as endpoint:
        plan = FaultPlan(args.seed, args.fault_share)
        proxy = FaultyProxy(endpoint, rules=[plan]).start()
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="testing", aws_secret_access_key="testing")
        try:
            client.create_bucket(Bucket=args.bucket)
            out = asyncio.run(run(args, endpoint, proxy))
            keys = list_objects(client, args.bucket, "soak/")
            pending = pending_uploads(client, args.bucket)
            checked = asyncio.run(verify(args.bucket, keys, endpoint, out["written"]))
        finally:
            client.close()
            proxy.stop()
    growth, mid, end = rss_growth(out["rss"])
    stats = out["stats"]
    last = {s: n - 1 for s, n in enumerate(out["written"])}
    summary = {
        "minutes": args.minutes, "elapsed_s": round(out["elapsed"], 1),
        "rows": sum(out["written"]), "rows_read": checked["rows_read"],
        "rows_per_s": round(sum(out["written"]) / out["elapsed"]),
        "files": len(keys), "bytes_written": stats.bytes_written,
        "cuts": stats.cuts, "commits": stats.commits,
        "peak_memory_mib": round(stats.peak_memory / MiB, 1),
        "faults": plan.counts, "pending_uploads": len(pending),
        "rss_mid_mib": round(mid / MiB, 1), "rss_end_mib": round(end / MiB, 1),
        "rss_growth_second_half": round(growth, 4),
        "exactly_once": not checked["problems"], "problems": checked["problems"],
        "last_commits_cover_all": out["commits"] == last,
    }
    ok = (not checked["problems"] and not pending and growth < 0.05
          and summary["last_commits_cover_all"])
    summary["ok"] = ok
    print(json.dumps(summary, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
