"""Iceberg schemas and ORC files: the Iceberg spec's ORC appendix, both ways.

Writing: :func:`file_schema` is the Arrow schema aorc's writer takes for the data files of an
Iceberg schema. Its fields carry ORC type attributes (``ORC:attributes`` field metadata, which
the writer puts on the ORC type nodes): ``iceberg.id`` and ``iceberg.required`` on every node
-- columns, struct fields, list elements, map keys and values -- and the type markers the
appendix defines:

==================  ==================================  ==================================
Iceberg             ORC                                 attributes
==================  ==================================  ==================================
``long``            ``bigint``                          ``iceberg.long-type=LONG``
``time``            ``bigint`` (microseconds of day)    ``iceberg.long-type=TIME``
``timestamp``       ``timestamp``
``timestamptz``     ``timestamp with local time zone``
``timestamp_ns``    as above (v3)                       ``iceberg.timestamp-unit=NANOS``
``binary``          ``binary``                          ``iceberg.binary-type=BINARY``
``uuid``            ``binary`` (16 bytes)               ``iceberg.binary-type=UUID``
``fixed(L)``        ``binary``                          ``iceberg.binary-type=FIXED``,
                                                        ``iceberg.length=L``
==================  ==================================  ==================================

(as Iceberg Java's ``ORCSchemaUtil`` writes them). :func:`to_file_batches` turns the data a
caller appends (matched to the schema by name; large, view and dictionary types, other
timestamp units, ``time64``, the ``arrow.uuid`` extension accepted) into batches of that
schema, checking what Iceberg requires (no nulls in required fields, lengths of fixed and
uuid values, lossless casts).

Reading: :func:`field_ids` finds the Iceberg field id of each ORC column of a file, from its
``iceberg.id`` attributes, or, for files without ids (written by Hive, Spark, pyarrow, ...),
from the table's name mapping (``schema.name-mapping.default``); :func:`output_schema` is the
Arrow schema pyiceberg's own scans return, which :mod:`aorc.iceberg.project` produces.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import MappedField, NameMapping
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StringType,
    StructType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from aorc.errors import SchemaError
from aorc.format.types import ORC_ATTRIBUTES_METADATA_KEY, OrcType, TypeKind
from aorc.iceberg.arrays import list_parts
from aorc.write.inputs import iter_record_batches

__all__ = [
    "BINARY_TYPE",
    "ICEBERG_ID",
    "ICEBERG_REQUIRED",
    "LENGTH",
    "LONG_TYPE",
    "TIMESTAMP_UNIT",
    "FileIds",
    "arrow_type",
    "field_ids",
    "file_schema",
    "file_type",
    "iceberg_attributes",
    "output_schema",
    "timestamp_unit_for",
    "to_file_batches",
]

ICEBERG_ID = "iceberg.id"
ICEBERG_REQUIRED = "iceberg.required"
LONG_TYPE = "iceberg.long-type"
BINARY_TYPE = "iceberg.binary-type"
LENGTH = "iceberg.length"
TIMESTAMP_UNIT = "iceberg.timestamp-unit"

#: Iceberg primitive types -> (Arrow type in the file, extra ORC attributes).
_PRIMITIVES: dict[type, tuple[pa.DataType, dict[str, str]]] = {
    BooleanType: (pa.bool_(), {}),
    IntegerType: (pa.int32(), {}),
    LongType: (pa.int64(), {LONG_TYPE: "LONG"}),
    FloatType: (pa.float32(), {}),
    DoubleType: (pa.float64(), {}),
    DateType: (pa.date32(), {}),
    TimeType: (pa.int64(), {LONG_TYPE: "TIME"}),
    TimestampType: (pa.timestamp("us"), {}),
    TimestamptzType: (pa.timestamp("us", "UTC"), {}),
    TimestampNanoType: (pa.timestamp("ns"), {TIMESTAMP_UNIT: "NANOS"}),
    TimestamptzNanoType: (pa.timestamp("ns", "UTC"), {TIMESTAMP_UNIT: "NANOS"}),
    StringType: (pa.string(), {}),
    UUIDType: (pa.binary(), {BINARY_TYPE: "UUID"}),
    BinaryType: (pa.binary(), {BINARY_TYPE: "BINARY"}),
}


# =========================================================================== writing

def iceberg_attributes(field: NestedField) -> dict[str, str]:
    """The ORC type attributes of an Iceberg field's node (see the module docstring)."""
    attrs = {ICEBERG_ID: str(field.field_id), ICEBERG_REQUIRED: str(field.required).lower()}
    t = field.field_type
    if isinstance(t, FixedType):
        attrs.update({BINARY_TYPE: "FIXED", LENGTH: str(len(t))})
    elif isinstance(t, PrimitiveType):
        attrs.update(_primitive(t, field.name)[1])
    return attrs


