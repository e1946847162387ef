"""Read benchmark: aorc against pyarrow.orc on the same files.

Builds a mixed table (sequential and random integers, timestamps, low- and high-cardinality
strings, doubles, booleans, ~10% nulls in some columns), writes it with pyarrow.orc once per
codec into a temporary folder, then times whole-file reads and one-column reads with both
readers and prints best, median and 90th percentile of each, the ratios aorc / pyarrow of
the best and of the median, and aorc's p90 / median.

Every timing is taken in ``--processes`` fresh child processes (:mod:`fresh`), ``--repeat``
timed reads each after one untimed warm-up read, aorc's and pyarrow.orc's processes taking
turns; ``--in-process`` times ``--repeat`` reads in this process instead (quick, less fair).

Usage::

    python benchmarks/bench_read.py [--rows N] [--processes P] [--repeat R] [--in-process]
                                    [--tables events-zstd,nested] [--columns] [--threads N]
                                    [--pyorc] [--keep DIR] [--json PATH]

Besides ``events`` (the mixed table below, once zstd and once uncompressed), the tables of
:mod:`bench_tables`: 200 numeric columns, strings, nested and timestamp/date/decimal/boolean.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

# Run from a checkout without installing: import aorc from the repository root.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(1, str(Path(__file__).resolve().parent))  # bench_tables, fresh

from bench_tables import TABLES, build_table  # noqa: E402
from fresh import (  # noqa: E402
    Job,
    Summary,
    add_timing_arguments,
    measure,
    statistic,
    stats_cells,
    stats_header,
    timing_of,
)

#: The chart's library names for this script's reader names.
LIBRARY_NAMES = {"pyarrow": "pyarrow.orc"}


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


def read_task(path: str, library: str, columns: list[str] | None = None,
              threads: int | None = None) -> Callable[[], object]:
    """The read to time (a :mod:`fresh` task): ``library`` (aorc, pyarrow, pyorc) reading
    ``path`` whole or its ``columns``; ``threads`` is aorc's ``use_threads``."""
    if library == "aorc":
        aorc = _load_aorc()
        extra = {} if threads is None else {"use_threads": threads}
        return lambda: asyncio.run(aorc.read_table(path, columns=columns, **extra))
    if library == "pyarrow":
        return lambda: pa_orc.read_table(path, columns=columns)
    if library == "pyorc":
        return lambda: _read_pyorc(Path(path), columns)
    raise ValueError(f"bench_read: unknown library {library!r}")


def _read_pyorc(path: Path, columns: list[str] | None) -> int:
    """Read every row with pyorc (rows as Python tuples: pyorc has no Arrow output)."""
    import pyorc

    with open(path, "rb") as f:
        reader = pyorc.Reader(f, column_names=columns) if columns else pyorc.Reader(f)
        return sum(1 for _ in reader)


def _jobs(path: Path, columns: list[str] | None, threads: int | None, with_pyorc: bool,
          processes: int, repeat: int) -> dict[str, Job]:
    """aorc's, pyarrow.orc's (and pyorc's: one process, one read) timing jobs."""
    kw: dict[str, Any] = {"path": str(path), "columns": columns, "threads": threads}
    jobs = {lib: Job("bench_read:read_task", dict(kw, library=lib), processes, repeat)
            for lib in ("aorc", "pyarrow")}
    if with_pyorc:
        jobs["pyorc"] = Job("bench_read:read_task", dict(kw, library="pyorc"), 1, 1, 0)
    return jobs


def _check_same(aorc: Any, path: Path) -> str:
    got = asyncio.run(aorc.read_table(str(path)))
    want = pa_orc.read_table(str(path))
    return "same result" if got.equals(want) else "RESULTS DIFFER (timings are suspect)"


def _row(label: str, stats: dict[str, Summary]) -> str:
    pyorc = f" {stats['pyorc'].median:>10.3f}" if "pyorc" in stats else ""
    return f"{label:<28} {stats_cells(stats['aorc'], stats['pyarrow'])}{pyorc}"


def _specs(names: list[str], rows: int | None) -> list[tuple[str, Callable[[], pa.Table], str]]:
    """(label, table builder, codec) per requested table name."""

    out = []
    for name in names:
        if name.startswith("events-"):
            n = rows or 2_000_000
            out.append((f"events {n:,} {name[7:]}", lambda n=n: build_table(n), name[7:]))
            continue
        if name not in TABLES:
            sys.exit(f"bench_read: unknown table {name!r} (events-CODEC, {', '.join(TABLES)})")
        default_rows, builder, codec = TABLES[name]
        n = rows or default_rows
        out.append((f"{name} {n:,}", lambda b=builder, n=n: b(n), codec))
    return out


