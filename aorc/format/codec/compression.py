"""ORC compression: the chunk framing of compressed streams and the codecs inside it.

A compressed ORC stream is a sequence of chunks. Each starts with a 3-byte little-endian header
``h``: ``h & 1`` says the chunk is stored as is ("original"), ``h >> 1`` is the length of the
chunk body that follows. A writer cuts the uncompressed stream every ``block_size`` bytes
(the PostScript's ``compressionBlockSize``), compresses each piece on its own and keeps the
original bytes when compression does not make them smaller. Codecs: ZLIB is raw deflate,
SNAPPY and LZ4 are raw blocks (no framing, no stored size), ZSTD is zstd frames, LZO is an
LZO1X block, BROTLI a brotli stream.

Limits and decisions:

* ``MAX_BLOCK_SIZE`` is ``2**23 - 1``. The header's length field has 23 bits, and ORC Java
  (``ReaderImpl.checkCompressionBlockSize``, ``OutStream.assertBufferSizeValid``) and ORC C++
  (``getCompressionBlockSize``, ``Writer``) refuse block sizes of ``2**23`` or more, and zero,
  both when reading and writing. We do the same: such a block size is a corrupt file (and a
  SchemaError when asked to write it).
* Every chunk, original or compressed, must be at most ``block_size`` bytes long in the file
  (ORC Java refuses longer chunks; ORC C++ longer compressed ones), and must decompress to at
  most ``block_size`` bytes. Output is never allocated beyond ``block_size`` per chunk (a
  snappy chunk's declared size and a zstd frame's content size are checked first).
* A chunk of length zero is empty (ORC C++ skips it).
* Trailing bytes after the end of a deflate stream inside a chunk are ignored, as ORC C++
  does (brotli's are too); a deflate stream without its final block is corrupt, as in ORC
  C++. Zstd chunks may hold several frames (``ZSTD_decompressDCtx``, used by ORC Java and
  C++, accepts that) but nothing else; zstd's default window limit (128 MiB) applies.
* LZO can be read, not written. Zstd contexts are kept per thread (they are not thread safe);
  every function here may run in worker threads, and the codecs release the GIL.
* Work is proportional to the bytes: LZO and brotli decompress into a scratch buffer of the
  block size kept per thread (allocated once, never zero-filled again), and only what a chunk
  produces is copied out; a chunk of no output costs nothing like the block size.
* A stream's total output is bounded by a :class:`Budget` when the caller gives one (a
  reader's ``max_decoded_bytes``; a file's metadata sections get a limit from the file's
  length): decompressing stops as soon as the chunks decoded so far exceed it, so no more
  than one block per thread is produced beyond the limit, and declared sizes
  (:func:`recorded_size`) are checked against it before anything is allocated.
"""

from __future__ import annotations

import enum
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import cramjam
import lz4.block
import zstandard

from aorc.errors import CorruptFileError, SchemaError, UnsupportedFeatureError
from aorc.format.codec import _lzo
from aorc.format.codec.budget import DEFAULT_MAX_DECODED_BYTES, Budget

__all__ = [
    "CODECS",
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_MAX_DECODED_BYTES",
    "HEADER_SIZE",
    "MAX_BLOCK_SIZE",
    "Budget",
    "Codec",
    "CompressionKind",
    "SizeMismatch",
    "chunk_offsets",
    "codec_named",
    "codec_of",
    "complete_length",
    "compress_stream",
    "compressed_position",
    "decompress_from",
    "decompress_into",
    "decompress_stream",
    "decompressed_chunks",
    "default_level",
    "recorded_size",
    "split_chunks",
    "writable_names",
]

HEADER_SIZE = 3
"""Bytes of a chunk header."""
MAX_BLOCK_SIZE = (1 << 23) - 1
"""Largest compression block size ORC Java and C++ accept (the header's 23-bit length)."""
DEFAULT_BLOCK_SIZE = 256 * 1024
"""Block size of ORC Java (``orc.compress.size``) and of files without one in the PostScript."""

BytesLike = Any  # bytes, bytearray, memoryview or any other object with the buffer protocol


class CompressionKind(enum.IntEnum):
    """ORC's codecs; the values are those of ``orc_proto.CompressionKind``."""

    NONE = 0
    ZLIB = 1
    SNAPPY = 2
    LZO = 3
    LZ4 = 4
    ZSTD = 5
    BROTLI = 6


