"""Spark reads the files aorc writes: every type Spark maps from ORC, with every codec.

Random tables (nulls at every level, empty strings, extremes, NaN, nested lists/maps/structs,
decimals up to precision 38, timestamps before 1970 and after 2038, dates from year 1 on) are
written by the writer under test, read back with ``spark.read.orc`` and compared with the
original. Spark keeps microseconds, so timestamps are cut to microseconds before writing.
With the session time zone and the writer time zone both UTC, Spark's TimestampType values
are the naive wall clock of the table. Unions are left out: Spark cannot read them.

Filtered reads (``id`` ranges with ORC filter pushdown) make ORC Java skip row groups and
seek with the row index positions, in every column at once, so they check the positions.
"""

from __future__ import annotations

import datetime
import decimal
import math
import zoneinfo
from functools import reduce
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from spark_tables import (
    UNITS_PER_DAY,
    as_java_reads,
    dataframe_from_arrow,
    in_calendar_gap,
    read_orc,
    spark_table,
    to_arrow,
)

F = pytest.importorskip("pyspark.sql.functions")

pytestmark = pytest.mark.spark

CODECS = ["zstd", "zlib", "snappy", "lz4", "none"]
SPARK_CODEC_NAMES = {c: c.upper() for c in CODECS}  # CompressionKind names in ORC Java
ROWS = 2500


# ---------------------------------------------------------------------------------------------
# comparison


def spark_ddl(t: pa.DataType) -> str:
    """The Spark SQL type Spark must infer from the ORC type aorc writes for Arrow ``t``."""
    simple = [
        (pa.types.is_boolean, "boolean"), (pa.types.is_int8, "tinyint"),
        (pa.types.is_int16, "smallint"), (pa.types.is_int32, "int"),
        (pa.types.is_int64, "bigint"), (pa.types.is_float32, "float"),
        (pa.types.is_float64, "double"), (pa.types.is_string, "string"),
        (pa.types.is_binary, "binary"), (pa.types.is_timestamp, "timestamp"),
        (pa.types.is_date32, "date"),
    ]  # fmt: skip
    for test, name in simple:
        if test(t):
            return name
    if pa.types.is_decimal(t):
        return f"decimal({t.precision},{t.scale})"
    if pa.types.is_map(t):
        return f"map<{spark_ddl(t.key_type)},{spark_ddl(t.item_type)}>"
    if pa.types.is_list(t):
        return f"array<{spark_ddl(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{spark_ddl(f.type)}" for f in t) + ">"
    raise TypeError(f"no Spark type for {t}")


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return type(a) is type(b) and a == b


