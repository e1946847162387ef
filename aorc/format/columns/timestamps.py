"""Timestamp and timestamp-with-local-time-zone columns.

DATA (signed integer RLE) holds seconds since 2015-01-01 00:00:00 in the writer's time zone
(the stripe footer's ``writerTimezone``; files without one are read in the reader's zone, as
ORC Java and C++ do). SECONDARY (unsigned integer RLE) holds nanoseconds with trailing decimal
zeros stripped: the low 3 bits ``z`` say ``z + 1`` zeros were removed (none when ``z == 0``).

Writers store the seconds truncated toward zero, so a negative instant with a fraction of at
least a millisecond has one second too many; both reference readers take that second off
(``seconds < 0 and nanos > 999999``), and so does this one. ORC C++ (pyarrow) writes negative
instants as negative nanoseconds instead; those come back intact because the significand is
shifted arithmetically, as ORC C++ reads it.

A TIMESTAMP becomes a naive ``timestamp[ns]`` holding the wall-clock time the writer saw
(the instant plus the writer zone's UTC offset at that instant), whatever the reader's zone;
that is what ORC C++ returns with its default GMT reader zone and what ORC Java shows. With
``DecodeOptions.use_writer_timezone`` (ORC C++'s ``setUseWriterTimezone``, ORC-2213) it
becomes the instant itself, ``timestamp[ns, UTC]``, for writers that stored zoned instants
in a TIMESTAMP column. A
TIMESTAMP_INSTANT is UTC-based and becomes ``timestamp[ns, UTC]``. Values outside the range
of the unit (for ``timestamp[ns]``, 1677-09-21 to 2262-04-11) raise an error rather than
wrap. Files on the hybrid Julian/Gregorian calendar (ORC Java, Spark) have their wall-clock
times before 1582-10-15 rebased to the proleptic calendar keeping date and time of day, as
Spark reads them (and as dates are rebased).

The unit is a decode parameter (``DecodeOptions.timestamp_unit``: ``"s"``, ``"ms"``, ``"us"``
or ``"ns"``, the reader's ``timestamp_unit`` option): in a coarser unit the values are
floored to it, and the whole range of ORC timestamps (year 9999 included) fits ``"us"``. A
value that does not fit the unit raises an error naming the option.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import CorruptFileError, SchemaError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.columns._tz import ZoneOffsets, zone_offsets
from aorc.format.columns.base import (
    Context,
    Placement,
    column_error,
    fixed_width_array,
    register,
    with_timestamp_unit,
)
from aorc.format.columns.integers import GREGORIAN_START_DAY, hybrid_to_proleptic_days
from aorc.format.types import OrcType, TypeKind, type_string

__all__ = ["TIMESTAMP_UNITS", "check_timestamp_unit", "decode_nanos", "with_timestamp_unit"]

_MAX_SECONDS = 9_223_372_035  # |seconds * 1e9 + nanos| stays below 2**63 up to here
_MAX_RAW_SECONDS = 2**40  # far beyond timestamp[ns]; keeps the arithmetic from wrapping
_MAX_OFFSET = 2 * 86400  # more than any zone's UTC offset
#: Arrow timestamp units and their number per second.
TIMESTAMP_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_UNIT_RANGES = {"ns": "1677-09-21 to 2262-04-11"}


def check_timestamp_unit(unit: object) -> None:
    """Raise SchemaError unless ``unit`` is a value of the ``timestamp_unit`` option."""
    if unit not in TIMESTAMP_UNITS:
        raise SchemaError(f"timestamp_unit must be one of {', '.join(TIMESTAMP_UNITS)}, got "
                          f"{unit!r}")


def decode_nanos(raw: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Nanoseconds from SECONDARY values (significand shifted arithmetically, as ORC C++)."""
    return rle.decode_nanos(raw)


