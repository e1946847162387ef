"""Row groups: where each one starts in every stream, and which byte ranges a subset needs.

A stripe's ROW_INDEX stream of a column holds one entry per row group (``row_index_stride``
rows): the group's column statistics and, for each of the column's streams, the position
where the group starts. Positions are concatenated per column in a fixed stream order (the
PRESENT stream's only when the stripe has one). A position is, in a compressed stream,
``(chunk start, offset in the decompressed chunk[, values into the RLE run[, bit]])`` and in
an uncompressed one ``(byte offset[, values into the run[, bit]])``.

Reading groups ``g0 .. g1-1`` of a stream needs the bytes from the chunk where ``g0`` starts
up to the end of the last value of ``g1 - 1``. That value lies before ``g1``'s position, but
its RLE run may continue past it (a run holds at most 512 values, a few KiB), and a
compressed chunk is only usable whole: so the range reaches to the end of the chunk holding
the run's end. When later row groups start in later chunks, their chunk starts bound that
end; otherwise chunks are assumed to be as long as they can be (``block size + 3``). ORC
Java's ``RecordReaderUtils.estimateRgEndOffset`` makes the same estimate with a fixed slop.

This module only plans and parses: it performs no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import (
    HEADER_SIZE,
    Budget,
    CompressionKind,
    complete_length,
    decompress_from,
)
from aorc.format.stripe import StreamInfo
from aorc.format.types import OrcType, TypeKind

__all__ = [
    "StreamStart",
    "column_positions",
    "decompress_complete",
    "position_layout",
    "segment_range",
    "slice_start",
    "surviving_runs",
]

K = pb.Stream.Kind
E = pb.ColumnEncoding

#: Position styles: how many numbers after the byte part (chunk start, decompressed offset
#: for compressed streams; byte offset otherwise) a stream's position has.
BYTES = 0  # a plain byte stream (string bytes, floats, varints)
RUN = 1  # an RLE stream: values into the run
BITS = 2  # a boolean stream: bytes into the byte-RLE run, then bits into the byte

#: The most bytes an RLE run can take: integer RLE v2 patched base (4-byte header, 8-byte
#: base, 512 values of up to 64 bits, up to 31 patches of up to 64 bits), with room to spare.
MAX_INT_RUN_BYTES = 4608
#: Byte RLE (and boolean streams on top of it): a control byte and up to 128 literals.
MAX_BYTE_RUN_BYTES = 160

_INTEGERS = frozenset({TypeKind.SHORT, TypeKind.INT, TypeKind.LONG, TypeKind.DATE})
_STRINGS = frozenset({TypeKind.STRING, TypeKind.CHAR, TypeKind.VARCHAR})
_DICTIONARY = frozenset({E.DICTIONARY, E.DICTIONARY_V2})


def position_layout(t: OrcType, encoding: pb.ColumnEncoding, has_present: bool,
                    decimal64: bool) -> list[tuple[int, int]]:
    """The column's positioned streams, in row-index order: ``(stream kind, style)``.

    Args:
        t: the column.
        encoding: its encoding in the stripe.
        has_present: the stripe has a PRESENT stream for the column.
        decimal64: decimals of this precision are stored as RLE v2 integers (files of
            version UNSTABLE-PRE-2.0).
    """
    out: list[tuple[int, int]] = [(K.PRESENT, BITS)] if has_present else []
    kind = t.kind
    if kind == TypeKind.BOOLEAN:
        out.append((K.DATA, BITS))
    elif kind in _INTEGERS or kind in (TypeKind.BYTE, TypeKind.UNION):
        out.append((K.DATA, RUN))
    elif kind in (TypeKind.FLOAT, TypeKind.DOUBLE):
        out.append((K.DATA, BYTES))
    elif kind in _STRINGS and encoding.kind in _DICTIONARY:
        out.append((K.DATA, RUN))
    elif kind in _STRINGS or kind in (TypeKind.BINARY, TypeKind.GEOMETRY, TypeKind.GEOGRAPHY):
        out += [(K.DATA, BYTES), (K.LENGTH, RUN)]
    elif kind == TypeKind.DECIMAL:
        out += [(K.DATA, RUN)] if decimal64 else [(K.DATA, BYTES), (K.SECONDARY, RUN)]
    elif kind in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT):
        out += [(K.DATA, RUN), (K.SECONDARY, RUN)]
    elif kind in (TypeKind.LIST, TypeKind.MAP):
        out.append((K.LENGTH, RUN))
    return out


@dataclass(frozen=True)
class StreamStart:
    """Where a row group starts in one stream.

    Attributes:
        chunk: offset in the stored stream of the chunk holding the start (the byte offset
            itself for an uncompressed stream).
        offset: offset of the start in the chunk's decompressed bytes (0 when uncompressed).
        skip: values to skip from there (bits for a boolean stream).
    """

    chunk: int
    offset: int
    skip: int


def column_positions(entries: Sequence[pb.RowIndexEntry], layout: list[tuple[int, int]],
                     streams: dict[int, StreamInfo], compressed: bool
                     ) -> dict[int, list[StreamStart]] | None:
    """Each positioned stream's row-group starts, from the column's row index entries.

    Args:
        entries: the column's row index entries, one per row group.
        layout: :func:`position_layout` of the column.
        streams: the column's streams in the stripe by kind.
        compressed: the file is compressed.

    Returns:
        Starts per stream kind (streams absent from the stripe left out), or None when the
        entries do not fit the layout (too few positions, outside the stream, or going
        backwards): the column must then be read from the start of the stripe.
    """
    widths = [(2 if compressed else 1) + style for _, style in layout]
    if any(len(e.positions) < sum(widths) for e in entries):
        return None
    out: dict[int, list[StreamStart]] = {}
    base = 0
    for (kind, style), width in zip(layout, widths, strict=True):
        stream = streams.get(kind)
        if stream is not None:
            starts = _stream_starts(entries, base, style, compressed, stream.length)
            if starts is None:
                return None
            out[kind] = starts
        base += width
    return out


def _stream_starts(entries: Sequence[pb.RowIndexEntry], base: int, style: int,
                   compressed: bool, length: int) -> list[StreamStart] | None:
    starts = []
    previous = (0, 0)
    for entry in entries:
        p = entry.positions
        chunk, offset = (p[base], p[base + 1]) if compressed else (p[base], 0)
        rest = base + (2 if compressed else 1)
        if style == RUN:
            skip = p[rest]
        elif style == BITS:
            if p[rest + 1] > 8:
                return None
            skip = 8 * p[rest] + p[rest + 1]
        else:
            skip = 0
        if chunk > length or (chunk, offset) < previous:
            return None
        previous = (chunk, offset)
        starts.append(StreamStart(chunk, offset, skip))
    return starts


def surviving_runs(keep: Sequence[bool]) -> list[tuple[int, int]]:
    """Runs ``(first, end)`` of consecutive kept row groups."""
    runs: list[tuple[int, int]] = []
    for g, kept in enumerate(keep):
        if not kept:
            continue
        if runs and runs[-1][1] == g:
            runs[-1] = (runs[-1][0], g + 1)
        else:
            runs.append((g, g + 1))
    return runs


def segment_range(starts: Sequence[StreamStart], first: int, end: int, style: int,
                  stream_length: int, compressed: bool, block_size: int) -> tuple[int, int]:
    """The ``(offset, length)`` in the stored stream that row groups ``first .. end-1`` of a
    stream need (see the module docstring)."""
    begin = starts[first].chunk
    if end >= len(starts):
        return begin, stream_length - begin
    nxt = starts[end]
    needed = nxt.offset + (0 if style == BYTES else
                           MAX_BYTE_RUN_BYTES if style == BITS else MAX_INT_RUN_BYTES)
    if not compressed:
        stop = nxt.chunk + needed
    elif needed == 0:
        stop = nxt.chunk
    else:
        extra = math.ceil(needed / block_size) - 1  # chunks needed after the first
        stop = nxt.chunk + (extra + 1) * (block_size + HEADER_SIZE)
        later = _distinct_after(starts[end + 1:], nxt.chunk)
        if len(later) > extra:
            stop = min(stop, later[extra])
    stop = max(begin, min(stop, stream_length))
    return begin, stop - begin


def _distinct_after(starts: Iterable[StreamStart], chunk: int) -> list[int]:
    out: list[int] = []
    for s in starts:
        if s.chunk > chunk and (not out or s.chunk > out[-1]):
            out.append(s.chunk)
    return out


def decompress_complete(data: bytes | memoryview, kind: CompressionKind,
                        block_size: int, budget: Budget | None = None) -> bytes | memoryview:
    """Decompress the complete chunks at the start of ``data`` (a stream cut short: the last
    chunk may be incomplete, and is then left out), counting them against ``budget``."""
    view = memoryview(data)
    if kind == CompressionKind.NONE:
        return view
    return decompress_from(view[:complete_length(view, block_size)], kind, block_size, 0,
                           budget)


def slice_start(data: bytes | memoryview, start: StreamStart, where: str) -> memoryview:
    """The decompressed bytes of a stream from a row group's start.

    Raises:
        CorruptFileError: the position lies past the decompressed bytes.
    """
    view = memoryview(data)
    if start.offset > len(view):
        raise CorruptFileError(f"{where}: row index position {start.offset} lies past the "
                               f"{len(view)} decompressed bytes of its chunk")
    return view[start.offset:]
