"""Run the sink's memory workload in this process and print what it measured (JSON).

2 streams x 4 partition folders (8 open files; ``--keys`` folders) of poorly compressible
rows (random bytes)
through :class:`aorc.sink.RollingSink`; the peak RSS growth is the process's peak RSS
(``VmHWM``) minus its RSS just before the sink starts. Run by
``tests/sink/test_sink_streaming.py`` in a subprocess (so the test process's own memory does not
count) and usable by hand::

    python tests/helpers/sink_memory_run.py --rows 4000000 --prefix /tmp/out
    python tests/helpers/sink_memory_run.py --rows 4000000 --prefix s3://bucket/out \\
        --endpoint http://127.0.0.1:5000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
from typing import Any

import numpy as np
import pyarrow as pa

from aorc import write_table
from aorc.sink import RollingSink, SinkCommit

MiB = 1 << 20
BATCH = 20_000
PAYLOAD = 96


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def peak_rss_bytes() -> int:
    """This process's peak RSS: ``VmHWM`` of its memory map. (Not ``ru_maxrss``: Linux
    carries the parent's peak over ``execve``, so a child of a big test process would report
    the parent's.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def make_batch(k: int, start: int, keys: int = 4) -> pa.RecordBatch:
    """Batch ``k`` of a stream (deterministic): offsets from ``start``, ``keys`` partition
    values."""
    rng = np.random.default_rng([7, k])
    payload = np.frombuffer(rng.bytes(PAYLOAD * BATCH), dtype=f"S{PAYLOAD}")
    return pa.record_batch({
        "offset": pa.array(np.arange(start, start + BATCH, dtype=np.int64)),
        "key": pa.array(rng.integers(0, keys, BATCH).astype(np.int16)),
        "value": pa.array(rng.random(BATCH)),
        "payload": pa.array(payload.tolist(), pa.binary()),
    })


async def run(args: argparse.Namespace) -> dict[str, Any]:
    commits: list[SinkCommit] = []

    async def on_commit(c: SinkCommit) -> None:
        commits.append(c)

    options: dict[str, Any] = {"fsync": False} if not args.prefix.startswith("s3://") else {
        "endpoint_url": args.endpoint} if args.endpoint else {}
    first = make_batch(0, 0, args.keys)
    # Warm up what any writer loads once (encoders, the S3 client's service model), so that
    # the growth measured is the sink's.
    warmup = args.prefix.rstrip("/") + "-warmup"
    if not warmup.startswith("s3://"):
        os.makedirs(warmup, exist_ok=True)
    await write_table(first.slice(0, 1000), warmup + "/x.orc", storage_options=options)
    sink = RollingSink(args.prefix, first.schema, partition_by=["key"],
                       memory_budget=args.budget * MiB, max_bytes=args.max_bytes * MiB,
                       compression="zstd", storage_options=options, on_commit=on_commit,
                       buffer=args.buffer, spool_dir=args.spool_dir, max_age=None)
    base = rss_bytes()
    written = [0, 0]
    async with sink:
        for k in range(args.rows // BATCH):
            stream = k % 2
            batch = first if k == 0 else make_batch(k, written[stream], args.keys)
            await sink.write(batch, topic="t", partition=stream, offsets=written[stream])
            written[stream] += BATCH
    files = [f for c in commits for f in c.files]
    by_bytes = [f.num_bytes for c in commits if c.reason == "bytes" for f in c.files]
    return {
        "rows": args.rows, "budget": args.budget * MiB, "max_bytes": args.max_bytes * MiB,
        "rows_written": sum(f.num_rows for f in files), "files": len(files),
        "file_sizes": sorted(f.num_bytes for f in files),
        "median_file": statistics.median(f.num_bytes for f in files),
        "bytes_cut_files": sorted(by_bytes),
        "cuts": sink.stats.cuts, "peak_memory": sink.stats.peak_memory,
        "peak_open_files": sink.stats.peak_open_files,
        "stripes_shrunk": sink.stats.stripes_shrunk,
        "files_cut_for_memory": sink.stats.files_cut_for_memory,
        "peak_spool_bytes": sink.stats.peak_spool_bytes,
        "files_at_max_bytes": len(by_bytes),
        "base_rss": base, "peak_rss_growth": peak_rss_bytes() - base,
        "uris": [f.uri for f in files],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--endpoint", default=None)
    parser.add_argument("--budget", type=int, default=64, help="memory_budget in MiB")
    parser.add_argument("--max-bytes", type=int, default=24, help="max_bytes in MiB")
    parser.add_argument("--keys", type=int, default=4, help="partition values")
    parser.add_argument("--buffer", default=None, help="the sink's buffer= (disk, memory)")
    parser.add_argument("--spool-dir", default=None)
    args = parser.parse_args(argv)
    json.dump(asyncio.run(run(args)), sys.stdout)


if __name__ == "__main__":
    main()
