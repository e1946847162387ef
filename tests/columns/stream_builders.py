"""Test helpers: hand-built ORC streams, written from the specification's simplest forms.

Only literal runs are produced (RLE v1 literals, byte-RLE literals), which are trivial to get
right and independent of aorc's encoders; they let tests feed decoders data that no peer
writer produces (varying decimal scales, null map keys, damaged lengths, ...).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from helpers.varints import varint, zigzag

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DictStripeStreams


def literal_rle_v1(values: Iterable[int], signed: bool) -> bytes:
    """Integer RLE v1 made of literal runs only (up to 128 varints after a negative header).

    Unsigned values may be given as Python ints up to 2**64 - 1 or as negative int64 values,
    which are taken as their two's complement.
    """
    items = list(values)
    out = bytearray()
    for start in range(0, len(items), 128):
        chunk = items[start:start + 128]
        out.append(256 - len(chunk))
        for v in chunk:
            out += varint(zigzag(v) if signed else v % 2**64)
    return bytes(out)


def direct_rle_v2(values: Iterable[int], signed: bool) -> bytes:
    """Integer RLE v2 made of DIRECT runs of 64-bit big-endian values (width code 31)."""
    items = list(values)
    out = bytearray()
    for start in range(0, len(items), 512):
        chunk = items[start:start + 512]
        header = (1 << 14) | (31 << 9) | (len(chunk) - 1)
        out += header.to_bytes(2, "big")
        for v in chunk:
            out += ((zigzag(v) if signed else v) % 2**64).to_bytes(8, "big")
    return bytes(out)


def byte_rle(values: Iterable[int]) -> bytes:
    """Byte RLE made of literal runs only."""
    items = [v % 256 for v in values]
    out = bytearray()
    for start in range(0, len(items), 128):
        chunk = items[start:start + 128]
        out.append(256 - len(chunk))
        out += bytes(chunk)
    return bytes(out)


def bool_rle(values: Sequence[bool]) -> bytes:
    """Booleans packed MSB first into bytes, then byte RLE."""
    packed = []
    for start in range(0, len(values), 8):
        byte = 0
        for i, v in enumerate(values[start:start + 8]):
            if v:
                byte |= 0x80 >> i
        packed.append(byte)
    return byte_rle(packed)


def varints128(values: Iterable[int]) -> bytes:
    """Zigzag varints of arbitrary size (decimal DATA)."""
    return b"".join(varint(zigzag(v)) for v in values)


def make_streams(streams: Mapping[tuple[int, int], bytes], encodings: Sequence[object],
                 writer_timezone: str | None = None) -> DictStripeStreams:
    """A DictStripeStreams; ``encodings`` are ColumnEncoding messages or bare kinds."""
    encs = []
    for e in encodings:
        encs.append(e if isinstance(e, pb.ColumnEncoding) else pb.ColumnEncoding(kind=e))
    return DictStripeStreams(dict(streams), encs, writer_timezone)
