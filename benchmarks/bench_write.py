"""Write benchmark: aorc against pyarrow.orc and pyorc (time) and Spark / ORC Java (file size).

For every table of :mod:`bench_tables` (events 2M rows, 200 numeric columns x 250k,
strings 1M, nested 250k, timestamp/date/decimal/boolean 1M; all zstd), it writes the table
with ``aorc.write_table``, ``pyarrow.orc.write_table`` and (unless ``--no-pyorc``) pyorc's
``Writer`` (rows converted to Python tuples beforehand: the conversion is not timed), checks
that pyarrow.orc reads aorc's file back as the table, and prints best, median and 90th
percentile of aorc and pyarrow.orc, the ratios aorc / pyarrow.orc of the best and of the
median, aorc's p90 / median and the size ratio.

Every timing is taken in ``--processes`` fresh child processes (:mod:`fresh`; the table goes
to them as an Arrow IPC file, loaded before the clock starts), ``--repeat`` timed writes each
after one untimed warm-up write, aorc's and pyarrow.orc's processes taking turns (pyorc: one
process, one write); ``--in-process`` times ``--repeat`` writes in this process instead.

Both compress at the same level: pyarrow.orc's default (``compression_strategy="speed"``)
is zstd level 1 (ORC C++), so aorc writes with ``compression_level=1`` (``--aorc-level``;
``java`` keeps aorc's default, ORC Java's zstd level 3, which costs far more time on
random text such as UUIDs). The figures go
to ``benchmarks/results/write.json`` (``--json``), which ``benchmarks/chart.py`` draws.

Then, with ``--spark``, it writes the events table with Spark (local, ``coalesce(1)``, per
codec of ``--codecs``; ORC Java's writer with its default settings) and prints the file-size
ratio aorc / Spark, whose target is at most 1.05.

Usage::

    python benchmarks/bench_write.py [--tables events,strings] [--scale S] [--processes P]
                                     [--repeat R] [--in-process] [--threads N]
                                     [--aorc-level 1|java] [--no-pyorc] [--json PATH]
                                     [--spark] [--codecs zstd,none] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.orc as pa_orc

HERE = Path(__file__).resolve().parent
# Run from a checkout without installing: import aorc from the repository root, and the
# table and timing helpers from the read benchmark next to this file.
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_tables import (  # noqa: E402
    TABLES,
    build,
    build_table,  # noqa: E402
    pyorc_rows,
    pyorc_schema,
)
from fresh import (  # noqa: E402
    Job,
    add_timing_arguments,
    measure,
    statistic,
    stats_cells,
    stats_header,
    timing_of,
)

BLOCK_SIZE = 256 * 1024  # ORC Java's and aorc's default; pyarrow's is 64 KiB
PYARROW_CODECS = {"none": "uncompressed"}
#: The level pyarrow.orc compresses at by default (ORC C++, compression_strategy="speed").
PYARROW_LEVELS = {"zstd": 1, "zlib": 2}
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
    if not got.schema.equals(table.schema):  # e.g. pyarrow reads timestamps as ns
        got = got.cast(table.schema)
    return "pyarrow reads it back equal" if got.equals(table) else "READ-BACK DIFFERS"


def _aorc_writer(aorc: Any, table: pa.Table, path: Path, codec: str,
                 threads: int | None, level: str = "java") -> Callable[[], None]:
    options: dict[str, Any] = {"compression": codec, "compression_block_size": BLOCK_SIZE}
    if threads is not None:
        options["use_threads"] = threads
    if level != "java" and codec in PYARROW_LEVELS:
        options["compression_level"] = PYARROW_LEVELS[codec] if level == "pyarrow" \
            else int(level)
    return lambda: asyncio.run(aorc.write_table(table, str(path), **options))


def _pyorc_writer(table: pa.Table, path: Path, codec: str) -> Callable[[], None] | None:
    try:
        import pyorc
    except ImportError:
        return None
    kinds = {"zstd": pyorc.CompressionKind.ZSTD, "zlib": pyorc.CompressionKind.ZLIB,
             "snappy": pyorc.CompressionKind.SNAPPY, "lz4": pyorc.CompressionKind.LZ4,
             "none": pyorc.CompressionKind.NONE}
    schema, rows = pyorc_schema(table), pyorc_rows(table)

    def write() -> None:
        with path.open("wb") as out, pyorc.Writer(
                out, schema, compression=kinds[codec], compression_block_size=BLOCK_SIZE,
                timezone=__import__("zoneinfo").ZoneInfo("UTC")) as writer:
            writer.writerows(rows)
    return write


def write_task(table_path: str, library: str, out: str, codec: str,
               threads: int | None = None, level: str = "pyarrow") -> Callable[[], None]:
    """The write to time (a :mod:`fresh` task): ``library`` (aorc, pyarrow.orc, pyorc)
    writing the table of the Arrow IPC file ``table_path`` to ``out``, loaded beforehand."""
    with pa.OSFile(table_path) as f:  # read into memory, not memory-mapped
        table = pa.ipc.open_file(f).read_all()
    if library == "aorc":
        return _aorc_writer(_load_aorc(), table, Path(out), codec, threads, level)
    if library == "pyarrow.orc":
        return lambda: pa_orc.write_table(
            table, out, compression=PYARROW_CODECS.get(codec, codec),
            compression_block_size=BLOCK_SIZE)
    if library == "pyorc":
        fn = _pyorc_writer(table, Path(out), codec)
        if fn is not None:
            return fn
    raise ValueError(f"bench_write: cannot write with {library!r}")


def time_table(name: str, table: pa.Table, codec: str, timing: tuple[int, int, bool],
               folder: Path, *, threads: int | None, use_pyorc: bool,
               level: str = "pyarrow") -> dict[str, Any]:
    """Write times of every writer for one table (``timing``: processes, repeat, fresh),
    and their file sizes."""
    processes, repeat, fresh = timing
    source = folder / f"{name}.arrow"
    with pa.OSFile(str(source), "wb") as f, pa.ipc.new_file(f, table.schema) as sink:
        sink.write_table(table)
    paths = {lib: folder / f"{name}-{lib}.orc" for lib in ("aorc", "pyarrow.orc", "pyorc")}
    kw: dict[str, Any] = {"table_path": str(source), "codec": codec, "threads": threads,
                          "level": level}
    jobs = {lib: Job("bench_write:write_task", dict(kw, library=lib, out=str(paths[lib])),
                     processes, repeat) for lib in ("aorc", "pyarrow.orc")}
    if use_pyorc and importlib.util.find_spec("pyorc") is not None:
        jobs["pyorc"] = Job("bench_write:write_task",
                            dict(kw, library="pyorc", out=str(paths["pyorc"])), 1, 1, 0)
    stats = measure(jobs, fresh=fresh)
    source.unlink()
    sizes = {lib: paths[lib].stat().st_size for lib in jobs}
    return {"table": name, "rows": table.num_rows, "codec": codec, "stats": stats,
            "bytes": sizes, "check": _check(paths["aorc"], table)}


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


def run_tables(names: list[str], scale: float, timing: tuple[int, int, bool], folder: Path,
               *, threads: int | None, use_pyorc: bool,
               level: str = "pyarrow") -> list[dict[str, Any]]:
    """Write every table with every writer; print and return the figures."""
    _load_aorc()
    out = []
    header = f"{stats_header('table', 11)} {'rows':>9} {'pyorc s':>8} {'size a/pa':>9}  check"
    print(header, flush=True)
    for name in names:
        codec = TABLES[name][2]
        table = build(name, scale)
        r = time_table(name, table, codec, timing, folder, threads=threads,
                       use_pyorc=use_pyorc, level=level)
        del table
        s, b = r["stats"], r["bytes"]
        pyorc_s = f"{s['pyorc'].median:8.3f}" if "pyorc" in s else f"{'-':>8}"
        print(f"{name:<11} {stats_cells(s['aorc'], s['pyarrow.orc'])} {r['rows']:>9,} "
              f"{pyorc_s} {b['aorc'] / b['pyarrow.orc']:9.3f}  {r['check']}", flush=True)
        out.append(r)
    return out


def write_json(path: Path, figures: list[dict[str, Any]], argv: list[str], how: str) -> None:
    """Save the figures in the format ``benchmarks/chart.py`` reads: per library ``seconds``
    (the median), ``best``, ``median``, ``p90``, the ``samples`` and the file's ``bytes``."""
    results = [{"table": r["table"], "library": lib, "rows": r["rows"], **s.as_json(),
                "bytes": r["bytes"][lib]}
               for r in figures for lib, s in r["stats"].items()]
    doc = {"benchmark": "write", "command": "python benchmarks/bench_write.py " + " ".join(argv),
           "machine": machine(), "statistic": how, "results": results}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"figures written to {path}")


