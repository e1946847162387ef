"""Stripe assembly: encoded columns -> the bytes of one stripe, its footer and statistics.

The column encoders (:mod:`aorc.format.columns.encode`) hand over each column's streams
uncompressed,
with the row-index positions of every row group in uncompressed form. This module, like ORC
Java's ``PhysicalFsWriter``:

* compresses every stream with the file's codec (:func:`compress_stream`: chunks of
  ``compression_block_size`` bytes, a chunk kept original when compression does not shrink it,
  codec levels per stream kind as ORC Java picks them);
* turns each uncompressed position into the position ORC records (see
  :func:`orc_positions`);
* builds the ROW_INDEX stream of every column (one entry per row group: the positions of the
  column's streams concatenated in the column's stream order, and the row group's statistics)
  and the BLOOM_FILTER_UTF8 stream of the columns that have bloom filters;
* lays the streams out in ORC Java's order (``StreamName.compareTo``): the index area first
  (per column in id order: ROW_INDEX, then BLOOM_FILTER_UTF8), then the data area (per column
  in id order, stream kinds in ``Stream.Kind`` order);
* writes the StripeFooter: the stream directory, one ColumnEncoding per column and the writer
  time zone;
* completes the stripe statistics with ``bytesOnDisk`` (the compressed size of the column's
  data streams, as ORC Java records it).

Everything here is synchronous and runs in a worker thread of the driver; the columns are
compressed on the shared thread pool (:mod:`aorc.threads`) when the options allow several
threads, with the same bytes as with one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import pyarrow as pa

from aorc.errors import AorcError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.bloom import BloomFilter
from aorc.format.codec.compression import (
    CompressionKind,
    chunk_offsets,
    compress_stream,
    default_level,
)
from aorc.format.columns.encode import EncodedColumn, EncodeOptions, encode_column
from aorc.format.messages import parsed_statistics, row_index_bytes, scratch_serialized
from aorc.format.types import OrcType
from aorc.threads import pool_map

__all__ = [
    "ColumnCompressor",
    "EncodedStripe",
    "PlacedColumn",
    "assemble_stripe",
    "compress",
    "encode_stripe",
    "orc_positions",
    "stream_order_key",
]

_ROW_INDEX = pb.Stream.ROW_INDEX
_BLOOM_FILTER_UTF8 = pb.Stream.BLOOM_FILTER_UTF8
#: Stream kinds that live in a stripe's index area (``StreamName.getArea``).
_INDEX_KINDS = frozenset({pb.Stream.ROW_INDEX, pb.Stream.DICTIONARY_COUNT,
                          pb.Stream.BLOOM_FILTER, pb.Stream.BLOOM_FILTER_UTF8})
#: The writer hands a stripe to the output in pieces of about this size
#: (:meth:`EncodedStripe.pieces`).
WRITE_PIECE_BYTES = 1 << 20


class _Stream(Protocol):
    """What the assembler reads of an ``aorc.format.columns.encode.EncodedStream``."""

    @property
    def kind(self) -> int: ...
    @property
    def data(self) -> bytes | memoryview: ...
    @property
    def positions(self) -> Sequence[Sequence[int]]: ...


class _Column(Protocol):
    """What the assembler reads of an ``aorc.format.columns.encode.EncodedColumn``."""

    @property
    def column_id(self) -> int: ...
    @property
    def encoding(self) -> pb.ColumnEncoding: ...
    @property
    def streams(self) -> Sequence[_Stream]: ...
    @property
    def stripe_stats_bytes(self) -> bytes: ...
    @property
    def row_group_stats_bytes(self) -> Sequence[bytes]: ...
    @property
    def bloom_filters(self) -> Sequence[BloomFilter] | None: ...
    @property
    def children(self) -> Sequence[_Column]: ...


class _Options(Protocol):
    """What the assembler reads of ``aorc.format.columns.encode.EncodeOptions``."""

    @property
    def compression(self) -> CompressionKind: ...
    @property
    def compression_block_size(self) -> int: ...
    @property
    def timezone(self) -> str: ...


@dataclass
class EncodedStripe:
    """One finished stripe.

    Attributes:
        parts: the stripe's bytes in pieces (compressed streams in order, then the footer),
            not joined: the writer hands them to the output in groups (see :meth:`pieces`)
            instead of copying the whole stripe once more.
        index_length: bytes of the index area.
        data_length: bytes of the data area.
        footer_length: bytes of the (compressed) stripe footer.
        num_rows: rows in the stripe.
        column_stats: the stripe's statistics of every column, by column id.
        footer: the stripe footer as written.
    """

    parts: list[bytes]
    index_length: int
    data_length: int
    footer_length: int
    num_rows: int
    column_stats: list[pb.ColumnStatistics]
    footer: pb.StripeFooter

    @property
    def size(self) -> int:
        """Bytes of the stripe."""
        return self.index_length + self.data_length + self.footer_length

    @functools.cached_property
    def data(self) -> bytes:
        """The stripe's bytes: index streams, data streams, then the footer."""
        return b"".join(self.parts)

    def pieces(self, size: int = WRITE_PIECE_BYTES) -> list[bytes]:
        """The stripe's bytes in order, as parts of at least ``size`` bytes stand alone and
        runs of smaller ones joined up to about ``size`` (few writes, little copying)."""
        out: list[bytes] = []
        run: list[bytes] = []
        run_bytes = 0
        for part in self.parts:
            if len(part) >= size:
                if run:
                    out.append(b"".join(run))
                    run, run_bytes = [], 0
                out.append(part)
                continue
            run.append(part)
            run_bytes += len(part)
            if run_bytes >= size:
                out.append(b"".join(run))
                run, run_bytes = [], 0
        if run:
            out.append(b"".join(run))
        return out

    def information(self, offset: int) -> pb.StripeInformation:
        """The footer's StripeInformation for this stripe placed at ``offset``."""
        return pb.StripeInformation(
            offset=offset, indexLength=self.index_length, dataLength=self.data_length,
            footerLength=self.footer_length, numberOfRows=self.num_rows)


