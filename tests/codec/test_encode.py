"""Tests for aorc.format.codec._encode: the ORC Java-compatible stream encoders.

Judged by the specification's worked examples, by the sub-encoding choices ORC Java's
algorithm makes, and by round trips through decoders written here from the specification
(``encode_reference``) and through aorc's own decoders. Byte-for-byte comparisons with ORC
Java itself are in test_encode_java.py, with files other writers made in test_encode_peers.py.
"""

from __future__ import annotations

import concurrent.futures

import numpy as np
import pytest
from encode_reference import (
    byte_rle_run,
    decode_all,
    decode_bools,
    decode_from,
    decode_varint128,
    decode_varints,
    int128_words,
    rle_v1_run,
    rle_v2_run,
)
from helpers.varints import format_nanos
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.format.codec import _encode as enc

try:
    from aorc.format.codec import _decode as dec
except ImportError:  # the decoders are built separately
    dec = None

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
DELTA, PATCHED_BASE, DIRECT, SHORT_REPEAT = 3, 2, 1, 0


def a64(values) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def run_kinds(data: bytes, signed: bool) -> list[tuple[int, int]]:
    """(sub-encoding, value count) of each RLE v2 run."""
    out, pos = [], 0
    while pos < len(data):
        values, end = rle_v2_run(data, pos, signed)
        out.append((data[pos] >> 6, len(values)))
        pos = end
    return out


# ---------------------------------------------------------------------------------------
# the specification's examples, encoded


def test_varint_examples() -> None:
    table = {0: "00", 1: "01", 127: "7f", 128: "8001", 129: "8101", 16383: "ff7f"}
    table |= {16384: "808001", 16385: "818001"}
    for value, hexed in table.items():
        assert enc.write_varints(a64([value]), False).hex() == hexed
    # zigzag: 0, -1, 1, -2, 2 -> 0, 1, 2, 3, 4
    assert enc.write_varints(a64([0, -1, 1, -2, 2]), True) == bytes([0, 1, 2, 3, 4])


def test_byte_and_bool_rle_examples() -> None:
    assert enc.write_byte_rle(np.zeros(100, np.int8)) == bytes([0x61, 0x00])
    assert enc.write_byte_rle(np.array([0x44, 0x45], np.int8)) == bytes([0xFE, 0x44, 0x45])
    bits = np.array([True] + [False] * 7 + [True] * 8)
    assert enc.write_bool_rle(bits) == bytes([0xFE, 0x80, 0xFF])


def test_rle_v1_examples() -> None:
    assert enc.write_int_rle_v1(a64([7] * 100), False) == bytes([0x61, 0x00, 0x07])
    assert enc.write_int_rle_v1(a64(range(100, 0, -1)), False) == bytes([0x61, 0xFF, 0x64])
    got = enc.write_int_rle_v1(a64([2, 3, 6, 7, 11]), False)
    assert got == bytes([0xFB, 0x02, 0x03, 0x06, 0x07, 0x0B])


def test_rle_v2_examples() -> None:
    assert enc.write_int_rle_v2(a64([10000] * 5), False) == bytes([0x0A, 0x27, 0x10])
    direct = enc.write_int_rle_v2(a64([23713, 43806, 57005, 48879]), False)
    assert direct.hex() == "5e035ca1ab1edeadbeef"
    values = [2030, 2000, 2020, 1000000] + list(range(2040, 2200, 10))
    patched = enc.write_int_rle_v2(a64(values), False)
    expected = "8e132b2107d01e00147028323c46505a646e78828c96a0aab4befce8"
    assert patched.hex() == expected
    delta = enc.write_int_rle_v2(a64([2, 3, 5, 7, 11, 13, 17, 19, 23, 29]), False)
    assert delta.hex() == "c609020222424246"


# ---------------------------------------------------------------------------------------
# the choices ORC Java's RunLengthIntegerWriterV2 makes


def test_repeats_use_short_repeat_up_to_ten_then_fixed_delta() -> None:
    assert run_kinds(enc.write_int_rle_v2(a64([7] * 3), True), True) == [(SHORT_REPEAT, 3)]
    assert run_kinds(enc.write_int_rle_v2(a64([7] * 10), True), True) == [(SHORT_REPEAT, 10)]
    eleven = enc.write_int_rle_v2(a64([7] * 11), True)
    assert eleven == bytes([0xC0, 10, 14, 0])  # DELTA, width 0, base 7 (zigzag 14), delta 0
    many = enc.write_int_rle_v2(a64([10000] * 10000), False)
    assert run_kinds(many, False) == [(DELTA, 512)] * 19 + [(DELTA, 272)]
    assert many[:5] == bytes([0xC1, 0xFF, 0x90, 0x4E, 0x00])


