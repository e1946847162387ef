"""Types through aorc.spark on whichever PySpark runs the tests (3.5, 4.0-4.3; classic or
Spark Connect): timestamps (``TimestampType`` and ``TimestampNTZType``; aorc reads
timestamps as Arrow nanoseconds, so from 1677-09-22 to 2262-04-11), dates before 1582,
decimals up to 38 digits, binary, char/varchar, arrays, maps and structs (nested in each
other), with nulls.

Judged by Spark itself: a DataFrame written with ``aorc.spark.write`` reads back identical
through ``spark.read.orc`` (ORC Java) and through ``aorc.spark.read``; files written by
``df.write.orc`` read back identical through ``aorc.spark.read`` (and the ``aorc`` data
source where this PySpark has Python data sources).
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

import aorc.spark
from aorc.spark.compat import has_data_sources

pytestmark = pytest.mark.spark

ROWS = 3000

TYPES_SQL = """
    select id,
      case when id % 11 = 0 then null else
        timestamp'2026-11-22 07:00:00.123456' + make_interval(0, 0, 0, 0, 0, 0, id * 1.5)
      end as ts,
      timestamp_ntz'1969-12-31 23:59:59.999999' + make_interval(0, 0, 0, 0, 0, 0, id * 7.25)
        as ntz,
      case when id % 13 = 0 then null else
        date_add(date'0001-01-01', cast(id * 211 as int)) end as old_date,
      timestamp'1677-09-22 12:34:56.654321' + make_interval(0, 0, 0, cast(id as int), 0, 0, 0)
        as old_ts,
      cast(concat(case when id % 2 = 0 then '-' else '' end, repeat('9', 36),
                  lpad(cast(id % 100 as string), 2, '0')) as decimal(38, 0)) as dec38,
      cast(concat(cast(id as string), '.', lpad(cast(id * 7919 as string), 18, '0'))
           as decimal(38, 18)) as dec18,
      case when id % 7 = 0 then null else cast(id / 7 as decimal(10, 2)) end as dec10,
      case when id % 17 = 0 then null else cast(concat('b', id, x'00ff') as binary) end
        as bin,
      case when id % 5 = 0 then null else array(id, null, id + 1) end as arr,
      array(named_struct('a', id, 'b', concat('x', id)), null) as arr_struct,
      map(concat('k', id % 3), named_struct('v', id, 'w', array(cast(id as double))))
        as map_struct,
      case when id % 19 = 0 then null else
        named_struct('x', id, 'inner', named_struct(
          'd', date_add(date'1500-01-01', cast(id as int)),
          't', timestamp'1970-01-01 00:00:00' - make_interval(0, 0, 0, cast(id as int), 0, 0, 0),
          'm', map(id, concat('v', id))))
      end as st
    from range({n})
"""


def rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=lambda r: r[0])


@pytest.fixture(scope="module")
def typed(spark: Any) -> Any:
    return spark.sql(TYPES_SQL.format(n=ROWS)).repartition(3)


def test_schema_has_every_kind(typed: Any) -> None:
    kinds = typed.schema.simpleString()
    for kind in ("timestamp", "timestamp_ntz", "date", "decimal(38,0)", "decimal(38,18)",
                 "binary", "array<struct", "map<string,struct", "struct<x:bigint"):
        assert kind in kinds, kinds


def test_aorc_write_read_by_spark_and_aorc(spark: Any, typed: Any,
                                           tmp_path: pathlib.Path) -> None:
    out = str(tmp_path / "aorc")
    uris = aorc.spark.write(typed, out, compression="zstd", stripe_size=64 * 1024)
    assert len(uris) == 3
    expected = rows(typed)
    native = spark.read.orc(out)
    assert native.schema.simpleString() == typed.schema.simpleString()
    assert rows(native) == expected
    ours = aorc.spark.read(spark, out)
    assert ours.schema.simpleString() == typed.schema.simpleString()
    assert rows(ours) == expected


def test_spark_write_read_by_aorc(spark: Any, typed: Any, tmp_path: pathlib.Path) -> None:
    out = str(tmp_path / "spark")
    typed.write.option("compression", "zlib").orc(out)
    expected = rows(spark.read.orc(out))
    assert expected == rows(typed)
    ours = aorc.spark.read(spark, out, split_bytes=1)
    assert ours.schema.simpleString() == typed.schema.simpleString()
    assert rows(ours) == expected
    some = aorc.spark.read(spark, out, columns=["st", "id", "dec38"],
                           filters=[("id", ">=", 1000), ("id", "<", 1100)])
    assert rows(some.select("id", "st", "dec38")) == rows(
        typed.where("id >= 1000 and id < 1100").select("id", "st", "dec38"))
    if has_data_sources():
        assert aorc.spark.register(spark)
        source = spark.read.format("aorc").load(out)
        assert source.schema.simpleString() == typed.schema.simpleString()
        assert rows(source) == expected


def test_char_varchar_table_read_by_aorc(spark: Any, tmp_path: pathlib.Path) -> None:
    where = tmp_path / "chars"
    table = f"aorc_chars_{abs(hash(str(where))) % 10**8}"
    spark.sql(f"create table {table} (id bigint, c char(5), v varchar(8)) using orc "
              f"location '{where.as_posix()}'")
    try:
        spark.sql(f"insert into {table} select id, concat('c', id % 100), "
                  f"case when id % 4 = 0 then null else concat('v', id) end from range(500)")
        expected = rows(spark.read.orc(str(where)))
        assert expected and expected == rows(spark.table(table))
        assert expected[1][1] == "c1   "  # char(5) is padded
        ours = aorc.spark.read(spark, str(where))
        assert ours.schema.simpleString() == "struct<id:bigint,c:string,v:string>"
        assert rows(ours) == expected
    finally:
        spark.sql(f"drop table if exists {table}")


def test_timestamps_beyond_nanoseconds(spark: Any, tmp_path: pathlib.Path) -> None:
    """Timestamps outside Arrow nanoseconds (year 1000, Spark's 9999-12-31 "end of time")
    round-trip: aorc.spark.write keeps them (Spark reads them back) and aorc.spark.read reads
    them in microseconds, as Spark holds them."""
    df = spark.sql("select 1 as id, timestamp'1000-03-01 12:34:56.654321' as ts union all "
                   "select 2, timestamp'9999-12-31 23:59:59.999999'")
    out = str(tmp_path / "old")
    aorc.spark.write(df, out)
    assert rows(spark.read.orc(out)) == rows(df)
    assert rows(aorc.spark.read(spark, out)) == rows(df)
    native = str(tmp_path / "native")
    df.write.orc(native)
    assert rows(aorc.spark.read(spark, native)) == rows(df)
