"""File tail: PostScript/Footer/Metadata parsing, the NeedBytes protocol, versions, damage.

Checked against the conformance corpus (MANIFEST.tsv notes), pyarrow.orc and pyorc, and
against small files built here from protobuf messages.
"""

from __future__ import annotations

import re
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import pyarrow.orc as po
import pytest
from helpers.corpus import CORPUS_ABSENT, CorpusFile, corpus_params, corpus_root
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aorc.errors import (
    AorcError,
    CorruptFileError,
    FormatError,
    UnsupportedFeatureError,
    UnsupportedVersionError,
)
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind, compress_stream
from aorc.format.stripe import (
    data_ranges,
    parse_stripe_footer,
    stream_layout,
    variant_stream_layout,
)
from aorc.format.tail import (
    DEFAULT_BLOCK_SIZE,
    TAIL_READ_SIZE,
    FileTail,
    NeedBytes,
    parse_tail,
    writer_name,
    writer_version_name,
)
from aorc.format.types import type_string

pyorc = pytest.importorskip("pyorc")

_UNREADABLE = {"zero.orc", "version1999.orc"}


def read_tail(data: bytes, first: int = TAIL_READ_SIZE) -> tuple[FileTail, list[int]]:
    """Drive parse_tail as the async reader does, over an in-memory 'store'."""
    n = min(first, len(data))
    requests = [n]
    result = parse_tail(data[len(data) - n:], len(data))
    while isinstance(result, NeedBytes):
        assert n < result.n <= len(data), (n, result.n)
        n = result.n
        requests.append(n)
        assert len(requests) <= 3, requests
        result = parse_tail(data[len(data) - n:], len(data))
    return result, requests


# --------------------------------------------------------------------------- manifest notes

@dataclass
class Notes:
    rows: int
    stripes: int
    codec: str
    block: int | None  # None: absent
    version: tuple[int, int] | None  # None: absent (0.11 implied)
    writer: str
    software_version: str | None
    writer_version: str | None  # None: absent
    schema: str


def parse_notes(notes: str) -> Notes:
    part = notes.split(" | ")[1]
    rows, stripes = re.search(r"rows=(\d+) stripes=(\d+)", part).groups()
    codec = re.search(r"codec=([A-Z0-9]+)(?:\(block (\w+)\))?", part)
    version = re.search(r"format=([\d.]+)", part)
    writer = re.search(r"writer=ORC (Java|C\+\+)(?: (\S+?))?"
                       r"(?: \(software version \"([^\"]*)\"\))?, writer version (.+?);", part)
    schema = re.search(r"schema=([^;|]+)", part).group(1).strip()
    major, minor = version.group(1).split(".") if version else (None, None)
    return Notes(
        rows=int(rows), stripes=int(stripes), codec=codec.group(1),
        block=int(codec.group(2)) if codec.group(2) and codec.group(2) != "absent" else None,
        version=(int(major), int(minor)) if version else None,
        writer=writer.group(1), software_version=writer.group(2) or writer.group(3),
        writer_version=None if writer.group(4) == "(absent)" else writer.group(4),
        schema=schema,
    )


def readable(entry: CorpusFile) -> bool:
    return entry.name.rpartition("/")[2] not in _UNREADABLE


# --------------------------------------------------------------------------- corpus

