"""Compaction benchmark: ``aorc.compact`` merging many small files by stripe copy, against
the same compaction re-encoding every row (read and written again), on local disk.

Writes ``--files`` ORC files of about ``--file-mib`` MiB each (aorc's writer, zstd, events-like
columns) into ``--partitions`` Hive folders, then compacts a fresh copy of the folder twice
per repeat: once as ``aorc.compact`` does it (the files agree, so stripes are copied), once
with the stripe copy refused (``aorc.dataset.compaction.merge_files`` patched to raise, as it does
for files that disagree), so the re-encoding path runs on the same bins. Checks that
pyarrow.dataset (ORC C++) reads the same rows before and after each, and prints the time,
the input MB/s and the files before and after, best of ``--repeat`` (median).

Usage::

    python benchmarks/bench_compact.py [--files 1000] [--file-mib 1] [--partitions 4]
                                       [--target-mib 128] [--repeat 3]
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
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads

import aorc
import aorc.dataset.compaction as compaction
from aorc.errors import UnsupportedFeatureError

ROWS_PER_MIB = 37_000  # events-like rows per MiB of zstd ORC, measured


def _events(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "id": pa.array(rng.integers(0, 2**62, rows)),
        "ts": pa.array(rng.integers(1.7e15, 1.8e15, rows).astype("datetime64[us]")),
        "user": pa.array([f"user-{v}" for v in rng.integers(0, 100_000, rows)]),
        "amount": pa.array(rng.standard_normal(rows) * 100),
        "status": pa.array(rng.choice(["ok", "failed", "pending"], rows)),
        "score": pa.array(rng.integers(0, 1000, rows, dtype=np.int32)),
    })


async def _write_inputs(root: Path, files: int, file_mib: float, partitions: int) -> None:
    rows = max(1, int(ROWS_PER_MIB * file_mib))
    sem = asyncio.Semaphore(8)

    async def one(i: int) -> None:
        async with sem:
            folder = root / f"part={i % partitions}"
            folder.mkdir(parents=True, exist_ok=True)
            await aorc.write_table(_events(rows, i), folder / f"f{i:05d}.orc")

    await asyncio.gather(*(one(i) for i in range(files)))


def _rows(root: Path) -> pa.Table:
    table = pads.dataset(root, format="orc", partitioning="hive").to_table()
    return table.sort_by([("id", "ascending"), ("score", "ascending")])


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise UnsupportedFeatureError("benchmark: stripe copy refused")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--file-mib", type=float, default=1.0)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--target-mib", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aorc-bench-compact-") as tmp:
        source = Path(tmp) / "source"
        asyncio.run(_write_inputs(source, args.files, args.file_mib, args.partitions))
        size = sum(p.stat().st_size for p in source.rglob("*.orc"))
        expected = _rows(source)
        print(f"{args.files} files, {size / 2**20:.0f} MiB, {expected.num_rows:,} rows, "
              f"{args.partitions} partitions; target {args.target_mib} MiB; "
              f"python {sys.version.split()[0]}, pyarrow {pa.__version__}")
        times: dict[str, list[float]] = {"stripe copy": [], "re-encode": []}
        outputs: dict[str, int] = {}
        original = compaction.merge_files
        for _ in range(args.repeat):
            for mode in times:
                work = Path(tmp) / "work"
                shutil.rmtree(work, ignore_errors=True)
                shutil.copytree(source, work)
                compaction.merge_files = original if mode == "stripe copy" else _refuse
                try:
                    start = time.perf_counter()
                    result = asyncio.run(aorc.compact(work, target_size=args.target_mib << 20))
                    times[mode].append(time.perf_counter() - start)
                finally:
                    compaction.merge_files = original
                if not _rows(work).equals(expected):
                    sys.exit(f"bench_compact: {mode} changed the rows")
                outputs[mode] = len(result.written)
        for mode, ts in times.items():
            best, median = min(ts), statistics.median(ts)
            print(f"{mode:12s} {best:7.2f} s (median {median:7.2f})  "
                  f"{size / 2**20 / best:7.1f} MB/s  {args.files} -> "
                  f"{outputs[mode] + 0} merged files")
        copy, encode = min(times["stripe copy"]), min(times["re-encode"])
        medians = [statistics.median(times[m]) for m in ("stripe copy", "re-encode")]
        print(f"stripe copy / re-encode: {copy / encode:.2f} (best), "
              f"{medians[0] / medians[1]:.2f} (median)")


if __name__ == "__main__":
    main()