def _naive(t: pa.DataType) -> pa.DataType:
    """``t`` with time zones dropped (Spark returns UTC instants; the table holds wall clocks)."""
    if pa.types.is_timestamp(t):
        return pa.timestamp(t.unit)
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_naive(t.key_type)),
                       t.item_field.with_type(_naive(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_naive(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(_naive(f.type)) for f in t])
    return t


def assert_spark_equal(got: pa.Table, want: pa.Table, what: str) -> None:
    """Spark's ``toArrow()`` result equals ``want`` (types as Spark maps them, values exact).

    NaN equals NaN; timestamps compare as UTC wall clocks; decimals compare with their scale.
    """
    assert got.column_names == want.column_names, what
    assert got.num_rows == want.num_rows, f"{what}: {got.num_rows} rows, expected {want.num_rows}"
    naive_want = pa.schema([f.with_type(_naive(f.type)) for f in want.schema])
    got = got.cast(naive_want)
    want = want.cast(naive_want)
    for name in want.column_names:
        a, b = got.column(name), want.column(name)
        if a.equals(b):
            continue
        rows_a, rows_b = a.to_pylist(), b.to_pylist()
        for i, (x, y) in enumerate(zip(rows_a, rows_b, strict=True)):
            if not _same_value(x, y):
                raise AssertionError(
                    f"{what}: column {name!r} row {i} differs\n  spark:    {x!r}\n  expected: {y!r}"
                )


def read_spark(spark: Any, parts: list[tuple[Path, str | None]]) -> list[tuple[str, pa.Table]]:
    """Spark's schema (simpleString) and rows of each (file, filter) part, in ``id`` order.

    All parts are read in one Spark job (a union of one scan per part, each with its own
    pushed-down filter), which saves the per-job cost of a local Spark.
    """
    scans, ddls = [], []
    for i, (path, where) in enumerate(parts):
        df = read_orc(spark, str(path))
        ddls.append(df.schema.simpleString())
        if where is not None:
            df = df.where(where)
        scans.append(df.withColumn("_part", F.lit(i)))
    union = reduce(lambda a, b: a.unionByName(b), scans)
    rows = to_arrow(union)
    out = []
    for i, ddl in enumerate(ddls):
        part = rows.filter(pc.equal(rows["_part"], i)).drop_columns(["_part"])
        out.append((ddl, part.take(pc.sort_indices(part["id"]))))
    return out


def expected_ddl(table: pa.Table) -> str:
    """The simpleString Spark's schema must have for ``table``."""
    return "struct<" + ",".join(f"{f.name}:{spark_ddl(f.type)}" for f in table.schema) + ">"


# ---------------------------------------------------------------------------------------------
# tests


@pytest.fixture(scope="module")
def table(writer_under_test: str) -> pa.Table:
    """The random table shared by the codec tests."""
    return spark_table(11, ROWS, writer_under_test)


def test_spark_reads_every_type(spark, jvm_orc, write_orc, table, tmp_path):
    paths = []
    for codec in CODECS:
        path = tmp_path / f"all-{codec}.orc"
        write_orc(table, path, compression=codec, row_index_stride=1000)
        info = jvm_orc.file_info(path)
        assert info["compression"] == SPARK_CODEC_NAMES[codec]
        assert info["rows"] == table.num_rows
        paths.append(path)
    expected = as_java_reads(table)
    results = read_spark(spark, [(p, None) for p in paths])
    for codec, (ddl, got) in zip(CODECS, results, strict=True):
        assert ddl == expected_ddl(table), codec
        assert_spark_equal(got, expected, f"{codec} file read by Spark")


def test_spark_reads_many_stripes_with_seeks(spark, jvm_orc, write_orc, writer_under_test,
                                             tmp_path):
    table = spark_table(12, 12_000, writer_under_test)
    path = tmp_path / "stripes.orc"
    write_orc(table, path, compression="zstd", stripe_size=256 * 1024, row_index_stride=1000,
              compression_block_size=16 * 1024)
    info = jvm_orc.file_info(path)
    assert len(info["stripe_rows"]) > 2, info["stripe_rows"]
    assert sum(info["stripe_rows"]) == table.num_rows
    # rows from the middle of a stripe across a stripe boundary: ORC Java seeks to them
    first, second = info["stripe_rows"][:2]
    lo, hi = first // 2 + 7, first + second // 2 + 3
    spark.conf.set("spark.sql.orc.filterPushdown", "true")
    (_, whole), (_, part) = read_spark(spark, [(path, None), (path, f"id >= {lo} AND id < {hi}")])
    expected = as_java_reads(table)
    assert_spark_equal(whole, expected, "multi-stripe file")
    assert_spark_equal(part, expected.slice(lo, hi - lo), f"multi-stripe file, ids {lo}..{hi}")


def test_spark_row_index_strides(spark, jvm_orc, write_orc, writer_under_test, tmp_path):
    table = spark_table(13, 7000, writer_under_test)
    strides = [1000, 3333] if writer_under_test == "pyarrow" else [0, 1000, 3333]
    paths = []
    for stride in strides:
        path = tmp_path / f"stride-{stride}.orc"
        write_orc(table, path, compression="zlib", row_index_stride=stride,
                  compression_block_size=8 * 1024)
        assert jvm_orc.file_info(path)["row_index_stride"] == stride
        paths.append(path)
    spark.conf.set("spark.sql.orc.filterPushdown", "true")
    # a range starting inside a late row group: the reader skips the groups before it
    lo, hi = 4100, 4700
    expected = as_java_reads(table).slice(lo, hi - lo)
    results = read_spark(spark, [(p, f"id >= {lo} AND id < {hi}") for p in paths])
    for stride, (_, got) in zip(strides, results, strict=True):
        assert_spark_equal(got, expected, f"stride {stride}, ids {lo}..{hi}")


def _old_values() -> pa.Table:
    """Dates around the Julian/Gregorian switch and far back; timestamps with microseconds
    before 1900, around the epoch (negative with fractions) and after 2038."""
    dates = [
        datetime.date(1, 1, 1), datetime.date(100, 3, 1), datetime.date(1000, 2, 28),
        datetime.date(1000, 3, 1), datetime.date(1500, 2, 28), datetime.date(1582, 10, 4),
        datetime.date(1582, 10, 5), datetime.date(1582, 10, 10), datetime.date(1582, 10, 14),
        datetime.date(1582, 10, 15), datetime.date(1600, 2, 29), datetime.date(1899, 12, 31),
        datetime.date(1969, 12, 31), datetime.date(1970, 1, 1), datetime.date(2038, 1, 19),
        datetime.date(9999, 12, 31),
    ]  # fmt: skip
    micros = [
        -62135596800_000000, -12219292800_000001, -12219292800_000000, -2208988800_123456,
        -1_000_001, -1_000_000, -999_999, -500_000, -1, 0, 1, 999_999, 1_000_000,
        2147483647_000001, 2147483648_999999, 4102444800_000007, 253402300799_999999,
    ]  # fmt: skip
    n = max(len(dates), len(micros))
    dates = (dates * 2)[:n]
    micros = (micros * 2)[:n]
    ts = pa.array(micros, pa.timestamp("us"))
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "d": pa.array(dates, pa.date32()),
        "ts": ts,
        "ts_utc": ts.cast(pa.timestamp("us", tz="UTC")),
        "nested": pa.array([[{"d": d, "t": t}] for d, t in zip(dates, micros, strict=True)],
                           pa.list_(pa.struct([("d", pa.date32()), ("t", pa.timestamp("us"))]))),
    })  # fmt: skip


