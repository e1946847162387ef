"""Spark's timestamp types through aorc's own readers and writers (not only ``aorc.spark``):
a ``TIMESTAMP_NTZ`` column Spark writes (a ``bigint`` of microseconds marked
``spark.sql.catalyst.type=timestamp_ntz``) reads back in ``aorc.read_table`` as a naive
``timestamp[us]``, filters on it take datetimes, and a table aorc writes (the field read
back, or a naive timestamp field carrying that marker) reads in ``spark.read.orc`` as
``timestamp_ntz``; a zoned Arrow timestamp (ORC ``timestamp with local time zone``) reads in
Spark as ``timestamp`` with the same instants where Spark can parse that ORC type (4.2 and
later; 3.5 and 4.0 refuse it, which is checked too). Judged by Spark's own values.
"""

from __future__ import annotations

import datetime
import json
import pathlib
from typing import Any

import pyarrow as pa
import pytest

import aorc.sync
from aorc.format.types import ORC_ATTRIBUTES_METADATA_KEY

pytestmark = pytest.mark.spark

UTC = datetime.UTC
NTZ_SQL = """
    select id,
      timestamp_ntz'1969-12-31 23:59:59.999999' + make_interval(0, 0, 0, 0, 0, 0, id * 7.25)
        as ntz,
      named_struct('n', case when id % 3 = 0 then null else
        timestamp_ntz'2262-04-12 00:00:00' + make_interval(0, 0, 0, cast(id as int), 0, 0, 0)
        end) as st
    from range(50)
"""


def _spark_version() -> tuple[int, int]:
    import pyspark
    major, minor = pyspark.__version__.split(".")[:2]
    return int(major), int(minor)


def test_spark_ntz_reads_as_naive_timestamps(spark: Any, tmp_path: pathlib.Path) -> None:
    out = str(tmp_path / "ntz")
    df = spark.sql(NTZ_SQL)
    df.write.orc(out)
    expected = sorted(tuple(r) for r in spark.read.orc(out).collect())
    table = aorc.sync.read_table(out)
    assert table.schema.field("ntz").type == pa.timestamp("us")
    assert table.schema.field("st").type.field("n").type == pa.timestamp("us")
    got = sorted((r["id"], r["ntz"], (r["st"]["n"],)) for r in table.to_pylist())
    assert got == [(i, n, (s.n,)) for i, n, s in expected]
    assert got[0][1] == datetime.datetime(1969, 12, 31, 23, 59, 59, 999999)
    some = aorc.sync.read_table(out, filters=[("ntz", ">=", datetime.datetime(1970, 1, 1, 0, 5))])
    assert sorted(some.column("id").to_pylist()) == [
        i for i, n, _ in expected if n >= datetime.datetime(1970, 1, 1, 0, 5)]
    # aorc writes the table back as Spark wrote it: Spark reads timestamp_ntz again
    again = str(tmp_path / "again.orc")
    aorc.sync.write_table(table, again)
    back = spark.read.orc(again)
    assert back.schema.simpleString() == df.schema.simpleString()
    assert sorted(tuple(r) for r in back.collect()) == expected


def test_marked_naive_field_is_spark_ntz(spark: Any, tmp_path: pathlib.Path) -> None:
    marker = {ORC_ATTRIBUTES_METADATA_KEY: json.dumps({"spark.sql.catalyst.type":
                                                       "timestamp_ntz"})}
    values = [datetime.datetime(2020, 1, 2, 3, 4, 5, 6), None,
              datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    schema = pa.schema([pa.field("ntz", pa.timestamp("us"), metadata=marker),
                        pa.field("plain", pa.timestamp("us"))])
    table = pa.table([pa.array(values, pa.timestamp("us")),
                      pa.array(values[:2] * 2, pa.timestamp("us"))], schema=schema)
    path = str(tmp_path / "marked.orc")
    aorc.sync.write_table(table, path)
    with aorc.sync.open_reader(path) as reader:
        assert reader.orc_type == "struct<ntz:bigint,plain:timestamp>"
    df = spark.read.orc(path)
    assert df.schema.simpleString() == "struct<ntz:timestamp_ntz,plain:timestamp>"
    assert [r.ntz for r in df.collect()] == values
    assert aorc.sync.read_table(path, timestamp_unit="us").column("ntz").to_pylist() == values


def test_instant_columns_with_spark(spark: Any, tmp_path: pathlib.Path) -> None:
    instants = [datetime.datetime(2026, 3, 29, 1, 30, 0, 123456, tzinfo=UTC), None,
                datetime.datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC)]
    path = str(tmp_path / "instant.orc")
    aorc.sync.write_table(pa.table({"at": pa.array(instants, pa.timestamp("us", "UTC"))}), path)
    with aorc.sync.open_reader(path) as reader:
        assert reader.orc_type == "struct<at:timestamp with local time zone>"
    if _spark_version() < (4, 2):  # ORC Java before 2.2 in Spark cannot parse the type
        with pytest.raises(Exception):  # noqa: B017 (Py4J/Connect errors alike)
            spark.read.orc(path).collect()
        return
    df = spark.read.orc(path)
    assert df.schema.simpleString() == "struct<at:timestamp>"
    # the session zone is UTC: Spark's naive datetimes are the instants' UTC wall clocks
    assert [r.at for r in df.collect()] == [None if v is None else v.replace(tzinfo=None)
                                           for v in instants]
    # and Spark's own TimestampType written back reads in aorc as the same instants
    out = str(tmp_path / "back")
    df.write.orc(out)
    back = aorc.sync.read_table(out, use_writer_timezone=True, timestamp_unit="us")
    assert back.column("at").to_pylist() == instants


def test_instants_just_before_the_epoch(spark: Any, tmp_path: pathlib.Path) -> None:
    """A quirk of ORC's timestamp encoding as ORC Java writes it (seconds truncated toward
    zero, and a reader that takes a second off negative values with a fraction): an instant
    in (-1 s, 0) cannot be told from its mirror in (0, 1 s). ORC Java (1.5 to 2.3, see the
    writers corpus) reads its own -0.5 s as +0.5 s; aorc writes such values as ORC Java
    does, so aorc and Spark read the same value back (from -1 s down they are exact)."""
    values = [datetime.datetime(1969, 12, 31, 23, 59, 59, 500000),
              datetime.datetime(1969, 12, 31, 23, 59, 58, 500000)]
    path = str(tmp_path / "epoch.orc")
    aorc.sync.write_table(pa.table({"t": pa.array(values, pa.timestamp("us"))}), path)
    ours = aorc.sync.read_table(path, timestamp_unit="us").column("t").to_pylist()
    assert ours == [datetime.datetime(1970, 1, 1, 0, 0, 0, 500000), values[1]]
    assert [r.t for r in spark.read.orc(path).collect()] == ours
