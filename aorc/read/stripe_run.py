"""Decoding one stripe on the shared pool, its columns shared by whichever threads are free.

:func:`decode_stripe` hands a stripe to the pool (:mod:`aorc.threads`) once: a pool task runs
the job's ``prepare``, then up to ``threads`` threads (that task's and helpers it submits)
take the parts one at a time, heaviest first by :attr:`~aorc.read.plan.StripeJob.weights`,
and the thread that finishes the last part runs ``assemble`` and hands the batches back to
the event loop (the parts are a :meth:`aorc.threads.WorkerPool.share`). No thread ever
waits for another: a thread that finds no part left returns to the pool at once, free to
start the next stripe, whose task is already queued there.

Measured on the 2M-row events file (two stripes, two threads), the two ways this replaced:
- a loop round trip per bundle of parts (``prepare``, four bundles, ``assemble``) left both
  threads idle for milliseconds whenever the event loop's thread waited for the GIL or a
  core, which made two-thread reads bimodal;
- :func:`aorc.threads.pool_map` over the parts from one pool task made the task's thread wait
  for its helper's last (long) part: about 18 ms of one idle thread per stripe.

Errors are raised with the file and the stripe as context (:meth:`StripeJob.guard`); after
the first one, or once the awaiting task is cancelled, no further part is started.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import pyarrow as pa

from aorc.read.plan import SliceSource
from aorc.threads import WorkShare, shared_pool

__all__ = ["PartsJob", "SliceJob", "decode_stripe"]


class PartsJob(Protocol):
    """What :func:`decode_stripe` runs (a :class:`aorc.read.plan.StripeJob`, or a stream's
    slice: :class:`SliceJob`)."""

    @property
    def weights(self) -> Sequence[int]:
        """An estimate of each part's work (empty: unknown)."""
        ...

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func`` with errors given the file and the stripe as context."""
        ...

    def prepare(self) -> list[Callable[[], Any]]:
        """The parts."""
        ...

    def assemble(self, results: list[Any]) -> list[pa.RecordBatch]:
        """The batches of the parts' results."""
        ...


class SliceJob:
    """The next slice of ``rows`` rows of a stream's stripe, as a :class:`PartsJob` (slices
    must be run one after the other: each ``prepare`` moves the stripe's cursors on)."""

    def __init__(self, source: SliceSource, rows: int) -> None:
        self._source = source
        self._rows = rows

    @property
    def weights(self) -> Sequence[int]:
        """The stripe's part weights."""
        return self._source.weights

    def guard(self, func: Callable[..., Any], *args: Any) -> Any:
        """Run ``func`` with the stripe's error context."""
        return self._source.guard(func, *args)

    def prepare(self) -> list[Callable[[], Any]]:
        """The parts of the next slice."""
        return self._source.prepare(self._rows)

    def assemble(self, results: list[Any]) -> list[pa.RecordBatch]:
        """The slice's batch."""
        return [self._source.assemble(results)]


async def decode_stripe(job: PartsJob, threads: int) -> list[pa.RecordBatch]:
    """The batches of ``job``'s stripe, decoded on up to ``threads`` pool threads."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[list[pa.RecordBatch]] = loop.create_future()
    run = _StripeRun(job, max(1, threads), loop, done)
    shared_pool().submit(run.start)
    try:
        return await done
    finally:
        run.stop()  # cancelled or failed: no further part starts


class _StripeRun:
    """One stripe's parts, taken by the pool's threads (see the module's docstring): a
    :meth:`aorc.threads.WorkerPool.share` of the parts, heaviest first, whose last part's
    thread assembles the batches."""

    def __init__(self, job: PartsJob, threads: int, loop: asyncio.AbstractEventLoop,
                 done: asyncio.Future[list[pa.RecordBatch]]) -> None:
        self._job = job
        self._threads = threads
        self._loop = loop
        self._done = done
        self._lock = threading.Lock()
        self._share: WorkShare[Any] | None = None
        self._stopped = False

    def stop(self) -> None:
        """Start no further part."""
        with self._lock:
            self._stopped = True
            share = self._share
        if share is not None:
            share.stop()

    def start(self) -> None:
        """Prepare the parts, share them with the helpers, and work."""
        job = self._job
        try:
            parts: list[Callable[[], Any]] = job.guard(job.prepare)
        except BaseException as exc:  # handed to the awaiting task
            self._finish(None, exc)
            return
        if not parts:
            self._end([], None)
            return
        weights = job.weights if len(job.weights) == len(parts) else [1] * len(parts)
        with self._lock:
            if self._stopped:
                return
            share = self._share = shared_pool().share(
                lambda i: job.guard(parts[i]), len(parts),
                helpers=min(self._threads, len(parts)) - 1,
                order=sorted(range(len(parts)), key=lambda i: -weights[i]), end=self._end)
        share.work()

    def _end(self, results: list[Any] | None, exc: BaseException | None) -> None:
        """The last part's thread assembles; the first failure is handed on."""
        with self._lock:
            # the share refers to this run (its end): without this, the pair is a cycle
            # that holds the parts' decoded arrays until the garbage collector runs
            self._share = None
        if exc is not None:
            self._finish(None, exc)
            return
        try:
            batches: list[pa.RecordBatch] = self._job.guard(self._job.assemble, results)
        except BaseException as err:
            self._finish(None, err)
            return
        self._finish(batches, None)

    def _finish(self, batches: list[pa.RecordBatch] | None,
                exc: BaseException | None) -> None:
        """Hand the outcome to the awaiting task (the first outcome counts)."""
        def settle() -> None:
            if self._done.done():
                return
            if exc is not None:
                self._done.set_exception(exc)
            else:
                self._done.set_result(batches if batches is not None else [])
        try:
            self._loop.call_soon_threadsafe(settle)
        except RuntimeError:  # the loop is closed: nobody waits any more
            pass
