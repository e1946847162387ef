"""The key provider protocol: what aorc asks of a key service (ORC Java's ``KeyProvider``).

ORC encrypts each encrypted column subtree of a file with a random *local key*; the key
provider encrypts that local key with a *master key* it holds (``create_local_key``) and
decrypts it again for readers (``decrypt_local_key``). The file stores only the encrypted
local key and the master key's name and version, so a provider never hands out its master
keys. Anything that can do these four things (an in-memory key map, Hadoop/Ranger KMS, AWS
KMS, Vault's transit engine) plugs in: see ``docs/guide/encryption.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

__all__ = [
    "ALGORITHMS",
    "KeyProvider",
    "KeyVersion",
    "LocalKey",
]

#: ORC's algorithms and their key lengths in bytes.
ALGORITHMS = {"AES_CTR_128": 16, "AES_CTR_256": 32}


@dataclass(frozen=True)
class KeyVersion:
    """One version of a master key, as a file names it.

    Attributes:
        name: the key's name.
        version: the version.
        algorithm: ``"AES_CTR_128"`` or ``"AES_CTR_256"``.
    """

    name: str
    version: int
    algorithm: str


@dataclass(frozen=True)
class LocalKey:
    """A new local key: the key itself and its encrypted form (stored in the file).
    Neither is shown by ``repr``."""

    key: bytes = field(repr=False)
    encrypted: bytes = field(repr=False)


@runtime_checkable
class KeyProvider(Protocol):
    """A source of master keys (ORC Java's ``HadoopShims.KeyProvider``), asynchronous.

    Implementations must never put key bytes in a repr, an exception or a log line.
    """

    async def key_names(self) -> list[str]:
        """The names of the master keys the provider holds.

        Returns:
            The key names, sorted.
        """
        ...

    async def current_version(self, name: str) -> KeyVersion:
        """The current (newest) version of the key ``name``: new files use it.

        Args:
            name: the key's name.

        Returns:
            The key version, with its algorithm.

        Raises:
            KeyError: the provider has no key of that name.
        """
        ...

    async def create_local_key(self, key: KeyVersion) -> LocalKey:
        """A new random local key for ``key``'s algorithm, and its encrypted form.

        Args:
            key: the master key version that encrypts it.

        Returns:
            The local key and the bytes stored in the file.

        Raises:
            KeyError: the provider has no such key version.
        """
        ...

    async def decrypt_local_key(self, key: KeyVersion, encrypted: bytes) -> bytes | None:
        """The local key that ``encrypted`` stands for under ``key``.

        Args:
            key: the master key version the file names.
            encrypted: the encrypted local key stored in the file.

        Returns:
            The local key; ``None`` when the provider does not have that key version.
        """
        ...