def test_two_repeats_stay_in_the_variable_run() -> None:
    kinds = run_kinds(enc.write_int_rle_v2(a64([1, 5, 5, 9, 2]), False), False)
    assert kinds == [(DIRECT, 5)]


def test_repeats_after_a_variable_run_split_it() -> None:
    data = enc.write_int_rle_v2(a64([9, 1, 4, 4, 4, 4, 4, 4]), False)
    assert run_kinds(data, False) == [(DIRECT, 2), (SHORT_REPEAT, 6)]


def test_monotone_runs_use_delta_with_aligned_widths() -> None:
    values = np.cumsum(np.arange(1, 300) % 7) + 1000
    data = enc.write_int_rle_v2(values, True)
    assert run_kinds(data, True) == [(DELTA, 299)]
    assert (data[0] >> 1) & 31 == 3  # deltas up to 6 need 3 bits; aligned to 4 (code 3)
    unaligned = enc.write_int_rle_v2(values, True, aligned=False)
    assert (unaligned[0] >> 1) & 31 == 2  # 3 bits
    assert len(unaligned) < len(data)


def test_fixed_step_sequences_store_no_deltas() -> None:
    data = enc.write_int_rle_v2(a64(range(0, 5000, 5)), False)
    # 512 values from 0, then 488 from 2560; each run: header, varint base, zigzag delta 5
    assert data == bytes([0xC1, 0xFF, 0x00, 0x0A, 0xC1, 0xE7, 0x80, 0x14, 0x0A])


def test_outliers_use_patched_base() -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(0, 100, 500)
    values[[17, 300]] = [10**12, 3 * 10**11]
    kinds = run_kinds(enc.write_int_rle_v2(values, False), False)
    assert kinds == [(PATCHED_BASE, 500)]


def test_patched_base_needs_a_base_below_2_to_the_56() -> None:
    values = -np.random.default_rng(2).integers(2**54, 2**55, 400)
    values[40] = 2**60
    values[3] = -(2**56) + 1
    assert run_kinds(enc.write_int_rle_v2(values, True), True) == [(PATCHED_BASE, 400)]
    values[3] = -(2**56)
    assert run_kinds(enc.write_int_rle_v2(values, True), True) == [(DIRECT, 400)]


def test_overflowing_differences_use_direct_64_bits() -> None:
    data = enc.write_int_rle_v2(a64([I64_MIN, I64_MAX, 0, 5, -5]), True)
    assert run_kinds(data, True) == [(DIRECT, 5)]
    assert (data[0] >> 1) & 31 == 31


def test_aligned_direct_widths() -> None:
    values = a64([5, 1, 7, 2, 6, 0, 3])  # 3 bits
    assert (enc.write_int_rle_v2(values, False)[0] >> 1) & 31 == 3  # 4 bits
    assert (enc.write_int_rle_v2(values, False, aligned=False)[0] >> 1) & 31 == 2
    wide = a64([2**20 + 1, 5, 2**20 + 9, 7])  # 21 bits -> 24 aligned, 21 unaligned
    assert (enc.write_int_rle_v2(wide, False)[0] >> 1) & 31 == 23
    assert (enc.write_int_rle_v2(wide, False, aligned=False)[0] >> 1) & 31 == 20


# ---------------------------------------------------------------------------------------
# round trips


def _runs_of(draw_pairs) -> list[int]:
    return [v for v, k in draw_pairs for _ in range(k)]


int64s = st.integers(I64_MIN, I64_MAX)
smallish = st.integers(-300, 300)
value_runs = st.lists(
    st.tuples(
        st.one_of(smallish, int64s, st.sampled_from([I64_MIN, I64_MAX, 0, -1])),
        st.sampled_from([1, 1, 1, 2, 3, 5, 11, 40, 600]),
    ),
    max_size=40,
).map(_runs_of)
ramps = st.tuples(int64s, st.integers(-(2**40), 2**40), st.integers(0, 1500)).map(
    lambda t: [((t[0] + i * t[1] + 2**63) % 2**64) - 2**63 for i in range(t[2])]
)
outliers = st.tuples(
    st.lists(st.integers(0, 2**12), min_size=1, max_size=1100),
    st.lists(st.tuples(st.integers(0, 1099), int64s), max_size=60),
).map(lambda t: [dict(t[1]).get(i, v) for i, v in enumerate(t[0])])
int_lists = st.one_of(
    st.lists(int64s, max_size=600), value_runs, ramps, outliers, st.lists(smallish, max_size=1200)
)


