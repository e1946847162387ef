"""Boolean, tinyint, smallint, int, bigint and date columns.

Booleans are bit-packed byte RLE, tinyints byte RLE, the other integers and dates signed
integer RLE (version 1 for DIRECT, version 2 for DIRECT_V2). Values out of a narrower type's
range wrap, as in ORC C++. Dates are days since 1970-01-01; files that declare the hybrid
Julian/Gregorian calendar have their dates before 1582-10-15 rebased to the proleptic
Gregorian calendar Arrow uses (as Spark does); other files are read as stored.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.base import (
    TIMESTAMP_PER_SECOND,
    Context,
    Placement,
    fixed_width_array,
    register,
)
from aorc.format.types import OrcType, TypeKind

__all__ = ["GREGORIAN_START_DAY", "hybrid_to_proleptic_days"]

#: 1582-10-15, the first day of the Gregorian calendar, in days since 1970-01-01. From this
#: day on the hybrid and the proleptic calendars count days alike.
GREGORIAN_START_DAY = -141427

_INT_DTYPES = {
    TypeKind.SHORT: np.int16,
    TypeKind.INT: np.int32,
    TypeKind.LONG: np.int64,
    TypeKind.DATE: np.int32,
}


@register(TypeKind.BOOLEAN)
def decode_boolean(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a boolean column."""
    slots = ctx.slots(t, level)
    bits = slots.expand(ctx.bools(t, pb.Stream.DATA, slots.count), fill=False)
    data = pa.py_buffer(np.packbits(bits, bitorder="little"))
    return pa.Array.from_buffers(pa.bool_(), slots.length, [slots.validity(), data],
                                 null_count=slots.null_count)


@register(TypeKind.BYTE)
def decode_byte(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a tinyint column."""
    slots = ctx.slots(t, level)
    return fixed_width_array(pa.int8(), slots, ctx.bytes_rle(t, pb.Stream.DATA, slots.count))


@register(TypeKind.SHORT, TypeKind.INT, TypeKind.LONG, TypeKind.DATE)
def decode_integer(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a smallint, int, bigint or date column."""
    slots = ctx.slots(t, level)
    values = ctx.ints(t, pb.Stream.DATA, slots.count, signed=True)
    if t.kind == TypeKind.DATE and ctx.opts.calendar == pb.JULIAN_GREGORIAN and slots.count:
        values = hybrid_to_proleptic_days(values)
    values = values.astype(_INT_DTYPES[t.kind], copy=False)
    dt = ctx.arrow_type(t)
    if pa.types.is_timestamp(dt) and dt.unit != "us":  # Spark's TIMESTAMP_NTZ, coarser
        values = values // (1_000_000 // TIMESTAMP_PER_SECOND[dt.unit])
    return fixed_width_array(dt, slots, values)


def hybrid_to_proleptic_days(days: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Rebase day numbers of the hybrid Julian/Gregorian calendar to proleptic Gregorian.

    A day before 1582-10-15 is taken as a Julian calendar date (year, month, day) and mapped
    to the proleptic Gregorian day with the same fields, as Spark's rebasing does; a Julian
    29 February that the Gregorian calendar lacks becomes 1 March. Later days are unchanged.
    """
    old = days < GREGORIAN_START_DAY
    if not old.any():
        return days
    d = days[old]
    # Julian calendar fields from the Julian day number (astronomical years).
    c = d + (2440588 + 32082)
    yy = (4 * c + 3) // 1461
    e = c - (1461 * yy) // 4
    m = (5 * e + 2) // 153
    day = e - (153 * m + 2) // 5 + 1
    month = m + 3 - 12 * (m // 10)
    year = yy - 4800 + m // 10
    # Proleptic Gregorian days since 1970-01-01 of the same fields.
    year = year - (month <= 2)
    era = year // 400
    yoe = year - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    out = days.copy()
    out[old] = era * 146097 + doe - 719468
    return out
