"""Protobuf messages of the write path made without a protobuf arena apiece.

protobuf's Python module (upb) gives every message made on its own -- ``pb.Stream()``, and
the bookkeeping of a sub-message reached before it is set (``entry.statistics.x = ...`` on
a fresh entry) -- an arena of its own, and it calls ``malloc_trim(0)`` after every 10,000
arena blocks freed. That trim hands every free page of the process's heap back to the
system, so the next large buffers (the encoders' NumPy arrays, zstd's output) are faulted in
and zeroed again: a write that follows a trim costs thousands of page faults more than the
others. Writing a 200-column table of one stripe made about 30,000 such blocks (3 trims per
write); the temporal benchmark table about 1,700 (a trim every sixth write) (issue 31).

The writer makes its statistics and row index entries here instead: each message is filled
in a *scratch* message the thread keeps (its sub-messages reached many times, its arena
reused), serialized, and either kept as bytes (a row index is written as bytes) or parsed in
one go into one holder message, whose sub-messages are then ordinary messages sharing one
arena. The bytes are the ones protobuf itself writes (fields in number order).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from google.protobuf.message import Message

from aorc.format._proto import orc_proto_pb2 as pb

__all__ = ["length_delimited", "parsed_statistics", "parsed_types", "row_index_bytes",
           "scratch_serialized", "varint"]

#: Uses of one scratch message before it is replaced: a cleared message's sub-messages are
#: allocated again in its arena, which grows by ~30-250 bytes per use until replaced.
SCRATCH_USES = 4096

_local = threading.local()
_M = TypeVar("_M", bound=Message)


def varint(n: int) -> bytes:
    """``n`` (0 <= n < 2**64) as a protobuf base-128 varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def length_delimited(field_number: int, payload: bytes) -> bytes:
    """``payload`` as a length-delimited field (wire type 2) numbered ``field_number``."""
    return varint(field_number << 3 | 2) + varint(len(payload)) + payload


def _scratch(cls: type[_M]) -> _M:
    """The calling thread's scratch message of ``cls``, cleared; replaced every
    ``SCRATCH_USES`` uses."""
    kept: dict[type, list[Any]] | None = getattr(_local, "kept", None)
    if kept is None:
        kept = _local.kept = {}
    slot = kept.get(cls)
    if slot is None or slot[1] >= SCRATCH_USES:
        slot = kept[cls] = [cls(), 0]
    slot[1] += 1
    msg: _M = slot[0]
    msg.Clear()
    return msg


def scratch_serialized(fill: Callable[[_M], object], cls: type[_M]) -> bytes:
    """The bytes of the ``cls`` message ``fill`` writes into an empty message."""
    msg = _scratch(cls)
    fill(msg)
    out: bytes = msg.SerializeToString()
    return out


def row_index_bytes(entries: Iterable[tuple[Sequence[int], bytes]]) -> bytes:
    """A serialized ``RowIndex`` of ``(positions, serialized statistics)`` entries."""
    msg = _scratch(pb.RowIndexEntry)
    out = []
    for positions, stats in entries:
        msg.ClearField("positions")
        msg.positions.extend(positions)
        # positions (field 1) then statistics (field 2), as protobuf orders them
        entry = msg.SerializeToString() + length_delimited(2, stats)
        out.append(length_delimited(1, entry))
    return b"".join(out)


def parsed_statistics(payloads: Iterable[bytes]) -> list[pb.ColumnStatistics]:
    """Statistics messages parsed from their serialized ``payloads``, in order, all of them
    sub-messages of one holder (a ``StripeStatistics``): one arena for them all."""
    holder = pb.StripeStatistics()
    holder.MergeFromString(b"".join(length_delimited(1, p) for p in payloads))  # colStats
    return list(holder.colStats)


def parsed_types(payloads: Iterable[bytes]) -> list[pb.Type]:
    """Type messages parsed from their serialized ``payloads``, in order, sub-messages of
    one holder (a ``Footer``, whose ``types`` are field 4)."""
    holder = pb.Footer()
    holder.MergeFromString(b"".join(length_delimited(4, p) for p in payloads))
    return list(holder.types)
