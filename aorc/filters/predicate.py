"""Row filters: parsed from pyarrow-style ``filters``, evaluated on statistics, bloom filters
and decoded rows. Pure: no I/O.

``filters`` take the form pyarrow.parquet and pandas use: a list of ``(column, op, value)``
tuples is their AND; a list of such lists is the OR of the ANDs. Ops: ``==`` (or ``=``),
``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``, ``not in``, ``is null``, ``is not null`` (value
ignored, may be left out). Columns are named as in ``columns=``: top-level names or dotted
paths through structs; comparisons need a primitive column, ``is null``/``is not null`` take
any column reached through structs.

Row semantics are those of :func:`pyarrow.parquet.filters_to_expression` evaluated by
pyarrow.compute: a comparison with a null value is null (the row is dropped); ``in`` matches a
null value only when the set holds ``None``, and ``not in`` is its negation (so a null value is
*not in* a set without ``None``); NaN compares false, except ``!=`` (true), and ``in``
matches NaN to NaN but not ``-0.0`` to ``0.0``. Values are compared exactly in the column's
type: decimals as decimal numbers, strings by their UTF-8 bytes, timestamps in nanoseconds
(naive literals are wall-clock time, as TIMESTAMP columns are read), dates in days.

Literals are checked against the column's ORC type (:class:`SchemaError` for a mismatch) and
brought into its domain once: ``int_column < 2.5`` becomes ``int_column <= 2``, a literal out
of the column's range folds to a constant. Pruning then evaluates each leaf on a column's
statistics (and bloom filter) to a :class:`TruthValue`, the set of outcomes a row of the
group may give, and combines leaves with Kleene logic; a group is skipped when no row can
give true (ORC Java's SearchArgument works the same way).

Limitations: null rows of the root struct (which no known writer produces) are not taken into
account when pruning; a filtered nested column is null where an ancestor struct is null, which
pruning takes from the ancestors' statistics.
"""

from __future__ import annotations

import datetime
import enum
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.filters.ops import OPS, Order, order_outcome
from aorc.filters.parse import (
    COMPARISONS,
    FLOATING,
    INTEGER,
    STRING,
    TIMESTAMP,
    Leaf,
    Op,
    decimal_scale,
    parse_clauses,
    unscaled_decimal,
)
from aorc.filters.spatial import box_outcome
from aorc.format.codec.bloom import BloomFilter
from aorc.format.columns.integers import GREGORIAN_START_DAY, hybrid_to_proleptic_days
from aorc.format.statistics import ColumnStatistics
from aorc.format.types import OrcType, TypeKind, to_arrow_type

__all__ = [
    "Leaf",
    "Predicate",
    "StatsContext",
    "TruthValue",
    "bloom_absent_test",
    "leaf_truth",
    "parse_filters",
    "truth_and",
    "truth_not",
    "truth_or",
]


# =========================================================================== truth values

class TruthValue(enum.Flag):
    """The outcomes the rows of a group (stripe, row group) may give for a predicate.

    ``YES``, ``NO`` and ``NULL`` are the three values of Kleene logic; the combined members
    (``YES_NO``, ``NO_NULL``, ``YES_NULL``, ``YES_NO_NULL``) say that several outcomes are
    possible, as in ORC Java's ``SearchArgument.TruthValue``. The empty value means the group
    has no rows.
    """

    YES = 1
    NO = 2
    NULL = 4
    YES_NO = 3
    YES_NULL = 5
    NO_NULL = 6
    YES_NO_NULL = 7

    @property
    def may_be_true(self) -> bool:
        """Some row may satisfy the predicate (the group cannot be skipped)."""
        return bool(self & TruthValue.YES)


_Y, _N, _U = TruthValue.YES, TruthValue.NO, TruthValue.NULL
_NONE = TruthValue(0)
_EPOCH_DATE = datetime.date(1970, 1, 1)
#: Timestamp statistics are widened by this much (writers round to milliseconds differently).
_TIMESTAMP_SLACK = 1_000_000
_ANY = TruthValue.YES_NO
_OUTCOMES = (_Y, _N, _U)


