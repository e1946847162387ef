"""The file's encryption block, checked: keys, variants, masks, stripe ids and local keys.

``Footer.encryption`` names the master keys (name, version, algorithm), one variant per
encrypted column subtree (its root column, its key, its local key encrypted with the master
key, its encrypted statistics) and the masks that produced the clear copies. Each stripe has
an encryption id and per-variant encrypted local keys, both carried over from the previous
stripe when the stripe does not record them (ids count up from 1; a merged file restarts
them per source). :func:`parse_encryption` checks all of it against the schema and the file:
a hostile block is a :class:`~aorc.errors.CorruptFileError`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aorc.errors import CorruptFileError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.encryption.cipher import IV_LENGTH, STRIPE_STATISTICS, Algorithm
from aorc.format.tail import FileTail

__all__ = [
    "EncryptionInfo",
    "KeyInfo",
    "MaskInfo",
    "VariantInfo",
    "parse_encryption",
]

_PROVIDERS = {0: "unknown", 1: "hadoop", 2: "aws", 3: "gcp", 4: "azure"}
#: Largest stripe encryption id (three bytes of the IV).
_MAX_STRIPE_ID = (1 << 24) - 1


@dataclass(frozen=True)
class KeyInfo:
    """A master key the file names.

    Attributes:
        name: the key's name in the key provider.
        version: its version.
        algorithm: ``AES_CTR_128`` or ``AES_CTR_256``.
    """

    name: str
    version: int
    algorithm: Algorithm


@dataclass(frozen=True)
class VariantInfo:
    """One encrypted column subtree.

    Attributes:
        index: the variant's position in the footer (its id).
        root: the root column id of the subtree.
        last: the largest column id of the subtree.
        key: the master key that encrypts it.
        encrypted_key: the file's local key for the statistics, encrypted.
        stripe_statistics: ``(column, length)`` of its encrypted stripe-statistics streams.
        file_statistics: its encrypted, compressed ``FileStatistics``.
    """

    index: int
    root: int
    last: int
    key: KeyInfo
    encrypted_key: bytes = field(repr=False)
    stripe_statistics: tuple[tuple[int, int], ...] = field(repr=False)
    file_statistics: bytes = field(repr=False)

    @property
    def columns(self) -> range:
        """The column ids of the subtree."""
        return range(self.root, self.last + 1)


@dataclass(frozen=True)
class MaskInfo:
    """A data mask: how the clear copies of some encrypted columns were made.

    Attributes:
        name: ``"nullify"``, ``"redact"``, ``"sha256"``, ...
        parameters: the mask's parameters.
        columns: the column ids it was applied to.
    """

    name: str
    parameters: tuple[str, ...]
    columns: tuple[int, ...]


@dataclass(frozen=True)
class EncryptionInfo:
    """The checked encryption block of a file.

    Attributes:
        keys: the master keys named.
        variants: the variants, in footer order.
        masks: the masks.
        provider: the kind of key provider the writer used (``"hadoop"``, ``"aws"``, ...).
        stripe_ids: each stripe's encryption id.
        stripe_keys: each stripe's encrypted local keys, one per variant.
        stripe_statistics_length: bytes of encrypted stripe statistics before the Metadata.
    """

    keys: tuple[KeyInfo, ...]
    variants: tuple[VariantInfo, ...]
    masks: tuple[MaskInfo, ...]
    provider: str
    stripe_ids: tuple[int, ...]
    stripe_keys: tuple[tuple[bytes, ...], ...] = field(repr=False)
    stripe_statistics_length: int

    def variant_of(self, column: int) -> VariantInfo | None:
        """The variant encrypting ``column``, ``None`` when it is in the clear."""
        for v in self.variants:
            if v.root <= column <= v.last:
                return v
        return None

    def mask_of(self, column: int) -> MaskInfo | None:
        """The mask that made the clear copy of ``column`` (``None``: not masked)."""
        for m in self.masks:
            if column in m.columns:
                return m
        return None

    def describe(self, names: dict[int, str], decrypted: frozenset[int]) -> dict[str, Any]:
        """A plain description: keys, variants (column, key, algorithm, mask, whether the
        reader decrypts it) and masks; ``names`` maps column ids to dotted names."""
        def mask_text(column: int) -> str | None:
            mask = self.mask_of(column)
            return None if mask is None else ":".join((mask.name, *mask.parameters))
        return {
            "provider": self.provider,
            "keys": [{"name": k.name, "version": k.version, "algorithm": k.algorithm.name}
                     for k in self.keys],
            "variants": [{"column": names.get(v.root, str(v.root)), "column_id": v.root,
                          "key": v.key.name, "version": v.key.version,
                          "algorithm": v.key.algorithm.name, "mask": mask_text(v.root),
                          "decrypted": v.index in decrypted} for v in self.variants],
            "masks": [{"name": m.name, "parameters": list(m.parameters),
                       "columns": [names.get(c, str(c)) for c in m.columns]}
                      for m in self.masks],
        }


def _key(proto: pb.EncryptionKey, where: str) -> KeyInfo:
    try:
        algorithm = Algorithm(proto.algorithm)
    except ValueError:
        raise CorruptFileError(f"{where}: key {proto.keyName!r} has unknown encryption "
                               f"algorithm {proto.algorithm}") from None
    name = proto.keyName if isinstance(proto.keyName, str) else ""
    if not name:
        raise CorruptFileError(f"{where}: an encryption key has no name")
    return KeyInfo(name, proto.keyVersion, algorithm)


def _variant(index: int, proto: pb.EncryptionVariant, keys: tuple[KeyInfo, ...],
             tail: FileTail, where: str) -> VariantInfo:
    if not proto.HasField("root") or not 0 <= proto.root < tail.num_columns:
        raise CorruptFileError(f"{where}: variant {index} has no valid root column")
    if not 0 <= proto.key < len(keys):
        raise CorruptFileError(f"{where}: variant {index} names key {proto.key} of "
                               f"{len(keys)}")
    root = tail.schema.find(proto.root)
    if len(proto.encryptedKey) < IV_LENGTH:
        raise CorruptFileError(f"{where}: variant {index} has an encrypted key of "
                               f"{len(proto.encryptedKey)} bytes")
    streams = []
    for s in proto.stripeStatistics:
        if s.kind != STRIPE_STATISTICS or not root.column_id <= s.column <= root.max_column_id:
            raise CorruptFileError(f"{where}: variant {index} has a stripe statistics stream "
                                   f"of kind {s.kind} for column {s.column}")
        streams.append((int(s.column), int(s.length)))
    return VariantInfo(index, root.column_id, root.max_column_id, keys[proto.key],
                       bytes(proto.encryptedKey), tuple(streams), bytes(proto.fileStatistics))


def _stripes(tail: FileTail, n_variants: int,
             where: str) -> tuple[tuple[int, ...], tuple[tuple[bytes, ...], ...]]:
    ids: list[int] = []
    keys: list[tuple[bytes, ...]] = []
    current, local = 0, tuple[bytes, ...]()
    for i, s in enumerate(tail.footer.stripes):
        current = s.encryptStripeId if s.HasField("encryptStripeId") else current + 1
        if s.encryptedLocalKeys:
            local = tuple(bytes(k) for k in s.encryptedLocalKeys)
        if len(local) != n_variants or any(len(k) < IV_LENGTH for k in local):
            raise CorruptFileError(f"{where}: stripe {i} has {len(local)} encrypted local keys "
                                   f"for {n_variants} variants")
        if not 0 < current <= _MAX_STRIPE_ID:
            raise CorruptFileError(f"{where}: stripe {i} has encryption id {current}")
        ids.append(current)
        keys.append(local)
    return tuple(ids), tuple(keys)


def parse_encryption(tail: FileTail) -> EncryptionInfo | None:
    """The file's encryption block, checked; ``None`` when the file has none.

    Raises:
        CorruptFileError: when a key, variant, mask or stripe's encryption fields are
            inconsistent with each other, the schema or the file's lengths.
    """
    if not tail.has_encryption:
        return None
    where = f"{tail.where()}: encryption"
    enc = tail.footer.encryption
    keys = tuple(_key(k, where) for k in enc.key)
    variants = tuple(_variant(i, v, keys, tail, where) for i, v in enumerate(enc.variants))
    spans = sorted((v.root, v.last) for v in variants)
    for (_, last), (root, _) in zip(spans, spans[1:], strict=False):
        if root <= last:
            raise CorruptFileError(f"{where}: two variants encrypt column {root}")
    masks = []
    for m in enc.mask:
        if any(c >= tail.num_columns for c in m.columns):
            raise CorruptFileError(f"{where}: mask {m.name!r} names a column past the schema")
        masks.append(MaskInfo(str(m.name), tuple(str(p) for p in m.maskParameters),
                              tuple(int(c) for c in m.columns)))
    total = sum(n for v in variants for _, n in v.stripe_statistics)
    if total != tail.postscript.stripeStatisticsLength:
        raise CorruptFileError(f"{where}: the variants' stripe statistics take {total} bytes, "
                               f"the PostScript says {tail.postscript.stripeStatisticsLength}")
    ids, local = _stripes(tail, len(variants), where)
    provider = _PROVIDERS.get(enc.keyProvider, f"unknown({enc.keyProvider})")
    return EncryptionInfo(keys, variants, tuple(masks), provider, ids, local, total)
