"""Schema evolution by name, as ORC Java's schema evolution and Spark's ``mergeSchema`` do.

:func:`merge_schemas` unifies the schemas of a dataset's files; :func:`conform` brings one
file's rows into the unified (or a given) schema: a column missing from the file reads as
nulls (nested struct fields too), integers widen (int8 -> int16 -> int32 -> int64), float32
widens to float64, decimals widen (more integer digits, larger scale), and ORC's
char/varchar/string (all Arrow strings) interchange. Anything else is an incompatible change
and raises :class:`~aorc.errors.SchemaError` naming the file and the column.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError

__all__ = [
    "check_readable",
    "conform",
    "merge_schemas",
    "merge_types",
    "positional_names",
]

_INT_ORDER = [pa.int8(), pa.int16(), pa.int32(), pa.int64()]
_POSITIONAL = re.compile(r"_col\d+")


class _Incompatible(Exception):
    def __init__(self, path: str, a: pa.DataType, b: pa.DataType) -> None:
        super().__init__(path)
        self.path, self.a, self.b = path, a, b


def _strip(t: pa.DataType) -> pa.DataType:
    return pa.string() if pa.types.is_large_string(t) or pa.types.is_string_view(t) else t


def _merge(a: pa.DataType, b: pa.DataType, path: str) -> pa.DataType:
    a, b = _strip(a), _strip(b)
    if a == b:
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_null(b):
        return a
    if a in _INT_ORDER and b in _INT_ORDER:
        return max(a, b, key=_INT_ORDER.index)
    if pa.types.is_floating(a) and pa.types.is_floating(b) and not (
            pa.types.is_float16(a) or pa.types.is_float16(b)):
        return pa.float64()
    if pa.types.is_decimal(a) and pa.types.is_decimal(b):
        scale = max(a.scale, b.scale)
        digits = max(a.precision - a.scale, b.precision - b.scale)
        if digits + scale > 38:
            raise _Incompatible(path, a, b)
        return pa.decimal128(digits + scale, scale)
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        return pa.struct(_merge_fields(list(a), list(b), path))
    if pa.types.is_list(a) and pa.types.is_list(b):
        return pa.list_(pa.field(a.value_field.name,
                                 _merge(a.value_type, b.value_type, f"{path}[]")))
    if pa.types.is_map(a) and pa.types.is_map(b):
        key = _merge(a.key_type, b.key_type, f"{path}.key")
        return pa.map_(key, _merge(a.item_type, b.item_type, f"{path}.value"))
    raise _Incompatible(path, a, b)


def _merge_fields(a: Sequence[pa.Field], b: Sequence[pa.Field], prefix: str) -> list[pa.Field]:
    out = {f.name: f for f in a}
    for f in b:
        path = f"{prefix}.{f.name}" if prefix else f.name
        if f.name in out:
            old = out[f.name]
            out[f.name] = pa.field(f.name, _merge(old.type, f.type, path), True, old.metadata)
        else:
            out[f.name] = f.with_nullable(True)
    return list(out.values())


def merge_types(a: pa.DataType, b: pa.DataType, column: str) -> pa.DataType:
    """The type both ``a`` and ``b`` widen to.

    Raises:
        SchemaError: no such type; the message names the column.
    """
    try:
        return _merge(a, b, column)
    except _Incompatible as exc:
        raise SchemaError(f"column {exc.path!r}: incompatible types {exc.a} and {exc.b}") \
            from None


def merge_schemas(schemas: Iterable[tuple[str, pa.Schema]]) -> pa.Schema:
    """The union of the files' schemas by column name (first appearance order). A schema
    equal to one merged before is skipped (merging it again changes nothing): the files of
    a dataset mostly share a few schemas, merged once each.

    Raises:
        SchemaError: a column's types cannot be unified; names the file (the first of its
            schema) and the column.
    """
    fields: list[pa.Field] = []
    seen: dict[pa.Schema, list[pa.Schema]] = {}  # equal ignoring metadata: those merged
    for path, schema in schemas:
        alike = seen.setdefault(schema, [])
        if any(s is schema or s.equals(schema, check_metadata=True) for s in alike):
            continue
        alike.append(schema)
        try:
            fields = _merge_fields(fields, list(schema), "")
        except _Incompatible as exc:
            raise SchemaError(f"{path}: column {exc.path!r} is {exc.b} here but {exc.a} in "
                              f"other files of the dataset") from None
    return pa.schema(fields)


def check_readable(file_type: pa.DataType, target: pa.DataType, path: str,
                   column: str) -> None:
    """Raise SchemaError unless a file's column of ``file_type`` widens to ``target``."""
    try:
        merged = _merge(file_type, target, column)
    except _Incompatible:
        merged = None
    if merged is None or merged != _strip(target):
        raise SchemaError(f"{path}: column {column!r} is {file_type}, which cannot be read "
                          f"as {target}")


