"""String, binary, char and varchar columns: DIRECT and DICTIONARY encodings, both RLE versions."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyorc
import pytest
from helpers.corpus import CORPUS_ABSENT
from stream_builders import literal_rle_v1, make_streams
from stripe_source import (
    CONFORMANCE,
    decode_file,
    pyarrow_orc_bytes,
    pyarrow_read,
    pyorc_bytes,
    stripes,
)

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, decode_column
from aorc.format.types import parse_type_string

RNG = np.random.default_rng(11)
WORDS = ["", "a", "hello", "naïve", "日本語", "x" * 300, "tab\tnew\nline", "\x00nul"]


def _table(nulls: str, distinct: int) -> pa.Table:
    n = 4000
    picks = RNG.integers(0, distinct, n)
    vocab = [WORDS[i % len(WORDS)] + (str(i) if i >= len(WORDS) else "") for i in range(distinct)]
    strings = [vocab[i] for i in picks]
    mask = {"none": None, "some": RNG.random(n) < 0.25, "all": np.ones(n, np.bool_)}[nulls]
    return pa.table({
        "s": pa.array(strings, pa.string(), mask=mask),
        "b": pa.array([s.encode() + b"\xff\x00" for s in strings], pa.binary(), mask=mask),
        "e": pa.array([""] * n, pa.string(), mask=mask),
    })


def _encodings(data: bytes) -> set[int]:
    _, parts = stripes(data)
    return {p.streams.encoding(1).kind for p in parts}


@pytest.mark.parametrize("version", ["0.11", "0.12"])
@pytest.mark.parametrize("threshold", [0.0, 1.0])
@pytest.mark.parametrize("nulls", ["none", "some", "all"])
@pytest.mark.parametrize("distinct", [1, 50, 3000])
def test_matches_pyarrow(version: str, threshold: float, nulls: str, distinct: int) -> None:
    table = _table(nulls, distinct)
    data = pyarrow_orc_bytes(table, file_version=version, stripe_size=32 * 1024,
                             dictionary_key_size_threshold=threshold)
    if nulls != "all":
        dictionary = {pb.ColumnEncoding.DICTIONARY, pb.ColumnEncoding.DICTIONARY_V2}
        assert bool(_encodings(data) & dictionary) == (threshold == 1.0)
    got = decode_file(data)
    want = pyarrow_read(data)
    assert got.schema == want.schema
    assert got.equals(want)
    got.validate(full=False)


@pytest.mark.parametrize("threshold", [0.0, 1.0])
def test_dictionary_strings_option(threshold: float) -> None:
    """dictionary_strings: every string-family column, nested ones too, is a dictionary."""
    table = _table("some", 20)
    table = table.append_column("nested", pa.array(
        [{"x": s, "l": [s, s]} for s in table.column("s").to_pylist()]))
    data = pyarrow_orc_bytes(table, dictionary_key_size_threshold=threshold)
    got = decode_file(data, dictionary_strings=True)
    want = pyarrow_read(data)
    string_dict = pa.dictionary(pa.int32(), pa.string())
    assert got.schema.field("s").type == string_dict
    assert got.schema.field("b").type == pa.dictionary(pa.int32(), pa.binary())
    nested = got.schema.field("nested").type
    assert nested.field("x").type == string_dict
    assert nested.field("l").type.value_type == string_dict
    assert got.cast(want.schema).equals(want)


def test_char_and_varchar_keep_stored_bytes_and_metadata() -> None:
    rows = [("ab", "abc", "x"), (None, "", "y"), ("abcde", "abcdefghij", None)]
    data = pyorc_bytes("struct<c:char(5),v:varchar(10),s:string>", rows)
    got = decode_file(data)
    want = list(pyorc.Reader(io.BytesIO(data)))
    assert [tuple(r.values()) for r in got.to_pylist()] == want
    assert got.schema.field("c").metadata == {b"ORC:type": b"char(5)"}
    assert got.schema.field("v").metadata == {b"ORC:type": b"varchar(10)"}
    assert got.equals(pyarrow_read(data).cast(got.schema))


# --------------------------------------------------------------------------- damage

def _dict_streams(lengths: list[int], blob: bytes, indices: list[int],
                  size: int | None = None) -> tuple:
    enc = pb.ColumnEncoding(kind=pb.ColumnEncoding.DICTIONARY,
                            dictionarySize=len(lengths) if size is None else size)
    streams = {(0, pb.Stream.DATA): literal_rle_v1(indices, signed=False),
               (0, pb.Stream.LENGTH): literal_rle_v1(lengths, signed=False),
               (0, pb.Stream.DICTIONARY_DATA): blob}
    return streams, [enc]


def test_dictionary_crafted() -> None:
    streams, encs = _dict_streams([1, 0, 3], b"abcd", [2, 0, 1, 2])
    arr = decode_column(parse_type_string("string"), make_streams(streams, encs), 4,
                        DecodeOptions())
    assert arr.to_pylist() == ["bcd", "a", "", "bcd"]


@pytest.mark.parametrize("index", [3, -1])
def test_dictionary_index_out_of_range(index: int) -> None:
    streams, encs = _dict_streams([1, 0, 3], b"abcd", [0, index])
    with pytest.raises(CorruptFileError, match="column 0 .*dictionary index"):
        decode_column(parse_type_string("string"), make_streams(streams, encs), 2,
                      DecodeOptions())


def test_dictionary_lengths_beyond_blob() -> None:
    streams, encs = _dict_streams([1, 5], b"abcd", [0, 1])
    with pytest.raises(CorruptFileError, match="DICTIONARY_DATA"):
        decode_column(parse_type_string("string"), make_streams(streams, encs), 2,
                      DecodeOptions())


def test_dictionary_negative_length() -> None:
    streams, encs = _dict_streams([1, -2], b"abcd", [0, 1])
    with pytest.raises(CorruptFileError, match="LENGTH"):
        decode_column(parse_type_string("string"), make_streams(streams, encs), 2,
                      DecodeOptions())


@pytest.mark.parametrize("missing", [pb.Stream.LENGTH, pb.Stream.DICTIONARY_DATA,
                                     pb.Stream.DATA])
def test_dictionary_missing_stream(missing: int) -> None:
    streams, encs = _dict_streams([1, 2], b"abc", [0, 1])
    del streams[0, missing]
    with pytest.raises(CorruptFileError, match=pb.Stream.Kind.Name(missing)):
        decode_column(parse_type_string("string"), make_streams(streams, encs), 2,
                      DecodeOptions())


def test_empty_dictionary_needs_no_streams() -> None:
    """All values null: a dictionary of size 0 with no LENGTH or DICTIONARY_DATA is fine."""
    enc = pb.ColumnEncoding(kind=pb.ColumnEncoding.DICTIONARY_V2, dictionarySize=0)
    streams = {(0, pb.Stream.PRESENT): b"\xff\x00"}  # byte RLE literal: one byte, all absent
    arr = decode_column(parse_type_string("string"), make_streams(streams, [enc]), 8,
                        DecodeOptions())
    assert arr.to_pylist() == [None] * 8


def test_direct_lengths_beyond_data() -> None:
    streams = {(0, pb.Stream.LENGTH): literal_rle_v1([2, 3], signed=False),
               (0, pb.Stream.DATA): b"abcd"}
    with pytest.raises(CorruptFileError, match=r"column 0 \(binary\), DATA"):
        decode_column(parse_type_string("binary"),
                      make_streams(streams, [pb.ColumnEncoding.DIRECT]), 2, DecodeOptions())


def test_direct_huge_length() -> None:
    streams = {(0, pb.Stream.LENGTH): literal_rle_v1([2, 2**63 + 5], signed=False),
               (0, pb.Stream.DATA): b"abcd"}
    with pytest.raises(CorruptFileError, match="LENGTH"):
        decode_column(parse_type_string("string"),
                      make_streams(streams, [pb.ColumnEncoding.DIRECT]), 2, DecodeOptions())


CORRUPT = ["missing_blob_stream_in_string_dict.orc", "missing_length_stream_in_string_dict.orc",
           "negative_dict_entry_lengths.orc"]


@pytest.mark.parametrize("name", CORRUPT)
def test_corrupt_dictionary_files(name: str) -> None:
    path = CONFORMANCE / "files" / "corrupt" / name
    if not path.is_file():
        pytest.skip(CORPUS_ABSENT)
    with pytest.raises(CorruptFileError):  # from the decoders, or earlier for some
        decode_file(path.read_bytes())
