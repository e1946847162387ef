"""Filters in pyarrow's list form, parsed into leaves whose literals are in the column's domain.

See :mod:`aorc.filters.predicate` for the filter language and its semantics. Each literal is checked
against the column's ORC type and brought into a comparison domain once:

- integers, decimals, dates, timestamps, booleans: exact integers of the column's unit (the
  value, the unscaled decimal, days, nanoseconds, 0/1); ``x < 2.5`` on an integer column
  becomes ``x < 3``, ``x == 2.5`` becomes "no row", and a literal beyond the type's range folds
  to a constant (``TRUE``, ``FALSE`` or ``NOT_NULL``);
- floats: Python floats (a float32 column's ``==``/``in`` literal that no float32 equals folds);
- strings: ``str`` (compared by code point, which is UTF-8 byte order); binary: ``bytes``.

A literal given as text for a column of another type (``("day", ">=", "2024-01-31")``, JSON
filters) is parsed first, by :func:`aorc.filters.literals.parse_text` (the grammar partition
columns and the CLI use too); a text it cannot read raises a :class:`SchemaError` that says
which formats the column takes.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.filters.literals import parse_text
from aorc.filters.ops import COMPARISONS, OPS, Op, op_named, spellings
from aorc.filters.spatial import parse_box
from aorc.format.types import (
    LEGACY_DECIMAL_SCALE,
    OrcType,
    TypeKind,
    is_spark_ntz,
    to_arrow_type,
)

__all__ = [
    "COMPARISONS",
    "DISCRETE",
    "FLOATING",
    "GEOSPATIAL",
    "INTEGER",
    "STRING",
    "TIMESTAMP",
    "Leaf",
    "Op",
    "decimal_scale",
    "domain_range",
    "parse_clauses",
    "unscaled_decimal",
]

INTEGER = frozenset({TypeKind.BYTE, TypeKind.SHORT, TypeKind.INT, TypeKind.LONG})
FLOATING = frozenset({TypeKind.FLOAT, TypeKind.DOUBLE})
STRING = frozenset({TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR})
TIMESTAMP = frozenset({TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT})
GEOSPATIAL = frozenset({TypeKind.GEOMETRY, TypeKind.GEOGRAPHY})
DISCRETE = INTEGER | TIMESTAMP | {TypeKind.DATE, TypeKind.DECIMAL, TypeKind.BOOLEAN}
_INT_RANGES = {TypeKind.BYTE: 8, TypeKind.SHORT: 16, TypeKind.INT: 32, TypeKind.LONG: 64,
               TypeKind.DATE: 32,
               # nanoseconds of int64 seconds: timestamp_unit "us"/"ms"/"s" reads them all
               TypeKind.TIMESTAMP: 94, TypeKind.TIMESTAMP_INSTANT: 94}
_NANOS_PER_DAY = 86_400 * 10**9
_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_UNIT_NANOS: dict[str, Fraction] = {
    "D": Fraction(_NANOS_PER_DAY), "h": Fraction(3600 * 10**9), "m": Fraction(60 * 10**9),
    "s": Fraction(10**9), "ms": Fraction(10**6), "us": Fraction(10**3), "ns": Fraction(1),
    "ps": Fraction(1, 10**3), "fs": Fraction(1, 10**6), "as": Fraction(1, 10**9)}


@dataclass(frozen=True)
class Leaf:
    """One normalised ``(column, op, value)`` condition.

    Attributes:
        name: the column name as given.
        column: the column's type node.
        path: Arrow field names from the record batch's top level down to the column.
        ancestors: column ids of the struct ancestors below the root (whose nulls make the
            column null).
        op: the operation (comparisons on an out-of-domain literal fold to TRUE/FALSE/
            NOT_NULL).
        value: the literal in the column's comparison domain (see :func:`_domain_value`).
        values: ``in``/``not in``: the non-null members, in the comparison domain.
        null_in_set: ``in``/``not in``: the set holds ``None`` (null values match).
        from_comparison: the leaf was given as a comparison (a null value gives null even
            where the comparison folded to a constant).
    """

    name: str
    column: OrcType
    path: tuple[str, ...]
    ancestors: tuple[int, ...]
    op: Op
    value: Any = None
    values: tuple[Any, ...] = ()
    null_in_set: bool = False
    from_comparison: bool = False

    @property
    def kind(self) -> TypeKind:
        """The column's ORC type kind."""
        return self.column.kind

    @property
    def uses_bloom_filter(self) -> bool:
        """Whether a bloom filter can prune this leaf (``==`` and ``in``)."""
        return OPS[self.op].bloom and self.kind not in (
            TypeKind.STRUCT, TypeKind.LIST, TypeKind.MAP, TypeKind.UNION)


