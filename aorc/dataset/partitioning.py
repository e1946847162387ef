"""Hive partitioning: ``key=value`` folders, their value types, and filters on them.

One implementation serves datasets (:mod:`aorc.dataset.discovery`) and ``aorc.spark``
(:mod:`aorc.spark.plan`). :func:`partition_values` reads a file's ``key=value`` folders below
its root: names and values URL-unescaped (Spark escapes ``/``, ``=``, ``%``, ``:``, ... as
``%XX``), ``__HIVE_DEFAULT_PARTITION__`` null, keys in folder order.

Without an explicit schema a column's type is inferred as Spark infers it
(``PartitioningUtils.inferPartitionColumnValue``), each value tried in Spark's order and with
Spark's parsers: ``int32`` (an int), ``int64`` (a long), ``decimal128(p, 0)`` (an integral
number beyond long or with an exponent, such as ``1e5``, up to 38 digits), ``float64`` (what
Java's ``Double.parseDouble`` takes: ``1.5``, `` 1``, ``NaN``, ``Infinity``, ``1f``),
:data:`PARTITION_TIMESTAMP` (``yyyy-MM-dd HH:mm:ss`` with at most one digit of fraction, the
wall clock), ``date32`` (``yyyy-MM-dd``), else ``string``. A column's values widen as Spark
widens them (int < long < decimal, int < double, date < timestamp) and incompatible types
(double with long or decimal, a number with a date, anything with a string) make a string
column. Nulls do not vote; an all-null column is a string (Spark's is ``void``).
"""

from __future__ import annotations

import datetime
import decimal
import os
import re
import urllib.parse
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.hive import HIVE_DEFAULT_PARTITION
from aorc.errors import SchemaError
from aorc.filters.literals import parse_text
from aorc.filters.ops import Op, op_named

__all__ = [
    "HIVE_DEFAULT_PARTITION",
    "PARTITION_TIMESTAMP",
    "Clauses",
    "filter_value",
    "infer_partition_schema",
    "normalize_filters",
    "parse_partition_path",
    "partition_table",
    "partition_value",
    "partition_values",
    "surviving_rows",
    "term_expression",
]


#: The type of inferred timestamp partition columns: the folder's wall clock, in microseconds
#: (Spark's precision), no time zone (Spark's TimestampType reads it in the session's zone).
PARTITION_TIMESTAMP = pa.timestamp("us")

#: Filters in disjunctive normal form: OR of ANDs of ``(column, op, value)``.
Clauses = list[list[tuple[str, str, Any]]]


# Spark's grammars (PartitioningUtils.inferPartitionColumnValue): Integer.parseInt and
# Long.parseLong, new BigDecimal(...), Double.parseDouble (which trims, and takes NaN,
# Infinity, hex and an f/d suffix), the date pattern yyyy-MM-dd and the timestamp pattern
# yyyy-MM-dd HH:mm:ss[.S] (one digit of fraction at most), both parsed strictly.
_INT = re.compile(r"[+-]?[0-9]+")
_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DOUBLE = re.compile(r"[+-]?(?:NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"[fFdD]?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|[0-9a-fA-F]*\.[0-9a-fA-F]+)"
                     r"[pP][+-]?[0-9]+[fFdD]?)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2})"
                        r"(?:\.([0-9]))?")
_JAVA_SPACE = "".join(chr(c) for c in range(33))  # what Java's String.trim removes
_MAX_PRECISION = 38  # Spark's DecimalType.MAX_PRECISION

#: A partition value's Spark type, as aorc names it: "int", "long", ("decimal", precision),
#: "double", "timestamp", "date", "string" or "null".
_Kind = str | tuple[str, int]


def _java_double(text: str) -> float:
    """Java's Double.parseDouble (ValueError when it would throw)."""
    body = text.strip(_JAVA_SPACE)
    if not _DOUBLE.fullmatch(body):
        raise ValueError(f"not a Java double: {text!r}")
    if body[-1] in "fFdD" and not body.endswith("Infinity"):
        body = body[:-1]
    if "x" in body or "X" in body:
        return float.fromhex(body)
    return float(body)


