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
from aorc.format.codec._encode_v2 import RleV2Stream
from aorc.format.codec._encode_values import timestamp_parts
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns._tz import ZoneOffsets, zone_offsets
from aorc.format.columns.encode.base import (
    EncodedStream,
    EncodeLevel,
    ValueParts,
    group_bounds,
    positions_list,
    register,
    split_hashes,
    value_pieces,
)
from aorc.format.columns.encode.integers import boundaries
from aorc.format.columns.encode.statistics import TimestampStats
from aorc.format.types import TypeKind, type_string

__all__: list[str] = []

_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
#: Java keeps timestamps as long milliseconds: seconds beyond this cannot be written.
_MAX_SECONDS = (2**63 - 1) // 1000 - 1


@register(TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT)
def encode_timestamp(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                     groups: list[TimestampStats]) -> ValueParts:
    """Encode a timestamp column's values."""
    t = level.t
    instant_kind = t.kind == TypeKind.TIMESTAMP_INSTANT
    try:
        zone = zone_offsets("UTC" if instant_kind else level.opts.timezone)
    except CorruptFileError as exc:
        raise SchemaError(f"unknown writer time zone {level.opts.timezone!r}") from exc
    raw = np.asarray(values.view(pa.int64()).to_numpy(zero_copy_only=False), np.int64)
    starts, ends = group_bounds(vstarts, len(raw))
    k = len(starts)
    low, high, low_sub, high_sub = (np.zeros(k, np.int64) for _ in range(4))
    nonempty = np.zeros(k, np.bool_)
    bounds = boundaries(level, vstarts)
    data_rle = RleV2Stream(True, bounds, len(raw))
    secondary_rle = RleV2Stream(False, bounds, len(raw))
    zone_args = (zone.base_epoch, *_wall_zone(zone),
                 not (instant_kind or values.type.tz is not None),
                 zone.transitions, zone.offsets, not instant_kind)
    millis_pieces = []
    # In pieces that stay in cache: one pass over each value, no column-sized arrays but
    # the encoded streams (see aorc.format.codec._encode_values.timestamp_parts).
    for a, b, piece_starts, piece_ends in value_pieces(len(raw), starts, ends):
        data_values, secondary_values, millis, bad = timestamp_parts(
            raw[a:b], _UNITS_PER_SECOND[values.type.unit], _MAX_SECONDS, *zone_args,
            piece_starts, piece_ends, level.bloom, low, high, low_sub, high_sub, nonempty)
        if bad >= 0:
            raise SchemaError(f"column {t.column_id} ({type_string(t)}): timestamp beyond "
                              "the range ORC writers can store")
        data_rle.write(data_values)
        secondary_rle.write(secondary_values)
        if millis is not None:
            millis_pieces.append(millis)
    data, dpos = data_rle.finish()
    secondary, spos = secondary_rle.finish()
    streams = [EncodedStream(pb.Stream.DATA, data, positions_list(dpos)),
               EncodedStream(pb.Stream.SECONDARY, secondary, positions_list(spos))]
    for i, g in enumerate(groups):
        if nonempty[i]:
            g.minimum, g.maximum = int(low[i]), int(high[i])
            g.min_nanos, g.max_nanos = int(low_sub[i]), int(high_sub[i])
    hashes = None
    if level.bloom:
        millis = np.concatenate(millis_pieces) if millis_pieces else np.zeros(0, np.int64)
        hashes = split_hashes(thomas_wang_hash64(millis), vstarts)
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, streams, groups, hashes)


def _wall_zone(zone: ZoneOffsets) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The bounds and offsets that wall-clock times are looked up in to find their instants:
    a wall time belongs after transition i once it reaches the transition's local time under
    the larger of the two offsets, so that gaps use the earlier offset (moving the time
    forward) and overlaps take the earlier instant."""
    if len(zone.transitions) == 0:
        return zone.transitions, zone.offsets
    return zone.transitions + np.maximum(zone.offsets[:-1], zone.offsets[1:]), zone.offsets
