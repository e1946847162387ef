"""The decoding kernels on hand-made streams: the specification's worked examples, ORC Java's
arithmetic (wrapping, zigzag of int64 min, patch quirks), skip/offset, and corrupt input.

Expected values are computed here with plain Python integers, never taken from the decoder.
Streams written by real ORC writers are in test_rle_peers.py and test_rle_conformance.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from google.protobuf.internal.encoder import _VarintBytes
from helpers.varints import format_nanos
from hypothesis import given, settings
from hypothesis import strategies as st
from rle_builders import (
    INT64_MAX,
    INT64_MIN,
    WIDTH_CODE,
    direct,
    pack_be,
    patched,
    unzigzag,
    uvarint,
    wrap64,
    zigzag,
)

from aorc.errors import CorruptFileError
from aorc.format.codec import _decode, rle

# ---------------------------------------------------------------------------------------------
# The specification's examples (site/specification/ORCv1.md)


def test_spec_varint_table() -> None:
    table = {0: "00", 1: "01", 127: "7f", 128: "8001", 129: "8101", 16383: "ff7f",
             16384: "808001", 16385: "818001"}  # fmt: skip
    data = bytes.fromhex("".join(table.values()))
    assert _decode.read_varints(data, len(table), False).tolist() == list(table)
    signed = {0: 0, -1: 1, 1: 2, -2: 3, 2: 4}
    data = bytes(signed.values())
    assert _decode.read_varints(data, len(signed), True).tolist() == list(signed)


def test_spec_byte_rle() -> None:
    assert _decode.read_byte_rle(bytes([0x61, 0x00]), 100).tolist() == [0] * 100
    assert _decode.read_byte_rle(bytes([0xFE, 0x44, 0x45]), 2).tolist() == [0x44, 0x45]


def test_spec_boolean_rle() -> None:
    result = _decode.read_bool_rle(bytes([0xFF, 0x80]), 8)
    assert result.dtype == np.bool_
    assert result.tolist() == [True] + [False] * 7


def test_spec_int_rle_v1() -> None:
    assert _decode.read_int_rle_v1(bytes([0x61, 0x00, 0x07]), 100, False).tolist() == [7] * 100
    expected = list(range(100, 0, -1))
    assert _decode.read_int_rle_v1(bytes([0x61, 0xFF, 0x64]), 100, False).tolist() == expected
    literals = bytes([0xFB, 0x02, 0x03, 0x06, 0x07, 0x0B])
    assert _decode.read_int_rle_v1(literals, 5, False).tolist() == [2, 3, 6, 7, 11]


def test_spec_rle_v2_short_repeat() -> None:
    result = _decode.read_int_rle_v2(bytes([0x0A, 0x27, 0x10]), 5, False)
    assert result.dtype == np.int64
    assert result.tolist() == [10000] * 5


def test_spec_rle_v2_direct() -> None:
    data = bytes([0x5E, 0x03, 0x5C, 0xA1, 0xAB, 0x1E, 0xDE, 0xAD, 0xBE, 0xEF])
    assert _decode.read_int_rle_v2(data, 4, False).tolist() == [23713, 43806, 57005, 48879]


SPEC_PATCHED = bytes.fromhex("8e132b2107d01e00147028323c46505a646e78828c96a0aab4befce8")
SPEC_PATCHED_VALUES = [2030, 2000, 2020, 1000000, 2040, 2050, 2060, 2070, 2080, 2090, 2100,
                       2110, 2120, 2130, 2140, 2150, 2160, 2170, 2180, 2190]  # fmt: skip


def test_spec_rle_v2_patched_base() -> None:
    assert _decode.read_int_rle_v2(SPEC_PATCHED, 20, False).tolist() == SPEC_PATCHED_VALUES


SPEC_DELTA = bytes([0xC6, 0x09, 0x02, 0x02, 0x22, 0x42, 0x42, 0x46])


def test_spec_rle_v2_delta() -> None:
    expected = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]
    assert _decode.read_int_rle_v2(SPEC_DELTA, 10, False).tolist() == expected


def test_spec_timestamp_nanos() -> None:
    assert _decode.decode_nanos(np.array([0x0A, 0x0C], dtype=np.int64)).tolist() == [
        1000,
        100000,
    ]


# ---------------------------------------------------------------------------------------------
# ORC Java's arithmetic


def test_direct_width_64_unsigned_wraps() -> None:
    raw = [2**64 - 1, 2**63, 2**63 - 1, 0]
    result = _decode.read_int_rle_v2(direct(raw, 64), 4, False)
    assert result.tolist() == [wrap64(u) for u in raw] == [-1, INT64_MIN, INT64_MAX, 0]


def test_direct_width_64_signed_zigzag_extremes() -> None:
    raw = [2**64 - 1, 2**64 - 2, 1, 2]
    result = _decode.read_int_rle_v2(direct(raw, 64), 4, True)
    assert result.tolist() == [unzigzag(u) for u in raw] == [INT64_MIN, INT64_MAX, -1, 1]


@pytest.mark.parametrize("width", sorted(WIDTH_CODE))
@pytest.mark.parametrize("signed", [False, True])
def test_direct_every_width(width: int, signed: bool) -> None:
    rng = np.random.default_rng(width)
    count = 1 + int(rng.integers(0, 512))
    raw = [int(x) >> (64 - width) for x in rng.integers(0, 2**64, count, dtype=np.uint64)]
    expected = [unzigzag(u) if signed else wrap64(u) for u in raw]
    assert _decode.read_int_rle_v2(direct(raw, width), count, signed).tolist() == expected


def test_short_repeat_eight_bytes() -> None:
    data = bytes([0x3F]) + b"\xff" * 8  # width 8 bytes, 10 repeats
    assert _decode.read_int_rle_v2(data, 10, False).tolist() == [-1] * 10
    assert _decode.read_int_rle_v2(data, 10, True).tolist() == [INT64_MIN] * 10


def test_delta_unsigned_base_wraps() -> None:
    # fixed delta (width 0), 3 values, base 2**64 - 1 as an unsigned varint, delta +1
    data = bytes([0xC0, 0x02]) + uvarint(2**64 - 1) + uvarint(zigzag(1))
    assert _decode.read_int_rle_v2(data, 3, False).tolist() == [-1, 0, 1]
    data = bytes([0xC0, 0x02]) + uvarint(zigzag(INT64_MAX)) + uvarint(zigzag(1))
    assert _decode.read_int_rle_v2(data, 3, True).tolist() == [INT64_MAX, INT64_MIN, INT64_MIN + 1]


def test_delta_decreasing_packed() -> None:
    deltas = [1, 2, 3, 9]
    data = bytes([0xC6, 0x05]) + uvarint(zigzag(100)) + uvarint(zigzag(-3)) + pack_be(deltas, 4)
    assert _decode.read_int_rle_v2(data, 6, True).tolist() == [100, 97, 96, 94, 91, 82]


def test_delta_fixed_long_repeat() -> None:
    data = bytes([0xC1, 0xFF]) + uvarint(zigzag(-7)) + uvarint(0)
    assert _decode.read_int_rle_v2(data, 512, True).tolist() == [-7] * 512


def test_patched_base_negative_base_and_filler() -> None:
    values = [3, 1, 2, 0] * 75  # 300 values of 2 bits
    base = bytes([0x80, 0x05])  # sign bit set: -5
    entries = [(255, 0), (10, 0x7FF)]  # filler, then a patch at index 265
    data = patched(values, 2, base, 11, 8, entries)
    expected = [-5 + v for v in values]
    expected[265] = -5 + (values[265] | (0x7FF << 2))
    assert _decode.read_int_rle_v2(data, 300, False).tolist() == expected


def test_patched_base_second_patch_at_same_index_is_ignored() -> None:
    # ORC Java and C++ only look for the next patch after the current index, so a gap of 0
    # after the first patch (and everything after it) is never applied.
    values = [1] * 20
    entries = [(2, 1), (0, 1), (3, 1)]
    data = patched(values, 1, b"\x00", 4, 2, entries)
    expected = [1] * 20
    expected[2] = 1 | (1 << 1)
    assert _decode.read_int_rle_v2(data, 20, False).tolist() == expected


def test_patched_base_width_64_shift_wraps_like_java() -> None:
    # Java's `patch << 64` shifts by 0: the patch is OR'ed into the low bits.
    values = [0x10, 0x20]
    data = patched(values, 64, b"\x00", 8, 1, [(1, 0x3)])
    assert _decode.read_int_rle_v2(data, 2, False).tolist() == [0x10, 0x23]


def test_patched_base_adds_with_wrap() -> None:
    base = bytes([0x7F] + [0xFF] * 7)  # INT64_MAX
    data = patched([0, 1, 2], 2, base, 2, 1, [(0, 1)])
    expected = [wrap64(INT64_MAX + v) for v in (0 | 1 << 2, 1, 2)]
    assert _decode.read_int_rle_v2(data, 3, False).tolist() == expected


def test_rle_v1_run_wraps_and_unsigned_literal() -> None:
    data = bytes([0x00, 0x01]) + uvarint(zigzag(INT64_MAX))
    assert _decode.read_int_rle_v1(data, 3, True).tolist() == [INT64_MAX, INT64_MIN, INT64_MIN + 1]
    data = bytes([0xFE]) + uvarint(2**64 - 1) + uvarint(2**63)
    assert _decode.read_int_rle_v1(data, 2, False).tolist() == [-1, INT64_MIN]


def test_varint_tenth_byte_high_bits_dropped() -> None:
    # Java keeps only the lowest bit of the 10th byte.
    data = b"\xff" * 9 + b"\x7f"
    assert _decode.read_varints(data, 1, False).tolist() == [-1]


# ---------------------------------------------------------------------------------------------
# Varints against protobuf's encoder and an arbitrary-precision reference


@settings(max_examples=200)
@given(st.lists(st.integers(INT64_MIN, INT64_MAX), max_size=300), st.booleans(), st.binary())
def test_varints_match_protobuf(values: list[int], signed: bool, prefix: bytes) -> None:
    encoded = b"".join(_VarintBytes(zigzag(v) if signed else v & (2**64 - 1)) for v in values)
    result = _decode.read_varints(prefix + encoded, len(values), signed, len(prefix))
    assert result.tolist() == values


@settings(max_examples=200)
@given(st.lists(st.integers(-(2**127), 2**127 - 1), max_size=200))
def test_varint128_roundtrip(values: list[int]) -> None:
    encoded = b"".join(uvarint(zigzag(v)) for v in values)
    result = _decode.read_varint128(encoded, len(values))
    assert result.dtype == np.uint64 and result.shape == (len(values), 2)
    words = [int(lo) | (int(hi) << 64) for lo, hi in result.tolist()]
    assert [w - (1 << 128) if w >= 1 << 127 else w for w in words] == values


def test_varint128_as_decimal128_buffer() -> None:
    import pyarrow as pa

    values = [12345, -1, -(10**37), 10**38 - 1]
    encoded = b"".join(uvarint(zigzag(v)) for v in values)
    words = _decode.read_varint128(encoded, len(values))
    array = pa.Array.from_buffers(pa.decimal128(38, 0), len(values), [None, pa.py_buffer(words)])
    assert [int(d) for d in array.to_pylist()] == values


def test_varint128_too_wide() -> None:
    ok = uvarint(2**128 - 1)  # zigzag of -(2**127), the most negative 128-bit value
    assert _decode.read_varint128(ok, 1).tolist() == [[0, 2**63]]
    for bad in (uvarint(2**128), b"\x80" * 19 + b"\x01", b"\xff" * 30):
        with pytest.raises(CorruptFileError, match="128 bits"):
            _decode.read_varint128(bad, 1)


def test_decode_nanos_matches_definition() -> None:
    rng = np.random.default_rng(7)
    raw = rng.integers(-(2**33), 2**33, 1000, dtype=np.int64)  # negative: ORC C++, pre-1970
    expected = [(int(x) >> 3) * 10 ** ((int(x) & 7) + 1) if x & 7 else int(x) >> 3 for x in raw]
    assert rle.decode_nanos(raw).tolist() == expected
    assert rle.decode_nanos(np.empty(0, np.int64)).tolist() == []


@given(st.lists(st.integers(0, 999_999_999) | st.sampled_from([0, 10**8, 5 * 10**6, 1000])))
def test_decode_nanos_roundtrip(nanos: list[int]) -> None:
    encoded = np.array([format_nanos(v) for v in nanos], dtype=np.int64)
    assert rle.decode_nanos(encoded).tolist() == nanos


# ---------------------------------------------------------------------------------------------
# skip, offset, more data than asked for, buffer kinds

SPEC_SHORT_REPEAT = bytes([0x0A, 0x27, 0x10])
SPEC_DIRECT = bytes([0x5E, 0x03, 0x5C, 0xA1, 0xAB, 0x1E, 0xDE, 0xAD, 0xBE, 0xEF])
V2_PARTS = [
    (SPEC_SHORT_REPEAT, [10000] * 5),
    (SPEC_DIRECT, [23713, 43806, 57005, 48879]),
    (SPEC_PATCHED, SPEC_PATCHED_VALUES),
    (SPEC_DELTA, [2, 3, 5, 7, 11, 13, 17, 19, 23, 29]),
    (bytes([0xC0, 0x07]) + uvarint(1000) + uvarint(zigzag(-9)), [1000 - 9 * k for k in range(8)]),
]
V2_STREAM = b"".join(part for part, _ in V2_PARTS)
V2_VALUES = [v for _, values in V2_PARTS for v in values]


def test_rle_v2_every_skip_and_count() -> None:
    total = len(V2_VALUES)
    for skip in range(total + 1):
        for n in range(total - skip + 1):
            result = _decode.read_int_rle_v2(V2_STREAM, n, False, skip=skip)
            assert result.tolist() == V2_VALUES[skip : skip + n], (skip, n)


def test_rle_v2_offset_at_each_run() -> None:
    offset, first = 0, 0
    for part, values in V2_PARTS:
        rest = V2_VALUES[first:]
        for skip in range(len(values)):
            result = _decode.read_int_rle_v2(V2_STREAM, len(rest) - skip, False, offset, skip)
            assert result.tolist() == rest[skip:]
        offset += len(part)
        first += len(values)


BYTE_PARTS = [(bytes([0x02, 0x07]), [7] * 5), (bytes([0xFD, 1, 2, 0xFF]), [1, 2, -1]),
              (bytes([0x7F, 0x80]), [-128] * 130)]  # fmt: skip
BYTE_STREAM = b"".join(part for part, _ in BYTE_PARTS)
BYTE_VALUES = [v for _, values in BYTE_PARTS for v in values]


def test_byte_rle_skip_and_offset() -> None:
    total = len(BYTE_VALUES)
    for skip in range(total + 1):
        for n in {0, 1, 2, total - skip} & set(range(total - skip + 1)):
            assert (
                _decode.read_byte_rle(BYTE_STREAM, n, 0, skip).tolist()
                == BYTE_VALUES[skip : skip + n]
            )
    assert _decode.read_byte_rle(BYTE_STREAM, 3, 2, 1).tolist() == [2, -1, -128]


def test_bool_rle_any_bit_skip() -> None:
    bits = [bool((b >> (7 - i)) & 1) for b in [v & 0xFF for v in BYTE_VALUES] for i in range(8)]
    for skip in range(0, len(bits), 3):
        for n in {0, 1, 5, 8, 13, len(bits) - skip} & set(range(len(bits) - skip + 1)):
            result = _decode.read_bool_rle(BYTE_STREAM, n, 0, skip)
            assert result.tolist() == bits[skip : skip + n]


def test_rle_v1_skip_and_offset() -> None:
    run = bytes([0x02, 0xFE]) + uvarint(zigzag(-3))  # -3, -5, -7, -9, -11
    literal = bytes([0xFD]) + b"".join(uvarint(zigzag(v)) for v in (5, -6, 7))
    stream = run + literal + run
    values = [-3, -5, -7, -9, -11, 5, -6, 7, -3, -5, -7, -9, -11]
    for skip in range(len(values) + 1):
        for n in range(len(values) - skip + 1):
            assert (
                _decode.read_int_rle_v1(stream, n, True, skip=skip).tolist()
                == values[skip : skip + n]
            )
    assert _decode.read_int_rle_v1(stream, 4, True, len(run), 1).tolist() == values[6:10]


@pytest.mark.parametrize(
    "wrap",
    [bytes, bytearray, memoryview, lambda b: memoryview(bytearray(b)).toreadonly(),
     lambda b: np.frombuffer(b, dtype=np.uint8), lambda b: memoryview(b"xyz" + b)[3:]],
)  # fmt: skip
def test_buffer_kinds(wrap) -> None:  # type: ignore[no-untyped-def]
    data = wrap(V2_STREAM)
    assert _decode.read_int_rle_v2(data, len(V2_VALUES), False).tolist() == V2_VALUES
    assert rle.decode_ints(data, 4, False, version=2, skip=5).tolist() == V2_VALUES[5:9]


def test_zero_values_need_no_data() -> None:
    for decode in (_decode.read_byte_rle, _decode.read_bool_rle):
        assert len(decode(b"", 0)) == 0
    assert len(_decode.read_int_rle_v2(b"", 0, True)) == 0
    assert len(_decode.read_int_rle_v1(b"abc", 0, True, 3)) == 0
    assert _decode.read_varint128(b"", 0).shape == (0, 2)


def test_front_dispatch() -> None:
    assert rle.rle_version(0) == rle.rle_version(1) == 1
    assert rle.rle_version(2) == rle.rle_version(3) == 2
    with pytest.raises(CorruptFileError):
        rle.rle_version(4)
    assert rle.decode_ints(bytes([0x61, 0x00, 0x07]), 3, False, 1).tolist() == [7] * 3
    with pytest.raises(ValueError, match="version"):
        rle.decode_ints(b"", 0, False, 3)
    assert rle.read_byte_rle(bytes([0x61, 0x00]), 2).tolist() == [0, 0]
    assert rle.read_bool_rle(bytes([0xFF, 0x80]), 2).tolist() == [True, False]
    assert rle.read_int_rle_v1(bytes([0xFF, 0x04]), 1, True).tolist() == [2]
    assert rle.read_int_rle_v2(SPEC_DELTA, 2, False, skip=8).tolist() == [23, 29]
    assert rle.read_varints(bytes([0x03]), 1, True).tolist() == [-2]
    assert rle.read_varint128(bytes([0x03]), 1).tolist() == [[2**64 - 2, 2**64 - 1]]


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 2**20)), max_size=200))
def test_offsets_int32_match_a_running_sum(slots: list[tuple[bool, int]]) -> None:
    valid = np.array([v for v, _ in slots], np.bool_)
    lengths = np.array([n for v, n in slots if v], np.int64)
    want = np.concatenate([[0], np.cumsum([n if v else 0 for v, n in slots])]).astype(np.int64)
    offsets, total = rle.offsets_int32(lengths, valid, len(slots))
    assert offsets.dtype == np.int32 and offsets.tolist() == want.tolist()
    assert total == int(want[-1])
    every = np.array([n for _, n in slots], np.int64)
    offsets, total = rle.offsets_int32(every, None, len(slots))
    assert offsets.tolist() == [0, *np.cumsum(every).tolist()] and total == int(every.sum())


@pytest.mark.parametrize("lengths", [[2**31 - 1, 1], [2**62, 2**62], [2**63 - 1]])
def test_offsets_int32_past_int32(lengths: list[int]) -> None:
    assert rle.offsets_int32(np.array(lengths, np.int64), None, len(lengths))[1] == -1
    assert rle.offsets_int32(np.array([2**31 - 1], np.int64), None, 1)[1] == 2**31 - 1


def test_offsets_int32_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="negative"):
        rle.offsets_int32(np.array([1, -1], np.int64), None, 2)
    with pytest.raises(ValueError, match="lengths for the valid slots"):
        rle.offsets_int32(np.array([1], np.int64), np.array([True, True]), 2)
    with pytest.raises(ValueError, match="lengths for the valid slots"):
        rle.offsets_int32(np.array([1, 2], np.int64), np.array([True, False]), 2)
    with pytest.raises(ValueError, match="validity flags"):
        rle.offsets_int32(np.array([1], np.int64), np.array([True]), 2)
    with pytest.raises(ValueError, match="lengths for 2 slots"):
        rle.offsets_int32(np.array([1], np.int64), None, 2)
