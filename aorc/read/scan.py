"""The read driver's filtered path: predicate pushdown with selective reads.

Part of the async read driver (:mod:`aorc.read.reader` hands reads with ``filters=`` to
:func:`filtered_batches`); the planning is :class:`aorc.read.pushdown.ScanPlanner`'s, which
performs no I/O. Stripes that their statistics rule out are never touched. The others are
read in groups of consecutive stripes (about :data:`aorc.read.reader.GROUP_BYTES`), each in up to
three rounds of requests: the stripe footers, the index streams the filter needs, then the
byte ranges of the surviving row groups (a group spanning at most
:data:`aorc.read.reader.WHOLE_READ_BYTES` is read whole, in one request). The next group is
fetched while the current one is decoded in a worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from aorc.errors import AorcError
from aorc.filters.predicate import Predicate
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.stripe import StreamInfo
from aorc.format.tail import StripeInfo
from aorc.read.pushdown import Fetched, ScanPlanner, StripeWork
from aorc.read.reader import (
    GROUP_BYTES,
    WHOLE_READ_BYTES,
    OrcReader,
    _add_context,
    _guarded,
    _stripes_text,
)

__all__ = ["filtered_batches"]


@dataclass
class _Planned:
    """A stripe's plan and the bytes fetched for it, or the error that stopped it (raised
    when the stripe's turn comes); ``work`` None: no row can match."""

    stripe: StripeInfo
    work: StripeWork | None = None
    fetched: Fetched | None = None
    error: AorcError | None = None


def _groups(stripes: Sequence[StripeInfo]) -> list[list[StripeInfo]]:
    """Runs of consecutive stripes of about GROUP_BYTES (at least one stripe each)."""
    groups: list[list[StripeInfo]] = []
    size = 0
    for stripe in stripes:
        if (groups and groups[-1][-1].index + 1 == stripe.index
                and size + stripe.length <= GROUP_BYTES):
            groups[-1].append(stripe)
            size += stripe.length
        else:
            groups.append([stripe])
            size = stripe.length
    return groups


async def filtered_batches(reader: OrcReader, selected: set[int], predicate: Predicate,
                           batch_size: int | None) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of ``reader``'s file that match ``predicate``, as record batches of at most
    ``batch_size`` rows (``None``: one batch per run of row groups), in file order."""
    planner = ScanPlanner(reader._tail, selected, predicate, reader._decode_options,
                          reader._scan_stats)
    stripes = await asyncio.to_thread(_guarded, reader.path, None, planner.stripes)
    groups = _groups(stripes)
    if not groups:
        return
    pending: asyncio.Task[list[_Planned]] | None = reader._spawn(
        _fetch_group(reader, planner, groups[0]))
    try:
        for number in range(len(groups)):
            assert pending is not None
            planned = await pending
            pending = (reader._spawn(_fetch_group(reader, planner, groups[number + 1]))
                       if number + 1 < len(groups) else None)
            while planned:
                item = planned.pop(0)
                batches = await asyncio.to_thread(_guarded, reader.path,
                                                  f"stripe {item.stripe.index}", _decode,
                                                  planner, item)
                del item
                for batch in batches:
                    if batch_size is None or batch.num_rows <= batch_size:
                        yield batch
                        continue
                    for start in range(0, batch.num_rows, batch_size):
                        yield batch.slice(start, batch_size)
    finally:
        if pending is not None:
            pending.cancel()
            await asyncio.gather(pending, return_exceptions=True)


def _decode(planner: ScanPlanner, item: _Planned) -> list[pa.RecordBatch]:
    if item.error is not None:
        raise item.error
    if item.work is None:
        return []
    assert item.fetched is not None
    return list(planner.decode(item.work, item.fetched))


async def _fetch_group(reader: OrcReader, planner: ScanPlanner,
                       group: list[StripeInfo]) -> list[_Planned]:
    """Footers, index streams and surviving row groups' bytes of a group of stripes."""
    reader._check_open()
    start, end = group[0].offset, group[-1].end
    fetched = Fetched()
    try:
        if end - start <= WHOLE_READ_BYTES:
            (blob,) = await reader._read_ranges([(start, end - start)])
            fetched.add([(start, blob)])
            raw: list[bytes | memoryview] = [fetched.get(s.footer_offset, s.footer_length)
                                             for s in group]
        else:
            raw = await reader._read_ranges([(s.footer_offset, s.footer_length)
                                             for s in group], coalesce=False)
        layouts = await asyncio.to_thread(reader._layouts, group, raw)
        index = [r for stripe, entry in zip(group, layouts, strict=True)
                 if not isinstance(entry, AorcError)
                 for r in planner.index_ranges(stripe, *entry)]
        await _fetch(reader, fetched, index)
        planned = await asyncio.to_thread(_plan_all, reader, planner, group, layouts,
                                          fetched)
        await _fetch(reader, fetched, [r for p in planned if p.work is not None
                                       for r in p.work.ranges])
    except AorcError as exc:
        new = _add_context(exc, reader.path, _stripes_text(group))
        if new is exc:
            raise
        raise new from exc
    return planned


async def _fetch(reader: OrcReader, fetched: Fetched,
                 ranges: Sequence[tuple[int, int]]) -> None:
    missing = fetched.missing(ranges)
    if missing:
        data = await reader._read_ranges(missing)
        fetched.add(list(zip((o for o, _ in missing), data, strict=True)))


def _plan_all(reader: OrcReader, planner: ScanPlanner, group: Sequence[StripeInfo],
              layouts: Sequence[tuple[pb.StripeFooter, list[StreamInfo]] | AorcError],
              fetched: Fetched) -> list[_Planned]:
    """Plan each stripe of a group (runs in a worker thread); errors stay with their stripe."""
    out = []
    for stripe, entry in zip(group, layouts, strict=True):
        if isinstance(entry, AorcError):
            out.append(_Planned(stripe, error=entry))
            continue
        footer, layout = entry
        try:
            work = _guarded(reader.path, f"stripe {stripe.index}", planner.plan, stripe,
                            footer, layout, fetched)
        except AorcError as exc:
            out.append(_Planned(stripe, error=exc))
            continue
        out.append(_Planned(stripe, work, fetched))
    return out
