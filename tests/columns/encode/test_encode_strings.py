"""String, char, varchar and binary encoders."""

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
from aorc.format.codec import rle
from aorc.format.codec.bloom import murmur3_hash64
from aorc.format.columns.encode import EncodeOptions, encode_column
from aorc.format.types import OrcType, TypeKind, parse_type_string

DICT = pb.ColumnEncoding.DICTIONARY_V2
DIRECT = pb.ColumnEncoding.DIRECT_V2


def _check_string_stats(enc, arr: pa.Array, starts: np.ndarray) -> None:  # type: ignore[no-untyped-def]
    as_binary = arr.cast(pa.binary())
    for g, sl in enumerate(group_slices(len(arr), starts)):
        part = as_binary[sl].drop_null()
        st = enc.row_group_stats[g]
        assert st.numberOfValues == len(part)
        if not len(part):
            assert not st.stringStatistics.HasField("minimum")
            continue
        mm = pc.min_max(part)
        assert st.stringStatistics.minimum.encode() == mm["min"].as_py()
        assert st.stringStatistics.maximum.encode() == mm["max"].as_py()
        assert st.stringStatistics.sum == pc.sum(pc.binary_length(part)).as_py()


@pytest.mark.parametrize("distinct", [None, 40])
def test_string_round_trip(distinct: int | None) -> None:
    rng = np.random.default_rng(11)
    n = 7_777
    if distinct is None:
        arr = random_array(rng, pa.string(), n, null_rate=0.25)
    else:
        words = random_array(rng, pa.string(), distinct, null_rate=0.0)
        arr = words.take(pa.array(rng.integers(0, distinct, n)))
        arr = pc.if_else(pa.array(rng.random(n) < 0.1), None, arr)
    starts = np.arange(0, n, 1000)
    enc, back = round_trip(OrcType(TypeKind.STRING), arr, starts,
                           EncodeOptions(bloom_filter_columns={0}))
    assert back.equals(arr)
    vstarts = value_starts(arr, starts)
    values = arr.drop_null()
    if distinct is None:
        assert enc.encoding.kind == DIRECT
        assert kinds(enc) == [K.PRESENT, K.DATA, K.LENGTH]
        lengths = pc.binary_length(values).to_numpy().astype(np.int64)
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        assert [p for p, in stream(enc, K.DATA).positions] == offsets[vstarts].tolist()
        check_positions(stream(enc, K.LENGTH), "unsigned", len(values), vstarts)
    else:
        assert enc.encoding.kind == DICT
        assert kinds(enc) == [K.PRESENT, K.DATA, K.DICTIONARY_DATA, K.LENGTH]
        keys = sorted({v.encode() for v in values.to_pylist()})
        assert enc.encoding.dictionarySize == len(keys)
        assert stream(enc, K.DICTIONARY_DATA).data == b"".join(keys)
        lengths = rle.read_int_rle_v2(stream(enc, K.LENGTH).data, len(keys), False)
        assert lengths.tolist() == [len(k) for k in keys]
        assert stream(enc, K.LENGTH).positions == [[] for _ in starts]
        indices = rle.read_int_rle_v2(stream(enc, K.DATA).data, len(values), False)
        assert [keys[i] for i in indices] == [v.encode() for v in values.to_pylist()]
        check_positions(stream(enc, K.DATA), "unsigned", len(values), vstarts)
    check_positions(stream(enc, K.PRESENT), "bool", n, starts)
    _check_string_stats(enc, arr, starts)
    assert enc.bloom_filters is not None
    for g, sl in enumerate(group_slices(n, starts)):
        for v in arr[sl].drop_null().to_pylist()[:20]:
            assert enc.bloom_filters[g].test_hash(murmur3_hash64(v.encode()))


def test_dictionary_sorted_by_bytes() -> None:
    values = ["é", "z", "a", "\x7f", "ÿ", "ab", "", "a", "z", "é", "日", "😀"] * 3
    enc, back = round_trip(OrcType(TypeKind.STRING), pa.array(values))
    assert enc.encoding.kind == DICT
    keys = sorted({v.encode() for v in values})
    assert stream(enc, K.DICTIONARY_DATA).data == b"".join(keys)
    assert back.to_pylist() == values


