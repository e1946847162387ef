"""Arrow <-> ORC at the edge of the writer: the schema a writer takes and the batches it
accepts (conversion of Tables, RecordBatches and pandas DataFrames; casting compatible types).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError
from aorc.format.nesting import check_depth
from aorc.format.types import (
    OrcType,
    TypeKind,
    from_arrow_schema,
    from_arrow_type,
    parse_type_string,
    to_arrow_schema,
    to_arrow_type,
    type_string,
    widen_arrow_type,
)

__all__ = ["conform", "resolve_schema"]


# =========================================================================== schemas

def resolve_schema(schema: pa.Schema | str | OrcType) -> tuple[pa.Schema, OrcType]:
    """The Arrow schema batches must have and the ORC type tree of the file.

    Raises:
        SchemaError: the schema cannot be written as ORC, its root is not a struct, or it is
            nested deeper than :data:`~aorc.format.nesting.MAX_TYPE_DEPTH`.
    """
    if isinstance(schema, pa.Schema | OrcType):
        check_depth(schema)  # before any recursive walk
    if isinstance(schema, pa.Schema):
        widened = pa.schema([f.with_type(widen_arrow_type(f.type)) for f in schema],
                            metadata=schema.metadata)
        return widened, from_arrow_schema(widened)
    if isinstance(schema, str):
        orc_type = parse_type_string(schema)
    elif isinstance(schema, OrcType):  # renumbered from 0 (a root keeps its attributes)
        orc_type = schema if schema.column_id == 0 else parse_type_string(type_string(schema))
    else:
        raise SchemaError(f"schema must be a pyarrow.Schema or an ORC type string, got "
                          f"{type(schema).__name__}")
    if orc_type.kind != TypeKind.STRUCT:
        raise SchemaError(f"the root of an ORC schema to write must be a struct, got "
                          f"{type_string(orc_type)}")
    return to_arrow_schema(orc_type), orc_type


def _canonical(field: pa.Field) -> pa.DataType:
    """The Arrow type aorc reads back for a field: equal for types written alike."""
    return to_arrow_type(from_arrow_type(field.type, field.metadata))


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the writer's schema: same names; types equal, or written alike (large
    and view strings, dictionaries, other timestamp units, ...), which are cast.

    Raises:
        SchemaError: names or types differ, or a cast fails.
    """
    if batch.schema.names != schema.names:
        raise SchemaError(f"the data's columns {batch.schema.names} differ from the "
                          f"writer's schema {schema.names}")
    if batch.schema.equals(schema):
        return batch
    arrays = []
    for i, want in enumerate(schema):
        got = batch.schema.field(i)
        arr = batch.column(i)
        if got.type != want.type:
            if _canonical(got) != _canonical(want):
                raise SchemaError(f"column {want.name!r} has type {got.type}, the writer's "
                                  f"schema says {want.type}")
            try:
                arr = arr.cast(want.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
                raise _cast_error(want.name, arr, want.type, exc) from exc
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _uint64_max(arr: pa.Array | pa.ChunkedArray) -> int | None:
    """The largest uint64 value in ``arr`` and its nested children (None when none)."""
    t = arr.type
    if t == pa.uint64():
        value = pc.max(arr).as_py()
        return int(value) if value is not None else None
    if isinstance(arr, pa.ChunkedArray):
        parts = [_uint64_max(c) for c in arr.chunks]
    elif pa.types.is_struct(t):
        parts = [_uint64_max(arr.field(i)) for i in range(t.num_fields)]
    elif pa.types.is_map(t):
        parts = [_uint64_max(arr.keys), _uint64_max(arr.items)]
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        parts = [_uint64_max(arr.flatten())]
    elif pa.types.is_dictionary(t):
        parts = [_uint64_max(arr.dictionary)]
    else:
        return None
    found = [p for p in parts if p is not None]
    return max(found) if found else None


def _cast_error(name: str, arr: pa.Array, want: pa.DataType, exc: Exception) -> SchemaError:
    """The SchemaError for a failed cast of column ``name`` (naming the value that does not
    fit when uint64 values exceed ORC's bigint)."""
    largest = _uint64_max(arr)
    if largest is not None and largest > 2**63 - 1:
        return SchemaError(f"column {name!r}: uint64 is written as ORC bigint, which holds at "
                           f"most {2**63 - 1}, but the column holds {largest}")
    return SchemaError(f"column {name!r}: cannot convert {arr.type} to {want}: {exc}")