@pytest.mark.parametrize("entry", corpus_params(readable))
def test_corpus_tail_matches_manifest(entry: CorpusFile) -> None:
    data = entry.path.read_bytes()
    tail, requests = read_tail(data)
    notes = parse_notes(entry.notes)
    assert tail.num_rows == notes.rows
    assert len(tail.stripes) == notes.stripes
    assert tail.compression.name == notes.codec
    assert tail.block_size == (notes.block or DEFAULT_BLOCK_SIZE)
    assert tail.version == (notes.version or (0, 11))
    assert tail.is_unstable_pre_2 == (notes.version == (1, 9999))
    assert type_string(tail.schema) == notes.schema
    assert tail.writer_name == notes.writer
    if notes.software_version is not None:
        assert tail.software_version == notes.software_version
    if notes.writer_version is None:
        assert not tail.postscript.HasField("writerVersion") and tail.writer_version == 0
    elif notes.writer_version.startswith("ORC C++-"):
        assert tail.writer_version == int(notes.writer_version.rpartition("-")[2])
        assert tail.writer_version_name == "original"
    else:
        assert tail.writer_version_name == notes.writer_version
    # one read when the file fits in the first read, two otherwise
    expected_reads = 1 if tail.tail_length <= min(TAIL_READ_SIZE, len(data)) else 2
    assert len(requests) == expected_reads


@pytest.mark.parametrize("entry", corpus_params(lambda e: readable(e) and e.pyarrow_ok))
def test_corpus_tail_matches_pyarrow(entry: CorpusFile) -> None:
    data = entry.path.read_bytes()
    tail, _ = read_tail(data)
    f = po.ORCFile(str(entry.path))
    assert tail.num_rows == f.nrows
    assert len(tail.stripes) == f.nstripes
    if tail.compression != CompressionKind.LZO:  # pyarrow cannot name LZO
        codec = {"UNCOMPRESSED": "NONE"}.get(f.compression, f.compression)
        assert tail.compression.name == codec
    assert tail.block_size == f.compression_size
    assert tail.format_version.replace("UNSTABLE-PRE-2.0", "1.9999") == f.file_version
    assert tail.writer_name == {"ORC_JAVA": "Java", "ORC_CPP": "C++"}[f.writer]
    assert f"ORC {tail.writer_name}" in f.software_version
    if tail.software_version:
        assert f.software_version.endswith(tail.software_version)
    assert tail.row_index_stride == f.row_index_stride
    assert tail.file_length == f.file_length
    assert tail.postscript_length == f.file_postscript_length
    assert tail.postscript.footerLength == f.file_footer_length
    assert tail.postscript.metadataLength == f.stripe_statistics_length
    assert tail.content_length == f.content_length
    assert tail.user_metadata == f.metadata


@pytest.mark.parametrize("entry", corpus_params(lambda e: readable(e) and e.pyorc_ok))
def test_corpus_tail_matches_pyorc(entry: CorpusFile) -> None:
    data = entry.path.read_bytes()
    tail, _ = read_tail(data)
    with open(entry.path, "rb") as fh:
        r = pyorc.Reader(fh)
        assert str(r.schema) == type_string(tail.schema)
        assert r.writer_id == {"Java": "ORC_JAVA_WRITER", "C++": "ORC_CPP_WRITER"}[
            tail.writer_name]
        assert r.writer_version == tail.writer_version
        assert r.format_version == tail.version
        assert r.compression_block_size == tail.block_size
        assert r.num_of_stripes == len(tail.stripes)
        assert r.user_metadata == tail.user_metadata
        for i, info in enumerate(tail.stripes):
            stripe = r.read_stripe(i)
            assert (stripe.bytes_offset, stripe.bytes_length) == (info.offset, info.length)
            assert len(stripe) == info.num_rows


@pytest.mark.parametrize("entry", corpus_params(readable))
@pytest.mark.parametrize("first", [1, 100, 600])
def test_short_first_read_converges(entry: CorpusFile, first: int) -> None:
    data = entry.path.read_bytes()
    full = parse_tail(data, len(data))
    assert isinstance(full, FileTail)
    tail, requests = read_tail(data, first)
    assert tail.footer == full.footer and tail.postscript == full.postscript
    assert tail.stripes == full.stripes
    assert _metadata_or_error(tail) == _metadata_or_error(full)
    # the last request is exactly the tail: one byte less asks again for the same amount
    if len(requests) > 1:
        n = requests[-1]
        assert n == full.tail_length
        again = parse_tail(data[len(data) - n + 1:], len(data))
        assert again == NeedBytes(n)


