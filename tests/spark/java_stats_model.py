"""The column statistics ORC Java's writer would record for an Arrow table, computed here.

ORC Java updates a row group's statistics value by value, merges the row groups of a stripe
into the stripe's statistics and the stripes into the file's, and several results depend on
that order: double sums, integer and decimal sums that overflow, string bounds of values over
1024 bytes. This module follows those rules (as ``ColumnStatisticsImpl`` documents them) on
values taken straight from the Arrow data, so that the statistics a file holds can be checked
against values computed independently of the writer.

:func:`expected_statistics` returns, per stripe and per column id (pre-order), the list of
row-group accumulators; :meth:`Acc.expected` turns one into the dict format of
``spark_java_orc.stats_dict``, leaving out what is not defined (fields of empty statistics,
decimal sums that ORC Java would round).
"""

from __future__ import annotations

import decimal
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Acc", "column_levels", "expected_statistics", "merge_all"]

MAX_BYTES_RECORDED = 1024
_I64 = (-(2**63), 2**63 - 1)
_DECIMAL64_MAX = 10**18 - 1
_CONTEXT = decimal.Context(prec=200)


@dataclass
class Level:
    """One ORC column: its Arrow type, its slots and the top-level row of every slot."""

    column_id: int
    type: pa.DataType
    values: pa.Array
    top_rows: np.ndarray


