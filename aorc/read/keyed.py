"""Opening a file with keys: the local keys a key provider decrypts, applied to the tail.

For each encryption variant whose master key the provider holds (by name), the variant's
local keys (the footer's and each stripe's, deduplicated) are decrypted through the provider,
the encrypted stripe statistics are read (they lie just before the Metadata, usually inside
the tail already read) and :func:`aorc.format.encryption.decrypted_tail` gives the tail the
rest of the reader uses. Variants whose key the provider does not hold read as their masked
copy, as ORC Java reads them; a key the provider holds in another version, or one that does
not decrypt the statistics, raises :class:`~aorc.errors.DecryptionError`.
"""

from __future__ import annotations

from typing import Any

from aorc.errors import DecryptionError, SchemaError
from aorc.format.encryption import (
    EncryptionInfo,
    FileKeys,
    VariantInfo,
    decrypted_tail,
    parse_encryption,
)
from aorc.format.tail import FileTail
from aorc.io import Store
from aorc.keys import KeyProvider, KeyVersion
from aorc.read.common import guarded

__all__ = ["EncryptionView", "apply_keys", "check_keys", "describe_encryption"]


def check_keys(keys: Any) -> KeyProvider | None:
    """``keys`` as a key provider (``None`` stays ``None``).

    Raises:
        SchemaError: ``keys`` is not a :class:`aorc.KeyProvider`.
    """
    if keys is None or isinstance(keys, KeyProvider):
        return keys
    raise SchemaError(f"keys= takes a key provider (aorc.InMemoryKeys, aorc.keys.HadoopKMS "
                      f"or an aorc.KeyProvider), not {type(keys).__name__}")


async def _local_keys(tail: FileTail, info: EncryptionInfo, v: VariantInfo,
                      keys: KeyProvider, cache: dict[bytes, bytes]) -> tuple[bytes, list[bytes]]:
    version = KeyVersion(v.key.name, v.key.version, v.key.algorithm.name)

    async def one(encrypted: bytes) -> bytes:
        local = cache.get(encrypted)
        if local is None:
            local = await keys.decrypt_local_key(version, encrypted)
            if local is None or len(local) != v.key.algorithm.key_length:
                raise DecryptionError(
                    f"{tail.where()}: the key provider holds key {v.key.name!r} but not "
                    f"version {v.key.version}, which encrypts column {v.root}")
            cache[encrypted] = local
        return local

    footer_key = await one(v.encrypted_key)
    return footer_key, [await one(local[v.index]) for local in info.stripe_keys]


async def apply_keys(store: Store, tail: FileTail, tail_bytes: bytes,
                     keys: KeyProvider | None) -> FileTail:
    """The tail as a reader with ``keys`` sees it (``tail`` itself without keys, without
    encryption, or when the provider holds none of the file's keys).

    Raises:
        SchemaError: ``keys`` is not a key provider.
        CorruptFileError: a hostile encryption block.
        DecryptionError: a key that does not decrypt its columns.
    """
    if check_keys(keys) is None or not tail.has_encryption:
        return tail
    assert keys is not None
    info = guarded(store.path, None, parse_encryption, tail)
    assert info is not None
    names = set(await keys.key_names())
    footer_keys: dict[int, bytes] = {}
    stripe_keys: dict[tuple[int, int], bytes] = {}
    cache: dict[bytes, bytes] = {}
    for v in info.variants:
        if v.key.name not in names:
            continue
        footer_keys[v.index], per_stripe = await _local_keys(tail, info, v, keys, cache)
        stripe_keys.update({(v.index, s): k for s, k in enumerate(per_stripe)})
    if not footer_keys:
        return tail
    length = info.stripe_statistics_length
    start = tail.file_length - tail.tail_length - length
    tail_start = tail.file_length - len(tail_bytes)
    if start >= tail_start:
        region = bytes(tail_bytes[start - tail_start:start - tail_start + length])
    else:
        region = await store.read_range(start, length) if length else b""
    return guarded(store.path, None, decrypted_tail, tail,
                   FileKeys(info, footer_keys, stripe_keys), region)


def describe_encryption(tail: FileTail, names: dict[int, str]) -> dict[str, Any] | None:
    """The file's encryption as a plain dict (see
    :meth:`aorc.format.encryption.EncryptionInfo.describe`); ``None`` without encryption."""
    info = guarded("", None, parse_encryption, tail) if tail.decryption is None \
        else tail.decryption.info
    if info is None:
        return None
    done = frozenset() if tail.decryption is None else tail.decryption.decrypted
    return info.describe(names, done)


class EncryptionView:
    """The ``encryption`` property of :class:`aorc.OrcReader` (a base class of it)."""

    _tail: FileTail

    def column_names(self) -> list[str]:
        """A dotted name per column id (the reader's)."""
        raise NotImplementedError

    @property
    def encryption(self) -> dict[str, Any] | None:
        """The file's column encryption, ``None`` when it has none: the key provider kind,
        the master keys (name, version, algorithm), the variants (column, key, version,
        algorithm, mask, whether this reader decrypts it) and the masks. Never key bytes.

        Raises:
            CorruptFileError: the encryption block is damaged.
        """
        return describe_encryption(self._tail, dict(enumerate(self.column_names())))
