"""Decimal encoder: trimmed values and scales, HiveDecimal and Decimal64 statistics."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pytest
from encode_helpers import K, check_positions, group_slices, round_trip, stream, value_starts
from helpers.random_tables import random_array

from aorc.format.codec import rle
from aorc.format.codec.bloom import murmur3_hash64
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.columns.encode.decimals import trim_decimals
from aorc.format.types import OrcType, TypeKind

CTX = decimal.Context(prec=100)


def _text(d: decimal.Decimal) -> str:
    """HiveDecimal's text of a value: plain, no trailing fractional zeros."""
    if not d:
        return "0"
    return format(d.normalize(CTX), "f")


def _trimmed(d: decimal.Decimal) -> tuple[int, int]:
    """(unscaled, scale) with trailing zeros removed, scale never below 0."""
    sign, digits, exponent = d.as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -int(exponent)
    while scale > 0 and unscaled % 10 == 0:
        unscaled //= 10
        scale -= 1
    return (0, 0) if unscaled == 0 else (unscaled, scale)


@pytest.mark.parametrize(("precision", "scale"), [(5, 2), (18, 4), (18, 0), (19, 0), (38, 10),
                                                  (38, 38), (25, 25)])
def test_round_trip_streams_and_stats(precision: int, scale: int) -> None:
    rng = np.random.default_rng(precision * 100 + scale)
    n = 4000
    dt = pa.decimal128(precision, scale)
    arr = random_array(rng, dt, n, null_rate=0.1)
    t = OrcType(TypeKind.DECIMAL, precision=precision, scale=scale)
    starts = np.arange(0, n, 1500)
    enc, back = round_trip(t, arr, starts, EncodeOptions(bloom_filter_columns={0}))
    assert back.equals(arr)
    values = [v for v in arr.to_pylist() if v is not None]
    trimmed = [_trimmed(v) for v in values]
    scales = rle.read_int_rle_v2(stream(enc, K.SECONDARY).data, len(values), True)
    assert scales.tolist() == [s for _, s in trimmed]
    words = rle.read_varint128(stream(enc, K.DATA).data, len(values))
    got = [int(lo) + (int(hi) << 64) for lo, hi in words.tolist()]
    assert [g - (1 << 128) if g >> 127 else g for g in got] == [u for u, _ in trimmed]
    vstarts = value_starts(arr, starts)
    check_positions(stream(enc, K.SECONDARY), "signed", len(values), vstarts)
    for pos, v in zip(stream(enc, K.DATA).positions, vstarts.tolist(), strict=True):
        if v < len(values):
            first = rle.read_varint128(stream(enc, K.DATA).data, 1, pos[0])[0]
            assert int(first[0]) + (int(first[1]) << 64) == got[v]
    for g, sl in enumerate(group_slices(n, starts)):
        part = [v for v in arr[sl].to_pylist() if v is not None]
        st = enc.row_group_stats[g].decimalStatistics
        assert st.minimum == _text(min(part)) and st.maximum == _text(max(part))
        unscaled = [int(v.scaleb(scale, CTX)) for v in part]
        prefixes = np.cumsum(np.array(unscaled, dtype=object)).tolist()
        if precision <= 18:  # Decimal64 statistics: no sum once a running sum passes 18 digits
            if max(abs(p) for p in prefixes) < 10**18:
                assert int(decimal.Decimal(st.sum).scaleb(scale, CTX)) == prefixes[-1]
            else:
                assert not st.HasField("sum")
        elif max(abs(p) for p in prefixes) < 10**38:  # within 38 digits: exact
            assert int(decimal.Decimal(st.sum).scaleb(scale, CTX)) == prefixes[-1]
        assert enc.bloom_filters is not None
        for v in part[:10]:
            assert enc.bloom_filters[g].test_hash(murmur3_hash64(_text(v).encode()))


def test_trim_decimals_values() -> None:
    values = [decimal.Decimal(x) for x in ("1.50", "0.00", "-0.50", "100.00", "-123.45",
                                           "99999999999999999999999999999999.000000")]
    arr = pa.array(values, pa.decimal128(38, 6))
    words = np.frombuffer(arr.buffers()[1], "<u8").reshape(-1, 2)
    out, scales = trim_decimals(words, 6)
    got = [(int(lo) + (int(hi) << 64)) for lo, hi in out.tolist()]
    got = [g - (1 << 128) if g >> 127 else g for g in got]
    assert list(zip(got, scales.tolist(), strict=True)) == [_trimmed(v) for v in values]


def test_decimal64_sum_limit() -> None:
    t = OrcType(TypeKind.DECIMAL, precision=18, scale=2)
    big = decimal.Decimal("9999999999999999.99")  # 18 digits
    arr = pa.array([big, big, decimal.Decimal("-1"), decimal.Decimal("1")], pa.decimal128(18, 2))
    enc = encode_column(t, arr, [0, 2], EncodeOptions())
    first, second = enc.row_group_stats
    assert not first.decimalStatistics.HasField("sum")  # over 18 digits
    assert first.decimalStatistics.maximum == "9999999999999999.99"
    assert second.decimalStatistics.sum == "0"
    assert not enc.stripe_stats.decimalStatistics.HasField("sum")
    enc = encode_column(t, arr.slice(1), [0], EncodeOptions())
    assert enc.stripe_stats.decimalStatistics.sum == "9999999999999999.99"


def test_wide_sum_rounds_like_hive_decimal() -> None:
    t = OrcType(TypeKind.DECIMAL, precision=38, scale=37)
    a = decimal.Decimal("9.9999999999999999999999999999999999995")
    arr = pa.array([a, a], pa.decimal128(38, 37))
    st = encode_column(t, arr, [0], EncodeOptions()).stripe_stats.decimalStatistics
    # 19.999...99990 needs 39 digits: HiveDecimal rounds the fraction half up to fit 38
    assert st.sum == "19.999999999999999999999999999999999999"
    huge = decimal.Decimal("9" * 38)
    t = OrcType(TypeKind.DECIMAL, precision=38, scale=0)
    arr = pa.array([huge, huge], pa.decimal128(38, 0))
    st = encode_column(t, arr, [0], EncodeOptions()).stripe_stats.decimalStatistics
    assert not st.HasField("sum") and st.maximum == "9" * 38


def test_other_decimal_types_are_cast() -> None:
    t = OrcType(TypeKind.DECIMAL, precision=10, scale=3)
    arr = pa.array([decimal.Decimal("1.5"), None], pa.decimal128(4, 1))
    enc, back = round_trip(t, arr)
    assert back.type == pa.decimal128(10, 3)
    assert back.to_pylist() == [decimal.Decimal("1.500"), None]
    arr = pa.array([decimal.Decimal("2.25")], pa.decimal256(40, 2))
    enc, back = round_trip(t, arr)
    assert back.to_pylist() == [decimal.Decimal("2.250")]
