"""Stripe structure: the stripe footer, where each stream lies, byte ranges for a projection.

A stripe is ``index streams | data streams | stripe footer``. The footer lists the streams in
the order they are stored, from the stripe's first byte: index streams (ROW_INDEX,
BLOOM_FILTER*) then data streams. In files with encrypted columns the footer's list holds the
unencrypted streams plus ``ENCRYPTED_INDEX``/``ENCRYPTED_DATA`` placeholders covering the
encrypted ones, which are listed per encryption variant (``StripeFooter.encryption``); as in
ORC Java, encrypted index streams follow the unencrypted index streams and encrypted data
streams follow the unencrypted data streams. :func:`stream_layout` gives the unencrypted
streams, :func:`variant_stream_layout` the encrypted ones (they can only be read with keys).
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.tail import (
    FileTail,
    StripeInfo,
    parse_compressed,
    section_limit,
    unknown_enum_value,
)

__all__ = [
    "DATA_KINDS",
    "INDEX_KINDS",
    "StreamInfo",
    "data_ranges",
    "index_ranges",
    "parse_bloom_filter_index",
    "parse_row_index",
    "parse_stripe_footer",
    "stream_layout",
    "variant_stream_layout",
]

K = pb.Stream.Kind
#: Stream kinds a column decoder reads (the data area).
DATA_KINDS = frozenset({K.PRESENT, K.DATA, K.LENGTH, K.DICTIONARY_DATA, K.DICTIONARY_COUNT,
                        K.SECONDARY})
#: Stream kinds of the index area.
INDEX_KINDS = frozenset({K.ROW_INDEX, K.BLOOM_FILTER, K.BLOOM_FILTER_UTF8})
_PLACEHOLDERS = frozenset({K.ENCRYPTED_INDEX, K.ENCRYPTED_DATA})
#: Kinds ORC Java places in the index area (for laying out encrypted streams).
_JAVA_INDEX_AREA = INDEX_KINDS | {K.DICTIONARY_COUNT, K.ENCRYPTED_INDEX}


@dataclass(frozen=True)
class StreamInfo:
    """One stream of a stripe.

    Attributes:
        column: the column id.
        kind: the ``pb.Stream.Kind`` value (may be a kind unknown to aorc, which readers skip).
        offset: absolute offset of the stream in the file.
        length: length of the stream in bytes (compressed, as stored).
        variant: the encryption variant holding the stream; ``None`` when unencrypted.
    """

    column: int
    kind: int
    offset: int
    length: int
    variant: int | None = None

    @property
    def end(self) -> int:
        """Absolute offset just past the stream."""
        return self.offset + self.length


def _where(tail: FileTail, stripe: StripeInfo | None) -> str:
    return tail.where() + ("" if stripe is None else f", stripe {stripe.index}")


def parse_stripe_footer(data: bytes | memoryview, tail: FileTail,
                        stripe: StripeInfo | None = None) -> pb.StripeFooter:
    """Decompress and parse a stripe footer, and check it against the schema.

    Args:
        data: the stripe footer bytes as stored (``stripe.footer_length`` bytes).
        tail: the file's tail (codec, schema).
        stripe: the stripe, for error messages.

    Raises:
        CorruptFileError: when the footer does not parse or has not one column encoding per
            column of the schema.
    """
    try:
        footer = parse_compressed(pb.StripeFooter, data, tail.compression, tail.block_size,
                                  "", limit=section_limit(tail.file_length))
    except CorruptFileError as exc:  # the context is built only when needed
        raise type(exc)(f"{_where(tail, stripe)}: stripe footer{exc}") from exc.__cause__
    zone = footer.writerTimezone
    if isinstance(zone, bytes):  # not UTF-8 (protobuf hands it out as bytes): repair as Java
        footer.writerTimezone = zone.decode("utf-8", errors="replace")
    if len(footer.columns) != tail.num_columns:
        raise CorruptFileError(f"{_where(tail, stripe)}: stripe footer: {len(footer.columns)} "
                               f"column encodings for a schema of {tail.num_columns} columns")
    if footer.encryption:
        for v, variant in enumerate(footer.encryption):
            if len(variant.encoding) > tail.num_columns:
                raise CorruptFileError(f"{_where(tail, stripe)}: stripe footer: encryption "
                                       f"variant {v} has {len(variant.encoding)} column "
                                       "encodings")
    return footer


def _stream_kind(s: pb.Stream) -> int:
    """The stream's kind; a value unknown to our schema is kept (readers skip it)."""
    if s.HasField("kind"):
        return int(s.kind)
    unknown = unknown_enum_value(s, 1)
    return int(K.PRESENT) if unknown is None else unknown  # absent: proto2 default, as Java


