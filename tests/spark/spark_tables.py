"""Tables Spark can read back exactly, and what Spark returns for them.

Spark keeps microseconds, so :func:`spark_table` cuts timestamps to microseconds. What ORC
Java (and so Spark) returns for values as ORC Java writes them differs from the input in two
known places, modelled by :func:`as_java_reads` (see :func:`_java_reads_back`). Spark's own
ORC writer keeps one entry per map key, sorted (:func:`spark_maps`).
"""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from helpers.random_tables import ALL_TYPES, random_table

__all__ = [
    "UNITS_PER_DAY",
    "as_java_reads",
    "dataframe_from_arrow",
    "in_calendar_gap",
    "map_leaves",
    "micros_type",
    "read_orc",
    "spark_maps",
    "spark_table",
    "to_arrow",
]


def dataframe_from_arrow(spark: Any, table: pa.Table) -> Any:
    """``spark.createDataFrame(table)``; skips the test on a PySpark that cannot take an
    Arrow table (3.5)."""
    from pyspark.errors import PySparkTypeError

    try:
        return spark.createDataFrame(table)
    except PySparkTypeError as exc:
        if "CANNOT_INFER_SCHEMA_FOR_TYPE" not in str(exc):
            raise
        import pytest

        pytest.skip("this PySpark cannot make a DataFrame from an Arrow table (4.0 can)")


def read_orc(spark: Any, path: str) -> Any:
    """``spark.read.orc(path)``; skips the test when this Spark cannot parse ORC's
    ``timestamp with local time zone`` (Spark 3.5 to 4.1), which the file under test holds.

    The schema is resolved inside the ``try``: a classic session infers it when the reader is
    made, but Spark Connect only when the plan is first analysed (``df.schema``)."""
    from pyspark.errors import ParseException

    try:
        df = spark.read.orc(path)
        df.schema  # noqa: B018 -- Connect analyses (and fails) here, not in read.orc
        return df
    except ParseException as exc:
        if "timestamp with local time zone" not in str(exc):
            raise
        import pytest

        pytest.skip("this Spark cannot read ORC 'timestamp with local time zone' (4.2 can)")


def to_arrow(df: Any) -> pa.Table:
    """A DataFrame's rows as an Arrow table: ``toArrow()`` (PySpark 4), else the classic
    session's Arrow collection (PySpark 3.5)."""
    if hasattr(df, "toArrow"):
        return df.toArrow()
    from aorc.spark.compat import to_arrow_schema

    batches = df._collect_as_arrow()
    return pa.Table.from_batches(batches) if batches else \
        to_arrow_schema(df.schema).empty_table()


