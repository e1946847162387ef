"""Writing encrypted columns: the stripe encoder and file assembler a writer uses when
``WriteOptions.encrypt`` is set (the cipher layout is :mod:`aorc.format.encryption`).

Each encrypted top-level column is encoded twice: its masked copy with the clear columns
(their encodings, statistics and row index describe the masked values; no bloom filter), and
its real values on their own, compressed, then encrypted into the stripe's variant streams
(row index and bloom filters included). The real values' statistics reach the file only
encrypted. :func:`open_encryption` asks the key provider for one local key per variant.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import AorcError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.encode import EncodedColumn, EncodeOptions, encode_column
from aorc.format.columns.encode.statistics import merge_statistics, stats_class
from aorc.format.encryption.encrypt import (
    LocalKeys,
    VariantStream,
    encryption_block,
    stripe_footer_with_variants,
)
from aorc.format.encryption.masks import mask_array
from aorc.format.encryption.spec import EncryptionPlan, PlannedVariant
from aorc.format.messages import parsed_statistics
from aorc.format.types import OrcType
from aorc.keys import ALGORITHMS, KeyProvider
from aorc.write.file import FileAssembler
from aorc.write.stripe import (
    ColumnCompressor,
    EncodedStripe,
    assemble_stripe,
    compress,
    stream_order_key,
)

__all__ = ["EncryptedFileAssembler", "EncryptedStripe", "open_encryption"]

_INDEX_KINDS = frozenset({pb.Stream.ROW_INDEX, pb.Stream.DICTIONARY_COUNT,
                          pb.Stream.BLOOM_FILTER, pb.Stream.BLOOM_FILTER_UTF8})


@dataclass
class EncryptedStripe(EncodedStripe):
    """A stripe with encrypted columns: ``column_stats`` are the clear (masked) ones,
    ``variant_stats`` the real ones of each variant's columns (plan order)."""

    variant_stats: list[list[pb.ColumnStatistics]] = field(default_factory=list)


async def open_encryption(plan: EncryptionPlan, keys: KeyProvider | None) -> LocalKeys:
    """One local key per variant from the key provider (its current key versions).

    Raises:
        SchemaError: no provider, or it lacks a key the plan names.
    """
    if keys is None:
        raise SchemaError("encrypt= needs keys= (a key provider such as aorc.InMemoryKeys)")
    names = set(await keys.key_names())
    versions: dict[str, tuple[int, int]] = {}
    current = {}
    for name in plan.keys:
        if name not in names:
            raise SchemaError(f"encrypt: the key provider has no key {name!r}")
        current[name] = await keys.current_version(name)
        algorithm = list(ALGORITHMS).index(current[name].algorithm) + 1
        versions[name] = (current[name].version, algorithm)
    local, sealed = [], []
    for v in plan.variants:
        made = await keys.create_local_key(current[v.key])
        if len(made.key) != ALGORITHMS[current[v.key].algorithm] or len(made.encrypted) < 16:
            raise SchemaError(f"encrypt: the key provider made a local key of the wrong "
                              f"length for key {v.key!r}")
        local.append(made.key)
        sealed.append(made.encrypted)
    return LocalKeys(tuple(local), tuple(sealed), versions)


def _mask_of(v: PlannedVariant, arr: pa.Array) -> pa.Array:
    """The masked copy of variant ``v``'s values."""
    return mask_array(arr, v.column, v.mask, v.parameters)