# --------------------------------------------------------------------------- parsing

def parse_clauses(filters: Any, root: OrcType) -> tuple[tuple[Leaf, ...], ...]:
    """Parse and check ``filters`` (not None) against a file's schema: the OR of ANDs.

    Raises:
        SchemaError: malformed filters, an unknown column or op, or a literal that cannot be
            compared with the column's type.
    """
    if not isinstance(filters, list | tuple) or not filters:
        raise SchemaError(f"filters must be a non-empty list of (column, op, value) tuples "
                          f"or of lists of them, got {filters!r}")
    first = filters[0]
    if isinstance(first, list | tuple) and first and isinstance(first[0], str):
        filters = [filters]
    clauses = []
    for conjunction in filters:
        if not isinstance(conjunction, list | tuple) or not conjunction:
            raise SchemaError(f"malformed filters: {conjunction!r} is not a non-empty list of "
                              "(column, op, value) tuples")
        clauses.append(tuple(_parse_leaf(item, root) for item in conjunction))
    return tuple(clauses)


def _parse_leaf(item: Any, root: OrcType) -> Leaf:
    if (not isinstance(item, list | tuple) or len(item) not in (2, 3)
            or not isinstance(item[0], str) or not isinstance(item[1], str)):
        raise SchemaError(f"malformed filter {item!r}: expected (column, op, value)")
    name, op_name = item[0], " ".join(item[1].lower().split())
    op = op_named(op_name)
    if op is None:
        raise SchemaError(f"filter {item!r}: unknown op {item[1]!r} (expected one of "
                          f"{', '.join(spellings())})")
    if len(item) == 2 and op not in (Op.IS_NULL, Op.NOT_NULL):
        raise SchemaError(f"filter {item!r}: {op_name!r} needs a value")
    column, path, ancestors = _resolve(root, name)
    base = Leaf(name, column, path, ancestors, op)
    if op in (Op.IS_NULL, Op.NOT_NULL):
        return base
    if (op == Op.INTERSECTS) != (column.kind in GEOSPATIAL):
        raise SchemaError(f"filter {item!r}: 'intersects' is the one filter of geometry and "
                          "geography columns, and applies to no other column")
    if op == Op.INTERSECTS:
        return Leaf(name, column, path, ancestors, op, parse_box(item[2], f"filter {item!r}"),
                    from_comparison=True)
    if column.kind.is_compound:
        raise SchemaError(f"filter {item!r}: column {name!r} is a {column.kind.name.lower()}; "
                          "only 'is null' and 'is not null' apply to it")
    if op in (Op.IN, Op.NOT_IN):
        return _set_leaf(base, item[2])
    return _comparison_leaf(base, item[2])


def _resolve(root: OrcType, name: str) -> tuple[OrcType, tuple[str, ...], tuple[int, ...]]:
    """The column named ``name``, its Arrow path and its struct ancestors below the root."""
    if root.kind != TypeKind.STRUCT:
        if name == "_col0":
            return root, ("_col0",), ()
        raise SchemaError(f"unknown filter column {name!r}: the file has one column, _col0")
    node = root
    path: list[str] = []
    ancestors: list[int] = []
    rest = name
    while True:
        if node.kind != TypeKind.STRUCT:
            raise SchemaError(f"filter column {name!r}: {'.'.join(path)} is a "
                              f"{node.kind.name.lower()}; filters reach only through structs")
        if node is not root:
            ancestors.append(node.column_id)
        if rest in node.field_names:
            child = node.children[node.field_names.index(rest)]
            return child, (*path, rest), tuple(ancestors)
        head, dot, tail = rest.partition(".")
        while dot and head not in node.field_names:
            more, dot, tail = tail.partition(".")
            head = f"{head}.{more}"
        if head not in node.field_names or not dot:
            raise SchemaError(f"unknown filter column {name!r}; the columns are: "
                              f"{_column_list(root)}")
        node = node.children[node.field_names.index(head)]
        path.append(head)
        rest = tail