def _kleene_and(a: TruthValue, b: TruthValue) -> TruthValue:
    if a == _N or b == _N:
        return _N
    return _U if _U in (a, b) else _Y


def _kleene_or(a: TruthValue, b: TruthValue) -> TruthValue:
    if a == _Y or b == _Y:
        return _Y
    return _U if _U in (a, b) else _N


def _combine(a: TruthValue, b: TruthValue,
             op: Callable[[TruthValue, TruthValue], TruthValue]) -> TruthValue:
    out = _NONE
    for x in _OUTCOMES:
        if x & a:
            for y in _OUTCOMES:
                if y & b:
                    out |= op(x, y)
    return out


def truth_and(a: TruthValue, b: TruthValue) -> TruthValue:
    """Outcomes of ``p AND q`` when ``p`` may give ``a`` and ``q`` may give ``b``."""
    return _combine(a, b, _kleene_and)


def truth_or(a: TruthValue, b: TruthValue) -> TruthValue:
    """Outcomes of ``p OR q``."""
    return _combine(a, b, _kleene_or)


def truth_not(a: TruthValue) -> TruthValue:
    """Outcomes of ``NOT p``."""
    out = a & _U
    if a & _Y:
        out |= _N
    if a & _N:
        out |= _Y
    return out


# =========================================================================== parsing

def parse_filters(filters: Any, root: OrcType) -> Predicate | None:
    """Parse and check ``filters`` against a file's schema.

    Args:
        filters: ``None``, a list of ``(column, op, value)`` tuples (AND), or a list of such
            lists (OR of ANDs); see the module docstring.
        root: the file's root type.

    Returns:
        The predicate, or ``None`` when ``filters`` is ``None``.

    Raises:
        SchemaError: malformed filters, an unknown column or op, or a literal that cannot be
            compared with the column's type.
    """
    if filters is None:
        return None
    if isinstance(filters, pc.Expression):
        from aorc.filters.expression import split_expression
        parts = split_expression(filters)
        for name in parts.names:  # unknown columns are reported as for list filters
            parse_clauses([(name, "is null")], root)
        clauses = parse_clauses(parts.implied, root) if parts.implied else ()
        return Predicate(clauses, residual=filters, residual_names=parts.names)
    return Predicate(parse_clauses(filters, root))


# =========================================================================== statistics

@dataclass(frozen=True)
class StatsContext:
    """What the file says about how its statistics and bloom filters relate to the values
    the reader returns.

    Attributes:
        hybrid_calendar: dates are stored in the hybrid Julian/Gregorian calendar (and
            rebased when read): date statistics and bloom filters hold hybrid day numbers.
        decimal_bloom_filters: decimal bloom filters hash decimal text (false for files of
            version UNSTABLE-PRE-2.0, whose Decimal64 writer hashed unscaled integers).
    """

    hybrid_calendar: bool = False
    decimal_bloom_filters: bool = True


def _days_to_domain(days: int, ctx: StatsContext) -> int:
    if ctx.hybrid_calendar and days < GREGORIAN_START_DAY:
        return int(hybrid_to_proleptic_days(np.array([days], np.int64))[0])
    return days


