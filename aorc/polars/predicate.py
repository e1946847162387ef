"""Polars predicates -> aorc's list-form filters, for pruning only.

The predicate Polars hands an IO source is a :class:`polars.Expr`. Its structure is read from
its JSON serialization (``Expr.meta.serialize(format="json")``, which Polars 1.x and 2.x both
write); a literal (or any sub-expression that reads no column) is deserialized on its own and
evaluated by Polars, so its value is exactly Polars' own.

The result is an *implied* filter: every row for which the predicate is true also passes it
(it may let more rows through). aorc filters rows with it and prunes stripes, row groups,
bloom-filtered groups and partitions; the caller still applies the whole predicate to every
batch. What maps:

- ``col <op> literal`` (either side) for ``== != < <= > >=``, ``is_in``, ``is_null``,
  ``is_not_null``, ``is_between``; on a column or on a widening integer cast of one;
- ``&`` keeps whatever maps on either side, ``|`` only when both sides map;
- ``~`` is pushed down to the leaves (De Morgan holds in Kleene logic) and negates them.

Anything else becomes "true" (no pruning). Polars orders floats totally (NaN equals NaN and is
the largest value) where aorc follows IEEE (NaN compares false): on float columns ``>``/``>=``
and NaN literals are therefore not translated.
"""

from __future__ import annotations

import datetime
import decimal
import io
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

__all__ = ["Clauses", "to_filters"]

#: An OR of ANDs of ``(column, op, value)``: aorc's list-form filters.
Clauses = list[list[tuple[Any, ...]]]

_BINARY: dict[str, str | None] = {"Eq": "==", "EqValidity": None, "NotEq": "!=", "Lt": "<",
                                  "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_NEGATED = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<",
            "in": "not in", "not in": "in", "is null": "is not null",
            "is not null": "is null"}
#: Beyond this many clauses, distributing ``&`` over two ORs keeps one side only.
MAX_CLAUSES = 64
_TRUE: Clauses = [[]]  # one empty AND: every row


class _Untranslatable(Exception):
    """A node with no ORC filter (becomes "true" where that is sound)."""


def to_filters(predicate: pl.Expr, schema: Mapping[str, pl.DataType]) -> Clauses | None:
    """An aorc filter implied by ``predicate`` on a scan of ``schema``, or ``None`` when
    nothing of it maps (no pruning)."""
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
        clauses = _Translator(schema).node(tree, negated=False)
    except Exception:  # noqa: BLE001 - an expression this Polars serializes otherwise
        return None  # no pruning; Polars' own filter is exact
    if clauses == _TRUE:
        return None
    return clauses


def _single(node: Any) -> tuple[str, Any]:
    if isinstance(node, dict) and len(node) == 1:
        key, value = next(iter(node.items()))
        return str(key), value
    raise _Untranslatable


def _function_name(function: Any) -> str:
    """``{"Boolean": "IsNull"}`` or ``{"Boolean": {"IsIn": {...}}}`` -> ``"IsNull"``/``"IsIn"``."""
    if isinstance(function, dict) and len(function) == 1:
        inner = next(iter(function.values()))
        if isinstance(inner, str):
            return inner
        if isinstance(inner, dict) and len(inner) == 1:
            return str(next(iter(inner)))
    if isinstance(function, str):
        return function
    raise _Untranslatable


def _and(a: Clauses, b: Clauses) -> Clauses:
    if len(a) * len(b) > MAX_CLAUSES:
        return a if len(a) <= len(b) else b
    return [x + y for x in a for y in b]


def _or(a: Clauses, b: Clauses) -> Clauses:
    if a == _TRUE or b == _TRUE:
        return _TRUE
    return a + b


def _mentions_column(node: Any) -> bool:
    if isinstance(node, dict):
        return any(k == "Column" or k == "Columns" or _mentions_column(v)
                   for k, v in node.items())
    if isinstance(node, list):
        return any(_mentions_column(v) for v in node)
    return False


def _constant(node: Any) -> pl.Series:
    """The value(s) of a sub-expression that reads no column, evaluated by Polars."""
    if _mentions_column(node) or not isinstance(node, dict):
        raise _Untranslatable
    name, _ = _single(node)
    if name in ("Agg", "Window", "AnonymousFunction", "Len", "Element", "Field"):
        raise _Untranslatable
    try:
        expr = pl.Expr.deserialize(io.StringIO(json.dumps(node)), format="json")
        series = pl.select(expr).to_series()
    except Exception as exc:  # noqa: BLE001 - not a constant Polars can evaluate alone
        raise _Untranslatable from exc
    if series.len() != 1:
        raise _Untranslatable
    return series