def _metadata_or_error(tail: FileTail) -> object:
    try:
        return tail.metadata
    except CorruptFileError as exc:
        return str(exc)


def test_need_bytes_for_postscript_first() -> None:
    data = _entry("TestOrcFile.test1.orc").path.read_bytes()
    assert parse_tail(data[-1:], len(data)) == NeedBytes(data[-1] + 1)
    assert parse_tail(b"", len(data)) == NeedBytes(len(data))


def _entry(name: str) -> CorpusFile:
    root = corpus_root()
    if root is None:
        pytest.skip(CORPUS_ABSENT)
    from helpers.corpus import load_manifest

    return next(e for e in load_manifest() if e.name == name)


def test_zero_byte_file_is_refused() -> None:
    """Issue 24: a 0-byte file raises CorruptFileError (pyarrow.orc refuses it too), where it
    read as an empty struct<> (ORC Java's choice)."""
    with pytest.raises(CorruptFileError, match="empty file"):
        parse_tail(b"", 0, source="s3://b/k.orc")


def test_corpus_zero_file() -> None:
    data = _entry("zero.orc").path.read_bytes()
    with pytest.raises(CorruptFileError, match="empty file"):
        read_tail(data)


def test_future_version_refused() -> None:
    data = _entry("version1999.orc").path.read_bytes()
    with pytest.raises(UnsupportedVersionError, match="19.99"):
        read_tail(data)


def test_corrupt_metadata() -> None:
    """pyorc fails on this file's Metadata too ("Failed to parse the metadata")."""
    data = _entry("corrupt/missing_length_stream_in_string_dict.orc").path.read_bytes()
    tail, _ = read_tail(data)
    with pytest.raises(CorruptFileError, match="metadata"):
        _ = tail.stripe_statistics
    assert tail.column_statistics  # the footer's statistics are intact


def test_tail_longer_than_file_is_a_caller_error() -> None:
    with pytest.raises(ValueError, match="tail"):
        parse_tail(b"abcd", 3)


# --------------------------------------------------------------------------- built files

def _footer(**fields: object) -> pb.Footer:
    footer = pb.Footer(types=[pb.Type(kind=pb.Type.STRUCT, subtypes=[1], fieldNames=["a"]),
                              pb.Type(kind=pb.Type.INT)], numberOfRows=0, **fields)
    return footer


def build(footer: pb.Footer | None = None, *, metadata: pb.Metadata | None = None,
          body: bytes = b"", kind: int = pb.NONE, block_size: int | None = None,
          ps_fields: dict[str, object] | None = None, header: bytes = b"ORC",
          raw_ps: bytes | None = None) -> bytes:
    """A whole ORC file: header, body (stripes), metadata, footer, PostScript, length byte."""
    footer = footer if footer is not None else _footer()
    fbytes = footer.SerializeToString()
    mbytes = metadata.SerializeToString() if metadata is not None else b""
    if kind != pb.NONE:
        fbytes = compress_stream(fbytes, CompressionKind(kind), block_size or DEFAULT_BLOCK_SIZE)
        mbytes = compress_stream(mbytes, CompressionKind(kind), block_size or DEFAULT_BLOCK_SIZE)
    if raw_ps is None:
        ps = pb.PostScript(footerLength=len(fbytes), metadataLength=len(mbytes),
                           compression=kind, version=[0, 12], writerVersion=9, magic="ORC")
        if block_size is not None:
            ps.compressionBlockSize = block_size
        for key, value in (ps_fields or {}).items():
            if value is None:
                ps.ClearField(key)
            elif key == "version":
                ps.ClearField("version")
                ps.version.extend(value)  # type: ignore[arg-type]
            else:
                setattr(ps, key, value)
        raw_ps = ps.SerializeToString()
    return header + body + mbytes + fbytes + raw_ps + bytes([len(raw_ps)])


