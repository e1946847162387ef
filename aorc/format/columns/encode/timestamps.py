"""Timestamp and timestamp-with-local-time-zone columns (encoding DIRECT_V2).

A naive Arrow timestamp is the wall-clock time in the writer's zone (``WriteOptions.timezone``);
it is turned into an instant there (a wall-clock time that a daylight-saving gap skips moves
forward by the gap, an ambiguous one takes the earlier instant, as ``java.time`` resolves
them). A tz-aware Arrow timestamp is an instant already; written to a timestamp column it is
stored as its wall-clock time in the writer's zone. The instant kind (timestamp with local
time zone) is counted from UTC; naive values written to it are taken as UTC.

DATA holds the seconds from 2015-01-01 00:00:00 in the writer's zone (UTC for the instant
kind), signed RLE v2; SECONDARY the nanoseconds with trailing zeros stripped, unsigned RLE v2.
As ORC Java (TimestampTreeWriter) does, the seconds of an instant before 1970 with at least a
millisecond of fraction are rounded toward zero, one more than the floor, which both ORC
readers take back off. Java's arithmetic cannot represent an instant strictly between one
second before the epoch and the epoch that way (readers see it a second late, e.g. -1 µs comes
back as +0.999999 s); this writer writes the same bytes, so the file reads back as Java's
would.

Statistics hold the wall-clock milliseconds read as UTC (``minimumUtc``/``maximumUtc``; for the
instant kind the instant's milliseconds) with Java's millisecond arithmetic, and the
sub-millisecond nanoseconds. Bloom filters hash the same milliseconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import CorruptFileError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns._tz import ZoneOffsets, zone_offsets
from aorc.format.columns.encode.base import (
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
from aorc.format.columns.encode.statistics import TimestampStats
from aorc.format.types import TypeKind, type_string

__all__ = ["split_timestamps", "wall_to_instant"]

_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
#: Java keeps timestamps as long milliseconds: seconds beyond this cannot be written.
_MAX_SECONDS = (2**63 - 1) // 1000 - 1


def split_timestamps(values: pa.Array) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Floor seconds and nanoseconds (0..999999999) of non-null Arrow timestamps."""
    raw = np.asarray(values.view(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    per_second = _UNITS_PER_SECOND[values.type.unit]
    if per_second == 1:
        return raw, np.zeros(len(raw), np.int64)
    seconds, fraction = np.divmod(raw, per_second)
    return seconds, fraction * (1_000_000_000 // per_second)


def wall_to_instant(zone: ZoneOffsets, wall: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Instants (seconds since the epoch) of wall-clock seconds in ``zone``."""
    if len(zone.transitions) == 0:
        out: npt.NDArray[np.int64] = wall - zone.offsets[0]
        return out
    # A wall time belongs after transition i once it reaches the transition's local time
    # under the larger of the two offsets: gaps then use the earlier offset (moving the time
    # forward) and overlaps the earlier instant.
    local = zone.transitions + np.maximum(zone.offsets[:-1], zone.offsets[1:])
    out = wall - zone.offsets[np.searchsorted(local, wall, side="right")]
    return out


@register(TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT)
def encode_timestamp(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                     groups: list[TimestampStats]) -> ValueParts:
    """Encode a timestamp column's values."""
    t = level.t
    seconds, nanos = split_timestamps(values)
    if len(seconds) and int(np.abs(seconds).max()) > _MAX_SECONDS:
        raise SchemaError(f"column {t.column_id} ({type_string(t)}): timestamp beyond the "
                          "range ORC writers can store")
    instant_kind = t.kind == TypeKind.TIMESTAMP_INSTANT
    try:
        zone = zone_offsets("UTC" if instant_kind else level.opts.timezone)
    except CorruptFileError as exc:
        raise SchemaError(f"unknown writer time zone {level.opts.timezone!r}") from exc
    if instant_kind or values.type.tz is not None:  # instants already
        instants = seconds
    else:
        instants = wall_to_instant(zone, seconds)
    java_seconds = instants + ((instants < 0) & (nanos >= 1_000_000))
    bounds = boundaries(level, vstarts)
    data, dpos = rle.write_int_rle_v2_with_positions(java_seconds - zone.base_epoch, True,
                                                         bounds)
    secondary, spos = rle.write_int_rle_v2_with_positions(rle.encode_nanos(nanos),
                                                              False, bounds)
    streams = [EncodedStream(pb.Stream.DATA, data, positions_list(dpos)),
               EncodedStream(pb.Stream.SECONDARY, secondary, positions_list(spos))]
    millis = java_seconds * 1000 + nanos // 1_000_000
    millis -= 1000 * ((millis < 0) & (nanos > 999_999))
    if not instant_kind:
        millis = millis + 1000 * zone.offsets_at(np.floor_divide(millis, 1000))
    timestamp_group_stats(groups, millis, nanos % 1_000_000, vstarts)
    hashes = split_hashes(thomas_wang_hash64(millis), vstarts) if level.bloom else None
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, streams, groups, hashes)


def timestamp_group_stats(groups: list[TimestampStats], millis: npt.NDArray[np.int64],
                          sub: npt.NDArray[np.int64], vstarts: npt.NDArray[np.int64]) -> None:
    """Fill each group's extremes: the (milliseconds, sub-millisecond nanos) pairs that come
    first and last in order."""
    starts, ends = group_bounds(vstarts, len(millis))
    low, nonempty = group_reduce(np.minimum, millis, starts, ends)
    high, _ = group_reduce(np.maximum, millis, starts, ends)
    group_of = np.repeat(np.arange(len(starts)), ends - starts)
    big = np.int64(2**62)
    low_sub, _ = group_reduce(np.minimum, np.where(millis == low[group_of], sub, big),
                              starts, ends)
    high_sub, _ = group_reduce(np.maximum, np.where(millis == high[group_of], sub, -1),
                               starts, ends)
    for i, g in enumerate(groups):
        if nonempty[i]:
            g.minimum, g.maximum = int(low[i]), int(high[i])
            g.min_nanos, g.max_nanos = int(low_sub[i]), int(high_sub[i])
