"""Float and double encoder: raw values, canonical NaN, Java's statistics rules."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from encode_helpers import K, kinds, round_trip, stream, value_starts
from helpers.random_tables import random_array

from aorc.format.codec.bloom import double_to_long_bits, thomas_wang_hash64
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.types import OrcType, TypeKind


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


@pytest.mark.parametrize(("kind", "dt"), [(TypeKind.FLOAT, pa.float32()),
                                          (TypeKind.DOUBLE, pa.float64())])
def test_round_trip_positions_and_stats(kind: TypeKind, dt: pa.DataType) -> None:
    rng = np.random.default_rng(int(kind))
    n = 9_999
    arr = random_array(rng, dt, n, null_rate=0.2)
    starts = np.arange(0, n, 1234)
    enc, back = round_trip(OrcType(kind), arr, starts, EncodeOptions(bloom_filter_columns={0}))
    values = arr.drop_null().to_numpy(zero_copy_only=False)
    got = back.drop_null().to_numpy(zero_copy_only=False)
    assert np.array_equal(got, values, equal_nan=True)
    assert np.array_equal(back.is_null().to_numpy(zero_copy_only=False),
                          arr.is_null().to_numpy(zero_copy_only=False))
    data = stream(enc, K.DATA)
    size = dt.byte_width
    for pos, v in zip(data.positions, value_starts(arr, starts), strict=True):
        assert pos == [int(v) * size]
        if v < len(values):
            first = np.frombuffer(data.data, values.dtype, 1, pos[0])[0]
            assert first == values[v] or (math.isnan(first) and math.isnan(values[v]))
    wide = values.astype(np.float64)
    bounds = [0, *value_starts(arr, starts)[1:].tolist(), len(values)]
    for g in range(len(starts)):
        seg = wide[bounds[g]:bounds[g + 1]]
        st = enc.row_group_stats[g].doubleStatistics
        if not len(seg):
            assert not st.HasField("minimum") and st.sum == 0
            continue
        total = 0.0
        for x in seg.tolist():  # Java's sequential sum
            total += x
        assert st.sum == total or (math.isnan(st.sum) and math.isnan(total))
        if math.isnan(seg[0]):
            assert math.isnan(st.minimum) and math.isnan(st.maximum)
        else:
            assert st.minimum == np.nanmin(seg) and st.maximum == np.nanmax(seg)
        assert enc.bloom_filters is not None
        assert enc.bloom_filters[g].test_hashes(thomas_wang_hash64(double_to_long_bits(seg))).all()


def test_nan_and_signed_zero_rules() -> None:
    values = pa.array([float("nan"), 1.0, -5.0], pa.float64())
    st = encode_column(OrcType(TypeKind.DOUBLE), values, [0], EncodeOptions()).stripe_stats
    assert math.isnan(st.doubleStatistics.minimum) and math.isnan(st.doubleStatistics.maximum)
    values = pa.array([1.0, float("nan"), -5.0], pa.float64())
    st = encode_column(OrcType(TypeKind.DOUBLE), values, [0], EncodeOptions()).stripe_stats
    assert (st.doubleStatistics.minimum, st.doubleStatistics.maximum) == (-5.0, 1.0)
    assert math.isnan(st.doubleStatistics.sum)
    for seq, first in (([0.0, -0.0], 0.0), ([-0.0, 0.0], -0.0), ([3.0, -0.0, 0.0, 1.0], -0.0)):
        d = encode_column(OrcType(TypeKind.DOUBLE), pa.array(seq), [0], EncodeOptions())
        s = d.stripe_stats.doubleStatistics
        assert _bits(s.minimum) == _bits(first)
    # stripe statistics merge row groups the same way: the first group's NaN stays
    values = pa.array([float("nan"), 1.0, 2.0, -3.0], pa.float64())
    st = encode_column(OrcType(TypeKind.DOUBLE), values, [0, 2], EncodeOptions()).stripe_stats
    assert math.isnan(st.doubleStatistics.minimum)
    values = pa.array([1.0, 2.0, float("nan"), -3.0], pa.float64())
    st = encode_column(OrcType(TypeKind.DOUBLE), values, [0, 2], EncodeOptions()).stripe_stats
    assert st.doubleStatistics.minimum == 1.0  # the NaN group's minimum never replaces 1.0


def test_nan_written_canonical() -> None:
    weird = np.array([0x7FF0000000000001, 0xFFF8000000000123], np.uint64).view(np.float64)
    enc = encode_column(OrcType(TypeKind.DOUBLE), pa.array(weird), [0], EncodeOptions())
    assert stream(enc, K.DATA).data == struct.pack("<QQ", 0x7FF8000000000000, 0x7FF8000000000000)
    f = np.array([0xFFC00001], np.uint32).view(np.float32)
    enc = encode_column(OrcType(TypeKind.FLOAT), pa.array(f), [0], EncodeOptions())
    assert stream(enc, K.DATA).data == struct.pack("<I", 0x7FC00000)


def test_float_widening_and_double_narrowing() -> None:
    enc, back = round_trip(OrcType(TypeKind.FLOAT), pa.array([0.1, 1e40], pa.float64()))
    assert back.type == pa.float32()
    assert back.to_pylist()[0] == float(np.float32(0.1)) and math.isinf(back.to_pylist()[1])
    st = enc.stripe_stats.doubleStatistics
    assert st.minimum == float(np.float32(0.1))  # statistics of the float values


def test_all_null_double() -> None:
    enc, back = round_trip(OrcType(TypeKind.DOUBLE), pa.nulls(5, pa.float64()))
    assert back.null_count == 5 and kinds(enc) == [K.PRESENT, K.DATA]
    assert enc.stripe_stats.doubleStatistics.sum == 0
    assert not enc.stripe_stats.doubleStatistics.HasField("minimum")


@pytest.mark.parametrize("seed", range(5))
def test_double_group_stats_kernel_follows_java_bit_for_bit(seed: int) -> None:
    """The C kernel against a model of DoubleStatisticsImpl.updateDouble written with
    ``java_add`` (x86 NaN rules): sums, extremes and the bits of NaNs and signed zeros."""
    from aorc.format.codec.rle import double_group_stats
    from aorc.format.columns.encode.statistics import java_add

    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e308,
                        struct.unpack("<d", struct.pack("<Q", 0x7FF8_0000_0000_1234))[0]])
    n = 4000
    values = np.where(rng.random(n) < 0.05 * seed, special[rng.integers(0, 7, n)],
                      rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n))
    cuts = np.sort(rng.integers(0, n + 1, 60))
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [n]))
    sums, lows, highs = double_group_stats(values, starts, ends)

    def bits(x: float) -> int:
        return int(struct.unpack("<Q", struct.pack("<d", x))[0])

    for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        if a == b:
            continue
        total, low, high = 0.0, float(values[a]), float(values[a])
        for x in values[a:b].tolist():
            total = java_add(total, x)
            if x < low:
                low = x
            elif x > high:
                high = x
        assert (bits(sums[g]), bits(lows[g]), bits(highs[g])) == \
            (bits(total), bits(low), bits(high)), g
