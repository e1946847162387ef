"""Write benchmark: aorc against pyarrow.orc (time) and Spark / ORC Java (file size).

Builds the mixed table of ``bench_read.py`` (sequential and random integers, timestamps,
low- and high-cardinality strings, doubles, booleans, ~10% nulls in some columns) and, per
codec, writes it with ``aorc.write_table`` and ``pyarrow.orc.write_table`` (best of
``--repeat`` runs each, same codec and compression block size), checks that pyarrow.orc reads
aorc's file back as the table, and prints the times and the ratio aorc / pyarrow. Then (unless
``--no-spark``) it writes the same rows with Spark (local, ``coalesce(1)``, same codec; ORC
Java's writer with its default settings) and prints the file-size ratio aorc / Spark, whose
target is at most 1.05.

Usage::

    python benchmarks/bench_write.py [--rows N] [--repeat R] [--no-spark]
                                     [--codecs zstd,none] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

HERE = Path(__file__).resolve().parent
# Run from a checkout without installing: import aorc from the repository root, and the
# table and timing helpers from the read benchmark next to this file.
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_read import best_of, build_table  # noqa: E402

BLOCK_SIZE = 256 * 1024  # ORC Java's and aorc's default; pyarrow's is 64 KiB
PYARROW_CODECS = {"none": "uncompressed"}
SIZE_TARGET = 1.05


def _load_aorc() -> Any:
    """Import aorc or exit with a clear message (the benchmark never fakes aorc's numbers)."""
    try:
        import aorc
    except ImportError as exc:
        sys.exit(f"bench_write: cannot import aorc ({exc}); build it first "
                 "(pip install -e . or python setup.py build_ext --inplace)")
    if not callable(getattr(aorc, "write_table", None)):
        sys.exit("bench_write: aorc.write_table does not exist yet; nothing to benchmark")
    return aorc


def _mib(path: Path) -> float:
    return path.stat().st_size / 2**20


def _check(path: Path, table: pa.Table) -> str:
    """Whether pyarrow.orc reads aorc's file back as ``table``."""
    got = pa_orc.read_table(str(path))
    return "pyarrow reads it back equal" if got.equals(table) else "READ-BACK DIFFERS"


def time_writers(aorc: Any, table: pa.Table, codec: str, repeat: int, folder: Path
                 ) -> dict[str, tuple[float, Path]]:
    """Best-of-``repeat`` write times of aorc and pyarrow.orc, and their files."""
    ours, theirs = folder / f"aorc-{codec}.orc", folder / f"pyarrow-{codec}.orc"
    writers = {
        "aorc": (ours, lambda: asyncio.run(aorc.write_table(
            table, str(ours), compression=codec, compression_block_size=BLOCK_SIZE))),
        "pyarrow": (theirs, lambda: pa_orc.write_table(
            table, str(theirs), compression=PYARROW_CODECS.get(codec, codec),
            compression_block_size=BLOCK_SIZE)),
    }
    return {name: (best_of(repeat, fn), path) for name, (path, fn) in writers.items()}


def _quiet_log4j() -> str:
    """A JVM option pointing log4j at a configuration that prints errors only."""
    conf = Path(tempfile.gettempdir()) / "aorc-bench-log4j2.properties"
    conf.write_text(
        "rootLogger.level = error\n"
        "rootLogger.appenderRef.stderr.ref = console\n"
        "appender.console.type = Console\n"
        "appender.console.name = console\n"
        "appender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\n"
        "appender.console.layout.pattern = %p %c{1}: %m%n\n"
    )
    return f"-Dlog4j2.configurationFile={conf.as_uri()}"


def start_spark() -> Any:
    """A local SparkSession (UTC everywhere, loopback only, quiet), or None without PySpark."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("aorc-bench-write")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "4g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC {_quiet_log4j()}")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_write(spark: Any, df: Any, codec: str, folder: Path) -> tuple[float, Path]:
    """Write ``df`` as one ORC file with Spark; its time (one run) and path."""
    out = folder / f"spark-{codec}"
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    df.write.option("compression", codec).orc(str(out))
    elapsed = time.perf_counter() - start
    (path,) = out.glob("*.orc")
    return elapsed, path


def run(rows: int, repeat: int, codecs: list[str], use_spark: bool, folder: Path) -> None:
    """Write the table with every writer and codec and print the results."""
    aorc = _load_aorc()
    print(f"building {rows:,} rows ...", flush=True)
    table = build_table(rows)
    print(f"table: {table.nbytes / 2**20:.1f} MiB in Arrow, {table.num_columns} columns")
    results: dict[str, dict[str, tuple[float, Path]]] = {}
    for codec in codecs:
        times = time_writers(aorc, table, codec, repeat, folder)
        results[codec] = times
        (a_time, a_path), (p_time, p_path) = times["aorc"], times["pyarrow"]
        print(f"\n== {codec} ({_check(a_path, table)})")
        print(f"{'writer':<10} {'best s':>9} {'MiB':>9}")
        print(f"{'aorc':<10} {a_time:>9.3f} {_mib(a_path):>9.2f}")
        print(f"{'pyarrow':<10} {p_time:>9.3f} {_mib(p_path):>9.2f}")
        print(f"time aorc/pyarrow: {a_time / p_time:.2f}x   "
              f"size aorc/pyarrow: {_mib(a_path) / _mib(p_path):.3f}", flush=True)
    with warnings.catch_warnings():  # PySpark 4 warns about pandas 3, which it does not use here
        warnings.simplefilter("ignore", FutureWarning)
        spark = start_spark() if use_spark else None
    if use_spark and spark is None:
        print("\nPySpark is not installed: no Spark comparison")
    if spark is None:
        return
    try:
        print("\nSpark (ORC Java, default settings, one run each):")
        with warnings.catch_warnings():  # PySpark 4 warns about pandas 3, unused here
            warnings.simplefilter("ignore", FutureWarning)
            df = spark.createDataFrame(table).coalesce(1).cache()
        df.count()
        for codec in codecs:
            s_time, s_path = spark_write(spark, df, codec, folder)
            ratio = results[codec]["aorc"][1].stat().st_size / s_path.stat().st_size
            verdict = "ok" if ratio <= SIZE_TARGET else f"ABOVE TARGET {SIZE_TARGET}"
            print(f"{codec:<6} spark {s_time:7.3f} s {_mib(s_path):9.2f} MiB   "
                  f"size aorc/spark: {ratio:.4f} ({verdict})", flush=True)
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000, help="rows (default 2,000,000)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing, best kept")
    parser.add_argument("--codecs", default="zstd,none",
                        help="comma-separated aorc codec names (default zstd,none)")
    parser.add_argument("--no-spark", action="store_true", help="skip the Spark comparison")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args(argv)
    _load_aorc()  # fail early, before building the table
    print(f"python {platform.python_version()}, pyarrow {pa.__version__}, "
          f"{os.cpu_count()} CPUs, best of {args.repeat}, block size {BLOCK_SIZE // 1024} KiB")
    codecs = [c.strip().lower() for c in args.codecs.split(",") if c.strip()]
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        run(args.rows, args.repeat, codecs, not args.no_spark, args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="aorc-bench-write-") as folder:
        run(args.rows, args.repeat, codecs, not args.no_spark, Path(folder))


if __name__ == "__main__":
    main()
