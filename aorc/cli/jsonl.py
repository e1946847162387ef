"""JSON lines of record batches, rendered by a Cython kernel (:mod:`aorc.cli._jsonl`).

:func:`jsonl_text` gives what ``json.dumps(row) + "\\n"`` gives for every row (keys in column
order, ``", "`` and ``": "`` separators, non-ASCII escaped), with a ``to_json`` per value
given by the caller for the types it does not handle itself. Integers, booleans, strings,
timestamps (UTC or naive, years 1..9999) are written by the kernel from the columns' own
buffers, with the GIL released; floats, dates and decimals from Arrow's texts of them (one
cast per column); values of other types (nested, binary, time, ...) from the caller's
``to_json`` and ``json.dumps``. No Python object per value on the first kinds, which is where
the time went (about 5 us a row for ``json.dumps`` of a dict). Floats are written in Arrow's
shortest round-trip form, with ``.0`` added to integral values so that they stay floats
(``1e+16`` may read ``10000000000000000.0``); every other text is the one ``json.dumps``
gives: non-finite floats are ``NaN``, ``Infinity`` and ``-Infinity``, unquoted, as pyarrow's
JSON reader reads them back.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.cli import _jsonl
from aorc.cli.values import column_values, decimal_texts, json_default

__all__ = ["batch_jsonl", "batch_jsonl_bytes", "jsonl_bytes", "jsonl_text"]

ToJson = Callable[[pa.Array], list[Any]]
Default = Callable[[Any], Any] | None


_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _civil(days: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Year, month and day of days since 1970-01-01 (proleptic Gregorian calendar, as
    ``datetime`` and Arrow use; H. Hinnant's algorithm, vectorised)."""
    z = days + 719_468
    era = np.floor_divide(z, 146_097)
    doe = z - era * 146_097
    yoe = (doe - doe // 1_460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    return yoe + era * 400 + (month <= 2), month, day


def _four_digit_years(col: pa.Array) -> bool:
    """Whether every date is in years 1000-9999 (Arrow and ``isoformat`` agree there)."""
    lowest, highest = pc.min_max(col).values()
    if not lowest.is_valid:
        return True
    return bool(1000 <= lowest.as_py().year and highest.as_py().year <= 9999)


Spec = tuple[int, bytes, Any, Any, Any, Any, int, int]
_EMPTY = np.zeros(0, np.uint8)


def _valid(col: pa.Array) -> np.ndarray | None:
    """1 per valid row (``None``: no nulls)."""
    if col.null_count == 0:
        return None
    return np.asarray(col.is_valid().to_numpy(zero_copy_only=False), np.uint8)


def _values(col: pa.Array, kind: pa.DataType) -> np.ndarray:
    """The values of a fixed-width column as ``kind``, without a copy when it is of that width
    already (the values under nulls are whatever the buffer holds: the kernel skips them)."""
    if col.type.bit_width != kind.bit_width or pa.types.is_boolean(col.type):
        col = col.cast(kind)
    dtype = np.uint8 if kind == pa.uint8() else np.int64
    return np.frombuffer(col.buffers()[1], dtype)[col.offset:col.offset + len(col)]


def _text(kind: int, prefix: bytes, texts: pa.Array) -> Spec:
    """A spec of a string array's text (offsets made absolute int64, as the kernel takes)."""
    if not (pa.types.is_string(texts.type) or pa.types.is_large_string(texts.type)):
        texts = texts.cast(pa.string())
    _, offsets, data = texts.buffers()
    width = np.int64 if pa.types.is_large_string(texts.type) else np.int32
    bounds = np.frombuffer(offsets, width)[texts.offset:texts.offset + len(texts) + 1]
    raw = _EMPTY if data is None else np.frombuffer(data, np.uint8)
    return (kind, prefix, _valid(texts), np.ascontiguousarray(bounds, np.int64), raw, None,
            0, 0)


def _in_years(col: pa.Array, per_second: int) -> bool:
    """Whether every timestamp is in years 1..9999 (what the kernel writes)."""
    lowest, highest = pc.min_max(col.cast(pa.int64())).values()
    if not lowest.is_valid:
        return True
    days = np.array([lowest.as_py(), highest.as_py()]) // per_second // 86_400
    years = _civil(days)[0]
    return bool(years.min() >= 1 and years.max() <= 9999)


def _spec(col: pa.Array, prefix: bytes, to_json: ToJson, default: Default) -> Spec:
    """How the kernel writes one column."""
    t = col.type
    if pa.types.is_integer(t) and t != pa.uint64():
        return (_jsonl.INT, prefix, _valid(col), None, None, _values(col, pa.int64()), 0, 0)
    if pa.types.is_integer(t):
        return _text(_jsonl.TEXT, prefix, col.cast(pa.string()))
    if pa.types.is_boolean(t):
        return (_jsonl.BOOL, prefix, _valid(col), None, None, _values(col, pa.uint8()), 0, 0)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _text(_jsonl.STRING, prefix, col)
    if pa.types.is_floating(t) and pc.all(pc.is_finite(col)).as_py() is not False:
        return _text(_jsonl.FLOAT_TEXT, prefix, col.cast(pa.float64()).cast(pa.string()))
    if pa.types.is_timestamp(t) and t.tz in (None, "UTC", "+00:00"):
        per_second = _PER_SECOND[t.unit]
        if _in_years(col, per_second):
            return (_jsonl.TIMESTAMP, prefix, _valid(col), None, None,
                    _values(col, pa.int64()), per_second, 1 if t.tz else 0)
    if pa.types.is_date32(t) and _four_digit_years(col):
        return _text(_jsonl.QUOTED, prefix, col.cast(pa.string()))
    if isinstance(t, pa.Decimal128Type) and 0 <= t.scale <= 6:  # plain notation
        words = np.frombuffer(col.buffers()[1], np.uint64)[2 * col.offset:
                                                             2 * (col.offset + len(col))]
        return (_jsonl.DECIMAL, prefix, _valid(col), None, None, words, t.scale, 0)
    if pa.types.is_decimal(t):  # plain notation, as json_default's
        return _text(_jsonl.QUOTED, prefix, decimal_texts(col))
    values = to_json(col)
    if all(v is None or isinstance(v, str) for v in values):
        return _text(_jsonl.STRING, prefix, pa.array(values, pa.string()))
    return _text(_jsonl.TEXT, prefix, pa.array(
        [None if v is None else json.dumps(v, default=default) for v in values], pa.string()))


def jsonl_bytes(columns: Sequence[pa.Array], names: Sequence[str], to_json: ToJson,
                default: Default = None) -> memoryview:
    """The rows of ``columns`` as JSON lines (ASCII), each ending with a newline.

    Args:
        columns: equal-length arrays.
        names: their keys (a later duplicate name wins, as in a dict).
        to_json: a column's values made JSON-friendly (Python objects ``json.dumps``
            takes), for the types handled here only in part or not at all.
        default: ``json.dumps``'s ``default`` for those values.

    Raises:
        ValueError: a string is not valid UTF-8.
    """
    rows = len(columns[0]) if columns else 0
    if not columns or rows == 0:
        return memoryview(b"{}\n" * rows)
    last = {name: i for i, name in enumerate(names)}  # first place, last value: a dict's
    specs = [_spec(columns[i], ("{" if n == 0 else ", ").encode() + json.dumps(
                 names[i]).encode("ascii") + b": ", to_json, default)
             for n, i in enumerate(last.values())]
    return _jsonl.render_lines(specs, rows)


def jsonl_text(columns: Sequence[pa.Array], names: Sequence[str], to_json: ToJson,
               default: Default = None) -> str:
    """:func:`jsonl_bytes` as text."""
    return str(jsonl_bytes(columns, names, to_json, default), "ascii")


def batch_jsonl(batch: pa.RecordBatch) -> str:
    """The batch's rows as JSON lines (``json.dumps`` of each row, made column-wise)."""
    return jsonl_text(batch.columns, batch.schema.names, column_values, json_default)


def batch_jsonl_bytes(batch: pa.RecordBatch) -> memoryview:
    """:func:`batch_jsonl` as bytes (ASCII: non-ASCII text is escaped)."""
    return jsonl_bytes(batch.columns, batch.schema.names, column_values, json_default)