def parse_whole(data: bytes) -> FileTail:
    result = parse_tail(data, len(data))
    assert isinstance(result, FileTail)
    return result


@pytest.mark.parametrize("version", [[0, 11], [0, 12], [1, 9999], [0, 12, 5]])
def test_versions_java_reads(version: list[int]) -> None:
    tail = parse_whole(build(ps_fields={"version": version}))
    assert tail.version == tuple(version[:2])
    assert tail.is_unstable_pre_2 == (version == [1, 9999])


@pytest.mark.parametrize("version", [[0, 10], [0, 13], [1, 0], [1, 9998], [2, 0], [19, 99]])
def test_future_versions_refused(version: list[int]) -> None:
    with pytest.raises(UnsupportedVersionError, match="future ORC version"):
        parse_whole(build(ps_fields={"version": version}))


def test_missing_version_means_0_11() -> None:
    tail = parse_whole(build(ps_fields={"version": []}))
    assert tail.version == (0, 11) and tail.format_version == "0.11"


def test_version_without_minor_is_corrupt() -> None:
    with pytest.raises(CorruptFileError, match="version"):
        parse_whole(build(ps_fields={"version": [0]}))


def test_block_size_default_and_limits() -> None:
    assert parse_whole(build(kind=pb.ZLIB)).block_size == DEFAULT_BLOCK_SIZE
    assert parse_whole(build(kind=pb.ZLIB, block_size=1000)).block_size == 1000
    for bad in (0, 1 << 23):
        with pytest.raises(CorruptFileError, match="block size"):
            parse_whole(build(ps_fields={"compressionBlockSize": bad}))


@pytest.mark.parametrize("kind", [pb.ZLIB, pb.SNAPPY, pb.LZ4, pb.ZSTD])
def test_compressed_footer_and_metadata(kind: int) -> None:
    meta = pb.Metadata(stripeStats=[pb.StripeStatistics(colStats=[
        pb.ColumnStatistics(numberOfValues=3),
        pb.ColumnStatistics(numberOfValues=3, intStatistics=pb.IntegerStatistics(
            minimum=-4, maximum=9, sum=7))])])
    footer = _footer(stripes=[pb.StripeInformation(offset=3, indexLength=0, dataLength=5,
                                                   footerLength=2, numberOfRows=3)])
    footer.numberOfRows = 3
    tail = parse_whole(build(footer, metadata=meta, body=b"\0" * 7, kind=kind, block_size=64))
    assert tail.compression == CompressionKind(kind)
    assert tail.num_rows == 3 and len(tail.stripes) == 1
    (stats,) = tail.stripe_statistics or []
    assert (stats[1].minimum, stats[1].maximum, stats[1].sum) == (-4, 9, 7)


def test_unknown_compression_kind() -> None:
    ps = pb.PostScript(footerLength=len(_footer().SerializeToString()), version=[0, 12],
                       magic="ORC").SerializeToString() + b"\x10\x09"  # compression = 9
    with pytest.raises(UnsupportedFeatureError, match="compression kind 9"):
        parse_whole(build(raw_ps=ps))


@pytest.mark.parametrize("magic", ["ORK", "orc", "ORCX"])
def test_bad_postscript_magic(magic: str) -> None:
    with pytest.raises(CorruptFileError, match="magic"):
        parse_whole(build(ps_fields={"magic": magic}))


def test_old_file_without_postscript_magic() -> None:
    """0.11 files may lack the PostScript magic: then the file must start with ORC."""
    data = build(ps_fields={"magic": None, "version": None})
    assert parse_whole(data).version == (0, 11)
    with pytest.raises(CorruptFileError, match="magic"):
        parse_whole(b"XYZ" + data[3:])
    # the head is not in a partial tail: accepted without it (documented)
    assert isinstance(parse_tail(data[3:], len(data)), FileTail)


