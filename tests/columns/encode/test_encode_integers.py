"""Boolean, integer and date encoders: round trips, positions, statistics, bloom filters."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from encode_helpers import (
    K,
    check_positions,
    group_slices,
    kinds,
    round_trip,
    stream,
    value_starts,
)
from helpers.random_tables import random_array

from aorc.errors import SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.bloom import BloomFilter, thomas_wang_hash64
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.types import OrcType, TypeKind

INTEGER_TYPES = [(TypeKind.BYTE, pa.int8()), (TypeKind.SHORT, pa.int16()),
                 (TypeKind.INT, pa.int32()), (TypeKind.LONG, pa.int64()),
                 (TypeKind.DATE, pa.date32())]


def _starts(n: int, stride: int) -> np.ndarray:
    return np.arange(0, max(n, 1), stride)


@pytest.mark.parametrize(("kind", "dt"), INTEGER_TYPES)
@pytest.mark.parametrize("null_rate", [0.0, 0.3, 1.0])
def test_round_trip_and_row_groups(kind: TypeKind, dt: pa.DataType, null_rate: float) -> None:
    rng = np.random.default_rng(int(kind) * 10 + int(null_rate * 10))
    n = 12_345
    arr = random_array(rng, dt, n, null_rate=null_rate)
    starts = _starts(n, 1000)
    enc, back = round_trip(OrcType(kind), arr, starts)
    assert back.equals(arr)
    expected_kind = pb.ColumnEncoding.DIRECT if kind == TypeKind.BYTE else \
        pb.ColumnEncoding.DIRECT_V2
    assert enc.encoding.kind == expected_kind
    assert kinds(enc) == ([K.PRESENT] if arr.null_count else []) + [K.DATA]
    vstarts = value_starts(arr, starts)
    count = n - arr.null_count
    reader = "byte" if kind == TypeKind.BYTE else "signed"
    check_positions(stream(enc, K.DATA), reader, count, vstarts)
    if arr.null_count:
        check_positions(stream(enc, K.PRESENT), "bool", n, starts)
    for g, sl in enumerate(group_slices(n, starts)):
        part = arr[sl]
        st = enc.row_group_stats[g]
        assert st.numberOfValues == len(part) - part.null_count
        assert st.hasNull == (part.null_count > 0)
        if st.numberOfValues == 0:
            continue
        mm = pc.min_max(part)
        if kind == TypeKind.DATE:
            assert st.dateStatistics.minimum == mm["min"].cast(pa.int32()).as_py()
            assert st.dateStatistics.maximum == mm["max"].cast(pa.int32()).as_py()
        else:
            assert st.intStatistics.minimum == mm["min"].as_py()
            assert st.intStatistics.maximum == mm["max"].as_py()
            total = sum(v for v in part.to_pylist() if v is not None)
            if -(2**63) <= total < 2**63 and kind != TypeKind.LONG:
                assert st.intStatistics.sum == total
    assert enc.stripe_stats.numberOfValues == count
    assert enc.stripe_stats.hasNull == (arr.null_count > 0)


def test_boolean() -> None:
    rng = np.random.default_rng(3)
    n = 20_003
    arr = random_array(rng, pa.bool_(), n, null_rate=0.2)
    starts = _starts(n, 777)  # not a multiple of 8: positions need bit offsets
    enc, back = round_trip(OrcType(TypeKind.BOOLEAN), arr, starts,
                           EncodeOptions(bloom_filter_columns={0}))
    assert back.equals(arr)
    assert enc.encoding.kind == pb.ColumnEncoding.DIRECT
    check_positions(stream(enc, K.DATA), "bool", n - arr.null_count, value_starts(arr, starts))
    check_positions(stream(enc, K.PRESENT), "bool", n, starts)
    for g, sl in enumerate(group_slices(n, starts)):
        trues = pc.sum(arr[sl].cast(pa.int64())).as_py() or 0
        assert list(enc.row_group_stats[g].bucketStatistics.count) == [trues]
    assert list(enc.stripe_stats.bucketStatistics.count) == [pc.sum(arr.cast(pa.int64())).as_py()]
    # ORC Java adds nothing to a boolean column's bloom filters
    assert enc.bloom_filters is not None
    assert all(not bf.words.any() for bf in enc.bloom_filters)


def test_integer_sum_overflow() -> None:
    big = 2**62
    values = pa.array([big, big, -big, 5, 1, 2], pa.int64())  # running sum leaves int64
    enc = encode_column(OrcType(TypeKind.LONG), values, [0, 3], EncodeOptions())
    first, second = enc.row_group_stats
    assert not first.intStatistics.HasField("sum")  # 2**62 + 2**62 overflows at once
    assert first.intStatistics.minimum == -big and first.intStatistics.maximum == big
    assert second.intStatistics.sum == 8
    assert not enc.stripe_stats.intStatistics.HasField("sum")
    # the running sum matters, not only the total: MAX, 1, -1 overflows on the way
    enc = encode_column(OrcType(TypeKind.LONG), pa.array([2**63 - 1, 1, -1]), [0], EncodeOptions())
    assert not enc.row_group_stats[0].intStatistics.HasField("sum")
    enc = encode_column(OrcType(TypeKind.LONG), pa.array([-1, 2**63 - 1, 1]), [0], EncodeOptions())
    assert enc.row_group_stats[0].intStatistics.sum == 2**63 - 1


def test_bloom_filters_hold_the_values() -> None:
    rng = np.random.default_rng(4)
    arr = pa.array(rng.integers(-10**12, 10**12, 5000))
    opts = EncodeOptions(bloom_filter_columns={0}, row_index_stride=2000, bloom_filter_fpp=0.05)
    enc = encode_column(OrcType(TypeKind.LONG), arr, [0, 2000, 4000], opts)
    assert enc.encoding.bloomEncoding == 1
    assert enc.bloom_filters is not None and len(enc.bloom_filters) == 3
    ref = BloomFilter.for_entries(2000, 0.05)
    values = arr.to_numpy()
    for g, sl in enumerate(group_slices(5000, [0, 2000, 4000])):
        bf = enc.bloom_filters[g]
        assert (bf.num_bits, bf.num_hash_functions) == (ref.num_bits, ref.num_hash_functions)
        assert bf.test_hashes(thomas_wang_hash64(values[sl])).all()
        # a filter of exactly these values
        expected = BloomFilter.for_entries(2000, 0.05)
        expected.add_hashes(thomas_wang_hash64(values[sl]))
        assert bf == expected


def test_no_bloom_filters_without_row_index() -> None:
    enc = encode_column(OrcType(TypeKind.INT), pa.array([1, 2, 3], pa.int32()), [],
                        EncodeOptions(bloom_filter_columns={0}))
    assert enc.bloom_filters is None and not enc.encoding.HasField("bloomEncoding")
    assert enc.row_group_stats == [] and enc.streams[0].positions == []
    assert enc.stripe_stats.intStatistics.sum == 6


def test_date64_and_wider_inputs_are_converted() -> None:
    days = np.array([-719_162, 0, 19_000, 2_932_896], np.int64)
    arr = pa.array(days * 86_400_000, pa.date64())
    enc, back = round_trip(OrcType(TypeKind.DATE), arr)
    assert back.equals(pa.array(days.astype(np.int32), pa.date32()))
    enc, back = round_trip(OrcType(TypeKind.SHORT), pa.array([1, -2, 300], pa.int64()))
    assert back.to_pylist() == [1, -2, 300]
    with pytest.raises(SchemaError):
        encode_column(OrcType(TypeKind.SHORT), pa.array([70_000]), [0], EncodeOptions())


def test_empty_and_all_null() -> None:
    enc, back = round_trip(OrcType(TypeKind.INT), pa.array([], pa.int32()))
    assert len(back) == 0 and kinds(enc) == [K.DATA] and stream(enc, K.DATA).data == b""
    assert enc.stripe_stats.numberOfValues == 0 and not enc.stripe_stats.hasNull
    assert not enc.stripe_stats.intStatistics.HasField("minimum")
    assert enc.stripe_stats.intStatistics.sum == 0
    enc, back = round_trip(OrcType(TypeKind.INT), pa.nulls(100, pa.int32()), [0, 50])
    assert back.equals(pa.nulls(100, pa.int32()))
    assert kinds(enc) == [K.PRESENT, K.DATA] and stream(enc, K.DATA).data == b""
    assert [s.numberOfValues for s in enc.row_group_stats] == [0, 0]
    assert all(s.hasNull for s in enc.row_group_stats)
    enc, back = round_trip(OrcType(TypeKind.INT), pa.nulls(10))  # Arrow null type
    assert back.null_count == 10


@pytest.mark.parametrize("seed", range(6))
def test_group_sums_follow_java_running_sums(seed: int) -> None:
    """The C kernel's group sums against a model of IntegerStatistics (``Math.addExact`` on
    each value, overflow sticky) on values near the int64 limits and ordinary ones."""
    from aorc.format.codec.rle import group_sums
    from aorc.format.columns.encode.base import exact_group_sums

    rng = np.random.default_rng(seed)
    n = 5000
    big = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    small = rng.integers(-1000, 1000, n, dtype=np.int64)
    values = np.where(rng.random(n) < (0.002, 0.05, 0.5, 1.0, 0.0, 0.01)[seed], big, small)
    if seed == 4:
        values[:3] = [2**63 - 1, 1, -1]  # overflows on the way, not in the total
    cuts = np.sort(rng.integers(0, n + 1, 40))
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [n]))
    sums, overflow = group_sums(values, starts, ends)
    py_sums, py_overflow = exact_group_sums(values, starts, ends)
    for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        total, over = 0, False
        for x in values[a:b].tolist():
            total += x
            if not -(2**63) <= total < 2**63:
                over = True
                break
        assert bool(overflow[g]) == bool(py_overflow[g]) == over, g
        if not over:
            assert int(sums[g]) == py_sums[g] == total, g
    with pytest.raises(ValueError, match="outside"):
        group_sums(values, [0], [n + 1])
