"""Blocking versions of aorc's entry points, for scripts and notebooks.

::

    import aorc.sync

    table = aorc.sync.read_table("s3://bucket/data.orc", columns=["id", "name"])
    aorc.sync.write_table(table, "out/data.orc", compression="zstd")
    with aorc.sync.open_reader("data.orc") as reader:
        print(reader.schema, reader.num_rows, reader.statistics["id"].maximum)
        for batch in reader.iter_batches(batch_size=10_000):
            ...

The async code runs on a private event loop in a daemon thread (started on first use and
shared by every call), so these functions work alike in a plain script and inside a running
event loop such as Jupyter's, where ``asyncio.run`` fails. They must not be called from
aorc's own loop thread (a callback of it), which would wait for itself.

Adding an entry point is one line: ``name = _blocking(function)``. ``read_dataset`` and
``write_dataset`` are wrapped on first use when :mod:`aorc` has them.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import threading
from collections.abc import AsyncGenerator, Callable, Coroutine, Iterator, Mapping
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

import pyarrow as pa

from aorc.errors import AorcError
from aorc.io import Source
from aorc.read.dataset import read_table as _read_table
from aorc.read.reader import OrcReader
from aorc.read.reader import open_reader as _open_reader
from aorc.write.writer import write_table as _write_table

P = ParamSpec("P")
T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _event_loop() -> asyncio.AbstractEventLoop:
    """The private loop, started in its daemon thread on first use."""
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_serve, args=(loop,), name="aorc-sync-loop",
                                      daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """The loop thread: run until stopped, then cancel what is left and close the loop."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()


def _stop() -> None:
    """Stop the private loop at interpreter exit."""
    with _lock:
        loop, thread = _loop, _thread
    if loop is not None and thread is not None and thread.is_alive():
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=5)


atexit.register(_stop)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on aorc's private event loop and wait for its result.

    Interrupting the wait (Ctrl-C) cancels the coroutine.

    Raises:
        AorcError: when called from the private loop's own thread.
    """
    if threading.current_thread() is _thread:
        coroutine.close()
        raise AorcError("aorc.sync functions cannot be called from aorc's own event loop "
                        "thread; await the async functions there")
    future = asyncio.run_coroutine_threadsafe(coroutine, _event_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def _blocking(func: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """A blocking version of the async function ``func`` (same arguments and docstring)."""

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run(func(*args, **kwargs))

    call.__doc__ = f"Blocking version of :func:`aorc.{func.__name__}`.\n\n{func.__doc__ or ''}"
    return call


read_table = _blocking(_read_table)
write_table = _blocking(_write_table)

#: Entry points wrapped on first use when :mod:`aorc` has them (datasets are being added).
_OPTIONAL = ("read_dataset", "write_dataset")


def __getattr__(name: str) -> Any:
    import aorc

    if name in _OPTIONAL and hasattr(aorc, name):
        func = _blocking(getattr(aorc, name))
        globals()[name] = func
        return func
    raise AttributeError(f"module 'aorc.sync' has no attribute {name!r}")


class SyncReader:
    """A blocking view of an :class:`aorc.OrcReader`; get one from :func:`open_reader`.

    File information (``schema``, ``num_rows``, ``statistics``, ``stripes``, ``metadata``,
    ...) is the async reader's, read as attributes; :meth:`read`, :meth:`iter_batches` and
    :meth:`read_stripe_footer` block.
    """

    def __init__(self, reader: OrcReader) -> None:
        self._reader = reader

    @property
    def reader(self) -> OrcReader:
        """The async reader (its coroutines run on aorc's private loop: see :func:`run`)."""
        return self._reader

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._reader, name)
        if asyncio.iscoroutinefunction(value):
            return _blocking(value)
        return value

    def read(self, columns: list[str] | None = None, filters: Any = None) -> pa.Table:
        """Blocking :meth:`aorc.OrcReader.read`."""
        return run(self._reader.read(columns, filters=filters))

    def iter_batches(self, columns: list[str] | None = None, batch_size: int = 65536,
                     filters: Any = None) -> Iterator[pa.RecordBatch]:
        """Blocking :meth:`aorc.OrcReader.iter_batches` (arguments are checked at once)."""
        source = self._reader.iter_batches(columns, batch_size=batch_size, filters=filters)
        return _iterate(source)

    def close(self) -> None:
        """Close the file."""
        run(self._reader.close())

    def __enter__(self) -> SyncReader:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _iterate(source: AsyncGenerator[pa.RecordBatch, None]) -> Iterator[pa.RecordBatch]:
    try:
        while True:
            try:
                yield run(source.__anext__())
            except StopAsyncIteration:
                return
    finally:
        run(source.aclose())


async def _open(source: Source, storage_options: Mapping[str, Any] | None) -> OrcReader:
    return await _open_reader(source, storage_options=storage_options)


def open_reader(source: Source, *,
                storage_options: Mapping[str, Any] | None = None) -> SyncReader:
    """Open an ORC file for reading, blocking: use as ``with open_reader(path) as r:``.

    Args:
        source: as for :func:`aorc.open_reader`: a path, ``file://`` or ``s3://`` URL,
            bytes, or a :class:`aorc.io.Store`.
        storage_options: as for :func:`aorc.open_reader`.
    """
    return SyncReader(run(_open(source, storage_options)))


__all__ = ["SyncReader", "open_reader", "read_table", "run", "write_table"]
