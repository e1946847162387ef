"""Float and double columns: DATA holds raw little-endian IEEE 754 values (encoding DIRECT).

Every NaN is written as the canonical quiet NaN, as Java's ``floatToIntBits`` /
``doubleToLongBits`` give it.

Statistics follow ORC Java's DoubleStatisticsImpl: float values are widened to double; the
minimum and maximum are replaced only by strictly smaller/larger values, so a group whose
first value is NaN keeps NaN for both, later NaNs are ignored, and of equal zeros the first
one seen (0.0 or -0.0) is kept; the sum is accumulated value by value in order, with the NaN
that x86 arithmetic gives (the first NaN value, or the default NaN of ``inf - inf``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.bloom import double_to_long_bits, thomas_wang_hash64
from aorc.format.columns.encode.base import (
    EncodedStream,
    EncodeLevel,
    ValueParts,
    group_bounds,
    register,
    split_hashes,
)
from aorc.format.columns.encode.integers import boundaries
from aorc.format.columns.encode.statistics import (
    DoubleStats,
)
from aorc.format.types import TypeKind

__all__: list[str] = []


@register(TypeKind.FLOAT, TypeKind.DOUBLE)
def encode_float(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                 groups: list[DoubleStats]) -> ValueParts:
    """Encode a float or double column's values."""
    dtype = np.dtype("<f4") if level.t.kind == TypeKind.FLOAT else np.dtype("<f8")
    v = np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype)
    positions = (boundaries(level, vstarts) * dtype.itemsize)[:, None].tolist()
    raw = v
    nan = np.isnan(v)
    if nan.any():  # Java writes floatToIntBits/doubleToLongBits: one canonical NaN
        raw = v.copy()
        raw[nan] = np.nan
    stream = EncodedStream(pb.Stream.DATA, raw.tobytes(), positions)
    wide = v.astype(np.float64)
    double_group_stats(groups, wide, vstarts)
    hashes = None
    if level.bloom:
        hashes = split_hashes(thomas_wang_hash64(double_to_long_bits(wide)), vstarts)
    return ValueParts(pb.ColumnEncoding.DIRECT, [stream], groups, hashes)


def double_group_stats(groups: list[DoubleStats], v: npt.NDArray[np.float64],
                       vstarts: npt.NDArray[np.int64]) -> None:
    """Fill minimum, maximum and sum of each group as ORC Java computes them (in a C kernel
    without the GIL: ``rle.double_group_stats``)."""
    starts, ends = group_bounds(vstarts, len(v))
    sums, lows, highs = rle.double_group_stats(v, starts, ends)
    for g, a, b, total, low, high in zip(groups, starts.tolist(), ends.tolist(),
                                         sums.tolist(), lows.tolist(), highs.tolist(),
                                         strict=True):
        if a == b:
            continue
        g.sum = total
        g.has_minimum = True
        g.minimum, g.maximum = low, high
