"""Assembling ORC files by hand, for inputs no writer makes (see :mod:`fuzz.hostile`).

A file is given as its types (``orc_proto.Type`` messages, column ids in pre-order) and its
stripes, each a row count, the streams' bytes in the order they are laid out, the column
encodings and optionally a writer time zone. Streams are given decompressed and framed here
(:func:`frame`), or already framed (chunk by chunk, by the caller) when the framing itself is
the point. The footer and PostScript are written from the layout, with hooks to damage them.

The integer encoders are the specification's simplest forms (RLE v2 DIRECT runs of 64-bit
values, DELTA runs of a constant step), written here independently of aorc's encoders.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import cramjam
from helpers.varints import varint, zigzag

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import (
    DEFAULT_BLOCK_SIZE,
    CompressionKind,
    compress_stream,
)

__all__ = ["K", "Stream", "Stripe", "chunk", "delta_runs", "direct_v2", "frame", "orc_file",
           "primitive", "struct", "varint", "zigzag"]

K = pb.Stream.Kind
MAGIC = b"ORC"


def direct_v2(values: Iterable[int], signed: bool) -> bytes:
    """Integer RLE v2 made of DIRECT runs of 64-bit big-endian values (width code 31)."""
    items = list(values)
    out = bytearray()
    for start in range(0, len(items), 512):
        run = items[start:start + 512]
        out += ((1 << 14) | (31 << 9) | (len(run) - 1)).to_bytes(2, "big")
        for v in run:
            out += ((zigzag(v) if signed else v) % 2**64).to_bytes(8, "big")
    return bytes(out)


def delta_runs(count: int, first: int, step: int, signed: bool, run: int = 512) -> bytes:
    """Integer RLE v2 DELTA runs with a fixed step (width 0): ``first, first + step, ...``,
    ``count`` values, ``run`` (at most 512) per run; 4 to 12 bytes per run."""
    out = bytearray()
    value = first
    while count > 0:
        n = min(run, count)
        if n == 1:  # a DELTA run holds at least two values: a DIRECT run of one
            out += direct_v2([value], signed)
            break
        out += bytes([0xC0 | ((n - 1) >> 8), (n - 1) & 0xFF])
        out += varint(zigzag(value) if signed else value) + varint(zigzag(step))
        value += step * n
        count -= n
    return bytes(out)


def chunk(body: bytes, original: bool) -> bytes:
    """One compression chunk: the 3-byte header (length, original flag) and the body."""
    return ((len(body) << 1) | original).to_bytes(3, "little") + body


def frame(plain: bytes, kind: CompressionKind, block_size: int = DEFAULT_BLOCK_SIZE) -> bytes:
    """ORC's chunk framing of ``plain`` for ``kind``: aorc's own for the codecs it writes,
    brotli chunks (cramjam) where smaller, original chunks for LZO (which cannot be written)."""
    if kind == CompressionKind.NONE:
        return plain
    if kind not in (CompressionKind.LZO, CompressionKind.BROTLI):
        return compress_stream(plain, kind, block_size)
    out = bytearray()
    for start in range(0, len(plain), block_size):
        piece = plain[start:start + block_size]
        packed = bytes(cramjam.brotli.compress(piece)) if kind == CompressionKind.BROTLI \
            else piece
        out += chunk(packed, False) if len(packed) < len(piece) else chunk(piece, True)
    return bytes(out)


def struct(fields: Sequence[tuple[str, int]]) -> pb.Type:
    """A struct type of the given (name, column id) fields."""
    return pb.Type(kind=pb.Type.STRUCT, subtypes=[c for _, c in fields],
                   fieldNames=[n for n, _ in fields])


def primitive(kind: int, **attrs: int) -> pb.Type:
    """A type without children (``pb.Type.LONG``, ``DECIMAL`` with precision and scale, ...)."""
    return pb.Type(kind=kind, **attrs)


@dataclass
class Stream:
    """A stream of a stripe: decompressed bytes, or stored bytes when ``framed``."""

    column: int
    kind: int
    data: bytes
    framed: bool = False


@dataclass
class Stripe:
    """A stripe: row count, streams in file order, encodings (kinds or messages), zone."""

    rows: int
    streams: list[Stream]
    encodings: Sequence[int | pb.ColumnEncoding]
    timezone: str | None = None


FooterHook = Callable[[pb.Footer], None]


def orc_file(types: Sequence[pb.Type], stripes: Sequence[Stripe], *,
             compression: CompressionKind = CompressionKind.NONE,
             block_size: int = DEFAULT_BLOCK_SIZE, footer_hook: FooterHook | None = None,
             framed_footer: Callable[[bytes], bytes] | None = None) -> bytes:
    """A whole ORC file (format 0.12, no row index, no statistics).

    Args:
        types: the type tree, root first.
        stripes: the stripes in file order.
        compression: the codec of every stream and of the footers.
        block_size: the compression block size written in the PostScript.
        footer_hook: changes the Footer message before it is serialized.
        framed_footer: frames the serialized Footer instead of :func:`frame` (e.g. to build
            it of odd chunks).
    """
    out = bytearray(MAGIC)
    footer = pb.Footer(headerLength=len(MAGIC), types=list(types), rowIndexStride=0)
    for s in stripes:
        offset = len(out)
        stored = [st.data if st.framed else frame(st.data, compression, block_size)
                  for st in s.streams]
        for data in stored:
            out += data
        data_length = len(out) - offset
        stripe_footer = pb.StripeFooter(
            streams=[pb.Stream(kind=st.kind, column=st.column, length=len(data))
                     for st, data in zip(s.streams, stored, strict=True)],
            columns=[e if isinstance(e, pb.ColumnEncoding) else pb.ColumnEncoding(kind=e)
                     for e in s.encodings])
        if s.timezone is not None:
            stripe_footer.writerTimezone = s.timezone
        raw = frame(stripe_footer.SerializeToString(), compression, block_size)
        out += raw
        footer.stripes.append(pb.StripeInformation(
            offset=offset, indexLength=0, dataLength=data_length, footerLength=len(raw),
            numberOfRows=s.rows))
    footer.contentLength = len(out)
    footer.numberOfRows = sum(s.rows for s in stripes)
    if footer_hook is not None:
        footer_hook(footer)
    plain = footer.SerializeToString()
    raw_footer = framed_footer(plain) if framed_footer else frame(plain, compression, block_size)
    out += raw_footer
    ps = pb.PostScript(footerLength=len(raw_footer), compression=int(compression),
                       version=[0, 12], metadataLength=0, writerVersion=9, magic="ORC")
    if compression != CompressionKind.NONE:
        ps.compressionBlockSize = block_size
    ps_raw = ps.SerializeToString()
    return bytes(out + ps_raw + bytes([len(ps_raw)]))
