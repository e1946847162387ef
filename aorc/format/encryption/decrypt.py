"""Reading with keys: the decrypted statistics of the tail and the decrypted streams of a
stripe, given the local keys a key provider decrypted (sans-I/O).

:func:`decrypted_tail` returns a :class:`~aorc.format.tail.FileTail` whose footer statistics
and Metadata hold the real values' statistics for the variants with keys, and which carries
the :class:`FileKeys`; :func:`keyed_layout` then swaps, in each stripe, the clear (masked)
streams and encodings of those columns for the variant's encrypted ones
(:class:`EncryptedStream`, decrypted by :func:`stream_bytes` as they are read). Columns
whose key the reader lacks keep their masked copy, as ORC Java reads them.

A wrong key cannot be told from a right one by AES/CTR: the file's encrypted statistics are
decrypted first and must decompress and parse, else :class:`~aorc.errors.DecryptionError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from aorc.errors import AorcError, CorruptFileError, DecryptionError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.encryption.cipher import FILE_STATISTICS, STRIPE_STATISTICS, ctr, stream_iv
from aorc.format.encryption.variants import EncryptionInfo, VariantInfo
from aorc.format.stripe import StreamInfo, variant_stream_layout
from aorc.format.tail import FileTail, StripeInfo, parse_compressed, section_limit

__all__ = [
    "EncryptedStream",
    "FileKeys",
    "decrypted_tail",
    "keyed_layout",
    "stream_bytes",
]


@dataclass(frozen=True, eq=False)
class FileKeys:
    """The local keys a reader decrypted: for each variant it has the master key of.

    Attributes:
        info: the file's encryption block.
        footer_keys: variant index -> the local key of its statistics.
        stripe_keys: ``(variant index, stripe index)`` -> the stripe's local key.
    """

    info: EncryptionInfo
    footer_keys: dict[int, bytes] = field(repr=False)
    stripe_keys: dict[tuple[int, int], bytes] = field(repr=False)

    @property
    def decrypted(self) -> frozenset[int]:
        """Indexes of the variants this reader decrypts."""
        return frozenset(self.footer_keys)

    def __repr__(self) -> str:
        return f"FileKeys(variants={sorted(self.decrypted)})"


@dataclass(frozen=True)
class EncryptedStream(StreamInfo):
    """A stream of an encryption variant, with what decrypts it."""

    key: bytes = field(default=b"", repr=False)
    iv: bytes = field(default=b"", repr=False)


def stream_bytes(stream: StreamInfo, raw: bytes | memoryview,
                 offset: int | None = None) -> bytes | memoryview:
    """The stream's stored bytes (or those of a piece of it starting at the absolute file
    ``offset``), decrypted when it is an :class:`EncryptedStream`."""
    if isinstance(stream, EncryptedStream):
        position = 0 if offset is None else offset - stream.offset
        return ctr(stream.key, stream.iv, raw, position)
    return raw


def _mismatch(tail: FileTail, variant: VariantInfo, what: str) -> DecryptionError:
    key = variant.key
    return DecryptionError(
        f"{tail.where()}: key {key.name!r} version {key.version} does not decrypt the "
        f"{what} of column {variant.root} ({_name(tail, variant.root)}): wrong key or version")


def _name(tail: FileTail, column: int) -> str:
    path: list[str] = []
    node = tail.schema
    while node.column_id != column:
        for name, child in zip(node.field_names or [str(i) for i in range(len(node.children))],
                               node.children, strict=False):
            if child.column_id <= column <= child.max_column_id:
                path.append(name)
                node = child
                break
        else:
            break
    return ".".join(path) or "root"


def _open(tail: FileTail, variant: VariantInfo, key: bytes, iv: bytes, data: bytes,
          cls: type[pb.FileStatistics] | type[pb.ColumnarStripeStatistics],
          what: str) -> pb.FileStatistics | pb.ColumnarStripeStatistics:
    plain = ctr(key, iv, data)
    try:
        msg = parse_compressed(cls, plain, tail.compression, tail.block_size, what,
                               limit=section_limit(tail.file_length))
    except AorcError as exc:
        raise _mismatch(tail, variant, what) from exc
    return msg


def decrypted_tail(tail: FileTail, keys: FileKeys, stripe_stats: bytes) -> FileTail:
    """The tail as a reader with ``keys`` sees it: the real values' file and stripe
    statistics for the decrypted variants, and ``keys`` for the stripes.

    Args:
        tail: the file's tail.
        keys: the decrypted local keys.
        stripe_stats: the encrypted stripe statistics (``keys.info.stripe_statistics_length``
            bytes just before the Metadata).

    Raises:
        DecryptionError: a key does not decrypt its variant's statistics.
        CorruptFileError: decrypted statistics that do not fit the schema or stripes.
    """
    info = keys.info
    footer = pb.Footer()
    footer.CopyFrom(tail.footer)
    meta = None
    if tail.metadata is not None:  # a copy: the clear tail keeps its masked statistics
        meta = pb.Metadata()
        meta.CopyFrom(tail.metadata)
    n_stripes = len(tail.stripes)
    offset = 0
    for v in info.variants:
        key = keys.footer_keys.get(v.index)
        if key is not None and v.file_statistics:
            iv = stream_iv(v.root, FILE_STATISTICS, n_stripes + 1)
            stats = _open(tail, v, key, iv, v.file_statistics, pb.FileStatistics,
                          "file statistics")
            assert isinstance(stats, pb.FileStatistics)
            if len(stats.column) != len(v.columns):
                raise _mismatch(tail, v, "file statistics")
            for i, s in enumerate(stats.column):
                if v.root + i < len(footer.statistics):
                    footer.statistics[v.root + i].CopyFrom(s)
        for column, length in v.stripe_statistics:
            data = stripe_stats[offset:offset + length]
            offset += length
            if key is None or meta is None:
                continue
            iv = stream_iv(column, STRIPE_STATISTICS, n_stripes + 1)
            col = _open(tail, v, key, iv, data, pb.ColumnarStripeStatistics,
                        f"stripe statistics of column {column}")
            assert isinstance(col, pb.ColumnarStripeStatistics)
            if len(col.colStats) != len(meta.stripeStats):
                raise _mismatch(tail, v, f"stripe statistics of column {column}")
            for stripe, s in zip(meta.stripeStats, col.colStats, strict=True):
                if column < len(stripe.colStats):
                    stripe.colStats[column].CopyFrom(s)
    out = dataclasses.replace(tail, footer=footer, decryption=keys)
    if meta is not None:
        out.__dict__["metadata"] = meta  # the cached_property's slot: the decrypted copy
    return out


def keyed_layout(tail: FileTail, stripe: StripeInfo, footer: pb.StripeFooter,
                 layout: Sequence[StreamInfo], columns: Container[int] | None = None,
                 ) -> tuple[pb.StripeFooter, list[StreamInfo]]:
    """The stripe's footer and streams as a reader with the tail's keys reads them: for each
    decrypted variant, its encodings and its (encrypted) streams instead of the masked ones.

    Args:
        tail: the tail from :func:`decrypted_tail` (unchanged when it carries no keys).
        stripe: the stripe.
        footer: its parsed footer.
        layout: its clear streams (:func:`aorc.format.stripe.stream_layout`).
        columns: only the streams of these columns are wanted (``None``: all).

    Raises:
        CorruptFileError: the footer's encryption variants do not match the file's.
    """
    keys: FileKeys | None = tail.decryption
    if keys is None or not keys.decrypted:
        return footer, list(layout)
    info = keys.info
    if len(footer.encryption) != len(info.variants):
        raise CorruptFileError(f"stripe {stripe.index}: {len(footer.encryption)} encryption "
                               f"variants in the footer, {len(info.variants)} in the file")
    out_footer = pb.StripeFooter()
    out_footer.CopyFrom(footer)
    hidden: set[int] = set()
    for v in info.variants:
        if v.index not in keys.decrypted:
            continue
        encodings = footer.encryption[v.index].encoding
        if len(encodings) != len(v.columns):
            raise CorruptFileError(f"stripe {stripe.index}: variant {v.index} has "
                                   f"{len(encodings)} encodings for {len(v.columns)} columns")
        for i, c in enumerate(v.columns):
            out_footer.columns[c].CopyFrom(encodings[i])
        hidden.update(v.columns)
    out = [s for s in layout if s.column not in hidden]
    stripe_id = info.stripe_ids[stripe.index]
    for s in variant_stream_layout(stripe, footer):
        assert s.variant is not None
        key = keys.stripe_keys.get((s.variant, stripe.index))
        if key is None or (columns is not None and s.column not in columns):
            continue
        if s.column not in hidden:
            raise CorruptFileError(f"stripe {stripe.index}: variant {s.variant} has a stream "
                                   f"of column {s.column}, outside its columns")
        out.append(EncryptedStream(s.column, s.kind, s.offset, s.length, s.variant, key=key,
                                   iv=stream_iv(s.column, s.kind, stripe_id)))
    return out_footer, out
