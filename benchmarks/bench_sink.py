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

Usage::

    python benchmarks/bench_sink.py [--rows N] [--streams S] [--batch B] [--repeat R]
                                    [--max-bytes N]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as pa_orc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_read import build_table  # noqa: E402

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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--batch", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-bytes", type=int, default=None,
                        help="the sink's max_bytes (default: none, files are cut by the close "
                             "only; the stripe target is then 64 MiB, else a sixteenth of it)")
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