# Stream kinds (orc_proto.Stream.Kind) as ORC Java's writer groups them to pick codec levels.
_TEXT_STREAMS = frozenset({1, 3, 7, 8})  # DATA, DICTIONARY_DATA, BLOOM_FILTER, BLOOM_FILTER_UTF8
_BINARY_STREAMS = frozenset({0, 2, 4, 5, 6})  # PRESENT, LENGTH, DICTIONARY_COUNT, SECONDARY,
# ROW_INDEX


def default_level(kind: CompressionKind, stream_kind: int | None = None) -> int | None:
    """The codec level ORC Java's writer uses, with its default settings.

    ORC Java tunes the codec per stream (``SerializationUtils.getCustomizedCodec``, default
    ``orc.compression.strategy=SPEED``): zlib level 6 (``Deflater.DEFAULT_COMPRESSION``) for
    the footer and metadata, 2 for DATA/DICTIONARY_DATA/bloom filter streams and 1 for
    PRESENT/LENGTH/DICTIONARY_COUNT/SECONDARY/ROW_INDEX; brotli quality 11, 1 and 0 likewise;
    zstd level 3 (``orc.compression.zstd.level``) for everything.

    Args:
        kind: the codec.
        stream_kind: an ``orc_proto.Stream.Kind`` value, or None for file-level structures
            (footer, metadata, stripe footers).

    Returns:
        The level, or None for codecs without levels (SNAPPY, LZ4, LZO, NONE).
    """
    return codec_of(CompressionKind(kind)).level(stream_kind)


# --------------------------------------------------------------------------- decompression


class _ChunkError(Exception):
    """A chunk's contents are wrong; re-raised as CorruptFileError with its position."""


_codec_state = threading.local()  # per-thread zstd contexts (they are not thread safe)


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    dctx: zstandard.ZstdDecompressor | None = getattr(_codec_state, "dctx", None)
    if dctx is None:
        # zstd's default window limit (128 MiB) applies: larger windows are refused.
        dctx = zstandard.ZstdDecompressor()
        _codec_state.dctx = dctx
    return dctx


def _inflate(chunk: memoryview, block_size: int) -> BytesLike:
    inflater = zlib.decompressobj(-15)
    out = inflater.decompress(chunk, block_size + 1)
    if len(out) > block_size:
        raise _ChunkError(f"it expands beyond the block size of {block_size} bytes")
    if not inflater.eof:
        raise _ChunkError("its deflate data ends before the final block")
    return out


def _unsnappy(chunk: memoryview, block_size: int) -> BytesLike:
    size = cramjam.snappy.decompress_raw_len(chunk)
    if size > block_size:
        raise _ChunkError(f"it declares {size} bytes, more than the block size {block_size}")
    out = bytearray(size)
    written = cramjam.snappy.decompress_raw_into(chunk, out)
    if written != size:
        raise _ChunkError(f"it declares {size} bytes but holds {written}")
    return out


def _unlz4(chunk: memoryview, block_size: int) -> BytesLike:
    # Fails (LZ4BlockError) when the output would exceed block_size.
    return lz4.block.decompress(chunk, uncompressed_size=block_size)


def _unzstd(chunk: memoryview, block_size: int) -> BytesLike:
    dctx = _zstd_decompressor()
    try:
        size = zstandard.frame_content_size(chunk)
    except zstandard.ZstdError:
        size = 0  # not a zstd frame at the start: let the frame walk below report it
    if size > block_size:
        raise _ChunkError(f"it declares {size} bytes, more than the block size {block_size}")
    if size != 0:
        # The usual chunk: exactly one frame (size -1 = not recorded: bounded by block_size).
        try:
            return dctx.decompress(chunk, max_output_size=block_size, allow_extra_data=False)
        except zstandard.ZstdError:
            pass  # several frames, skippable frames or damage: decode frame by frame
    parts = []
    room = block_size
    for frame in _zstd_frames(chunk):
        size = zstandard.frame_content_size(frame)
        if size > room:
            raise _ChunkError(f"it expands beyond the block size of {block_size} bytes")
        if size == 0:
            continue
        part = dctx.decompress(frame, max_output_size=room, allow_extra_data=False)
        room -= len(part)
        parts.append(part)
    return b"".join(parts)


