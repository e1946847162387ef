"""pyarrow's semantics for aorc's list filters, the oracle of the pushdown tests; and a
(dotted) column of a table."""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = ["column_of", "filters_oracle"]


def filters_oracle(filters: list, types: Mapping[str, pa.DataType] | None = None
                   ) -> pc.Expression:
    """The filters (one clause, or a list of clauses) as a pyarrow expression: pyarrow.parquet's
    converter per leaf, plus ``is null`` / ``is not null``; dotted names are struct paths.
    With ``types``, the lists of ``in`` / ``not in`` become arrays of their column's type."""
    clauses = filters if isinstance(filters[0], list) else [filters]
    expr = None
    for clause in clauses:
        conj = None
        for name, op, *rest in clause:
            value = rest[0] if rest else None
            path = tuple(name.split("."))
            if op in ("is null", "is not null"):
                e = pc.field(*path).is_null() if op == "is null" else pc.field(*path).is_valid()
            elif (types is not None and op in ("in", "not in")
                  and not isinstance(value, pa.Array)):
                e = pq.filters_to_expression([[(path, op, pa.array(value, types[name]))]])
            else:
                e = pq.filters_to_expression([[(path, op, value)]])
            conj = e if conj is None else conj & e
        expr = conj if expr is None else expr | conj
    assert expr is not None
    return expr


def column_of(table: pa.Table, name: str) -> pa.Array:
    """The column ``name`` of ``table``; a dotted name is a field of a struct column."""
    parts = name.split(".")
    arr = table.column(parts[0]).combine_chunks()
    for part in parts[1:]:
        arr = pc.struct_field(arr, [arr.type.get_field_index(part)])
    return arr
