"""Master keys held in memory, byte-compatible with ORC Java's ``InMemoryKeystore``.

A local key is made from random bytes ``e`` of the key's length: the key is
``AES-CTR(master, IV = e[:16])`` applied to ``e`` itself, and ``e`` is what the file stores
(ORC Java's in-memory keystore and its Hadoop KMS path give the same bytes). So files written
with :class:`InMemoryKeys` are read by ORC Java with an ``InMemoryKeystore`` holding the same
master keys, and the other way round.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from aorc.keys.base import ALGORITHMS, KeyVersion, LocalKey

__all__ = ["InMemoryKeys", "parse_key_spec", "read_key_specs"]

_IV_LENGTH = 16


def _algorithm(key: bytes, name: str) -> str:
    for algorithm, length in ALGORITHMS.items():
        if len(key) == length:
            return algorithm
    raise ValueError(f"key {name!r}: an ORC master key has 16 bytes (AES_CTR_128) or 32 "
                     f"bytes (AES_CTR_256), not {len(key)}")


def _ctr(master: bytes, data: bytes) -> bytes:
    op = Cipher(algorithms.AES(master), modes.CTR(data[:_IV_LENGTH])).decryptor()
    return op.update(data) + op.finalize()


class InMemoryKeys:
    """A :class:`~aorc.keys.KeyProvider` over master keys given in memory.

    Args:
        keys: key name -> key bytes (version 0), or key name -> {version: key bytes}. A
            16-byte key is ``AES_CTR_128``, a 32-byte key ``AES_CTR_256``. The highest
            version is the current one (new files use it).
        random_bytes: the source of local keys (``os.urandom``; tests pass a seeded one).

    Raises:
        ValueError: a key that is not 16 or 32 bytes long, or a negative version.

    The key bytes never appear in ``repr`` or in errors.
    """

    def __init__(self, keys: Mapping[str, bytes | Mapping[int, bytes]], *,
                 random_bytes: Callable[[int], bytes] = os.urandom) -> None:
        self._keys: dict[tuple[str, int], tuple[str, bytes]] = {}
        self._current: dict[str, int] = {}
        for name, value in keys.items():
            versions = {0: value} if isinstance(value, bytes | bytearray) else dict(value)
            for version, material in versions.items():
                if version < 0:
                    raise ValueError(f"key {name!r}: negative version {version}")
                material = bytes(material)
                self._keys[(name, version)] = (_algorithm(material, name), material)
            if versions:
                self._current[name] = max(versions)
        self._random = random_bytes

    @classmethod
    def from_specs(cls, specs: Iterable[str], *,
                   random_bytes: Callable[[int], bytes] = os.urandom) -> InMemoryKeys:
        """Master keys given as ``NAME=HEX`` or ``NAME@VERSION=HEX`` texts (the CLI's
        ``--key``; see :func:`parse_key_spec`).

        Args:
            specs: the texts.
            random_bytes: as for the constructor.

        Returns:
            The provider.

        Raises:
            ValueError: a malformed text (the message does not repeat the key).
        """
        found: dict[str, dict[int, bytes]] = {}
        for spec in specs:
            name, version, key = parse_key_spec(spec)
            found.setdefault(name, {})[version] = key
        return cls(found, random_bytes=random_bytes)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *,
                  random_bytes: Callable[[int], bytes] = os.urandom) -> InMemoryKeys:
        """Master keys from a local text file of ``NAME[@VERSION]=HEX`` lines (the CLI's
        ``--keys FILE``); blank lines and lines starting with ``#`` are skipped.

        Args:
            path: the file.
            random_bytes: as for the constructor.

        Returns:
            The provider (holding no key when the file has none).

        Raises:
            ValueError: a malformed line; the message names the file and the line number,
                never the line's text.
            OSError: the file cannot be read.
        """
        return cls.from_specs(read_key_specs(path), random_bytes=random_bytes)

    def __repr__(self) -> str:
        names = sorted(f"{n}@{v}" for n, v in self._keys)
        return f"InMemoryKeys({names})"

    async def key_names(self) -> list[str]:
        """The names of the keys given to the constructor.

        Returns:
            Those names, sorted.
        """
        return sorted(self._current)

    async def current_version(self, name: str) -> KeyVersion:
        """The highest version given for ``name`` (0 when no versions were given), with
        the algorithm its length implies.

        Args:
            name: a key name given to the constructor.

        Returns:
            That version.

        Raises:
            KeyError: no key of that name was given.
        """
        if name not in self._current:
            raise KeyError(f"no key named {name!r}")
        version = self._current[name]
        return KeyVersion(name, version, self._keys[(name, version)][0])

    async def create_local_key(self, key: KeyVersion) -> LocalKey:
        """Random bytes as the stored form, decrypted with the master key as ORC Java's
        ``InMemoryKeystore`` does (AES/CTR, the first 16 stored bytes as the IV).

        Args:
            key: a key version given to the constructor.

        Returns:
            The local key and its stored form.

        Raises:
            KeyError: that version was not given.
        """
        found = self._keys.get((key.name, key.version))
        if found is None:
            raise KeyError(f"no key {key.name!r} version {key.version}")
        algorithm, master = found
        encrypted = self._random(ALGORITHMS[algorithm])
        return LocalKey(_ctr(master, encrypted), encrypted)

    async def decrypt_local_key(self, key: KeyVersion, encrypted: bytes) -> bytes | None:
        """AES/CTR of ``encrypted`` under the master key, its first 16 bytes as the IV.

        Args:
            key: the key version a file names.
            encrypted: the stored form from the file.

        Returns:
            The local key; ``None`` for a version not given (or a stored form too short).
        """
        found = self._keys.get((key.name, key.version))
        if found is None or len(encrypted) < _IV_LENGTH:
            return None
        return _ctr(found[1], bytes(encrypted))


def parse_key_spec(spec: str) -> tuple[str, int, bytes]:
    """Parse ``NAME=HEX`` or ``NAME@VERSION=HEX`` (the CLI's ``--key``).

    Args:
        spec: the text.

    Returns:
        The key's name, version and bytes.

    Raises:
        ValueError: a malformed spec (the message does not repeat the key).
    """
    name, sep, hexkey = spec.partition("=")
    version = 0
    if "@" in name:
        name, _, v = name.partition("@")
        if not v.isdigit():
            raise ValueError(f"key {name!r}: the version after '@' must be a number")
        version = int(v)
    if not sep or not name:
        raise ValueError("a key is given as NAME=HEX or NAME@VERSION=HEX")
    try:
        key = bytes.fromhex(hexkey.strip())
    except ValueError:
        raise ValueError(f"key {name!r}: the key is not hexadecimal") from None
    _algorithm(key, name)
    return name, version, key


def read_key_specs(path: str | os.PathLike[str]) -> list[str]:
    """The ``NAME[@VERSION]=HEX`` lines of a local key file (the CLI's ``--keys FILE``),
    each checked with :func:`parse_key_spec`; blank lines and ``#`` comments are skipped.

    Args:
        path: the file.

    Returns:
        The lines, stripped, in the file's order.

    Raises:
        ValueError: a malformed line; the message names the file and the line number, never
            the line's text.
        OSError: the file cannot be read.
    """
    specs = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            parse_key_spec(text)
        except ValueError as exc:
            raise ValueError(f"{os.fspath(path)}, line {number}: {exc}") from None
        specs.append(text)
    return specs