class _Translator:
    def __init__(self, schema: Mapping[str, pl.DataType]) -> None:
        self._schema = schema

    def node(self, node: Any, negated: bool) -> Clauses:
        """The clauses implied by ``node`` (or by its negation)."""
        try:
            return self._node(node, negated)
        except _Untranslatable:
            return _TRUE

    def _node(self, node: Any, negated: bool) -> Clauses:
        kind, body = _single(node)
        if kind == "BinaryExpr":
            op = body["op"]
            if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
                left = self.node(body["left"], negated)
                right = self.node(body["right"], negated)
                conjunction = op in ("And", "LogicalAnd")
                # De Morgan: not (a and b) = not a or not b, in Kleene logic too
                return _and(left, right) if conjunction != negated else _or(left, right)
            comparison = _BINARY.get(op)
            if comparison is not None:
                return self._comparison(body["left"], comparison, body["right"], negated)
            raise _Untranslatable
        if kind == "Function":
            return self._function(_function_name(body["function"]), body["function"],
                                  body["input"], negated)
        raise _Untranslatable

    def _function(self, name: str, function: Any, inputs: list[Any],
                  negated: bool) -> Clauses:
        if name == "Not" and len(inputs) == 1:
            return self._node(inputs[0], not negated)
        if name in ("IsNull", "IsNotNull") and len(inputs) == 1:
            column, _ = self._column(inputs[0])
            op = "is null" if name == "IsNull" else "is not null"
            return [[(column, _NEGATED[op] if negated else op)]]
        if name == "IsIn" and len(inputs) == 2:
            return self._is_in(inputs[0], inputs[1], negated)
        if name == "IsBetween" and len(inputs) == 3:
            closed = _closed(function)
            low = self._comparison(inputs[0], ">=" if closed[0] else ">", inputs[1], negated)
            high = self._comparison(inputs[0], "<=" if closed[1] else "<", inputs[2], negated)
            return _or(low, high) if negated else _and(low, high)
        raise _Untranslatable

    def _column(self, node: Any) -> tuple[str, pl.DataType]:
        """A column read as it is, or through a cast that keeps every value and its order."""
        kind, body = _single(node)
        if kind == "Column" and isinstance(body, str) and body in self._schema:
            return body, self._schema[body]
        if kind == "Cast" and isinstance(body, dict):
            name, dtype = self._column(body.get("expr"))
            target = _cast_target(body.get("dtype"))
            if target is not None and _widens(dtype, target):
                return name, dtype
        raise _Untranslatable

    def _comparison(self, left: Any, op: str, right: Any, negated: bool) -> Clauses:
        try:
            column, dtype = self._column(left)
            literal = right
        except _Untranslatable:
            column, dtype = self._column(right)
            literal, op = left, _FLIPPED[op]
        if negated:
            op = _NEGATED[op]
        value = _scalar(_constant(literal), dtype)
        if dtype.is_float() and (op in (">", ">=") or _is_nan(value)):
            raise _Untranslatable  # Polars: NaN > everything; aorc: NaN compares false
        return [[(column, op, value)]]

    def _is_in(self, left: Any, right: Any, negated: bool) -> Clauses:
        column, dtype = self._column(left)
        series = _constant(right)
        if isinstance(series.dtype, (pl.List, pl.Array)):
            members = series.item()  # the one list, as a Series
            if not isinstance(members, pl.Series):
                raise _Untranslatable
            series = members
        nulls = series.null_count()
        series = series.drop_nulls()
        members = [_scalar(series.slice(i, 1), dtype) for i in range(series.len())]
        if dtype.is_float() and any(_is_nan(v) for v in members):
            raise _Untranslatable
        if negated:
            # a null row passes aorc's "not in" without None: a superset, as needed
            return [[(column, "not in", members)]]
        # None in the set lets null rows through (Polars' nulls_equal=True needs it)
        return [[(column, "in", members + [None] * bool(nulls))]]


def _closed(function: Any) -> tuple[bool, bool]:
    text = json.dumps(function)
    for name, sides in (("Both", (True, True)), ("Left", (True, False)),
                        ("Right", (False, True)), ("None", (False, False))):
        if f'"{name}"' in text:
            return sides
    raise _Untranslatable


_INTS = {"Int8": 8, "Int16": 16, "Int32": 32, "Int64": 64}


def _cast_target(dtype: Any) -> str | None:
    """The name of a plain numeric cast target in the JSON (``{"Literal": "Float64"}``)."""
    if isinstance(dtype, dict) and len(dtype) == 1:
        dtype = next(iter(dtype.values()))
    return dtype if isinstance(dtype, str) else None


def _widens(dtype: pl.DataType, target: str) -> bool:
    """Whether casting ``dtype`` to ``target`` keeps every value exactly (and their order)."""
    source = _INTS.get(str(dtype))
    if source is None:
        return False
    if target in _INTS:
        return _INTS[target] >= source
    return (target == "Float64" and source <= 32) or (target == "Float32" and source <= 16)


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _scalar(series: pl.Series, dtype: pl.DataType) -> Any:
    """The one value of ``series`` as aorc's filters take it for a column of ``dtype``."""
    lit = series.dtype
    value = series.item()
    if value is None:
        raise _Untranslatable  # a comparison with null: Polars gives null; left to Polars
    if isinstance(value, bool):
        if dtype == pl.Boolean:
            return value
        raise _Untranslatable
    if dtype.is_integer() or dtype.is_float():
        if not isinstance(value, (int, float)):
            raise _Untranslatable
        return value
    if isinstance(dtype, pl.Decimal):
        # Polars compares a decimal with a float as floats: only exact literals map
        if not isinstance(value, (int, decimal.Decimal)):
            raise _Untranslatable
        return value
    if dtype == pl.String and isinstance(value, str):
        return value
    if dtype == pl.Binary and isinstance(value, bytes):
        return value
    if dtype == pl.Date and isinstance(lit, pl.Date):
        return value
    if isinstance(dtype, pl.Datetime) and isinstance(lit, pl.Datetime):
        if (dtype.time_zone is None) != (lit.time_zone is None):
            raise _Untranslatable
        # exact, in the literal's unit (a Python datetime would drop nanoseconds)
        count = series.cast(pl.Int64).item()
        return np.datetime64(count, lit.time_unit or "us")
    if dtype == pl.Date and isinstance(value, datetime.date):
        return value
    raise _Untranslatable