@pytest.mark.parametrize(("distinct", "total", "threshold", "expected"), [
    (4, 5, 0.8, DIRECT),  # 0.8 in 32-bit float is above the 0.8 double: direct, as Java
    (3, 4, 0.8, DICT),
    (1, 2, 0.5, DICT),  # exactly representable: dictionary
    (5, 5, 1.0, DICT),
    (5, 5, 0.0, DIRECT),  # threshold 0 disables dictionaries
])
def test_dictionary_threshold(distinct: int, total: int, threshold: float, expected: int) -> None:
    first = [f"k{i}" for i in range(distinct)] + ["k0"] * (total - distinct)
    # the second row group would decide the other way; only the first one counts
    second = ["same"] * 50 if expected == DIRECT else [f"u{i}" for i in range(50)]
    arr = pa.array(first + [None, None] + second)
    opts = EncodeOptions(dictionary_key_size_threshold=threshold)
    enc, back = round_trip(OrcType(TypeKind.STRING), arr, [0, total + 2], opts)
    assert enc.encoding.kind == expected
    assert back.equals(arr)


def test_dictionary_decision_kept_across_stripes() -> None:
    decisions: dict[int, bool] = {}
    t = OrcType(TypeKind.STRING, column_id=3)
    low = pa.array(["a", "b"] * 100)
    high = pa.array([f"v{i}" for i in range(200)])
    opts = EncodeOptions()
    first = encode_column(t, low, [0, 100], opts, dictionary_decisions=decisions)
    assert decisions == {3: True} and first.encoding.kind == DICT
    second = encode_column(t, high, [0, 100], opts, dictionary_decisions=decisions)
    assert second.encoding.kind == DICT and second.encoding.dictionarySize == 200
    alone = encode_column(t, high, [0, 100], opts)
    assert alone.encoding.kind == DIRECT


def test_all_null_strings_use_an_empty_dictionary() -> None:
    enc, back = round_trip(OrcType(TypeKind.STRING), pa.nulls(10, pa.string()), [0, 5])
    assert enc.encoding.kind == DICT and enc.encoding.HasField("dictionarySize")
    assert enc.encoding.dictionarySize == 0
    assert kinds(enc) == [K.PRESENT, K.DATA, K.DICTIONARY_DATA, K.LENGTH]
    assert back.null_count == 10


def test_char_pads_and_truncates_by_characters() -> None:
    t = parse_type_string("char(3)")
    values = ["a", "日本語です", "é", "abc", "", None, "ab😀x"]
    enc, back = round_trip(t, pa.array(values), opts=EncodeOptions(bloom_filter_columns={0}))
    expected = ["a  ", "日本語", "é  ", "abc", "   ", None, "ab😀"]
    assert back.to_pylist() == expected
    st = enc.stripe_stats.stringStatistics
    present = [v.encode() for v in expected if v is not None]
    assert (st.minimum.encode(), st.maximum.encode()) == (min(present), max(present))
    assert st.sum == sum(len(v) for v in present)
    assert enc.bloom_filters is not None
    assert enc.bloom_filters[0].test_hash(murmur3_hash64(b"a  "))


def test_varchar_truncates() -> None:
    t = parse_type_string("varchar(2)")
    enc, back = round_trip(t, pa.array(["abc", "日本語", "x", "é😀z", None]))
    assert back.to_pylist() == ["ab", "日本", "x", "é😀", None]


def test_binary() -> None:
    rng = np.random.default_rng(12)
    n = 3000
    arr = random_array(rng, pa.binary(), n, null_rate=0.1)
    starts = np.arange(0, n, 700)
    enc, back = round_trip(OrcType(TypeKind.BINARY), arr, starts,
                           EncodeOptions(bloom_filter_columns={0}))
    assert back.equals(arr)
    assert enc.encoding.kind == DIRECT and kinds(enc) == [K.PRESENT, K.DATA, K.LENGTH]
    for g, sl in enumerate(group_slices(n, starts)):
        part = arr[sl].drop_null()
        assert enc.row_group_stats[g].binaryStatistics.sum == \
            (pc.sum(pc.binary_length(part)).as_py() or 0)
        for v in part.to_pylist()[:10]:
            assert enc.bloom_filters is not None
            assert enc.bloom_filters[g].test_hash(murmur3_hash64(v))
    check_positions(stream(enc, K.LENGTH), "unsigned", n - arr.null_count,
                    value_starts(arr, starts))


def test_string_variants_are_accepted() -> None:
    values = ["x", None, "yy", "x"]
    for arr in (pa.array(values, pa.large_string()), pa.array(values, pa.string_view()),
                pa.array(values).dictionary_encode(),
                pa.chunked_array([pa.array(values[:2]), pa.array(values[2:])])):
        enc, back = round_trip(OrcType(TypeKind.STRING), arr)  # type: ignore[arg-type]
        assert back.to_pylist() == values


def _long(prefix_len: int, char: str, tail: str = "xyz") -> str:
    return "a" * prefix_len + char * 3 + tail * 400