def _primitive(t: PrimitiveType, name: str) -> tuple[pa.DataType, dict[str, str]]:
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale), {}
    if isinstance(t, FixedType):
        return pa.binary(), {BINARY_TYPE: "FIXED", LENGTH: str(len(t))}
    found = _PRIMITIVES.get(type(t))
    if found is None:
        raise SchemaError(f"field {name!r}: aorc cannot write Iceberg type {t} to ORC")
    return found


def file_type(t: IcebergType, name: str = "") -> pa.DataType:
    """The Arrow type aorc writes for an Iceberg type (nested fields with attributes)."""
    if isinstance(t, StructType):
        return pa.struct([_file_field(f) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(_file_field(t.element_field))
    if isinstance(t, MapType):
        key = _file_field(t.key_field).with_nullable(False)
        return pa.map_(key, _file_field(t.value_field))
    assert isinstance(t, PrimitiveType)
    return _primitive(t, name)[0]


def _file_field(field: NestedField) -> pa.Field:
    meta = {ORC_ATTRIBUTES_METADATA_KEY: json.dumps(iceberg_attributes(field)).encode()}
    return pa.field(field.name, file_type(field.field_type, field.name), nullable=True,
                    metadata=meta)


def file_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema of the ORC data files of ``schema`` (see the module docstring)."""
    return pa.schema([_file_field(f) for f in schema.fields])


def timestamp_unit_for(schema: Schema | StructType) -> str:
    """The ``timestamp_unit`` to read a schema's files with: ``"ns"`` when it has nanosecond
    timestamps (Iceberg v3), else ``"us"`` (Iceberg's unit, which holds every ORC timestamp)."""
    ns = (TimestampNanoType, TimestamptzNanoType)
    struct = schema.as_struct() if isinstance(schema, Schema) else schema
    return "ns" if any(isinstance(t, ns) for t in _walk_types(struct)) else "us"


def _walk_types(t: IcebergType) -> Iterable[IcebergType]:
    yield t
    if isinstance(t, StructType):
        for f in t.fields:
            yield from _walk_types(f.field_type)
    elif isinstance(t, ListType):
        yield from _walk_types(t.element_type)
    elif isinstance(t, MapType):
        yield from _walk_types(t.key_type)
        yield from _walk_types(t.value_type)


def to_file_batches(schema: Schema, data: Any) -> list[pa.RecordBatch]:
    """``data`` (anything :func:`aorc.write_table` takes but async iterables: a Table, a
    RecordBatch, a RecordBatchReader, an iterable of them, a pandas or Polars DataFrame, ...)
    as record batches of :func:`file_schema`, columns matched by name.

    Raises:
        InputTypeError: ``data`` is of no kind a writer takes.
        SchemaError: a column the schema lacks, a required column missing or holding nulls,
            a type that cannot be converted, a value that does not fit (a sub-microsecond
            timestamp, a uuid that is not 16 bytes, ...).
    """
    target = file_schema(schema)
    out = []
    for batch in _batches(data):
        names = set(batch.schema.names)
        unknown = sorted(names - {f.name for f in schema.fields})
        if unknown:
            raise SchemaError(f"columns {unknown} are not in the Iceberg table's schema "
                              f"{[f.name for f in schema.fields]}")
        arrays = []
        for field in schema.fields:
            if field.name in names:
                arr = _convert(field, batch.column(field.name), field.name)
            elif field.required:
                raise SchemaError(f"required column {field.name!r} is missing from the data")
            else:
                arr = pa.nulls(batch.num_rows, file_type(field.field_type, field.name))
            arrays.append(arr)
        out.append(pa.RecordBatch.from_arrays(arrays, schema=target))
    return out


def _batches(data: Any) -> list[pa.RecordBatch]:
    return list(iter_record_batches(data))


def _convert(field: NestedField, arr: pa.Array, path: str,
             parent_valid: pa.Array | None = None) -> pa.Array:
    """One column (or nested field) in its file type; ``parent_valid`` marks the rows whose
    parents are not null (a required child may be null only under a null parent)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if field.required and arr.null_count:
        nulls = arr.is_null()
        if parent_valid is not None:
            nulls = pc.and_(nulls, parent_valid)
        if pc.any(nulls).as_py():
            raise SchemaError(f"required field {path!r} holds nulls")
    t = field.field_type
    if isinstance(t, StructType):
        return _convert_struct(t, arr, path)
    if isinstance(t, ListType):
        return _convert_list(t, arr, path)
    if isinstance(t, MapType):
        return _convert_map(t, arr, path)
    assert isinstance(t, PrimitiveType)
    return _convert_primitive(t, arr, path)


def _convert_struct(t: StructType, arr: pa.Array, path: str) -> pa.Array:
    if not pa.types.is_struct(arr.type):
        raise SchemaError(f"field {path!r}: expected a struct, got {arr.type}")
    names = [arr.type.field(i).name for i in range(arr.type.num_fields)]
    unknown = sorted(set(names) - {f.name for f in t.fields})
    if unknown:
        raise SchemaError(f"field {path!r}: fields {unknown} are not in the Iceberg schema")
    valid = arr.is_valid() if arr.null_count else None
    children = []
    for f in t.fields:
        if f.name in names:
            child = _convert(f, arr.field(names.index(f.name)), f"{path}.{f.name}", valid)
        elif f.required:
            raise SchemaError(f"required field {path}.{f.name} is missing from the data")
        else:
            child = pa.nulls(len(arr), file_type(f.field_type, f.name))
        children.append(child)
    fields = [_file_field(f) for f in t.fields]
    mask = arr.is_null() if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)


def _int32(offsets: pa.Array) -> pa.Array:
    if offsets.type != pa.int32():
        last = offsets[-1].as_py() if len(offsets) else 0
        if last > 2**31 - 1:
            raise SchemaError("a list column holds more than 2**31 elements in one batch")
        offsets = offsets.cast(pa.int32())
    return offsets


def _convert_list(t: ListType, arr: pa.Array, path: str) -> pa.Array:
    if pa.types.is_fixed_size_list(arr.type):
        arr = arr.cast(pa.list_(arr.type.value_field))
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        raise SchemaError(f"field {path!r}: expected a list, got {arr.type}")
    offsets, values, mask = list_parts(arr)
    values = _convert(t.element_field, values, f"{path}.element")
    return pa.ListArray.from_arrays(_int32(offsets), values, type=file_type(t, path),
                                    mask=mask)


def _convert_map(t: MapType, arr: pa.Array, path: str) -> pa.Array:
    if not pa.types.is_map(arr.type):
        raise SchemaError(f"field {path!r}: expected a map, got {arr.type}")
    offsets, entries, mask = list_parts(arr)
    keys = _convert(t.key_field, entries.field(0), f"{path}.key")
    items = _convert(t.value_field, entries.field(1), f"{path}.value")
    return pa.MapArray.from_arrays(_int32(offsets), keys, items, type=file_type(t, path),
                                   mask=mask)


def _convert_primitive(t: PrimitiveType, arr: pa.Array, path: str) -> pa.Array:
    want = file_type(t, path)
    got = arr.type
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
        got = arr.type
    if isinstance(t, (UUIDType, FixedType)):
        return _convert_fixed(t, arr, path, want)
    if isinstance(t, TimeType):
        if not pa.types.is_time(got) and not pa.types.is_integer(got):
            raise _mismatch(path, t, got)
        if pa.types.is_time(got):
            arr = _cast(arr, pa.time64("us"), path).cast(pa.int64())
        return _cast(arr, pa.int64(), path)
    if not _compatible(t, got):
        raise _mismatch(path, t, got)
    if pa.types.is_timestamp(got) and pa.types.is_timestamp(want) and got.tz != want.tz:
        arr = arr.cast(pa.timestamp(got.unit, want.tz))  # (same instants; naive taken as UTC)
    return arr if arr.type == want else _cast(arr, want, path)


def _convert_fixed(t: PrimitiveType, arr: pa.Array, path: str, want: pa.DataType) -> pa.Array:
    length = 16 if isinstance(t, UUIDType) else len(t)  # type: ignore[arg-type]
    got = arr.type
    if not (pa.types.is_binary(got) or pa.types.is_large_binary(got)
            or pa.types.is_fixed_size_binary(got) or pa.types.is_binary_view(got)):
        raise _mismatch(path, t, got)
    if pa.types.is_fixed_size_binary(got):
        if got.byte_width != length:
            raise SchemaError(f"field {path!r}: {t} values must be {length} bytes, got {got}")
    else:
        lengths = pc.binary_length(arr)
        wrong = pc.and_(pc.is_valid(lengths), pc.not_equal(lengths, length))
        if pc.any(wrong).as_py():
            raise SchemaError(f"field {path!r}: {t} values must be {length} bytes long")
    return _cast(arr, want, path)


def _compatible(t: PrimitiveType, got: pa.DataType) -> bool:
    if isinstance(t, BooleanType):
        return bool(pa.types.is_boolean(got))
    if isinstance(t, (IntegerType, LongType)):
        return bool(pa.types.is_integer(got))
    if isinstance(t, FloatType):
        return bool(pa.types.is_float16(got) or pa.types.is_float32(got))
    if isinstance(t, DoubleType):
        return bool(pa.types.is_floating(got))
    if isinstance(t, DecimalType):
        return bool(pa.types.is_decimal(got)) and got.scale == t.scale and \
            got.precision <= t.precision
    if isinstance(t, DateType):
        return bool(pa.types.is_date(got))
    if isinstance(t, (TimestampType, TimestampNanoType)):
        return bool(pa.types.is_timestamp(got)) and got.tz is None
    if isinstance(t, (TimestamptzType, TimestamptzNanoType)):
        return bool(pa.types.is_timestamp(got))
    if isinstance(t, StringType):
        return bool(pa.types.is_string(got) or pa.types.is_large_string(got)
                    or pa.types.is_string_view(got))
    if isinstance(t, BinaryType):
        return bool(pa.types.is_binary(got) or pa.types.is_large_binary(got)
                    or pa.types.is_fixed_size_binary(got) or pa.types.is_binary_view(got))
    return False


def _cast(arr: pa.Array, want: pa.DataType, path: str) -> pa.Array:
    try:
        return arr.cast(want, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"field {path!r}: cannot convert {arr.type} to {want} without "
                          f"losing data: {exc}") from exc


def _mismatch(path: str, t: IcebergType, got: pa.DataType) -> SchemaError:
    return SchemaError(f"field {path!r} is {t} in the Iceberg schema; the data has {got}")


# =========================================================================== reading

def arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type a read gives an Iceberg type: what pyiceberg's scan of ORC files gives
    (``string``, ``binary`` and ``list`` as ORC files read, ``time64``, the ``arrow.uuid``
    extension, ``fixed_size_binary``, microsecond timestamps)."""
    return _small(schema_to_pyarrow(t, include_field_ids=False))


def _small(t: pa.DataType) -> pa.DataType:
    """``t`` with large strings, binaries and lists made regular (nested ones too)."""
    if pa.types.is_large_string(t):
        return pa.string()
    if pa.types.is_large_binary(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_small(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_small(t.key_type)),
                       t.item_field.with_type(_small(t.item_type)))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_small(t.field(i).type))
                          for i in range(t.num_fields)])
    return t