def _stat_range(leaf: Leaf, s: ColumnStatistics,
                ctx: StatsContext) -> tuple[Any, Any, bool] | None:
    """``(low, high, exact)`` bounds of the column's non-null values in the comparison
    domain; ``exact`` when they are the true minimum and maximum. None when unknown."""
    kind = leaf.kind
    lo: Any = s.minimum
    hi: Any = s.maximum
    if kind == TypeKind.BOOLEAN:
        if s.true_count is None or s.false_count is None:
            return None
        return (0 if s.false_count else 1), (1 if s.true_count else 0), True
    if kind in STRING and (lo is None or hi is None):
        lo, hi = s.lower_bound, s.upper_bound
        return None if lo is None or hi is None else (lo, hi, False)
    if lo is None or hi is None:
        return None
    if kind in INTEGER:
        return int(lo), int(hi), True
    if kind in FLOATING:
        lo, hi = float(lo), float(hi)
        return None if math.isnan(lo) or math.isnan(hi) else (lo, hi, True)
    if kind == TypeKind.DECIMAL:  # widened by one unit: reading may truncate extra digits
        factor = 10 ** decimal_scale(leaf.column)
        return (math.floor(Fraction(lo) * factor) - 1, math.ceil(Fraction(hi) * factor) + 1,
                False)
    if kind == TypeKind.DATE:
        return (_days_to_domain((lo - _EPOCH_DATE).days, ctx),
                _days_to_domain((hi - _EPOCH_DATE).days, ctx), True)
    if kind in TIMESTAMP:
        lo, hi = s.minimum_nanos, s.maximum_nanos
        if not s.timestamp_utc or lo is None or hi is None:
            return None  # writer-local values of unknown zone: not comparable
        return int(lo) - _TIMESTAMP_SLACK, int(hi) + _TIMESTAMP_SLACK, False
    if kind in STRING:
        return lo, hi, True
    return None


_ORDER_TRUTH = {Order.YES: TruthValue.YES, Order.NO: TruthValue.NO,
                Order.ANY: TruthValue.YES_NO}


def _values_outcome(leaf: Leaf, bounds: tuple[Any, Any, bool] | None) -> TruthValue:
    """Outcomes of the leaf for the non-null values of a group (NaN aside)."""
    op = leaf.op
    if op in (Op.IS_NULL, Op.FALSE):
        return _N
    if op in (Op.NOT_NULL, Op.TRUE):
        return _Y
    if bounds is None:
        return _ANY
    lo, hi, exact = bounds
    if op in (Op.EQ, Op.NE):
        if leaf.value < lo or leaf.value > hi:
            eq = _N
        else:
            eq = _Y if exact and lo == hi == leaf.value else _ANY
        return eq if op == Op.EQ else truth_not(eq)
    if op in (Op.IN, Op.NOT_IN):
        inside = [m for m in leaf.values if _within(m, lo, hi)]
        if not inside:
            found = _N
        elif (exact and lo == hi and lo in inside
              and not (leaf.kind in FLOATING and lo == 0)):  # is_in: -0.0 is not 0.0
            found = _Y
        else:
            found = _ANY
        return found if op == Op.IN else truth_not(found)
    return _ORDER_TRUTH[order_outcome(op, leaf.value, lo, hi)]


def _within(member: Any, lo: Any, hi: Any) -> bool:
    if isinstance(member, float) and math.isnan(member):
        return False
    return bool(lo <= member <= hi)


def _nan_outcome(leaf: Leaf) -> TruthValue:
    """The outcome for a NaN value (float columns: statistics cannot rule NaN out)."""
    op = leaf.op
    if op in (Op.NE, Op.NOT_NULL, Op.TRUE):
        return _Y
    if op in (Op.IN, Op.NOT_IN):
        if any(isinstance(m, float) and math.isnan(m) for m in leaf.values):
            return _ANY  # ``in`` matches a NaN only to a NaN of the same bits
        return _N if op == Op.IN else _Y
    return _N


def _null_outcome(leaf: Leaf) -> TruthValue:
    """The outcome for a null value."""
    op = leaf.op
    if op in (Op.IS_NULL, Op.TRUE):
        return _Y
    if op in (Op.IN, Op.NOT_IN):
        return _Y if leaf.null_in_set == (op == Op.IN) else _N
    if op in COMPARISONS or leaf.from_comparison:
        return _U
    return _N


