"""Hive partition columns typed as Spark types them: folders written by Spark
(``df.write.partitionBy(...).orc``) and read by ``spark.read.orc`` (the reference), by
``aorc.spark.read`` and ``spark.read.format("aorc")`` (the same schema and rows), and by
``aorc.read_dataset`` (the same types in Arrow's terms: timestamps as the folders' wall
clocks). The folders are read in a session time zone other than the writer's, with a
daylight-saving gap and overlap, so timestamp folders are read in the session's zone."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import decimal
import pathlib
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.orc as po
import pytest

import aorc
import aorc.spark
from aorc.spark.compat import has_data_sources

pytestmark = pytest.mark.spark

# ts: whole seconds and one tenth (Spark's pattern yyyy-MM-dd HH:mm:ss[.S]); tsm: micros,
# which Spark's inference does not take (a string column); mix: ints and a word
WRITTEN = """
SELECT * FROM VALUES
  (0, 1, 5L, DATE'2024-01-01', 1.5D, 'a/b', TIMESTAMP'2024-01-01 10:00:00',
   TIMESTAMP'2024-01-01 10:00:00.123456', '1', 12345678901234567890BD),
  (1, -7, 3000000000L, DATE'2024-02-29', -2.25D, 'c:d e%', TIMESTAMP'2024-03-10 02:30:00',
   TIMESTAMP'2024-01-02 00:00:00.5', 'x', 1BD),
  (2, 2147483647, -1L, DATE'1999-12-31', 0.0D, '', TIMESTAMP'2024-11-03 01:30:00.5',
   TIMESTAMP'2024-01-03 00:00:00.000001', '22', 0BD),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
AS t(id, i, b, d, x, s, ts, tsm, mix, big)
"""
PARTS = ["i", "b", "d", "x", "s", "ts", "tsm", "mix", "big"]
READ_ZONE = "America/New_York"

#: what aorc.read_dataset gives: Spark's types in Arrow's terms, timestamps as wall clocks
DATASET_SCHEMA = pa.schema([
    ("id", pa.int32()), ("i", pa.int32()), ("b", pa.int64()), ("d", pa.date32()),
    ("x", pa.float64()), ("s", pa.string()), ("ts", pa.timestamp("us")),
    ("tsm", pa.string()), ("mix", pa.string()), ("big", pa.decimal128(20, 0))])
DATASET_ROWS = [
    (0, 1, 5, datetime.date(2024, 1, 1), 1.5, "a/b", datetime.datetime(2024, 1, 1, 10),
     "2024-01-01 10:00:00.123456", "1", decimal.Decimal("12345678901234567890")),
    (1, -7, 3000000000, datetime.date(2024, 2, 29), -2.25, "c:d e%",
     datetime.datetime(2024, 3, 10, 2, 30), "2024-01-02 00:00:00.5", "x", decimal.Decimal(1)),
    (2, 2147483647, -1, datetime.date(1999, 12, 31), 0.0, None,
     datetime.datetime(2024, 11, 3, 1, 30, 0, 500_000), "2024-01-03 00:00:00.000001", "22",
     decimal.Decimal(0)),
    (3, None, None, None, None, None, None, None, None, None),
]


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=lambda r: r[0])


@contextlib.contextmanager
def session_zone(spark: Any, zone: str) -> Iterator[None]:
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        if has_data_sources():
            aorc.spark.register(spark)  # back to the session's zone for other tests


@pytest.fixture(scope="module")
def written(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("partitions") / "t")
    spark.sql(WRITTEN).repartition(1).write.partitionBy(*PARTS).orc(path)
    return path


def test_aorc_spark_types_partitions_as_spark(spark: Any, written: str) -> None:
    with session_zone(spark, READ_ZONE):
        reference = spark.read.orc(written)
        assert reference.schema.simpleString() == (
            "struct<id:int,i:int,b:bigint,d:date,x:double,s:string,ts:timestamp,"
            "tsm:string,mix:string,big:decimal(20,0)>")
        expected = rows(reference)
        assert expected[1][6] != expected[1][6].replace(hour=2)  # read in New York time
        df = aorc.spark.read(spark, written)
        assert df.schema == reference.schema
        assert rows(df) == expected
        schema = asyncio.run(aorc.spark.read_schema(written, time_zone=READ_ZONE))
        assert schema.field("ts").type == pa.timestamp("us", READ_ZONE)
        dated = aorc.spark.read(spark, written, filters=[("d", "==", "2024-02-29")])
        assert [r[0] for r in rows(dated)] == [1]
        if has_data_sources():
            assert aorc.spark.register(spark)
            source = spark.read.format("aorc").load(written)
            assert source.schema == reference.schema
            assert rows(source) == expected


def test_read_dataset_types_partitions_as_spark(written: str) -> None:
    table = asyncio.run(aorc.read_dataset(written))
    assert table.schema == DATASET_SCHEMA
    got = sorted((tuple(r.values()) for r in table.to_pylist()), key=lambda r: r[0])
    assert got == DATASET_ROWS


def test_partition_columns_typed_alike(written: str) -> None:
    """aorc.spark's plan and datasets share one inference: the same types but for the
    session zone of timestamps."""
    spark_schema = asyncio.run(aorc.spark.read_schema(written, time_zone=None))
    dataset = asyncio.run(aorc.open_dataset(written))
    assert pa.schema([spark_schema.field(n) for n in PARTS]) == dataset.partition_schema


def test_plan_reads_timestamp_folders_in_the_session_zone(tmp_path: pathlib.Path) -> None:
    """Planning only (no Spark): timestamp folders become instants in the given zone, and
    filter values on them (texts, naive datetimes) are wall clocks in that zone too."""
    for folder in ("ts=2024-03-10 02%3A30%3A00", "ts=2024-01-01 10%3A00%3A00"):
        (tmp_path / folder).mkdir()
        po.write_table(pa.table({"x": [1]}), str(tmp_path / folder / "f.orc"))
    root = str(tmp_path)
    schema, splits = asyncio.run(aorc.spark.plan_read(root, time_zone="America/New_York"))
    assert schema.field("ts").type == pa.timestamp("us", "America/New_York")
    instants = sorted(dict(s.partition)["ts"].astimezone(datetime.UTC) for s in splits)
    assert [i.replace(tzinfo=None) for i in instants] == [
        datetime.datetime(2024, 1, 1, 15), datetime.datetime(2024, 3, 10, 7, 30)]  # the gap
    for value in ("2024-03-01 00:00:00", datetime.datetime(2024, 3, 1)):
        _, kept = asyncio.run(aorc.spark.plan_read(root, filters=[("ts", ">=", value)],
                                                   time_zone="America/New_York"))
        assert [s.uri for s in kept] == [s.uri for s in splits if "2024-03-10" in s.uri]
    fixed, _ = asyncio.run(aorc.spark.plan_read(root, time_zone="GMT-5"))
    assert fixed.field("ts").type == pa.timestamp("us", "-05:00")
