"""Row filters of Iceberg reads: what the caller gives, what pyiceberg plans with, what aorc
pushes into each file.

:func:`iceberg_filter` takes a pyiceberg ``BooleanExpression``, its string form
(``"ts >= '2026-11-22T00:00:00' and region = 'eu'"``) or aorc's list form (``[("region",
"==", "eu"), ("amount", ">", 10)]``, a list of such lists for an OR) and gives the
expression pyiceberg prunes manifests and files with.

:func:`file_pushdown` turns the bound expression into aorc's list form on one file's columns
(found by field id, so renamed columns work), for stripe, row-group and bloom-filter pruning
inside the file: comparisons, ``in``/``not in``, ``is null``/``is not null`` on primitive
columns outside lists and maps, under ``and``/``or`` (``not`` rewritten away first). What
does not map (other predicates, columns the file lacks, ``or`` with a side that does not
map) is left out, so the pushed filter keeps a superset of the matching rows; the reader
then applies the whole expression to the projected rows (:func:`row_mask`), exactly.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa
from pyiceberg.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BoundEqualTo,
    BoundGreaterThan,
    BoundGreaterThanOrEqual,
    BoundIn,
    BoundIsNull,
    BoundLessThan,
    BoundLessThanOrEqual,
    BoundLiteralPredicate,
    BoundNotEqualTo,
    BoundNotIn,
    BoundNotNull,
    BoundPredicate,
    BoundSetPredicate,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    Or,
)
from pyiceberg.expressions.parser import parse
from pyiceberg.expressions.visitors import rewrite_not

from aorc.errors import SchemaError
from aorc.format.types import OrcType, TypeKind
from aorc.iceberg.schema import FileIds

__all__ = ["MAX_CLAUSES", "file_pushdown", "iceberg_filter"]

#: Clauses kept at most when an AND of ORs is distributed (beyond, one side is kept).
MAX_CLAUSES = 64

_LIST_OPS: dict[str, type] = {
    "==": EqualTo, "=": EqualTo, "!=": NotEqualTo, "<": LessThan, "<=": LessThanOrEqual,
    ">": GreaterThan, ">=": GreaterThanOrEqual,
}
_BOUND_OPS: list[tuple[type, str]] = [
    (BoundEqualTo, "=="), (BoundNotEqualTo, "!="), (BoundLessThan, "<"),
    (BoundLessThanOrEqual, "<="), (BoundGreaterThan, ">"), (BoundGreaterThanOrEqual, ">="),
]

Clauses = list[list[tuple[Any, ...]]]


def iceberg_filter(filters: Any) -> BooleanExpression:
    """The pyiceberg expression of a filter given in any accepted form (see the module
    docstring); ``None`` is ``AlwaysTrue``.

    Raises:
        SchemaError: a malformed filter.
    """
    if filters is None:
        return AlwaysTrue()
    if isinstance(filters, BooleanExpression):
        return filters
    if isinstance(filters, str):
        try:
            return parse(filters)
        except Exception as exc:  # pyparsing's errors
            raise SchemaError(f"bad Iceberg filter {filters!r}: {exc}") from exc
    if isinstance(filters, Sequence) and filters:
        if all(isinstance(f, tuple) for f in filters):
            return _conjunction(filters)
        if all(isinstance(f, list) for f in filters):
            out: BooleanExpression = AlwaysFalse()
            for clause in filters:
                out = Or(out, _conjunction(clause))
            return out
    raise SchemaError(f"filters must be a pyiceberg expression, a string, or a list of "
                      f"(column, op, value) tuples (or a list of such lists), got {filters!r}")


def _conjunction(clause: Sequence[Any]) -> BooleanExpression:
    out: BooleanExpression = AlwaysTrue()
    for term in clause:
        out = And(out, _predicate(term))
    return out


def _predicate(term: Any) -> BooleanExpression:
    if not isinstance(term, tuple) or len(term) not in (2, 3):
        raise SchemaError(f"a filter term must be (column, op, value), got {term!r}")
    column, op = term[0], str(term[1]).strip().lower()
    if op in ("is null", "is not null"):
        unary: Any = IsNull if op == "is null" else NotNull
        return cast(BooleanExpression, unary(column))
    if len(term) != 3:
        raise SchemaError(f"filter {term!r} needs a value")
    value = _plain(term[2])
    if value is None:
        raise SchemaError(f"filter {term!r} compares with None: use ({column!r}, 'is null')")
    if op in ("in", "not in"):
        values = [_plain(v) for v in value]
        members: Any = In if op == "in" else NotIn
        return cast(BooleanExpression, members(column, values))
    if op not in _LIST_OPS:
        raise SchemaError(f"unknown filter op {term[1]!r} in {term!r}")
    compare: Any = _LIST_OPS[op]
    return cast(BooleanExpression, compare(column, value))


def _plain(value: Any) -> Any:
    """A filter value as the Python value pyiceberg's literals take (pyarrow scalars and
    numpy values unwrapped)."""
    if isinstance(value, pa.Scalar):
        return value.as_py()
    if isinstance(value, np.generic):
        return value.item()
    return value


# =========================================================================== pushdown

def file_pushdown(bound: BooleanExpression, root: OrcType, ids: FileIds) -> Clauses | None:
    """aorc list-form filters on one file's columns implied by ``bound`` (an expression
    bound to the table's schema); ``None`` when nothing maps, ``[]`` when no row can
    match."""
    names = _names_by_id(root, ids)
    dnf = _dnf(rewrite_not(bound), names)
    if dnf is None or any(not clause for clause in dnf):
        return None  # (an empty clause is "true": no pruning)
    return dnf


def _names_by_id(root: OrcType, ids: FileIds) -> dict[int, tuple[str, OrcType]]:
    """Field id -> (dotted name, node) of the file's columns outside lists and maps."""
    out: dict[int, tuple[str, OrcType]] = {}

    def visit(node: OrcType, prefix: str) -> None:
        for name, child in zip(node.field_names, node.children, strict=True):
            dotted = f"{prefix}{name}"
            fid = ids.ids.get(child.column_id)
            if fid is not None:
                out[fid] = (dotted, child)
            if child.kind == TypeKind.STRUCT:
                visit(child, dotted + ".")

    if root.kind == TypeKind.STRUCT:
        visit(root, "")
    return out


