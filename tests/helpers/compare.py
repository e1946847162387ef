"""Comparisons with readable failure messages: rendered lines and whole tables."""

from __future__ import annotations

import re

import pyarrow as pa

from .orc_schema import OrcSchema, parse_schema, schema_from_arrow
from .render import render_array

__all__ = [
    "UNION_VALUE_NULL",
    "assert_lines_equal",
    "assert_tables_equal",
    "normalized_type",
    "project_table",
]

# How a null union renders when the reader returns it as branch 0 with a null value: Arrow has
# no null at the union level, so this is the one accepted difference from the expected output.
UNION_VALUE_NULL = '{"tag": 0, "value": null}'


def _excerpt(line: str, at: int, width: int = 120) -> str:
    start = max(0, at - width)
    prefix = "..." if start else ""
    suffix = "..." if len(line) > at + width else ""
    return f"{prefix}{line[start : at + width]}{suffix}"


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _union_null_allowed(actual: str, expected: str) -> bool:
    """True if ``expected`` is ``actual`` with some ``UNION_VALUE_NULL`` printed as ``null``."""
    pieces = actual.split(UNION_VALUE_NULL)
    if len(pieces) == 1:
        return False
    either = "(?:" + re.escape(UNION_VALUE_NULL) + "|null)"
    return re.fullmatch(either.join(re.escape(p) for p in pieces), expected) is not None


def assert_lines_equal(
    actual: list[str],
    expected: list[str],
    *,
    what: str = "",
    allow_union_null: bool = False,
) -> list[int]:
    """Assert two renderings are equal, reporting the first differing row.

    Args:
        actual: the lines rendered from the reader under test.
        expected: the reference lines.
        what: a label for the failure message (file name, peer).
        allow_union_null: accept rows where the expected line has a null union and the actual
            line has :data:`UNION_VALUE_NULL` in its place (Arrow cannot represent the former).

    Returns:
        The indices of the rows accepted under ``allow_union_null``.
    """
    allowed: list[int] = []
    for i, (got, want) in enumerate(zip(actual, expected, strict=False)):
        if got == want:
            continue
        if allow_union_null and _union_null_allowed(got, want):
            allowed.append(i)
            continue
        at = _first_difference(got, want)
        raise AssertionError(
            f"{what}: row {i} differs at character {at}\n"
            f"  expected: {_excerpt(want, at)}\n"
            f"  actual:   {_excerpt(got, at)}"
        )
    if len(actual) != len(expected):
        raise AssertionError(
            f"{what}: {len(actual)} rows, expected {len(expected)} "
            f"(the first {min(len(actual), len(expected))} agree)"
        )
    return allowed


def normalized_type(t: pa.DataType) -> object:
    """A comparable form of an Arrow type that ignores what ORC does not keep.

    Ignored: union mode (sparse/dense) and union child names, list/map child field names,
    nullability flags and field metadata.
    """
    if pa.types.is_union(t):
        return ("union", tuple(normalized_type(t.field(i).type) for i in range(t.num_fields)))
    if pa.types.is_struct(t):
        return (
            "struct",
            tuple((t.field(i).name, normalized_type(t.field(i).type)) for i in range(t.num_fields)),
        )
    if pa.types.is_map(t):
        return ("map", normalized_type(t.key_type), normalized_type(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return ("list", normalized_type(t.value_type))
    return str(t)


def assert_tables_equal(
    actual: pa.Table,
    expected: pa.Table,
    orc_type: OrcSchema | str | None = None,
    *,
    what: str = "",
    check_schema: bool = True,
) -> None:
    """Assert two tables hold the same values (NaN equals NaN, -0.0 differs from 0.0).

    Columns that Arrow finds equal are accepted as they are; the others are rendered
    losslessly (floats as ``repr``) and compared line by line, so a failure names the column
    and the first differing row.

    Args:
        actual: the table from the reader under test.
        expected: the reference table.
        orc_type: the file's ORC type (for legacy decimals and non-struct roots); by default
            derived from ``expected``'s schema.
        what: a label for the failure message.
        check_schema: also require the same (normalized) Arrow types, not only the same names
            and values.
    """
    if check_schema:
        got = [(f.name, normalized_type(f.type)) for f in actual.schema]
        want = [(f.name, normalized_type(f.type)) for f in expected.schema]
        if got != want:
            raise AssertionError(
                f"{what}: schema differs\n"
                f"  expected: {expected.schema}\n  actual:   {actual.schema}"
            )
    if isinstance(orc_type, str):
        orc_type = parse_schema(orc_type)
    if orc_type is None:
        orc_type = schema_from_arrow(expected.schema)
    is_struct = orc_type.kind == "struct"
    names = list(orc_type.names) if is_struct else [expected.column_names[0]]
    if actual.column_names != expected.column_names or expected.column_names != names:
        raise AssertionError(
            f"{what}: columns {actual.column_names}, expected {expected.column_names} ({orc_type})"
        )
    if actual.num_rows != expected.num_rows:
        raise AssertionError(f"{what}: {actual.num_rows} rows, expected {expected.num_rows}")
    for i, name in enumerate(names):
        got_column, want_column = actual.column(i), expected.column(i)
        if got_column.type == want_column.type and got_column.equals(want_column):
            continue
        child = orc_type.children[i] if is_struct else orc_type
        assert_lines_equal(
            render_array(got_column, child, exact=True),
            render_array(want_column, child, exact=True),
            what=f"{what}: column {name!r}",
        )


def project_table(table: pa.Table, columns: list[str]) -> pa.Table:
    """Select top-level names and dotted struct paths from a table, in schema order.

    A dotted path keeps its ancestors with only the selected children (and the ancestors'
    nulls); a name keeps the whole column. This is what a reader's ``columns=`` must return.

    Raises:
        KeyError: a name or path does not exist.
    """
    paths = [c.split(".") for c in columns]
    for path in paths:
        if path[0] not in table.column_names:
            raise KeyError(path[0])
    names, arrays = [], []
    for name in table.column_names:
        sub = [p[1:] for p in paths if p[0] == name]
        if sub:
            column = table.column(name)
            chunks = [_project_array(chunk, sub) for chunk in column.chunks]
            names.append(name)
            arrays.append(
                pa.chunked_array(chunks, type=chunks[0].type if chunks else None)
                if chunks
                else column
            )
    return pa.Table.from_arrays(arrays, names=names)


def _project_array(arr: pa.Array, paths: list[list[str]]) -> pa.Array:
    if any(not p for p in paths):
        return arr
    if not pa.types.is_struct(arr.type):
        raise KeyError(f"{arr.type} is not a struct")
    fields, children = [], []
    for i in range(arr.type.num_fields):
        field = arr.type.field(i)
        sub = [p[1:] for p in paths if p[0] == field.name]
        if sub:
            child = _project_array(arr.field(i), sub)
            fields.append(field.with_type(child.type))
            children.append(child)
    missing = {p[0] for p in paths} - {f.name for f in fields}
    if missing:
        raise KeyError(", ".join(sorted(missing)))
    mask = arr.is_null() if arr.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
