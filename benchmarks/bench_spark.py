"""Spark benchmark: aorc.spark against Spark's own ORC reader and writer, in one local session.

Data: 4 files x 1,000,000 rows of an events-like table (zstd, bloom filters on ``user_id``,
made once with aorc and cached in ``--data``, default ``/tmp/aorc-bench-spark``). Session:
``local[2]`` (two cores), as the tests configure it. Each case runs once to warm up (JVM,
Python workers) and then ``--repeat`` times, aorc and Spark in turns (so a busy moment of a
shared machine hits both); the best time of each is printed with the ratio aorc / Spark
(targets: reads and filters at most 1.5, writes at most 1.2):

- scan + group-by: ``groupBy("event_type").agg(count, sum(amount), max(ts))`` over
  ``aorc.spark.read``, ``spark.read.format("aorc")`` (PySpark 4.0+) and ``spark.read.orc``
  (which reads only the 3 columns used; ``aorc.spark.read`` is also timed with
  ``columns=`` naming them, and aorc's decoding alone on the driver is printed);
- filter: one user's rows (``user_id = X``), aorc with pushdown (filters=...; the data
  source's ``.where()`` where the PySpark pushes filters to Python sources) against
  ``spark.read.orc(...).where(...)`` (ORC Java's pushdown);
- write: the same cached DataFrame with ``aorc.spark.write`` and ``df.write.orc`` (zstd).

``--breakdown`` then shows where the read's time goes (see ``spark_breakdown.py``).

Usage::

    python benchmarks/bench_spark.py [--rows-per-file N] [--repeat R] [--data DIR]
                                       [--no-write] [--only scan,filter,write] [--breakdown]
                                       [--java-options="-D..."]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run from a checkout: this tree's aorc

import aorc  # noqa: E402
import aorc.spark  # noqa: E402
from aorc.spark.compat import has_data_sources, has_filter_pushdown  # noqa: E402

FILES = 4
EVENT_TYPES = ["view", "click", "cart", "purchase", "refund", "login", "logout", "search",
               "share", "rate"]
COUNTRIES = ["US", "DE", "FR", "GB", "JP", "BR", "IN", "CA", "ES", "IT", "NL", "SE", "PL",
             "MX", "KR", "AU", "CH", "AT", "BE", "NO"]
USERS = 200_000
READ_TARGET, WRITE_TARGET = 1.5, 1.2


def events(seed: int, rows: int) -> pa.Table:
    """One file's events: ids in order, users at random, times increasing."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-11-01T00:00:00", "us").astype(np.int64) + seed * 86_400_000_000
    ts = start + np.sort(rng.integers(0, 86_400_000_000, rows))
    return pa.table({
        "event_id": pa.array(np.arange(seed * rows, (seed + 1) * rows, dtype=np.int64)),
        "user_id": pa.array(rng.integers(0, USERS, rows, dtype=np.int64)),
        "ts": pa.array(ts.astype("datetime64[us]"), pa.timestamp("us", "UTC")),
        "event_type": pa.array(np.array(EVENT_TYPES)[rng.integers(0, len(EVENT_TYPES), rows)]),
        "country": pa.array(np.array(COUNTRIES)[rng.integers(0, len(COUNTRIES), rows)]),
        "amount": pa.array(np.round(rng.exponential(30.0, rows), 2)),
        "session": pa.array([f"s{v:08x}" for v in rng.integers(0, 1 << 31, rows)]),
    })


def make_data(folder: Path, rows: int) -> Path:
    """The files (made once per size and kept)."""
    path = folder / f"events-{FILES}x{rows}"
    if (path / "_done").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    for i in range(FILES):
        asyncio.run(aorc.write_table(events(i, rows), str(path / f"part-{i}.orc"),
                                     compression="zstd", bloom_filter_columns=["user_id"]))
    (path / "_done").write_text("ok\n")
    return path


def session(java_options: str = "") -> Any:
    """The ``local[2]`` session (``java_options``: more options for the JVM)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    spark = (SparkSession.builder.master("local[2]").appName("aorc-bench-spark")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.driver.memory", "2g")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.extraJavaOptions", f"-Duser.timezone=UTC {java_options}")
             .config("spark.sql.python.filterPushdown.enabled", "true")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Warm up once, then the best of ``repeat`` timed runs (and the last result)."""
    (t, _, result, _), = paired([fn], repeat)
    return t, result


