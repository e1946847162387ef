"""Stripe assembly: compressed positions, stream order, row index, bloom filters, footer."""

from __future__ import annotations

import pathlib
import random
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pytest
from helpers.corpus import load_manifest

from aorc.errors import AorcError, UnsupportedVersionError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.bloom import BloomFilter, hash_arrow_array
from aorc.format.codec.compression import (
    CompressionKind,
    chunk_offsets,
    compress_stream,
    decompress_from,
    decompress_stream,
)
from aorc.format.columns import DecodeOptions, DictStripeStreams, decode_stripe
from aorc.format.columns.encode import EncodedColumn, EncodeOptions, encode_column
from aorc.format.stripe import parse_stripe_footer
from aorc.format.tail import FileTail, parse_tail
from aorc.format.types import TypeKind, from_arrow_schema
from aorc.write.stripe import (
    EncodedStripe,
    assemble_stripe,
    orc_positions,
    stream_order_key,
)


def _header_walk(framed: bytes) -> list[int]:
    """Chunk header offsets, walked here independently of aorc's chunk parser."""
    out, pos = [], 0
    while pos < len(framed):
        out.append(pos)
        pos += 3 + (int.from_bytes(framed[pos:pos + 3], "little") >> 1)
    return out


CODECS = [CompressionKind.ZLIB, CompressionKind.SNAPPY, CompressionKind.LZ4,
          CompressionKind.ZSTD]


def mixed_bytes(n: int, seed: int) -> bytes:
    """Runs of repeated bytes (compressible) between random stretches (incompressible), so
    that compressed and original chunks both occur."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < n:
        out += bytes([rng.randrange(256)]) * rng.randrange(1, 3000)
        out += rng.randbytes(rng.randrange(1, 3000))
    return bytes(out[:n])


# --------------------------------------------------------------------------- positions

@pytest.mark.parametrize("kind", CODECS, ids=lambda k: k.name)
@pytest.mark.parametrize("block_size", [1, 7, 100, 1000])
def test_positions_point_at_the_same_byte(kind: CompressionKind, block_size: int) -> None:
    data = mixed_bytes(min(12000, 60 * block_size + 5), block_size)
    framed = compress_stream(data, kind, block_size)
    starts = chunk_offsets(framed, block_size)
    assert starts == _header_walk(framed)  # independent header walk
    originals = {framed[s] & 1 for s in starts}
    if block_size >= 100:
        assert originals == {0, 1}, "the data should give compressed and original chunks"
    offsets = {0, 1, len(data)} | {k * block_size + d for k in range(1, 5) for d in (-1, 0, 1)}
    offsets |= set(random.Random(1).sample(range(len(data)), min(200, len(data))))
    for p in sorted(offsets):
        chunk, within, *rest = orc_positions([p, 17, 3], starts, block_size)
        assert rest == [17, 3]
        assert chunk in starts
        assert 0 <= within <= block_size
        assert bytes(decompress_from(framed, kind, block_size, chunk))[within:] == data[p:]
        if p and p % block_size == 0:
            # ORC Java's OutStream: the full chunk is still the current buffer, so the
            # position is its end, not the start of the next chunk.
            assert within == block_size
            assert chunk == starts[p // block_size - 1]


def test_positions_of_uncompressed_and_empty_streams() -> None:
    assert orc_positions([1234, 5, 6], None, 100) == [1234, 5, 6]
    assert orc_positions([0, 0], [], 100) == [0, 0, 0]
    assert orc_positions([], [0, 50], 100) == []
    with pytest.raises(AorcError, match="beyond"):
        orc_positions([201, 0], [0, 50], 100)


# --------------------------------------------------------------------------- stream order

def java_files(corpus: pathlib.Path) -> Iterator[tuple[str, bytes]]:
    """Readable files ORC Java wrote (not corrupt, not encrypted)."""
    for entry in load_manifest(corpus):
        if "writer=ORC Java" not in entry.notes or entry.name.startswith(("corrupt/",
                                                                          "encrypted/")):
            continue
        yield entry.name, entry.path.read_bytes()


def test_stream_order_matches_java_files(corpus: pathlib.Path) -> None:
    """ORC Java writes streams sorted by StreamName; our key must keep its files' order."""
    checked = 0
    for name, data in java_files(corpus):
        try:
            tail = parse_tail(data, len(data))
        except UnsupportedVersionError:
            continue
        assert isinstance(tail, FileTail), name
        for stripe in tail.stripes[:3]:
            raw = data[stripe.footer_offset:stripe.footer_offset + stripe.footer_length]
            footer = parse_stripe_footer(raw, tail, stripe)
            keys = [stream_order_key(s.column, s.kind) for s in footer.streams]
            assert keys == sorted(keys), name
            checked += 1
    assert checked > 20


