"""Read benchmark: aorc against pyarrow.orc on the same files.

Builds a mixed table (sequential and random integers, timestamps, low- and high-cardinality
strings, doubles, booleans, ~10% nulls in some columns), writes it with pyarrow.orc once per
codec into a temporary folder, then times whole-file reads and one-column reads with both
readers (best of ``--repeat`` runs each) and prints the times and the ratio aorc / pyarrow.

Usage::

    python benchmarks/bench_read.py [--rows N] [--repeat R] [--codecs zstd,uncompressed]
                                    [--no-columns] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.orc as pa_orc

# Run from a checkout without installing: import aorc from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LOW_CARDINALITY = 100
NULL_RATE = 0.10


def _uuid_strings(rng: np.random.Generator, n: int) -> pa.Array:
    """n random UUID-like strings (36 characters), built without a Python loop."""
    hex_digits = np.frombuffer(b"0123456789abcdef", np.uint8)
    raw = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    nibbles = np.empty((n, 32), np.uint8)
    nibbles[:, 0::2] = hex_digits[raw >> 4]
    nibbles[:, 1::2] = hex_digits[raw & 15]
    text = np.full((n, 36), ord("-"), np.uint8)
    for start, stop, at in ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24)):
        text[:, at : at + stop - start] = nibbles[:, start:stop]
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int32) * 36).tobytes())
    return pa.StringArray.from_buffers(n, offsets, pa.py_buffer(text.tobytes()))


def _with_nulls(rng: np.random.Generator, values: np.ndarray, t: pa.DataType) -> pa.Array:
    return pa.array(values, t, mask=rng.random(len(values)) < NULL_RATE)


def build_table(rows: int, seed: int = 0) -> pa.Table:
    """The benchmark table: ``rows`` rows of mixed column types.

    Args:
        rows: the number of rows.
        seed: the random seed.

    Returns:
        The table.
    """
    rng = np.random.default_rng(seed)
    words = pa.array([f"category-{i:03d}-{'x' * (i % 7)}" for i in range(LOW_CARDINALITY)])
    categories = pa.DictionaryArray.from_arrays(
        pa.array(
            rng.integers(0, LOW_CARDINALITY, rows, dtype=np.int32),
            mask=rng.random(rows) < NULL_RATE,
        ),
        words,
    ).dictionary_decode()
    seconds = rng.integers(946_684_800, 1_893_456_000, rows)  # 2000 .. 2030
    columns: dict[str, pa.Array] = {
        "id": pa.array(np.arange(rows, dtype=np.int64)),
        "small_int": pa.array(rng.integers(0, 1000, rows, dtype=np.int32)),
        "rand_int32": pa.array(rng.integers(-(2**31), 2**31, rows, dtype=np.int32)),
        "rand_int64": _with_nulls(rng, rng.integers(-(2**63), 2**63 - 1, rows), pa.int64()),
        "ts": _with_nulls(
            rng, seconds * 10**9 + rng.integers(0, 1000, rows) * 10**6, pa.timestamp("ns")
        ),
        "category": categories,
        "uuid": _uuid_strings(rng, rows),
        "value": _with_nulls(rng, rng.standard_normal(rows) * 1000, pa.float64()),
        "flag": pa.array(rng.random(rows) < 0.3),
    }
    return pa.table(columns)


def _load_aorc() -> Any:
    """Import aorc or exit with a clear message (the benchmark never fakes aorc's numbers)."""
    try:
        import aorc
    except ImportError as exc:
        sys.exit(
            f"bench_read: cannot import aorc ({exc}); build it first "
            "(pip install -e . or python setup.py build_ext --inplace)"
        )
    if not callable(getattr(aorc, "read_table", None)):
        sys.exit("bench_read: aorc.read_table does not exist yet; nothing to benchmark")
    return aorc


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """The fastest of ``repeat`` timed calls of ``fn``, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _readers(aorc: Any, path: Path, columns: list[str] | None) -> dict[str, Callable[[], Any]]:
    return {
        "aorc": lambda: asyncio.run(aorc.read_table(str(path), columns=columns)),
        "pyarrow": lambda: pa_orc.read_table(str(path), columns=columns),
    }


def _check_same(aorc: Any, path: Path) -> str:
    got = asyncio.run(aorc.read_table(str(path)))
    want = pa_orc.read_table(str(path))
    return "same result" if got.equals(want) else "RESULTS DIFFER (timings are suspect)"


def _row(label: str, times: dict[str, float]) -> str:
    ratio = times["aorc"] / times["pyarrow"] if times["pyarrow"] else float("nan")
    return f"{label:<28} {times['aorc']:>10.3f} {times['pyarrow']:>10.3f} {ratio:>8.2f}x"


def run(rows: int, repeat: int, codecs: list[str], per_column: bool, folder: Path) -> None:
    """Write the table once per codec and print the timing tables."""
    aorc = _load_aorc()
    print(f"building {rows:,} rows ...", flush=True)
    table = build_table(rows)
    header = f"{'':<28} {'aorc s':>10} {'pyarrow s':>10} {'ratio':>9}"
    for codec in codecs:
        path = folder / f"bench-{codec}.orc"
        pa_orc.write_table(table, path, compression=codec)
        size = os.path.getsize(path) / 2**20
        print(
            f"\n== {codec}: {path.name}, {size:.1f} MiB, "
            f"{pa_orc.ORCFile(str(path)).nstripes} stripes; {_check_same(aorc, path)}"
        )
        print(header)
        times = {name: best_of(repeat, fn) for name, fn in _readers(aorc, path, None).items()}
        print(_row("whole file", times), flush=True)
        if not per_column:
            continue
        for name in table.column_names:
            label = f"  {name} ({table.schema.field(name).type})"
            times = {r: best_of(repeat, fn) for r, fn in _readers(aorc, path, [name]).items()}
            print(_row(label, times), flush=True)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows (default 2,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing, best kept")
    parser.add_argument(
        "--codecs",
        default="zstd,uncompressed",
        help="comma-separated pyarrow codec names (default zstd,uncompressed)",
    )
    parser.add_argument("--no-columns", action="store_true", help="skip one-column reads")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args(argv)
    _load_aorc()  # fail early, before building the table

    print(
        f"python {platform.python_version()}, pyarrow {pa.__version__}, "
        f"{os.cpu_count()} CPUs, best of {args.repeat}"
    )
    codecs = [c.strip() for c in args.codecs.split(",") if c.strip()]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.rows, args.repeat, codecs, not args.no_columns, args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="aorc-bench-") as folder:
        run(args.rows, args.repeat, codecs, not args.no_columns, Path(folder))


if __name__ == "__main__":
    main()