@pytest.mark.parametrize("ps_len", [0, 1, 3])
def test_postscript_length_too_small(ps_len: int) -> None:
    data = build()
    with pytest.raises(CorruptFileError, match="PostScript length"):
        parse_tail(data[:-1] + bytes([ps_len]), len(data))


def test_postscript_longer_than_file() -> None:
    with pytest.raises(CorruptFileError, match="PostScript length"):
        parse_tail(b"ORC\x00\xff", 5)


def test_too_short_for_orc() -> None:
    for data in (b"O", b"OR", b"ORC"):
        with pytest.raises(CorruptFileError, match="too short"):
            parse_tail(data, len(data))


@pytest.mark.parametrize("field", ["footerLength", "metadataLength", "stripeStatisticsLength"])
def test_lengths_beyond_file(field: str) -> None:
    data = build()
    with pytest.raises(CorruptFileError, match="exceed"):
        parse_whole(build(ps_fields={field: len(data) * 2}))
    # a huge length in a huge file is refused before any allocation
    ps = pb.PostScript(footerLength=2**40, version=[0, 12], magic="ORC").SerializeToString()
    with pytest.raises(CorruptFileError, match="exceed"):
        parse_tail(ps + bytes([len(ps)]), 2**50)


def test_garbage_postscript() -> None:
    junk = b"\xff" * 20
    with pytest.raises(CorruptFileError, match="PostScript"):
        parse_whole(b"ORC" + junk[:-3] + b"ORC" + bytes([len(junk)]))


def test_footer_garbage() -> None:
    ps = pb.PostScript(footerLength=8, version=[0, 12], magic="ORC").SerializeToString()
    with pytest.raises(CorruptFileError, match="footer"):
        parse_whole(b"ORC" + b"\xff" * 8 + ps + bytes([len(ps)]))


def test_compressed_footer_garbage() -> None:
    ps = pb.PostScript(footerLength=8, compression=pb.ZLIB, version=[0, 12],
                       magic="ORC").SerializeToString()
    with pytest.raises(CorruptFileError, match="footer"):
        parse_whole(b"ORC" + b"\x0a\x00\x00" + b"\xff" * 5 + ps + bytes([len(ps)]))


def test_stripes_must_lie_between_header_and_tail() -> None:
    body = b"\0" * 10
    ok = pb.StripeInformation(offset=3, indexLength=2, dataLength=6, footerLength=2)
    assert len(parse_whole(build(_footer(stripes=[ok]), body=body)).stripes) == 1
    for bad in (pb.StripeInformation(offset=0, dataLength=2),
                pb.StripeInformation(offset=3, dataLength=11),
                pb.StripeInformation(offset=3, indexLength=2**63, dataLength=2**63)):
        with pytest.raises(CorruptFileError, match="stripe 0"):
            parse_whole(build(_footer(stripes=[bad]), body=body))


def test_schema_errors() -> None:
    with pytest.raises(CorruptFileError, match="no types"):
        parse_whole(build(pb.Footer()))
    with pytest.raises(CorruptFileError, match="no type kind"):
        parse_whole(build(pb.Footer(types=[pb.Type()])))
    with pytest.raises(UnsupportedFeatureError, match="unknown type kind 99"):
        parse_whole(_with_raw_footer(b"\x22\x02\x08\x63"))  # types { kind: 99 }


def _with_raw_footer(fbytes: bytes) -> bytes:
    ps = pb.PostScript(footerLength=len(fbytes), version=[0, 12], magic="ORC").SerializeToString()
    return b"ORC" + fbytes + ps + bytes([len(ps)])


def test_invalid_utf8_names_are_replaced() -> None:
    # struct<(invalid utf-8 name):int>, user metadata key with invalid UTF-8
    struct = b"\x08\x0c\x12\x01\x01\x1a\x02\xff\xfe"
    fbytes = (b"\x22" + bytes([len(struct)]) + struct + b"\x22\x02\x08\x03"
              + b"\x2a\x05\x0a\x01\xff\x12\x00")
    for _ in range(2):  # a tree seen before skips its check: not one that was repaired
        tail = parse_whole(_with_raw_footer(fbytes))
        assert tail.schema.field_names == ("\ufffd\ufffd",)
        assert tail.footer.types[0].fieldNames[0] == "\ufffd\ufffd"
        assert tail.user_metadata == {"\ufffd": b""}