def micros_type(t: pa.DataType) -> pa.DataType:
    """``t`` with every timestamp unit made microseconds (Spark's precision)."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_map(t):
        return pa.map_(
            t.key_field.with_type(micros_type(t.key_type)),
            t.item_field.with_type(micros_type(t.item_type)),
        )
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(micros_type(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(micros_type(f.type)) for f in t])
    return t


def map_leaves(arr: pa.Array, fn: Any) -> pa.Array:
    """``arr`` rebuilt with ``fn`` applied to each primitive leaf array (canonical input)."""
    t = arr.type
    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_map(t):
        keys = map_leaves(arr.keys, fn)
        items = map_leaves(arr.items, fn)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=t, mask=mask)
    if pa.types.is_list(t):
        values = map_leaves(arr.values, fn)
        return pa.ListArray.from_arrays(arr.offsets, values, type=t, mask=mask)
    if pa.types.is_struct(t):
        children = [map_leaves(arr.field(i), fn) for i in range(t.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)
    return fn(arr)


def _pyarrow_readable(arr: pa.Array) -> pa.Array:
    """Known peer limits, for the pyarrow harness check only: ORC Java cannot read the
    negative timestamps with fractions that ORC C++ writes, and reads the dates before
    1582-10-15 it writes ten days off (no calendar flag)."""
    if pa.types.is_timestamp(arr.type):
        raw = pc.cast(arr, pa.int64())
        whole = pc.if_else(pc.less(raw, 0), pc.multiply(pc.divide(raw, 10**6), 10**6), raw)
        return pc.cast(whole, arr.type)
    if pa.types.is_date32(arr.type):
        limit = pa.scalar(datetime.date(1583, 1, 1), pa.date32())
        return pc.if_else(pc.less(arr, limit), limit, arr)
    return arr


_GAP_DAYS = (-141_437, -141_427)  # 1582-10-05 .. 1582-10-15 (exclusive), proleptic
UNITS_PER_DAY = {"s": 86_400, "ms": 86_400 * 10**3, "us": 86_400 * 10**6, "ns": 86_400 * 10**9}


def in_calendar_gap(raw: pa.Array, per_day: int) -> pa.Array:
    return pc.and_(pc.greater_equal(raw, _GAP_DAYS[0] * per_day),
                   pc.less(raw, _GAP_DAYS[1] * per_day))


def _java_reads_back(arr: pa.Array) -> pa.Array:
    """What Spark returns for values as ORC Java writes them.

    Timestamps: an instant in [-0.999 s, 0) comes back one second later (ORC Java's writer
    truncates the seconds of the floor milliseconds toward zero; Spark's own files do the
    same). Dates and timestamps: Spark goes through the hybrid calendar, which lacks
    1582-10-05..14; ORC Java turns those proleptic days into days ten days later (Spark's
    own writer turns them into 1582-10-15 instead: neither can be read back).
    """
    if pa.types.is_date32(arr.type):
        days = pc.cast(arr, pa.int32())
        shifted = pc.add(days, pa.scalar(10, pa.int32()))
        return pc.cast(pc.if_else(in_calendar_gap(days, 1), shifted, days), pa.date32())
    if not pa.types.is_timestamp(arr.type):
        return arr
    raw = pc.cast(arr, pa.int64())
    per_day = UNITS_PER_DAY[arr.type.unit]
    raw = pc.if_else(in_calendar_gap(raw, per_day), pc.add(raw, 10 * per_day), raw)
    per_milli = per_day // 86_400_000
    quirk = pc.and_(pc.greater_equal(raw, -999 * per_milli), pc.less(raw, 0))
    return pc.cast(pc.if_else(quirk, pc.add(raw, 1000 * per_milli), raw), arr.type)


def as_java_reads(table: pa.Table) -> pa.Table:
    """``table`` as ORC Java (and so Spark) reads it back from a file ORC Java could write."""
    columns = {n: map_leaves(c.combine_chunks(), _java_reads_back)
               for n, c in zip(table.column_names, table.columns, strict=True)}
    return pa.table(columns, schema=table.schema)


def spark_table(seed: int, rows: int, writer: str, types: dict[str, pa.DataType] | None = None
                ) -> pa.Table:
    """A random table Spark can read back exactly: ``id`` (0..rows-1) and the types."""
    table = random_table(seed, rows, types or ALL_TYPES)
    schema = pa.schema([f.with_type(micros_type(f.type)) for f in table.schema])
    table = table.cast(schema, safe=False)
    if writer == "pyarrow":
        table = pa.table({n: map_leaves(c.combine_chunks(), _pyarrow_readable)
                          for n, c in zip(table.column_names, table.columns, strict=True)})
    return table.add_column(0, "id", pa.array(np.arange(rows, dtype=np.int64)))


def _canonical(value: Any, t: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(t):
        entries: dict[Any, Any] = {}
        for key, item in value:
            entries[key] = _canonical(item, t.item_type)  # the last value of a key wins
        order = sorted(entries, key=lambda k: k.encode("utf-8") if isinstance(k, str) else k)
        return [(k, entries[k]) for k in order]
    if pa.types.is_list(t):
        return [_canonical(v, t.value_type) for v in value]
    if pa.types.is_struct(t):
        return {f.name: _canonical(value[f.name], f.type) for f in t}
    return value


def spark_maps(table: pa.Table) -> pa.Table:
    """``table`` with every map as Spark's ORC writer stores it: one entry per key (the last
    one), sorted by key (Spark hands ORC a ``java.util.TreeMap`` per value)."""
    columns = {}
    for f, column in zip(table.schema, table.columns, strict=True):
        if "map<" in str(f.type):
            column = pa.array([_canonical(v, f.type) for v in column.to_pylist()], f.type)
        columns[f.name] = column
    return pa.table(columns, schema=table.schema)