def paired(fns: list[Callable[[], Any]], repeat: int
           ) -> list[tuple[float, float, Any, float]]:
    """Warm each up once, then run them in turns ``repeat`` times: the best time of each,
    the median CPU seconds spent by this process, the JVM and the Python workers, the last
    result and the median time."""
    from cpu_time import cpu_spent

    results = [fn() for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    cpus: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            with cpu_spent() as spent:
                t0 = time.perf_counter()
                results[i] = fn()
                times[i].append(time.perf_counter() - t0)
            cpus[i].append(spent["jvm"] + spent["py"])
    return [(min(t), sorted(c)[len(c) // 2], r, sorted(t)[len(t) // 2])
            for t, c, r in zip(times, cpus, results, strict=True)]


def report(name: str, ours: tuple[float, float, Any, float],
           theirs: tuple[float, float, Any, float], target: float) -> None:
    """One line: best wall times and their ratio, the ratio of the median wall times, and
    the median CPU seconds and their ratio."""
    ratio = ours[0] / theirs[0]
    mark = "ok" if ratio <= target else "SLOWER THAN TARGET"
    cpu = f"{ours[1]:6.2f} {theirs[1]:6.2f} {ours[1] / theirs[1]:5.2f}x" if theirs[1] else ""
    print(f"{name:<42} {ours[0]:8.2f} s {theirs[0]:8.2f} s {ratio:7.2f}x "
          f"(target {target}x: {mark:<2}) median {ours[3] / theirs[3]:5.2f}x {cpu}")


def scan(spark: Any, path: str, cases: dict[str, Callable[[], Any]],
         group: Callable[[Any], list[Any]], same: Callable[[list[Any], list[Any]], bool],
         repeat: int) -> None:
    """The scan + group-by comparison, and aorc's decoding alone on the driver."""
    timed = paired([lambda: group(spark.read.orc(path)), *cases.values()], repeat)
    for name, ours in zip(cases, timed[1:], strict=True):
        assert same(ours[2], timed[0][2]), f"{name} disagrees with spark.read.orc"
        report(name, ours, timed[0], READ_TARGET)
    decode_t, _ = best(lambda: [asyncio.run(aorc.read_table(str(f)))
                                for f in sorted(Path(path).glob("*.orc"))], 1)
    print(f"  (aorc decode alone, driver, all columns, one file after another: {decode_t:.2f} s)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows-per-file", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="skip the write case")
    parser.add_argument("--only", default="scan,filter,write",
                        help="the comparisons to run (comma-separated: scan, filter, write)")
    parser.add_argument("--breakdown", action="store_true",
                        help="then show where aorc.spark.read's time goes")
    parser.add_argument("--java-options", default="",
                        help="more JVM options (--java-options=-D...=...)")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(),
                                                       "aorc-bench-spark"))
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    if args.no_write:
        only.discard("write")
    t0 = time.perf_counter()
    path = str(make_data(Path(args.data), args.rows_per_file))
    print(f"data: {path} ({time.perf_counter() - t0:.1f} s to make or find)")
    import pyspark
    from pyspark.sql import functions as F  # noqa: N812

    spark = session(args.java_options)
    print(f"PySpark {pyspark.__version__}, local[2], {FILES} files x {args.rows_per_file} rows"
          + (f", JVM options {args.java_options}" if args.java_options else ""))
    print(f"{'case':<42} {'aorc':>10} {'Spark':>10} {'ratio':>8} {'':<20} "
          f"median wall ratio, CPU s: aorc, Spark, ratio")

    def group(df: Any) -> list[Any]:
        return sorted(df.groupBy("event_type").agg(
            F.count("*"), F.sum("amount"), F.max("ts")).collect())

    def same(a: list[Any], b: list[Any]) -> bool:  # sums of doubles depend on the order
        return len(a) == len(b) and all(
            x[0] == y[0] and x[1] == y[1] and x[3] == y[3] and math.isclose(x[2], y[2])
            for x, y in zip(a, b, strict=True))

    used = ["event_type", "amount", "ts"]  # what Spark's reader prunes to by itself
    cases = {"scan + group-by: aorc.spark.read": lambda: group(aorc.spark.read(spark, path)),
             "scan + group-by: aorc.spark.read(columns=)":
                 lambda: group(aorc.spark.read(spark, path, columns=used))}
    if has_data_sources():
        aorc.spark.register(spark)
        cases['scan + group-by: format("aorc")'] = \
            lambda: group(spark.read.format("aorc").load(path))
    if "scan" in only:
        scan(spark, path, cases, group, same, args.repeat)

    user = 4242
    cases = {"filter user_id = X: aorc.spark.read": lambda: sorted(aorc.spark.read(
        spark, path, filters=[("user_id", "==", user)]).collect())}
    if has_data_sources():
        pushed = "pushed" if has_filter_pushdown() else "not pushed: PySpark 4.0"
        cases[f'filter: format("aorc").where ({pushed})'] = lambda: sorted(
            spark.read.format("aorc").load(path).where(f"user_id = {user}").collect())
    if "filter" in only:
        timed = paired([lambda: sorted(spark.read.orc(path).where(f"user_id = {user}")
                                       .collect()), *cases.values()], args.repeat)
        for name, ours in zip(cases, timed[1:], strict=True):
            assert ours[2] == timed[0][2] and ours[2], f"{name}: filtered rows differ"
            report(name, ours, timed[0], READ_TARGET)

    df = spark.read.orc(path).cache()
    df.count()
    out = Path(tempfile.mkdtemp(prefix="aorc-bench-spark-out-"))
    try:
        def native_write() -> None:
            df.write.mode("overwrite").option("compression", "zstd").orc(str(out / "spark"))

        def aorc_write() -> None:
            shutil.rmtree(out / "aorc", ignore_errors=True)
            aorc.spark.write(df, str(out / "aorc"), compression="zstd")

        if "write" in only:
            theirs, ours = paired([native_write, aorc_write], args.repeat)
            assert spark.read.orc(str(out / "aorc")).count() == df.count()
            report("write: aorc.spark.write", ours, theirs, WRITE_TARGET)
            sizes = [sum(f.stat().st_size for f in (out / d).glob("*.orc")) for d in
                     ("aorc", "spark")]
            print(f"  (files: aorc {sizes[0] / 2**20:.1f} MiB, Spark {sizes[1] / 2**20:.1f} MiB,"
                  f" zstd at the level both default to)")
        if args.breakdown:
            from spark_breakdown import breakdown

            breakdown(spark, path, group, args.repeat)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        df.unpersist()
        spark.stop()


if __name__ == "__main__":
    main()
