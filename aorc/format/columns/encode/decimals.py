"""Decimal columns (encoding DIRECT_V2, the 0.12 format's decimal layout).

ORC Java's DecimalTreeWriter writes each value as its HiveDecimal holds it, that is with
trailing fractional zeros removed: DATA holds the trimmed unscaled value as a zigzag varint of
up to 128 bits and SECONDARY the trimmed scale (signed RLE v2), so ``1.50`` in a
``decimal(10,2)`` column is written as 15 with scale 1 and ``0.00`` as 0 with scale 0.

Statistics are Java's: for precision up to 18 the extremes and an 18-digit sum at the
column's scale (Decimal64 statistics), above that HiveDecimal extremes and a sum kept within
38 digits. Bloom filters hash the trimmed decimal text.
"""

from __future__ import annotations

import decimal

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec._encode_v2 import RleV2Stream
from aorc.format.codec._encode_values import decimal64_group_stats, trim_decimal64
from aorc.format.codec.bloom import hash_arrow_array
from aorc.format.columns.encode.base import (
    PIECE_VALUES,
    EncodedStream,
    EncodeLevel,
    ValueParts,
    group_bounds,
    group_reduce,
    positions_list,
    register,
    split_hashes,
)
from aorc.format.columns.encode.integers import boundaries
from aorc.format.columns.encode.statistics import (
    DECIMAL_CONTEXT,
    MAX_DECIMAL64,
    Decimal64Stats,
    DecimalStats,
    Stats,
)
from aorc.format.types import TypeKind

__all__ = ["trim_decimals"]

_MASK32 = np.uint64(0xFFFFFFFF)
_U32 = np.uint64(32)
_TEN = np.uint64(10)
_TEN_38 = 10**38


def _words(values: pa.Array) -> npt.NDArray[np.uint64]:
    """The (n, 2) little-endian words of a null-free decimal128 array."""
    n = len(values)
    if n == 0:
        return np.zeros((0, 2), np.uint64)
    buf = values.buffers()[1]
    return np.frombuffer(buf, "<u8", count=2 * n, offset=values.offset * 16).reshape(n, 2)