def leaf_truth(leaf: Leaf, stats: ColumnStatistics | None, may_null: bool,
               ctx: StatsContext, *, bloom_says_absent: bool = False) -> TruthValue:
    """Outcomes of ``leaf`` over a group whose column has statistics ``stats``.

    Args:
        leaf: the condition.
        stats: the column's statistics for the group (None: unknown).
        may_null: the group may hold null values of the column (its own or an ancestor's).
        ctx: the file's conventions.
        bloom_says_absent: a bloom filter shows that no value of the group equals the
            leaf's literal (or any member of its set).
    """
    has_values = stats is None or stats.num_values > 0
    out = _NONE
    if has_values:
        if bloom_says_absent and leaf.op in (Op.EQ, Op.IN):
            out = _N
        elif leaf.op == Op.INTERSECTS:
            may, _ = box_outcome(leaf.value, stats)
            out = _ANY if may else _N
        else:
            bounds = None if stats is None else _stat_range(leaf, stats, ctx)
            out = _values_outcome(leaf, bounds)
        if leaf.kind in FLOATING:
            out |= _nan_outcome(leaf)
    if may_null or not has_values:
        out |= _null_outcome(leaf)
    return out


def _bloom_test(kind: TypeKind, member: Any) -> Callable[[BloomFilter], bool] | None:
    """The membership test of one domain value, None when bloom filters cannot decide."""
    def test(bloom: BloomFilter) -> bool:
        if kind in INTEGER or kind in (TypeKind.BOOLEAN, TypeKind.DATE):
            return bloom.might_contain_long(int(member))
        if kind in TIMESTAMP:
            return bloom.might_contain_timestamp(int(member))
        if kind in FLOATING:
            return bloom.might_contain(member, TypeKind.DOUBLE)
        if kind == TypeKind.DECIMAL:
            return bloom.might_contain_decimal(member)
        if isinstance(member, str):
            return bloom.might_contain_string(member)
        return bloom.might_contain_bytes(member)
    return test


def bloom_absent_test(leaf: Leaf, ctx: StatsContext) -> Callable[[BloomFilter], bool] | None:
    """A test that is true when a group's bloom filter shows that none of the column's values
    equals the leaf's literal (``==``) or a member of its set (``in``); None when bloom
    filters cannot decide for this leaf."""
    if not leaf.uses_bloom_filter:
        return None
    if leaf.kind == TypeKind.BOOLEAN:
        return None  # ORC Java's boolean writer never adds values: its filters are empty
    members: tuple[Any, ...] = (leaf.value,) if leaf.op == Op.EQ else leaf.values
    kind = leaf.kind
    tests = []
    for m in members:
        if kind == TypeKind.DATE and ctx.hybrid_calendar and m < GREGORIAN_START_DAY:
            return None  # hashed as a hybrid calendar day number
        if kind == TypeKind.DECIMAL:
            if not ctx.decimal_bloom_filters:
                return None
            m = unscaled_decimal(m, decimal_scale(leaf.column))
        if kind in STRING and not isinstance(m, str) or kind == TypeKind.BINARY and not (
                isinstance(m, bytes)):
            return None
        test = _bloom_test(kind, m)
        if test is None:
            return None
        tests.append(test)
    return lambda bloom: not any(t(bloom) for t in tests)


# =========================================================================== predicate