def test_a_type_tree_is_built_and_checked_once() -> None:
    """Files of one schema share one type tree: the second parse of the same types finds
    it kept (no check, no build); a kind unknown is refused every time, never kept."""
    from aorc.format import tail as tail_module

    footer = _footer()
    first = parse_whole(build(footer))
    second = parse_whole(build(footer))
    assert second.schema is first.schema
    key = b"".join(t.SerializeToString() for t in first.footer.types)
    assert tail_module._TYPE_TREES[key] is first.schema
    for _ in range(2):
        with pytest.raises(UnsupportedFeatureError, match="unknown type kind 99"):
            parse_whole(_with_raw_footer(b"\x22\x02\x08\x63"))


def test_writer_names() -> None:
    assert [writer_name(i) for i in (None, 0, 1, 2, 3, 4, 5, 6)] == [
        "Java", "Java", "C++", "Presto", "Go", "Trino", "cuDF", "unknown(6)"]
    assert [writer_version_name(0, v) for v in range(11)] == [
        "original", "HIVE-8732", "HIVE-4243", "HIVE-12055", "HIVE-13083", "ORC-101",
        "ORC-135", "ORC-517", "ORC-203", "ORC-14", "future(10)"]
    assert writer_version_name(1, 6) == "original"
    assert writer_version_name(4, 7) == "future(7)"


def test_writer_fields() -> None:
    footer = _footer(writer=4, softwareVersion="Trino 400", calendar=pb.PROLEPTIC_GREGORIAN)
    footer.metadata.add(name="k", value=b"\x00v")
    tail = parse_whole(build(footer, ps_fields={"writerVersion": 6}))
    assert (tail.writer, tail.writer_name, tail.writer_version_name) == (4, "Trino", "original")
    assert tail.software_version == "Trino 400"
    assert tail.calendar == pb.PROLEPTIC_GREGORIAN
    assert tail.user_metadata == {"k": b"\x00v"}
    bare = parse_whole(build(ps_fields={"writerVersion": None}))
    assert (bare.writer, bare.writer_version, bare.software_version) == (None, 0, None)


# --------------------------------------------------------------------------- fuzzing

_FUZZ_FILES = ["TestOrcFile.test1.orc", "TestOrcFile.testSnappy.orc",
               "TestVectorOrcFile.testLz4.orc", "TestVectorOrcFile.testZstd.0.12.orc",
               "TestOrcFile.testStripeLevelStats.orc", "encrypted/sample1.orc",
               "orc_split_elim_new.orc", "TestOrcFile.testWithoutCompressionBlockSize.orc"]
_ALLOWED = (FormatError, UnsupportedFeatureError)


def _exercise(data: bytes, file_length: int, first: int) -> None:
    """Everything a reader does with a tail; only aorc format errors may escape."""
    result = parse_tail(data[max(len(data) - first, 0):], file_length)
    if isinstance(result, NeedBytes):
        assert 0 < result.n <= file_length
        if result.n > len(data):
            return
        result = parse_tail(data[len(data) - result.n:], file_length)
        if isinstance(result, NeedBytes):
            assert result.n <= len(data)
            result = parse_tail(data[len(data) - result.n:], file_length)
            assert not isinstance(result, NeedBytes)
    for stats in result.column_statistics:
        stats.to_dict()
    for stripe_stats in result.stripe_statistics or []:
        for stats in stripe_stats:
            stats.to_dict()
    if file_length != len(data):
        return
    for stripe in result.stripes:
        footer = parse_stripe_footer(data[stripe.footer_offset:stripe.end], result, stripe)
        layout = stream_layout(stripe, footer)
        variant_stream_layout(stripe, footer)
        data_ranges(layout, set(range(result.num_columns)))