def _negate(lo: npt.NDArray[np.uint64], hi: npt.NDArray[np.uint64]
            ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    nlo = ~lo + np.uint64(1)
    return nlo, ~hi + (nlo == 0).astype(np.uint64)


def trim_decimals(words: npt.NDArray[np.uint64], scale: int
                  ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Remove trailing decimal zeros from unscaled 128-bit values, as HiveDecimal holds them.

    Args:
        words: (n, 2) little-endian two's complement unscaled values.
        scale: their common scale.

    Returns:
        The trimmed unscaled values (n, 2) and each one's scale (zero has scale 0).
    """
    if scale == 0 or len(words) == 0:
        return (np.array(words, np.uint64, copy=True, order="C"),
                np.full(len(words), scale, np.int64))
    out, scales, big = trim_decimal64(words, scale)  # the values that fit 64 bits, in C
    if len(big):
        out[big], scales[big] = _trim_wide(out[big], scale)
    return out, scales


def _trim_wide(words: npt.NDArray[np.uint64], scale: int
               ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Trim values beyond int64 with 128-bit division by 10 on 32-bit limbs."""
    n = len(words)
    scales = np.full(n, scale, np.int64)
    lo, hi = words[:, 0].copy(), words[:, 1].copy()
    negative = (hi >> np.uint64(63)).astype(np.bool_)
    lo[negative], hi[negative] = _negate(lo[negative], hi[negative])
    limbs = [lo & _MASK32, lo >> _U32, hi & _MASK32, hi >> _U32]
    rows = np.arange(n)
    for _ in range(scale):
        if not len(rows):
            break
        quotient, rem = _div10([limb[rows] for limb in limbs])
        done = rem != 0
        rows, quotient = rows[~done], [q[~done] for q in quotient]
        for limb, q in zip(limbs, quotient, strict=True):
            limb[rows] = q
        scales[rows] -= 1
    lo = limbs[0] | (limbs[1] << _U32)
    hi = limbs[2] | (limbs[3] << _U32)
    lo[negative], hi[negative] = _negate(lo[negative], hi[negative])
    return np.stack([lo, hi], axis=1), scales


def _div10(limbs: list[npt.NDArray[np.uint64]]
           ) -> tuple[list[npt.NDArray[np.uint64]], npt.NDArray[np.uint64]]:
    """Quotient (four 32-bit limbs, least significant first) and remainder of limbs / 10."""
    rem = np.zeros(len(limbs[0]), np.uint64)
    out: list[npt.NDArray[np.uint64]] = [rem] * 4
    for i in (3, 2, 1, 0):
        cur = (rem << _U32) | limbs[i]
        out[i], rem = cur // _TEN, cur % _TEN
    return out, rem


@register(TypeKind.DECIMAL)
def encode_decimal(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                   groups: list[Stats]) -> ValueParts:
    """Encode a decimal column's values."""
    scale = values.type.scale
    words = _words(values)
    bounds = boundaries(level, vstarts)
    data, dpos, secondary, spos = _encode_pieces(words, scale, bounds)
    streams = [EncodedStream(pb.Stream.DATA, data, positions_list(dpos)),
               EncodedStream(pb.Stream.SECONDARY, secondary, positions_list(spos))]
    if groups and isinstance(groups[0], Decimal64Stats):
        _decimal64_stats(groups, words, vstarts)  # type: ignore[arg-type]
    else:
        _decimal_stats(groups, words, scale, vstarts)  # type: ignore[arg-type]
    hashes = None
    if level.bloom:
        hashes = split_hashes(hash_arrow_array(values, TypeKind.DECIMAL), vstarts)
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, streams, groups, hashes)


def _encode_pieces(words: npt.NDArray[np.uint64], scale: int, bounds: npt.NDArray[np.int64]
                   ) -> tuple[bytes, npt.NDArray[np.int64], bytes, npt.NDArray[np.int64]]:
    """DATA and SECONDARY with their positions, trimmed and encoded in pieces that stay in
    cache (no column-sized array of trimmed values or scales): varints need no state across
    pieces, so DATA is the pieces' bytes joined, its positions offset by what came before."""
    n = len(words)
    scales_rle = RleV2Stream(True, bounds, n)
    data_parts: list[bytes] = []
    data_positions = np.zeros((len(bounds), 1), np.int64)
    written = 0
    for a, b in ((a, min(a + PIECE_VALUES, n)) for a in range(0, n, PIECE_VALUES)):
        trimmed, scales = trim_decimals(words[a:b], scale)
        inside = np.flatnonzero((bounds >= a) & (bounds < b))
        part, pos = rle.write_varint128_with_positions(trimmed, bounds[inside] - a)
        data_positions[inside] = pos + written
        data_parts.append(part)
        written += len(part)
        scales_rle.write(scales)
    data_positions[bounds == n] = written
    secondary, secondary_positions = scales_rle.finish()
    return b"".join(data_parts), data_positions, secondary, secondary_positions


def _decimal64_stats(groups: list[Decimal64Stats], words: npt.NDArray[np.uint64],
                     vstarts: npt.NDArray[np.int64]) -> None:
    """Extremes and the running sum, dropped once it leaves 18 digits (values at most 18
    digits each, so the int64 running sums are exact until that first happens)."""
    starts, ends = group_bounds(vstarts, len(words))
    low, high, sums, has_sum, nonempty = decimal64_group_stats(words, starts, ends,
                                                               MAX_DECIMAL64)
    for i, g in enumerate(groups):
        if not nonempty[i]:
            continue
        g.minimum, g.maximum = int(low[i]), int(high[i])
        g.has_sum = bool(has_sum[i])
        g.sum = int(sums[i])


def _to_decimal(lo: int, hi: int, scale: int) -> decimal.Decimal:
    value = (hi - (1 << 64) if hi >> 63 else hi) << 64 | lo
    return decimal.Decimal(value).scaleb(-scale, DECIMAL_CONTEXT)


def _decimal_stats(groups: list[DecimalStats], words: npt.NDArray[np.uint64], scale: int,
                   vstarts: npt.NDArray[np.int64]) -> None:
    """HiveDecimal extremes and sums of each group."""
    lo, hi = words[:, 0], words[:, 1].view(np.int64)
    starts, ends = group_bounds(vstarts, len(words))
    sums, bounds = _exact_sums(lo, hi, starts, ends)
    group_of = np.repeat(np.arange(len(starts)), ends - starts)
    low_hi, nonempty = group_reduce(np.minimum, hi, starts, ends)
    high_hi, _ = group_reduce(np.maximum, hi, starts, ends)
    top = np.uint64(2**64 - 1)
    low_lo, _ = group_reduce(np.minimum, np.where(hi == low_hi[group_of], lo, top), starts, ends)
    high_lo, _ = group_reduce(np.maximum, np.where(hi == high_hi[group_of], lo, 0), starts, ends)
    for i, g in enumerate(groups):
        if not nonempty[i]:
            continue
        g.minimum = _to_decimal(int(low_lo[i]), int(low_hi[i]) & (2**64 - 1), scale)
        g.maximum = _to_decimal(int(high_lo[i]), int(high_hi[i]) & (2**64 - 1), scale)
        if bounds[i] < _TEN_38:  # no running sum can need more than 38 digits
            g.sum = decimal.Decimal(sums[i]).scaleb(-scale, DECIMAL_CONTEXT)
            continue
        for j in range(int(starts[i]), int(ends[i])):  # rare: HiveDecimal's rounding rules
            g.add_sum(_to_decimal(int(lo[j]), int(words[j, 1]), scale))


def _exact_sums(lo: npt.NDArray[np.uint64], hi: npt.NDArray[np.int64],
                starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
                ) -> tuple[list[int], list[float]]:
    """Exact sums of each group of 128-bit values and an upper bound of |running sums|
    (in floating point, a little above the exact bound)."""
    def group_sum(part: npt.NDArray[np.int64]) -> list[int]:
        c = np.concatenate(([0], np.cumsum(part)))
        out: list[int] = (c[ends] - c[starts]).tolist()
        return out

    parts = [(lo & _MASK32).astype(np.int64), (lo >> _U32).astype(np.int64),
             hi & 0xFFFFFFFF, hi >> 32]
    sums_by_part = [group_sum(p) for p in parts]
    sums = [a + (b << 32) + (c << 64) + (d << 96) for a, b, c, d in zip(*sums_by_part,
                                                                       strict=True)]
    # |v| <= 2**64 * (|hi| + 1) bounds each value; their sum bounds the running sums.
    c = np.concatenate(([0.0], np.cumsum((np.abs(hi.astype(np.float64)) + 1.0) * 2.0**64)))
    bounds: list[float] = ((c[ends] - c[starts]) * 1.000001).tolist()
    return sums, bounds