def _column_list(root: OrcType) -> str:
    """The names filters can reach (top-level and dotted struct paths), for messages."""
    names: list[str] = []

    def walk(node: OrcType, prefix: str) -> None:
        for field, child in zip(node.field_names, node.children, strict=True):
            names.append(prefix + field)
            if child.kind == TypeKind.STRUCT:
                walk(child, f"{prefix}{field}.")

    walk(root, "")
    shown = ", ".join(names[:50])
    return shown + (f", ... ({len(names)} in all)" if len(names) > 50 else "")


# --------------------------------------------------------------------------- literals

class _Outside(enum.Enum):
    """A literal no value of the column can equal: below or above every value, or unordered."""

    BELOW = "below"
    ABOVE = "above"
    NAN = "nan"


def _type_error(leaf: Leaf, value: Any) -> SchemaError:
    return SchemaError(f"filter on {leaf.name!r}: {value!r} ({type(value).__name__}) cannot be "
                       f"compared with an ORC {leaf.kind.name.lower()} column")


@dataclass(frozen=True)
class _Nanos:
    """A timestamp literal taken from an Arrow scalar: nanoseconds since the epoch."""

    nanos: int
    aware: bool


_ARROW_UNIT_NANOS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def _from_text(leaf: Leaf, value: Any) -> Any:
    """A text literal for a column that is not a string or binary one, parsed (see
    :mod:`aorc.filters.literals`); anything else as it is."""
    if not isinstance(value, str) or leaf.kind in STRING or leaf.kind == TypeKind.BINARY \
            or leaf.kind.is_compound:
        return value
    try:
        return parse_text(value, to_arrow_type(leaf.column))
    except ValueError as exc:
        raise SchemaError(f"filter on {leaf.name!r} (an ORC {leaf.kind.name.lower()} "
                          f"column): {exc}") from None


def _plain(value: Any) -> Any:
    """A literal given as a pyarrow scalar, as a Python value (timestamps exact)."""
    if not isinstance(value, pa.Scalar):
        return value
    if not value.is_valid:
        return None
    if pa.types.is_timestamp(value.type):
        return _Nanos(int(value.value) * _ARROW_UNIT_NANOS[value.type.unit],
                      value.type.tz is not None)
    return value.as_py()


def _is_null_literal(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, np.datetime64):
        return bool(np.isnat(value))
    return type(value).__name__ == "NaTType"


def domain_range(t: OrcType) -> tuple[int, int]:
    if t.kind == TypeKind.BOOLEAN:
        return 0, 1
    if t.kind == TypeKind.DECIMAL:
        digits = 38 if t.is_legacy_decimal else (t.precision or 38)
        return -(10**digits - 1), 10**digits - 1
    bits = _INT_RANGES[t.kind]
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


def decimal_scale(t: OrcType) -> int:
    return LEGACY_DECIMAL_SCALE if t.is_legacy_decimal else (t.scale or 0)


def unscaled_decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """The decimal ``unscaled * 10**-scale``, exactly (whatever the decimal context)."""
    return decimal.Decimal(unscaled).scaleb(-scale, _EXACT)


_EXACT = decimal.Context(prec=200)


def _to_fraction(value: Any) -> Fraction | _Outside:
    """An exact rational of a number literal (NaN and infinities as _Outside)."""
    if isinstance(value, float | np.floating | decimal.Decimal):
        if isinstance(value, decimal.Decimal):
            finite, nan = value.is_finite(), value.is_nan()
        else:
            finite, nan = math.isfinite(value), math.isnan(value)
        if nan:
            return _Outside.NAN
        if not finite:
            return _Outside.BELOW if value < 0 else _Outside.ABOVE
        if isinstance(value, np.floating):
            value = float(value)
    return Fraction(value)


def _timestamp_nanos(leaf: Leaf, value: Any) -> Fraction:
    """Nanoseconds since the epoch of a timestamp literal (wall clock for naive values)."""
    if isinstance(value, _Nanos):
        if value.aware and leaf.kind in (TypeKind.TIMESTAMP, TypeKind.DATE):
            raise SchemaError(f"filter on {leaf.name!r}: a time-zone aware timestamp "
                              f"compared with a {leaf.kind.name.lower()} column (no zone)")
        return Fraction(value.nanos)
    if isinstance(value, np.datetime64):
        unit, count = np.datetime_data(value.dtype)
        per = _UNIT_NANOS.get(unit)
        if per is None:
            raise _type_error(leaf, value)
        return Fraction(int(value.astype(np.int64))) * count * per
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            if leaf.kind == TypeKind.TIMESTAMP or leaf.kind == TypeKind.DATE:
                raise SchemaError(f"filter on {leaf.name!r}: time-zone aware {value!r} "
                                  f"compared with a {leaf.kind.name.lower()} column (no zone)")
            value = value.astimezone(datetime.UTC).replace(tzinfo=None)
        delta = value - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 10**6 + delta.microseconds
        return Fraction(micros * 1000 + int(getattr(value, "nanosecond", 0)))
    if isinstance(value, datetime.date):
        return Fraction((value - _EPOCH_DATE).days * _NANOS_PER_DAY)
    raise _type_error(leaf, value)