def _zstd_frames(chunk: memoryview) -> Iterator[memoryview]:
    """Split a chunk into its zstd frames (RFC 8878), dropping skippable frames."""
    pos, end = 0, len(chunk)
    while pos < end:
        if end - pos < 8:
            raise _ChunkError(f"it has {end - pos} stray bytes at offset {pos}")
        magic = int.from_bytes(chunk[pos : pos + 4], "little")
        if magic & 0xFFFFFFF0 == 0x184D2A50:  # skippable frame: magic, 4-byte size, data
            pos += 8 + int.from_bytes(chunk[pos + 4 : pos + 8], "little")
            continue
        params = zstandard.get_frame_parameters(chunk[pos:])
        block = pos + zstandard.frame_header_size(chunk[pos:])
        last = False
        while not last:
            if end - block < 3:
                raise _ChunkError(f"its zstd frame at offset {pos} is truncated")
            header = int.from_bytes(chunk[block : block + 3], "little")
            last, block_type = bool(header & 1), (header >> 1) & 3
            if block_type == 3:
                raise _ChunkError(f"its zstd frame at offset {pos} has a reserved block type")
            block += 3 + (1 if block_type == 1 else header >> 3)
        frame_end = block + (4 if params.has_checksum else 0)
        if frame_end > end:
            raise _ChunkError(f"its zstd frame at offset {pos} is truncated")
        yield chunk[pos:frame_end]
        pos = frame_end
    if pos > end:
        raise _ChunkError("its skippable zstd frame is truncated")


def _scratch(block_size: int) -> memoryview:
    """This thread's scratch buffer, ``block_size`` bytes long: allocated (and zero-filled)
    once per thread and grown to the largest block size seen, never cleared again."""
    buffer: bytearray | None = getattr(_codec_state, "scratch", None)
    if buffer is None or len(buffer) < block_size:
        buffer = _codec_state.scratch = bytearray(block_size)
    return memoryview(buffer)[:block_size]


def _unbrotli(chunk: memoryview, block_size: int) -> BytesLike:
    out = _scratch(block_size)
    try:
        written = cramjam.brotli.decompress_into(chunk, out)
    except cramjam.DecompressionError as exc:
        if "whole buffer" in str(exc):
            raise _ChunkError(f"it expands beyond the block size of {block_size} bytes") from exc
        raise
    return bytes(out[:written])


def _unlzo(chunk: memoryview, block_size: int) -> BytesLike:
    out = _scratch(block_size)
    return bytes(out[:_lzo.decompress_into(chunk, out)])


_CODEC_ERRORS = (
    _ChunkError,
    CorruptFileError,
    zlib.error,
    cramjam.DecompressionError,
    lz4.block.LZ4BlockError,
    zstandard.ZstdError,
)


def _byte_view(data: BytesLike) -> memoryview:
    view = memoryview(data)
    if view.format != "B" or view.ndim != 1:
        view = view.cast("B")
    return view


def _check_block_size(block_size: int) -> None:
    if not 0 < block_size <= MAX_BLOCK_SIZE:
        raise CorruptFileError(
            f"compression block size {block_size} is outside 1..{MAX_BLOCK_SIZE}"
        )


def _chunks(view: memoryview, start: int, block_size: int, *,
            complete_only: bool = False) -> Iterator[tuple[int, bool, int]]:
    """Yield (header offset, is original, body length) of each chunk from ``start`` on.

    This is the one parser of ORC's chunk headers (reading, row-group slicing and the
    writer's row-index positions all use it). With ``complete_only`` a stream cut short
    ends at its last complete chunk instead of raising.
    """
    pos, end = start, len(view)
    while pos < end:
        if end - pos < HEADER_SIZE:
            if complete_only:
                return
            raise CorruptFileError(
                f"compressed stream of {end} bytes: chunk header at offset {pos} is truncated"
            )
        header = view[pos] | view[pos + 1] << 8 | view[pos + 2] << 16
        length = header >> 1
        if length > end - pos - HEADER_SIZE:
            if complete_only:
                return
            raise CorruptFileError(
                f"compressed stream of {end} bytes: chunk at offset {pos} claims {length} "
                f"bytes, only {end - pos - HEADER_SIZE} follow"
            )
        if length > block_size:
            raise CorruptFileError(
                f"compressed stream: chunk at offset {pos} has {length} bytes, more than "
                f"the compression block size {block_size}"
            )
        yield pos, bool(header & 1), length
        pos += HEADER_SIZE + length


