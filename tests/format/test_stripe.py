"""Stripe footers, stream layout, byte ranges for projections, row index and bloom filters.

Layouts are checked against what other sources say independently: the footer's
StripeInformation (index and data lengths), pyorc (stripe rows, bloom filter columns), the
row index (one entry per row group, statistics adding up to the stripe statistics) and the
encrypted files' placeholders.
"""

from __future__ import annotations

import math

import pytest
from helpers.corpus import CORPUS_ABSENT, CorpusFile, corpus_params, corpus_root, load_manifest
from hypothesis import given, settings
from hypothesis import strategies as st

from aorc.errors import CorruptFileError, FormatError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.stripe import (
    DATA_KINDS,
    StreamInfo,
    data_ranges,
    index_ranges,
    parse_bloom_filter_index,
    parse_row_index,
    parse_stripe_footer,
    stream_layout,
    variant_stream_layout,
)
from aorc.format.tail import FileTail, StripeInfo, parse_tail

pyorc = pytest.importorskip("pyorc")

K = pb.Stream.Kind
# Files whose stripe footers or index streams are damaged on purpose (see test_corrupt_*).
_BROKEN = {"corrupt/stripe_footer_bad_column_encodings.orc",
           "corrupt/missing_length_stream_in_string_dict.orc",
           "corrupt/missing_blob_stream_in_string_dict.orc"}
_UNREADABLE = {"zero.orc", "version1999.orc"}


def _load(entry: CorpusFile) -> tuple[bytes, FileTail]:
    data = entry.path.read_bytes()
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return data, tail


def _footers(data: bytes, tail: FileTail) -> list[pb.StripeFooter]:
    return [parse_stripe_footer(data[s.footer_offset:s.end], tail, s) for s in tail.stripes]


def _entry(name: str) -> CorpusFile:
    if corpus_root() is None:
        pytest.skip(CORPUS_ABSENT)
    return next(e for e in load_manifest() if e.name == name)


def _good(entry: CorpusFile) -> bool:
    return entry.name not in _BROKEN and entry.name.rpartition("/")[2] not in _UNREADABLE


# --------------------------------------------------------------------------- corpus

@pytest.mark.parametrize("entry", corpus_params(_good))
def test_layout_fills_index_and_data_areas(entry: CorpusFile) -> None:
    data, tail = _load(entry)
    for stripe, footer in zip(tail.stripes, _footers(data, tail), strict=True):
        assert len(footer.columns) == tail.num_columns
        layout = stream_layout(stripe, footer) + variant_stream_layout(stripe, footer)
        layout.sort(key=lambda s: s.offset)
        position = stripe.offset
        for s in layout:  # contiguous, no gaps or overlaps
            assert s.offset == position, (s, position)
            position = s.end
        assert position == stripe.footer_offset  # exactly the StripeInformation's areas
        # index streams come first, inside the index area
        for s in stream_layout(stripe, footer):
            if s.kind in (K.ROW_INDEX, K.BLOOM_FILTER, K.BLOOM_FILTER_UTF8):
                assert s.end <= stripe.data_offset
            else:
                assert s.offset >= stripe.data_offset


@pytest.mark.parametrize("entry", corpus_params(lambda e: _good(e) and e.pyorc_ok))
def test_bloom_filter_columns_match_pyorc(entry: CorpusFile) -> None:
    data, tail = _load(entry)
    with open(entry.path, "rb") as fh:
        reader = pyorc.Reader(fh)
        for stripe, footer in zip(tail.stripes, _footers(data, tail), strict=True):
            layout = stream_layout(stripe, footer)
            # ORC C++ (pyorc) only reports BLOOM_FILTER_UTF8 streams: it ignores legacy ones
            ours = {s.column for s in layout if s.kind == K.BLOOM_FILTER_UTF8}
            theirs = reader.read_stripe(stripe.index)
            assert ours == set(theirs.bloom_filter_columns)
            assert (footer.writerTimezone or None) == (theirs.writer_timezone or None)


@pytest.mark.parametrize("entry", corpus_params(
    lambda e: _good(e) and e.name != "corrupt/negative_dict_entry_lengths.orc"))
def test_row_index_agrees_with_stripes(entry: CorpusFile) -> None:
    """Each ROW_INDEX has one entry per row group; entry counts add up to stripe stats."""
    data, tail = _load(entry)
    stripe_stats = tail.metadata.stripeStats if tail.metadata is not None else None
    for stripe, footer in zip(tail.stripes, _footers(data, tail), strict=True):
        for s in stream_layout(stripe, footer):
            if s.kind == K.ROW_INDEX:
                index = parse_row_index(data[s.offset:s.end], tail)
                groups = math.ceil(stripe.num_rows / tail.row_index_stride)
                # ORC Java's masked (encrypted) columns end with an extra, empty row group
                assert len(index.entry) in ((groups, groups + 1) if tail.has_encryption
                                            else (groups,))
                if (stripe_stats is not None and not tail.has_encryption
                        and index.entry[0].HasField("statistics")):
                    total = sum(e.statistics.numberOfValues for e in index.entry)
                    expected = stripe_stats[stripe.index].colStats[s.column].numberOfValues
                    assert total == expected
            elif s.kind in (K.BLOOM_FILTER, K.BLOOM_FILTER_UTF8):
                blooms = parse_bloom_filter_index(data[s.offset:s.end], tail)
                groups = math.ceil(stripe.num_rows / tail.row_index_stride)
                assert len(blooms.bloomFilter) == groups
                for bf in blooms.bloomFilter:
                    assert bf.numHashFunctions > 0
                    assert bf.bitset or bf.utf8bitset