@settings(max_examples=150, deadline=None)
@given(int_lists, st.booleans(), st.booleans())
def test_rle_v2_round_trip(values: list[int], signed: bool, aligned: bool) -> None:
    data = enc.write_int_rle_v2(a64(values), signed, aligned=aligned)
    # unsigned streams hold the 64 bits as they are: negative values come back the same
    assert decode_all(data, rle_v2_run, signed) == values
    if dec is not None:
        assert dec.read_int_rle_v2(data, len(values), signed).tolist() == values


@settings(max_examples=100, deadline=None)
@given(int_lists, st.booleans())
def test_rle_v1_round_trip(values: list[int], signed: bool) -> None:
    data = enc.write_int_rle_v1(a64(values), signed)
    assert decode_all(data, rle_v1_run, signed) == values
    if dec is not None:
        assert dec.read_int_rle_v1(data, len(values), signed).tolist() == values


byte_lists = st.lists(
    st.tuples(st.integers(-128, 127), st.sampled_from([1, 1, 2, 3, 4, 129, 130, 131, 300])),
    max_size=60,
).map(_runs_of)


@settings(max_examples=100, deadline=None)
@given(byte_lists)
def test_byte_rle_round_trip(values: list[int]) -> None:
    data = enc.write_byte_rle(np.array(values, np.int8))
    assert decode_all(data, byte_rle_run) == values
    if dec is not None:
        assert dec.read_byte_rle(data, len(values)).tolist() == values


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 2000)), max_size=30).map(_runs_of))
def test_bool_rle_round_trip(values: list[bool]) -> None:
    data = enc.write_bool_rle(np.array(values, bool))
    bits = decode_bools(data)
    assert bits[: len(values)] == values
    assert not any(bits[len(values) :])  # padding is zero, as Java writes it
    if dec is not None:
        assert dec.read_bool_rle(data, len(values)).tolist() == values