@register(TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT)
def decode_timestamp(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a timestamp or timestamp with local time zone column."""
    slots = ctx.slots(t, level)
    seconds = ctx.ints(t, pb.Stream.DATA, slots.count, signed=True)
    raw_nanos = ctx.ints(t, pb.Stream.SECONDARY, slots.count, signed=False)
    if slots.count == 0:
        return fixed_width_array(ctx.arrow_type(t), slots, np.zeros(0, np.int64))
    instant = t.kind == TypeKind.TIMESTAMP_INSTANT or ctx.opts.use_writer_timezone
    if ctx.opts.timestamp_unit == "ns" and not ctx.opts.use_writer_timezone:  # one pass
        zone = _zone(t, ctx)
        julian = t.kind == TypeKind.TIMESTAMP and ctx.opts.calendar == pb.JULIAN_GREGORIAN
        values = rle.timestamps_ns(seconds, raw_nanos, slots.valid, slots.length,
                                   zone.base_epoch, zone.transitions, zone.offsets,
                                   GREGORIAN_START_DAY * 86_400 if julian else None)
        if values is not None:
            return pa.Array.from_buffers(ctx.arrow_type(t), slots.length,
                                         [slots.validity(), pa.py_buffer(values)],
                                         null_count=slots.null_count)
    nanos = decode_nanos(raw_nanos)
    low, high = int(nanos.min()), int(nanos.max())
    if low < -999_999_999 or high > 999_999_999:
        bad = low if low < -999_999_999 else high
        raise column_error(t, pb.Stream.SECONDARY, f"nanoseconds {bad} out of range")
    unit = ctx.opts.timestamp_unit
    per_second = TIMESTAMP_UNITS[unit]
    max_seconds = _MAX_SECONDS if unit == "ns" else (2**63 - 1) // per_second - 1
    first, last = _check_range(t, seconds, _MAX_RAW_SECONDS if unit == "ns"
                               else min(2**61, max_seconds - _MAX_OFFSET - 2**33), unit)
    zone = _zone(t, ctx)
    instants = seconds + zone.base_epoch
    if first + zone.base_epoch < 0 and high > 999_999:
        instants -= (instants < 0) & (nanos > 999_999)
    wall = instants if instant else zone.to_wall(instants)
    if t.kind == TypeKind.TIMESTAMP and ctx.opts.calendar == pb.JULIAN_GREGORIAN:
        if instant:  # the instant moved as its wall-clock time is rebased
            local = zone.to_wall(instants)
            wall = wall + (_hybrid_to_proleptic(local) - local)
        else:
            wall = _hybrid_to_proleptic(wall)
    if max(-first, last) + abs(zone.base_epoch) + _MAX_OFFSET > max_seconds:
        _check_extremes(t, wall, nanos, unit)
    # Wrapping int64 arithmetic: exact whenever the result fits, which is now checked.
    wall *= per_second
    wall += nanos if unit == "ns" else nanos // (1_000_000_000 // per_second)
    return fixed_width_array(ctx.arrow_type(t), slots, wall)


def _hybrid_to_proleptic(wall: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Wall-clock seconds counted on the hybrid Julian/Gregorian calendar (ORC Java, Spark)
    rebased to the proleptic Gregorian calendar as Spark rebases them: the same date and
    time of day. Only times before 1582-10-15 change."""
    if not len(wall) or int(wall.min()) >= GREGORIAN_START_DAY * 86_400:
        return wall
    days, seconds = np.divmod(wall, 86_400)
    return hybrid_to_proleptic_days(days) * 86_400 + seconds


def _zone(t: OrcType, ctx: Context) -> ZoneOffsets:
    """The zone the column's seconds count in."""
    if t.kind == TypeKind.TIMESTAMP_INSTANT:
        return zone_offsets("UTC")
    if ctx.streams.writer_timezone:
        with ctx.reading(t, "writer time zone"):
            return zone_offsets(ctx.streams.writer_timezone)
    try:
        return zone_offsets(ctx.opts.reader_timezone)
    except CorruptFileError as exc:
        raise SchemaError(f"unknown reader time zone {ctx.opts.reader_timezone!r}") from exc


def _out_of_range(t: OrcType, seconds: int, unit: str = "ns") -> UnsupportedFeatureError:
    span = f" ({_UNIT_RANGES[unit]})" if unit in _UNIT_RANGES else ""
    hint = (" (read with timestamp_unit='us', 'ms' or 's' to get it)" if unit == "ns"
            else "")
    return UnsupportedFeatureError(
        f"column {t.column_id} ({type_string(t)}) holds a timestamp {seconds} s from the epoch, "
        f"outside the range of Arrow timestamp[{unit}]{span} of timestamp_unit={unit!r}"
        f"{hint}")


def _check_range(t: OrcType, seconds: npt.NDArray[np.int64], limit: int,
                 unit: str = "ns") -> tuple[int, int]:
    """The smallest and largest value; raise when one is beyond ``limit``."""
    low, high = int(seconds.min()), int(seconds.max())
    if low < -limit or high > limit:
        raise _out_of_range(t, low if low < -limit else high, unit)
    return low, high


def _check_extremes(t: OrcType, wall: npt.NDArray[np.int64],
                    nanos: npt.NDArray[np.int64], unit: str = "ns") -> None:
    """Check exactly that ``wall`` in ``unit`` plus the nanoseconds fits int64 where it
    might not."""
    per_second = TIMESTAMP_UNITS[unit]
    limit = (2**63 - 1) // per_second - 1 if unit != "ns" else _MAX_SECONDS
    for row in np.flatnonzero((wall < -limit) | (wall > limit)):
        value = int(wall[row]) * per_second + int(nanos[row]) // (1_000_000_000 // per_second)
        if not -(2**63) <= value < 2**63:
            raise _out_of_range(t, int(wall[row]), unit)
