"""Sink benchmark: RollingSink against a plain write of the same rows, side by side.

The events table (:func:`bench_read.build_table`, 2M rows) gets a ``part`` column
(``small_int / 250``, 4 values) and is cut into batches of ``--batch`` rows, given in turn to
``--streams`` streams (as a consumer of that many Kafka partitions would). ``RollingSink``
writes them to a local folder, partitioned by ``part``: ``streams x 4`` files, cut by nothing
but the close unless ``--max-bytes`` is given (then stripes are encoded while rows arrive).
The same table is written as one file by ``aorc.write_table`` and by
``pyarrow.orc.write_table`` (zstd level 1 everywhere, as pyarrow.orc's default). Each figure
is the median of ``--repeat`` runs; the script prints the wall times, the ratios to
pyarrow.orc, and the CPU time of the event loop's thread during the sink's run (what a
service's other coroutines wait for: routing is on a worker thread, row grouping and copying
on the loop).

With ``--open-files N`` it measures memory instead: 2 streams x N/2 partition values
(``tests/helpers/sink_memory_run.py``, poorly compressible rows, batches of 20,000) written to
a moto S3 server (a subprocess) with ``buffer="memory"`` and ``buffer="disk"`` side by side,
each in a fresh child process: the peak RSS growth against ``memory_budget + 100 MiB``, the
files cut for memory, the stripes shrunk, the files that reached ``max_bytes`` and the spool's
peak; the figures are the best and the median of ``--repeat`` runs.

Usage::

    python benchmarks/bench_sink.py [--rows N] [--streams S] [--batch B] [--repeat R]
                                    [--max-bytes N]
    python benchmarks/bench_sink.py --open-files 1000 [--rows 4000000] [--budget 256]
                                    [--max-bytes 24] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_tables import build_table  # noqa: E402

import aorc  # noqa: E402
from aorc.sink.rolling import RollingSink  # noqa: E402


async def sink_once(table: pa.Table, out: Path, streams: int, batch: int,
                    max_bytes: int | None = None) -> float:
    """Write ``table`` through a RollingSink; the event loop thread's CPU seconds."""
    shutil.rmtree(out, ignore_errors=True)
    loop_cpu = time.thread_time()
    async with RollingSink(out, table.schema, partition_by=["part"], max_bytes=max_bytes,
                           max_rows=None, max_age=None, compression="zstd",
                           compression_level=1) as sink:
        for i, b in enumerate(table.to_batches(max_chunksize=batch)):
            await sink.write(b, topic="bench", partition=i % streams,
                             offsets=(i // streams) * batch)
    return time.thread_time() - loop_cpu


async def main_async(args: argparse.Namespace) -> None:
    table = build_table(args.rows)
    table = table.append_column("part", pc.cast(pc.divide(table["small_int"], 250), pa.int64()))
    folder = Path(tempfile.mkdtemp(prefix="aorc-bench-sink-"))
    times: dict[str, list[float]] = {"sink": [], "aorc": [], "pyarrow": []}
    loop_cpu: list[float] = []
    try:
        await sink_once(table, folder / "warm", args.streams, args.batch, args.max_bytes)
        for _ in range(args.repeat):
            start = time.perf_counter()
            loop_cpu.append(await sink_once(table, folder / "sink", args.streams, args.batch,
                                            args.max_bytes))
            times["sink"].append(time.perf_counter() - start)
            start = time.perf_counter()
            await aorc.write_table(table, folder / "aorc.orc", compression="zstd",
                                   compression_level=1)
            times["aorc"].append(time.perf_counter() - start)
            start = time.perf_counter()
            pa_orc.write_table(table, str(folder / "pyarrow.orc"), compression="zstd")
            times["pyarrow"].append(time.perf_counter() - start)
        files = sorted((folder / "sink").rglob("*.orc"))
        rows = sum(pa_orc.ORCFile(str(f)).nrows for f in files)
        assert rows == table.num_rows, (rows, table.num_rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    median = {k: statistics.median(v) for k, v in times.items()}
    print(f"{args.rows:,} rows, {args.streams} streams, batches of {args.batch:,} rows, "
          f"{len(files)} sink files; median of {args.repeat}")
    for name in ("sink", "aorc", "pyarrow"):
        print(f"  {name:8s} {median[name]:.3f} s  ({median[name] / median['pyarrow']:.2f}x "
              f"pyarrow.orc)")
    print(f"  sink / aorc.write_table: {median['sink'] / median['aorc']:.2f}; event loop "
          f"thread during the sink: {statistics.median(loop_cpu):.3f} s CPU")


def open_files_run(args: argparse.Namespace) -> None:
    """The memory of ``--open-files`` files on moto's S3, buffer="memory" vs "disk"."""
    import boto3
    from helpers.sink_stream import moto_subprocess

    root = HERE.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "tests")]),
           "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1"}
    results: dict[str, list[dict[str, Any]]] = {"memory": [], "disk": []}
    with moto_subprocess() as endpoint:
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                          aws_secret_access_key="testing", region_name="us-east-1")
        s3.create_bucket(Bucket="bench-sink")
        for run in range(args.repeat):
            for buffer in results:
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, str(root / "tests" / "helpers" / "sink_memory_run.py"),
                     "--rows", str(args.rows), "--prefix", f"s3://bench-sink/{buffer}{run}",
                     "--endpoint", endpoint, "--budget", str(args.budget),
                     "--max-bytes", str(args.max_bytes or 24), "--keys",
                     str(args.open_files // 2), "--buffer", buffer],
                    capture_output=True, text=True, env=env, check=True)
                result = json.loads(done.stdout)
                result["seconds"] = time.perf_counter() - start
                results[buffer].append(result)
    budget = args.budget << 20
    print(f"{args.rows:,} rows, 2 streams x {args.open_files // 2} partition values on moto "
          f"S3, memory_budget {args.budget} MiB, max_bytes {args.max_bytes or 24} MiB; best / "
          f"median of {args.repeat}")
    for buffer, runs in results.items():
        growth = sorted(int(r["peak_rss_growth"]) >> 20 for r in runs)
        first = runs[0]
        print(f"  buffer={buffer:6s} RSS growth {growth[0]} / {statistics.median(growth):.0f} "
              f"MiB (promise {(budget >> 20) + 100} MiB); open files {first['peak_open_files']}; "
              f"files {first['files']}, cut for memory {first['files_cut_for_memory']}, "
              f"at max_bytes {first['files_at_max_bytes']}; stripes shrunk "
              f"{first['stripes_shrunk']}; peak spool {int(first['peak_spool_bytes']) >> 20} "
              f"MiB; peak_memory {int(first['peak_memory']) >> 20} MiB; "
              f"{statistics.median(float(r['seconds']) for r in runs):.1f} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-bytes", type=int, default=None,
                        help="the sink's max_bytes (default: none, files are cut by the close "
                             "only; the stripe target is then 64 MiB, else a sixteenth of it)")
    parser.add_argument("--open-files", type=int, default=None,
                        help="measure memory with this many open files on moto S3 instead")
    parser.add_argument("--budget", type=int, default=256, help="memory_budget in MiB "
                        "(--open-files)")
    args = parser.parse_args(argv)
    if args.open_files:
        if args.max_bytes:
            args.max_bytes >>= 20  # (given in bytes like the other mode)
        open_files_run(args)
        return
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