@pytest.mark.parametrize("char", ["é", "日", "😀", "~", "\uffff", "\ufffe", "\ud7ff"])
@pytest.mark.parametrize("prefix_len", [1019, 1020, 1021, 1022, 1023, 1024])
def test_long_string_bounds(char: str, prefix_len: int) -> None:
    value = _long(prefix_len, char)
    raw = value.encode()
    enc = encode_column(OrcType(TypeKind.STRING), pa.array([value, "b" * 5]), [0],
                        EncodeOptions())
    st = enc.stripe_stats.stringStatistics
    assert not st.HasField("minimum") and st.maximum == "b" * 5
    low = st.lowerBound.encode()
    # the lower bound: the whole characters within the first 1024 bytes
    cut = 1024
    while cut > 0 and (raw[cut] & 0xC0) == 0x80:
        cut -= 1
    assert low == raw[:cut] and len(low) <= 1024 and raw.startswith(low)
    assert st.sum == len(raw) + 5
    # a long maximum: truncated, last character incremented
    enc = encode_column(OrcType(TypeKind.STRING), pa.array([value, "a"]), [0], EncodeOptions())
    st = enc.stripe_stats.stringStatistics
    assert st.minimum == "a" and not st.HasField("maximum")
    high = st.upperBound
    last_start = cut - 1
    while (raw[last_start] & 0xC0) == 0x80:
        last_start -= 1
    kept = raw[:last_start].decode()
    last = raw[last_start:cut].decode()
    assert high.startswith(kept)
    bumped = ord(last) + 1
    if bumped in (0x7F, 0xFFFF):  # ORC Java's encoder gives invalid bytes here ...
        assert high[len(kept):] in ("\ufffd\ufffd", "\ufffd\ufffd\ufffd\ufffd")
    elif bumped == 0xD800:  # ... or an encoded surrogate, one replacement in Java
        assert high[len(kept):] == "\ufffd"
    else:
        assert high == kept + chr(bumped)
        assert high.encode() > raw[:len(high.encode())]


def test_long_strings_sequential_rules() -> None:
    long_a = "m" * 2000
    # a later value between the truncated bound and the long value does not replace it
    enc = encode_column(OrcType(TypeKind.STRING), pa.array([long_a, "m" * 1500, "z"]), [0],
                        EncodeOptions())
    st = enc.stripe_stats.stringStatistics
    assert st.lowerBound == "m" * 1024 and st.maximum == "z"
    enc = encode_column(OrcType(TypeKind.STRING), pa.array(["a", long_a, "b"]), [0, 2],
                        EncodeOptions())
    first, second = enc.row_group_stats
    assert first.stringStatistics.upperBound == "m" * 1023 + "n"
    assert second.stringStatistics.maximum == "b"
    merged = enc.stripe_stats.stringStatistics
    assert merged.minimum == "a" and merged.upperBound == "m" * 1023 + "n"


def test_char_of_invalid_utf8_raises_schema_error() -> None:
    with pytest.raises(SchemaError):
        encode_column(parse_type_string("char(2)"), pa.array([b"\xff\xfe"]), [0],
                      EncodeOptions())


@pytest.mark.parametrize("seed", range(4))
def test_group_extremes_match_arrow_min_max(seed: int) -> None:
    """The C kernel behind direct strings' row-group statistics picks the values Arrow's
    ``min_max`` picks (unsigned byte order, a prefix first), empty groups included."""
    rng = np.random.default_rng(seed)
    n = 3000
    alphabet = np.array([b"", b"a", b"ab", b"b", b"\xff", b"\x00", b"\xc3\xa9", b"ab\x00"],
                        dtype=object)
    words = [b"".join(rng.choice(alphabet, rng.integers(0, 4))) for _ in range(n)]
    arr = pa.array(words, pa.large_binary())
    offsets = np.frombuffer(arr.buffers()[1], np.int64, count=n + 1)
    data = arr.buffers()[2].to_pybytes() if arr.buffers()[2] is not None else b""
    cuts = np.sort(rng.integers(0, n + 1, 30))
    starts = np.concatenate(([0], cuts))
    ends = np.concatenate((cuts, [n]))
    low, high = rle.group_extremes(offsets, data, starts, ends)
    for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        if a == b:
            assert low[g] == high[g] == -1
            continue
        expected = pc.min_max(arr.slice(a, b - a))
        assert words[low[g]] == expected["min"].as_py()
        assert words[high[g]] == expected["max"].as_py()
    with pytest.raises(ValueError, match="outside"):
        rle.group_extremes(offsets, data, [0], [n + 1])
    with pytest.raises(ValueError, match="decrease"):
        rle.group_extremes(offsets[::-1].copy(), data, [0], [1])