def test_encrypted_streams_fill_the_placeholders() -> None:
    data, tail = _load(_entry("encrypted/sample1.orc"))
    assert tail.has_encryption
    (stripe,) = tail.stripes
    (footer,) = _footers(data, tail)
    # where the placeholders lie, counting every listed stream in order
    position, holes = stripe.offset, {}
    for s in footer.streams:
        if s.kind in (K.ENCRYPTED_INDEX, K.ENCRYPTED_DATA):
            holes[s.kind] = (position, s.length)
        position += s.length
    variants = variant_stream_layout(stripe, footer)
    assert {v.variant for v in variants} == {0, 1}
    assert all(v.kind in DATA_KINDS for v in variants)
    start, length = holes[K.ENCRYPTED_DATA]
    assert variants[0].offset == start
    assert sum(v.length for v in variants) == length
    main = stream_layout(stripe, footer)
    assert not {s.kind for s in main} & {K.ENCRYPTED_INDEX, K.ENCRYPTED_DATA}
    assert all(s.variant is None for s in main)


def test_corrupt_stripe_footer_file() -> None:
    data, tail = _load(_entry("corrupt/stripe_footer_bad_column_encodings.orc"))
    (stripe,) = tail.stripes
    with pytest.raises(CorruptFileError, match="stripe 0: stripe footer"):
        parse_stripe_footer(data[stripe.footer_offset:stripe.end], tail, stripe)


def test_corrupt_row_index_stream() -> None:
    data, tail = _load(_entry("corrupt/missing_length_stream_in_string_dict.orc"))
    (stripe,) = tail.stripes
    footer = parse_stripe_footer(data[stripe.footer_offset:stripe.end], tail, stripe)
    bad = next(s for s in stream_layout(stripe, footer)
               if s.kind == K.ROW_INDEX and s.column == 6)
    with pytest.raises(CorruptFileError, match="row index"):
        parse_row_index(data[bad.offset:bad.end], tail)


# --------------------------------------------------------------------------- built footers

def _tail(n_columns: int = 3) -> FileTail:
    types = [pb.Type(kind=pb.Type.STRUCT, subtypes=list(range(1, n_columns)),
                     fieldNames=[f"c{i}" for i in range(1, n_columns)])]
    types += [pb.Type(kind=pb.Type.INT) for _ in range(1, n_columns)]
    footer = pb.Footer(types=types).SerializeToString()
    ps = pb.PostScript(footerLength=len(footer), version=[0, 12], magic="ORC").SerializeToString()
    data = b"ORC" + footer + ps + bytes([len(ps)])
    tail = parse_tail(data, len(data))
    assert isinstance(tail, FileTail)
    return tail


def _footer(streams: list[tuple[int, int, int]], n_columns: int = 3) -> pb.StripeFooter:
    return pb.StripeFooter(
        streams=[pb.Stream(kind=k, column=c, length=n) for k, c, n in streams],
        columns=[pb.ColumnEncoding(kind=pb.ColumnEncoding.DIRECT_V2)] * n_columns)


def test_stripe_footer_needs_one_encoding_per_column() -> None:
    tail = _tail()
    ok = _footer([])
    assert parse_stripe_footer(ok.SerializeToString(), tail) == ok
    for n in (0, 2, 4):
        bad = _footer([], n_columns=n).SerializeToString()
        with pytest.raises(CorruptFileError, match=f"{n} column encodings for a schema of 3"):
            parse_stripe_footer(bad, tail)


def test_layout_offsets_are_absolute() -> None:
    stripe = StripeInfo(0, 100, 10, 30, 5, 7)
    footer = _footer([(K.ROW_INDEX, 0, 4), (K.ROW_INDEX, 1, 6), (K.PRESENT, 1, 3),
                      (K.DATA, 1, 12), (K.DATA, 2, 0), (K.DATA, 2, 15)])
    layout = stream_layout(stripe, footer)
    assert [(s.column, s.kind, s.offset, s.length) for s in layout] == [
        (0, K.ROW_INDEX, 100, 4), (1, K.ROW_INDEX, 104, 6), (1, K.PRESENT, 110, 3),
        (1, K.DATA, 113, 12), (2, K.DATA, 125, 0), (2, K.DATA, 125, 15)]
    assert data_ranges(layout, {1}) == [(110, 15)]
    assert data_ranges(layout, {2}) == [(125, 15)]
    assert data_ranges(layout, {1, 2}) == [(110, 30)]
    assert data_ranges(layout, {0}) == []
    assert index_ranges(layout, {0, 1}) == [(100, 10)]
    assert index_ranges(layout, {1}, kinds=[K.BLOOM_FILTER_UTF8]) == []