def _units(leaf: Leaf, value: Any) -> Fraction | _Outside:
    """A literal of a discrete-domain column as a rational number of the domain's units
    (integers, unscaled decimals, days, nanoseconds, 0/1 for booleans)."""
    kind = leaf.kind
    if kind == TypeKind.BOOLEAN:
        if not isinstance(value, bool | np.bool_):
            raise _type_error(leaf, value)
        return Fraction(int(value))
    if is_spark_ntz(leaf.column) and isinstance(value, datetime.date | np.datetime64 | _Nanos):
        if isinstance(value, datetime.datetime) and value.tzinfo is not None:
            raise SchemaError(f"filter on {leaf.name!r}: time-zone aware {value!r} compared "
                              "with a timestamp_ntz column (no zone)")
        return _timestamp_nanos(leaf, value) / 1000  # Spark's TIMESTAMP_NTZ: microseconds
    if kind in INTEGER or kind == TypeKind.DECIMAL:
        if isinstance(value, bool | np.bool_) or not isinstance(
                value, int | float | np.integer | np.floating | decimal.Decimal):
            raise _type_error(leaf, value)
        if kind == TypeKind.DECIMAL and isinstance(value, float | np.floating):
            value = decimal.Decimal(repr(float(value)))  # 0.1 means 0.1
        number = _to_fraction(value)
        if kind == TypeKind.DECIMAL and isinstance(number, Fraction):
            number *= 10 ** decimal_scale(leaf.column)
        return number
    if kind == TypeKind.DATE:
        if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
            return Fraction((value - _EPOCH_DATE).days)
        if not isinstance(value, datetime.datetime | np.datetime64 | _Nanos):
            raise _type_error(leaf, value)
        return _timestamp_nanos(leaf, value) / _NANOS_PER_DAY
    # timestamps
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return Fraction(int(value))
    return _timestamp_nanos(leaf, value)


def _float_value(leaf: Leaf, value: Any) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(
            value, int | float | np.integer | np.floating | decimal.Decimal):
        raise _type_error(leaf, value)
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _bytes_value(leaf: Leaf, value: Any) -> str | bytes:
    if leaf.kind in STRING:
        if not isinstance(value, str):
            raise _type_error(leaf, value)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise SchemaError(f"filter on {leaf.name!r}: {value!r} is not valid UTF-8 "
                              "text") from exc
        return _char_literal(leaf.column, str(value))
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    raise _type_error(leaf, value)


def _char_literal(column: OrcType, value: str) -> str:
    """A literal for a ``char(n)`` column as Hive and Spark compare it: trailing spaces do
    not count, and the column's values are padded with spaces to ``n`` characters (as ORC
    Java writes them), so the literal is padded alike (``'ab'`` matches ``'ab   '``). A
    literal longer than ``n`` (spaces aside) is kept: no value equals it."""
    n = column.max_length
    if column.kind != TypeKind.CHAR or not n:
        return value
    core = value.rstrip(" ")
    return core.ljust(n) if len(core) <= n else value


def _domain_value(leaf: Leaf, value: Any) -> Any:
    """The literal in the column's comparison domain: an exact ``Fraction`` of units (discrete
    kinds), a float, str or bytes; or an :class:`_Outside` marker."""
    if leaf.kind in DISCRETE:
        return _units(leaf, value)
    if leaf.kind in FLOATING:
        x = _float_value(leaf, value)
        if math.isnan(x):
            return _Outside.NAN
        return x
    if leaf.kind in STRING or leaf.kind == TypeKind.BINARY:
        return _bytes_value(leaf, value)
    raise _type_error(leaf, value)


def _exact_member(leaf: Leaf, value: Any) -> Any:
    """A literal that some value of the column may equal, normalised; None when none can."""
    if leaf.kind in FLOATING:
        x = _float_value(leaf, value)
        if math.isnan(x):
            return x  # kept as given: Arrow's ``in`` tells NaNs apart by their bits
    v = _domain_value(leaf, value)
    if isinstance(v, _Outside):
        return None
    if isinstance(v, Fraction):
        lo, hi = domain_range(leaf.column)
        if v.denominator != 1 or not lo <= v <= hi:
            return None
        return int(v)
    if leaf.kind == TypeKind.FLOAT and math.isfinite(v) and float(np.float32(v)) != v:
        return None  # no float32 equals it
    return v