def decompress_from(
    data: BytesLike, kind: CompressionKind, block_size: int, chunk_offset: int,
    budget: Budget | None = None,
) -> bytes | memoryview:
    """Decompress a stream from the chunk whose header starts at ``chunk_offset``.

    A row-index position in a compressed stream is (chunk offset, offset in the decompressed
    bytes of that chunk, ...): decompress from the chunk, then skip the second number of bytes.
    For ``NONE`` the positions are plain byte offsets and this returns ``data[chunk_offset:]``.

    Args:
        data: the stream as stored in the file (any buffer).
        kind: the file's codec.
        block_size: the file's compression block size.
        chunk_offset: where the first chunk header to decode starts.
        budget: counts the decompressed bytes (not those of NONE, which are not copied).

    Returns:
        The decompressed bytes from that chunk to the end of the stream.

    Raises:
        CorruptFileError: bad offset, block size, chunk header or compressed data.
        ResourceLimitError: the output exceeds the ``budget``.
        UnsupportedFeatureError: an unknown codec.
    """
    view = _byte_view(data)
    if not 0 <= chunk_offset <= len(view):
        raise CorruptFileError(
            f"chunk offset {chunk_offset} is outside the stream of {len(view)} bytes"
        )
    kind = _kind(kind)
    if kind is CompressionKind.NONE:
        return view[chunk_offset:]
    _check_block_size(block_size)
    return _decode_chunks(view, kind, block_size, chunk_offset, budget)


def _decoded_parts(view: memoryview, kind: CompressionKind, block_size: int,
                   start: int, budget: Budget | None = None) -> Iterator[BytesLike]:
    """Each chunk's decompressed bytes (a view of ``view`` for an original chunk), counted
    against ``budget``."""
    decode = codec_of(kind).decompress
    assert decode is not None  # every codec but NONE decompresses
    for pos, original, length in _chunks(view, start, block_size):
        body = view[pos + HEADER_SIZE : pos + HEADER_SIZE + length]
        if original:
            if budget is not None:
                budget.take(length)
            yield body
        elif length:
            try:
                part = decode(body, block_size)
            except _CODEC_ERRORS as exc:
                raise CorruptFileError(
                    f"{kind.name} chunk at offset {pos} ({length} bytes) of a compressed "
                    f"stream cannot be decompressed: {exc}"
                ) from exc
            if budget is not None:
                budget.take(len(part))
            yield part


def _decode_chunks(
    view: memoryview, kind: CompressionKind, block_size: int, start: int,
    budget: Budget | None = None,
) -> bytes | memoryview:
    first: BytesLike | None = None
    out: bytearray | None = None
    for part in _decoded_parts(view, kind, block_size, start, budget):
        if first is None:
            first = part
        elif out is None:
            out = bytearray(first)
            out += part
        else:
            # Appending (realloc grows in place) frees each chunk's buffer for reuse at once:
            # about twice as fast as joining a list of large parts.
            out += part
    if out is not None:
        return memoryview(out)
    if first is None:
        return b""
    # bytes (zlib, lz4, zstd) or a view of an original chunk or of a bytearray output.
    return memoryview(first) if isinstance(first, bytearray) else first


def decompressed_chunks(data: BytesLike, kind: CompressionKind, block_size: int,
                        budget: Budget | None = None) -> list[BytesLike]:
    """Each chunk's decompressed bytes, not joined: a caller that decompresses pieces of one
    stream on several threads (see :func:`split_chunks`) joins them all at once. A ``budget``
    shared by the threads bounds their output together.

    Raises:
        CorruptFileError: a bad block size, chunk header or compressed data.
        ResourceLimitError: the output exceeds the ``budget``.
        UnsupportedFeatureError: an unknown codec.
    """
    view = _byte_view(data)
    kind = _kind(kind)
    if kind is CompressionKind.NONE:
        return [view] if len(view) else []
    _check_block_size(block_size)
    return [p for p in _decoded_parts(view, kind, block_size, 0, budget) if len(p)]


