"""JSON lines of record batches, built column by column.

:func:`jsonl_text` gives what ``json.dumps(row) + "\\n"`` gives for every row (keys in column
order, ``", "`` and ``": "`` separators, non-ASCII escaped), with a ``to_json`` per value
given by the caller for the types it does not handle itself. Integers, booleans, strings,
finite floats, dates and the timestamps the caller renders as text are made into JSON text by
Arrow kernels over whole columns, and rows are assembled by one join: no Python object per
value on those columns, which is where the time went (about 5 us a row for
``json.dumps`` of a dict). Floats are written in Arrow's shortest round-trip form, with
``.0`` added to integral values so that they stay floats (``1e+16`` may read
``10000000000000000.0``); every other text is the one ``json.dumps`` gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.cli.values import column_values, json_default

__all__ = ["batch_jsonl", "batch_jsonl_bytes", "jsonl_text"]

_NEEDS_ESCAPE = r'[\x00-\x1f"\\]'


def _clean(texts: pa.Array) -> bool:
    """Whether no byte of the strings' data needs escaping in JSON (all ASCII, no control
    character, quote or backslash): one pass over the data buffer."""
    data = texts.buffers()[2]
    if data is None:
        return True
    view = np.frombuffer(data, np.uint8)
    if texts.offset or len(texts) < len(view):  # a slice: only its own bytes
        bounds = np.frombuffer(texts.buffers()[1], np.int32)
        view = view[bounds[texts.offset]:bounds[texts.offset + len(texts)]]
    return not bool(((view < 0x20) | (view == 0x22) | (view == 0x5C) | (view >= 0x80)).any())


def _quoted(texts: pa.Array) -> pa.Array:
    """JSON strings of a string array (nulls stay null): quoted as they are where no
    character needs escaping, else ``json.dumps`` of the value."""
    texts = texts.cast(pa.string())
    if _clean(texts):
        return pc.binary_join_element_wise('"', texts, '"', "")
    plain = pc.and_(pc.string_is_ascii(texts),
                    pc.invert(pc.match_substring_regex(texts, _NEEDS_ESCAPE)))
    quoted = pc.binary_join_element_wise('"', texts, '"', "")
    if pc.all(pc.fill_null(plain, True)).as_py() is not False:
        return quoted
    escaped = [None if v is None or ok else json.dumps(v)
               for v, ok in zip(texts.to_pylist(), plain.to_pylist(), strict=True)]
    return pc.if_else(pc.fill_null(plain, True), quoted, pa.array(escaped, pa.string()))


def _floats(col: pa.Array) -> pa.Array | None:
    """JSON numbers of a float column, or ``None`` when a value is not finite (the caller's
    texts then, as ``json.dumps`` writes them)."""
    if pc.all(pc.is_finite(col.fill_null(0.0))).as_py() is False:
        return None
    texts = col.cast(pa.float64()).cast(pa.string())
    whole = pc.invert(pc.match_substring_regex(texts, "[.eE]"))
    return pc.if_else(whole, pc.binary_join_element_wise(texts, ".0", ""), texts)


ToJson = Callable[[pa.Array], list[Any]]
Default = Callable[[Any], Any] | None


def _column(col: pa.Array, to_json: ToJson, default: Default) -> pa.Array:
    """Each value's JSON text (``"null"`` for a null)."""
    t = col.type
    if pa.types.is_integer(t):
        out = col.cast(pa.string())
    elif pa.types.is_boolean(t):
        out = pc.if_else(col, "true", "false")
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        out = _quoted(col)
    elif pa.types.is_floating(t):
        floats = _floats(col)
        out = floats if floats is not None else _texts(col, to_json, default)
    elif pa.types.is_timestamp(t) and t.tz in (None, "UTC", "+00:00"):
        stamps = _timestamps(col)
        out = stamps if stamps is not None else _texts(col, to_json, default)
    elif pa.types.is_date32(t) and _four_digit_years(col):
        out = _quoted(col.cast(pa.string()))
    elif pa.types.is_decimal(t) and t.scale >= 0:  # Arrow's text is str(Decimal)'s
        out = pc.binary_join_element_wise('"', col.cast(pa.string()), '"', "")
    else:
        out = _texts(col, to_json, default)
    return pc.fill_null(out, "null")


_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _digits(out: np.ndarray, at: int, values: np.ndarray, width: int) -> None:
    """Write ``values`` as zero-padded decimal digits into columns ``at..at+width``."""
    rest = values.copy()
    for j in range(width - 1, -1, -1):
        out[:, at + j] = 48 + rest % 10
        rest //= 10


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


def _fixed_texts(out: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array of each row's first ``lengths[i]`` bytes of ``out``."""
    keep = np.arange(out.shape[1]) < lengths[:, None]
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(pa.string(), len(lengths), [
            None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(out[keep])])
    return pa.Array.from_buffers(pa.large_string(), len(lengths),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(out[keep])])