def _comparison_leaf(base: Leaf, value: Any) -> Leaf:
    op = base.op
    if value is None:
        hint = "is null" if op == Op.EQ else "is not null" if op == Op.NE else "is null"
        raise SchemaError(f"filter ({base.name!r}, {op.value!r}, None): a comparison with "
                          f"None matches no row; to select missing values write "
                          f"({base.name!r}, {hint!r})")
    value = _plain(_from_text(base, value))
    if _is_null_literal(value):
        return _replace(base, Op.FALSE)  # a comparison with null is null: no row is kept
    if op in (Op.EQ, Op.NE):
        member = _exact_member(base, value)
        if member is None:
            return _replace(base, Op.FALSE if op == Op.EQ else Op.NOT_NULL)
        if isinstance(member, float) and math.isnan(member):
            return _replace(base, Op.FALSE if op == Op.EQ else Op.NOT_NULL)
        return _replace(base, op, member)
    v = _domain_value(base, value)
    if v is _Outside.NAN:
        return _replace(base, Op.FALSE)
    if isinstance(v, _Outside):  # +-infinity: everything or nothing is below it
        below = v is _Outside.BELOW
        everything = (op in (Op.GT, Op.GE)) == below
        return _replace(base, Op.NOT_NULL if everything else Op.FALSE)
    if isinstance(v, Fraction):
        return _discrete_order(base, v)
    return _replace(base, op, v)


def _discrete_order(base: Leaf, v: Fraction) -> Leaf:
    """``<``, ``<=``, ``>``, ``>=`` on a discrete domain: an integer bound, or a constant."""
    lo, hi = domain_range(base.column)
    op = base.op
    if op in (Op.LT, Op.GE):
        bound = math.ceil(v)  # x < v  <=>  x < ceil(v);  x >= v  <=>  x >= ceil(v)
        all_below = bound > hi  # every value is below the bound
        none_below = bound <= lo
        if op == Op.LT:
            folded = Op.NOT_NULL if all_below else Op.FALSE if none_below else None
        else:
            folded = Op.FALSE if all_below else Op.NOT_NULL if none_below else None
    else:
        bound = math.floor(v)  # x <= v  <=>  x <= floor(v);  x > v  <=>  x > floor(v)
        all_at_most = bound >= hi
        none_at_most = bound < lo
        if op == Op.LE:
            folded = Op.NOT_NULL if all_at_most else Op.FALSE if none_at_most else None
        else:
            folded = Op.FALSE if all_at_most else Op.NOT_NULL if none_at_most else None
    return _replace(base, folded) if folded is not None else _replace(base, op, bound)


def _set_leaf(base: Leaf, values: Any) -> Leaf:
    if isinstance(values, pa.ChunkedArray | pa.Array):
        values = list(values)  # Arrow scalars: converted exactly by _plain
    if isinstance(values, str | bytes | bytearray | dict) or not isinstance(values, Iterable):
        raise SchemaError(f"filter on {base.name!r}: {base.op.value!r} needs a list, tuple or "
                          f"set of values, got {type(values).__name__}")
    members: dict[Any, Any] = {}
    null_in_set = False
    for value in values:
        value = _plain(_from_text(base, value))
        if _is_null_literal(value):
            null_in_set = True
            continue
        member = _exact_member(base, value)
        if member is not None:
            members.setdefault(_set_key(member), member)
    if not members and not null_in_set:
        return _replace(base, Op.FALSE if base.op == Op.IN else Op.TRUE)
    return Leaf(base.name, base.column, base.path, base.ancestors, base.op,
                values=tuple(members.values()), null_in_set=null_in_set)


def _set_key(member: Any) -> Any:
    """What makes two members of an ``in`` set the same: equality, except that 0.0 and -0.0
    stay apart (pyarrow's ``is_in`` matches a zero only with a zero of its own sign)."""
    if isinstance(member, float) and member == 0.0:
        return (member, math.copysign(1.0, member))
    return member


def _replace(base: Leaf, op: Op, value: Any = None) -> Leaf:
    return Leaf(base.name, base.column, base.path, base.ancestors, op, value,
                from_comparison=base.op in COMPARISONS)

