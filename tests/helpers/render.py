r"""Render Arrow data as the ORC C++ row printer does (the conformance ``*.jsn.gz`` format).

The rules are those of ``../shared/orc-conformance/README.md``: one line per row, structs as
``{"name": value, ...}``, floats ``%.7g`` and doubles ``%.14g``, timestamps
``"YYYY-MM-DD HH:MM:SS.f"`` with trailing zeros of the nanoseconds trimmed (at least one digit),
decimals with exactly ``scale`` digits (legacy ``decimal(0,0)`` truncated to 6), binary as byte
lists, maps as key/value lists, unions as ``{"tag": n, "value": v}``, a non-struct root as bare
values, and strings with only ``\\ \" \b \f \n \r \t`` escaped.

Rendering is column-wise with pyarrow.compute so that 200k-row files render in well under a
second. The Arrow data is walked next to an ORC type (an :class:`OrcSchema`, a type string or
derived from the Arrow types); an Arrow type that does not match the ORC type raises
:class:`SchemaMismatch`, so rendering doubles as a check of the reader's Arrow mapping.

``exact=True`` prints floats with ``repr`` (shortest round-trip digits) instead of ``%g`` so
that equal rendered lines mean equal values; the differential tests compare tables that way.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .orc_schema import OrcSchema, parse_schema, schema_from_arrow, schema_from_arrow_type

__all__ = ["SchemaMismatch", "render", "render_array"]

LEGACY_DECIMAL_SCALE = 6
_BYTE_STRINGS = pa.array([str(i) for i in range(256)], pa.large_string())
_STRING_ESCAPES = [
    ("\\", "\\\\"),
    ('"', '\\"'),
    ("\b", "\\b"),
    ("\f", "\\f"),
    ("\n", "\\n"),
    ("\r", "\\r"),
    ("\t", "\\t"),
]
_TWO_DIGITS = pa.array([f"{i:02d}" for i in range(100)], pa.large_string())
_UNIT_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


class SchemaMismatch(AssertionError):
    """The Arrow data does not have the type the ORC schema maps to."""


class _Options:
    def __init__(self, exact: bool, union_tags: bool) -> None:
        self.exact = exact
        self.union_tags = union_tags


def render(
    data: pa.Table | pa.RecordBatch,
    orc_type: OrcSchema | str | None = None,
    *,
    exact: bool = False,
    union_tags: bool = True,
) -> list[str]:
    """Render every row of a table as the ORC C++ row printer would print it.

    Args:
        data: the table (or record batch) a reader returned.
        orc_type: the file's ORC type (tree or type string). ``None`` derives it from the Arrow
            schema. A non-struct ORC root expects a one-column table and prints bare values.
        exact: print floats with ``repr`` instead of ``%.7g``/``%.14g`` (lossless).
        union_tags: print unions as ``{"tag": n, "value": v}``; ``False`` prints only ``v``
            (for comparing with pyorc, which does not report tags).

    Returns:
        One string per row, without line terminators.

    Raises:
        SchemaMismatch: the table's columns or types do not match ``orc_type``.
    """
    if isinstance(data, pa.RecordBatch):
        data = pa.Table.from_batches([data])
    if orc_type is None:
        orc_type = schema_from_arrow(data.schema)
    elif isinstance(orc_type, str):
        orc_type = parse_schema(orc_type)
    opts = _Options(exact, union_tags)
    if orc_type.kind != "struct":
        if data.num_columns != 1:
            raise SchemaMismatch(
                f"root type {orc_type} is not a struct: expected one column, got {data.schema}"
            )
        return _finish(_render(_combine(data.column(0)), orc_type, opts, "<root>"))
    if list(data.column_names) != list(orc_type.names):
        raise SchemaMismatch(
            f"columns {data.column_names} do not match the ORC fields {list(orc_type.names)}"
        )
    if not orc_type.children:
        return ["{}"] * data.num_rows
    parts = [
        _render(_combine(data.column(i)), child, opts, name)
        for i, (name, child) in enumerate(zip(orc_type.names, orc_type.children, strict=True))
    ]
    return _finish(_join_struct(orc_type.names, parts))


def render_array(
    array: pa.Array | pa.ChunkedArray,
    orc_type: OrcSchema | str | None = None,
    *,
    exact: bool = False,
    union_tags: bool = True,
) -> list[str]:
    """Render each value of one array (see :func:`render` for the arguments)."""
    array = _combine(array)
    if orc_type is None:
        orc_type = schema_from_arrow_type(array.type)
    elif isinstance(orc_type, str):
        orc_type = parse_schema(orc_type)
    return _finish(_render(array, orc_type, _Options(exact, union_tags), "<value>"))


def _combine(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return column.chunk(0)
        return column.combine_chunks()
    return column


def _finish(strings: pa.Array) -> list[str]:
    lines: list[str] = strings.to_pylist()
    return lines


def _concat(*pieces: str | pa.Array) -> pa.Array:
    """Element-wise concatenation of string arrays and constant strings (as large_string)."""
    args = [
        pa.scalar(p, pa.large_string()) if isinstance(p, str) else p.cast(pa.large_string())
        for p in pieces
    ]
    return pc.binary_join_element_wise(*args, pa.scalar("", pa.large_string()))


def _render(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    """Render ``arr`` (an Arrow array of ORC type ``t``) to a non-null large_string array."""
    renderer = _RENDERERS.get(t.kind)
    if renderer is None:
        raise SchemaMismatch(f"{path}: cannot render ORC type {t}")
    _check_type(arr.type, t, path)
    out = renderer(arr, t, opts, path).cast(pa.large_string())
    if t.kind != "uniontype" and arr.null_count:
        out = pc.if_else(arr.is_null(), pa.scalar("null", pa.large_string()), out)
    return out


_TYPE_CHECKS: dict[str, Callable[[pa.DataType], bool]] = {
    "boolean": pa.types.is_boolean,
    "tinyint": pa.types.is_int8,
    "smallint": pa.types.is_int16,
    "int": pa.types.is_int32,
    "bigint": pa.types.is_int64,
    "float": pa.types.is_float32,
    "double": pa.types.is_float64,
    "string": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "binary": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
    "timestamp": lambda t: pa.types.is_timestamp(t) and t.tz is None,
    "timestamp with local time zone": lambda t: pa.types.is_timestamp(t) and t.tz is not None,
    "date": pa.types.is_date32,
    "decimal": pa.types.is_decimal,
    "array": lambda t: pa.types.is_list(t) or pa.types.is_large_list(t),
    "map": pa.types.is_map,
    "struct": pa.types.is_struct,
    "uniontype": pa.types.is_union,
}
_TYPE_CHECKS["char"] = _TYPE_CHECKS["varchar"] = _TYPE_CHECKS["string"]


def _check_type(at: pa.DataType, t: OrcSchema, path: str) -> None:
    ok = _TYPE_CHECKS[t.kind](at)
    if ok and t.kind == "decimal" and not t.is_legacy_decimal:
        ok = (at.precision, at.scale) == (t.precision, t.scale)
    if ok and t.kind == "struct":
        ok = [at.field(i).name for i in range(at.num_fields)] == list(t.names)
    if ok and t.kind == "uniontype":
        ok = at.num_fields == len(t.children)
    if not ok:
        raise SchemaMismatch(f"{path}: Arrow type {at} does not match ORC type {t}")


def _render_bool(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    return pc.if_else(arr.fill_null(False), "true", "false")


def _render_int(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    return pc.cast(arr.fill_null(0), pa.string())


def _render_float(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    values = arr.fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
    if opts.exact:
        texts = [repr(v) for v in values.tolist()]
    else:
        fmt = "%.7g" if t.kind == "float" else "%.14g"
        texts = [fmt % v for v in values.tolist()]
    out = np.array(texts, dtype=object)
    # glibc prints the sign of a NaN; Python's formatting does not.
    out[np.isnan(values) & np.signbit(values)] = "-nan"
    return pa.array(out, pa.string())


def _render_string(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    out = arr.fill_null("").cast(pa.large_string())
    for old, new in _STRING_ESCAPES:
        out = pc.replace_substring(out, old, new)
    return _concat('"', out, '"')


def _render_binary(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    offset_type = np.int64 if pa.types.is_large_binary(arr.type) else np.int32
    _, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, offset_type)[arr.offset : arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.empty(0, np.uint8)
    start, end = (int(offsets[0]), int(offsets[-1])) if len(offsets) else (0, 0)
    indices = pa.array(data[start:end].astype(np.int32))
    byte_strings = pa.DictionaryArray.from_arrays(indices, _BYTE_STRINGS).dictionary_decode()
    lists = pa.LargeListArray.from_arrays(pa.array(offsets.astype(np.int64) - start), byte_strings)
    return _concat("[", pc.binary_join(lists, pa.scalar(", ", pa.large_string())), "]")


def _render_date(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    days = arr.cast(pa.int32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    return _concat('"', *_civil_date(days), '"')


def _render_timestamp(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    nanos_per_unit = _UNIT_NANOS[arr.type.unit]
    values = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False) * nanos_per_unit
    seconds, nanos = np.divmod(values, 10**9)
    days, second_of_day = np.divmod(seconds, 86400)
    hour, rest = np.divmod(second_of_day, 3600)
    minute, second = np.divmod(rest, 60)
    fraction = pc.utf8_slice_codeunits(pc.cast(pa.array(nanos + 10**9), pa.string()), 1)
    fraction = pc.utf8_rtrim(fraction, characters="0")
    fraction = pc.if_else(pc.equal(fraction, ""), "0", fraction)
    clock = [_two_digits(hour), ":", _two_digits(minute), ":", _two_digits(second)]
    return _concat('"', *_civil_date(days), " ", *clock, ".", fraction, '"')


def _civil_date(days: np.ndarray) -> list[str | pa.Array]:
    """``Y-MM-DD`` pieces of proleptic Gregorian dates, the year unpadded as glibc prints it."""
    z = days + 719468
    era = np.floor_divide(z, 146097)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = np.where(mp < 10, mp + 3, mp - 9)
    year = yoe + era * 400 + (month <= 2)
    return [pc.cast(pa.array(year), pa.string()), "-", _two_digits(month), "-", _two_digits(day)]


def _two_digits(values: np.ndarray) -> pa.Array:
    indices = pa.array(values.astype(np.int32))
    return pa.DictionaryArray.from_arrays(indices, _TWO_DIGITS).dictionary_decode()


def _render_decimal(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    if t.is_legacy_decimal:
        # ORC C++ rescales Hive 0.11 decimals to 6 digits, truncating towards zero.
        scale, rounding = LEGACY_DECIMAL_SCALE, decimal.ROUND_DOWN
    else:
        scale, rounding = arr.type.scale, decimal.ROUND_HALF_EVEN
    quantum = decimal.Decimal(1).scaleb(-scale)
    context = decimal.Context(prec=100, rounding=rounding)
    texts = [
        "null" if v is None else format(v.quantize(quantum, context=context), "f")
        for v in arr.to_pylist()
    ]
    return pa.array(texts, pa.string())


def _render_list(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    items = _render(arr.values, t.children[0], opts, path + "[]")
    return _join_lists(arr.offsets, items)


def _render_map(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    entries = arr.values
    keys = _render(entries.field(0), t.children[0], opts, path + ".key")
    values = _render(entries.field(1), t.children[1], opts, path + ".value")
    pairs = _concat('{"key": ', keys, ', "value": ', values, "}")
    return _join_lists(arr.offsets, pairs)


def _join_lists(offsets: pa.Array, items: pa.Array) -> pa.Array:
    lists = pa.LargeListArray.from_arrays(offsets.cast(pa.int64()), items)
    return _concat("[", pc.binary_join(lists, pa.scalar(", ", pa.large_string())), "]")


def _render_struct(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    if not t.children:
        return pa.array(["{}"] * len(arr), pa.string())
    parts = [
        _render(arr.field(i), child, opts, f"{path}.{name}")
        for i, (name, child) in enumerate(zip(t.names, t.children, strict=True))
    ]
    return _join_struct(t.names, parts)


def _join_struct(names: tuple[str, ...], parts: list[pa.Array]) -> pa.Array:
    pieces: list[str | pa.Array] = []
    for i, (name, part) in enumerate(zip(names, parts, strict=True)):
        pieces.append(("{" if i == 0 else ", ") + f'"{name}": ')
        pieces.append(part)
    pieces.append("}")
    return _concat(*pieces)


def _render_union(arr: pa.Array, t: OrcSchema, opts: _Options, path: str) -> pa.Array:
    codes = arr.type.type_codes
    branch_of_code = np.full(max(codes) + 1, -1, np.int64)
    branch_of_code[list(codes)] = np.arange(len(codes))
    # Read type ids and offsets from the buffers: pyarrow's accessors ignore a slice's offset.
    buffers = arr.buffers()
    window = slice(arr.offset, arr.offset + len(arr))
    type_ids = np.frombuffer(buffers[1], np.int8)[window] if len(arr) else np.empty(0, np.int8)
    branch = branch_of_code[type_ids.astype(np.int64)]
    dense = arr.type.mode == "dense"
    rendered = []
    for i, child in enumerate(t.children):
        rendered.append(_render(arr.field(i), child, opts, f"{path}<{i}>"))
    starts = np.cumsum([0] + [len(r) for r in rendered[:-1]])
    if dense and len(arr):
        within = np.frombuffer(buffers[2], np.int32)[window].astype(np.int64)
    else:
        within = np.arange(len(arr))
    values = pa.concat_arrays(rendered).take(pa.array(starts[branch] + within))
    if not opts.union_tags:
        return values
    tags = pc.cast(pa.array(branch), pa.string())
    return _concat('{"tag": ', tags, ', "value": ', values, "}")


_Renderer = Callable[[pa.Array, OrcSchema, _Options, str], pa.Array]
_RENDERERS: dict[str, _Renderer] = {
    "boolean": _render_bool,
    "tinyint": _render_int,
    "smallint": _render_int,
    "int": _render_int,
    "bigint": _render_int,
    "float": _render_float,
    "double": _render_float,
    "string": _render_string,
    "char": _render_string,
    "varchar": _render_string,
    "binary": _render_binary,
    "date": _render_date,
    "timestamp": _render_timestamp,
    "timestamp with local time zone": _render_timestamp,
    "decimal": _render_decimal,
    "array": _render_list,
    "map": _render_map,
    "struct": _render_struct,
    "uniontype": _render_union,
}