_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def _timestamps(col: pa.Array) -> pa.Array | None:
    """Quoted ISO texts of timestamps, as ``isoformat`` writes them (a fraction only when not
    zero: 6 digits, or 9 when there are nanoseconds; ``+00:00`` for UTC), built as fixed-width
    bytes by integer arithmetic over the column; ``None`` when a year is outside 1..9999."""
    per_second = _PER_SECOND[col.type.unit]
    ticks = col.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    seconds, rest = np.divmod(ticks, per_second)
    days, secs = np.divmod(seconds, 86_400)
    year, month, day = _civil(days)
    if len(year) and (year.min() < 1 or year.max() > 9999):
        return None
    nanos = rest * (1_000_000_000 // per_second)
    suffix = b'+00:00"' if col.type.tz else b'"'
    out = np.zeros((len(ticks), 30 + len(suffix)), np.uint8)
    out[:, 0], out[:, 5], out[:, 8], out[:, 11] = ord('"'), ord("-"), ord("-"), ord("T")
    out[:, 14], out[:, 17], out[:, 20] = ord(":"), ord(":"), ord(".")
    hour, rest_s = np.divmod(secs, 3_600)
    minute, second = np.divmod(rest_s, 60)
    for at, values, width in ((1, year, 4), (6, month, 2), (9, day, 2), (12, hour, 2),
                              (15, minute, 2), (18, second, 2), (21, nanos, 9)):
        _digits(out, at, values, width)
    fraction = np.where(nanos == 0, 0, np.where(nanos % 1000 == 0, 7, 10))
    tail = np.frombuffer(suffix, np.uint8)
    for length in (0, 7, 10):
        rows = fraction == length
        out[rows, 20 + length:20 + length + len(tail)] = tail
    texts = _fixed_texts(out, 20 + fraction + len(tail))
    return pc.if_else(col.is_valid(), texts, pa.scalar(None, texts.type))


def _four_digit_years(col: pa.Array) -> bool:
    """Whether every date is in years 1000-9999 (Arrow and ``isoformat`` agree there)."""
    lowest, highest = pc.min_max(col).values()
    if not lowest.is_valid:
        return True
    return bool(1000 <= lowest.as_py().year and highest.as_py().year <= 9999)


def _texts(col: pa.Array, to_json: ToJson, default: Default) -> pa.Array:
    """The caller's JSON-friendly values, as ``json.dumps`` writes them (strings quoted
    column-wise)."""
    values = to_json(col)
    if all(v is None or isinstance(v, str) for v in values):
        return _quoted(pa.array(values, pa.string()))
    return pa.array([None if v is None else json.dumps(v, default=default) for v in values],
                    pa.string())


def jsonl_text(columns: Sequence[pa.Array], names: Sequence[str], to_json: ToJson,
               default: Default = None) -> str:
    """The rows of ``columns`` as JSON lines, each ending with a newline.

    Args:
        columns: equal-length arrays.
        names: their keys (a later duplicate name wins, as in a dict).
        to_json: a column's values made JSON-friendly (Python objects ``json.dumps``
            takes), for the types handled here only in part or not at all.
        default: ``json.dumps``'s ``default`` for those values.
    """
    if not columns or len(columns[0]) == 0:
        return "{}\n" * (len(columns[0]) if columns else 0)
    last = {name: i for i, name in enumerate(names)}  # first place, last value: a dict's
    order = list(last.values())
    parts: list[Any] = []
    for n, i in enumerate(order):
        key = json.dumps(names[i])
        parts.append(("{" if n == 0 else ", ") + key + ": ")
        parts.append(_column(columns[i], to_json, default))
    parts.append("}\n")
    wide = any(isinstance(p, pa.Array) and p.type == pa.large_string() for p in parts)
    if wide:  # rare (a column of more than 2 GiB of text): every part in large strings
        parts = [p.cast(pa.large_string()) if isinstance(p, pa.Array)
                 else pa.scalar(p, pa.large_string()) for p in parts]
    lines = pc.binary_join_element_wise(*parts, pa.scalar("", pa.large_string()) if wide else "")
    _, offsets, data = lines.buffers()
    kind = np.int64 if lines.type == pa.large_string() else np.int32
    bounds = np.frombuffer(offsets, kind)[lines.offset:lines.offset + len(lines) + 1]
    return bytes(memoryview(data)[bounds[0]:bounds[-1]]).decode("utf-8")


def batch_jsonl(batch: pa.RecordBatch) -> str:
    """The batch's rows as JSON lines (``json.dumps`` of each row, made column-wise)."""
    return jsonl_text(batch.columns, batch.schema.names, column_values, json_default)


def batch_jsonl_bytes(batch: pa.RecordBatch) -> bytes:
    """:func:`batch_jsonl` as UTF-8 bytes (ASCII: non-ASCII text is escaped)."""
    return batch_jsonl(batch).encode("ascii")