def _dnf(expr: BooleanExpression, names: dict[int, tuple[str, OrcType]]) -> Clauses | None:
    if isinstance(expr, AlwaysTrue):
        return [[]]
    if isinstance(expr, AlwaysFalse):
        return []
    if isinstance(expr, And):
        left, right = _dnf(expr.left, names), _dnf(expr.right, names)
        if left is None or right is None:
            return right if left is None else left
        if len(left) * len(right) > MAX_CLAUSES:
            return left if len(left) <= len(right) else right
        return [a + b for a in left for b in right]
    if isinstance(expr, Or):
        left, right = _dnf(expr.left, names), _dnf(expr.right, names)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(expr, Not):  # (rewritten away; kept for safety)
        return None
    if isinstance(expr, BoundPredicate):
        term = _term(expr, names)
        return None if term is None else [[term]]
    return None


def _term(pred: BoundPredicate, names: dict[int, tuple[str, OrcType]]
          ) -> tuple[Any, ...] | None:
    found = names.get(pred.term.ref().field.field_id)
    if found is None:
        return None
    name, node = found
    if node.kind.is_compound:
        return None
    if isinstance(pred, BoundIsNull):
        return (name, "is null")
    if isinstance(pred, BoundNotNull):
        return (name, "is not null")
    if isinstance(pred, BoundSetPredicate) and isinstance(pred, (BoundIn, BoundNotIn)):
        values = [_value(lit.value, node) for lit in pred.literals]
        if any(v is None for v in values):
            return None
        return (name, "in" if isinstance(pred, BoundIn) else "not in", values)
    if isinstance(pred, BoundLiteralPredicate):
        for cls, op in _BOUND_OPS:
            if isinstance(pred, cls):
                value = _value(pred.literal.value, node)
                return None if value is None else (name, op, value)
    return None


def _value(value: Any, node: OrcType) -> Any:
    """An Iceberg literal's internal value as a literal of the file column's kind (None when
    the kinds do not match)."""
    kind = node.kind
    if kind == TypeKind.BOOLEAN:
        return value if isinstance(value, bool) else None
    if kind in (TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG):
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    if kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        return float(value) if isinstance(value, (int, float)) else None
    if kind == TypeKind.DECIMAL:
        return value if isinstance(value, decimal.Decimal) else None
    if kind in (TypeKind.STRING, TypeKind.VARCHAR, TypeKind.CHAR):
        return value if isinstance(value, str) else None
    if kind == TypeKind.BINARY:
        if isinstance(value, uuid.UUID):
            return value.bytes
        return bytes(value) if isinstance(value, (bytes, bytearray)) else None
    if kind == TypeKind.DATE:
        if isinstance(value, int):
            return datetime.date(1970, 1, 1) + datetime.timedelta(days=value)
        return None
    if kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT):
        if isinstance(value, int):
            unit = "ns" if dict(node.attributes).get("iceberg.timestamp-unit") == "NANOS" \
                else "us"
            return np.datetime64(value, "ns") if unit == "ns" else np.datetime64(value, "us")
        return None
    return None
