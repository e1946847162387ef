"""The decoders against streams written by independent ORC writers (ORC C++ through pyarrow.orc
and through pyorc): every RLE v2 sub-encoding at every bit width, RLE v1, byte and boolean RLE,
PRESENT streams, unsigned LENGTH streams, timestamp nanos and decimal varints, and seeks to
every row group with the positions the writer recorded in its row index."""

from __future__ import annotations

import decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from orc_stream_helpers import Stripe, write_pyarrow, write_pyorc
from rle_builders import (
    INT64_MAX,
    INT64_MIN,
    WIDTH_CODE,
    closest_fixed_bits,
    unzigzag,
    zigzag,
)

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle

DATA, LENGTH, PRESENT, SECONDARY = (
    pb.Stream.DATA,
    pb.Stream.LENGTH,
    pb.Stream.PRESENT,
    pb.Stream.SECONDARY,
)
PEER_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def zigzag_width_values(rng: np.random.Generator, width: int, count: int) -> list[int]:
    """Signed values whose zigzag encodings are random numbers of exactly ``width`` bits."""
    raw = rng.integers(0, 2**64, count, dtype=np.uint64)
    return [unzigzag((int(u) >> (64 - width)) | (1 << (width - 1))) for u in raw]


@st.composite
def segment(draw: st.DrawFn) -> list[int]:
    """One stretch of values shaped to make the writer pick a particular run kind."""
    kind = draw(st.sampled_from(["random", "repeat", "monotone", "outliers", "extremes"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    count = draw(st.integers(1, 700))
    if kind == "random":
        return zigzag_width_values(rng, draw(st.integers(1, 64)), count)
    if kind == "repeat":
        value = draw(st.integers(INT64_MIN, INT64_MAX))
        return [value] * count
    if kind == "monotone":
        width = draw(st.integers(0, 52))
        steps = [int(x) for x in rng.integers(0, 2**width, count)] if width else [0] * count
        step_sign = draw(st.sampled_from([1, -1]))
        start = draw(st.integers(-(2**60), 2**60))
        out, value = [], start
        for s in steps:
            value += step_sign * s
            out.append(value)
        return out
    if kind == "outliers":
        base = draw(st.integers(-(2**40), 2**40))
        small = [base + int(x) for x in rng.integers(0, 2 ** draw(st.integers(1, 12)), count)]
        for i in rng.choice(count, size=max(1, count // 40), replace=False):
            small[int(i)] = base + int(rng.integers(0, 2 ** draw(st.integers(13, 62))))
        return small
    extremes = [INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, 0, -1, 1]
    return [extremes[int(i)] for i in rng.integers(0, len(extremes), count)]


int_sequences = st.lists(segment(), min_size=1, max_size=5).map(
    lambda parts: [v for part in parts for v in part]
)


def check_row_groups(
    stripe: Stripe, column: int, stride: int, decode: Any, values: list[Any]
) -> None:
    """Seek to every row group with the writer's [offset, skip] positions and decode from there."""
    for group, positions in enumerate(stripe.row_index(column)):
        offset, skip = positions[-2:]
        first = group * stride
        rest = values[first:]
        assert decode(offset, skip, len(rest)) == rest, f"row group {group}"
        window = min(len(rest), stride + 1)
        assert decode(offset, skip, window) == rest[:window]


@PEER_SETTINGS
@given(
    int_sequences,
    st.sampled_from(["0.12", "0.11"]),
    st.sampled_from(["compression", "speed"]),
    st.integers(1, 25),
)
def test_int_columns_pyarrow(values: list[int], version: str, strategy: str, groups: int) -> None:
    stride = max(1, len(values) // groups)
    orc = write_pyarrow(
        {"x": pa.array(values, pa.int64())},
        file_version=version,
        row_index_stride=stride,
        strategy=strategy,
    )
    (stripe,) = orc.stripes
    rle_version = rle.rle_version(stripe.encodings[1].kind)
    assert rle_version == (2 if version == "0.12" else 1)
    data = stripe.stream(1, DATA)
    assert data is not None
    assert rle.decode_ints(data, len(values), True, rle_version).tolist() == values

    def decode(offset: int, skip: int, n: int) -> list[int]:
        return rle.decode_ints(data, n, True, rle_version, offset, skip).tolist()

    check_row_groups(stripe, 1, stride, decode, values)


@settings(max_examples=15, deadline=None)
@given(int_sequences)
def test_int_columns_pyorc(values: list[int]) -> None:
    orc = write_pyorc("struct<x:bigint>", [(v,) for v in values], row_index_stride=1000)
    for stripe_index, stripe in enumerate(orc.stripes):
        assert stripe_index == 0
        data = stripe.stream(1, DATA)
        assert data is not None
        assert rle.read_int_rle_v2(data, len(values), True).tolist() == values


@PEER_SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 3000), st.sampled_from(["0.12", "0.11"]))
def test_small_types_pyarrow(seed: int, count: int, version: str) -> None:
    rng = np.random.default_rng(seed)
    shape = rng.random(count) < rng.random()  # runs of one value or noise, in varying mixes
    tiny = np.where(shape, 7, rng.integers(-128, 128, count)).astype(np.int8)
    flags = np.where(shape, True, rng.random(count) < 0.5)
    lengths = np.where(shape, 3, rng.integers(0, 300, count))
    nulls = rng.random(count) < rng.random()
    stride = max(1, count // 10)
    orc = write_pyarrow(
        {
            "t": pa.array(tiny),
            "b": pa.array(flags),
            "s": pa.array(["x" * int(k) for k in lengths]),
            "n": pa.array(np.arange(count), mask=nulls),
        },
        file_version=version,
        row_index_stride=stride,
    )
    (stripe,) = orc.stripes
    v = rle.rle_version(stripe.encodings[3].kind)

    def tiny_at(offset: int, skip: int, n: int) -> list[int]:
        return rle.read_byte_rle(stripe.stream(1, DATA), n, offset, skip).tolist()

    def flags_at(positions: list[int], n: int) -> list[bool]:
        offset, byte_skip, bit_skip = positions[-3:]
        data = stripe.stream(2, DATA)
        return rle.read_bool_rle(data, n, offset, 8 * byte_skip + bit_skip).tolist()

    def lengths_at(offset: int, skip: int, n: int) -> list[int]:
        return rle.decode_ints(stripe.stream(3, LENGTH), n, False, v, offset, skip).tolist()

    check_row_groups(stripe, 1, stride, tiny_at, tiny.tolist())
    check_row_groups(stripe, 3, stride, lengths_at, lengths.tolist())
    for group, positions in enumerate(stripe.row_index(2)):
        assert flags_at(positions, count - group * stride) == flags[group * stride :].tolist()
    present = stripe.stream(4, PRESENT)
    if nulls.any():
        assert present is not None
        assert rle.read_bool_rle(present, count).tolist() == (~nulls).tolist()
        non_null = int((~nulls).sum())
        data = stripe.stream(4, DATA)
        assert rle.decode_ints(data, non_null, True, v).tolist() == np.flatnonzero(~nulls).tolist()
    else:
        assert present is None


@pytest.mark.parametrize("width", sorted(WIDTH_CODE))
def test_direct_every_width_pyarrow(width: int) -> None:
    rng = np.random.default_rng(width)
    if width == 1:
        values = [0 if x else -1 for x in rng.random(600) < 0.5]  # zigzag 0 or 1
    else:
        values = zigzag_width_values(rng, width, 600)
    for i in range(2, len(values)):  # no three equal values: they would start a repeat run
        if values[i] == values[i - 1] == values[i - 2]:
            values[i] = -1 - values[i] if width == 1 else unzigzag(zigzag(values[i]) ^ 1)
    orc = write_pyarrow({"x": pa.array(values, pa.int64())})
    data = orc.stripes[0].stream(1, DATA)
    assert data is not None
    assert data[0] >> 6 == 1, "expected the writer to pick DIRECT"
    assert (data[0] >> 1) & 31 == WIDTH_CODE[width]
    assert rle.read_int_rle_v2(data, len(values), True).tolist() == values


def test_delta_widths_pyarrow() -> None:
    rng = np.random.default_rng(11)
    seen = set()
    for width in range(1, 54):
        deltas = [int(x) for x in rng.integers(0, 2**width, 511)] + [2**width - 1]
        for i, d in enumerate(deltas):  # no two zero deltas in a row: that starts a repeat
            if d == 0 and (i == 0 or deltas[i - 1] == 0):
                deltas[i] = 1
        sign = 1 if width % 2 else -1
        values = list(np.cumsum([-sign * 2**61] + [sign * d for d in deltas]).tolist())
        orc = write_pyarrow({"x": pa.array(values, pa.int64())})
        data = orc.stripes[0].stream(1, DATA)
        assert data is not None and data[0] >> 6 == 3, "expected the writer to pick DELTA"
        seen.add((data[0] >> 1) & 31)
        assert rle.read_int_rle_v2(data, len(values), True).tolist() == values
    # code 0 means a fixed delta, so writers store 1-bit deltas in 2 bits
    assert seen == {WIDTH_CODE[max(2, closest_fixed_bits(w))] for w in range(1, 54)}


def test_patched_base_with_gap_fillers_pyarrow() -> None:
    rng = np.random.default_rng(5)
    values = [int(x) for x in rng.integers(-50, -34, 512)]
    for i in range(2, len(values)):  # no three equal values: they would end the run
        if values[i] == values[i - 1] == values[i - 2]:
            values[i] += 1
    for i in (5, 400, 401, 500):
        values[i] = 2**45 + i
    orc = write_pyarrow({"x": pa.array(values, pa.int64())})
    data = orc.stripes[0].stream(1, DATA)
    assert data is not None
    assert data[0] >> 6 == 2, "expected the writer to pick PATCHED_BASE"
    gap_width, patch_count = (data[3] >> 5) + 1, data[3] & 31
    assert gap_width == 8 and patch_count == 5  # a filler covers the gap of 395
    assert rle.read_int_rle_v2(data, 512, True).tolist() == values
    for skip in (0, 5, 6, 399, 400, 401, 402, 511):
        assert rle.read_int_rle_v2(data, 512 - skip, True, 0, skip).tolist() == values[skip:]


@PEER_SETTINGS
@given(
    st.lists(st.integers(-(2**62), 2**62) | st.integers(-(2**32), 2**32).map(lambda s: s * 10**9))
)
def test_timestamp_nanos_pyarrow(stamps: list[int]) -> None:
    stamps = [s - s % 10 ** (abs(s) % 10) for s in stamps]  # vary the trailing zeros
    orc = write_pyarrow({"ts": pa.array(stamps, pa.timestamp("ns"))})
    if not stamps:
        assert orc.stripes == []
        return
    (stripe,) = orc.stripes
    secondary = stripe.stream(1, SECONDARY)
    assert secondary is not None
    encoded = rle.read_int_rle_v2(secondary, len(stamps), False)
    # ORC C++ splits an instant into seconds truncated toward zero and nanoseconds of the
    # instant's sign, and stores negative nanoseconds as they are in the unsigned stream.
    expected = [s - 10**9 * (abs(s) // 10**9) * (1 if s >= 0 else -1) for s in stamps]
    assert rle.decode_nanos(encoded).tolist() == expected


@PEER_SETTINGS
@given(
    st.integers(0, 38).flatmap(
        lambda scale: st.tuples(
            st.just(scale),
            st.lists(st.integers(-(10**38) + 1, 10**38 - 1) | st.integers(-1000, 1000)),
        )
    )
)
def test_decimal_varints_pyarrow(case: tuple[int, list[int]]) -> None:
    scale, unscaled = case
    exact = decimal.Context(prec=100)
    values = [decimal.Decimal(u).scaleb(-scale, exact) for u in unscaled]
    orc = write_pyarrow({"d": pa.array(values, pa.decimal128(38, scale))})
    if not values:
        return
    (stripe,) = orc.stripes
    words = rle.read_varint128(stripe.stream(1, DATA), len(values))
    scales = rle.read_int_rle_v2(stripe.stream(1, SECONDARY), len(values), True)
    decoded = []
    for (lo, hi), s in zip(words.tolist(), scales.tolist(), strict=True):
        word = lo | hi << 64
        decoded.append(decimal.Decimal(word - (1 << 128) if hi >> 63 else word).scaleb(-s, exact))
    assert decoded == values
