"""Streaming a long stripe: its batches decoded slice after slice (issue 20).

``iter_batches`` hands a stripe of more rows than :func:`slice_rows` to
:func:`decode_slices`, which decodes it in slices of that many rows
(:class:`aorc.read.plan.StripeSlices`; a filtered read's stripe read whole:
:class:`aorc.read.pushdown.FilteredSlices`) on the decode thread pool: the next slice while the
caller holds the current one, the columns of a slice on several threads. A slice is one
batch, or :data:`MIN_SLICE_ROWS` rows cut into batches when batches are smaller (each slice
costs some fixed work per column). Peak memory is then about two slices per column whatever
the stripe's row count (a valid file of 10**9 rows in a few megabytes of RLE runs streams in
about 100 MiB), instead of the whole stripe's Arrow arrays.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

import pyarrow as pa

from aorc.read.plan import SliceSource
from aorc.read.stripe_run import SliceJob, decode_stripe
from aorc.threads import shared_pool

__all__ = ["MIN_SLICE_ROWS", "decode_slices", "slice_rows"]

#: Streams decode at least this many rows of a stripe at a time (then cut into batches).
MIN_SLICE_ROWS = 65536


def slice_rows(batch_size: int | None) -> int | None:
    """The rows of a slice for batches of ``batch_size`` rows (``None``: a whole read, which
    decodes whole stripes)."""
    return None if batch_size is None else max(batch_size, MIN_SLICE_ROWS)


async def decode_slices(source: SliceSource, batch_size: int, threads: int,
                        spawn: Callable[[Awaitable[Any]], asyncio.Task[Any]]
                        ) -> AsyncGenerator[pa.RecordBatch, None]:
    """A stripe's batches of ``batch_size`` rows (the last one shorter), in order.

    Args:
        source: the stripe's slices.
        batch_size: the rows of a batch.
        threads: the threads a slice's columns may use.
        spawn: starts a task (the reader's, which cancels its tasks when it closes).
    """
    loop = asyncio.get_running_loop()
    pool = shared_pool()
    rows = slice_rows(batch_size) or batch_size

    async def one() -> pa.RecordBatch:
        if threads == 1 or len(source.tops) == 1:
            done: pa.RecordBatch = await loop.run_in_executor(pool, source.next_batch, rows)
            return done
        [batch] = await decode_stripe(SliceJob(source, rows), threads)
        return batch

    task: asyncio.Task[pa.RecordBatch] | None = spawn(one())
    try:
        while task is not None:
            batch = await task
            task = spawn(one()) if source.left else None
            for start in range(0, batch.num_rows, batch_size):
                yield batch.slice(start, batch_size) if rows > batch_size else batch
    finally:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
