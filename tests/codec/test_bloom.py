"""Unit tests of aorc.format.codec.bloom (real files are in test_bloom_files.py).

Truth comes from outside aorc: hash values and bit positions computed by ORC Java
(orc-pitfalls.md and ORC's own unit tests) and small pure-Python reference implementations
written here from the algorithm's description.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.errors import CorruptFileError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import _bloom
from aorc.format.codec.bloom import (
    BloomFilter,
    bloom_filter_usable,
    decode_bloom_filter_index,
    double_to_long_bits,
    hash_arrow_array,
    hash_value,
    long_hash,
    murmur3_hash64,
    murmur3_hash64_many,
    optimal_size,
    thomas_wang_hash64,
)
from aorc.format.types import TypeKind as K

M64 = (1 << 64) - 1
BLOOM, BLOOM_UTF8 = 7, 8


def _signed(x: int) -> int:
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M64


def ref_murmur3_hash64(data: bytes, seed: int = 104729) -> int:
    """Single-lane 64-bit Murmur3 as described in orc-pitfalls.md (independent of the kernel)."""
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h = seed & M64
    nblocks = len(data) // 8
    for i in range(nblocks):
        k = int.from_bytes(data[8 * i : 8 * i + 8], "little")
        k = _rotl((k * c1) & M64, 31) * c2 & M64
        h = (_rotl(h ^ k, 27) * 5 + 0x52DCE729) & M64
    tail = data[8 * nblocks :]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= _rotl((k * c1) & M64, 31) * c2 & M64
    h ^= len(data)
    for mult in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h = ((h ^ (h >> 33)) * mult) & M64
    return _signed(h ^ (h >> 33))


def ref_long_hash(key: int) -> int:
    """Thomas Wang's 64-bit hash on a signed value with arithmetic shifts (Python ints)."""

    def wrap(x: int) -> int:
        return _signed(x)

    key = wrap(~key + (key << 21))
    key = wrap(key ^ (key >> 24))
    key = wrap(key + (key << 3) + (key << 8))
    key = wrap(key ^ (key >> 14))
    key = wrap(key + (key << 2) + (key << 4))
    key = wrap(key ^ (key >> 28))
    return wrap(key + (key << 31))


def ref_positions(hash64: int, k: int, num_bits: int) -> list[int]:
    """Bit positions of one hash (Kirsch-Mitzenmacher with Java's 32-bit int arithmetic)."""
    h1 = _signed32(hash64 & 0xFFFFFFFF)
    h2 = _signed32((hash64 >> 32) & 0xFFFFFFFF)
    out = []
    for i in range(1, k + 1):
        c = _signed32(h1 + i * h2)
        if c < 0:
            c = ~c
        out.append(c % num_bits)
    return out


def _signed32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >> 31 else x


def set_bits(bf: BloomFilter) -> list[int]:
    bits = np.unpackbits(bf.words.astype("<u8").view(np.uint8), bitorder="little")
    return [int(i) for i in np.nonzero(bits)[0]]


# ---------------------------------------------------------------------------------------------
# hash functions


@pytest.mark.parametrize(
    ("data", "expected"),
    [  # ORC Java Murmur3.hash64, from orc-pitfalls.md
        (b"", 8404154273843829576),
        (b"hello", 4118559451821261121),
        (b"hello world", -5158593287617531220),
        (b"0123456789abcdef", -5470619495707563648),
    ],
)
def test_murmur3_java_values(data: bytes, expected: int) -> None:
    assert murmur3_hash64(data) == expected
    assert ref_murmur3_hash64(data) == expected


def test_murmur3_java_long_text() -> None:
    # ORC Java TestMurmur3.testHashCodeM3_64 / C++ TestMurmur3.testHash64
    text = (
        b"It was the best of times, it was the worst of times,"
        b" it was the age of wisdom, it was the age of foolishness,"
        b" it was the epoch of belief, it was the epoch of incredulity,"
        b" it was the season of Light, it was the season of Darkness,"
        b" it was the spring of hope, it was the winter of despair,"
        b" we had everything before us, we had nothing before us,"
        b" we were all going direct to Heaven,"
        b" we were all going direct the other way."
    )
    assert murmur3_hash64(text) == 305830725663368540


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=70), st.integers(-(2**31), 2**31 - 1))
def test_murmur3_matches_reference(data: bytes, seed: int) -> None:
    assert murmur3_hash64(data, seed) == ref_murmur3_hash64(data, seed)
    assert murmur3_hash64(bytearray(data), seed) == ref_murmur3_hash64(data, seed)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=30), max_size=40), st.integers(0, 5))
