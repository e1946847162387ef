"""Hive partitioning: ``key=value`` folders, their value types, and filters on them.

Values are URL-unescaped (Spark escapes ``/``, ``=``, ``%``, ... as ``%XX``), and
``__HIVE_DEFAULT_PARTITION__`` is null. Without an explicit schema, a column's type is
inferred as Spark infers it: ``int32`` when every value is an int, ``int64`` when every value
is a long, ``float64`` when every value is a number, ``date32`` when every value is a
``yyyy-MM-dd`` date, else ``string`` (nulls do not vote; an all-null column is a string).
"""

from __future__ import annotations

import datetime
import re
import urllib.parse
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError
from aorc.hive import HIVE_DEFAULT_PARTITION

__all__ = [
    "HIVE_DEFAULT_PARTITION",
    "Clauses",
    "infer_partition_schema",
    "normalize_filters",
    "parse_partition_path",
    "partition_table",
    "surviving_rows",
    "term_expression",
]


#: Filters in disjunctive normal form: OR of ANDs of ``(column, op, value)``.
Clauses = list[list[tuple[str, str, Any]]]

_INT = re.compile(r"[+-]?\d+")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_OPS = frozenset({"==", "=", "!=", "<", "<=", ">", ">=", "in", "not in", "is null",
                  "is not null"})


def parse_partition_path(relative: str) -> dict[str, str | None]:
    """The ``key=value`` pairs of the folders of ``relative`` (a file's path below the
    dataset root, ``/``-separated), unescaped; the file name itself is not a folder."""
    values: dict[str, str | None] = {}
    for part in relative.split("/")[:-1]:
        key, sep, value = part.partition("=")
        if sep and key:
            text = urllib.parse.unquote(value)
            values[urllib.parse.unquote(key)] = None if text == HIVE_DEFAULT_PARTITION else text
    return values


def _infer_type(values: Sequence[str | None]) -> pa.DataType:
    present = [v for v in values if v is not None]
    if not present:
        return pa.string()
    if all(_INT.fullmatch(v) for v in present):
        numbers = [int(v) for v in present]
        if all(-(2**31) <= n < 2**31 for n in numbers):
            return pa.int32()
        if all(-(2**63) <= n < 2**63 for n in numbers):
            return pa.int64()
        return pa.string()
    if all(_DATE.fullmatch(v) and _is_date(v) for v in present):
        return pa.date32()
    if all(_is_float(v) for v in present):
        return pa.float64()
    return pa.string()


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_float(text: str) -> bool:
    if text.strip().lower() in ("nan", "inf", "-inf", "infinity", "-infinity", "+inf"):
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def infer_partition_schema(values: Sequence[dict[str, str | None]],
                           paths: Sequence[str],
                           given: pa.Schema | None = None) -> pa.Schema:
    """The partition columns shared by every file, typed by ``given`` or inferred.

    Raises:
        SchemaError: files sit at different partition depths or keys (as Spark refuses
            "conflicting directory structures").
    """
    if not values:
        return given if given is not None else pa.schema([])
    keys = list(values[0])
    for v, path in zip(values, paths, strict=True):
        if list(v) != keys:
            raise SchemaError(f"conflicting partition folders: {paths[0]} has "
                              f"{keys or 'no partitions'}, {path} has {list(v) or 'none'}")
    fields = []
    for key in keys:
        if given is not None and key in given.names:
            fields.append(given.field(key))
        else:
            fields.append(pa.field(key, _infer_type([v[key] for v in values])))
    return pa.schema(fields)


def partition_table(values: Sequence[dict[str, str | None]], schema: pa.Schema,
                    paths: Sequence[str]) -> pa.Table:
    """One row per file holding its partition values in the schema's types.

    Raises:
        SchemaError: a value does not fit its column's type (the message names the file).
    """
    columns = []
    for field in schema:
        raw = [v.get(field.name) for v in values]
        try:
            columns.append(pc.cast(pa.array(raw, pa.string()), field.type))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            bad = next((p for p, r in zip(paths, raw, strict=True)
                        if r is not None and not _fits(r, field.type)), paths[0])
            raise SchemaError(f"{bad}: partition value of {field.name!r} does not fit "
                              f"{field.type}: {exc}") from exc
    return pa.table(columns, schema=schema) if columns else pa.table({})


def _fits(text: str, t: pa.DataType) -> bool:
    try:
        pc.cast(pa.array([text]), t)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
    return True


def normalize_filters(filters: Any) -> Clauses | None:
    """Filters in pyarrow's list form as a list of conjunctions (``None`` for no filter).

    Raises:
        SchemaError: malformed filters.
    """
    if filters is None:
        return None
    if not isinstance(filters, (list, tuple)) or not filters:
        raise SchemaError("filters must be a non-empty list of (column, op, value) tuples or "
                          f"a list of such lists, got {filters!r}")
    nested = all(isinstance(f, list) for f in filters)
    groups = list(filters) if nested else [list(filters)]
    out: Clauses = []
    for group in groups:
        if not group:
            raise SchemaError("filters: an empty conjunction")
        terms = []
        for term in group:
            if (not isinstance(term, (tuple, list)) or len(term) not in (2, 3)
                    or not isinstance(term[0], str) or not isinstance(term[1], str)):
                raise SchemaError(f"filters: expected (column, op, value), got {term!r}")
            op = term[1].lower()
            if op not in _OPS:
                raise SchemaError(f"filters: unknown operator {term[1]!r}")
            terms.append((term[0], op, term[2] if len(term) == 3 else None))
        out.append(terms)
    return out


def term_expression(column: str, op: str, value: Any) -> pc.Expression:
    """The Arrow expression of one filter term (null rows never match a comparison)."""
    field = pc.field(column)
    if op == "is null":
        return field.is_null()
    if op == "is not null":
        return field.is_valid()
    if op in ("in", "not in"):
        found = field.isin(list(value))
        return found if op == "in" else ~found & field.is_valid()
    compare = {"==": field.__eq__, "=": field.__eq__, "!=": field.__ne__, "<": field.__lt__,
               "<=": field.__le__, ">": field.__gt__, ">=": field.__ge__}[op]
    result: pc.Expression = compare(pc.scalar(value))
    return result


def surviving_rows(table: pa.Table | None, terms: list[tuple[str, str, Any]]) -> set[int]:
    """Indexes of the rows (files) of the partition table that satisfy every term."""
    if table is None:
        return set()
    expr = term_expression(*terms[0])
    for term in terms[1:]:
        expr = expr & term_expression(*term)
    indexed = table.append_column("__aorc_index", pa.array(range(table.num_rows), pa.int64()))
    try:
        kept = indexed.filter(expr).column("__aorc_index")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"filters on partition columns: {exc}") from exc
    return set(kept.to_pylist())