def _replaced(arr: pa.Array, path: Sequence[int],
              mask: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``arr`` with the struct field at ``path`` (field indexes) replaced by its mask."""
    if not path:
        return mask(arr)
    if pa.types.is_dictionary(arr.type) or not pa.types.is_struct(arr.type):
        raise SchemaError(f"encrypt: a nested column's parent is {arr.type}, not a struct")
    children = [arr.field(i) for i in range(arr.type.num_fields)]
    children[path[0]] = _replaced(children[path[0]], path[1:], mask)
    validity = None if arr.null_count == 0 else arr.is_null()
    return pa.StructArray.from_arrays(children, fields=list(arr.type), mask=validity)


def _subtree(arr: pa.Array, path: Sequence[int], starts: npt.NDArray[np.int64]
             ) -> tuple[pa.Array, npt.NDArray[np.int64]]:
    """The slots of the struct field at ``path`` as ORC stores them (only where every
    ancestor is not null), and the row groups' first slots among them (as the struct
    encoder hands its fields down)."""
    for i in path:
        if arr.null_count:
            valid = arr.is_valid().to_numpy(zero_copy_only=False)
            before = np.concatenate(([0], np.cumsum(valid, dtype=np.int64)))
            starts = before[starts]
            arr = arr.filter(pa.array(valid))
        arr = arr.field(i)
    return arr, starts


def _walk(col: EncodedColumn) -> list[EncodedColumn]:
    out = [col]
    for child in col.children:
        out.extend(_walk(child))
    return out


class EncryptedFileAssembler(FileAssembler):
    """A :class:`~aorc.write.file.FileAssembler` that also encodes stripes with encrypted
    columns (:meth:`encode`) and writes the footer's encryption block."""

    def __init__(self, schema: OrcType, opts: EncodeOptions, plan: EncryptionPlan,
                 keys: LocalKeys, user_metadata: Mapping[str, bytes] | None = None) -> None:
        super().__init__(schema, opts, user_metadata)
        self.plan = plan
        self._keys = keys
        self._clear_opts = dataclasses.replace(
            opts, bloom_filter_columns=set(opts.bloom_filter_columns) - plan.columns)
        self._real_decisions: dict[int, bool] = {}
        self._variant_types = [list(v.column.walk()) for v in plan.variants]
        self._variant_file = [[stats_class(t)[0](**stats_class(t)[1]).to_proto() for t in ts]
                              for ts in self._variant_types]
        self._variant_stripes: list[list[list[pb.ColumnStatistics]]] = [
            [[] for _ in ts] for ts in self._variant_types]
        self._block: pb.Encryption | None = None

    def encode(self, orc_type: OrcType, schema: pa.Schema, batches: list[pa.RecordBatch],
               rows: int, opts: EncodeOptions, decisions: dict[int, bool]) -> EncryptedStripe:
        """Encode one stripe (in a worker thread): the clear columns and masked copies, and
        the encrypted variants."""
        table = pa.Table.from_batches(batches, schema=schema)
        batches.clear()
        arrays = [c.chunk(0) if c.num_chunks == 1 else c.combine_chunks()
                  for c in table.columns]
        del table
        masked = list(arrays)
        for v in self.plan.variants:
            masked[v.field] = _replaced(masked[v.field], v.path[1:],
                                        functools.partial(_mask_of, v))
        stride = opts.row_index_stride
        starts = (np.arange(0, rows, stride, dtype=np.int64) if stride
                  else np.zeros(0, dtype=np.int64))
        clear_opts = dataclasses.replace(self._clear_opts, threads=opts.threads)
        compressor = ColumnCompressor(clear_opts, len(starts))
        root = pa.StructArray.from_arrays(masked, fields=list(schema))
        encoded = encode_column(orc_type, root, starts, clear_opts,
                                dictionary_decisions=decisions, finish=compressor)
        clear = assemble_stripe(encoded, rows, len(starts), clear_opts, compressor.placed)
        real = ColumnCompressor(opts, len(starts))
        variants = []
        for v in self.plan.variants:
            values, v_starts = _subtree(arrays[v.field], v.path[1:], starts)
            tree = encode_column(v.column, values, v_starts, opts,
                                 dictionary_decisions=self._real_decisions)
            variants.append(real(tree))  # every node of the subtree compressed
        return self._combine(clear, real, variants)

    def _combine(self, clear: EncodedStripe, real: ColumnCompressor,
                 trees: Sequence[EncodedColumn]) -> EncryptedStripe:
        parts = clear.parts[:-1]
        n_index = sum(1 for s in clear.footer.streams if s.kind in _INDEX_KINDS)
        index_bytes = clear.index_length
        at, cut = 0, 0
        while at < index_bytes:
            at += len(parts[cut])
            cut += 1
        if at != index_bytes:
            raise AorcError("internal error: a stripe part spans the index and data areas")
        pieces, stats = [], []
        for tree in trees:
            streams: list[VariantStream] = []
            col_stats = []
            for col in _walk(tree):
                index, data, col_stat = real.placed[col.column_id]
                for p in [*index, *data]:
                    streams.append(VariantStream(p.column, p.kind, b"".join(p.parts),
                                                 p.kind in _INDEX_KINDS))
                col_stats.append(col_stat)
            streams.sort(key=lambda s: stream_order_key(s.column, s.kind))
            pieces.append((streams, [c.encoding for c in _walk(tree)]))
            stats.append(parsed_statistics(col_stats))  # placed: serialized
        footer, index_parts, data_parts = stripe_footer_with_variants(
            clear.footer, n_index, pieces, self._keys, self.num_stripes + 1)
        footer_bytes = compress(footer.SerializeToString(), self.opts, None)
        return EncryptedStripe(
            parts=[*parts[:cut], *index_parts, *parts[cut:], *data_parts, footer_bytes],
            index_length=clear.index_length + sum(len(b) for b in index_parts),
            data_length=clear.data_length + sum(len(b) for b in data_parts),
            footer_length=len(footer_bytes), num_rows=clear.num_rows,
            column_stats=clear.column_stats, footer=footer, variant_stats=stats)

    def record_stripe(self, stripe: EncodedStripe) -> None:
        """Record a stripe (an :class:`EncryptedStripe`) and its real statistics."""
        if not isinstance(stripe, EncryptedStripe):
            raise AorcError("internal error: a stripe without its encrypted columns")
        first = not self.num_stripes
        super().record_stripe(stripe)
        if first:
            info = self._stripes[-1]
            info.encryptStripeId = 1
            info.encryptedLocalKeys.extend(self._keys.encrypted)
        for v, per_column in enumerate(stripe.variant_stats):
            types = self._variant_types[v]
            for c, s in enumerate(per_column):
                self._variant_stripes[v][c].append(s)
                self._variant_file[v][c] = merge_statistics(self._variant_file[v][c], s,
                                                            types[c])

    def statistics_prefix(self) -> bytes:
        """The encrypted stripe statistics, placed before the Metadata."""
        block, prefix = encryption_block(
            self.plan, self._keys, self.num_stripes, self._variant_file, self._variant_stripes,
            lambda raw: compress(raw, self.opts, None))
        self._block = block
        return prefix

    def footer(self) -> pb.Footer:
        """The file footer with its encryption block."""
        footer = super().footer()
        if self._block is None:
            self.statistics_prefix()
        assert self._block is not None
        footer.encryption.CopyFrom(self._block)
        return footer