def test_murmur3_many_matches_scalar(values: list[bytes], cut: int) -> None:
    expected = [ref_murmur3_hash64(v) for v in values][cut:]
    for typ in (pa.binary(), pa.large_binary()):
        arr = pa.array(values, typ).slice(cut)
        assert hash_arrow_array(arr, K.BINARY).tolist() == expected
    offsets = np.cumsum([0] + [len(v) for v in values]).astype(np.int32)
    everything = [ref_murmur3_hash64(v) for v in values]
    assert murmur3_hash64_many(offsets, b"".join(values)).tolist() == everything


def test_murmur3_many_rejects_bad_offsets() -> None:
    with pytest.raises(ValueError):
        murmur3_hash64_many(np.array([0, 5], dtype=np.int32), b"abc")
    with pytest.raises(ValueError):
        murmur3_hash64_many(np.array([2, 1], dtype=np.int64), b"abc")


@pytest.mark.parametrize(
    ("value", "expected"),
    [  # ORC Java TestBloomFilter.testLongHash
        (0, 0),
        (-1, 6614246905173314819),
        (-2, -5218250166726157773),
        (-3, 1396019780946710816),
        (-9223372036854775805, 3691278333958578070),
        (-9223372036854775806, -1192099642781211952),
        (-9223372036854775807, -9102499068535824902),
        (790302201, 1499534499340523007),
        (790302202, -5108695154500810163),
        (790302203, -2450623810987162260),
        (18000000000, -1097054448615658549),
        (9223372036064673413, -4986173376161118712),
        (9223372036064673414, 3785699328822078862),
        (9223372036064673415, 294188322706112357),
    ],
)
def test_long_hash_java_values(value: int, expected: int) -> None:
    assert long_hash(value) == expected
    assert ref_long_hash(value) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=50))
def test_thomas_wang_matches_reference(values: list[int]) -> None:
    assert thomas_wang_hash64(np.array(values, dtype=np.int64)).tolist() == [
        ref_long_hash(v) for v in values
    ]


def test_double_to_long_bits_canonical_nan() -> None:
    odd_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF0000000000123))[0]
    bits = double_to_long_bits([1.5, -0.0, math.nan, odd_nan]).tolist()
    assert bits[0] == struct.unpack("<q", struct.pack("<d", 1.5))[0]
    assert bits[1] == -(2**63)
    assert bits[2] == bits[3] == 0x7FF8000000000000


# ---------------------------------------------------------------------------------------------
# sizing and bit positions


def test_optimal_size_java() -> None:
    assert optimal_size(10000, 0.01) == (95872, 7)
    assert optimal_size(10000, 0.05) == (62400, 4)  # bad_bloom_filter_*.orc: 7800 bytes, k=4
    assert optimal_size(0, 0.05) == optimal_size(1, 0.05)
    for bad in (0.0, 1.0, -0.1, math.nan):
        with pytest.raises(SchemaError):
            optimal_size(10000, bad)


def test_optimal_size_rounds_up_aligned() -> None:
    # find an (n, p) whose raw bit count is already a multiple of 64: Java still adds 64
    for n in range(1, 5000):
        nb = int(-n * math.log(0.05) / (math.log(2) * math.log(2)))
        if nb % 64 == 0:
            break
    else:  # pragma: no cover
        pytest.fail("no aligned size found")
    m, k = optimal_size(n, 0.05)
    assert m == nb + 64
    assert k == max(1, math.floor(m / n * math.log(2) + 0.5))