def machine() -> str:
    """A one-line description of the machine and the libraries."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} CPUs, {platform.system()}, python "
            f"{platform.python_version()}, pyarrow {pa.__version__}")


def run_spark(codecs: list[str], rows: int, folder: Path) -> None:
    """Write the events table with aorc and Spark per codec and print the size ratios."""
    aorc = _load_aorc()
    table = build_table(rows)
    with warnings.catch_warnings():  # PySpark 4 warns about pandas 3, which it does not use here
        warnings.simplefilter("ignore", FutureWarning)
        spark = start_spark()
    if spark is None:
        print("\nPySpark is not installed: no Spark comparison")
        return
    try:
        print("\nSpark (ORC Java, default settings, one run each):")
        with warnings.catch_warnings():  # PySpark 4 warns about pandas 3, unused here
            warnings.simplefilter("ignore", FutureWarning)
            df = spark.createDataFrame(table).coalesce(1).cache()
        df.count()
        for codec in codecs:
            ours = folder / f"aorc-{codec}.orc"
            _aorc_writer(aorc, table, ours, codec, None)()
            s_time, s_path = spark_write(spark, df, codec, folder)
            ratio = ours.stat().st_size / s_path.stat().st_size
            verdict = "ok" if ratio <= SIZE_TARGET else f"ABOVE TARGET {SIZE_TARGET}"
            print(f"{codec:<6} spark {s_time:7.3f} s {_mib(s_path):9.2f} MiB   "
                  f"size aorc/spark: {ratio:.4f} ({verdict})", flush=True)
    finally:
        spark.stop()


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run the benchmark."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES),
                        help=f"comma-separated tables (default {','.join(TABLES)})")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="rows as a fraction of each table's default (default 1)")
    add_timing_arguments(parser, "write")
    parser.add_argument("--threads", type=int, default=None,
                        help="aorc's use_threads (default: aorc's default)")
    parser.add_argument("--aorc-level", default="pyarrow",
                        help="aorc's compression_level: 'pyarrow' (default: pyarrow.orc's "
                             "default level, zstd 1), 'java' (aorc's default, ORC Java's "
                             "zstd 3) or a number")
    parser.add_argument("--no-pyorc", action="store_true", help="skip pyorc")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "write.json",
                        help="where to save the figures (default benchmarks/results/write.json)")
    parser.add_argument("--spark", action="store_true",
                        help="also compare file sizes with Spark (events table)")
    parser.add_argument("--no-spark", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--codecs", default="zstd,none",
                        help="codecs of the Spark comparison (default zstd,none)")
    parser.add_argument("--keep", type=Path, help="write the files here and keep them")
    args = parser.parse_args(argv)
    timing = timing_of(parser, args)
    _load_aorc()  # fail early, before building the tables
    how = statistic(*timing, "write")
    print(f"{machine()}; {how}; block size {BLOCK_SIZE // 1024} KiB; "
          f"aorc level {args.aorc_level}")
    names = [n.strip() for n in args.tables.split(",") if n.strip()]
    unknown = [n for n in names if n not in TABLES]
    if unknown:
        parser.error(f"unknown tables {unknown}; known: {', '.join(TABLES)}")
    codecs = [c.strip().lower() for c in args.codecs.split(",") if c.strip()]
    with tempfile.TemporaryDirectory(prefix="aorc-bench-write-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        figures = run_tables(names, args.scale, timing, folder, threads=args.threads,
                             use_pyorc=not args.no_pyorc, level=args.aorc_level)
        write_json(args.json, figures, argv, how)
        if args.spark and not args.no_spark:
            run_spark(codecs, int(TABLES["events"][0] * args.scale), folder)


if __name__ == "__main__":
    main()
