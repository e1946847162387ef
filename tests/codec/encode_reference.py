"""Independent reference code for the encoder tests (tests/codec/test_encode*.py).

Pure-Python decoders written from the ORC specification (not from aorc's decoders), so that
they can judge aorc's encoders, and a minimal ORC file walker that hands out the raw,
decompressed streams and row indexes of files other writers (ORC Java, ORC C++) produced.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path

from aorc.format._proto import orc_proto_pb2 as pb

MASK64 = (1 << 64) - 1

# RLE v2's 5-bit width codes 24..31 (codes 0..23 mean widths 1..24)
_WIDE = (26, 28, 30, 32, 40, 48, 56, 64)


def to_int64(v: int) -> int:
    """Wrap a Python int to a signed 64-bit value."""
    v &= MASK64
    return v - (1 << 64) if v >> 63 else v


def unzigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


def read_uvarint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return result, pos


def decode_width(code: int) -> int:
    return code + 1 if code < 24 else _WIDE[code - 24]


def closest_fixed_bits(n: int) -> int:
    """The spec's closestFixedBits table (for the patch list entries)."""
    if n <= 24:
        return max(n, 1)
    return next(w for w in _WIDE if w >= n)


def _read_bits(data: bytes, pos: int, count: int, width: int) -> tuple[list[int], int]:
    nbytes = (count * width + 7) // 8
    big = int.from_bytes(data[pos : pos + nbytes], "big")
    total = nbytes * 8
    mask = (1 << width) - 1
    values = [(big >> (total - (i + 1) * width)) & mask for i in range(count)]
    return values, pos + nbytes


# ---------------------------------------------------------------------------------------
# decoders; each returns (values, position after the run) so that callers can walk runs


def byte_rle_run(data: bytes, pos: int) -> tuple[list[int], int]:
    h = data[pos]
    if h < 0x80:
        return [to_int8(data[pos + 1])] * (h + 3), pos + 2
    n = 256 - h
    return [to_int8(b) for b in data[pos + 1 : pos + 1 + n]], pos + 1 + n


def to_int8(b: int) -> int:
    return b - 256 if b > 127 else b


def rle_v1_run(data: bytes, pos: int, signed: bool) -> tuple[list[int], int]:
    h = data[pos]
    fix = unzigzag if signed else (lambda x: x)
    if h < 0x80:
        delta = to_int8(data[pos + 1])
        base, pos = read_uvarint(data, pos + 2)
        base = fix(base)
        return [to_int64(base + i * delta) for i in range(h + 3)], pos
    values = []
    pos += 1
    for _ in range(256 - h):
        v, pos = read_uvarint(data, pos)
        values.append(to_int64(fix(v)))
    return values, pos


def rle_v2_run(data: bytes, pos: int, signed: bool) -> tuple[list[int], int]:
    h = data[pos]
    kind = h >> 6
    fix = unzigzag if signed else (lambda x: x)
    if kind == 0:  # SHORT_REPEAT
        width = ((h >> 3) & 7) + 1
        value = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
        return [to_int64(fix(value))] * ((h & 7) + 3), pos + 1 + width
    length = ((h & 1) << 8 | data[pos + 1]) + 1
    code = (h >> 1) & 31
    if kind == 1:  # DIRECT
        raw, pos = _read_bits(data, pos + 2, length, decode_width(code))
        return [to_int64(fix(v)) for v in raw], pos
    if kind == 2:
        return _patched_base(data, pos, length, decode_width(code))
    width = 0 if code == 0 else decode_width(code)  # DELTA
    base, pos = read_uvarint(data, pos + 2)
    base = fix(base)
    delta, pos = read_uvarint(data, pos)
    delta = unzigzag(delta)
    if width == 0:
        return [to_int64(base + i * delta) for i in range(length)], pos
    values = [base, base + delta]
    deltas, pos = _read_bits(data, pos, length - 2, width)
    for d in deltas:
        values.append(values[-1] + d if delta > 0 else values[-1] - d)
    return [to_int64(v) for v in values[:length]], pos


def _patched_base(data: bytes, pos: int, length: int, width: int) -> tuple[list[int], int]:
    b3, b4 = data[pos + 2], data[pos + 3]
    base_bytes = (b3 >> 5) + 1
    patch_width = decode_width(b3 & 31)
    gap_width = (b4 >> 5) + 1
    patch_count = b4 & 31
    pos += 4
    base = int.from_bytes(data[pos : pos + base_bytes], "big")
    sign_bit = 1 << (base_bytes * 8 - 1)
    if base & sign_bit:
        base = -(base & ~sign_bit)
    values, pos = _read_bits(data, pos + base_bytes, length, width)
    entries, pos = _read_bits(data, pos, patch_count, closest_fixed_bits(gap_width + patch_width))
    index = 0
    for entry in entries:
        index += entry >> patch_width
        values[index] |= (entry & ((1 << patch_width) - 1)) << width
    return [to_int64(base + v) for v in values], pos


def decode_all(data: bytes, run, *args) -> list[int]:
    """Decode every run of ``data`` with ``run`` (one of the *_run functions)."""
    values: list[int] = []
    pos = 0
    while pos < len(data):
        chunk, pos = run(data, pos, *args)
        values.extend(chunk)
    return values