def positional_names(file_schema: pa.Schema, target: pa.Schema) -> pa.Schema:
    """A file schema whose columns are all ``_col0, _col1, ...`` (old Hive files) renamed by
    position to ``target``'s names; any other schema is returned unchanged."""
    names = file_schema.names
    if not names or not all(_POSITIONAL.fullmatch(n) for n in names):
        return file_schema
    renamed = [target.names[i] if i < len(target.names) else n for i, n in enumerate(names)]
    return pa.schema([f.with_name(n) for f, n in zip(file_schema, renamed, strict=True)])


def _nested(t: pa.DataType) -> bool:
    return bool(pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_map(t))


def _own_offsets(array: pa.ListArray | pa.MapArray) -> tuple[pa.Array, int, int]:
    """Offsets from 0 for the array's own slots, and the span of the values they use."""
    offsets = array.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    return pc.subtract(offsets, pa.scalar(first, offsets.type)), first, last - first


def _conform_array(array: pa.Array | pa.ChunkedArray, target: pa.DataType, path: str,
                   column: str) -> pa.Array | pa.ChunkedArray:
    if array.type == target:
        return array
    if not (_nested(target) and _nested(array.type)):
        check_readable(array.type, target, path, column)
        return array.cast(target)
    if isinstance(array, pa.ChunkedArray):
        chunks = [_conform_array(c, target, path, column) for c in array.chunks]
        return pa.chunked_array(chunks, target)
    mask = array.is_null() if array.null_count else None
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        children = []
        names = {array.type.field(i).name: i for i in range(array.type.num_fields)}
        for field in target:
            sub = f"{column}.{field.name}"
            if field.name in names:
                child = array.field(names[field.name])
                children.append(_conform_array(child, field.type, path, sub))
            else:
                children.append(pa.nulls(len(array), field.type))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_list(target) and pa.types.is_list(array.type):
        # Offsets as they are (a sliced array's start where the slice does), the values
        # (struct fields added over time, say) conformed in turn.
        offsets, first, span = _own_offsets(array)
        values = _conform_array(array.values.slice(first, span), target.value_type, path,
                                f"{column}[]")
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    if pa.types.is_map(target) and pa.types.is_map(array.type):
        offsets, first, span = _own_offsets(array)
        keys = _conform_array(array.keys.slice(first, span), target.key_type, path,
                              f"{column}.key")
        items = _conform_array(array.items.slice(first, span), target.item_type, path,
                               f"{column}.value")
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)
    check_readable(array.type, target, path, column)  # raises: a struct is no list
    return array.cast(target)


def conform(table: pa.Table, target: pa.Schema, path: str) -> pa.Table:
    """``table`` (one file's rows) in the schema ``target``: columns by name, missing ones
    as nulls, widened types; columns not in ``target`` are dropped.

    Raises:
        SchemaError: a column cannot be read as its target type (names ``path`` and it).
    """
    if not len(target):
        return table.select([])
    columns = []
    for field in target:
        if field.name in table.column_names:
            col = table.column(field.name)
            columns.append(_conform_array(col, field.type, path, field.name))
        else:
            columns.append(pa.nulls(table.num_rows, field.type))
    return pa.Table.from_arrays(columns, schema=target)
