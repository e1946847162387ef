"""Writing encrypted columns (sans-I/O): a stripe's variant streams and footer entries, and
the footer's encryption block with the encrypted statistics, in ORC Java's layout.

Per stripe, the clear streams (the masked copies among them) come first in each area, then
an ``ENCRYPTED_INDEX`` placeholder covering the variants' index streams, and at the end of
the data area an ``ENCRYPTED_DATA`` placeholder covering their data streams; the stripe
footer lists each variant's streams and encodings (``StripeFooter.encryption``). Each stream
is compressed, then encrypted with the variant's local key and the IV of its column, kind and
stripe id. The file has one local key per variant, stored encrypted in the footer's variant
and in the first stripe's information (``encryptStripeId`` 1). Before the Metadata come the
variants' encrypted stripe statistics (one ``ColumnarStripeStatistics`` per column), and each
variant carries its encrypted file statistics; both use stripe id *stripes + 1*.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.encryption.cipher import FILE_STATISTICS, STRIPE_STATISTICS, ctr, stream_iv
from aorc.format.encryption.spec import EncryptionPlan

__all__ = [
    "LocalKeys",
    "VariantStream",
    "encryption_block",
    "resealed_block",
    "stripe_footer_with_variants",
]

Compress = Callable[[bytes], bytes]


@dataclass(frozen=True)
class LocalKeys:
    """A file's local keys, one per variant (in plan order), and the master key versions.

    Attributes:
        keys: the local keys.
        encrypted: the same, encrypted by the key provider (stored in the file).
        versions: master key name -> (version, algorithm value).
    """

    keys: tuple[bytes, ...] = field(repr=False)
    encrypted: tuple[bytes, ...] = field(repr=False)
    versions: dict[str, tuple[int, int]]


@dataclass
class VariantStream:
    """One compressed stream of a variant, before encryption."""

    column: int
    kind: int
    data: bytes
    index_area: bool


def stripe_footer_with_variants(clear: pb.StripeFooter, index_streams: int,
                                variants: Sequence[tuple[Sequence[VariantStream],
                                                         Sequence[pb.ColumnEncoding]]],
                                keys: LocalKeys, stripe_id: int
                                ) -> tuple[pb.StripeFooter, list[bytes], list[bytes]]:
    """The stripe footer and the encrypted variant streams of one stripe.

    Args:
        clear: the footer of the clear streams (masked copies included).
        index_streams: how many of its streams are in the index area (they come first).
        variants: per variant (plan order), its streams (in ORC Java's order) and the
            encodings of its columns (root first).
        keys: the file's local keys.
        stripe_id: the stripe's encryption id (index + 1).

    Returns:
        The footer, the encrypted index-area streams and the data-area streams, each in the
        order they are stored.
    """
    footer = pb.StripeFooter()
    footer.CopyFrom(clear)
    index: list[bytes] = []
    data: list[bytes] = []
    for v, (streams, encodings) in enumerate(variants):
        entry = footer.encryption.add()
        entry.encoding.extend(encodings)
        for s in streams:
            entry.streams.add(kind=s.kind, column=s.column,
                              length=len(s.data))
            (index if s.index_area else data).append(
                ctr(keys.keys[v], stream_iv(s.column, s.kind, stripe_id), s.data))
    # index area: clear index streams, then the variants' (one placeholder); data likewise
    del footer.streams[:]
    footer.streams.extend(clear.streams[:index_streams])
    if index:
        footer.streams.add(kind=pb.Stream.ENCRYPTED_INDEX, column=0,
                           length=sum(len(b) for b in index))
    footer.streams.extend(clear.streams[index_streams:])
    if data:
        footer.streams.add(kind=pb.Stream.ENCRYPTED_DATA, column=0,
                           length=sum(len(b) for b in data))
    return footer, index, data


def encryption_block(plan: EncryptionPlan, keys: LocalKeys, n_stripes: int,
                     file_stats: Sequence[Sequence[pb.ColumnStatistics]],
                     stripe_stats: Sequence[Sequence[Sequence[pb.ColumnStatistics]]],
                     compress: Compress) -> tuple[pb.Encryption, bytes]:
    """The footer's encryption block and the encrypted stripe statistics placed before the
    Metadata.

    Args:
        plan: the variants.
        keys: the local keys.
        n_stripes: stripes in the file.
        file_stats: per variant, the real file statistics of its columns.
        stripe_stats: per variant, per column, the statistics of each stripe.
        compress: the file's codec applied to a metadata structure.
    """
    block = pb.Encryption(keyProvider=pb.HADOOP)
    names = plan.keys
    for name in names:
        version, algorithm = keys.versions[name]
        block.key.add(keyName=name, keyVersion=version, algorithm=algorithm)
    masks: dict[tuple[str, tuple[str, ...]], pb.DataMask] = {}
    for v in sorted(plan.variants, key=lambda v: v.column.column_id):
        mask = masks.get((v.mask, v.parameters))
        if mask is None:
            mask = masks[v.mask, v.parameters] = pb.DataMask(name=v.mask,
                                                             maskParameters=v.parameters)
        mask.columns.append(v.column.column_id)
    block.mask.extend(masks.values())
    prefix: list[bytes] = []
    for i, v in enumerate(plan.variants):
        root = v.column.column_id
        variant = block.variants.add(root=root, key=names.index(v.key),
                                     encryptedKey=keys.encrypted[i])
        prefix += _seal_statistics(variant, keys.keys[i], n_stripes, file_stats[i],
                                   stripe_stats[i], compress)
    return block, b"".join(prefix)


def _seal_statistics(variant: pb.EncryptionVariant, key: bytes, n_stripes: int,
                     file_stats: Sequence[pb.ColumnStatistics],
                     stripe_stats: Sequence[Sequence[pb.ColumnStatistics]],
                     compress: Compress) -> list[bytes]:
    """Encrypt a variant's file statistics into ``variant`` and its stripe statistics (one
    stream per column, described in ``variant``); returns those streams' bytes. The IVs'
    stripe id is ``n_stripes + 1``, as ORC Java's footer statistics use."""
    sealed_streams: list[bytes] = []
    for offset, per_stripe in enumerate(stripe_stats):
        column = variant.root + offset
        raw = compress(pb.ColumnarStripeStatistics(colStats=per_stripe).SerializeToString())
        sealed = ctr(key, stream_iv(column, STRIPE_STATISTICS, n_stripes + 1), raw)
        variant.stripeStatistics.add(kind=STRIPE_STATISTICS, column=column, length=len(sealed))
        sealed_streams.append(sealed)
    raw = compress(pb.FileStatistics(column=file_stats).SerializeToString())
    variant.fileStatistics = ctr(key, stream_iv(variant.root, FILE_STATISTICS, n_stripes + 1),
                                 raw)
    return sealed_streams