JAVA_BASIC_POSITIONS: list[tuple[str, Any, list[int]]] = [
    # ORC Java TestBloomFilter.testBasicOperations: BloomFilterUtf8(128, 0.05)
    ("long", 1, [567, 288, 246, 306, 228]),
    ("long", 11, [228, 285, 342, 399, 456]),
    ("long", 111, [802, 630, 458, 545, 717]),
    ("long", 1111, [826, 526, 40, 480, 86]),
    ("long", 0, [0, 0, 0, 0, 0]),
    ("long", -1, [120, 308, 335, 108, 535]),
    ("long", -11, [323, 685, 215, 577, 107]),
    ("long", -111, [357, 318, 279, 15, 54]),
    ("long", -1111, [572, 680, 818, 434, 232]),
    ("double", 1.1, [522, 692, 12, 370, 753]),
    ("double", 11.11, [210, 188, 89, 720, 389]),
    ("double", 111.111, [831, 252, 583, 500, 335]),
    ("double", 1111.1111, [725, 175, 374, 92, 642]),
    ("double", 0.0, [0, 0, 0, 0, 0]),
    ("double", -1.1, [636, 163, 565, 206, 679]),
    ("double", -11.11, [473, 192, 743, 462, 181]),
    ("double", -111.111, [167, 152, 472, 295, 24]),
    ("double", -1111.1111, [308, 346, 384, 422, 371]),
    ("string", "", [656, 807, 480, 151, 304]),
    ("string", "english", [576, 221, 68, 729, 392]),
    ("string", "中国字", [602, 636, 44, 362, 318]),
]


@pytest.mark.parametrize(("what", "value", "positions"), JAVA_BASIC_POSITIONS)
def test_bit_positions_java(what: str, value: Any, positions: list[int]) -> None:
    bf = BloomFilter.for_entries(128, 0.05)
    assert (bf.num_bits, bf.num_hash_functions) == (832, 5)
    kind = {"long": K.LONG, "double": K.DOUBLE, "string": K.STRING}[what]
    assert not bf.might_contain(value, kind)
    bf.add_hash(hash_value(value, kind))
    assert set_bits(bf) == sorted(set(positions))
    assert ref_positions(hash_value(value, kind), 5, 832) == positions
    assert bf.might_contain(value, kind)


# ---------------------------------------------------------------------------------------------
# protobuf form


def test_serialize_layout_java() -> None:
    # ORC Java TestBloomFilter.testBloomFilterSerialize
    words = [0x8040201008040201, ~0x8040201008040201 & M64]
    bf = BloomFilter.from_words(words, 1)
    proto = bf.to_proto()
    assert proto.numHashFunctions == 1 and len(proto.bitset) == 0
    expected = bytes(
        [1, 2, 4, 8, 16, 32, 64, 128] + [0xFE, 0xFD, 0xFB, 0xF7, 0xEF, 0xDF, 0xBF, 0x7F]
    )
    assert proto.utf8bitset == expected
    assert BloomFilter.from_proto(proto, BLOOM_UTF8) == bf
    legacy = bf.to_proto(legacy=True)
    assert list(legacy.bitset) == words and not legacy.utf8bitset
    assert BloomFilter.from_proto(legacy, BLOOM) == bf
    # the same bits through a serialised round trip and signed Java longs
    reparsed = pb.BloomFilter.FromString(legacy.SerializeToString())
    assert BloomFilter.from_proto(reparsed, BLOOM) == BloomFilter.from_words(
        np.array([_signed(w) for w in words], dtype=np.int64), 1
    )


@pytest.mark.parametrize(
    ("proto", "kind"),
    [
        (pb.BloomFilter(numHashFunctions=3, utf8bitset=b"\0" * 12), BLOOM_UTF8),  # not 8-aligned
        (pb.BloomFilter(numHashFunctions=3), BLOOM_UTF8),  # no bits
        (pb.BloomFilter(numHashFunctions=3), BLOOM),
        (pb.BloomFilter(numHashFunctions=0, utf8bitset=b"\0" * 64), BLOOM_UTF8),  # k = 0
        (pb.BloomFilter(numHashFunctions=45, utf8bitset=b"\0" * 8), BLOOM_UTF8),  # k > 44 for m=64
        (pb.BloomFilter(numHashFunctions=10000, bitset=[0x3FA999999999999A]), BLOOM),  # over1k
        (pb.BloomFilter(numHashFunctions=3, utf8bitset=b"\0" * 8), 6),  # not a bloom stream
    ],
)
def test_from_proto_rejects_unusable(proto: pb.BloomFilter, kind: int) -> None:
    assert BloomFilter.from_proto(proto, kind) is None


def test_from_proto_largest_k_accepted() -> None:
    # one expected entry: m = 64 and k = round(64 ln 2) = 44 is what writers produce
    assert optimal_size(1, 0.05) == (64, 44)
    proto = pb.BloomFilter(numHashFunctions=44, utf8bitset=b"\xff" * 8)
    bf = BloomFilter.from_proto(proto, BLOOM_UTF8)
    assert bf is not None and bf.might_contain(12345, K.INT)


