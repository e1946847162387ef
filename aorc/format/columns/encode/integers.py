"""Boolean, tinyint, smallint, int, bigint and date columns.

Booleans: DATA is a bit-packed byte-RLE stream (ORC Java's BooleanTreeWriter, encoding
DIRECT); Java adds nothing to a boolean column's bloom filters. Tinyints: DATA is byte RLE
(DIRECT). The other integers and dates (days since 1970-01-01 in the proleptic Gregorian
calendar, which the file declares): DATA is signed integer RLE v2 (DIRECT_V2).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec._encode_values import group_true_counts
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns.encode.base import (
    EncodedStream,
    EncodeLevel,
    ValueParts,
    exact_group_sums,
    group_bounds,
    group_reduce,
    positions_list,
    register,
    split_hashes,
)
from aorc.format.columns.encode.statistics import (
    BooleanStats,
    DateStats,
    IntegerStats,
)
from aorc.format.types import TypeKind

__all__ = ["boundaries", "int64_values", "integer_group_stats"]


def boundaries(level: EncodeLevel, vstarts: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The value indexes the kernels record positions at (none without a row index)."""
    return vstarts if level.indexed else np.zeros(0, np.int64)


def int64_values(values: pa.Array) -> npt.NDArray[np.int64]:
    """The (null-free) values of an integer, boolean or date32 array as int64."""
    if pa.types.is_date32(values.type):
        values = values.view(pa.int32())
    if pa.types.is_timestamp(values.type):  # Spark's TIMESTAMP_NTZ: bigint microseconds
        raw = np.asarray(values.view(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
        per = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}[values.type.unit]
        return raw // (per // 1_000_000) if per > 1_000_000 else raw * (1_000_000 // per)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.int64)


def _int_rle(level: EncodeLevel, kind: int, values: npt.NDArray[np.int64],
             vstarts: npt.NDArray[np.int64], signed: bool) -> EncodedStream:
    data, pos = rle.write_int_rle_v2_with_positions(values, signed, boundaries(level, vstarts))
    return EncodedStream(kind, data, positions_list(pos))


@register(TypeKind.BOOLEAN)
def encode_boolean(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                   groups: list[BooleanStats]) -> ValueParts:
    """Encode a boolean column's values."""
    bits = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.bool_)
    data, pos = rle.write_bool_rle_with_positions(bits, boundaries(level, vstarts))
    starts, ends = group_bounds(vstarts, len(bits))
    for g, count in zip(groups, group_true_counts(bits, starts, ends).tolist(), strict=True):
        g.true_count = count
    return ValueParts(pb.ColumnEncoding.DIRECT, [EncodedStream(pb.Stream.DATA, data,
                                                               positions_list(pos))], groups)


@register(TypeKind.BYTE)
def encode_byte(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                groups: list[IntegerStats]) -> ValueParts:
    """Encode a tinyint column's values."""
    v = int64_values(values)
    data, pos = rle.write_byte_rle_with_positions(v.astype(np.int8),
                                                      boundaries(level, vstarts))
    integer_group_stats(groups, v, vstarts)
    hashes = split_hashes(thomas_wang_hash64(v), vstarts) if level.bloom else None
    return ValueParts(pb.ColumnEncoding.DIRECT,
                      [EncodedStream(pb.Stream.DATA, data, positions_list(pos))], groups, hashes)


@register(TypeKind.SHORT, TypeKind.INT, TypeKind.LONG)
def encode_integer(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                   groups: list[IntegerStats]) -> ValueParts:
    """Encode a smallint, int or bigint column's values."""
    v = int64_values(values)
    stream = _int_rle(level, pb.Stream.DATA, v, vstarts, signed=True)
    integer_group_stats(groups, v, vstarts)
    hashes = split_hashes(thomas_wang_hash64(v), vstarts) if level.bloom else None
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, [stream], groups, hashes)


@register(TypeKind.DATE)
def encode_date(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                groups: list[DateStats]) -> ValueParts:
    """Encode a date column's values (days since 1970-01-01)."""
    days = int64_values(values)
    stream = _int_rle(level, pb.Stream.DATA, days, vstarts, signed=True)
    starts, ends = group_bounds(vstarts, len(days))
    lows, nonempty = group_reduce(np.minimum, days, starts, ends)
    highs, _ = group_reduce(np.maximum, days, starts, ends)
    for g, ok, low, high in zip(groups, nonempty.tolist(), lows.tolist(), highs.tolist(),
                                strict=True):
        if ok:
            g.minimum, g.maximum = low, high
    hashes = split_hashes(thomas_wang_hash64(days), vstarts) if level.bloom else None
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, [stream], groups, hashes)


def integer_group_stats(groups: list[IntegerStats], v: npt.NDArray[np.int64],
                        vstarts: npt.NDArray[np.int64]) -> None:
    """Fill minimum, maximum and sum (dropped on a 64-bit overflow) of each group."""
    starts, ends = group_bounds(vstarts, len(v))
    lows, nonempty = group_reduce(np.minimum, v, starts, ends)
    highs, _ = group_reduce(np.maximum, v, starts, ends)
    largest = max(abs(int(lows[nonempty].min())), abs(int(highs[nonempty].max()))) \
        if nonempty.any() else 0
    sums, overflow = exact_group_sums(v, starts, ends, largest)
    for i, g in enumerate(groups):
        if nonempty[i]:
            g.has_minimum = True
            g.minimum, g.maximum = int(lows[i]), int(highs[i])
        g.overflow = bool(overflow[i])
        g.sum = 0 if g.overflow else sums[i]