def recorded_size(data: BytesLike, kind: CompressionKind, block_size: int) -> int | None:
    """The decompressed size of a stream when every chunk records its own (original chunks,
    and zstd frames with a content size), without decompressing; else ``None``.

    A zstd chunk of several frames records only its first frame's size: :func:`decompress_into`
    finds the difference.

    Raises:
        CorruptFileError: a bad block size or chunk header.
        UnsupportedFeatureError: an unknown codec.
    """
    view = _byte_view(data)
    kind = _kind(kind)
    if kind is CompressionKind.NONE:
        return len(view)
    _check_block_size(block_size)
    total = 0
    for pos, original, length in _chunks(view, 0, block_size):
        if original or not length:
            total += length
            continue
        if kind is not CompressionKind.ZSTD:
            return None
        body = view[pos + HEADER_SIZE : pos + HEADER_SIZE + length]
        try:
            size = zstandard.frame_content_size(body)
        except zstandard.ZstdError:
            return None  # not a frame header: decompressing reports the damage
        if not 0 <= size <= block_size:
            return None  # not recorded (-1), or beyond the block size: checked when decoded
        total += size
    return total


class SizeMismatch(CorruptFileError):
    """A stream decompressed to another size than its chunks record (see
    :func:`decompress_into`); decompressing it whole gives the right bytes or the real error."""


def decompress_into(data: BytesLike, kind: CompressionKind, block_size: int,
                    out: memoryview) -> None:
    """Decompress a stream straight into ``out``, which must be exactly as long as its
    :func:`recorded_size`: no buffer per chunk survives the call and nothing is joined.

    Raises:
        SizeMismatch: the chunks decompress to another size than recorded (a zstd chunk of
            several frames, or damage).
        CorruptFileError: a bad block size, chunk header or compressed data.
        UnsupportedFeatureError: an unknown codec.
    """
    view = _byte_view(data)
    kind = _kind(kind)
    at = 0
    parts: Iterator[BytesLike] = (iter([view]) if kind is CompressionKind.NONE
                                  else _decoded_parts(view, kind, block_size, 0))
    for part in parts:
        n = len(part)
        if at + n > len(out):
            raise SizeMismatch(f"the stream decompresses to more than the {len(out)} bytes "
                               "its chunks record")
        out[at : at + n] = part
        at += n
    if at != len(out):
        raise SizeMismatch(f"the stream decompresses to {at} bytes, its chunks record "
                           f"{len(out)}")


def decompress_stream(
    data: BytesLike, kind: CompressionKind, block_size: int, budget: Budget | None = None
) -> bytes | memoryview:
    """Undo ORC's compression framing of a whole stream (or footer, metadata, ...).

    Args:
        data: the stream as stored in the file (any buffer; read-only is fine).
        kind: the file's codec. ``NONE`` returns ``data`` itself, unchanged.
        block_size: the file's compression block size; no chunk may exceed it.
        budget: bounds the decompressed bytes (see :class:`Budget`).

    Returns:
        The decompressed bytes. A single chunk's output is returned without a further copy
        (an original chunk as a memoryview of ``data``); several chunks are appended to one
        buffer, each copied once.

    Raises:
        CorruptFileError: a bad block size, chunk header or compressed data, or a chunk that
            decompresses to more than ``block_size`` bytes.
        ResourceLimitError: the output exceeds the ``budget``.
        UnsupportedFeatureError: an unknown codec.
    """
    if _kind(kind) is CompressionKind.NONE:
        return data  # type: ignore[no-any-return]
    return decompress_from(data, kind, block_size, 0, budget)


def _kind(kind: int) -> CompressionKind:
    try:
        return CompressionKind(kind)
    except ValueError:
        raise UnsupportedFeatureError(f"unknown compression kind {kind}") from None