def resealed_block(template: pb.Encryption, keys: LocalKeys, n_stripes: int,
                   file_stats: Sequence[Sequence[pb.ColumnStatistics]],
                   stripe_stats: Sequence[Sequence[Sequence[pb.ColumnStatistics]]],
                   compress: Compress) -> tuple[pb.Encryption, bytes]:
    """The encryption block of a merged file (ORC Java's ``mergeFiles``): the sources' keys,
    masks and variants (``template``, the first source's block), each variant's statistics
    encrypted again with a new local key of the merged file.

    Args:
        template: the sources' encryption block (they agree on it).
        keys: the merged file's local keys, one per variant (footer order).
        n_stripes: stripes in the merged file.
        file_stats: per variant, the real (merged) file statistics of its columns.
        stripe_stats: per variant, per column, the real statistics of each stripe.
        compress: the file's codec applied to a metadata structure.

    Returns:
        The block and the encrypted stripe statistics placed before the Metadata.
    """
    block = pb.Encryption(keyProvider=template.keyProvider)
    block.key.extend(template.key)
    block.mask.extend(template.mask)
    prefix: list[bytes] = []
    for i, old in enumerate(template.variants):
        variant = block.variants.add(root=old.root, key=old.key,
                                     encryptedKey=keys.encrypted[i])
        prefix += _seal_statistics(variant, keys.keys[i], n_stripes, file_stats[i],
                                   stripe_stats[i], compress)
    return block, b"".join(prefix)
