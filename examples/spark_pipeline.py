"""The whole pipeline on one machine: events -> RollingSink -> S3 (moto) -> Spark.

Usage::

    python examples/spark_pipeline.py [--events 200000]

Needs ``pyspark`` (>= 4, with Java 17) and ``moto[server]`` (the local S3 endpoint).

1. Starts moto's S3 server on 127.0.0.1 (a stand-in for S3 or MinIO) and creates a bucket.
2. Streams purchase events from four "Kafka partitions" into :class:`aorc.sink.RollingSink`,
   which writes ORC files partitioned by event hour (``dt=2026-11-22/hour=07/``) and reports
   each cut's positions to a commit callback (a dict plays Kafka's part here).
3. Starts a local SparkSession, reads the files with :func:`aorc.spark.read` -- straight from
   the S3 endpoint, no Hadoop S3 connector -- with a filter pushed down to aorc, and
   aggregates the revenue per country and hour.

The S3 settings are passed explicitly as ``storage_options``: Spark's Python workers are
separate processes and do not see settings made in this one.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import aorc.spark
from aorc.sink import RollingSink, SinkCommit

BUCKET = "aorc-pipeline"
PREFIX = f"s3://{BUCKET}/purchases"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing",
               "region": "us-east-1"}
COUNTRIES = np.array(["DE", "FR", "US", "JP", "BR"])
MIN_AMOUNT = 20.0


def make_events(n: int, partitions: int = 4, seed: int = 7) -> list[pa.Table]:
    """``n`` purchase events spread over ``partitions`` streams (offsets 0, 1, ...)."""
    rng = np.random.default_rng(seed)
    start = np.datetime64("2026-11-22T05:30:00", "ms")
    tables = []
    for p in range(partitions):
        m = n // partitions + (p < n % partitions)
        ts = start + np.sort(rng.integers(0, 3 * 3600 * 1000, m)).astype("timedelta64[ms]")
        tables.append(pa.table({
            "offset": pa.array(np.arange(m, dtype=np.int64)),
            "ts": pa.array(ts),
            "country": pa.array(COUNTRIES[rng.integers(0, len(COUNTRIES), m)]),
            "customer": pa.array([f"c{c}" for c in rng.integers(0, 5000, m)]),
            "amount": pa.array(np.round(rng.gamma(2.0, 15.0, m), 2)),
        }))
    return tables


async def ingest(events: list[pa.Table], prefix: str, storage_options: dict[str, Any],
                 batch_rows: int = 5000) -> dict[int, int]:
    """Feed the events to a RollingSink, as a consumer would; returns the committed
    positions."""
    committed: dict[int, int] = {}

    async def on_commit(commit: SinkCommit) -> None:  # a consumer would commit to Kafka here
        committed[commit.partition] = commit.offset
        print(f"  committed purchases/{commit.partition} up to offset {commit.offset} "
              f"({len(commit.files)} files, {commit.reason})")

    sink = RollingSink(prefix, events[0].schema, event_time="ts", max_rows=40_000,
                       max_event_span=datetime.timedelta(minutes=30),
                       storage_options=storage_options, on_commit=on_commit,
                       compression="zstd", bloom_filter_columns=["customer"])
    async with sink:
        for start in range(0, max(t.num_rows for t in events), batch_rows):
            for p, table in enumerate(events):
                batch = table.slice(start, batch_rows)
                if batch.num_rows:
                    await sink.write(batch, topic="purchases", partition=p, offsets="offset")
    print(f"  {sink.stats.files_written} files, {sink.stats.rows_written} rows, "
          f"{sink.stats.bytes_written} bytes")
    return committed


def analyse(spark: Any, prefix: str, storage_options: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Revenue per country and hour of the purchases of at least MIN_AMOUNT, computed by
    Spark over the files read by aorc."""
    from pyspark.sql import functions as F

    df = aorc.spark.read(spark, prefix, columns=["country", "amount"],
                         filters=[("amount", ">=", MIN_AMOUNT)],
                         storage_options=storage_options)
    result = (df.groupBy("dt", "hour", "country")
              .agg(F.count("*").alias("orders"), F.round(F.sum("amount"), 2).alias("revenue"))
              .orderBy("dt", "hour", "country"))
    return [tuple(r) for r in result.collect()]


def expected(events: list[pa.Table]) -> list[tuple[Any, ...]]:
    """The same aggregation computed with pyarrow from the events themselves."""
    table = pa.concat_tables(events)
    table = table.filter(pc.greater_equal(table.column("amount"), MIN_AMOUNT))
    day = pc.strftime(table.column("ts"), format="%Y-%m-%d")  # the folders' UTC day
    table = table.append_column("dt", pc.cast(day, pa.date32()))
    table = table.append_column("hour", pc.cast(pc.hour(table.column("ts")), pa.int32()))
    grouped = table.group_by(["dt", "hour", "country"]).aggregate(
        [("amount", "count"), ("amount", "sum")])
    rows = [(r["dt"], r["hour"], r["country"], r["amount_count"], round(r["amount_sum"], 2))
            for r in grouped.to_pylist()]
    return sorted(rows)


def start_s3() -> tuple[Any, str]:
    """moto's S3 server on a free loopback port, with the bucket created."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name=CREDENTIALS["region"],
                          aws_access_key_id=CREDENTIALS["aws_access_key_id"],
                          aws_secret_access_key=CREDENTIALS["aws_secret_access_key"])
    client.create_bucket(Bucket=BUCKET)
    client.close()
    return server, endpoint


def local_spark() -> Any:
    """A local SparkSession bound to the loopback interface, session time zone UTC."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (SparkSession.builder.master("local[2]").appName("aorc-pipeline")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: Sequence[str] | None = None, spark: Any = None) -> list[tuple[Any, ...]]:
    """Run the pipeline; returns the aggregated rows. ``spark``: a session to use instead of
    starting one (it is then left running)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000, help="events to stream")
    args = parser.parse_args(argv)
    server, endpoint = start_s3()
    storage_options = {"endpoint_url": endpoint, **CREDENTIALS}
    own_spark = spark is None
    try:
        events = make_events(args.events)
        print(f"streaming {args.events} events into {PREFIX} ...")
        asyncio.run(ingest(events, PREFIX, storage_options))
        print("reading them with Spark through aorc ...")
        spark = spark if spark is not None else local_spark()
        rows = analyse(spark, PREFIX, storage_options)
        print(f"{'dt':<11}{'hour':>5} {'country':<8}{'orders':>7}{'revenue':>12}")
        for dt, hour, country, orders, revenue in rows:
            print(f"{dt!s:<11}{hour:>5} {country:<8}{orders:>7}{revenue:>12.2f}")
        return rows
    finally:
        if own_spark and spark is not None:
            spark.stop()
        server.stop()


if __name__ == "__main__":
    main()
