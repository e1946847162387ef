"""The filter operations, in one table: how each is spelled, evaluated on rows, pruned with
statistics and bloom filters, and translated from Spark's data source filters.

Every part of aorc that needs to know what an op means reads :data:`OPS`: parsing
(:mod:`aorc.filters.parse`: the spellings), row filtering and pyarrow expressions
(:mod:`aorc.filters.predicate`: one pyarrow.compute function that takes arrays and
expressions alike), pruning (:mod:`aorc.filters.predicate`: the outcome of a comparison over a
``[lo, hi]`` range of values, and whether a bloom filter can rule values out) and Spark push-down
(:mod:`aorc.spark`: the ``pyspark.sql.datasource`` filter classes that map to the op).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow.compute as pc

from aorc.filters import spatial

__all__ = [
    "COMPARISONS",
    "OPS",
    "Op",
    "OpSpec",
    "op_named",
    "order_outcome",
    "spark_op",
    "spellings",
]


class Op(enum.Enum):
    """A leaf's operation after normalisation."""

    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    IN = "in"
    NOT_IN = "not in"
    IS_NULL = "is null"
    NOT_NULL = "is not null"
    FALSE = "false"  # no row matches (a null row gives null or false: the same here)
    TRUE = "true"  # every row matches, nulls included
    INTERSECTS = "intersects"  # a geospatial value's bounding box meets a box


class Order(enum.Enum):
    """What the rows of a group whose non-null values lie in ``[lo, hi]`` give for
    ``x op v``: all true, all false, or either."""

    YES = "yes"
    NO = "no"
    ANY = "any"


def _lt(v: Any, lo: Any, hi: Any) -> Order:
    return Order.YES if hi < v else Order.NO if lo >= v else Order.ANY


def _le(v: Any, lo: Any, hi: Any) -> Order:
    return Order.YES if hi <= v else Order.NO if lo > v else Order.ANY


def _gt(v: Any, lo: Any, hi: Any) -> Order:
    return Order.YES if lo > v else Order.NO if hi <= v else Order.ANY


def _ge(v: Any, lo: Any, hi: Any) -> Order:
    return Order.YES if lo >= v else Order.NO if hi < v else Order.ANY


@dataclass(frozen=True)
class OpSpec:
    """One row of :data:`OPS`.

    Attributes:
        op: the operation.
        spellings: how ``filters`` may name it (parsing); empty for ops that only come
            from normalisation (TRUE, FALSE).
        compute: the pyarrow.compute function evaluating it on rows: it takes an Arrow
            array or a ``pyarrow.compute.Expression`` (and the literal, or the value set);
            None for constants.
        negated: the row result is the negation of ``compute`` (``not in``).
        order: the outcome over a ``[lo, hi]`` range of values (ordered comparisons).
        bloom: a bloom filter can show a group holds no matching value (``==``, ``in``).
        spark: the names of the ``pyspark.sql.datasource`` filter classes it translates.
    """

    op: Op
    spellings: tuple[str, ...]
    compute: Callable[..., Any] | None = None
    negated: bool = False
    order: Callable[[Any, Any, Any], Order] | None = None
    bloom: bool = False
    spark: tuple[str, ...] = ()


#: Every op: parse, evaluate on rows, prune, translate for Spark.
OPS: dict[Op, OpSpec] = {spec.op: spec for spec in (
    OpSpec(Op.EQ, ("==", "="), pc.equal, bloom=True, spark=("EqualTo",)),
    OpSpec(Op.NE, ("!=",), pc.not_equal),
    OpSpec(Op.LT, ("<",), pc.less, order=_lt, spark=("LessThan",)),
    OpSpec(Op.LE, ("<=",), pc.less_equal, order=_le, spark=("LessThanOrEqual",)),
    OpSpec(Op.GT, (">",), pc.greater, order=_gt, spark=("GreaterThan",)),
    OpSpec(Op.GE, (">=",), pc.greater_equal, order=_ge, spark=("GreaterThanOrEqual",)),
    OpSpec(Op.IN, ("in",), pc.is_in, bloom=True, spark=("In",)),
    OpSpec(Op.NOT_IN, ("not in",), pc.is_in, negated=True),
    OpSpec(Op.IS_NULL, ("is null",), pc.is_null, spark=("IsNull",)),
    OpSpec(Op.NOT_NULL, ("is not null",), pc.is_valid, spark=("IsNotNull",)),
    OpSpec(Op.INTERSECTS, ("intersects",), spatial.intersects),
    OpSpec(Op.FALSE, ()),
    OpSpec(Op.TRUE, ()),
)}

#: The comparisons (a null value gives null, not false).
COMPARISONS = frozenset({Op.EQ, Op.NE, Op.LT, Op.LE, Op.GT, Op.GE})

_BY_SPELLING = {name: spec.op for spec in OPS.values() for name in spec.spellings}
_BY_SPARK = {name: spec.op for spec in OPS.values() for name in spec.spark}


def spellings() -> list[str]:
    """Every op name ``filters`` accept, in table order."""
    return list(_BY_SPELLING)


def op_named(name: Any) -> Op | None:
    """The op spelled ``name``, or None."""
    return _BY_SPELLING.get(name) if isinstance(name, str) else None


def spark_op(filter_class_name: str) -> Op | None:
    """The op of a ``pyspark.sql.datasource`` filter class, or None."""
    return _BY_SPARK.get(filter_class_name)


def order_outcome(op: Op, v: Any, lo: Any, hi: Any) -> Order:
    """The outcome of ``x op v`` for non-null ``x`` in ``[lo, hi]`` (ordered comparisons).

    Raises:
        ValueError: ``op`` is not an ordered comparison.
    """
    order = OPS[op].order
    if order is None:
        raise ValueError(f"{op.value} is not an ordered comparison")
    return order(v, lo, hi)
