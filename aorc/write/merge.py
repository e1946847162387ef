"""Merging ORC files by copying their stripes, without decoding or re-encoding a value.

A stripe is self-contained: its index streams, data streams and stripe footer locate
everything by offsets relative to the stripe's start, and its row-index positions too. So
files that agree on everything a stripe's bytes depend on can be merged by writing their
stripes one after the other into a new file and a new tail: the stripes' directory entries
at their new offsets, the stripe statistics copied, the file statistics merged (as ORC Java
merges them, :func:`aorc.format.columns.encode.statistics.merge_statistics`). Reading and
writing are streamed: a few megabytes of stripes are held at once, whatever the files' sizes.

What must agree (:func:`merge_blocker` says what does not): the type tree (field names and
type attributes included), the codec and compression block size, the row-index stride, the
format version, the writer and its version (a reader trusts statistics and bloom filters by
them; for writers other than aorc, the software version too) and the calendar. Callers
re-encode files that disagree.

Encrypted files merge as ORC Java's ``OrcFile.mergeFiles`` merges them, given ``keys=`` holding
every key they name: they must agree on their encryption block (keys and versions, masks,
variants); each source's stripes keep their bytes, their encryption stripe ids and the
source's encrypted local keys (carried on its first stripe, with ``encryptStripeId``), and
the merged footer gets new local keys (of the same master key versions) that encrypt the
variants' stripe and file statistics, decrypted from the sources and merged.

:class:`MergePlan` is the sans-I/O part (tails in, byte ranges to copy and the new tail
out); :func:`merge_files` is its async driver over aorc's stores.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aorc.errors import (
    AorcError,
    DecryptionError,
    ObjectChangedError,
    SchemaError,
    UnsupportedFeatureError,
)
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.compression import CompressionKind
from aorc.format.columns.encode.base import EncodeOptions
from aorc.format.columns.encode.statistics import merge_statistics, stats_class
from aorc.format.encryption import (
    FileKeys,
    LocalKeys,
    decrypted_tail,
    parse_encryption,
    resealed_block,
)
from aorc.format.statistics import ColumnStatistics, column_statistics_from_proto
from aorc.format.tail import TAIL_READ_SIZE, FileTail, NeedBytes, parse_tail
from aorc.format.types import to_proto
from aorc.io import Store, open_output, open_store
from aorc.io.output import Destination
from aorc.keys import KeyProvider, KeyVersion
from aorc.write.file import MAGIC, WRITER_CODE
from aorc.write.stripe import compress

__all__ = ["COPY_BYTES", "MergePlan", "MergeResult", "decrypt_statistics", "merge_blocker",
           "merge_files", "read_tail"]

#: Bytes of stripes read (and then written) at a time.
COPY_BYTES = 8 << 20
#: Codecs whose tails aorc can write (LZO is read-only).
_WRITABLE = frozenset({CompressionKind.NONE, CompressionKind.ZLIB, CompressionKind.SNAPPY,
                       CompressionKind.LZ4, CompressionKind.ZSTD})


def _agreement(tail: FileTail) -> tuple[Any, ...]:
    software = None if tail.writer == WRITER_CODE else tail.software_version
    return (tail.compression, tail.block_size if tail.compression != CompressionKind.NONE
            else None, tail.row_index_stride, tail.version, tail.writer, tail.writer_version,
            software, tail.calendar)


def _encryption_shape(tail: FileTail) -> tuple[Any, ...]:
    """What encrypted files must agree on to merge (ORC Java's ``readerIsCompatible``):
    keys and versions, masks and their columns, variants' keys and roots."""
    enc = tail.footer.encryption
    return (tuple((k.keyName, k.keyVersion, k.algorithm) for k in enc.key),
            tuple((m.name, tuple(m.maskParameters), tuple(m.columns)) for m in enc.mask),
            tuple((v.key, v.root) for v in enc.variants))


def merge_blocker(tails: Sequence[FileTail], keyed: bool = False) -> str | None:
    """Why these files cannot be merged by copying stripes (None: they can); ``keyed``:
    the files' encrypted statistics are decrypted (see :func:`merge_files`'s ``keys``)."""
    if not tails:
        return "no files"
    first = tails[0]
    names = ("codec", "compression block size", "row index stride", "format version",
             "writer", "writer version", "software version", "calendar")
    for t in tails:
        if t.has_encryption != first.has_encryption:
            return f"{t.source}: encrypted columns, {first.source} has none" \
                if t.has_encryption else f"{t.source}: no encrypted columns"
        if t.has_encryption and not keyed:
            return f"{t.source}: encrypted columns (merged only with keys= holding their keys)"
        if t.has_encryption and _encryption_shape(t) != _encryption_shape(first):
            return f"{t.source}: encryption keys, masks or variants differ from {first.source}'s"
        if t.compression not in _WRITABLE:
            return f"{t.source}: aorc cannot write {t.compression.name} tails"
        if t.schema != first.schema or list(to_proto(t.schema)) != list(to_proto(first.schema)):
            return f"{t.source}: type {t.schema} differs from {first.source}'s {first.schema}"
        for name, a, b in zip(names, _agreement(t), _agreement(first), strict=True):
            if a != b:
                return f"{t.source}: {name} {a!r} differs from {first.source}'s {b!r}"
    return None


@dataclass(frozen=True)
class MergeResult:
    """The merged file.

    Attributes:
        num_rows: its rows.
        size: its length in bytes.
        stripe_offsets: the byte offset of each stripe.
        statistics: its column statistics (by ORC column id), ``bytes_on_disk`` included.
    """

    num_rows: int
    size: int
    stripe_offsets: list[int]
    statistics: list[ColumnStatistics]


class MergePlan:
    """The sans-I/O part of a stripe-copy merge: which bytes of which file go where, and the
    new file's tail.

    Args:
        tails: the parsed tails of the files, in the order their stripes are written.
        metadata: the merged file's user metadata (default: the first file's).
        keyed: for encrypted files, each file's tail with its statistics decrypted (as
            :func:`decrypt_statistics` gives them), in ``tails``' order.
        local_keys: for encrypted files, the merged file's new local keys, one per variant.

    Raises:
        UnsupportedFeatureError: the files cannot be merged by copying (see
            :func:`merge_blocker`).
    """

    def __init__(self, tails: Sequence[FileTail],
                 metadata: Mapping[str, bytes] | None = None,
                 keyed: Sequence[FileTail] | None = None,
                 local_keys: LocalKeys | None = None) -> None:
        reason = merge_blocker(tails, keyed is not None and local_keys is not None)
        if reason is not None:
            raise UnsupportedFeatureError(f"cannot merge by copying stripes: {reason}")
        self.tails = list(tails)
        self._keyed = list(keyed) if keyed is not None and tails[0].has_encryption else None
        self._local_keys = local_keys
        variants = tails[0].footer.encryption.variants if self._keyed is not None else []
        #: per variant, its column ids
        self._variant_columns = [range(v.root, v.root + len(list(self._types_of(tails[0],
                                                                               v.root))))
                                 for v in variants]
        self._variant_stripes: list[list[list[pb.ColumnStatistics]]] = [
            [[] for _ in cols] for cols in self._variant_columns]
        self._variant_file: list[list[pb.ColumnStatistics | None]] = [
            [None for _ in cols] for cols in self._variant_columns]
        first = self.tails[0]
        self.metadata = dict(first.user_metadata if metadata is None else metadata)
        self._types = list(first.schema.walk())
        self._position = len(MAGIC)
        self._stripes: list[pb.StripeInformation] = []
        self._stripe_stats: list[pb.StripeStatistics] = []
        self._file_stats = [stats_class(t)[0](**stats_class(t)[1]).to_proto()
                            for t in self._types]
        self.num_rows = 0
        for i, tail in enumerate(self.tails):
            self._add(tail)
            if self._keyed is not None:
                self._add_variants(self._keyed[i])

    @staticmethod
    def _types_of(tail: FileTail, root: int) -> list[Any]:
        """The type nodes of the subtree rooted at column ``root``."""
        for t in tail.schema.walk():
            if t.column_id == root:
                return list(t.walk())
        raise UnsupportedFeatureError(f"{tail.where()}: a variant's root {root} is no column")

    def _add_variants(self, keyed: FileTail) -> None:
        """The real statistics of ``keyed``'s variants (decrypted), merged in."""
        meta = keyed.metadata
        assert meta is not None
        for v, cols in enumerate(self._variant_columns):
            for c, column in enumerate(cols):
                self._variant_stripes[v][c].extend(s.colStats[column] for s in meta.stripeStats)
                part = keyed.footer.statistics[column]
                total = self._variant_file[v][c]
                self._variant_file[v][c] = part if total is None else merge_statistics(
                    total, part, self._types[column])

    def _add(self, tail: FileTail) -> None:
        meta = tail.metadata
        if tail.stripes and (meta is None or len(meta.stripeStats) != len(tail.stripes)):
            raise UnsupportedFeatureError(f"{tail.where()}: no statistics for every stripe")
        info = parse_encryption(tail) if self._keyed is not None else None
        for k, s in enumerate(tail.stripes):
            self._stripes.append(pb.StripeInformation(
                offset=self._position, indexLength=s.index_length, dataLength=s.data_length,
                footerLength=s.footer_length, numberOfRows=s.num_rows))
            if info is not None:  # the source's stripe ids and local keys, as appendStripe
                proto = tail.footer.stripes[k]
                if k == 0 or proto.HasField("encryptStripeId"):
                    self._stripes[-1].encryptStripeId = info.stripe_ids[k]
                if k == 0 or proto.encryptedLocalKeys:
                    self._stripes[-1].encryptedLocalKeys.extend(info.stripe_keys[k])
            assert meta is not None
            self._stripe_stats.append(meta.stripeStats[k])
            self._position += s.length
            self.num_rows += s.num_rows
        stats = list(tail.footer.statistics)
        if len(stats) != len(self._types):
            raise UnsupportedFeatureError(f"{tail.where()}: file statistics of {len(stats)} "
                                          f"columns, the type has {len(self._types)}")
        self._file_stats = [merge_statistics(total, part, t) for total, part, t
                            in zip(self._file_stats, stats, self._types, strict=True)]

    def copies(self) -> list[list[tuple[int, int]]]:
        """Per file, the (offset, length) ranges to copy, in order."""
        return [[(s.offset, s.length) for s in tail.stripes] for tail in self.tails]

    @property
    def stripe_offsets(self) -> list[int]:
        """The stripes' offsets in the merged file."""
        return [s.offset for s in self._stripes]

    def tail(self) -> bytes:
        """The merged file's Metadata, Footer, PostScript and PostScript length."""
        first = self.tails[0]
        opts = EncodeOptions(compression=first.compression,
                             compression_block_size=first.block_size)
        prefix, block = b"", None
        if self._keyed is not None:
            assert self._local_keys is not None
            file_stats = [[s for s in per if s is not None] for per in self._variant_file]
            block, prefix = resealed_block(first.footer.encryption, self._local_keys,
                                           len(self._stripes), file_stats,
                                           self._variant_stripes,
                                           lambda raw: compress(raw, opts, None))
        metadata = compress(pb.Metadata(stripeStats=self._stripe_stats).SerializeToString(),
                            opts, None)
        footer = pb.Footer(
            headerLength=len(MAGIC), contentLength=self._position, stripes=self._stripes,
            types=list(first.footer.types),
            metadata=[pb.UserMetadataItem(name=k, value=v) for k, v in self.metadata.items()],
            numberOfRows=self.num_rows, statistics=self._file_stats,
            rowIndexStride=first.row_index_stride)
        for name in ("writer", "calendar", "softwareVersion"):
            if first.footer.HasField(name):
                setattr(footer, name, getattr(first.footer, name))
        if block is not None:
            footer.encryption.CopyFrom(block)
        footer_bytes = compress(footer.SerializeToString(), opts, None)
        ps = pb.PostScript(footerLength=len(footer_bytes), compression=first.postscript.
                           compression, version=list(first.postscript.version),
                           metadataLength=len(metadata), magic=MAGIC.decode())
        if first.postscript.HasField("writerVersion"):
            ps.writerVersion = first.postscript.writerVersion
        if first.compression != CompressionKind.NONE:
            ps.compressionBlockSize = first.block_size
        if block is not None:
            ps.stripeStatisticsLength = len(prefix)
        ps_bytes: bytes = ps.SerializeToString()
        return prefix + metadata + footer_bytes + ps_bytes + bytes([len(ps_bytes)])

    def result(self, size: int) -> MergeResult:
        """What the merged file is, once written (``size``: its length)."""
        first = self.tails[0]
        stats = [column_statistics_from_proto(p, t, writer_version=first.writer_version,
                                              writer=first.writer)
                 for p, t in zip(self._file_stats, self._types, strict=True)]
        return MergeResult(self.num_rows, size, self.stripe_offsets, stats)


async def read_tail(store: Store) -> FileTail:
    """Read and parse a file's tail (one request for most files)."""
    data, size = await store.read_tail(TAIL_READ_SIZE)
    tail = await asyncio.to_thread(parse_tail, data, size, source=store.path)
    if isinstance(tail, NeedBytes):
        data, again = await store.read_tail(tail.n)
        if again != size:
            raise ObjectChangedError(f"{store.path}: the file changed size while it was "
                                     f"being read ({size} -> {again} bytes)")
        tail = await asyncio.to_thread(parse_tail, data, size, source=store.path)
        if isinstance(tail, NeedBytes):
            raise AorcError(f"{store.path}: the tail asks for {tail.n} more bytes")
    return tail


async def merge_files(sources: Sequence[str], dest: Destination, *,
                      storage_options: Mapping[str, Any] | None = None,
                      output_options: Mapping[str, Any] | None = None,
                      metadata: Mapping[str, bytes] | None = None,
                      keys: KeyProvider | None = None) -> MergeResult:
    """Merge ORC files into one by copying their stripes (see the module docstring).

    The new file becomes visible only when complete; on an error or a cancellation nothing
    is left at ``dest``. Every read of a source is pinned to the version whose tail was read
    (a file replaced meanwhile raises ObjectChangedError).

    Args:
        sources: the files, in the order their rows are wanted.
        dest: where the merged file goes (a path, a URL or an Output).
        storage_options: settings of the sources' store.
        output_options: settings of the destination's store (default: ``storage_options``).
        metadata: the merged file's user metadata (default: the first file's).
        keys: for files with encrypted columns, a key provider holding every key they
            name (their statistics are decrypted and encrypted again; values are not).

    Raises:
        UnsupportedFeatureError: the files disagree on something their stripes depend on
            (the message says what), or are encrypted and ``keys`` lacks a key: re-encode
            them instead.
        DecryptionError: a key that does not decrypt a file's local keys or statistics.
        SchemaError: no sources.
    """
    if not sources:
        raise SchemaError("merge_files needs at least one file")
    stores = [open_store(s, storage_options) for s in sources]
    try:
        tails = list(await asyncio.gather(*(read_tail(s) for s in stores)))
        keyed, local = None, None
        if keys is not None and tails[0].has_encryption and merge_blocker(tails, True) is None:
            keyed = [await decrypt_statistics(s, t, keys) for s, t in zip(stores, tails,
                                                                          strict=True)]
            local = await _new_local_keys(tails[0], keys)
        plan = MergePlan(tails, metadata, keyed, local)
        out = open_output(dest, output_options if output_options is not None
                          else storage_options)
        try:
            await out.write(MAGIC)
            size = len(MAGIC)
            for store, ranges in zip(stores, plan.copies(), strict=True):
                size += await _copy(store, ranges, out)
            tail = plan.tail()
            await out.write(tail)
            await out.complete()
        except BaseException:
            await out.abort()
            raise
        return plan.result(size + len(tail))
    finally:
        await asyncio.gather(*(s.close() for s in stores), return_exceptions=True)


async def decrypt_statistics(store: Store, tail: FileTail, keys: KeyProvider) -> FileTail:
    """``tail`` with every variant's statistics decrypted (what a merge re-encrypts).

    Raises:
        UnsupportedFeatureError: ``keys`` lacks a key the file names.
        DecryptionError: a key that does not decrypt.
    """
    info = parse_encryption(tail)
    assert info is not None
    names = set(await keys.key_names())
    cache: dict[bytes, bytes] = {}
    footer_keys: dict[int, bytes] = {}
    stripe_keys: dict[tuple[int, int], bytes] = {}
    for v in info.variants:
        if v.key.name not in names:
            raise UnsupportedFeatureError(f"{tail.where()}: the key provider has no key "
                                          f"{v.key.name!r}: encrypted files merge with "
                                          "every key they name")
        version = KeyVersion(v.key.name, v.key.version, v.key.algorithm.name)
        for sealed in (v.encrypted_key, *(k[v.index] for k in info.stripe_keys)):
            if sealed not in cache:
                local = await keys.decrypt_local_key(version, sealed)
                if local is None or len(local) != v.key.algorithm.key_length:
                    raise DecryptionError(f"{tail.where()}: the key provider does not hold "
                                          f"version {v.key.version} of key {v.key.name!r}, "
                                          f"which encrypts column {v.root}")
                cache[sealed] = local
        footer_keys[v.index] = cache[v.encrypted_key]
        stripe_keys.update({(v.index, s): cache[k[v.index]]
                            for s, k in enumerate(info.stripe_keys)})
    length = info.stripe_statistics_length
    start = tail.file_length - tail.tail_length - length
    region = await store.read_range(start, length) if length else b""
    return await asyncio.to_thread(decrypted_tail, tail, FileKeys(info, footer_keys,
                                                                  stripe_keys), region)


async def _new_local_keys(tail: FileTail, keys: KeyProvider) -> LocalKeys:
    """The merged file's local keys, one per variant, of the sources' key versions (as
    ORC Java's merge pins them)."""
    info = parse_encryption(tail)
    assert info is not None
    local, sealed = [], []
    for v in info.variants:
        made = await keys.create_local_key(KeyVersion(v.key.name, v.key.version,
                                                      v.key.algorithm.name))
        if len(made.key) != v.key.algorithm.key_length or len(made.encrypted) < 16:
            raise SchemaError(f"merge: the key provider made a local key of the wrong length "
                              f"for key {v.key.name!r}")
        local.append(made.key)
        sealed.append(made.encrypted)
    return LocalKeys(tuple(local), tuple(sealed), {})


async def _copy(store: Store, ranges: list[tuple[int, int]], out: Any) -> int:
    """Copy ranges of ``store`` to ``out`` in order, about :data:`COPY_BYTES` at a time."""
    copied = 0
    group: list[tuple[int, int]] = []
    held = 0
    for r in [*ranges, None]:
        if r is not None and (not group or held + r[1] <= COPY_BYTES):
            group.append(r)
            held += r[1]
            continue
        for piece in await store.read_ranges(group) if group else []:
            await out.write(piece)
            copied += len(piece)
        group, held = ([r], r[1]) if r is not None else ([], 0)
    return copied