def test_stream_order_key() -> None:
    streams = [(2, pb.Stream.DATA), (1, pb.Stream.BLOOM_FILTER_UTF8), (0, pb.Stream.ROW_INDEX),
               (1, pb.Stream.LENGTH), (1, pb.Stream.PRESENT), (1, pb.Stream.ROW_INDEX)]
    ordered = sorted(streams, key=lambda s: stream_order_key(*s))
    assert ordered == [(0, pb.Stream.ROW_INDEX), (1, pb.Stream.ROW_INDEX),
                       (1, pb.Stream.BLOOM_FILTER_UTF8), (1, pb.Stream.PRESENT),
                       (1, pb.Stream.LENGTH), (2, pb.Stream.DATA)]


# --------------------------------------------------------------------------- whole stripes

def sample_table(n: int) -> pa.Table:
    rng = np.random.default_rng(5)
    ints = rng.integers(-50, 50, n)
    words = [None if i % 9 == 0 else f"w{i % 40}" for i in range(n)]
    unique = [f"value-{i}-{rng.integers(1 << 30)}" for i in range(n)]
    lists = [None if i % 4 == 0 else list(range(i % 5)) for i in range(n)]
    struct = [{"x": float(i) / 3, "y": bool(i % 3)} if i % 6 else None for i in range(n)]
    return pa.table({
        "i": pa.array(ints, pa.int64()),
        "w": pa.array(words),
        "u": pa.array(unique),
        "l": pa.array(lists, pa.list_(pa.int32())),
        "s": pa.array(struct, pa.struct([("x", pa.float64()), ("y", pa.bool_())])),
    })


def encode(table: pa.Table, opts: EncodeOptions, stride: int) -> tuple[EncodedColumn, int]:
    root_type = from_arrow_schema(table.schema)
    root = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                      fields=list(table.schema))
    starts = np.arange(0, len(table), stride, dtype=np.int64) if stride else np.zeros(0,
                                                                                      np.int64)
    return encode_column(root_type, root, starts, opts), len(starts)


def split_streams(stripe: EncodedStripe) -> dict[tuple[int, int], bytes]:
    out = {}
    pos = 0
    for s in stripe.footer.streams:
        out[(s.column, s.kind)] = stripe.data[pos:pos + s.length]
        pos += s.length
    assert pos == stripe.index_length + stripe.data_length
    assert len(stripe.data) == pos + stripe.footer_length
    return out


def flatten(col: EncodedColumn) -> list[EncodedColumn]:
    return [col] + [c for child in col.children for c in flatten(child)]


@pytest.mark.parametrize("kind", [CompressionKind.NONE, CompressionKind.ZLIB,
                                  CompressionKind.ZSTD], ids=lambda k: k.name)
def test_stripe_round_trip(kind: CompressionKind) -> None:
    table = sample_table(5500)
    schema = from_arrow_schema(table.schema)
    opts = EncodeOptions(compression=kind, compression_block_size=1000, row_index_stride=1000,
                        bloom_filter_columns={1, 2}, timezone="Europe/Paris")
    encoded, groups = encode(table, opts, 1000)
    stripe = assemble_stripe(encoded, len(table), groups, opts)
    streams = split_streams(stripe)
    footer = pb.StripeFooter()
    footer.ParseFromString(decompress_stream(stripe.data[-stripe.footer_length:], kind, 1000))
    assert footer == stripe.footer
    assert footer.writerTimezone == "Europe/Paris"
    assert len(footer.columns) == len(list(schema.walk()))
    keys = [stream_order_key(s.column, s.kind) for s in footer.streams]
    assert keys == sorted(keys)
    assert stripe.index_length == sum(s.length for s in footer.streams
                                      if s.kind in (pb.Stream.ROW_INDEX,
                                                    pb.Stream.BLOOM_FILTER_UTF8))
    decompressed = {k: decompress_stream(v, kind, 1000) for k, v in streams.items()}
    batch = decode_stripe(schema, None, DictStripeStreams(decompressed, list(footer.columns),
                                                          footer.writerTimezone),
                          len(table), DecodeOptions(writer=7, writer_version=6, calendar=2))
    assert pa.Table.from_batches([batch]).equals(table)

    for col in flatten(encoded):
        cid = col.column_id
        # every column has a row index with one entry per row group
        index = pb.RowIndex()
        index.ParseFromString(decompressed[(cid, pb.Stream.ROW_INDEX)])
        assert len(index.entry) == groups
        assert [e.statistics for e in index.entry] == list(col.row_group_stats)
        check_positions(col, index, streams, kind)
        # bytesOnDisk = the compressed data streams of the column
        on_disk = sum(len(v) for (c, k), v in streams.items() if c == cid
                      and k not in (pb.Stream.ROW_INDEX, pb.Stream.BLOOM_FILTER_UTF8))
        assert stripe.column_stats[cid].bytesOnDisk == on_disk
        stats = pb.ColumnStatistics()
        stats.CopyFrom(stripe.column_stats[cid])
        stats.ClearField("bytesOnDisk")
        assert stats == col.stripe_stats
        has_bloom = (cid, pb.Stream.BLOOM_FILTER_UTF8) in streams
        assert has_bloom == (cid in (1, 2))
        assert footer.columns[cid].bloomEncoding == (1 if has_bloom else 0)
    check_bloom_filters(decompressed, table)