def _timestamp(text: str) -> datetime.datetime:
    """A ``yyyy-MM-dd HH:mm:ss[.S]`` wall clock (ValueError otherwise)."""
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        raise ValueError(f"not a partition timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    tenths = int(match.group(7) or 0)
    return datetime.datetime(year, month, day, hour, minute, second, tenths * 100_000)


def _date(text: str) -> datetime.date:
    if not _DATE.fullmatch(text):
        raise ValueError(f"not a yyyy-MM-dd date: {text!r}")
    return datetime.date.fromisoformat(text)


def _decimal_precision(text: str) -> int | None:
    """The precision of Spark's DecimalType for an integral BigDecimal ``text`` (scale 0
    after Spark drops a negative one), ``None`` when Spark would not make it a decimal."""
    if not _BIG_DECIMAL.fullmatch(text):
        return None
    sign, digits, exponent = decimal.Decimal(text).as_tuple()
    if not isinstance(exponent, int) or exponent < 0:  # BigDecimal scale > 0: 1.5, 1.0
        return None
    precision = len(digits) + exponent
    return precision if precision <= _MAX_PRECISION else None


def _infer_kind(text: str | None) -> _Kind:
    """The Spark type of one (unescaped) folder value, tried in Spark's order."""
    if text is None:
        return "null"
    if _INT.fullmatch(text):
        n = int(text)
        if -(2**31) <= n < 2**31:
            return "int"
        if -(2**63) <= n < 2**63:
            return "long"
    precision = _decimal_precision(text)
    if precision is not None:
        return ("decimal", precision)
    for kind, parse in (("double", _java_double), ("timestamp", _timestamp), ("date", _date)):
        try:
            parse(text)
        except ValueError:
            continue
        return kind
    return "string"


def _wider(a: _Kind, b: _Kind) -> _Kind:
    """Spark's findWiderTypeForPartitionColumn: numbers widen (int < long < decimal, int <
    double) but double never meets long or decimal, a date widens to a timestamp, anything
    else is a string."""
    if a == b or b == "null":
        return a
    if a == "null":
        return b
    pair = {a if isinstance(a, str) else "decimal", b if isinstance(b, str) else "decimal"}
    if pair == {"int", "long"}:
        return "long"
    if pair == {"int", "double"}:
        return "double"
    if pair == {"date", "timestamp"}:
        return "timestamp"
    if "decimal" in pair and pair <= {"int", "long", "decimal"}:
        floor = {"int": 10, "long": 20}  # DecimalType.forType(IntegerType / LongType)
        return ("decimal", max(k[1] if isinstance(k, tuple) else floor[k] for k in (a, b)))
    return "string"


def _arrow_type(kind: _Kind) -> pa.DataType:
    if isinstance(kind, tuple):
        return pa.decimal128(kind[1], 0)
    return {"int": pa.int32(), "long": pa.int64(), "double": pa.float64(),
            "date": pa.date32(), "timestamp": PARTITION_TIMESTAMP}.get(kind, pa.string())


def _infer_type(values: Sequence[str | None]) -> pa.DataType:
    kind: _Kind = "null"
    for value in values:
        kind = _wider(kind, _infer_kind(value))
        if kind == "string":
            break
    return _arrow_type(kind)


def partition_value(text: str, t: pa.DataType) -> Any:
    """The Python value of folder value ``text`` (unescaped) in a column of type ``t``
    (one that :func:`infer_partition_schema` infers), parsed as Spark parses it.

    Raises:
        ValueError: ``text`` is not a value of ``t`` in Spark's grammar.
    """
    if pa.types.is_string(t):
        return text
    if pa.types.is_integer(t):
        if not _INT.fullmatch(text):
            raise ValueError(f"not an integer: {text!r}")
        return int(text)
    if pa.types.is_decimal(t):
        if _decimal_precision(text) is None:
            raise ValueError(f"not an integral decimal: {text!r}")
        return decimal.Decimal(int(decimal.Decimal(text)))
    if pa.types.is_floating(t):
        return _java_double(text)
    if pa.types.is_date(t):
        return _date(text)
    if pa.types.is_timestamp(t):
        try:
            return _timestamp(text)
        except ValueError:  # a date in a column widened to timestamps: its midnight
            return datetime.datetime.combine(_date(text), datetime.time())
    raise ValueError(f"partition values are not parsed as {t}")


def partition_values(root: str, path: str) -> dict[str, str | None]:
    """The ``key=value`` folders of ``path`` below ``root`` (see
    :func:`parse_partition_path`); none when ``path`` is ``root`` itself or not below it."""
    base = root.rstrip("/" + os.sep)
    if not path.startswith(base) or path[len(base):len(base) + 1] not in ("/", os.sep):
        return {}
    return parse_partition_path(path[len(base) + 1:].replace(os.sep, "/"))


def parse_partition_path(relative: str) -> dict[str, str | None]:
    """The ``key=value`` pairs of the folders of ``relative`` (a file's path below the
    dataset root, ``/``-separated), unescaped, in folder order; the file name itself is not
    a folder."""
    values: dict[str, str | None] = {}
    for part in relative.split("/")[:-1]:
        key, sep, value = part.partition("=")
        if sep and key:
            text = urllib.parse.unquote(value)
            values[urllib.parse.unquote(key)] = None if text == HIVE_DEFAULT_PARTITION else text
    return values


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


def filter_value(value: Any, t: pa.DataType) -> Any:
    """A filter's value for a partition column of type ``t``: a text (JSON filters, or a
    date written as the folders write it) is parsed as :func:`partition_table` parses the
    folders (Spark's grammar), else as data columns parse text values
    (:func:`aorc.filters.literals.parse_text`: timestamps with or without zone, dates,
    decimals), else by Arrow's cast, so ``("dt", "==", "2024-01-01")`` matches a date column
    (a zoned timestamp column takes only Spark's grammar: its wall clock is returned for the
    caller to place in a zone); lists element by element; anything else as it is.

    Raises:
        SchemaError: a text that no grammar reads as a ``t`` (the message says which
            formats are accepted).
    """
    if isinstance(value, (list, tuple, set, frozenset)):
        return [filter_value(v, t) for v in value]
    if not isinstance(value, str) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return value
    try:
        return partition_value(value, t)
    except (ValueError, ArithmeticError, TypeError):
        pass
    if pa.types.is_timestamp(t) and t.tz is not None:
        return value  # which zone a wall clock is in is the caller's to say
    try:
        return parse_text(value, t)
    except ValueError as exc:
        problem = exc
    try:
        return pa.scalar(value).cast(t).as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise SchemaError(f"filters on partition columns: {problem} (the column is {t})"
                          ) from None


def partition_table(values: Sequence[dict[str, str | None]], schema: pa.Schema,
                    paths: Sequence[str]) -> pa.Table:
    """One row per file holding its partition values in the schema's types.

    Raises:
        SchemaError: a value does not fit its column's type (the message names the file).
    """
    columns = []
    for field in schema:
        raw = [v.get(field.name) for v in values]
        try:  # as Spark parses the folders; other texts (given types) as Arrow casts
            columns.append(pa.array([None if r is None else partition_value(r, field.type)
                                     for r in raw], field.type))
            continue
        except (ValueError, ArithmeticError, TypeError, pa.ArrowException):
            pass
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
    """Filters in pyarrow's list form as a list of conjunctions (``None`` for no filter), as
    datasets and ``aorc.spark`` take them: a list whose first item is a term ``(column, op[,
    value])`` is one conjunction (pyarrow's rule, so terms may be lists, as JSON gives them),
    else each item is a conjunction. Ops are spelled as :mod:`aorc.filters.ops` spells them
    (case and spaces aside) and given in their canonical spelling; null tests get the value
    ``None``.

    Raises:
        SchemaError: malformed filters.
    """
    if filters is None:
        return None
    if not isinstance(filters, (list, tuple)) or not filters:
        raise SchemaError("filters must be a non-empty list of (column, op, value) tuples or "
                          f"a list of such lists, got {filters!r}")
    first = filters[0]
    flat = isinstance(first, (list, tuple)) and bool(first) and isinstance(first[0], str)
    out: Clauses = []
    for group in [filters] if flat else filters:
        if not isinstance(group, (list, tuple)) or not group:
            raise SchemaError(f"filters: {group!r} is not a non-empty conjunction")
        out.append([_term(term) for term in group])
    return out


def _term(term: Any) -> tuple[str, str, Any]:
    if (not isinstance(term, (tuple, list)) or len(term) not in (2, 3)
            or not isinstance(term[0], str) or not isinstance(term[1], str)):
        raise SchemaError(f"filters: expected (column, op, value), got {term!r}")
    op = op_named(" ".join(term[1].lower().split()))
    if op is None:
        raise SchemaError(f"filters: unknown operator {term[1]!r}")
    if len(term) == 2 and op not in (Op.IS_NULL, Op.NOT_NULL):
        raise SchemaError(f"filters: {term!r}: {op.value!r} needs a value")
    return (term[0], op.value, term[2] if len(term) == 3 else None)


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
    typed = [(c, op, filter_value(v, table.schema.field(c).type)) for c, op, v in terms]
    expr = term_expression(*typed[0])
    for term in typed[1:]:
        expr = expr & term_expression(*term)
    indexed = table.append_column("__aorc_index", pa.array(range(table.num_rows), pa.int64()))
    try:
        kept = indexed.filter(expr).column("__aorc_index")
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise SchemaError(f"filters on partition columns: {exc}") from exc
    return set(kept.to_pylist())