def split_chunks(data: BytesLike, block_size: int, pieces: int) -> list[memoryview]:
    """Cut a compressed stream into at most ``pieces`` runs of whole chunks, of about equal
    compressed size, so that they can be decompressed on several threads.

    Every piece is itself a valid compressed stream, and the concatenation of the pieces'
    decompressed bytes is the stream's.

    Args:
        data: the stream as stored in the file.
        block_size: the file's compression block size.
        pieces: the most pieces wanted (at least 1).

    Returns:
        Views of ``data``, in order, none empty (an empty stream gives no piece).

    Raises:
        CorruptFileError: a bad block size or chunk header.
    """
    _check_block_size(block_size)
    view = _byte_view(data)
    target = -(-len(view) // max(1, pieces))
    out: list[memoryview] = []
    start = 0
    for pos, _, length in _chunks(view, 0, block_size):
        end = pos + HEADER_SIZE + length
        if end - start >= target:
            out.append(view[start:end])
            start = end
    if start < len(view):
        out.append(view[start:])
    return out


def chunk_offsets(data: BytesLike, block_size: int) -> list[int]:
    """Offsets of the chunk headers of a compressed stream, without decompressing it.

    :func:`compress_stream` cuts its input every ``block_size`` bytes, so the uncompressed
    byte ``p`` lies in chunk ``p // block_size``; :func:`compressed_position` turns that into
    the pair a row index records.

    Raises:
        CorruptFileError: a bad block size or chunk header.
    """
    _check_block_size(block_size)
    return [pos for pos, _, _ in _chunks(_byte_view(data), 0, block_size)]


def complete_length(data: BytesLike, block_size: int) -> int:
    """Bytes of the complete chunks at the start of a compressed stream that was cut short
    (a ranged read): the last chunk may be incomplete and is then not counted.

    Raises:
        CorruptFileError: a complete chunk longer than ``block_size``.
    """
    end = 0
    for pos, _, length in _chunks(_byte_view(data), 0, block_size, complete_only=True):
        end = pos + HEADER_SIZE + length
    return end


def compressed_position(offsets: list[int], block_size: int, position: int) -> tuple[int, int]:
    """Row-index position (chunk header offset, offset in its decompressed bytes).

    ``offsets`` are the :func:`chunk_offsets` of a stream written by :func:`compress_stream`
    with this ``block_size``; ``position`` is an offset in the uncompressed stream. Like ORC
    Java, a position on a chunk boundary points at the end of the earlier chunk (ORC Java
    starts a new chunk only when the next byte arrives).
    """
    if position < 0 or not offsets or position > len(offsets) * block_size:
        raise ValueError(f"position {position} is outside the compressed stream")
    index = max(position - 1, 0) // block_size
    return offsets[index], position - index * block_size


# --------------------------------------------------------------------------- compression


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    cache: dict[int, zstandard.ZstdCompressor] | None = getattr(_codec_state, "cctx", None)
    if cache is None:
        cache = _codec_state.cctx = {}
    cctx = cache.get(level)
    if cctx is None:
        # As ORC Java: content size recorded, no checksum.
        cctx = cache[level] = zstandard.ZstdCompressor(
            level=level, write_content_size=True, write_checksum=False
        )
    return cctx


def _encoder(kind: CompressionKind, level: int | None) -> Callable[[memoryview], BytesLike]:
    codec = codec_of(kind)
    if codec.compressor is None:
        raise UnsupportedFeatureError(f"writing {kind.name} compression is not supported")
    chosen = codec.level(None) if level is None else level
    return codec.compressor(0 if chosen is None else chosen)


def compress_stream(
    data: BytesLike, kind: CompressionKind, block_size: int, level: int | None = None
) -> bytes:
    """Compress a stream with ORC's chunk framing, as ORC Java's writer does.

    The input is cut every ``block_size`` bytes; a chunk whose compressed form is not smaller
    than the input is stored as original. An empty input gives an empty stream.

    Args:
        data: the uncompressed stream (any buffer).
        kind: the codec; ``NONE`` returns the bytes unchanged. LZO cannot be written.
        block_size: the compression block size, 1 to ``MAX_BLOCK_SIZE``.
        level: codec level; None uses :func:`default_level` of the codec (zlib 6, zstd 3,
            brotli 11). Ignored by SNAPPY and LZ4.

    Returns:
        The framed stream.

    Raises:
        SchemaError: a block size out of range or an unknown codec.
        UnsupportedFeatureError: LZO.
    """
    try:
        kind = CompressionKind(kind)
    except ValueError:
        raise SchemaError(f"unknown compression kind {kind}") from None
    view = _byte_view(data)
    if kind is CompressionKind.NONE:
        return bytes(view)
    if not 0 < block_size <= MAX_BLOCK_SIZE:
        raise SchemaError(f"compression block size {block_size} is outside 1..{MAX_BLOCK_SIZE}")
    encode = _encoder(kind, level)
    parts: list[BytesLike] = []
    for start in range(0, len(view), block_size):
        piece = view[start : start + block_size]
        packed = encode(piece)
        if len(packed) < len(piece):
            parts += [(len(packed) << 1).to_bytes(HEADER_SIZE, "little"), packed]
        else:
            parts += [(len(piece) << 1 | 1).to_bytes(HEADER_SIZE, "little"), piece]
    return b"".join(parts)


# --------------------------------------------------------------------------- the codec table


@dataclass(frozen=True)
class Codec:
    """One ORC codec: everything aorc knows about it, in one row of :data:`CODECS`.

    Attributes:
        name: the name writers take (``compression="zstd"``), lower case.
        kind: the PostScript's ``CompressionKind``.
        levels: the levels ORC Java's writer uses (see :func:`default_level`) for file
            structures (footer, metadata, stripe footers), text streams (DATA,
            DICTIONARY_DATA, bloom filters) and binary streams (PRESENT, LENGTH, ...);
            None for codecs without levels.
        decompress: (chunk body, block size) -> its decompressed bytes; None for NONE.
        compressor: level -> a function compressing one chunk; None when aorc cannot
            compress with the codec (LZO) or there is nothing to do (NONE).
        writable: whether aorc's writer offers the codec (``compression=`` accepts it).
        aliases: other names the writer accepts.
    """

    name: str
    kind: CompressionKind
    levels: tuple[int, int, int] | None
    decompress: Callable[[memoryview, int], BytesLike] | None
    compressor: Callable[[int], Callable[[memoryview], BytesLike]] | None
    writable: bool
    aliases: tuple[str, ...] = ()

    def level(self, stream_kind: int | None = None) -> int | None:
        """The level ORC Java uses for a stream kind (None: file structures)."""
        if self.levels is None:
            return None
        base, text, binary = self.levels
        if stream_kind in _TEXT_STREAMS:
            return text
        if stream_kind in _BINARY_STREAMS:
            return binary
        return base


def _zlib(level: int) -> Callable[[memoryview], BytesLike]:
    return lambda piece: zlib.compress(piece, level, -15)


def _lz4(level: int) -> Callable[[memoryview], BytesLike]:
    return lambda piece: lz4.block.compress(piece, store_size=False)


def _brotli(level: int) -> Callable[[memoryview], BytesLike]:
    return lambda piece: cramjam.brotli.compress(piece, level=level)


#: Every codec of the ORC specification, in ``CompressionKind`` order.
CODECS: tuple[Codec, ...] = (
    Codec("none", CompressionKind.NONE, None, None, None, True, ("uncompressed",)),
    Codec("zlib", CompressionKind.ZLIB, (6, 2, 1), _inflate, _zlib, True),
    Codec("snappy", CompressionKind.SNAPPY, None, _unsnappy,
          lambda level: cramjam.snappy.compress_raw, True),
    Codec("lzo", CompressionKind.LZO, None, _unlzo, None, False),
    Codec("lz4", CompressionKind.LZ4, None, _unlz4, _lz4, True),
    Codec("zstd", CompressionKind.ZSTD, (3, 3, 3), _unzstd,
          lambda level: _zstd_compressor(level).compress, True),
    Codec("brotli", CompressionKind.BROTLI, (11, 1, 0), _unbrotli, _brotli, False),
)
_BY_KIND = {c.kind: c for c in CODECS}
_BY_NAME = {name: c for c in CODECS for name in (c.name, *c.aliases)}


def codec_of(kind: CompressionKind) -> Codec:
    """The table row of a codec."""
    return _BY_KIND[kind]


def codec_named(name: str) -> Codec | None:
    """The codec called ``name`` (lower case, or an alias), or None."""
    return _BY_NAME.get(name)


def writable_names() -> list[str]:
    """The names (and aliases) the writer accepts for ``compression``."""
    return [name for name, c in _BY_NAME.items() if c.writable]
