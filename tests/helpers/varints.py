"""The integer encodings hand-built ORC streams use: base-128 varints and zigzag (shared by
the stream, RLE, fuzz and long-stripe builders), and the SECONDARY form of a timestamp's
nanoseconds (the reference the timestamp kernels are tested against)."""

from __future__ import annotations

__all__ = ["format_nanos", "varint", "zigzag"]


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


def format_nanos(n: int) -> int:
    """SECONDARY encoding per the spec: strip 2..8 trailing zeros, store count - 1."""
    digits = str(n)
    zeros = len(digits) - len(digits.rstrip("0")) if n else 0
    zeros = min(zeros, 8)
    return (n << 3) if zeros < 2 else ((n // 10**zeros) << 3) | (zeros - 1)
