"""The canonical form of rows in the corpus of other writers' files (``tests/data/writers/``):
what ``scripts/build_writers_corpus.py`` records from each writer's own reader and what the
corpus test turns aorc's tables into before comparing.

One row is a list with one value per top-level column: booleans, integers and floats as JSON
numbers (float32 values by their shortest decimal form, as Java's ``Float.toString``);
strings as strings; binary as lowercase hex; decimals as strings with exactly the type's
scale; dates as days since 1970-01-01; a ``timestamp`` as ``{"wall_ns": ...}`` (the writer's
wall-clock time, nanoseconds since 1970-01-01 00:00 on that clock; ORC Java's entries also
carry the instant, ``"instant_ns"``); a ``timestamp with local time zone`` as
``{"instant_ns": ...}``; lists as lists; maps as lists of ``[key, value]`` pairs; structs as
objects; a union as its value. Depends only on pyarrow and numpy, so an old pyarrow in a
throwaway virtualenv can import it by path.
"""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["canonical_rows", "canonical_value", "int_timestamps"]


def int_timestamps(t: pa.DataType) -> pa.DataType:
    """``t`` with timestamps as int64 and dates as int32 (nested ones too; not in unions)."""
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_date32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(int_timestamps(f.type)) for f in t])
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(int_timestamps(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(int_timestamps(t.key_type)),
                       t.item_field.with_type(int_timestamps(t.item_type)))
    return t


def _nanos(t: pa.TimestampType, value: int) -> int:
    return value * {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[t.unit]


def canonical_value(t: pa.DataType, value: Any) -> Any:
    """One value (as ``to_pylist`` gives it after :func:`int_timestamps`) in canonical form."""
    if value is None:
        return None
    if pa.types.is_timestamp(t):
        return {"instant_ns" if t.tz else "wall_ns": _nanos(t, value)}
    if pa.types.is_float32(t):
        return float(str(np.float32(value)))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(value).hex()
    if pa.types.is_decimal(t):
        with decimal.localcontext(decimal.Context(prec=100)):
            return format(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-t.scale)),
                          "f")
    if pa.types.is_dictionary(t):
        return canonical_value(t.value_type, value)
    if pa.types.is_struct(t):
        return {f.name: canonical_value(f.type, value[f.name]) for f in t}
    if pa.types.is_map(t):
        return [[canonical_value(t.key_type, k), canonical_value(t.item_type, v)]
                for k, v in value]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [canonical_value(t.value_type, v) for v in value]
    if pa.types.is_union(t):
        for f in t:  # the value alone: the first child type that takes it
            if isinstance(value, (bool, int, float, str, bytes)):
                return canonical_value(f.type, value) if not pa.types.is_union(f.type) else value
        return value
    if isinstance(value, float):
        return float(value)
    return value


def canonical_rows(table: pa.Table) -> list[list[Any]]:
    """The rows of ``table`` in canonical form."""
    columns = []
    for field, column in zip(table.schema, table.columns, strict=True):
        values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if not pa.types.is_union(field.type):
            values = values.cast(int_timestamps(field.type))
        columns.append([canonical_value(field.type, v) for v in values.to_pylist()])
    return [list(row) for row in zip(*columns, strict=True)] if columns else []