@dataclass(frozen=True)
class Predicate:
    """A parsed filter: the OR of clauses, each the AND of its leaves.

    Attributes:
        clauses: the disjunction's members.
        residual: a filter expression the rows are filtered with exactly (its implied
            filters are ``clauses``, which then serve pruning only).
        residual_names: the columns ``residual`` reads.
    """

    clauses: tuple[tuple[Leaf, ...], ...]
    _leaves: tuple[Leaf, ...] = field(init=False, repr=False, compare=False)
    residual: pc.Expression | None = field(default=None, compare=False)
    residual_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "_leaves", tuple(x for c in self.clauses for x in c))

    @property
    def leaves(self) -> tuple[Leaf, ...]:
        """Every leaf, clause by clause."""
        return self._leaves

    @property
    def column_names(self) -> list[str]:
        """The filtered columns' names, as given, without repeats."""
        return list(dict.fromkeys([*(leaf.name for leaf in self._leaves),
                                   *self.residual_names]))

    @property
    def columns(self) -> set[int]:
        """Column ids of the filtered columns."""
        return {leaf.column.column_id for leaf in self._leaves}

    @property
    def index_columns(self) -> set[int]:
        """Column ids whose statistics pruning uses: the filtered columns and their struct
        ancestors."""
        return self.columns | {a for leaf in self._leaves for a in leaf.ancestors}

    @property
    def bloom_columns(self) -> set[int]:
        """Column ids whose bloom filters can prune (columns of ``==`` and ``in`` leaves)."""
        return {leaf.column.column_id for leaf in self._leaves if leaf.uses_bloom_filter}

    def evaluate(self, stats: Callable[[int], ColumnStatistics | None], ctx: StatsContext,
                 absent: Callable[[Leaf], bool] | None = None) -> TruthValue:
        """Outcomes of the predicate over a group.

        Args:
            stats: the group's statistics of a column id (None when unknown).
            ctx: the file's conventions.
            absent: says whether bloom filters show a leaf's literals absent from the group.
        """
        if not self.clauses:
            return TruthValue.YES_NO_NULL  # an expression with no ORC predicate in it
        result = _NONE
        for clause in self.clauses:
            value = _Y
            for leaf in clause:
                own = stats(leaf.column.column_id)
                may_null = any(s is None or s.has_null
                               for s in (*(stats(c) for c in leaf.ancestors), own))
                if own is not None and own.num_values == 0 and not may_null:
                    # neither values nor nulls: writers that collect no statistics leave
                    # them empty (e.g. ORC Java without indexes): unknown, not "no rows"
                    own, may_null = None, True
                truth = leaf_truth(leaf, own, may_null, ctx,
                                   bloom_says_absent=absent is not None and absent(leaf))
                value = truth_and(value, truth)
            result = truth_or(result, value) if result != _NONE else value
        return result

    # ------------------------------------------------------------------ rows
    def row_mask(self, batch: pa.RecordBatch) -> pa.BooleanArray:
        """Which rows of ``batch`` satisfy the predicate (never null).

        ``batch`` must hold the filtered columns (under their top-level names, as read).
        """
        if self.residual is not None:  # it implies the clauses
            from aorc.filters.expression import expression_mask
            return expression_mask(self.residual, batch)
        result: pa.Array | None = None
        for clause in self.clauses:
            value: pa.Array | None = None
            for leaf in clause:
                mask = _leaf_mask(leaf, batch)
                value = mask if value is None else pc.and_kleene(value, mask)
            result = value if result is None else pc.or_kleene(result, value)
        assert result is not None
        return pc.fill_null(result, False)

    def expression(self) -> pc.Expression:
        """The predicate as a pyarrow.compute expression over the read table's columns."""
        if self.residual is not None:
            return self.residual
        result: pc.Expression | None = None
        for clause in self.clauses:
            value: pc.Expression | None = None
            for leaf in clause:
                expr = _leaf_expression(leaf)
                value = expr if value is None else value & expr
            assert value is not None
            result = value if result is None else result | value
        assert result is not None
        return result


# --------------------------------------------------------------------------- row filter

def _arrow_value(leaf: Leaf, value: Any) -> Any:
    """A domain value as a Python value Arrow takes for the column's type."""
    if leaf.kind == TypeKind.DECIMAL:
        return unscaled_decimal(int(value), decimal_scale(leaf.column))
    if leaf.kind == TypeKind.BOOLEAN:
        return bool(value)
    return value