def test_spark_reads_old_dates_and_far_timestamps(spark, jvm_orc, write_orc, writer_under_test,
                                                  tmp_path):
    if writer_under_test != "aorc":
        pytest.skip("pyarrow.orc writes no calendar and negative fractions Java cannot read")
    table = _old_values()
    path = tmp_path / "old.orc"
    write_orc(table, path)
    assert jvm_orc.file_info(path)["proleptic"], "the file must say PROLEPTIC_GREGORIAN"
    # Spark's own file of the same rows (hybrid calendar, rebased by Spark) must read the
    # same, except the ten days missing from the hybrid calendar, which neither can return
    spark_dir = tmp_path / "spark-old"
    dataframe_from_arrow(spark, table).coalesce(1).write.orc(str(spark_dir))
    (ddl, got), (_, own) = read_spark(spark, [(path, None), (spark_dir, None)])
    assert ddl == expected_ddl(table)
    assert_spark_equal(got, as_java_reads(table), "old dates and far timestamps")
    keep = pc.invert(pc.or_(
        in_calendar_gap(pc.cast(table["d"], pa.int32()), 1),
        in_calendar_gap(pc.cast(table["ts"], pa.int64()), UNITS_PER_DAY["us"]),
    ))  # fmt: skip
    assert_spark_equal(got.filter(keep), own.filter(keep),
                       "aorc's file against Spark's file of the same rows")


ZONES = ["America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]


def _zone_table(rows: int) -> pa.Table:
    """Naive wall clocks 1900..2100 (microseconds) that exist in every zone of ZONES (a wall
    clock in a daylight-saving gap has no instant: ORC Java moves it forward), and the same
    values as UTC instants."""
    rng = np.random.default_rng(17)
    micros = rng.integers(-2_200_000_000, 4_100_000_000, rows) * 10**6
    micros += rng.integers(0, 10**6, rows)
    micros = micros[(micros < -(10**6)) | (micros >= 0)]  # no [-1 s, 0): see as_java_reads
    epoch = datetime.datetime(1970, 1, 1)
    zones = [zoneinfo.ZoneInfo(z) for z in ZONES]

    def exists(us: int) -> bool:
        wall = epoch + datetime.timedelta(microseconds=us)
        return all(
            wall.replace(tzinfo=z).astimezone(datetime.UTC).astimezone(z).replace(tzinfo=None)
            == wall
            for z in zones
        )

    micros = np.array([us for us in micros.tolist() if exists(us)], dtype=np.int64)
    ts = pa.array(micros, pa.timestamp("us"))
    return pa.table({
        "id": pa.array(np.arange(len(micros), dtype=np.int64)),
        "ts": ts,
        "ts_utc": ts.cast(pa.timestamp("us", tz="UTC")),
    })  # fmt: skip


def test_spark_reads_writer_time_zones(spark, jvm_orc, write_orc, writer_under_test, tmp_path):
    """Naive timestamps are wall clocks in the writer's zone: Spark (session and JVM in UTC)
    must read the same wall clocks whatever zone the file was written in, the instants of
    the time-zone aware column unchanged, and ORC Java's statistics must hold the wall
    clocks. User metadata must come through as written."""
    if writer_under_test != "aorc":
        pytest.skip("pyarrow.orc.write_table cannot choose the writer time zone")
    table = _zone_table(3000)
    metadata = {"aorc.test": b"\x00\xffbytes", "note": "h\u00e9llo"}
    paths = []
    for zone in ZONES:
        path = tmp_path / f"{zone.replace('/', '-')}.orc"
        write_orc(table, path, timezone=zone, metadata=metadata)
        info = jvm_orc.file_info(path)
        assert info["metadata"] == {"aorc.test": b"\x00\xffbytes", "note": "h\u00e9llo".encode()}
        stats = jvm_orc.file_statistics(path)[2]
        wall = pc.min_max(table["ts"].cast(pa.int64()))
        assert (stats["min"], stats["max"]) == (wall["min"].as_py() * 1000,
                                                wall["max"].as_py() * 1000), zone
        paths.append(path)
    for zone, (_, got) in zip(ZONES, read_spark(spark, [(p, None) for p in paths]), strict=True):
        assert_spark_equal(got, table, f"file written in {zone}")