@settings(max_examples=100, deadline=None)
@given(st.lists(int64s, max_size=300), st.booleans())
def test_varints_round_trip(values: list[int], signed: bool) -> None:
    data = enc.write_varints(a64(values), signed)
    assert decode_varints(data, signed) == values
    if dec is not None:
        assert dec.read_varints(data, len(values), signed).tolist() == values


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-(2**127), 2**127 - 1), max_size=200))
def test_varint128_round_trip(values: list[int]) -> None:
    data = enc.write_varint128(int128_words(values))
    assert decode_varint128(data) == values
    # minimal length: a zigzag varint of z takes max(1, ceil(bits(z) / 7)) bytes
    zz = [(v << 1) ^ (v >> 127) for v in values]
    assert len(data) == sum(max(1, -(-z.bit_length() // 7)) for z in zz)


# ---------------------------------------------------------------------------------------
# row-index positions: seeking to (byte offset) and skipping (run offset) values must land on
# the boundary value


def _sample(bounds: np.ndarray, pos: np.ndarray) -> list:
    """About 30 of the (boundary, positions) pairs, always including the last."""
    step = max(1, len(bounds) // 30)
    pairs = list(zip(bounds.tolist(), pos.tolist(), strict=True))
    return pairs[::step] + pairs[-1:]


@settings(max_examples=80, deadline=None)
@given(int_lists, st.booleans(), st.integers(1, 700), st.sampled_from([1, 2]))
def test_int_positions_seek_to_the_boundary_value(values, signed, stride, version) -> None:
    bounds = np.arange(0, len(values) + 1, stride)
    if version == 2:
        data, pos = enc.write_int_rle_v2_with_positions(a64(values), signed, bounds)
        assert data == enc.write_int_rle_v2(a64(values), signed)
        run = rle_v2_run
    else:
        data, pos = enc.write_int_rle_v1_with_positions(a64(values), signed, bounds)
        assert data == enc.write_int_rle_v1(a64(values), signed)
        run = rle_v1_run
    assert pos.shape == (len(bounds), 2)
    for b, (offset, skip) in _sample(bounds, pos):
        assert decode_from(data, run, offset, skip, 600, signed) == values[b : b + 600]


@settings(max_examples=60, deadline=None)
@given(byte_lists, st.integers(1, 400))
def test_byte_positions_seek_to_the_boundary_value(values, stride) -> None:
    bounds = np.arange(0, len(values) + 1, stride)
    data, pos = enc.write_byte_rle_with_positions(np.array(values, np.int8), bounds)
    for b, (offset, skip) in _sample(bounds, pos):
        assert decode_from(data, byte_rle_run, offset, skip, 300) == values[b : b + 300]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(1, 900)), max_size=20).map(_runs_of),
    st.integers(1, 3000),
)
def test_bool_positions_seek_to_the_boundary_value(values, stride) -> None:
    bounds = np.arange(0, len(values) + 1, stride)
    data, pos = enc.write_bool_rle_with_positions(np.array(values, bool), bounds)
    assert pos.shape == (len(bounds), 3)
    for b, (offset, skip, bit) in _sample(bounds, pos):
        assert bit == b % 8
        raw = decode_from(data, byte_rle_run, offset, skip, 100)
        bits = [bool((x >> (7 - i)) & 1) for x in raw for i in range(8)]
        want = values[b : b + 700]
        assert bits[bit : bit + len(want)] == want


def test_varint_positions_are_byte_offsets() -> None:
    values = a64([0, 127, 128, -1, 2**40, 5])
    data, pos = enc.write_varints_with_positions(values, False, [0, 1, 2, 3, 4, 6])
    assert pos.ravel().tolist() == [0, 1, 2, 4, 14, 21]
    assert len(data) == 21
    words = int128_words([0, -1, 2**70, 64])
    data, pos = enc.write_varint128_with_positions(words, [1, 3, 4])
    assert pos.ravel().tolist() == [1, 2 + 11, len(data)]


def test_positions_count_buffered_values() -> None:
    # 5 repeats are buffered until a different value ends the run; nothing is written before
    _, pos = enc.write_int_rle_v2_with_positions(a64([4] * 5 + [1, 2]), False, [0, 3, 5, 6, 7])
    assert pos.tolist() == [[0, 0], [0, 3], [0, 5], [2, 1], [2, 2]]


# ---------------------------------------------------------------------------------------
# timestamp nanos


@given(
    st.lists(
        st.one_of(
            st.integers(0, 999_999_999),
            st.integers(0, 8).map(lambda k: 10**k),
            st.integers(0, 999).map(lambda k: k * 1_000_000),
        ),
        max_size=100,
    )
)
def test_encode_nanos(values: list[int]) -> None:
    assert enc.encode_nanos(a64(values)).tolist() == [format_nanos(v) for v in values]


def test_encode_nanos_examples_and_range() -> None:
    got = enc.encode_nanos(a64([0, 1000, 100_000_000, 999_999_999, 120]))
    assert got.tolist() == [0, (1 << 3) | 2, (1 << 3) | 7, 999_999_999 << 3, 120 << 3]
    for bad in (-1, 1_000_000_000):
        with pytest.raises(ValueError, match="outside"):
            enc.encode_nanos(a64([5, bad]))


# ---------------------------------------------------------------------------------------
# inputs


def test_empty_inputs() -> None:
    assert enc.write_int_rle_v2([], True) == b""
    assert enc.write_int_rle_v1(np.zeros(0, np.int32), False) == b""
    assert enc.write_byte_rle([]) == b""
    assert enc.write_bool_rle([]) == b""
    assert enc.write_varints([], True) == b""
    assert enc.write_varint128(np.zeros((0, 2), np.uint64)) == b""
    data, pos = enc.write_int_rle_v2_with_positions([], True, [0])
    assert data == b"" and pos.tolist() == [[0, 0]]


def test_other_integer_dtypes() -> None:
    values = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.int16)
    assert enc.write_int_rle_v2(values, True) == enc.write_int_rle_v2(a64(values), True)
    big = np.array([2**64 - 1, 5], np.uint64)  # wraps to -1 as in Java
    assert enc.write_int_rle_v2(big, False) == enc.write_int_rle_v2(a64([-1, 5]), False)
    assert enc.write_byte_rle(np.array([200, 1], np.uint8)) == bytes([0xFE, 200, 1])


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: enc.write_int_rle_v2(np.zeros((2, 2), np.int64), True), ValueError),
        (lambda: enc.write_int_rle_v2(np.array([1.5]), True), TypeError),
        (lambda: enc.write_bool_rle(np.array(["x"])), TypeError),
        (lambda: enc.write_int_rle_v2_with_positions(a64([1, 2]), True, [1, 0]), ValueError),
        (lambda: enc.write_int_rle_v1_with_positions(a64([1, 2]), True, [3]), ValueError),
        (lambda: enc.write_byte_rle_with_positions(a64([1]), [-1]), ValueError),
        (lambda: enc.write_varint128(np.zeros((3, 3), np.uint64)), ValueError),
    ],
)
def test_bad_arguments(call, error) -> None:
    with pytest.raises(error):
        call()


def test_threads_encode_independently() -> None:
    rng = np.random.default_rng(3)
    inputs = [rng.integers(-(2**k), 2**k, 200_000) for k in range(1, 60, 4)]
    expected = [enc.write_int_rle_v2(v, True) for v in inputs]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda v: enc.write_int_rle_v2(v, True), inputs))
    assert got == expected