def test_decode_index_rejects_garbage() -> None:
    index = pb.BloomFilterIndex(bloomFilter=[pb.BloomFilter(numHashFunctions=2)])
    assert len(decode_bloom_filter_index(index.SerializeToString())) == 1
    with pytest.raises(CorruptFileError, match="column 3"):
        decode_bloom_filter_index(b"\x0a\xff\xff\xff\x0f", column=3)


def test_merge_and_reset() -> None:
    a, b = BloomFilter.for_entries(100, 0.05), BloomFilter.for_entries(100, 0.05)
    a.add_hashes(hash_arrow_array(pa.array([1, 2, 3]), K.INT))
    b.add_hashes(hash_arrow_array(pa.array([4, 5]), K.INT))
    a.merge(b)
    assert all(a.might_contain(v, K.INT) for v in range(1, 6))
    assert set_bits(a) == sorted(set(set_bits(a)) | set(set_bits(b)))
    with pytest.raises(ValueError):
        a.merge(BloomFilter.for_entries(1000, 0.05))
    a.reset()
    assert set_bits(a) == []


# ---------------------------------------------------------------------------------------------
# value hashing


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("1.10", "1.1"),
        ("1.00", "1"),
        ("0", "0"),
        ("0.00", "0"),
        ("-0.50", "-0.5"),
        ("100", "100"),
        ("100.00", "100"),
        ("-0.000", "0"),
        ("1E+2", "100"),
        ("0.0050", "0.005"),
        ("-12345678901234567890.1234567890", "-12345678901234567890.123456789"),
    ],
)
def test_decimal_text(value: str, text: str) -> None:
    assert hash_value(decimal.Decimal(value), K.DECIMAL) == ref_murmur3_hash64(text.encode())


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**38) + 1, 10**38 - 1), st.integers(0, 38))
def test_decimal_kernel_text(unscaled: int, scale: int) -> None:
    d = decimal.Decimal(unscaled).scaleb(-scale, decimal.Context(prec=80))
    expected = "0" if unscaled == 0 else format(d, "f")
    if "." in expected:
        expected = expected.rstrip("0").rstrip(".")
    u = unscaled & ((1 << 128) - 1)
    assert _bloom.decimal128_text(u & M64, u >> 64, scale) == expected.encode()
    arr = pa.array([d], pa.decimal128(38, scale))
    assert hash_arrow_array(arr, K.DECIMAL).tolist() == [ref_murmur3_hash64(expected.encode())]


def test_nulls_are_skipped() -> None:
    arr = pa.array(["a", None, "b"])
    assert hash_arrow_array(arr, K.STRING).tolist() == [
        ref_murmur3_hash64(b"a"),
        ref_murmur3_hash64(b"b"),
    ]
    ints = pa.chunked_array([[None, 7], [], [None]], pa.int32())
    assert hash_arrow_array(ints, K.INT).tolist() == [ref_long_hash(7)]


def test_float_rounds_to_float32() -> None:
    f32 = float(np.float32(0.1))
    expected = ref_long_hash(struct.unpack("<q", struct.pack("<d", f32))[0])
    assert hash_value(0.1, K.FLOAT) == expected
    assert hash_arrow_array(pa.array([0.1], pa.float32()), K.FLOAT).tolist() == [expected]
    assert hash_arrow_array(pa.array([0.1], pa.float64()), K.FLOAT).tolist() == [expected]
    assert hash_value(0.1, K.DOUBLE) != expected


def test_char_padding_and_varchar_truncation() -> None:
    arr = pa.array(["ab", "abcdefgh", "é"])
    assert hash_arrow_array(arr, K.CHAR, max_length=4).tolist() == [
        ref_murmur3_hash64(v.encode()) for v in ("ab  ", "abcd", "é   ")
    ]
    assert hash_arrow_array(arr, K.VARCHAR, max_length=4).tolist() == [
        ref_murmur3_hash64(v.encode()) for v in ("ab", "abcd", "é")
    ]
    assert hash_value("ab", K.CHAR, max_length=4) == ref_murmur3_hash64(b"ab  ")
    dict_arr = pa.array(["x", "y", None, "x"]).dictionary_encode()
    assert hash_arrow_array(dict_arr, K.STRING).tolist() == [
        ref_murmur3_hash64(v) for v in (b"x", b"y", b"x")
    ]


