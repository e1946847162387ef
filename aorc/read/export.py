"""Reads exported as Arrow C streams (the Arrow PyCapsule interface, ``__arrow_c_stream__``),
so that DuckDB, Polars, pyarrow and any other consumer of the interface stream aorc's batches.

An :class:`~aorc.OrcReader`, a :class:`~aorc.Dataset` and the batch iterators they return
(:class:`BatchStream`) live on the event loop they were opened on; a consumer of the
interface pulls batches synchronously, possibly from a thread of its own (DuckDB scans on its
worker threads). :func:`blocking_reader` bridges the two: a ``pyarrow.RecordBatchReader``
whose every pull runs the async iterator's next step on its loop
(``asyncio.run_coroutine_threadsafe``) and waits for it. The async iterator is created on the
loop at the first pull (a consumer asking only for the schema starts no read; DuckDB asks
three times per scan) and closed when the stream ends or the consumer releases it, which
cancels the fetches under way (and, for :func:`aorc.sync.record_batch_reader`, closes the
file).

Pulling waits for the loop, so it must not happen on the loop's own thread while the loop
runs a coroutine that called it (a deadlock): exporting from there raises
:class:`~aorc.errors.AorcError`, telling the user to open the file with :mod:`aorc.sync`
(whose loop runs in a thread of its own) or to run the consumer in a worker thread
(``await asyncio.to_thread(...)``). Nor can a closed loop, or one that is not running,
serve the pulls.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import sys
import threading
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, TypeVar

import pyarrow as pa

from aorc.errors import AorcError, SchemaError

__all__ = ["BatchStream", "blocking_reader", "export_stream", "home_loop"]

T = TypeVar("T")

#: A pull that waits this long (seconds) for a loop stuck in one task step, its own step not
#: started, checks again; after :data:`STALLED_CHECKS` such checks it gives up (a consumer
#: blocking the loop from a thread of the consumer's own: a deadlock).
STALL_CHECK_SECONDS = 0.25
STALLED_CHECKS = 4
#: The thread of each loop objects were opened on.
_LOOP_THREADS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = \
    weakref.WeakKeyDictionary()

#: What the errors tell the user to do instead.
_ADVICE = ("open it with aorc.sync (aorc.sync.open_reader, aorc.sync.open_dataset or "
           "aorc.sync.record_batch_reader: their event loop runs in a thread of its own), or "
           "run the consumer in a worker thread (await asyncio.to_thread(...))")


def home_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread (that an object created now belongs to), or
    None outside of one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    _LOOP_THREADS.setdefault(loop, threading.get_ident())
    return loop


def check_loop(loop: asyncio.AbstractEventLoop | None, what: str) -> asyncio.AbstractEventLoop:
    """``loop``, when a blocking pull from this thread can wait for it.

    Raises:
        AorcError: no loop, a closed or stopped loop, or the loop of this very thread (which
            waits for the consumer: a deadlock).
    """
    if loop is None or loop.is_closed() or not loop.is_running():
        state = "closed" if loop is not None and loop.is_closed() else "not running"
        raise AorcError(f"cannot stream {what} as Arrow: the event loop it was opened on is "
                        f"{state}; {_ADVICE}")
    if home_loop() is loop:
        raise AorcError(f"cannot stream {what} as Arrow from a coroutine of the event loop "
                        f"it was opened on: the consumer would block the loop that must read "
                        f"the batches (a deadlock); {_ADVICE}")
    return loop


def _submit(loop: asyncio.AbstractEventLoop, make: Callable[[], Coroutine[Any, Any, T]]
            ) -> concurrent.futures.Future[T]:
    """Run ``make()`` as a task on ``loop``; the future is running once the task exists (a
    cancelled future never creates the coroutine)."""
    result: concurrent.futures.Future[T] = concurrent.futures.Future()

    def start() -> None:
        if not result.set_running_or_notify_cancel():
            return
        task = loop.create_task(make())

        def done(t: asyncio.Task[T]) -> None:
            if t.cancelled():
                result.cancel()
            elif (exc := t.exception()) is not None:
                result.set_exception(exc)
            else:
                result.set_result(t.result())

        task.add_done_callback(done)
        result.add_done_callback(
            lambda f: loop.call_soon_threadsafe(task.cancel) if f.cancelled() else None)

    loop.call_soon_threadsafe(start)
    return result


def _stuck_state(loop: asyncio.AbstractEventLoop) -> tuple[object, int, int] | None:
    """The task step the loop is in and its thread's innermost Python frame (None when the
    loop is between steps or its thread is unknown)."""
    thread = _LOOP_THREADS.get(loop)
    task = asyncio.current_task(loop)
    frame = sys._current_frames().get(thread) if thread is not None else None
    if task is None or frame is None:
        return None
    return task, id(frame), frame.f_lasti


def _result(future: concurrent.futures.Future[T], loop: asyncio.AbstractEventLoop,
            what: str) -> T:
    """The result of ``future``, a step submitted to ``loop``.

    Raises:
        AorcError: the loop stays stuck in one task step (its thread in one place) while
            the step waits, never started: a consumer called from that task blocks the loop
            (a deadlock).
    """
    stalled, last = 0, _stuck_state(loop)
    while True:
        try:
            return future.result(timeout=STALL_CHECK_SECONDS)
        except concurrent.futures.TimeoutError:
            now = _stuck_state(loop)
            same = now is not None and now == last and not future.running()
            stalled, last = (stalled + 1 if same else 0), now
            if stalled >= STALLED_CHECKS:
                raise AorcError(f"cannot stream {what} as Arrow: its event loop is blocked by "
                                f"a coroutine that waits for this very stream (a consumer "
                                f"called from the loop: a deadlock); {_ADVICE}") from None


def _wait(loop: asyncio.AbstractEventLoop, make: Callable[[], Coroutine[Any, Any, T]],
          what: str) -> T:
    """Run ``make()`` on ``loop`` and wait for its result (an interrupted or failed wait
    cancels it; see :func:`_result`)."""
    future = _submit(loop, make)
    try:
        return _result(future, loop, what)
    except BaseException:
        future.cancel()
        raise


class _Pull:
    """The batches of an async iterator, pulled one at a time from any thread but its loop's.

    pyarrow holds this iterator while the stream is alive and drops it when the consumer
    releases the stream: :meth:`close` then ends the read (and runs ``finish``), whether or
    not a batch was pulled.
    """

    def __init__(self, make: Callable[[], AsyncIterator[pa.RecordBatch]],
                 loop: asyncio.AbstractEventLoop, what: str,
                 finish: Callable[[], Awaitable[None]] | None) -> None:
        self._make = make
        self._loop = loop
        self._what = what
        self._finish = finish
        self._source: AsyncIterator[pa.RecordBatch] | None = None
        self._done = False
        self._lock = threading.Lock()

    def __iter__(self) -> _Pull:
        return self

    def __next__(self) -> pa.RecordBatch:
        with self._lock:
            if self._done:
                raise StopIteration
            check_loop(self._loop, self._what)
            try:
                batch = _wait(self._loop, self._step, self._what)
            except BaseException:
                self.close()
                raise
            if batch is None:
                self.close()
                raise StopIteration
            return batch

    async def _step(self) -> pa.RecordBatch | None:
        if self._source is None:
            self._source = self._make()
        try:
            return await anext(self._source)
        except StopAsyncIteration:
            return None

    def close(self) -> None:
        """End the read: close the async iterator (when a pull created it) and run
        ``finish``; waits for both, unless called on the loop's own thread (then they are
        scheduled)."""
        self._done = True
        source, self._source = self._source, None
        finish, self._finish = self._finish, None
        loop = self._loop
        if (source is None and finish is None) or not loop.is_running():
            return
        future = _submit(loop, lambda: _end(source, finish))
        if home_loop() is not loop:
            try:
                _result(future, loop, self._what)
            except Exception:  # noqa: BLE001 - closing: the read's errors are moot now (on
                pass  # a stuck loop, the closing runs once it is free)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - nothing to report to at garbage collection
            pass


async def _end(source: AsyncIterator[pa.RecordBatch] | None,
               finish: Callable[[], Awaitable[None]] | None) -> None:
    """The end of a read: ``source`` closed, then ``finish`` run."""
    try:
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()
    finally:
        if finish is not None:
            await finish()


def blocking_reader(schema: pa.Schema, make: Callable[[], AsyncIterator[pa.RecordBatch]],
                    loop: asyncio.AbstractEventLoop | None, what: str, *,
                    finish: Callable[[], Awaitable[None]] | None = None
                    ) -> pa.RecordBatchReader:
    """A blocking ``pyarrow.RecordBatchReader`` of the batches of ``make()``, an async
    iterator created and run on ``loop`` (at the first pull).

    Args:
        schema: the batches' schema.
        make: creates the async iterator of batches (called on ``loop``).
        loop: the loop the iterator belongs to.
        what: the object read, for error messages.
        finish: awaited on ``loop`` once the stream ends or is released (e.g. closing the
            reader opened for it).

    Raises:
        AorcError: ``loop`` cannot serve pulls from this thread (see :func:`check_loop`).
    """
    check_loop(loop, what)
    assert loop is not None
    inner = pa.RecordBatchReader.from_batches(schema, _Pull(make, loop, what, finish))
    # Passed through the C interface, so that close() releases the batches at once (a
    # reader of from_batches keeps its iterator until it is garbage).
    reader: pa.RecordBatchReader = pa.RecordBatchReader._import_from_c_capsule(
        inner.__arrow_c_stream__())
    return reader


def cast_reader(reader: pa.RecordBatchReader, requested_schema: object | None
                ) -> pa.RecordBatchReader:
    """``reader`` cast to the schema a consumer asked for (an ArrowSchema PyCapsule), when it
    differs and its types can be cast.

    Raises:
        SchemaError: the requested schema has other column names, or a type the stream's
            cannot be cast to.
    """
    if requested_schema is None:
        return reader
    target = pa.Schema._import_from_c_capsule(requested_schema)
    if target.equals(reader.schema):
        return reader
    if target.names != reader.schema.names:
        raise SchemaError(f"the requested schema's columns {target.names} differ from the "
                          f"stream's {reader.schema.names}")
    try:
        return reader.cast(target)
    except (pa.ArrowTypeError, pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
        raise SchemaError(f"cannot cast the stream to the requested schema: {exc}") from exc


def export_stream(reader: pa.RecordBatchReader, requested_schema: object | None) -> object:
    """The ArrowArrayStream PyCapsule of ``reader`` (cast to ``requested_schema``)."""
    return cast_reader(reader, requested_schema).__arrow_c_stream__()


class BatchStream(AsyncGenerator[pa.RecordBatch, None]):
    """Record batches of a read: an async iterator (``async for batch in stream``) that is
    also an Arrow stream (``__arrow_c_stream__``) for DuckDB, Polars and pyarrow, pulled
    from another thread (see the module docstring). Rows are read once: iterating and
    exporting share them.

    Attributes:
        schema: the batches' schema.
    """

    def __init__(self, source: AsyncGenerator[pa.RecordBatch, None], schema: pa.Schema,
                 loop: asyncio.AbstractEventLoop | None, what: str) -> None:
        self._source = source
        self.schema = schema
        self._loop = loop
        self._what = what

    def __aiter__(self) -> BatchStream:
        return self

    def __anext__(self) -> Coroutine[Any, Any, pa.RecordBatch]:
        return self._source.__anext__()

    def asend(self, value: None, /) -> Coroutine[Any, Any, pa.RecordBatch]:
        return self._source.asend(value)

    def athrow(self, typ: Any, val: Any = None, tb: TracebackType | None = None, /
               ) -> Coroutine[Any, Any, pa.RecordBatch]:
        if val is None and tb is None:
            return self._source.athrow(typ)
        return self._source.athrow(typ, val, tb)  # pragma: no cover - the old signature

    def aclose(self) -> Coroutine[Any, Any, None]:
        return self._source.aclose()

    def to_reader(self) -> pa.RecordBatchReader:
        """The rest of the batches as a blocking ``pyarrow.RecordBatchReader`` (to be read
        from another thread than the loop's; see the module docstring).

        Raises:
            AorcError: called on the loop's own thread, or its loop is not running.
        """
        return blocking_reader(self.schema, lambda: self._source, self._loop, self._what)

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """The Arrow PyCapsule stream interface: the rest of the batches (cast to
        ``requested_schema``, an ArrowSchema capsule, when given).

        Raises:
            AorcError: called on the loop's own thread, or its loop is not running.
            SchemaError: a requested schema the batches cannot be cast to.
        """
        return export_stream(self.to_reader(), requested_schema)