def _internal(message: str) -> AorcError:
    return AorcError(f"internal error in the stripe writer: {message}")


def compress(data: bytes | memoryview, opts: _Options, stream_kind: int | None) -> bytes:
    """Compress one stream (or a stripe footer: ``stream_kind`` None) as ORC Java does, or
    at the options' ``compression_level``."""
    kind = CompressionKind(opts.compression)
    if kind is CompressionKind.NONE:
        return data if isinstance(data, bytes) else bytes(data)
    return compress_stream(data, kind, opts.compression_block_size,
                           level=stream_level(opts, stream_kind))


def stream_level(opts: _Options, stream_kind: int | None) -> int | None:
    """The codec level of one stream kind (None: file structures)."""
    level: int | None = getattr(opts, "compression_level", None)
    return default_level(CompressionKind(opts.compression), stream_kind) if level is None \
        else level


def orc_positions(positions: Sequence[int], chunk_starts: Sequence[int] | None,
                  block_size: int) -> list[int]:
    """The row-index positions ORC records for one stream at one row group.

    Args:
        positions: the uncompressed position from the encoder: a byte offset in the
            uncompressed stream, then the offsets inside the RLE run (and bit) that follow.
        chunk_starts: offsets of the chunk headers in the compressed stream; ``None`` for an
            uncompressed file.
        block_size: the compression block size the stream was cut with.

    Returns:
        ``positions`` unchanged for an uncompressed file; otherwise the byte offset is
        replaced by (offset of the chunk holding the byte, offset of the byte inside that
        chunk's decompressed bytes). As in ORC Java's ``OutStream.getPosition``, a byte
        offset on a chunk boundary points at the end of the chunk before it: ORC Java cuts
        a chunk only when the next byte arrives, so at that moment the full chunk is still
        its current buffer. Offset 0 (also in an empty stream) is (0, 0).
    """
    if not positions:
        return []
    if chunk_starts is None:
        return list(positions)
    offset = positions[0]
    if offset == 0:
        return [0, 0, *positions[1:]]
    chunk = (offset - 1) // block_size
    if offset < 0 or chunk >= len(chunk_starts):
        raise _internal(f"position {offset} lies beyond the stream's {len(chunk_starts)} "
                        f"chunks of {block_size} bytes")
    return [chunk_starts[chunk], offset - chunk * block_size, *positions[1:]]


