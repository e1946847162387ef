"""Memory of :class:`aorc.sink.RollingSink`: where upload parts wait, how stripes shrink.

Part buffers. An open file on an object store collects its encoded bytes until an upload
part is full (5 MiB on S3). With ``buffer="disk"`` (the default on object stores, as Hadoop
S3A's fast upload buffer) those bytes wait in a spool folder on local disk
(:class:`aorc.io.spool.Spool`, created on first use, removed on close; a killed sink's
folder is removed by the next sink started on the machine) and are read back a part at a
time to be sent; an open file then costs the rows of its current stripe, not a part.
``buffer="memory"`` keeps them in memory. Local files are written straight to their
temporary file either way.

Stripes before files. When the open files' rows would not fit the budget, stripes end
early first: every file's stripe capacity is scaled by ``budget share / capacities
requested`` (as ORC Java's ``MemoryManager`` scales every writer's stripe size), and when
the budget is still short the file holding the most rows encodes its stripe now. Neither
goes below :data:`STRIPE_FLOOR` estimated bytes of rows per stripe; only when every stripe
is that small are streams cut (oldest first). Shrunk stripes depend on what else is open,
so under memory pressure a replay may encode other stripes (and its size cuts move by a
stripe): the files it overwrites still hold each record once.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from typing import Any

from aorc.errors import SchemaError
from aorc.io.spool import DEFAULT_MAX_SPOOL_BYTES, Spool
from aorc.sink.files import IN_FLIGHT_COPIES, STRIPE_FLOOR
from aorc.sink.plan import OpenFile, StreamState

__all__ = [
    "BUFFERS",
    "ROWS_SHARE",
    "STRIPE_FLOOR",
    "Spooling",
    "in_flight",
    "oldest",
    "shrink_candidate",
    "stripe_scale",
]

#: ``buffer=``: where upload parts wait.
BUFFERS = ("disk", "memory")
#: The share of the memory budget the open files' current stripes are scaled to fill (the
#: rest: stripes being encoded, parts in flight, files being closed).
ROWS_SHARE = 0.5


class Spooling:
    """The sink's choice of part buffers and its spool folder (opened on first use).

    Args:
        buffer: ``"disk"``, ``"memory"`` or None (disk on object stores).
        spool_dir: the folder under which the spool folder is made (default: the system's
            temporary folder).
        max_spool_bytes: the most bytes on disk; writes beyond stay in memory.

    Raises:
        SchemaError: a bad ``buffer`` or ``max_spool_bytes``.
    """

    def __init__(self, buffer: str | None, spool_dir: str | os.PathLike[str] | None,
                 max_spool_bytes: int | None) -> None:
        if buffer is not None and buffer not in BUFFERS:
            raise SchemaError(f"buffer must be 'disk' or 'memory', got {buffer!r}")
        limit = DEFAULT_MAX_SPOOL_BYTES if max_spool_bytes is None else max_spool_bytes
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise SchemaError(f"max_spool_bytes must be a positive integer, got {limit!r}")
        self.mode = buffer or "disk"
        self.spool_dir = os.fspath(spool_dir) if spool_dir is not None else None
        self.max_bytes = limit
        self.spool: Spool | None = None
        self._opening: asyncio.Future[Spool] | None = None

    async def attach(self, output: Any) -> None:
        """Give ``output`` (before its first write) a spooling part buffer, when it is an
        upload and the mode is ``"disk"``."""
        use = getattr(output, "use_part_buffer", None)
        if self.mode != "disk" or use is None:
            return
        if self.spool is None:
            if self._opening is None:
                self._opening = asyncio.ensure_future(asyncio.to_thread(
                    Spool.open, self.spool_dir, self.max_bytes))
            self.spool = await asyncio.shield(self._opening)
        use(self.spool.buffer(int(output.part_size(1))))

    @property
    def peak_bytes(self) -> int:
        """The most bytes the spool held on disk."""
        return self.spool.peak if self.spool is not None else 0

    async def close(self) -> None:
        """Remove the spool folder (its files' buffers were cleared or are dropped now)."""
        if self._opening is not None and self.spool is None:
            try:
                self.spool = await asyncio.shield(self._opening)
            except Exception:  # noqa: BLE001 - nothing was made
                return
        if self.spool is not None:
            await asyncio.to_thread(self.spool.close)


def writers(streams: Iterable[StreamState]) -> list[tuple[StreamState, OpenFile]]:
    """The open files with a writer, with their streams."""
    return [(s, f) for s in streams for f in s.files.values() if f.writer is not None]


def in_flight(streams: Iterable[StreamState]) -> tuple[int, list[asyncio.Future[Any]]]:
    """Bytes held by the open files' part uploads (with the HTTP client's copies) and the
    uploads."""
    held, uploads = 0, list[asyncio.Future[Any]]()
    for _, f in writers(streams):
        nbytes, tasks = f.writer.in_flight
        held += IN_FLIGHT_COPIES * nbytes
        uploads += tasks
    return held, uploads


def oldest(streams: Iterable[StreamState]) -> StreamState | None:
    """The stream holding the oldest rows."""
    live = [s for s in streams if s.files]
    return min(live, key=lambda s: s.epoch) if live else None


def shrink_candidate(streams: Iterable[StreamState]) -> tuple[StreamState, OpenFile] | None:
    """The open file holding the most rows in a stripe of at least :data:`STRIPE_FLOOR`
    estimated bytes (whose stripe may end now), or None."""
    best: tuple[StreamState, OpenFile] | None = None
    for s, f in writers(streams):
        w = f.writer
        if w.stripe_est >= STRIPE_FLOOR and (best is None
                                             or w.rows_bytes > best[1].writer.rows_bytes):
            best = (s, f)
    return best


def stripe_scale(streams: Iterable[StreamState], budget: int) -> float:
    """The factor scaling every open file's stripe capacity so that their stripes fill
    :data:`ROWS_SHARE` of ``budget`` (at most 1); sets it on the writers."""
    ws = [f.writer for _, f in writers(streams)]
    requested = sum(w.base_capacity for w in ws)
    scale = min(1.0, ROWS_SHARE * budget / requested) if requested else 1.0
    for w in ws:
        w.scale = scale
    return scale
