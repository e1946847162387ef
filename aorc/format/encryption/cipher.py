"""AES/CTR as ORC uses it: the 16-byte IV of a stream and the keystream applied to its bytes.

An encrypted stream's IV is, big-endian: bytes 0-2 the column id, 3-4 the stream kind, 5-7
the stripe's encryption id (from 1), 8-15 a block counter starting at 0. The file's
encrypted statistics use the kinds :data:`STRIPE_STATISTICS` and :data:`FILE_STATISTICS`
with the stripe id *number of stripes + 1*. CTR keeps lengths, so offsets into a stream (row
index positions) are the same before and after encryption; compression comes first, so the
compressed chunks and their headers are what is encrypted.
"""

from __future__ import annotations

import enum

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

__all__ = [
    "FILE_STATISTICS",
    "IV_LENGTH",
    "STRIPE_STATISTICS",
    "Algorithm",
    "ctr",
    "stream_iv",
]

#: Length of an AES/CTR initialisation vector.
IV_LENGTH = 16
#: Stream kinds of the footer's encrypted statistics (``pb.Stream.Kind`` values).
STRIPE_STATISTICS = 100
FILE_STATISTICS = 101


class Algorithm(enum.IntEnum):
    """ORC's encryption algorithms (``pb.EncryptionAlgorithm`` values)."""

    AES_CTR_128 = 1
    AES_CTR_256 = 2

    @property
    def key_length(self) -> int:
        """Length of a key of this algorithm in bytes (16 or 32)."""
        return 16 if self is Algorithm.AES_CTR_128 else 32

    @classmethod
    def for_key(cls, key: bytes) -> Algorithm:
        """The algorithm of a 16-byte (``AES_CTR_128``) or 32-byte (``AES_CTR_256``) key.

        Raises:
            ValueError: for another length (the key itself is never shown).
        """
        if len(key) == 16:
            return cls.AES_CTR_128
        if len(key) == 32:
            return cls.AES_CTR_256
        raise ValueError(f"an ORC key has 16 or 32 bytes, not {len(key)}")


def stream_iv(column: int, kind: int, stripe_id: int) -> bytes:
    """The IV of a stream of ``column`` and ``kind`` in the stripe of encryption id
    ``stripe_id`` (counter 0).

    Raises:
        ValueError: when a part does not fit its bytes (column and stripe ids below 2**24,
            kinds below 2**16).
    """
    if not (0 <= column < 1 << 24 and 0 <= kind < 1 << 16 and 0 <= stripe_id < 1 << 24):
        raise ValueError(f"IV parts out of range: column {column}, kind {kind}, "
                         f"stripe id {stripe_id}")
    return (column.to_bytes(3, "big") + kind.to_bytes(2, "big")
            + stripe_id.to_bytes(3, "big") + bytes(8))


def ctr(key: bytes, iv: bytes, data: bytes | bytearray | memoryview, position: int = 0
        ) -> bytes:
    """``data`` encrypted or decrypted (the same operation) with AES/CTR from ``iv``;
    ``position``: where ``data`` starts in the stream (a piece of a stream)."""
    if not data:
        return b""
    skip = position % 16
    if position:
        counter = (int.from_bytes(iv, "big") + position // 16) % (1 << 128)
        iv = counter.to_bytes(16, "big")
    op = Cipher(algorithms.AES(bytes(key)), modes.CTR(bytes(iv))).encryptor()
    if skip:
        return (op.update(bytes(skip) + bytes(data)) + op.finalize())[skip:]
    return op.update(data) + op.finalize()
