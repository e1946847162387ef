"""merge_statistics: Java's merge rules, and stripes merging into what one stripe gives."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from helpers.random_tables import ALL_TYPES, random_array

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.encode import EncodeOptions, encode_column, merge_statistics
from aorc.format.columns.encode.statistics import protos_of, stats_class
from aorc.format.types import OrcType, TypeKind, from_arrow_schema, parse_type_string

TYPES = {k: v for k, v in ALL_TYPES.items() if k != "str_dict"}


def _flat(enc):  # type: ignore[no-untyped-def]
    yield enc
    for c in enc.children:
        yield from _flat(c)


def _without_double_sum(p: pb.ColumnStatistics) -> pb.ColumnStatistics:
    out = pb.ColumnStatistics()
    out.CopyFrom(p)
    if out.HasField("doubleStatistics"):
        out.doubleStatistics.ClearField("sum")
    return out


@pytest.mark.parametrize("name", sorted(TYPES))
def test_merging_two_stripes_gives_the_statistics_of_both(name: str) -> None:
    rng = np.random.default_rng(len(name) * 7)
    arr = random_array(rng, TYPES[name], 4000, null_rate=0.2)
    root = from_arrow_schema(pa.schema([("c", arr.type)]))
    t = root.children[0]
    opts = EncodeOptions()
    whole = encode_column(t, arr, [0, 1000, 2000, 3000], opts)
    first = encode_column(t, arr.slice(0, 2000), [0, 1000], opts)
    second = encode_column(t, arr.slice(2000), [0, 1000], opts)
    for w, a, b in zip(_flat(whole), _flat(first), _flat(second), strict=True):
        node = root.find(w.column_id)
        merged = merge_statistics(a.stripe_stats, b.stripe_stats, node)
        assert _without_double_sum(merged) == _without_double_sum(w.stripe_stats), (
            f"column {w.column_id}")
        if merged.HasField("doubleStatistics"):
            x, y = merged.doubleStatistics.sum, w.stripe_stats.doubleStatistics.sum
            assert x == pytest.approx(y, rel=1e-9, nan_ok=True) or (math.isinf(x) and x == y)
    # and merging in the other direction gives the same extremes and counts
    swapped = merge_statistics(second.stripe_stats, first.stripe_stats, t)
    assert swapped.numberOfValues == whole.stripe_stats.numberOfValues


def _int(count: int, lo: int | None, hi: int | None, total: int | None,
         has_null: bool = False) -> pb.ColumnStatistics:
    p = pb.ColumnStatistics(numberOfValues=count, hasNull=has_null)
    p.intStatistics.SetInParent()
    if lo is not None:
        p.intStatistics.minimum, p.intStatistics.maximum = lo, hi
    if total is not None:
        p.intStatistics.sum = total
    return p


def test_integer_merge() -> None:
    m = merge_statistics(_int(2, 1, 5, 6), _int(1, -3, -3, -3, True))
    assert (m.numberOfValues, m.hasNull) == (3, True)
    assert (m.intStatistics.minimum, m.intStatistics.maximum, m.intStatistics.sum) == (-3, 5, 3)
    m = merge_statistics(_int(1, 1, 1, 2**63 - 1), _int(1, 1, 1, 1))
    assert not m.intStatistics.HasField("sum")  # overflow
    m = merge_statistics(_int(1, 1, 1, None), _int(1, 1, 1, 1))
    assert not m.intStatistics.HasField("sum")  # an overflowed side stays overflowed
    m = merge_statistics(_int(0, None, None, 0), _int(2, 4, 9, 13))
    assert (m.intStatistics.minimum, m.intStatistics.maximum) == (4, 9)


def test_missing_has_null_reads_as_true_and_bytes_add_up() -> None:
    a = pb.ColumnStatistics(numberOfValues=3, bytesOnDisk=10)
    b = pb.ColumnStatistics(numberOfValues=4, hasNull=False, bytesOnDisk=5)
    m = merge_statistics(a, b)
    assert (m.numberOfValues, m.hasNull, m.bytesOnDisk) == (7, True, 15)


def _str(count: int, **fields: object) -> pb.ColumnStatistics:
    p = pb.ColumnStatistics(numberOfValues=count, hasNull=False)
    p.stringStatistics.SetInParent()
    for k, v in fields.items():
        setattr(p.stringStatistics, k, v)
    return p


def test_string_merge_keeps_bounds() -> None:
    m = merge_statistics(_str(1, minimum="b", maximum="c", sum=2),
                         _str(1, lowerBound="a" * 1024, upperBound="d", sum=2000))
    s = m.stringStatistics
    assert s.lowerBound == "a" * 1024 and not s.HasField("minimum")
    assert s.upperBound == "d" and not s.HasField("maximum") and s.sum == 2002
    # an equal minimum keeps the first side's form
    m = merge_statistics(_str(1, minimum="a", maximum="a", sum=1),
                         _str(1, lowerBound="a", upperBound="b", sum=5000))
    assert m.stringStatistics.minimum == "a" and m.stringStatistics.upperBound == "b"
    m = merge_statistics(_str(0), _str(0))
    assert not m.stringStatistics.HasField("minimum") and m.numberOfValues == 0


def test_timestamp_merge_nanos() -> None:
    def ts(lo: int, lo_ns: int | None, hi: int, hi_ns: int | None) -> pb.ColumnStatistics:
        p = pb.ColumnStatistics(numberOfValues=1, hasNull=False)
        p.timestampStatistics.minimumUtc, p.timestampStatistics.maximumUtc = lo, hi
        if lo_ns is not None:
            p.timestampStatistics.minimumNanos = lo_ns
        if hi_ns is not None:
            p.timestampStatistics.maximumNanos = hi_ns
        return p

    m = merge_statistics(ts(100, 5, 200, None), ts(100, 3, 200, 7)).timestampStatistics
    assert (m.minimumUtc, m.minimumNanos, m.maximumUtc, m.maximumNanos) == (100, 3, 200, 0)
    assert not m.HasField("maximumNanos")  # 999999 (absent) beats 6
    m = merge_statistics(ts(100, None, 200, 8), ts(50, 9, 150, 2)).timestampStatistics
    assert (m.minimumUtc, m.minimumNanos, m.maximumUtc, m.maximumNanos) == (50, 9, 200, 8)
    assert not m.HasField("minimum")  # Java 2.x writes only the UTC fields


def test_decimal_merge_depends_on_precision() -> None:
    def dec(lo: str, hi: str, total: str | None) -> pb.ColumnStatistics:
        p = pb.ColumnStatistics(numberOfValues=1, hasNull=False)
        p.decimalStatistics.minimum, p.decimalStatistics.maximum = lo, hi
        if total is not None:
            p.decimalStatistics.sum = total
        return p

    a, b = dec("1.5", "9" * 17, "9" * 17), dec("-2", "3", "9" * 17)
    # 38-digit (HiveDecimal) sums without a type, or for precision over 18
    wide = merge_statistics(a, b).decimalStatistics
    assert wide.sum == "1" + "9" * 16 + "8" and wide.minimum == "-2"
    wide = merge_statistics(a, b, OrcType(TypeKind.DECIMAL, precision=30, scale=1))
    assert wide.decimalStatistics.sum == "1" + "9" * 16 + "8"
    # Decimal64 sums stop at 18 digits at the column's scale: 1999...98.0 needs 19
    narrow = merge_statistics(a, b, OrcType(TypeKind.DECIMAL, precision=18, scale=1))
    assert not narrow.decimalStatistics.HasField("sum")
    assert narrow.decimalStatistics.maximum == "9" * 17
    narrow = merge_statistics(dec("1", "1", "0.25"), dec("1", "2", "1.5"),
                              OrcType(TypeKind.DECIMAL, precision=18, scale=2))
    assert narrow.decimalStatistics.sum == "1.75"
    assert not merge_statistics(a, dec("0", "0", None)).decimalStatistics.HasField("sum")


def test_other_kinds_merge() -> None:
    t = parse_type_string("struct<b:boolean,d:date,x:binary,l:array<int>>")
    arrays = [pa.array([True, False, True]), pa.array([5, -3, 10], pa.date32()),
              pa.array([b"ab", b"", b"xyz"]), pa.array([[1], [], [2, 3, 4]])]
    first = encode_column(t, pa.StructArray.from_arrays([a.slice(0, 2) for a in arrays],
                                                        names=list("bdxl")), [0], EncodeOptions())
    second = encode_column(t, pa.StructArray.from_arrays([a.slice(2) for a in arrays],
                                                         names=list("bdxl")), [0], EncodeOptions())
    merged = [merge_statistics(a.stripe_stats, b.stripe_stats)
              for a, b in zip(_flat(first), _flat(second), strict=True)]
    assert list(merged[1].bucketStatistics.count) == [2]
    assert (merged[2].dateStatistics.minimum, merged[2].dateStatistics.maximum) == (-3, 10)
    assert merged[3].binaryStatistics.sum == 5
    cs = merged[4].collectionStatistics
    assert (cs.minChildren, cs.maxChildren, cs.totalChildren) == (0, 3, 4)
    assert merged[0].numberOfValues == 3


@pytest.mark.parametrize("name", sorted(TYPES))
def test_row_group_statistics_in_one_arena_equal_their_own_messages(name: str) -> None:
    """protos_of (the row groups' statistics as sub-messages of one holder, so that
    protobuf frees one arena, not one per row group) gives to_proto's bytes."""
    rng = np.random.default_rng(len(name) * 11)
    arr = random_array(rng, TYPES[name], 3000, null_rate=0.2)
    root = from_arrow_schema(pa.schema([("c", arr.type)]))
    enc = encode_column(root.children[0], arr, [0, 1000, 2000], EncodeOptions())
    for col in _flat(enc):
        cls, kwargs = stats_class(root.find(col.column_id))
        stats = [cls.from_proto(p, **kwargs) for p in col.row_group_stats]
        assert len(stats) == 3
        assert [p.SerializeToString() for p in protos_of(stats)] == \
            [s.to_proto().SerializeToString() for s in stats]