def decode_from(data: bytes, run, offset: int, skip: int, count: int, *args) -> list[int]:
    """Seek to a byte ``offset``, drop ``skip`` values, return the next ``count``."""
    values: list[int] = []
    pos = offset
    while len(values) < skip + count and pos < len(data):
        chunk, pos = run(data, pos, *args)
        values.extend(chunk)
    return values[skip : skip + count]


def decode_bools(data: bytes) -> list[bool]:
    """All bits of a boolean RLE stream (padding bits included), MSB first."""
    return [bool((b >> (7 - i)) & 1) for b in decode_all(data, byte_rle_run) for i in range(8)]


def decode_varints(data: bytes, signed: bool) -> list[int]:
    values = []
    pos = 0
    while pos < len(data):
        v, pos = read_uvarint(data, pos)
        values.append(to_int64(unzigzag(v) if signed else v))
    return values


def decode_varint128(data: bytes) -> list[int]:
    """Zigzag varints of any size as Python ints."""
    values = []
    pos = 0
    while pos < len(data):
        v, pos = read_uvarint(data, pos)
        values.append(unzigzag(v))
    return values


def int128_words(values: list[int]):
    """Python ints as an (n, 2) uint64 array of little-endian two's complement words."""
    import numpy as np

    out = np.zeros((len(values), 2), dtype=np.uint64)
    for i, v in enumerate(values):
        u = v & ((1 << 128) - 1)
        out[i, 0] = u & MASK64
        out[i, 1] = u >> 64
    return out


# ---------------------------------------------------------------------------------------
# a minimal ORC file walker (only what the encoder tests need)


@dataclass
class Stream:
    """One stream of a stripe: decompressed bytes and the map of its compression chunks."""

    column: int
    kind: int
    data: bytes
    # (compressed offset, uncompressed offset) of each chunk, for row-index positions
    chunks: list[tuple[int, int]] = field(default_factory=list)
    compressed_length: int = 0

    def uncompressed_offset(self, compressed: int, inside: int) -> int:
        """The offset in ``data`` that a compressed stream's (chunk start, offset) points to."""
        if compressed == self.compressed_length:  # the start of a chunk not written yet
            return len(self.data) + inside
        for c, u in self.chunks:
            if c == compressed:
                return u + inside
        raise AssertionError(f"no chunk starts at {compressed}")


@dataclass
class Stripe:
    footer: pb.StripeFooter
    rows: int
    streams: dict[tuple[int, int], Stream]
    row_index: dict[int, pb.RowIndex]


@dataclass
class OrcFile:
    postscript: pb.PostScript
    footer: pb.Footer
    stripes: list[Stripe]

    @property
    def compressed(self) -> bool:
        return self.postscript.compression != pb.NONE


def _decompress(raw: bytes, kind: int, block: int) -> tuple[bytes, list[tuple[int, int]]]:
    if kind == pb.NONE:
        return raw, [(0, 0)]
    out = bytearray()
    chunks = []
    pos = 0
    while pos < len(raw):
        header = raw[pos] | raw[pos + 1] << 8 | raw[pos + 2] << 16
        body = raw[pos + 3 : pos + 3 + (header >> 1)]
        chunks.append((pos, len(out)))
        if header & 1:
            out += body
        elif kind == pb.ZLIB:
            out += zlib.decompressobj(-15).decompress(body)
        elif kind == pb.SNAPPY:
            import cramjam

            out += bytes(cramjam.snappy.decompress_raw(body))
        elif kind == pb.ZSTD:
            import zstandard

            out += zstandard.ZstdDecompressor().decompress(body, max_output_size=block)
        else:
            raise NotImplementedError(f"compression kind {kind}")
        pos += 3 + (header >> 1)
    return bytes(out), chunks


def read_orc(path: str | Path) -> OrcFile:
    """Parse a whole ORC file: tail, stripe footers, decompressed streams and row indexes."""
    data = Path(path).read_bytes()
    ps_len = data[-1]
    ps = pb.PostScript.FromString(data[-1 - ps_len : -1])
    block = ps.compressionBlockSize or 256 * 1024
    footer_end = len(data) - 1 - ps_len
    footer_raw = data[footer_end - ps.footerLength : footer_end]
    footer = pb.Footer.FromString(_decompress(footer_raw, ps.compression, block)[0])
    stripes = []
    for info in footer.stripes:
        start = info.offset + info.indexLength + info.dataLength
        sf_raw = data[start : start + info.footerLength]
        sf = pb.StripeFooter.FromString(_decompress(sf_raw, ps.compression, block)[0])
        streams: dict[tuple[int, int], Stream] = {}
        offset = info.offset
        for s in sf.streams:
            body, chunks = _decompress(data[offset : offset + s.length], ps.compression, block)
            streams[(s.column, s.kind)] = Stream(s.column, s.kind, body, chunks, s.length)
            offset += s.length
        row_index = {
            col: pb.RowIndex.FromString(st.data)
            for (col, kind), st in streams.items()
            if kind == pb.Stream.ROW_INDEX
        }
        stripes.append(Stripe(sf, info.numberOfRows, streams, row_index))
    return OrcFile(ps, footer, stripes)