def output_schema(schema: Schema) -> pa.Schema:
    """The Arrow schema reads of ``schema`` return: what pyiceberg's scan of ORC data files
    gives (``string``, ``binary``, ``list``, ``time64``, the ``arrow.uuid`` extension,
    ``fixed_size_binary``, microsecond timestamps)."""
    return pa.schema([pa.field(f.name, arrow_type(f.field_type), nullable=f.optional)
                      for f in schema.fields])


@dataclass(frozen=True)
class FileIds:
    """The Iceberg field id of each ORC column of a file.

    Attributes:
        ids: ORC column id -> Iceberg field id, for the columns that have one.
        from_mapping: whether the ids came from the table's name mapping (the file has no
            ``iceberg.id`` attributes).
    """

    ids: dict[int, int]
    from_mapping: bool

    def children(self, node: OrcType) -> dict[int, tuple[int, OrcType]]:
        """``node``'s children by Iceberg field id: (position, child)."""
        return {self.ids[c.column_id]: (i, c) for i, c in enumerate(node.children)
                if c.column_id in self.ids}


def field_ids(root: OrcType, mapping: NameMapping | None, path: str = "") -> FileIds:
    """The Iceberg field ids of a file's columns (see :class:`FileIds`).

    Raises:
        SchemaError: the file has no ids and the table no name mapping.
    """
    ids: dict[int, int] = {}
    for node in root.walk():
        value = dict(node.attributes).get(ICEBERG_ID)
        if value is not None and node.column_id != 0:
            try:
                ids[node.column_id] = int(value)
            except ValueError as exc:
                raise SchemaError(f"{path}: column {node.column_id} has a bad iceberg.id "
                                  f"{value!r}") from exc
    if ids:
        return FileIds(ids, False)
    if mapping is None:
        raise SchemaError(f"{path}: the ORC file has no Iceberg field ids (iceberg.id) and the "
                          "table has no name mapping (schema.name-mapping.default) to read it "
                          "by column names")
    if root.kind == TypeKind.STRUCT:
        _map_struct(root, list(mapping.root), ids)
    return FileIds(ids, True)


def _find(fields: list[MappedField], name: str) -> MappedField | None:
    for f in fields:
        if name in f.names:
            return f
    return None


def _map_struct(node: OrcType, fields: list[MappedField], ids: dict[int, int]) -> None:
    for name, child in zip(node.field_names, node.children, strict=True):
        _map_node(child, _find(fields, name), ids)


def _map_node(node: OrcType, mapped: MappedField | None, ids: dict[int, int]) -> None:
    if mapped is None:
        return
    if mapped.field_id is not None:
        ids[node.column_id] = mapped.field_id
    if node.kind == TypeKind.STRUCT:
        _map_struct(node, list(mapped.fields), ids)
    elif node.kind == TypeKind.LIST:
        _map_node(node.children[0], _find(list(mapped.fields), "element"), ids)
    elif node.kind == TypeKind.MAP:
        _map_node(node.children[0], _find(list(mapped.fields), "key"), ids)
        _map_node(node.children[1], _find(list(mapped.fields), "value"), ids)