def check_positions(col: EncodedColumn, index: pb.RowIndex,
                    streams: dict[tuple[int, int], bytes], kind: CompressionKind) -> None:
    """Each recorded position leads to the same uncompressed byte as the encoder's."""
    for g, entry in enumerate(index.entry):
        positions = list(entry.positions)
        for stream in col.streams:
            uncompressed = stream.positions[g]
            if not uncompressed:
                continue
            width = len(uncompressed) + (0 if kind is CompressionKind.NONE else 1)
            mine, positions = positions[:width], positions[width:]
            stored = streams[(col.column_id, stream.kind)]
            if kind is CompressionKind.NONE:
                assert mine == uncompressed
                continue
            chunk, within = mine[0], mine[1]
            assert mine[2:] == uncompressed[1:]
            tail = bytes(decompress_from(stored, kind, 1000, chunk))[within:]
            assert tail == stream.data[uncompressed[0]:]
        assert positions == []


def check_bloom_filters(decompressed: dict[tuple[int, int], bytes], table: pa.Table) -> None:
    for cid, name in ((1, "i"), (2, "w")):
        index = pb.BloomFilterIndex()
        index.ParseFromString(decompressed[(cid, pb.Stream.BLOOM_FILTER_UTF8)])
        assert len(index.bloomFilter) == 6
        kind = TypeKind.LONG if name == "i" else TypeKind.STRING
        for g, proto in enumerate(index.bloomFilter):
            bf = BloomFilter.from_proto(proto, pb.Stream.BLOOM_FILTER_UTF8)
            assert bf is not None
            values = table.column(name).slice(g * 1000, 1000)
            assert bf.test_hashes(hash_arrow_array(values, kind)).all()


def test_stripe_without_row_index() -> None:
    table = sample_table(3000)
    opts = EncodeOptions(compression=CompressionKind.LZ4, row_index_stride=0,
                        bloom_filter_columns={1})
    encoded, groups = encode(table, opts, 0)
    assert groups == 0
    stripe = assemble_stripe(encoded, len(table), 0, opts)
    assert stripe.index_length == 0
    kinds = {s.kind for s in stripe.footer.streams}
    assert pb.Stream.ROW_INDEX not in kinds
    assert pb.Stream.BLOOM_FILTER_UTF8 not in kinds
    info = stripe.information(3)
    assert (info.offset, info.numberOfRows, info.footerLength) == (3, 3000,
                                                                   stripe.footer_length)
    assert info.indexLength + info.dataLength + info.footerLength == len(stripe.data)


@pytest.mark.parametrize("size", [1, 700, 5000, 1 << 20])
def test_stripe_pieces_are_its_bytes_in_few_writes(size: int) -> None:
    """The writer hands a stripe over in pieces: together they are the stripe's bytes; a
    piece is one part of at least ``size`` bytes or a run of smaller parts."""
    table = sample_table(3000)
    opts = EncodeOptions(compression=CompressionKind.ZSTD, row_index_stride=1000)
    encoded, groups = encode(table, opts, 1000)
    stripe = assemble_stripe(encoded, len(table), groups, opts)
    pieces = stripe.pieces(size)
    assert b"".join(pieces) == stripe.data == b"".join(stripe.parts)
    assert stripe.size == len(stripe.data)
    assert len(pieces) <= len(stripe.parts)
    big = {id(p) for p in stripe.parts if len(p) >= size}
    for piece, after in zip(pieces, pieces[1:], strict=False):
        # a run is cut short only by the end or by a large part
        assert len(piece) >= size or id(after) in big
    assert sum(id(p) in big for p in pieces) == len(big)  # large parts are not copied
    if size == 1:
        assert len(pieces) == len(stripe.parts)


def test_inconsistent_encoder_output_is_an_internal_error() -> None:
    table = sample_table(2500)
    opts = EncodeOptions(compression=CompressionKind.ZLIB, row_index_stride=1000)
    encoded, groups = encode(table, opts, 1000)
    with pytest.raises(AorcError, match="row groups"):
        assemble_stripe(encoded, len(table), groups + 1, opts)
    encoded.children[0].column_id = 7
    with pytest.raises(AorcError, match="pre-order"):
        assemble_stripe(encoded, len(table), groups, opts)