def stream_layout(stripe: StripeInfo, footer: pb.StripeFooter,
                  columns: Container[int] | None = None) -> list[StreamInfo]:
    """The stripe's unencrypted streams with their absolute offsets, in stored order
    (``columns``: only those of these columns; every stream is checked all the same).

    Streams are stored contiguously from the stripe's offset, in the footer's order.
    Encryption placeholders occupy space but are not returned.

    Raises:
        CorruptFileError: when a stream reaches past the stripe's index and data areas, or
            names a column the stripe footer has no encoding for.
    """
    n_columns = len(footer.columns)
    limit = stripe.footer_offset
    offset = stripe.offset
    out = []
    for i, s in enumerate(footer.streams):
        kind = s.kind
        if not kind and not s.HasField("kind"):  # unset, or a kind unknown to our schema
            kind = _stream_kind(s)
        length, column = s.length, s.column
        if offset + length > limit or (column >= n_columns and kind not in _PLACEHOLDERS):
            _check_stream(stripe, i, s, kind, offset, limit, n_columns, None)  # raises
        if (columns is None or column in columns) and kind not in _PLACEHOLDERS:
            out.append(StreamInfo(column, kind, offset, length))
        offset += length
    return out


def _check_stream(stripe: StripeInfo, i: int, s: pb.Stream, kind: int, offset: int,
                  limit: int, n_columns: int, variant: int | None) -> None:
    if offset + s.length <= limit and (kind in _PLACEHOLDERS or s.column < n_columns):
        return  # the common case, with no message built
    where = f"stripe {stripe.index}" + ("" if variant is None else f" variant {variant}")
    if offset + s.length > limit:
        raise CorruptFileError(
            f"{where}: stream {i} (column {s.column}, kind {kind}) at {offset} of length "
            f"{s.length} runs past the stripe data end {limit}")
    if kind not in _PLACEHOLDERS and s.column >= n_columns:
        raise CorruptFileError(f"{where}: stream {i} (kind {kind}) names column {s.column} "
                               f"but the stripe has {n_columns} columns")


def variant_stream_layout(stripe: StripeInfo, footer: pb.StripeFooter) -> list[StreamInfo]:
    """The stripe's encrypted streams (``StreamInfo.variant`` set), laid out as ORC Java does.

    Encrypted index streams (all variants, in order) follow the unencrypted index streams;
    encrypted data streams follow the unencrypted data streams.

    Raises:
        CorruptFileError: as :func:`stream_layout`.
    """
    if not footer.encryption:
        return []
    main = [(_stream_kind(s), s.length) for s in footer.streams]
    index_len = sum(n for k, n in main if k in _JAVA_INDEX_AREA and k not in _PLACEHOLDERS)
    data_len = sum(n for k, n in main if k not in _JAVA_INDEX_AREA and k not in _PLACEHOLDERS)
    n_columns = len(footer.columns)
    limit = stripe.footer_offset
    out = []
    offset = stripe.offset + index_len
    for index_area in (True, False):
        for v, variant in enumerate(footer.encryption):
            for i, s in enumerate(variant.streams):
                kind = _stream_kind(s)
                if (kind in _JAVA_INDEX_AREA) != index_area or kind in _PLACEHOLDERS:
                    continue
                _check_stream(stripe, i, s, kind, offset, limit, n_columns, v)
                out.append(StreamInfo(s.column, kind, offset, s.length, v))
                offset += s.length
        offset += data_len if index_area else 0
    return out


def _ranges(layout: Iterable[StreamInfo], columns: AbstractSet[int],
            kinds: Iterable[int]) -> list[tuple[int, int]]:
    wanted = frozenset(kinds)
    spans = sorted((s.offset, s.end) for s in layout
                   if s.column in columns and s.kind in wanted and s.length > 0)
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end - start) for start, end in merged]


def data_ranges(layout: Iterable[StreamInfo],
                columns: AbstractSet[int]) -> list[tuple[int, int]]:
    """``(offset, length)`` byte ranges of the data streams of ``columns``, adjacent merged.

    Data streams are those in :data:`DATA_KINDS`; empty streams are left out.
    """
    return _ranges(layout, columns, DATA_KINDS)


def index_ranges(layout: Iterable[StreamInfo], columns: AbstractSet[int],
                 kinds: Iterable[int] = (K.ROW_INDEX,)) -> list[tuple[int, int]]:
    """``(offset, length)`` ranges of the index streams of ``kinds`` (ROW_INDEX by default,
    BLOOM_FILTER / BLOOM_FILTER_UTF8) of ``columns``, adjacent ranges merged."""
    return _ranges(layout, columns, kinds)


def parse_row_index(data: bytes | memoryview, tail: FileTail, *,
                    where: str = "row index") -> pb.RowIndex:
    """Decompress and parse a ROW_INDEX stream (at most
    :func:`~aorc.format.tail.section_limit` bytes once decompressed).

    Raises:
        CorruptFileError: when the stream does not decompress or parse.
    """
    return parse_compressed(pb.RowIndex, data, tail.compression, tail.block_size,
                            f"{tail.where()}: {where}", limit=section_limit(tail.file_length))


def parse_bloom_filter_index(data: bytes | memoryview, tail: FileTail, *,
                             where: str = "bloom filter index") -> pb.BloomFilterIndex:
    """Decompress and parse a BLOOM_FILTER or BLOOM_FILTER_UTF8 stream.

    Raises:
        CorruptFileError: when the stream does not decompress or parse.
    """
    return parse_compressed(pb.BloomFilterIndex, data, tail.compression, tail.block_size,
                            f"{tail.where()}: {where}")