def run(names: list[str], rows: int | None, timing: tuple[int, int, bool], per_column: bool,
        folder: Path, threads: int | None, with_pyorc: bool) -> list[dict[str, Any]]:
    """Write each table once, print the timing tables and return the whole-file figures
    (as ``benchmarks/chart.py`` reads them); ``timing`` is (processes, repeat, fresh)."""
    aorc = _load_aorc()
    processes, repeat, fresh = timing
    header = stats_header() + (f" {'pyorc s':>10}" if with_pyorc else "")
    summary = []
    results: list[dict[str, Any]] = []
    for label, build, codec in _specs(names, rows):
        print(f"building {label} ...", flush=True)
        table = build()
        path = folder / f"bench-{label.split()[0]}-{codec}.orc"
        pa_orc.write_table(table, path, compression=codec)
        size = os.path.getsize(path) / 2**20
        print(f"\n== {label}, {codec}: {size:.1f} MiB, "
              f"{pa_orc.ORCFile(str(path)).nstripes} stripes; {_check_same(aorc, path)}")
        print(header)
        stats = measure(_jobs(path, None, threads, with_pyorc, processes, repeat), fresh=fresh)
        print(_row("whole file", stats), flush=True)
        summary.append((f"{label} {codec}", stats))
        table_name = label.split()[0] + (f"\n{'none' if codec == 'uncompressed' else codec}"
                                         if label.startswith("events") else "")
        results += [{"table": table_name, "library": LIBRARY_NAMES.get(lib, lib),
                     "rows": table.num_rows, **s.as_json()} for lib, s in stats.items()]
        if not per_column or not label.startswith("events"):
            continue
        for name in table.column_names:
            col = f"  {name} ({table.schema.field(name).type})"
            jobs = _jobs(path, [name], threads, False, processes, repeat)
            print(_row(col, measure(jobs, fresh=fresh)), flush=True)
    print("\n== summary: whole-file reads (aorc / pyarrow.orc)")
    print(header)
    for label, stats in summary:
        print(_row(label, stats))
    return results


def write_json(path: Path, results: list[dict[str, Any]], argv: list[str], how: str) -> None:
    """Save the whole-file figures in the format ``benchmarks/chart.py`` reads: per library
    ``seconds`` (the median), ``best``, ``median``, ``p90`` and the ``samples``."""
    doc = {"benchmark": "read", "command": "python benchmarks/bench_read.py " + " ".join(argv),
           "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
                      f"Python {platform.python_version()}, pyarrow {pa.__version__}",
           "statistic": how, "results": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"figures written to {path}")


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None,
                        help="rows of every table (default: each table's own, events 2,000,000)")
    add_timing_arguments(parser, "read")
    parser.add_argument(
        "--tables",
        default="events-zstd,events-uncompressed,numeric200,strings,nested,temporal",
        help="comma-separated tables: events-CODEC (a pyarrow codec), numeric200, strings, "
             "nested, temporal",
    )
    parser.add_argument("--columns", action="store_true", help="also one-column reads (events)")
    parser.add_argument("--threads", type=int, default=None,
                        help="aorc's use_threads (default: aorc's default)")
    parser.add_argument("--pyorc", action="store_true", help="also time pyorc (one run)")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    parser.add_argument("--json", type=Path,
                        default=Path(__file__).resolve().parent / "results" / "read.json",
                        help="where to save the figures (default benchmarks/results/read.json)")
    args = parser.parse_args(argv)
    timing = timing_of(parser, args)
    _load_aorc()  # fail early, before building the table

    how = statistic(*timing, "read")
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, "
          f"{os.cpu_count()} CPUs; {how}")
    names = [c.strip() for c in args.tables.split(",") if c.strip()]
    opts = (args.rows, timing, args.columns)
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        results = run(names, *opts, args.keep, args.threads, args.pyorc)
    else:
        with tempfile.TemporaryDirectory(prefix="aorc-bench-") as folder:
            results = run(names, *opts, Path(folder), args.threads, args.pyorc)
    write_json(args.json, results, sys.argv[1:] if argv is None else argv, how)


if __name__ == "__main__":
    main()