def test_stream_past_stripe_data_end() -> None:
    stripe = StripeInfo(3, 100, 10, 30, 5, 7)
    with pytest.raises(CorruptFileError, match="stripe 3: stream 2 .*runs past"):
        stream_layout(stripe, _footer([(K.ROW_INDEX, 0, 10), (K.DATA, 1, 29), (K.DATA, 2, 2)]))
    with pytest.raises(CorruptFileError, match="runs past"):
        stream_layout(stripe, _footer([(K.DATA, 1, 2**64 - 1)]))


def test_stream_of_unknown_column() -> None:
    stripe = StripeInfo(0, 100, 10, 30, 5, 7)
    with pytest.raises(CorruptFileError, match="column 3 but the stripe has 3 columns"):
        stream_layout(stripe, _footer([(K.DATA, 3, 2)]))


def test_unknown_stream_kinds_take_space_but_are_not_read() -> None:
    stripe = StripeInfo(0, 0, 0, 20, 5, 7)
    footer = _footer([(K.DATA, 1, 5)])
    raw = footer.SerializeToString()
    # a stream of kind 42 (unknown to us), column 1, length 7, then DATA of column 2
    raw += b"\x0a\x06\x08\x2a\x10\x01\x18\x07" + pb.StripeFooter(
        streams=[pb.Stream(kind=K.DATA, column=2, length=8)]).SerializeToString()
    parsed = pb.StripeFooter.FromString(raw)
    layout = stream_layout(stripe, parsed)
    assert [(s.kind, s.offset) for s in layout] == [(K.DATA, 0), (42, 5), (K.DATA, 12)]
    assert data_ranges(layout, {1, 2}) == [(0, 5), (12, 8)]


def test_variant_streams_follow_java_layout() -> None:
    stripe = StripeInfo(0, 0, 30, 40, 5, 7)
    footer = _footer([(K.ROW_INDEX, 0, 10), (K.ENCRYPTED_INDEX, 0, 20), (K.DATA, 1, 25),
                      (K.ENCRYPTED_DATA, 0, 15)])
    v0 = footer.encryption.add()
    v0.streams.add(kind=K.ROW_INDEX, column=2, length=20)
    v0.streams.add(kind=K.DATA, column=2, length=15)
    main = stream_layout(stripe, footer)
    assert [(s.kind, s.offset) for s in main] == [(K.ROW_INDEX, 0), (K.DATA, 30)]
    variants = variant_stream_layout(stripe, footer)
    assert [(s.kind, s.column, s.offset, s.variant) for s in variants] == [
        (K.ROW_INDEX, 2, 10, 0), (K.DATA, 2, 55, 0)]
    v0.streams.add(kind=K.DATA, column=2, length=1)
    with pytest.raises(CorruptFileError, match="variant 0"):
        variant_stream_layout(stripe, footer)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(DATA_KINDS) + [K.ROW_INDEX]),
                          st.integers(0, 4), st.integers(0, 20)), max_size=12),
       st.sets(st.integers(0, 4)))
def test_data_ranges_cover_exactly_the_selected_streams(
        streams: list[tuple[int, int, int]], columns: set[int]) -> None:
    total = sum(n for _, _, n in streams)
    stripe = StripeInfo(0, 1000, 0, total, 1, 1)
    layout = stream_layout(stripe, _footer(streams, n_columns=5))
    wanted = {b for s in layout if s.column in columns and s.kind in DATA_KINDS
              for b in range(s.offset, s.end)}
    ranges = data_ranges(layout, columns)
    covered = [b for off, n in ranges for b in range(off, off + n)]
    assert sorted(covered) == sorted(wanted) and len(covered) == len(set(covered))
    for (a, n), (b, _) in zip(ranges, ranges[1:], strict=False):
        assert a + n < b  # merged: no two ranges touch


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_stripe_structures(blob: bytes) -> None:
    tail = _tail()
    stripe = StripeInfo(0, 3, 50, 200, len(blob), 10)
    for parse in (parse_row_index, parse_bloom_filter_index):
        try:
            parse(blob, tail)
        except FormatError:
            pass
    try:
        footer = parse_stripe_footer(blob, tail, stripe)
        stream_layout(stripe, footer)
        variant_stream_layout(stripe, footer)
    except (FormatError, UnsupportedFeatureError):
        pass


def test_stream_info_end() -> None:
    assert StreamInfo(1, K.DATA, 10, 5).end == 15


def test_writer_timezone_that_is_not_utf8_is_repaired() -> None:
    """protobuf hands out a string field that is not UTF-8 as bytes; the footer must still
    give text (with replacement characters, as ORC Java decodes it) so that zone lookups
    fail cleanly instead of with a TypeError."""
    footer = _footer([])
    footer.writerTimezone = "Europe/Paris"
    raw = footer.SerializeToString().replace(b"Paris", b"Par\xffs")
    parsed = parse_stripe_footer(raw, _tail())
    assert parsed.writerTimezone == "Europe/Par\ufffds"
