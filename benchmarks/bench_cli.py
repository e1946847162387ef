"""``aorc cat --format jsonl`` against ``--format csv`` (issue 22): wall and CPU time of each
in a fresh process, on a generated ORC file of 2M rows x 6 columns (int64, double with nulls,
UUID-like string, timestamp[ns] with nulls, bool, decimal(18,4)).

    python benchmarks/bench_cli.py [--rows N] [--repeat R] [--keep DIR] [--out FILE]

The two formats run alternately, ``--repeat`` times each (default 3), their output going to
``/dev/null``; the best and median of each and the JSON/CSV ratios are printed (and written as
JSON with ``--out``). Wall times on a shared machine move by tens of percent between runs: the
CPU seconds (user + system of the child) move less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.orc as po

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tables import _uuid_strings, _with_nulls  # noqa: E402

__all__ = ["build_table", "main"]


def build_table(rows: int, seed: int = 0) -> pa.Table:
    """The six mixed columns of the issue's measurement (seeded)."""
    rng = np.random.default_rng(seed)
    seconds = rng.integers(946_684_800, 1_893_456_000, rows)  # 2000 .. 2030
    return pa.table({
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "value": _with_nulls(rng, rng.standard_normal(rows) * 1000, pa.float64()),
        "name": _uuid_strings(rng, rows),
        "ts": _with_nulls(rng, seconds * 10**9 + rng.integers(0, 1000, rows) * 10**6,
                          pa.timestamp("ns")),
        "flag": pa.array(rng.random(rows) < 0.3),
        "amount": pa.array(rng.integers(-10**9, 10**9, rows)).cast(
            pa.decimal128(19, 0)).cast(pa.decimal128(18, 4)),
    })


def _run(path: Path, fmt: str) -> tuple[float, float]:
    """Wall and CPU seconds of ``aorc cat PATH --format FMT > /dev/null``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run([sys.executable, "-m", "aorc", "cat", str(path), "--format", fmt],
                       stdout=sink, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Run the benchmark; returns (and prints) its results."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="folder for the ORC file (kept)")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"cat-{args.rows}.orc"
        if not path.exists():
            po.write_table(build_table(args.rows), str(path), compression="zstd")
        runs: dict[str, list[tuple[float, float]]] = {"csv": [], "jsonl": []}
        _run(path, "csv")  # warm the page cache
        for _ in range(args.repeat):
            for fmt in ("csv", "jsonl"):
                runs[fmt].append(_run(path, fmt))
    results: dict[str, object] = {"rows": args.rows, "columns": 6, "repeat": args.repeat}
    for what, i in (("wall", 0), ("cpu", 1)):
        for fmt, values in runs.items():
            times = [v[i] for v in values]
            results[f"{fmt}_{what}_best"] = round(min(times), 3)
            results[f"{fmt}_{what}_median"] = round(statistics.median(times), 3)
        for stat in ("best", "median"):
            json_time = results[f"jsonl_{what}_{stat}"]
            csv_time = results[f"csv_{what}_{stat}"]
            assert isinstance(json_time, float) and isinstance(csv_time, float)
            results[f"ratio_{what}_{stat}"] = round(json_time / csv_time, 3)
    print(f"aorc cat, {args.rows:,} rows x 6 columns, {args.repeat} runs each")
    print(f"{'':8}{'csv best':>10}{'median':>9}{'jsonl best':>12}{'median':>9}"
          f"{'ratio best':>12}{'median':>9}")
    for what in ("wall", "cpu"):
        print(f"{what + ' s':8}{results[f'csv_{what}_best']:>10}"
              f"{results[f'csv_{what}_median']:>9}{results[f'jsonl_{what}_best']:>12}"
              f"{results[f'jsonl_{what}_median']:>9}{results[f'ratio_{what}_best']:>12}"
              f"{results[f'ratio_{what}_median']:>9}")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    return results


if __name__ == "__main__":
    main()
