"""Tests-only builders of hand-made RLE streams and the integer arithmetic to check them.

Plain Python integers, written from the ORC specification's tables, independent of aorc.
"""

from __future__ import annotations

from helpers.varints import varint
from helpers.varints import zigzag as zigzag  # re-exported for the RLE tests

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: The unsigned varint under the name the RLE tests use (both from helpers.varints).
uvarint = varint

# The RLE v2 5-bit width codes, from the specification's table (widths 22 and 23 included).
WIDTH_CODE = {w: w - 1 for w in range(1, 25)} | {
    26: 24, 28: 25, 30: 26, 32: 27, 40: 28, 48: 29, 56: 30, 64: 31,
}  # fmt: skip


def wrap64(value: int) -> int:
    """A Python integer as ORC Java's 64-bit long holds it."""
    value &= (1 << 64) - 1
    return value - (1 << 64) if value >= 1 << 63 else value


def unzigzag(u: int) -> int:
    return (u >> 1) ^ -(u & 1)




def pack_be(values: list[int], width: int) -> bytes:
    """Values as one big-endian bit string of ``width`` bits each, zero-padded to a byte."""
    acc = 0
    for v in values:
        acc = (acc << width) | (v & ((1 << width) - 1))
    nbits = len(values) * width
    pad = -nbits % 8
    return (acc << pad).to_bytes((nbits + pad) // 8, "big")


def closest_fixed_bits(n: int) -> int:
    return min((w for w in WIDTH_CODE if w >= n), default=64)


def direct(values: list[int], width: int) -> bytes:
    """An RLE v2 DIRECT run of already zigzagged/unsigned values."""
    header = 0x40 | (WIDTH_CODE[width] << 1) | ((len(values) - 1) >> 8)
    return bytes([header, (len(values) - 1) & 0xFF]) + pack_be(values, width)


def patched(
    values: list[int],
    width: int,
    base: bytes,
    patch_width: int,
    gap_width: int,
    entries: list[tuple[int, int]],
    count: int | None = None,
) -> bytes:
    """An RLE v2 PATCHED_BASE run; ``entries`` are (gap, patch) pairs."""
    length = len(values) - 1
    count = len(entries) if count is None else count
    header = bytes(
        [
            0x80 | (WIDTH_CODE[width] << 1) | (length >> 8),
            length & 0xFF,
            ((len(base) - 1) << 5) | WIDTH_CODE[patch_width],
            ((gap_width - 1) << 5) | count,
        ]
    )
    packed = [(gap << patch_width) | patch for gap, patch in entries]
    entry_bits = closest_fixed_bits(patch_width + gap_width)
    return header + base + pack_be(values, width) + pack_be(packed, entry_bits)
