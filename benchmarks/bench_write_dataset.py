"""write_dataset from a stream far larger than its budget: peak memory and time.

Each run is a child process (a fresh interpreter, so peaks do not mix) that writes a
generated stream of ``--rows`` rows (default 10M) x 6 numeric columns (48 bytes a row:
480 MB of Arrow data for 10M rows), made batch by batch (65,536 rows) by a seeded
generator, into ``--keys`` Hive partitions (default 24) of a local folder:

- aorc: ``aorc.write_dataset(generator, out, partition_cols=["k"], max_memory=BUDGET)`` for
  each ``--budget`` (MiB; default 64 and 256);
- pyarrow: ``pyarrow.dataset.write_dataset(RecordBatchReader.from_batches(...), out,
  format=..., partitioning=["k"], partitioning_flavor="hive")`` from the same generator.
  pyarrow.dataset cannot write ORC (``NotImplementedError``: "Writing datasets not yet
  implemented for this file format"), so the peer writes Parquet (its default zstd-less
  snappy; aorc writes zstd ORC) -- the nearest like-for-like.

The child reports its wall time for the call, its peak resident memory (``VmHWM``) and the
growth of that peak over what it held before the call (after a small warm-up write, so
that modules and thread pools loaded once are not counted), and the files written; the
rows are counted back with pyarrow.dataset. Prints the best and median of ``--repeat``
runs and the ratios aorc / pyarrow; the target is a peak within the budget + 100 MiB.

Usage::

    python benchmarks/bench_write_dataset.py [--rows 10000000] [--keys 24]
                                             [--budget 64 256] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MiB = 1 << 20

CHILD = r"""
import asyncio, json, sys, time
import numpy as np
import pyarrow as pa

def hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

ROWS, KEYS, BATCH = int(sys.argv[3]), int(sys.argv[4]), 65_536
SCHEMA = pa.schema([("k", pa.int64()), ("a", pa.int64()), ("b", pa.float64()),
                    ("c", pa.int64()), ("d", pa.float64()), ("e", pa.int64())])

def source(rows=ROWS):
    rng = np.random.default_rng(22)
    for start in range(0, rows, BATCH):
        n = min(BATCH, rows - start)
        yield pa.record_batch([
            rng.integers(0, KEYS, n), np.arange(start, start + n), rng.random(n),
            rng.integers(0, 1 << 40, n), rng.normal(size=n), rng.integers(0, 1000, n)],
            schema=SCHEMA)

def main(who, out, budget):
    if who == "aorc":
        import aorc
        import aorc.dataset.write as wd
        asyncio.run(aorc.write_dataset(source(1000), out + "-warm", partition_cols=["k"]))
        base = hwm()
        t0 = time.perf_counter()
        written = asyncio.run(aorc.write_dataset(source(), out, partition_cols=["k"],
                                                 max_memory=budget))
        seconds = time.perf_counter() - t0
        extra = {"files": len(written), "closes": wd._LAST_STATS[0].closes}
    else:
        import pyarrow.dataset as ds
        def write(rows, target):
            ds.write_dataset(pa.RecordBatchReader.from_batches(SCHEMA, source(rows)), target,
                             format="parquet", partitioning=["k"],
                             partitioning_flavor="hive")
        write(1000, out + "-warm")
        base = hwm()
        t0 = time.perf_counter()
        write(ROWS, out)
        seconds = time.perf_counter() - t0
        extra = {}
    print(json.dumps({"seconds": seconds, "hwm": hwm(), "growth": hwm() - base, **extra}))

main(sys.argv[1], sys.argv[2], int(sys.argv[5]))
"""


def run(who: str, rows: int, keys: int, budget: int) -> dict[str, object]:
    import pyarrow.dataset as ds

    with tempfile.TemporaryDirectory(prefix="bench-wds-") as tmp:
        out = os.path.join(tmp, "out")
        result = subprocess.run(
            [sys.executable, "-c", CHILD, who, out, str(rows), str(keys), str(budget)],
            cwd=REPO, capture_output=True, text=True, check=True, timeout=3600,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        report: dict[str, object] = json.loads(result.stdout)
        fmt = "orc" if who == "aorc" else "parquet"
        counted = ds.dataset(out, format=fmt, partitioning="hive").count_rows()
        assert counted == rows, (who, counted, rows)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--keys", type=int, default=24)
    parser.add_argument("--budget", type=int, nargs="+", default=[64, 256], help="MiB")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print(f"# {platform.python_version()}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.1f}; {args.rows:,} rows x 6 columns "
          f"({args.rows * 48 / MiB:.0f} MiB of Arrow), {args.keys} partitions")
    runs: dict[str, list[dict[str, object]]] = {}
    for _ in range(args.repeat):  # peers side by side in each round
        for budget in args.budget:
            runs.setdefault(f"aorc {budget} MiB", []).append(
                run("aorc", args.rows, args.keys, budget * MiB))
        runs.setdefault("pyarrow parquet", []).append(run("pyarrow", args.rows, args.keys, 0))
    peer = runs["pyarrow parquet"]
    peer_best = min(float(r["seconds"]) for r in peer)  # type: ignore[arg-type]
    peer_median = statistics.median(float(r["seconds"]) for r in peer)  # type: ignore[arg-type]
    print(f"{'writer':<18} {'best s':>7} {'median s':>9} {'x pyarrow':>10} "
          f"{'peak MiB':>9} {'growth MiB':>11} {'budget+100':>11} files / closes")
    for name, reports in runs.items():
        times = [float(r["seconds"]) for r in reports]  # type: ignore[arg-type]
        peak = max(int(r["hwm"]) for r in reports) // MiB  # type: ignore[call-overload]
        growth = max(int(r["growth"]) for r in reports) // MiB  # type: ignore[call-overload]
        budget = name.split()[1] if name.startswith("aorc") else ""
        bound = f"{int(budget) + 100}" if budget else "-"
        files = (f"{reports[0].get('files')} / {reports[0].get('closes')}"
                 if "files" in reports[0] else "")
        print(f"{name:<18} {min(times):7.2f} {statistics.median(times):9.2f} "
              f"{min(times) / peer_best:5.2f}/{statistics.median(times) / peer_median:4.2f} "
              f"{peak:9d} {growth:11d} {bound:>11} {files}")


if __name__ == "__main__":
    main()