@pytest.fixture(scope="module")
def fuzz_inputs() -> list[bytes]:
    if corpus_root() is None:
        pytest.skip(CORPUS_ABSENT)
    return [_entry(name).path.read_bytes() for name in _FUZZ_FILES]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_damaged_tails(fuzz_inputs: list[bytes], data: st.DataObject) -> None:
    original = data.draw(st.sampled_from(fuzz_inputs))
    buf = bytearray(original)
    # damage the last 2 KiB mostly: that is where the tail lives
    window = min(len(buf), 2048)
    flips = data.draw(st.lists(st.tuples(st.integers(1, window), st.integers(0, 255)),
                               min_size=1, max_size=6))
    for back, value in flips:
        buf[-back] = value
    cut = data.draw(st.integers(0, 3))  # sometimes also truncate the file's end
    if cut:
        del buf[-data.draw(st.integers(1, window)):]
    claimed = len(buf) + data.draw(st.sampled_from([0, 0, 0, 1, 1000, 2**40]))
    first = data.draw(st.sampled_from([1, 100, TAIL_READ_SIZE]))
    tracemalloc.start()
    try:
        _exercise(bytes(buf), claimed, first)
    except _ALLOWED:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    # bounded by the input and the codec's block size (256 KiB in these files), never by
    # lengths read from the damaged bytes
    assert peak < 8 * len(original) + 4 * 2**20, peak


def test_huge_lengths_allocate_nothing() -> None:
    ps = pb.PostScript(footerLength=2**30, metadataLength=2**29, version=[0, 12],
                       magic="ORC").SerializeToString()
    tracemalloc.start()
    try:
        result = parse_tail(ps + bytes([len(ps)]), 2**50)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result == NeedBytes(1 + len(ps) + 2**30 + 2**29)
    assert peak < 2**20


def test_fuzz_errors_are_aorc_errors() -> None:
    """The allowed exceptions are all AorcErrors (the fuzz test's contract)."""
    assert all(issubclass(e, AorcError) for e in _ALLOWED)


def test_a_footer_wider_than_the_column_limit_is_refused(monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """Issue 31: a footer declaring more columns than AORC_MAX_COLUMNS (default 500,000) is a
    ResourceLimitError naming the count and the variable, before the type tree is built;
    the variable raises the limit; a malformed one is refused."""
    import pyarrow as pa
    import pyarrow.orc as pa_orc

    from aorc.errors import ResourceLimitError
    from aorc.format.tail import DEFAULT_MAX_COLUMNS, MAX_COLUMNS_ENV, max_columns

    path = tmp_path / "four.orc"
    pa_orc.write_table(pa.table({f"c{i}": [i] for i in range(4)}), str(path))
    data = path.read_bytes()
    monkeypatch.delenv(MAX_COLUMNS_ENV, raising=False)
    assert max_columns() == DEFAULT_MAX_COLUMNS == 500_000
    assert isinstance(parse_tail(data, len(data)), FileTail)  # 5 type ids: the root and 4
    monkeypatch.setenv(MAX_COLUMNS_ENV, "4")
    with pytest.raises(ResourceLimitError, match=r"declares 5 columns .* more than the 4 .*"
                                                 r"AORC_MAX_COLUMNS"):
        parse_tail(data, len(data), source="four.orc")
    monkeypatch.setenv(MAX_COLUMNS_ENV, "5")
    assert parse_tail(data, len(data)).schema.max_column_id == 4
    for bad in ("0", "-3", "many"):
        monkeypatch.setenv(MAX_COLUMNS_ENV, bad)
        with pytest.raises(ResourceLimitError, match="AORC_MAX_COLUMNS must be"):
            parse_tail(data, len(data))
