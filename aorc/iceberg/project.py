"""Field-id projection: a data file's columns, as aorc read them, in the table's schema.

Iceberg matches a file's columns to the table's by field id, never by name or position, so
a column renamed after the file was written still reads, a column added later reads as nulls
(or its ``initial-default``), a dropped one is left out, and ``int``/``float``/``decimal``
columns widen to ``long``/``double``/wider decimals. :func:`project_batch` does that for one
batch of a file, nested fields included, and gives pyiceberg's Arrow types
(:func:`arrow_type`): ``string``, ``list``, ``time64``, the ``arrow.uuid`` extension,
``fixed_size_binary``.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from pyiceberg.types import (
    FixedType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    TimeType,
    UUIDType,
)

from aorc.errors import SchemaError
from aorc.format.types import OrcType, TypeKind
from aorc.iceberg.arrays import list_parts
from aorc.iceberg.schema import FileIds, arrow_type

__all__ = ["convert_primitive", "project_batch"]


def _arrow_field(f: NestedField) -> pa.Field:
    return pa.field(f.name, arrow_type(f.field_type), nullable=f.optional)


def _missing(f: NestedField, n: int, path: str) -> pa.Array:
    t = arrow_type(f.field_type)
    if f.initial_default is not None:
        return pa.repeat(pa.scalar(f.initial_default, type=t), n)
    if f.required:
        raise SchemaError(f"{path}: required field {f.name!r} (id {f.field_id}) is not in the "
                          "data file")
    return pa.nulls(n, t)


def project_batch(schema: StructType, batch: pa.RecordBatch, root: OrcType, ids: FileIds,
                  path: str) -> pa.RecordBatch:
    """``batch`` (top-level columns of a file whose type tree is ``root``) in ``schema``.

    Raises:
        SchemaError: a file column whose type cannot be read as the table's type (a change
            Iceberg does not allow), or a required field the file lacks.
    """
    by_id = ids.children(root)
    arrays = []
    for f in schema.fields:
        found = by_id.get(f.field_id)
        if found is not None and root.field_names[found[0]] in batch.schema.names:
            node = found[1]
            arr = batch.column(root.field_names[found[0]])
            arrays.append(_project(f.field_type, arr, node, ids, f"{path}: {f.name}"))
        else:
            arrays.append(_missing(f, batch.num_rows, path))
    out_schema = pa.schema([_arrow_field(f) for f in schema.fields])
    return pa.RecordBatch.from_arrays(arrays, schema=out_schema)


def _project(t: IcebergType, arr: pa.Array, node: OrcType, ids: FileIds, path: str
             ) -> pa.Array:
    if isinstance(t, StructType):
        if node.kind != TypeKind.STRUCT:
            raise _mismatch(path, t, node)
        by_id = ids.children(node)
        children = []
        for f in t.fields:
            found = by_id.get(f.field_id)
            if found is None:
                children.append(_missing(f, len(arr), path))
            else:
                children.append(_project(f.field_type, arr.field(found[0]), found[1], ids,
                                         f"{path}.{f.name}"))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=[_arrow_field(f) for f in t.fields],
                                          mask=mask)
    if isinstance(t, ListType):
        if node.kind != TypeKind.LIST:
            raise _mismatch(path, t, node)
        offsets, values, mask = list_parts(arr)
        values = _project(t.element_type, values, node.children[0], ids, f"{path}.element")
        return pa.ListArray.from_arrays(offsets.cast(pa.int32()), values,
                                        type=arrow_type(t), mask=mask)
    if isinstance(t, MapType):
        if node.kind != TypeKind.MAP:
            raise _mismatch(path, t, node)
        offsets, entries, mask = list_parts(arr)
        keys = _project(t.key_type, entries.field(0), node.children[0], ids, f"{path}.key")
        items = _project(t.value_type, entries.field(1), node.children[1], ids,
                         f"{path}.value")
        return pa.MapArray.from_arrays(offsets, keys, items, type=arrow_type(t), mask=mask)
    assert isinstance(t, PrimitiveType)
    if node.kind.is_compound:
        raise _mismatch(path, t, node)
    return convert_primitive(t, arr, path)


def convert_primitive(t: PrimitiveType, arr: pa.Array, path: str) -> pa.Array:
    """A primitive column, as aorc read it (or as :mod:`aorc.iceberg.schema` writes it), in
    the Arrow type pyiceberg gives ``t`` (promotions included)."""
    want = arrow_type(t)
    if arr.type == want:
        return arr
    try:
        if isinstance(t, TimeType):
            return arr.cast(pa.int64()).cast(want)
        if isinstance(t, UUIDType):
            return pa.ExtensionArray.from_storage(want, arr.cast(pa.binary(16)))
        if isinstance(t, FixedType):
            return arr.cast(want)
        if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(want) and \
                arr.type.tz != want.tz:
            arr = arr.cast(pa.timestamp(arr.type.unit, want.tz))
        return arr.cast(want, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"{path}: cannot read {arr.type} as Iceberg {t}: {exc}") from exc


def _mismatch(path: str, t: Any, node: OrcType) -> SchemaError:
    return SchemaError(f"{path}: the file's ORC {node.kind.name.lower()} column cannot be "
                       f"read as Iceberg {t}")
