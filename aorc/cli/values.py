"""Values of Arrow columns made JSON-friendly, as the ``aorc`` command prints them: decimals
and temporal values as their ISO/decimal text, binary as base64, map entries as key/value
objects, non-finite floats as floats: ``json.dumps`` writes them ``NaN``, ``Infinity`` and
``-Infinity``, unquoted, which is what pyarrow's JSON reader (and so ``aorc convert``) reads
back as floats (``json.dumps`` of these is the reference rendering of
a row, which :mod:`aorc.cli.jsonl` makes column-wise); and columns as pyarrow's CSV writer
takes them (nested values as JSON text, binary as base64).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["column_values", "csv_column", "decimal_texts", "json_default", "plain",
           "timestamp_texts"]


def json_default(value: Any) -> Any:
    """A value `json.dumps` cannot take, as the CLI writes it."""
    if isinstance(value, decimal.Decimal):
        return format(value, "f")  # plain notation: 0.000000000, not 0E-9 (as Polars)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def plain(value: Any) -> Any:
    """Values of ``to_pylist`` made JSON-friendly: map entries as key/value objects."""
    if isinstance(value, list):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return [{"key": plain(k), "value": plain(v)} for k, v in value]
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def column_values(col: pa.Array) -> list[Any]:
    """A column's values made JSON-friendly (as :func:`plain` and :func:`json_default`
    would), with fast paths for flat columns."""
    t = col.type
    if pa.types.is_nested(t) or pa.types.is_union(t) or pa.types.is_dictionary(t):
        return [plain(v) for v in col.to_pylist()]
    if pa.types.is_timestamp(t) and t.tz in (None, "UTC", "+00:00"):
        return timestamp_texts(col)
    values: list[Any] = col.to_pylist()
    if (pa.types.is_temporal(t) or pa.types.is_decimal(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)):
        return [None if v is None else json_default(v) for v in values]
    return values


_UNITS = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def timestamp_texts(col: pa.Array) -> list[Any]:
    """ISO texts of timestamps, as ``isoformat`` gives them (fraction only when not zero:
    6 digits, or 9 with nanoseconds; ``+00:00`` for UTC), computed column-wise."""
    per_second = _UNITS[col.type.unit]
    ticks = col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    seconds, rest = np.divmod(ticks, per_second)
    whole = pc.strftime(pa.array(seconds, pa.timestamp("s")), format="%Y-%m-%dT%H:%M:%S")
    nanos = rest * (1_000_000_000 // per_second)
    suffix = "+00:00" if col.type.tz else ""
    out: list[Any] = []
    for text, n, valid in zip(whole.to_pylist(), nanos.tolist(),
                              col.is_valid().to_pylist(), strict=True):
        if not valid:
            out.append(None)
        elif not n:
            out.append(text + suffix)
        elif n % 1000:
            out.append(f"{text}.{n:09d}{suffix}")
        else:
            out.append(f"{text}.{n // 1000:06d}{suffix}")
    return out


def decimal_texts(col: pa.Array) -> pa.Array:
    """Decimals as text in plain notation with the type's scale (``0.000000000`` for a zero
    of scale 9, as Polars writes it, where Arrow's cast and ``str(Decimal)`` give ``0E-9``)."""
    texts = col.cast(pa.string())
    if not pc.any(pc.match_substring(texts, "E")).as_py():
        return texts
    return pa.array([None if v is None else format(v, "f") for v in col.to_pylist()],
                    pa.string())


def _timestamp_column(arr: pa.Array) -> pa.Array:
    """Timestamps as the text JSON lines hold (``isoformat``'s)."""
    if arr.type.tz in (None, "UTC", "+00:00"):
        return pa.array(timestamp_texts(arr), pa.string())
    return pa.array([None if v is None else v.isoformat() for v in arr.to_pylist()],
                    pa.string())


def csv_column(arr: pa.Array) -> pa.Array:
    """A column as pyarrow's CSV writer can write it: nested values as JSON text, binary as
    base64, timestamps and decimals as the texts of JSON lines (``isoformat``'s ISO 8601,
    plain-notation decimals), so that each has one spelling in every output format."""
    t = arr.type
    if pa.types.is_timestamp(t):
        return _timestamp_column(arr)
    if pa.types.is_decimal(t):
        return decimal_texts(arr)
    if pa.types.is_nested(t) or pa.types.is_union(t):
        return pa.array([None if v is None else json.dumps(plain(v), default=json_default)
                         for v in arr.to_pylist()], pa.string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.array([None if v is None else base64.b64encode(v).decode("ascii")
                         for v in arr.to_pylist()], pa.string())
    return arr