def stream_order_key(column: int, kind: int) -> tuple[int, int, int]:
    """Sort key of a stream in a stripe, as ORC Java's ``StreamName.compareTo``: the index
    area before the data area, then column id, then stream kind."""
    return (0 if kind in _INDEX_KINDS else 1, column, kind)


def _flatten(root: _Column) -> list[_Column]:
    """The columns of the tree by column id, checking the ids are 0..n-1 in pre-order."""
    out: list[_Column] = []
    for expected, col in enumerate(_walk(root)):
        if col.column_id != root.column_id + expected:
            raise _internal(f"column ids are not in pre-order: found {col.column_id} where "
                            f"{root.column_id + expected} was expected")
        out.append(col)
    return out


#: Streams longer than this are compressed in pieces (whole compression chunks) on several
#: threads; the pieces' framed chunks, joined, are the stream compressed in one go.
PIECE_BYTES = 1 << 20


@dataclass
class _Placed:
    column: int
    kind: int
    parts: list[bytes]  # the compressed stream is their concatenation

    @property
    def length(self) -> int:
        return sum(len(p) for p in self.parts)


#: One column's compressed index streams, data streams and serialized stripe statistics.
PlacedColumn = tuple[list[_Placed], list[_Placed], bytes]


def _compress_parts(data: bytes | memoryview, opts: _Options, stream_kind: int, threads: int
                    ) -> list[bytes]:
    """Compress one stream, in pieces of whole chunks on up to ``threads`` threads when it
    is long; the concatenated result is :func:`compress` of the whole stream."""
    block = opts.compression_block_size
    piece = max(1, PIECE_BYTES // block) * block
    if threads <= 1 or len(data) <= piece or \
            CompressionKind(opts.compression) is CompressionKind.NONE:
        return [compress(data, opts, stream_kind)]
    view = memoryview(data).cast("B")

    def one(start: int) -> bytes:
        return compress(view[start:start + piece], opts, stream_kind)

    return pool_map(one, range(0, len(view), piece), threads)


def _chunk_starts(parts: Sequence[bytes], block: int) -> list[int]:
    """Chunk header offsets of a compressed stream given in pieces of whole chunks."""
    starts: list[int] = []
    base = 0
    for part in parts:
        starts.extend(base + pos for pos in chunk_offsets(part, block))
        base += len(part)
    return starts


def _column_streams(col: _Column, opts: _Options, num_groups: int
                    ) -> tuple[list[_Placed], bytes | None]:
    """Compress a column's data streams and build its serialized row index (None without
    row groups; made as bytes, without a protobuf message per entry: see
    :mod:`aorc.format.messages`)."""
    block = opts.compression_block_size
    compressed = CompressionKind(opts.compression) is not CompressionKind.NONE
    threads = getattr(opts, "threads", 1)
    placed: list[_Placed] = []
    positions: list[list[int]] = [[] for _ in range(num_groups)]
    for stream in col.streams:
        parts = _compress_parts(stream.data, opts, stream.kind, threads)
        placed.append(_Placed(col.column_id, stream.kind, parts))
        if not num_groups:
            continue
        if len(stream.positions) != num_groups:
            raise _internal(f"column {col.column_id} stream kind {stream.kind} has positions "
                            f"for {len(stream.positions)} row groups, not {num_groups}")
        starts = _chunk_starts(parts, block) if compressed else None
        for entry, pos in zip(positions, stream.positions, strict=True):
            entry.extend(orc_positions(pos, starts, block))
    if not num_groups:
        return placed, None
    if len(col.row_group_stats_bytes) != num_groups:
        raise _internal(f"column {col.column_id} has statistics for "
                        f"{len(col.row_group_stats_bytes)} row groups, not {num_groups}")
    return placed, row_index_bytes(zip(positions, col.row_group_stats_bytes, strict=True))


def _bloom_index(col: _Column, num_groups: int) -> pb.BloomFilterIndex | None:
    filters = col.bloom_filters
    if filters is None or not num_groups:
        return None
    if len(filters) != num_groups:
        raise _internal(f"column {col.column_id} has {len(filters)} bloom filters for "
                        f"{num_groups} row groups")
    return pb.BloomFilterIndex(bloomFilter=[f.to_proto() for f in filters])


def _stripe_stats(col: _Column, placed: Sequence[_Placed]) -> bytes:
    """The column's serialized stripe statistics with ``bytesOnDisk``."""
    on_disk = sum(p.length for p in placed)

    def fill(stats: pb.ColumnStatistics) -> None:
        stats.MergeFromString(col.stripe_stats_bytes)
        if on_disk:
            stats.bytesOnDisk = on_disk
        else:
            stats.ClearField("bytesOnDisk")
    return scratch_serialized(fill, pb.ColumnStatistics)


def _place_column(col: _Column, opts: _Options, num_groups: int) -> PlacedColumn:
    """One column's compressed index streams, data streams and stripe statistics (the work
    of one thread, and of the others on its long streams)."""
    placed, row_index = _column_streams(col, opts, num_groups)
    index = []
    if row_index is not None:
        index.append(_Placed(col.column_id, _ROW_INDEX,
                             [compress(row_index, opts, _ROW_INDEX)]))
    bloom = _bloom_index(col, num_groups)
    if bloom is not None:
        index.append(_Placed(col.column_id, _BLOOM_FILTER_UTF8,
                             [compress(bloom.SerializeToString(), opts, _BLOOM_FILTER_UTF8)]))
    return index, placed, _stripe_stats(col, placed)


class ColumnCompressor:
    """Compresses encoded columns as soon as they are encoded: the ``finish`` of
    ``aorc.format.columns.encode.encode_column``, so that each field of a stripe is encoded
    and compressed in one task on the shared pool (no thread waits for the slowest encoder
    before compressing). :func:`assemble_stripe` takes its :attr:`placed` columns.

    Args:
        opts: the write options.
        num_groups: row groups in the stripe (0: no row index).

    Attributes:
        placed: column id -> its compressed streams and statistics.
    """

    def __init__(self, opts: _Options, num_groups: int) -> None:
        self._opts = opts
        self._num_groups = num_groups
        self.placed: dict[int, PlacedColumn] = {}

    def __call__(self, col: EncodedColumn) -> EncodedColumn:
        """Compress ``col`` and its descendants; returns the tree without its uncompressed
        streams (freed now rather than when the whole stripe is done). A subtree compressed
        already (a nested column encoded in a task of its own) is left as it is."""
        self._place(col)
        return _without_streams(col)

    def _place(self, col: _Column) -> None:
        if col.column_id in self.placed:
            return
        self.placed[col.column_id] = _place_column(col, self._opts, self._num_groups)
        for child in col.children:
            self._place(child)


def _walk(col: _Column) -> Iterator[_Column]:
    yield col
    for child in col.children:
        yield from _walk(child)


def _without_streams(col: EncodedColumn) -> EncodedColumn:
    return dataclasses.replace(col, streams=[],
                               children=[_without_streams(c) for c in col.children])


def assemble_stripe(root: _Column, num_rows: int, num_groups: int,
                    opts: _Options, placed: Mapping[int, PlacedColumn] | None = None
                    ) -> EncodedStripe:
    """Build one stripe from the encoded column tree of its rows.

    Args:
        root: the encoded root column (``aorc.format.columns.encode.EncodedColumn``); every column
            of the schema must be in the tree.
        num_rows: rows in the stripe.
        num_groups: row groups in the stripe; 0 when the file has no row index (then no
            ROW_INDEX or bloom filter streams are written).
        opts: the write options (codec, block size, time zone and, when it has one, the
            ``threads`` that compress the columns at once; the bytes do not depend on it).
        placed: columns already compressed (:attr:`ColumnCompressor.placed`, for the tree
            its ``finish`` returned); the others are compressed here.

    Returns:
        The stripe's bytes with its lengths and statistics.

    Raises:
        AorcError: the encoded columns do not fit together (an internal error).
    """
    columns = _flatten(root)
    done = placed or {}
    index: list[_Placed] = []
    data: list[_Placed] = []
    stats: list[bytes] = []

    def place(col: _Column) -> PlacedColumn:
        return _place_column(col, opts, num_groups)

    todo = [col for col in columns if col.column_id not in done]
    fresh = dict(zip([c.column_id for c in todo],
                     pool_map(place, todo, getattr(opts, "threads", 1)), strict=True))
    for col in columns:
        col_index, col_data, col_stats = done.get(col.column_id) or fresh[col.column_id]
        index.extend(col_index)
        data.extend(col_data)
        stats.append(col_stats)
    streams = sorted(index + data, key=lambda p: stream_order_key(p.column, p.kind))
    footer = pb.StripeFooter(columns=[col.encoding for col in columns],
                             writerTimezone=opts.timezone)
    for p in streams:  # added in place: a pb.Stream() apiece costs an arena apiece
        footer.streams.add(kind=p.kind, column=p.column, length=p.length)
    footer_bytes = compress(footer.SerializeToString(), opts, None)
    index_length = sum(p.length for p in streams if p.kind in _INDEX_KINDS)
    data_length = sum(p.length for p in streams) - index_length
    return EncodedStripe(
        parts=[part for p in streams for part in p.parts] + [footer_bytes],
        index_length=index_length, data_length=data_length,
        footer_length=len(footer_bytes), num_rows=num_rows,
        column_stats=parsed_statistics(stats), footer=footer)


def encode_stripe(orc_type: OrcType, schema: pa.Schema, batches: list[pa.RecordBatch],
                  rows: int, opts: EncodeOptions, decisions: dict[int, bool]
                  ) -> EncodedStripe:
    """Encode and assemble one stripe of ``batches`` (in a worker thread): each field is
    encoded and compressed in one task on the shared pool (:class:`ColumnCompressor`), then
    the stripe is laid out (:func:`assemble_stripe`).

    Args:
        orc_type: the file's root type.
        schema: the batches' Arrow schema.
        batches: the stripe's rows; emptied here, so that their memory can go early.
        rows: how many rows they hold.
        opts: the write options.
        decisions: the writer's dictionary decisions per column (updated by the encoders).

    Returns:
        The stripe's bytes with its lengths and statistics.
    """
    table = pa.Table.from_batches(batches, schema=schema)
    batches.clear()
    fields = list(schema)
    if fields:
        root = pa.StructArray.from_arrays(
            [_one_array(table.column(i)) for i in range(len(fields))], fields=fields)
    else:
        root = pa.StructArray.from_buffers(pa.struct([]), rows, [None], children=[])
    del table
    stride = opts.row_index_stride
    starts = (np.arange(0, rows, stride, dtype=np.int64) if stride
              else np.zeros(0, dtype=np.int64))
    compressor = ColumnCompressor(opts, len(starts))
    encoded = encode_column(orc_type, root, starts, opts, dictionary_decisions=decisions,
                            finish=compressor)
    del root
    return assemble_stripe(encoded, rows, len(starts), opts, compressor.placed)


def _one_array(column: pa.ChunkedArray) -> pa.Array:
    """The column as one array (not copied when it is one chunk already)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