def _scalar(leaf: Leaf, value: Any) -> pa.Scalar:
    if leaf.kind in FLOATING:
        return pa.scalar(float(value), pa.float64())
    return pa.scalar(_arrow_value(leaf, value), to_arrow_type(leaf.column))


def _value_set(leaf: Leaf) -> pa.Array:
    items = [_arrow_value(leaf, v) for v in leaf.values]
    if leaf.null_in_set:
        items.append(None)
    return pa.array(items, to_arrow_type(leaf.column))


def _column(leaf: Leaf, batch: pa.RecordBatch) -> pa.Array:
    arr = batch.column(leaf.path[0])
    for name in leaf.path[1:]:
        arr = pc.struct_field(arr, [arr.type.get_field_index(name)])
    return arr


def _leaf_rows(leaf: Leaf, ref: Any) -> Any:
    """The leaf evaluated on ``ref``, an Arrow array or a pyarrow.compute expression (the
    same compute function of :data:`aorc.filters.ops.OPS` for both)."""
    spec = OPS[leaf.op]
    if spec.compute is None:  # TRUE / FALSE
        constant = leaf.op == Op.TRUE
        if isinstance(ref, pc.Expression):
            return pc.scalar(constant)
        return pa.array(np.full(len(ref), constant))
    if leaf.op in COMPARISONS:
        out = spec.compute(ref, _scalar(leaf, leaf.value))
    elif leaf.op == Op.INTERSECTS:
        out = spec.compute(ref, leaf.value)
    elif spec.compute is pc.is_in:
        out = pc.is_in(ref, value_set=_value_set(leaf), skip_nulls=False)
    else:
        out = spec.compute(ref)
    return pc.invert(out) if spec.negated else out


_NANOS_PER_UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_INT64 = (-(2**63), 2**63 - 1)


def _coarse_timestamp_mask(leaf: Leaf, arr: pa.Array) -> pa.Array:
    """A comparison of timestamps read in a unit coarser than the nanosecond literals:
    each literal is brought to the unit exactly (``x < 1.5`` is ``x < 2``; ``x == 1.5`` is
    no row)."""
    d = _NANOS_PER_UNIT[arr.type.unit]
    op = leaf.op
    if op in (Op.IN, Op.NOT_IN):
        items: list[int | None] = [int(v) // d for v in leaf.values if int(v) % d == 0
                                   and _INT64[0] <= int(v) // d <= _INT64[1]]
        if leaf.null_in_set:
            items.append(None)
        found = pc.is_in(arr, value_set=pa.array(items, arr.type), skip_nulls=False)
        return found if op == Op.IN else pc.invert(found)
    v = int(leaf.value)
    floor, ceil = v // d, -(-v // d)
    if op in (Op.EQ, Op.NE) and v % d:
        return pc.if_else(pc.is_valid(arr), op == Op.NE, None)
    k = {Op.EQ: floor, Op.NE: floor, Op.LT: ceil, Op.LE: floor, Op.GT: floor,
         Op.GE: ceil}[op]
    if not _INT64[0] <= k <= _INT64[1]:  # beyond every value of the column
        holds = op in ((Op.LT, Op.LE, Op.NE) if k > _INT64[1] else (Op.GT, Op.GE, Op.NE))
        return pc.if_else(pc.is_valid(arr), holds, None)
    return OPS[op].compute(arr, pa.scalar(k, arr.type))  # type: ignore[misc]


def _leaf_mask(leaf: Leaf, batch: pa.RecordBatch) -> pa.Array:
    arr = _column(leaf, batch)
    if (leaf.kind in TIMESTAMP and pa.types.is_timestamp(arr.type)
            and (leaf.op in COMPARISONS or leaf.op in (Op.IN, Op.NOT_IN))):
        return _coarse_timestamp_mask(leaf, arr)
    return _leaf_rows(leaf, arr)


def _leaf_expression(leaf: Leaf) -> pc.Expression:
    expr: pc.Expression = _leaf_rows(leaf, pc.field(*leaf.path))
    return expr