def test_timestamp_and_date_hashing() -> None:
    ns = [1_500_000_000_123_456_789, -1_000_000_500, -999_500_000, 0]
    arr = pa.array(ns, pa.timestamp("ns"))
    floor_ms = [n // 1_000_000 for n in ns]
    java_ms = [m + 1000 if -1000 < m < 0 else m for m in floor_ms]  # ORC Java's quirk
    assert hash_arrow_array(arr, K.TIMESTAMP).tolist() == [ref_long_hash(m) for m in java_ms]
    micros = pa.array([n // 1000 for n in ns], pa.timestamp("us"))
    assert hash_arrow_array(micros, K.TIMESTAMP).tolist() == [ref_long_hash(m) for m in java_ms]
    assert hash_arrow_array(
        pa.array([-1], pa.timestamp("s", "UTC")), K.TIMESTAMP_INSTANT
    ).tolist() == [ref_long_hash(-1000)]
    when = datetime.datetime(2020, 2, 3, 4, 5, 6, 789000)
    millis = int((when - datetime.datetime(1970, 1, 1)).total_seconds() * 1000)
    assert hash_value(when, K.TIMESTAMP) == ref_long_hash(millis)
    aware = when.replace(tzinfo=datetime.UTC)
    assert hash_value(aware, K.TIMESTAMP_INSTANT) == ref_long_hash(millis)
    with pytest.raises(SchemaError):
        hash_value(aware, K.TIMESTAMP)
    day = datetime.date(1969, 12, 30)
    assert hash_value(day, K.DATE) == ref_long_hash(-2)
    assert hash_arrow_array(pa.array([day]), K.DATE).tolist() == [ref_long_hash(-2)]


def test_timestamp_probes_cover_every_writer() -> None:
    bf = BloomFilter.for_entries(100, 0.01)
    # C++ via pyarrow hashes truncated millis, ORC Java millis + 1000 in (-1 s, 0)
    bf.add_hash(ref_long_hash(-1000))  # trunc of -1_000_000_500 ns
    bf.add_hash(ref_long_hash(500))  # Java's value for -499.5 ms
    assert bf.might_contain(np.datetime64(-1_000_000_500, "ns"), K.TIMESTAMP)
    assert bf.might_contain(np.datetime64(-499_500_000, "ns"), K.TIMESTAMP)
    assert not bf.might_contain(np.datetime64(-2_000_000_000, "ns"), K.TIMESTAMP)


def test_might_contain_double_zero_and_nan() -> None:
    bf = BloomFilter.for_entries(100, 0.01)
    bf.add_hashes(hash_arrow_array(pa.array([-0.0]), K.DOUBLE))
    assert bf.might_contain(0.0, K.DOUBLE) and bf.might_contain(-0.0, K.DOUBLE)
    assert not bf.might_contain_double(0.0)
    assert bf.might_contain(math.nan, K.DOUBLE)
    assert bf.might_contain(None, K.DOUBLE)


@pytest.mark.parametrize(
    ("value", "kind"),
    [(1.5, K.INT), ("x", K.LONG), (b"x", K.DECIMAL), (1, K.STRING), (None, K.INT), (1, K.STRUCT)],
)
def test_hash_value_rejects_wrong_literals(value: Any, kind: K) -> None:
    with pytest.raises(SchemaError):
        hash_value(value, kind)


def test_hash_arrow_array_rejects_wrong_types() -> None:
    with pytest.raises(SchemaError):
        hash_arrow_array(pa.array(["x"]), K.INT)
    with pytest.raises(SchemaError):
        hash_arrow_array(pa.array([1]), K.TIMESTAMP)


def test_compound_kinds() -> None:
    lists = pa.array([[1, 2], None, [], [3]])
    assert hash_arrow_array(lists, K.LIST).tolist() == [ref_long_hash(v) for v in (2, 0, 1)]
    assert hash_arrow_array(pa.array([{"a": 1}]), K.STRUCT).tolist() == []


LITERALS = st.one_of(
    st.tuples(st.just(K.LONG), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just(K.INT), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just(K.DOUBLE), st.floats(allow_nan=False)),
    st.tuples(st.just(K.FLOAT), st.floats(allow_nan=False, width=32)),
    st.tuples(st.just(K.STRING), st.text(max_size=20)),
    st.tuples(st.just(K.BINARY), st.binary(max_size=20)),
    st.tuples(st.just(K.DATE), st.dates()),
    st.tuples(st.just(K.TIMESTAMP), st.datetimes()),
    st.tuples(
        st.just(K.DECIMAL),
        st.decimals(min_value=-(10**10), max_value=10**10, places=3, allow_nan=False),
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(LITERALS, min_size=1, max_size=30),
    st.integers(1, 2000),
    st.sampled_from([0.01, 0.05, 0.3]),
)
def test_added_values_always_test_positive(
    items: list[tuple[K, Any]], entries: int, fpp: float
) -> None:
    bf = BloomFilter.for_entries(entries, fpp)
    for kind, value in items:
        bf.add_hash(hash_value(value, kind))
    for kind, value in items:
        assert bf.might_contain(value, kind)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=200), st.integers(1, 500))
def test_added_arrays_always_test_positive(values: list[str | None], entries: int) -> None:
    bf = BloomFilter.for_entries(entries, 0.05)
    bf.add_arrow_array(pa.array(values, pa.string()), K.STRING)
    present = [v for v in values if v is not None]
    assert all(bf.might_contain(v, K.STRING) for v in present)
    assert bf.test_hashes(hash_arrow_array(pa.array(present, pa.string()), K.STRING)).all()


# ---------------------------------------------------------------------------------------------
# usability rules


@pytest.mark.parametrize(
    ("args", "usable"),
    [
        ((BLOOM_UTF8, K.LONG, 0, 9, None, 1), True),
        ((BLOOM_UTF8, K.STRING, 0, 5, None, None), True),  # ORC-101 files: encoding absent
        ((BLOOM_UTF8, K.LONG, 0, 9, None, 2), False),  # future bloom encoding
        ((BLOOM_UTF8, K.TIMESTAMP, 0, 9, None, 1), True),
        ((BLOOM_UTF8, K.TIMESTAMP, 0, 9, None, None), False),  # original timestamp encoding
        ((BLOOM_UTF8, K.TIMESTAMP, 0, 5, None, 1), False),  # before ORC-135
        ((BLOOM, K.DECIMAL, 0, 9, None, None), False),
        ((BLOOM, K.STRING, 0, 2, None, None), False),  # before HIVE-12055
        ((BLOOM, K.VARCHAR, 0, 3, None, None), True),
        ((BLOOM, K.TIMESTAMP, 0, 6, None, None), False),
        ((BLOOM, K.INT, 0, 1, None, None), True),
        ((BLOOM, K.STRING, 4, 6, None, None), True),  # other writers include every Java fix
        ((BLOOM_UTF8, K.LONG, None, None, None, 1), True),
        ((BLOOM_UTF8, K.LONG, 1, 6, None, 1), False),  # C++ without software version
        ((BLOOM_UTF8, K.LONG, 1, 6, "1.6.0", 1), False),
        ((BLOOM_UTF8, K.LONG, 1, 6, "1.6.11", 1), False),
        ((BLOOM_UTF8, K.LONG, 1, 6, "1.7.0-SNAPSHOT", 1), False),
        ((BLOOM_UTF8, K.LONG, 1, 6, "1.6.12", 1), True),
        ((BLOOM_UTF8, K.LONG, 1, 6, "2.2.2", 1), True),
        ((BLOOM_UTF8, K.BYTE, 1, 6, "2.2.2", 1), False),  # C++ writer bugs
        ((BLOOM_UTF8, K.BOOLEAN, 1, 6, "2.2.2", 1), False),
        ((BLOOM_UTF8, K.CHAR, 1, 6, "2.3.1", 1), False),
        ((BLOOM_UTF8, K.FLOAT, 1, 6, "2.3.1", 1), False),
        ((BLOOM_UTF8, K.BYTE, 0, 9, None, 1), True),
        ((6, K.LONG, 0, 9, None, 1), False),
    ],
)
def test_bloom_filter_usable(args: tuple[Any, ...], usable: bool) -> None:
    assert bloom_filter_usable(*args) is usable


def test_hash_throughput() -> None:
    """1M short strings hash in well under a second (the measured rate is in the report)."""
    arr = pa.array([f"s{i}" for i in range(1_000_000)])
    hashes = hash_arrow_array(arr, K.STRING)
    assert hashes.shape == (1_000_000,)
    assert hashes[12345] == ref_murmur3_hash64(b"s12345")
