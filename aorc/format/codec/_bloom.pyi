"""Type stub of the bloom filter kernels (``_bloom.pyx``). Every kernel releases the GIL."""

from typing import Any

import numpy as np
import numpy.typing as npt
from typing_extensions import Buffer

def murmur3_hash64(data: Buffer | npt.NDArray[np.uint8], seed: int = 104729) -> int:
    """ORC's single-lane 64-bit Murmur3 of ``data`` as a signed 64-bit int."""

def murmur3_hash64_offsets(
    offsets: npt.NDArray[Any], data: Buffer | npt.NDArray[np.uint8], seed: int = 104729
) -> npt.NDArray[np.int64]:
    """Hash ``data[offsets[i]:offsets[i + 1]]`` for every i (len(offsets) - 1 values).

    ``offsets`` must be C-contiguous; ValueError when an offset is negative, decreasing or
    past the end of ``data``.
    """

def thomas_wang_hash64(values: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """ORC Java's ``getLongHash`` of every value (C-contiguous int64 input)."""

def add_hashes(words: npt.NDArray[np.uint64], hashes: npt.NDArray[np.int64], k: int) -> None:
    """Set the ``k`` filter bits of every hash in ``words`` (writable, C-contiguous)."""

def test_hashes(
    words: npt.NDArray[np.uint64], hashes: npt.NDArray[np.int64], k: int
) -> npt.NDArray[np.bool_]:
    """True for each hash whose ``k`` bits are all set."""

def test_hash(words: npt.NDArray[np.uint64], hash64: int, k: int) -> bool:
    """True when the ``k`` bits of ``hash64`` are all set."""

def hash_decimal128(
    words: npt.NDArray[np.uint64], scale: int, seed: int = 104729
) -> npt.NDArray[np.int64]:
    """Murmur3 of the decimal text of each 128-bit value.

    ``words`` holds (low, high) little-endian two's complement word pairs, i.e. an Arrow
    decimal128 buffer; the text is plain notation with trailing fractional zeros removed
    ("1.10" -> "1.1", "100.00" -> "100", "0.00" -> "0").
    """

def decimal128_text(lo: int, hi: int, scale: int) -> bytes:
    """The trimmed decimal text of one 128-bit value given as unsigned (low, high) words."""