def _parent_valid(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _lengths(arr: pa.Array) -> np.ndarray:
    """Child counts of a list or map array (0 for nulls, which must be empty)."""
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    lengths = np.diff(offsets)
    assert not lengths[~_parent_valid(arr)].any(), "null lists must be empty (canonical data)"
    return lengths


def _list_children(arr: pa.Array, top_rows: np.ndarray) -> tuple[list[pa.Array], np.ndarray]:
    lengths = _lengths(arr)
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    start, stop = int(offsets[0]), int(offsets[-1])
    rows = np.repeat(top_rows, lengths)
    if pa.types.is_map(arr.type):
        return [arr.keys.slice(start, stop - start), arr.items.slice(start, stop - start)], rows
    return [arr.values.slice(start, stop - start)], rows


def column_levels(table: pa.Table) -> list[Level]:
    """Every ORC column of ``table`` (root struct first), in column-id order."""
    n = table.num_rows
    root = pa.StructArray.from_arrays(
        [c.combine_chunks() for c in table.columns], fields=list(table.schema)
    )
    out: list[Level] = []

    def walk(arr: pa.Array, top_rows: np.ndarray) -> None:
        out.append(Level(len(out), arr.type, arr, top_rows))
        t = arr.type
        if pa.types.is_struct(t):
            valid = _parent_valid(arr)
            for i in range(t.num_fields):
                walk(arr.field(i).filter(pa.array(valid)), top_rows[valid])
        elif pa.types.is_list(t) or pa.types.is_map(t):
            children, rows = _list_children(arr, top_rows)
            for child in children:
                walk(child, rows)

    walk(root, np.arange(n, dtype=np.int64))
    return out


# ---------------------------------------------------------------------------------------------
# accumulators: one per column and row group, merged as ORC Java merges them


@dataclass
class Acc:
    """Statistics of one column over some values, with ORC Java's update and merge rules."""

    kind: str
    count: int = 0
    has_null: bool = False
    state: dict[str, Any] = field(default_factory=dict)

    def expected(self) -> dict[str, Any]:
        """The dict ``stats_dict`` must return for these statistics (defined fields only)."""
        out: dict[str, Any] = {"kind": self.kind, "count": self.count, "has_null": self.has_null}
        if self.count or self.kind in ("BooleanStatisticsImpl", "BinaryStatisticsImpl"):
            out.update(_EXPECTED[self.kind](self.state))
        return out


def _int_update(s: dict[str, Any], values: np.ndarray) -> None:
    if not len(values):
        return
    lo, hi = int(values.min()), int(values.max())
    if s.get("min") is None:
        s.update(min=lo, max=hi, sum=0, overflow=False)
    else:
        s["min"], s["max"] = min(s["min"], lo), max(s["max"], hi)
    if not s["overflow"]:
        for partial in itertools.accumulate(values.tolist(), initial=s["sum"]):
            if not _I64[0] <= partial <= _I64[1]:
                s["overflow"] = True
                return
        s["sum"] = partial


def _int_merge(s: dict[str, Any], o: dict[str, Any]) -> None:
    if o.get("min") is None:
        return
    if s.get("min") is None:
        s.update(o)
        return
    s["min"], s["max"] = min(s["min"], o["min"]), max(s["max"], o["max"])
    s["overflow"] = s["overflow"] or o["overflow"]
    if not s["overflow"]:
        total = s["sum"] + o["sum"]
        s["overflow"] = not _I64[0] <= total <= _I64[1]
        s["sum"] = total


def _double_update(s: dict[str, Any], values: np.ndarray) -> None:
    if not len(values):
        return
    values = values.astype(np.float64)
    if "min" not in s:
        first = float(values[0])
        s.update(min=first, max=first, sum=0.0)
    rest = values[~np.isnan(values)]
    # comparisons with NaN are false: a NaN first value sticks, later NaNs are ignored
    if len(rest) and not math.isnan(s["min"]):
        s["min"] = min(s["min"], float(rest.min()))
        s["max"] = max(s["max"], float(rest.max()))
    total = s["sum"]
    for v in values.tolist():
        total += v
    s["sum"] = total


def _double_merge(s: dict[str, Any], o: dict[str, Any]) -> None:
    if "min" not in o:
        s["sum"] = s.get("sum", 0.0) + o.get("sum", 0.0)
        return
    if "min" not in s:
        s.update(min=o["min"], max=o["max"], sum=s.get("sum", 0.0) + o["sum"])
        return
    if o["min"] < s["min"]:
        s["min"] = o["min"]
    if o["max"] > s["max"]:
        s["max"] = o["max"]
    s["sum"] += o["sum"]


def _lower_bound(b: bytes) -> bytes:
    cut = MAX_BYTES_RECORDED
    while b[cut] & 0xC0 == 0x80:
        cut -= 1
    return b[:cut]


def _upper_bound(b: bytes) -> bytes:
    cut = len(_lower_bound(b))
    last = cut - 1
    while b[last] & 0xC0 == 0x80:
        last -= 1
    code = ord(b[last:cut].decode("utf-8")) + 1
    assert code != 0x7F and code <= 0x10FFFF and not 0xD800 <= code < 0xE000, "test data"
    return b[:last] + chr(code).encode("utf-8")


def _string_update(s: dict[str, Any], values: list[bytes]) -> None:
    for v in values:
        long = len(v) > MAX_BYTES_RECORDED
        if s.get("min") is None:
            s.update(min=_lower_bound(v) if long else v, max=_upper_bound(v) if long else v,
                     lower=long, upper=long, sum=s.get("sum", 0))
        elif s["min"] > v:
            s["min"], s["lower"] = (_lower_bound(v), True) if long else (v, False)
        elif s["max"] < v:
            s["max"], s["upper"] = (_upper_bound(v), True) if long else (v, False)
        s["sum"] = s.get("sum", 0) + len(v)


def _string_merge(s: dict[str, Any], o: dict[str, Any], s_count: int, o_count: int) -> None:
    if not s_count:
        if o_count:
            s.update(min=o["min"], max=o["max"], lower=o["lower"], upper=o["upper"])
    elif o_count:
        if s["min"] > o["min"]:
            s["min"], s["lower"] = o["min"], o["lower"]
        if s["max"] < o["max"]:
            s["max"], s["upper"] = o["max"], o["upper"]
    s["sum"] = s.get("sum", 0) + o.get("sum", 0)


def _round38(value: decimal.Decimal, state: dict[str, Any]) -> decimal.Decimal | None:
    """HiveDecimal arithmetic keeps at most 38 digits: None on integer overflow; marks the
    state "rounded" when fraction digits would have to go (the model stops there)."""
    digits = value.adjusted() + 1 if value else 1
    if digits > 38:
        return None
    exponent = value.normalize(_CONTEXT).as_tuple().exponent
    assert isinstance(exponent, int)
    if max(digits, 0) - exponent > 38:
        state["rounded"] = True
    return value


def _decimal_update(s: dict[str, Any], values: list[decimal.Decimal], scale: int,
                    short: bool) -> None:
    for v in values:
        if s.get("min") is None:
            s.update(min=v, max=v)
        elif s["min"] > v:
            s["min"] = v
        elif s["max"] < v:
            s["max"] = v
        _decimal_add(s, v, scale, short)


def _decimal_add(s: dict[str, Any], v: decimal.Decimal | None, scale: int, short: bool) -> None:
    if short:  # Decimal64StatisticsImpl: unscaled long, "has sum" while within 18 digits
        if s.get("has_sum", True) and v is not None:
            total = s.get("sum64", 0) + int(v.scaleb(scale, _CONTEXT))
            s["sum64"], s["has_sum"] = total, abs(total) <= _DECIMAL64_MAX
        elif v is None:
            s["has_sum"] = False
        return
    current = s.get("sum", decimal.Decimal(0))
    if current is None or v is None:
        s["sum"] = None
        return
    s["sum"] = _round38(_CONTEXT.add(current, v), s)


def _decimal_merge(s: dict[str, Any], o: dict[str, Any], s_count: int, scale: int,
                   short: bool) -> None:
    if short:
        if not s_count:  # ORC Java copies min, max and the sum, not "has sum"
            s.update(min=o.get("min"), max=o.get("max"), sum64=o.get("sum64", 0))
            s["rounded"] = s.get("rounded", False) or o.get("rounded", False)
            return
        if o.get("min") is not None:
            s["min"], s["max"] = min(s["min"], o["min"]), max(s["max"], o["max"])
        if s.get("has_sum", True) and o.get("has_sum", True):
            total = s.get("sum64", 0) + o.get("sum64", 0)
            s["sum64"], s["has_sum"] = total, abs(total) <= _DECIMAL64_MAX
        else:
            s["has_sum"] = False
        return
    if s.get("min") is None:
        s.update(min=o.get("min"), max=o.get("max"), sum=o.get("sum", decimal.Decimal(0)))
        s["rounded"] = s.get("rounded", False) or o.get("rounded", False)
    elif o.get("min") is not None:
        s["min"], s["max"] = min(s["min"], o["min"]), max(s["max"], o["max"])
        s["rounded"] = s.get("rounded", False) or o.get("rounded", False)
        _decimal_add(s, o.get("sum", decimal.Decimal(0)), scale, short)


def _decimal_expected(s: dict[str, Any]) -> dict[str, Any]:
    out = {"min": s["min"], "max": s["max"]}
    if s.get("rounded"):
        return out
    if "sum64" in s or "has_sum" in s:
        sum64 = s.get("sum64", 0)
        # ORC Java's reader drops a decimal64 sum of more than 18 digits
        defined = s.get("has_sum", True) and abs(sum64) <= _DECIMAL64_MAX
        out["sum"] = decimal.Decimal(sum64).scaleb(-s["scale"], _CONTEXT) if defined else None
    else:
        out["sum"] = s.get("sum", decimal.Decimal(0))
    return out


def _timestamp_expected(s: dict[str, Any]) -> dict[str, Any]:
    return {"min": s["min"], "max": s["max"], "min_local": s["min"], "max_local": s["max"]}


_EXPECTED = {
    "IntegerStatisticsImpl": lambda s: {
        "min": s["min"], "max": s["max"], "sum": None if s["overflow"] else s["sum"],
    },
    "DoubleStatisticsImpl": lambda s: {"min": s["min"], "max": s["max"], "sum": s["sum"]},
    "StringStatisticsImpl": lambda s: {
        "min": None if s["lower"] else s["min"].decode("utf-8"),
        "max": None if s["upper"] else s["max"].decode("utf-8"),
        "lower": s["min"].decode("utf-8"), "upper": s["max"].decode("utf-8"), "sum": s["sum"],
    },
    "BinaryStatisticsImpl": lambda s: {"sum": s.get("sum", 0)},
    "BooleanStatisticsImpl": lambda s: {
        "true_count": s.get("true", 0), "false_count": s.get("false", 0),
    },
    "DateStatisticsImpl": lambda s: {"min": s["min"], "max": s["max"]},
    "TimestampStatisticsImpl": _timestamp_expected,
    "TimestampInstantStatisticsImpl": _timestamp_expected,
    "DecimalStatisticsImpl": _decimal_expected,
    "Decimal64StatisticsImpl": _decimal_expected,
    "CollectionColumnStatisticsImpl": lambda s: {
        "min_children": s["min"], "max_children": s["max"], "total_children": s["sum"],
    },
    "ColumnStatisticsImpl": lambda s: {},
}  # fmt: skip


def stats_kind(t: pa.DataType) -> str:
    """The ORC Java statistics class of the column aorc writes for Arrow type ``t``."""
    if pa.types.is_boolean(t):
        return "BooleanStatisticsImpl"
    if pa.types.is_integer(t):
        return "IntegerStatisticsImpl"
    if pa.types.is_floating(t):
        return "DoubleStatisticsImpl"
    if pa.types.is_string(t):
        return "StringStatisticsImpl"
    if pa.types.is_binary(t):
        return "BinaryStatisticsImpl"
    if pa.types.is_date32(t):
        return "DateStatisticsImpl"
    if pa.types.is_timestamp(t):
        return "TimestampStatisticsImpl" if t.tz is None else "TimestampInstantStatisticsImpl"
    if pa.types.is_decimal(t):
        return "Decimal64StatisticsImpl" if t.precision <= 18 else "DecimalStatisticsImpl"
    if pa.types.is_list(t) or pa.types.is_map(t):
        return "CollectionColumnStatisticsImpl"
    return "ColumnStatisticsImpl"


def _java_timestamp_nanos(values: np.ndarray, unit: str) -> np.ndarray:
    """Epoch nanoseconds as ORC Java's timestamp writer records them in statistics: an
    instant in [-0.999 s, 0) is counted one second later (its seconds are truncated)."""
    ns = values.astype(np.int64) * {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[unit]
    quirk = (ns >= -999_000_000) & (ns < 0)
    return np.where(quirk, ns + 1_000_000_000, ns)


def group_acc(level: Level, start: int, stop: int) -> Acc:
    """The statistics ORC Java computes for slots ``start:stop`` of one column."""
    t = level.type
    arr = level.values.slice(start, stop - start)
    acc = Acc(stats_kind(t), count=len(arr) - arr.null_count, has_null=arr.null_count > 0)
    if level.column_id == 0:
        return acc
    s = acc.state
    valid = arr.drop_null() if arr.null_count else arr
    kind = acc.kind
    if kind == "IntegerStatisticsImpl":
        _int_update(s, np.asarray(valid.to_numpy(zero_copy_only=False), dtype=np.int64))
    elif kind == "DoubleStatisticsImpl":
        _double_update(s, np.asarray(valid.to_numpy(zero_copy_only=False)))
    elif kind == "StringStatisticsImpl":
        _string_update(s, [v.encode("utf-8") for v in valid.to_pylist()])
    elif kind == "BinaryStatisticsImpl":
        s["sum"] = sum(len(v) for v in valid.to_pylist())
    elif kind == "BooleanStatisticsImpl":
        s["true"] = int(pc.sum(valid.cast(pa.int64())).as_py() or 0)
        s["false"] = len(valid) - s["true"]
    elif kind == "DateStatisticsImpl" and len(valid):
        days = valid.cast(pa.int32()).to_numpy()
        s.update(min=int(days.min()), max=int(days.max()))
    elif kind.startswith("Timestamp") and len(valid):
        ns = _java_timestamp_nanos(valid.cast(pa.int64()).to_numpy(), t.unit)
        s.update(min=int(ns.min()), max=int(ns.max()))
    elif kind.startswith("Decimal"):
        s["scale"] = t.scale
        _decimal_update(s, valid.to_pylist(), t.scale, t.precision <= 18)
    elif kind == "CollectionColumnStatisticsImpl" and len(valid):
        lengths = _lengths(valid)
        s.update(min=int(lengths.min()), max=int(lengths.max()), sum=int(lengths.sum()))
    return acc


def merge(into: Acc, other: Acc, t: pa.DataType) -> None:
    """Merge ``other`` into ``into`` as ``ColumnStatisticsImpl.merge`` does."""
    s, o, kind = into.state, other.state, into.kind
    if kind == "IntegerStatisticsImpl":
        _int_merge(s, o)
    elif kind == "DoubleStatisticsImpl":
        _double_merge(s, o)
    elif kind == "StringStatisticsImpl":
        _string_merge(s, o, into.count, other.count)
    elif kind in ("BinaryStatisticsImpl",):
        s["sum"] = s.get("sum", 0) + o.get("sum", 0)
    elif kind == "BooleanStatisticsImpl":
        s["true"] = s.get("true", 0) + o.get("true", 0)
        s["false"] = s.get("false", 0) + o.get("false", 0)
    elif kind.startswith("Decimal"):
        s["scale"] = t.scale
        _decimal_merge(s, o, into.count, t.scale, t.precision <= 18)
    elif "min" in o:
        if "min" not in s:
            s.update(o)
        else:
            s["min"], s["max"] = min(s["min"], o["min"]), max(s["max"], o["max"])
            if "sum" in o:
                s["sum"] += o["sum"]
    into.count += other.count
    into.has_null = into.has_null or other.has_null


def merge_all(accs: list[Acc], t: pa.DataType) -> Acc:
    """A fresh accumulator with ``accs`` merged into it in order."""
    total = Acc(stats_kind(t))
    for acc in accs:
        merge(total, acc, t)
    return total


def _groups(stripe_rows: list[int], stride: int) -> Iterator[list[tuple[int, int]]]:
    """Per stripe, the top-level row ranges of its row groups."""
    start = 0
    for rows in stripe_rows:
        step = stride if stride > 0 else max(rows, 1)
        yield [(a, min(a + step, start + rows)) for a in range(start, start + rows, step)]
        start += rows


def expected_statistics(table: pa.Table, stripe_rows: list[int], stride: int
                        ) -> tuple[list[Level], list[list[list[Acc]]]]:
    """Row-group statistics ORC Java would compute: ``[stripe][column][group] -> Acc``."""
    levels = column_levels(table)
    result: list[list[list[Acc]]] = []
    for groups in _groups(stripe_rows, stride):
        per_column = []
        for level in levels:
            bounds = np.searchsorted(level.top_rows, [a for a, _ in groups] + [groups[-1][1]])
            per_column.append([group_acc(level, int(bounds[i]), int(bounds[i + 1]))
                               for i in range(len(groups))])
        result.append(per_column)
    return levels, result
