"""Iceberg benchmark: appending events to a day-partitioned table and reading one day with a
selective filter, aorc.iceberg against pyiceberg, on local disk and on S3 at +20 ms.

The events table (``--rows``, default 10,000,000, in time order over ``--days`` days):
``event_id`` int64 (increasing), ``ts`` timestamp[us], ``user_id`` int64 (random),
``region`` string (8 values), ``amount`` double, ``url`` string (about 40 bytes). The Iceberg
table is partitioned by ``day(ts)``; both sides compress with zstd (pyiceberg's Parquet
default; ``write.orc.compression-codec=zstd`` for ORC).

- append: ``await aorc.iceberg.append(orc_table, data)`` (ORC) against pyiceberg's own
  ``parquet_table.append(data)`` (Parquet through pyarrow), each into a fresh table; the two
  alternate and the best and median of ``--repeat`` runs are reported (target: aorc within
  1.2x of pyiceberg);
- filtered read of one day: ``ts`` within one hour of day 3 and ``region == 'eu'`` (about
  0.1 % of the rows): ``aorc.iceberg.read_table(orc_table, filters=...)`` against pyiceberg's
  ``orc_table.scan(row_filter=...).to_arrow()`` (its pyarrow ORC read of aorc's files; no
  pushdown inside the files) and, for reference, pyiceberg's scan of its own Parquet table
  (target: aorc at most 0.3x pyiceberg's ORC read on S3). On S3 the proxy counts requests.

S3 is moto's server behind a proxy adding ``--latency-ms`` per request, both in a child
process (``s3_server.py``); the SQL catalog is SQLite in a temporary folder. The machine's
load average is printed before and after: on a shared machine compare the ratios, not the
seconds.

Usage::

    python benchmarks/bench_iceberg.py [--rows 10000000] [--days 7] [--repeat 3]
                                       [--stores local,s3] [--latency-ms 20]
                                       [--json benchmarks/results/iceberg.json]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gc
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # aorc from the checkout
sys.path.insert(0, str(ROOT / "tests"))  # helpers (s3 proxy)
sys.path.insert(0, str(Path(__file__).resolve().parent))  # s3_server

REGIONS = ["eu", "us", "ap", "sa", "af", "me", "oc", "an"]
DAY0 = datetime.datetime(2026, 11, 1)


def build_events(rows: int, days: int, seed: int = 0) -> pa.Table:
    """The events, in time order."""
    rng = np.random.default_rng(seed)
    span = days * 86_400 * 10**6
    ts = np.datetime64(DAY0, "us") + np.sort(rng.integers(0, span, rows)).astype(
        "timedelta64[us]")
    urls = np.array([f"https://example.com/p/{k:06d}/item?x={k % 97}" for k in range(5000)])
    return pa.table({
        "event_id": pa.array(np.arange(rows, dtype=np.int64)),
        "ts": pa.array(ts),
        "user_id": pa.array(rng.integers(0, 10**7, rows)),
        "region": pa.array(np.array(REGIONS)[rng.integers(0, len(REGIONS), rows)]),
        "amount": pa.array(np.round(rng.random(rows) * 1000, 2)),
        "url": pa.array(urls[rng.integers(0, len(urls), rows)]),
    })


def iceberg_schema() -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestampType

    return Schema(NestedField(1, "event_id", LongType()), NestedField(2, "ts", TimestampType()),
                  NestedField(3, "user_id", LongType()), NestedField(4, "region", StringType()),
                  NestedField(5, "amount", DoubleType()), NestedField(6, "url", StringType()))


def day_spec() -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform

    return PartitionSpec(PartitionField(2, 1000, DayTransform(), "ts_day"))


def selective_filter(days: int) -> tuple[Any, list[tuple[str, str, Any]]]:
    """One hour of a middle day and one region: (pyiceberg expression, aorc list form)."""
    from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan

    day = min(3, days - 1)
    start = DAY0 + datetime.timedelta(days=day, hours=10)
    end = start + datetime.timedelta(hours=1)
    expr = And(And(GreaterThanOrEqual("ts", start.isoformat()),
                   LessThan("ts", end.isoformat())), EqualTo("region", "eu"))
    return expr, [("ts", ">=", start), ("ts", "<", end), ("region", "==", "eu")]


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    gc.collect()
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def make_catalog(folder: Path, store: str, server: Any) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    if store == "local":
        return SqlCatalog("bench", uri=f"sqlite:///{folder}/catalog.db",
                          warehouse=f"file://{folder}/warehouse")
    import boto3

    client = boto3.client("s3", endpoint_url=server.upstream, region_name="us-east-1")
    try:
        client.create_bucket(Bucket="bench")
    except client.exceptions.BucketAlreadyOwnedByYou:
        pass
    return SqlCatalog("bench", uri=f"sqlite:///{folder}/catalog.db",
                      warehouse="s3://bench/warehouse",
                      **{"s3.endpoint": server.url, "s3.access-key-id": "bench",
                         "s3.secret-access-key": "bench", "s3.region": "us-east-1"})


def summary(times: list[float]) -> dict[str, float]:
    return {"best": min(times), "median": statistics.median(times)}


def run_store(store: str, data: pa.Table, args: argparse.Namespace, server: Any) -> dict[str, Any]:
    import aorc.iceberg

    folder = Path(tempfile.mkdtemp(prefix=f"bench-iceberg-{store}-"))
    try:
        catalog = make_catalog(folder, store, server)
        catalog.create_namespace("db")
        schema, spec = iceberg_schema(), day_spec()
        append: dict[str, list[float]] = {"aorc": [], "pyiceberg": []}
        orc_table = parquet_table = None
        for r in range(args.repeat):
            orc_table = catalog.create_table(f"db.orc{r}", schema, partition_spec=spec,
                                             properties={"write.format.default": "orc",
                                                         "write.orc.compression-codec": "zstd"})
            parquet_table = catalog.create_table(f"db.parquet{r}", schema, partition_spec=spec)
            jobs = [("aorc", lambda t=orc_table: asyncio.run(aorc.iceberg.append(t, data))),
                    ("pyiceberg", lambda t=parquet_table: t.append(data))]
            for name, job in (jobs if r % 2 == 0 else jobs[::-1]):
                seconds, _ = timed(job)
                append[name].append(seconds)
                print(f"  {store} append {name}: {seconds:.2f} s", flush=True)
        assert orc_table is not None and parquet_table is not None
        expr, terms = selective_filter(args.days)
        ours = asyncio.run(aorc.iceberg.read_table(orc_table, filters=terms))
        theirs = orc_table.scan(row_filter=expr).to_arrow()
        assert sorted(ours.column("event_id").to_pylist()) == sorted(
            theirs.column("event_id").to_pylist()), "the two reads disagree"
        reads: dict[str, list[float]] = {"aorc": [], "pyiceberg_orc": [],
                                         "pyiceberg_parquet": []}
        requests: dict[str, int] = {}
        jobs2 = [("aorc", lambda: asyncio.run(aorc.iceberg.read_table(orc_table,
                                                                      filters=terms))),
                 ("pyiceberg_orc", lambda: orc_table.scan(row_filter=expr).to_arrow()),
                 ("pyiceberg_parquet", lambda: parquet_table.scan(row_filter=expr).to_arrow())]
        for r in range(args.repeat):
            for name, job in (jobs2 if r % 2 == 0 else jobs2[::-1]):
                if server is not None:
                    server.log.clear()
                seconds, _ = timed(job)
                reads[name].append(seconds)
                if server is not None:
                    requests[name] = len(server.log)
        files = {t.file.file_path: t.file.file_size_in_bytes
                 for t in orc_table.scan().plan_files()}
        return {
            "rows_returned": ours.num_rows,
            "append": {k: summary(v) for k, v in append.items()},
            "append_ratio": {"best": min(append["aorc"]) / min(append["pyiceberg"]),
                             "median": statistics.median(append["aorc"])
                             / statistics.median(append["pyiceberg"])},
            "read": {k: summary(v) for k, v in reads.items()},
            "read_ratio_vs_pyiceberg_orc": {
                "best": min(reads["aorc"]) / min(reads["pyiceberg_orc"]),
                "median": statistics.median(reads["aorc"])
                / statistics.median(reads["pyiceberg_orc"])},
            "requests": requests,
            "orc_files": len(files), "orc_bytes": sum(files.values()),
            "parquet_bytes": sum(t.file.file_size_in_bytes
                                 for t in parquet_table.scan().plan_files()),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def print_results(results: dict[str, Any]) -> None:
    print()
    print(f"{'':10} {'aorc':>10} {'pyiceberg':>10} {'ratio best':>11} {'ratio median':>13}")
    for store, r in results["stores"].items():
        a = r["append"]
        print(f"{store + ' append':16} {a['aorc']['best']:>6.2f} s "
              f"{a['pyiceberg']['best']:>8.2f} s "
              f"{r['append_ratio']['best']:>10.2f} {r['append_ratio']['median']:>12.2f}")
        rd = r["read"]
        print(f"{store + ' read':16} {rd['aorc']['best']:>6.3f} s "
              f"{rd['pyiceberg_orc']['best']:>8.3f} s "
              f"{r['read_ratio_vs_pyiceberg_orc']['best']:>10.2f} "
              f"{r['read_ratio_vs_pyiceberg_orc']['median']:>12.2f}"
              f"   (pyiceberg on its Parquet: {rd['pyiceberg_parquet']['best']:.3f} s"
              f"{'; requests ' + str(r['requests']) if r['requests'] else ''})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--stores", default="local,s3")
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "iceberg.json"))
    args = parser.parse_args()
    try:
        import pyiceberg  # noqa: F401

        import aorc.iceberg  # noqa: F401
    except ImportError as exc:
        sys.exit(f"needs aorc's iceberg extra (pip install -e '.[iceberg]'): {exc}")
    load_before = os.getloadavg()
    print(f"load average before: {load_before}", flush=True)
    data = build_events(args.rows, args.days)
    print(f"{args.rows} rows, {data.nbytes / 2**20:.0f} MiB of Arrow data", flush=True)
    results: dict[str, Any] = {"rows": args.rows, "days": args.days, "repeat": args.repeat,
                               "latency_ms": args.latency_ms, "stores": {}}
    for store in args.stores.split(","):
        server = None
        if store == "s3":
            from s3_server import ServerProcess

            server = ServerProcess(args.latency_ms / 1000).start()
            os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                               "AWS_DEFAULT_REGION": "us-east-1",
                               "AWS_EC2_METADATA_DISABLED": "true"})
        try:
            results["stores"][store] = run_store(store, data, args, server)
        finally:
            if server is not None:
                server.stop()
    results["load_average"] = {"before": load_before, "after": os.getloadavg()}
    results["machine"] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "pyarrow": pa.__version__,
                          "date": datetime.date.today().isoformat()}
    print_results(results)
    print(f"load average after: {results['load_average']['after']}")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
