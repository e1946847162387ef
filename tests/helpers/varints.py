"""The two integer encodings every hand-built ORC stream uses: base-128 varints and zigzag
(shared by the stream, RLE, fuzz and long-stripe builders)."""

from __future__ import annotations

__all__ = ["varint", "zigzag"]


def varint(value: int) -> bytes:
    """Unsigned base-128 varint of a non-negative integer of any size, least significant
    group first."""
    if value < 0:
        raise ValueError("varint of a negative number")
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def zigzag(value: int) -> int:
    """Zigzag encoding of a signed integer of any size."""
    return 2 * value if value >= 0 else -2 * value - 1
