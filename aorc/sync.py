"""Blocking versions of aorc's entry points, for scripts and notebooks.

::

    import aorc.sync

    table = aorc.sync.read_table("s3://bucket/data.orc", columns=["id", "name"])
    aorc.sync.write_table(table, "out/data.orc", compression="zstd")
    with aorc.sync.open_reader("data.orc") as reader:
        print(reader.schema, reader.num_rows, reader.statistics["id"].maximum)
        for batch in reader.iter_batches(batch_size=10_000):
            ...
    dataset = aorc.sync.open_dataset("s3://bucket/events/")
    print(dataset.count_rows([("country", "==", "DE")]))
    with aorc.sync.open_writer("out/stream.orc", table.schema) as writer:
        writer.write(table)
    with aorc.sync.RollingSink("out/events", table.schema, on_commit=print) as sink:
        sink.write(table, topic="t", partition=0, offsets=0)
    stream = aorc.sync.record_batch_reader("s3://bucket/events/", filters=[("n", ">", 5)])
    duckdb.sql("SELECT country, count(*) FROM stream GROUP BY ALL")

Readers, datasets and :func:`record_batch_reader` are Arrow streams (the Arrow PyCapsule
interface, ``__arrow_c_stream__``; ``to_reader()`` gives a ``pyarrow.RecordBatchReader``): DuckDB,
Polars and pyarrow read them batch by batch, from any thread (see :mod:`aorc.read.export`).

Every function and method takes the same arguments as its async version (:func:`read_table`,
:func:`write_table`, :func:`read_dataset`, :func:`write_dataset`, :func:`open_reader`,
:func:`open_dataset`, :func:`open_writer`, :class:`RollingSink`) and returns what it returns,
or a blocking view of it (:class:`SyncReader`, :class:`SyncDataset`, :class:`SyncWriter`):
coroutines become blocking calls and async iterators plain iterators, while attributes
(schemas, statistics, counters) are read as they are.

The async code runs on a private event loop in a daemon thread (started on first use and
shared by every call), so these functions work alike in a plain script and inside a running
event loop such as Jupyter's, where ``asyncio.run`` fails. They must not be called from
aorc's own loop thread (a callback of it), which would wait for itself; :func:`run` runs any
coroutine of aorc's there.

Adding an entry point is one line: ``name = _blocking(function)``.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import inspect
import os
import threading
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Coroutine,
    Iterator,
    Mapping,
    Sequence,
)
from types import TracebackType
from typing import Any, ParamSpec, Self, TypeVar, cast

import pyarrow as pa

from aorc.dataset.acid import AcidTable, WriteIdList
from aorc.dataset.acid import open_acid_table as _open_acid_table
from aorc.dataset.acid import read_acid_table as _read_acid_table
from aorc.dataset.discovery import TAIL_CACHE_BYTES, DatasetSource, file_or_dataset
from aorc.dataset.entry import open_dataset as _open_dataset
from aorc.dataset.entry import read_dataset as _read_dataset
from aorc.dataset.read import Dataset
from aorc.dataset.table import read_table as _read_table
from aorc.dataset.write import write_dataset as _write_dataset
from aorc.errors import AorcError, deferred_warnings
from aorc.format.codec.compression import DEFAULT_MAX_DECODED_BYTES
from aorc.format.types import OrcType
from aorc.io import Source
from aorc.io.output import Destination
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.read.export import blocking_reader
from aorc.read.reader import OrcReader
from aorc.read.reader import open_reader as _open_reader
from aorc.sink.results import SinkCommit
from aorc.sink.rolling import RollingSink as _RollingSink
from aorc.write.writer import OrcWriter
from aorc.write.writer import open_writer as _open_writer
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

    Args:
        coroutine: any coroutine of aorc's (or one awaiting aorc's).

    Returns:
        The coroutine's result.
    """
    if threading.current_thread() is _thread:
        coroutine.close()
        raise AorcError("aorc.sync functions cannot be called from aorc's own event loop "
                        "thread; await the async functions there")
    # The coroutine runs in a copy of this thread's context (asyncio copies it when the
    # task is scheduled from here): aorc's warnings are held there and issued from this
    # thread, naming the caller's line rather than aorc's (see aorc.errors.deferred_warnings).
    with deferred_warnings():
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
read_dataset = _blocking(_read_dataset)
write_dataset = _blocking(_write_dataset)
read_acid_table = _blocking(_read_acid_table)


class _Blocking:
    """A blocking view of an aorc object: its attributes as they are, its coroutine methods
    as blocking ones (run on the private loop)."""

    _target: Any

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if asyncio.iscoroutinefunction(value):
            return _blocking(value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *dir(self._target)})


class SyncReader(_Blocking):
    """A blocking view of an :class:`aorc.OrcReader`; get one from :func:`open_reader`.

    File information (``schema``, ``num_rows``, ``statistics``, ``stripes``, ``metadata``,
    ...) is the async reader's, read as attributes; :meth:`read`, :meth:`iter_batches` and
    :meth:`read_stripe_footer` block.
    """

    def __init__(self, reader: OrcReader) -> None:
        self._target = self._reader = reader

    @property
    def reader(self) -> OrcReader:
        """The async reader (its coroutines run on aorc's private loop: see :func:`run`)."""
        return self._reader

    def read(self, columns: Sequence[str] | None = None, filters: Any = None, *,
             stripes: Sequence[int] | None = None,
             use_threads: bool | int = True) -> pa.Table:
        """Blocking :meth:`aorc.OrcReader.read` (same arguments).

        Args:
            columns: as for :meth:`aorc.OrcReader.read`.
            filters: as for :meth:`aorc.OrcReader.read`.
            stripes: as for :meth:`aorc.OrcReader.read`.
            use_threads: as for :meth:`aorc.OrcReader.read`.

        Returns:
            The rows read, as a ``pyarrow.Table``.
        """
        return run(self._reader.read(columns, filters=filters, stripes=stripes,
                                     use_threads=use_threads))

    def iter_batches(self, columns: Sequence[str] | None = None, batch_size: int = 65536,
                     filters: Any = None, *, stripes: Sequence[int] | None = None,
                     use_threads: bool | int = True) -> Iterator[pa.RecordBatch]:
        """Blocking :meth:`aorc.OrcReader.iter_batches` (same arguments, checked at once).

        Args:
            columns: as for :meth:`aorc.OrcReader.iter_batches`.
            batch_size: the largest number of rows per batch.
            filters: as for :meth:`aorc.OrcReader.iter_batches`.
            stripes: as for :meth:`aorc.OrcReader.iter_batches`.
            use_threads: as for :meth:`aorc.OrcReader.iter_batches`.

        Returns:
            A plain iterator of ``pyarrow.RecordBatch``.
        """
        source = self._reader.iter_batches(columns, batch_size=batch_size, filters=filters,
                                           stripes=stripes, use_threads=use_threads)
        return _iterate(source)

    def to_reader(self, columns: Sequence[str] | None = None, batch_size: int = 65536,
                  filters: Any = None, *, stripes: Sequence[int] | None = None,
                  use_threads: bool | int = True) -> pa.RecordBatchReader:
        """The rows as a ``pyarrow.RecordBatchReader`` read batch by batch as it is pulled
        (:meth:`aorc.OrcReader.iter_batches`'s arguments, checked at once); releasing it
        early stops the read.

        Args:
            columns: as for :meth:`aorc.OrcReader.iter_batches`.
            batch_size: the largest number of rows per batch.
            filters: as for :meth:`aorc.OrcReader.iter_batches`.
            stripes: as for :meth:`aorc.OrcReader.iter_batches`.
            use_threads: as for :meth:`aorc.OrcReader.iter_batches`.

        Returns:
            A ``pyarrow.RecordBatchReader``.
        """
        return self._reader.iter_batches(columns, batch_size=batch_size, filters=filters,
                                         stripes=stripes, use_threads=use_threads).to_reader()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row as an Arrow C stream (see :meth:`aorc.OrcReader.__arrow_c_stream__`)."""
        return self._reader.__arrow_c_stream__(requested_schema)

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


async def _open(source: Source, storage_options: Mapping[str, Any] | None,
                timestamp_unit: str, read_dictionary: Sequence[str] | None,
                max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                keys: KeyProvider | None = None, use_writer_timezone: bool = False) -> OrcReader:
    return await _open_reader(source, storage_options=storage_options,
                              timestamp_unit=timestamp_unit, read_dictionary=read_dictionary,
                              max_decoded_bytes=max_decoded_bytes, keys=keys,
                              use_writer_timezone=use_writer_timezone)


def open_reader(source: Source, *, storage_options: Mapping[str, Any] | None = None,
                timestamp_unit: str = "ns",
                read_dictionary: Sequence[str] | None = None,
                max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                keys: KeyProvider | None = None,
                use_writer_timezone: bool = False) -> SyncReader:
    """Open an ORC file for reading, blocking: use as ``with open_reader(path) as r:``.

    Args:
        source: as for :func:`aorc.open_reader`: a path, ``file://`` or ``s3://`` URL,
            bytes, or a :class:`aorc.io.Store`.
        storage_options: as for :func:`aorc.open_reader`.
        timestamp_unit: as for :func:`aorc.open_reader`.
        read_dictionary: as for :func:`aorc.open_reader`.
        max_decoded_bytes: as for :func:`aorc.open_reader`.
        keys: as for :func:`aorc.open_reader`.
        use_writer_timezone: as for :func:`aorc.open_reader`.

    Returns:
        A :class:`SyncReader` (a context manager).
    """
    return SyncReader(run(_open(source, storage_options, timestamp_unit, read_dictionary,
                                max_decoded_bytes, keys, use_writer_timezone)))


# =========================================================================== datasets

class _BlockingScan(_Blocking):
    """A blocking view of something read batch by batch (a dataset, a Hive ACID table):
    its batches as a plain iterator, a ``pyarrow.RecordBatchReader`` or an Arrow C stream,
    as the async object's ``iter_batches`` gives them."""

    def iter_batches(self, columns: Sequence[str] | None = None, filters: Any = None,
                     batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        """Blocking ``iter_batches`` of the async object (same arguments, checked at once).

        Args:
            columns: as for the async object's ``iter_batches``.
            filters: as for the async object's ``iter_batches``.
            batch_size: the largest number of rows per batch.

        Returns:
            A plain iterator of the matching record batches, read as it is pulled.

        Raises:
            SchemaError: unknown columns, malformed filters or a bad ``batch_size``.
        """
        return _iterate(self._target.iter_batches(columns, filters, batch_size=batch_size))

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None,  # noqa: A002
                   batch_size: int = 65536) -> Iterator[pa.RecordBatch]:
        """Blocking ``to_batches`` of the async object (pyarrow.dataset's name).

        Args:
            columns: as for the async object's ``iter_batches``.
            filter: the ``filters`` of the async object's ``iter_batches``.
            batch_size: the largest number of rows per batch.

        Returns:
            A plain iterator of the matching record batches, read as it is pulled.

        Raises:
            SchemaError: unknown columns, malformed filters or a bad ``batch_size``.
        """
        return _iterate(self._target.to_batches(columns, filter, batch_size=batch_size))

    def to_reader(self, columns: Sequence[str] | None = None, filters: Any = None,
                  batch_size: int = 65536) -> pa.RecordBatchReader:
        """The matching rows as a ``pyarrow.RecordBatchReader`` read batch by batch as it is
        pulled (``iter_batches``' arguments, checked at once); releasing it early stops the
        reads.

        Args:
            columns: as for the async object's ``iter_batches``.
            filters: as for the async object's ``iter_batches``.
            batch_size: the largest number of rows per batch.

        Returns:
            A ``pyarrow.RecordBatchReader``.

        Raises:
            SchemaError: unknown columns, malformed filters or a bad ``batch_size``.
        """
        return self._target.iter_batches(columns, filters, batch_size=batch_size).to_reader()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row as an Arrow C stream (the async object's ``__arrow_c_stream__``)."""
        return self._target.__arrow_c_stream__(requested_schema)


class SyncDataset(_BlockingScan):
    """A blocking view of an :class:`aorc.Dataset`; get one from :func:`open_dataset`.

    ``schema``, ``files``, ``partition_schema``, ``partitioning``, ``num_rows``,
    ``io_stats`` and ``scan_stats`` are the dataset's; :meth:`read` (``to_table``),
    :meth:`count_rows` and :meth:`head` block; :meth:`iter_batches` (``to_batches``) is a
    plain iterator.
    """

    def __init__(self, dataset: Dataset) -> None:
        self._target = self._dataset = dataset

    @property
    def dataset(self) -> Dataset:
        """The async dataset (its coroutines run on aorc's private loop: see :func:`run`)."""
        return self._dataset


class SyncAcidTable(_BlockingScan):
    """A blocking view of an :class:`aorc.AcidTable`; get one from :func:`open_acid_table`.

    ``schema``, ``partitions``, ``partition_schema``, ``files`` and ``io_stats`` are the
    table's; :meth:`read` (``to_table``) and :meth:`count_rows` block;
    :meth:`iter_batches` (``to_batches``) is a plain iterator.
    """

    def __init__(self, table: AcidTable) -> None:
        self._target = self._table = table

    @property
    def table(self) -> AcidTable:
        """The async table (its coroutines run on aorc's private loop)."""
        return self._table


async def _open_acid(source: str | os.PathLike[str], kwargs: dict[str, Any]) -> AcidTable:
    return await _open_acid_table(source, **kwargs)


def open_acid_table(uri: str | os.PathLike[str], *,
                    valid_write_ids: str | WriteIdList | None = None,
                    columns: Sequence[str] | None = None, filters: Any = None,
                    schema: pa.Schema | None = None, row_id: bool = False,
                    partitioning: pa.Schema | None = None, timestamp_unit: str = "ns",
                    storage_options: Mapping[str, Any] | None = None,
                    max_open_files: int = 16) -> SyncAcidTable:
    """Blocking :func:`aorc.open_acid_table` (same arguments): a :class:`SyncAcidTable`.

    Args:
        uri: as for :func:`aorc.open_acid_table`.
        valid_write_ids: as for :func:`aorc.open_acid_table`.
        columns: as for :func:`aorc.open_acid_table`.
        filters: as for :func:`aorc.open_acid_table`.
        schema: as for :func:`aorc.open_acid_table`.
        row_id: as for :func:`aorc.open_acid_table`.
        partitioning: as for :func:`aorc.open_acid_table`.
        timestamp_unit: as for :func:`aorc.open_acid_table`.
        storage_options: as for :func:`aorc.open_acid_table`.
        max_open_files: as for :func:`aorc.open_acid_table`.

    Returns:
        A :class:`SyncAcidTable` over the opened :class:`aorc.AcidTable`.

    Raises:
        ObjectNotFoundError: nothing exists at ``uri``.
        SchemaError: as :func:`aorc.open_acid_table`.
    """
    kwargs = {"valid_write_ids": valid_write_ids, "columns": columns, "filters": filters,
              "schema": schema, "row_id": row_id, "partitioning": partitioning,
              "timestamp_unit": timestamp_unit, "storage_options": storage_options,
              "max_open_files": max_open_files}
    return SyncAcidTable(run(_open_acid(uri, kwargs)))


async def _open_ds(source: DatasetSource, kwargs: dict[str, Any]) -> Dataset:
    return await _open_dataset(source, **kwargs)


def open_dataset(source: DatasetSource, *, partitioning: Any = "hive",
                 schema: pa.Schema | None = None, timestamp_unit: str = "ns",
                 storage_options: Mapping[str, Any] | None = None, max_open_files: int = 16,
                 exclude_invalid_files: bool = False, path_glob_filter: str | None = None,
                 read_dictionary: Sequence[str] | None = None, schema_from: str = "all",
                 tail_cache_bytes: int = TAIL_CACHE_BYTES,
                 max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                 schema_mapping: str = "name",
                 keys: KeyProvider | None = None,
                 use_writer_timezone: bool = False) -> SyncDataset:
    """Blocking :func:`aorc.open_dataset` (same arguments): a :class:`SyncDataset`.

    Args:
        source: as for :func:`aorc.open_dataset`.
        partitioning: as for :func:`aorc.open_dataset`.
        schema: as for :func:`aorc.open_dataset`.
        timestamp_unit: as for :func:`aorc.open_dataset`.
        storage_options: as for :func:`aorc.open_dataset`.
        max_open_files: as for :func:`aorc.open_dataset`.
        exclude_invalid_files: as for :func:`aorc.open_dataset`.
        path_glob_filter: as for :func:`aorc.open_dataset`.
        read_dictionary: as for :func:`aorc.open_dataset`.
        schema_from: as for :func:`aorc.open_dataset`.
        tail_cache_bytes: as for :func:`aorc.open_dataset`.
        max_decoded_bytes: as for :func:`aorc.open_dataset`.
        schema_mapping: as for :func:`aorc.open_dataset`.
        keys: as for :func:`aorc.open_dataset`.
        use_writer_timezone: as for :func:`aorc.open_dataset`.

    Returns:
        A :class:`SyncDataset`.
    """
    kwargs = {"partitioning": partitioning, "schema": schema,
              "timestamp_unit": timestamp_unit, "storage_options": storage_options,
              "max_open_files": max_open_files, "exclude_invalid_files": exclude_invalid_files,
              "path_glob_filter": path_glob_filter, "read_dictionary": read_dictionary,
              "schema_from": schema_from, "tail_cache_bytes": tail_cache_bytes,
              "max_decoded_bytes": max_decoded_bytes, "schema_mapping": schema_mapping,
              "keys": keys, "use_writer_timezone": use_writer_timezone}
    return SyncDataset(run(_open_ds(source, kwargs)))


async def _open_stream(source: Source | DatasetSource, columns: Sequence[str] | None,
                       filters: Any, batch_size: int, kwargs: dict[str, Any]
                       ) -> tuple[Any, OrcReader | None]:
    """The batch stream of one file or a dataset, and the reader to close after it."""
    async def one_file() -> OrcReader:
        return await _open_reader(cast(Source, source), **kwargs)

    async def dataset() -> Dataset:
        return await _open_dataset(cast(DatasetSource, source), **kwargs)

    opened = await file_or_dataset(source, one_file, dataset)
    if isinstance(opened, Dataset):
        return opened.iter_batches(columns, filters, batch_size=batch_size), None
    try:
        return opened.iter_batches(columns, batch_size, filters), opened
    except BaseException:
        await opened.close()
        raise


def record_batch_reader(source: Source | DatasetSource, *,
                        columns: Sequence[str] | None = None, filters: Any = None,
                        batch_size: int = 65536,
                        storage_options: Mapping[str, Any] | None = None,
                        timestamp_unit: str = "ns",
                        read_dictionary: Sequence[str] | None = None,
                        max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES
                        ) -> pa.RecordBatchReader:
    """A blocking ``pyarrow.RecordBatchReader`` of one ORC file or a dataset (as
    :func:`aorc.read_table` tells them apart), read batch by batch as it is pulled: hand it
    to DuckDB, Polars or pyarrow. The file is closed when the stream ends or is released
    (a consumer stopping early, ``reader.close()``).

    Args:
        source: a file (as :func:`aorc.open_reader` takes it) or a dataset's root(s).
        columns: as for :meth:`aorc.OrcReader.iter_batches` (a dataset: top-level names).
        filters: as for :meth:`aorc.OrcReader.iter_batches`: pushed down into the files.
        batch_size: the largest number of rows per batch.
        storage_options: as for :func:`aorc.open_reader`.
        timestamp_unit: as for :func:`aorc.open_reader`.
        read_dictionary: as for :func:`aorc.open_reader`.
        max_decoded_bytes: as for :func:`aorc.open_reader`.

    Raises:
        ObjectNotFoundError: nothing exists at ``source``.
        SchemaError: unknown columns, malformed filters (raised here, before any read).

    Returns:
        A ``pyarrow.RecordBatchReader`` (a context manager; closing it closes the file).
    """
    kwargs = {"storage_options": storage_options, "timestamp_unit": timestamp_unit,
              "read_dictionary": read_dictionary, "max_decoded_bytes": max_decoded_bytes}
    stream, reader = run(_open_stream(source, columns, filters, batch_size, kwargs))
    finish = reader.close if reader is not None else None
    try:
        return blocking_reader(stream.schema, lambda: stream, _event_loop(), str(source),
                               finish=finish)
    except BaseException:
        if reader is not None:
            run(reader.close())
        raise


# =========================================================================== writing

class _BlockingOutput(_Blocking):
    """A blocking view of something written (a writer, a sink): :meth:`close` and
    :meth:`abort` block, and so does the ``with`` block, which closes on a normal exit and
    aborts on an exception, as the async object's own ``async with`` does."""

    def close(self) -> None:
        """Blocking ``close()`` of the async object: everything written is completed (the
        file appears; the sink commits)."""
        run(self._target.close())

    def abort(self) -> None:
        """Blocking ``abort()`` of the async object: nothing is left at the destination."""
        run(self._target.abort())

    def __enter__(self) -> Self:
        run(self._target.__aenter__())
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        run(self._target.__aexit__(exc_type, exc, tb))


class SyncWriter(_BlockingOutput):
    """A blocking view of an :class:`aorc.OrcWriter`; get one from :func:`open_writer` and
    use it as ``with open_writer(...) as writer: writer.write(batch)``. Leaving the block
    normally completes the file; an exception aborts it (nothing is left at the
    destination). ``num_rows``, ``num_stripes``, ``bytes_written``, ... are the writer's."""

    def __init__(self, writer: OrcWriter) -> None:
        self._target = self._writer = writer

    @property
    def writer(self) -> OrcWriter:
        """The async writer."""
        return self._writer

    def write(self, data: Any) -> None:
        """Blocking :meth:`aorc.OrcWriter.write`.

        Args:
            data: as for :meth:`aorc.OrcWriter.write`.
        """
        run(self._writer.write(data))



async def _new_writer(dest: Destination, schema: pa.Schema | str | OrcType,
                      options: WriteOptions | None, storage_options: Mapping[str, Any] | None,
                      keys: KeyProvider | None, keywords: dict[str, Any]) -> OrcWriter:
    return _open_writer(dest, schema, options, storage_options=storage_options, keys=keys,
                        **keywords)


def open_writer(dest: Destination, schema: pa.Schema | str | OrcType,
                options: WriteOptions | None = None, *,
                storage_options: Mapping[str, Any] | None = None,
                keys: KeyProvider | None = None, **keywords: Any) -> SyncWriter:
    """Blocking :func:`aorc.open_writer` (same arguments): use as ``with open_writer(path,
    schema) as writer: writer.write(batch)``.

    Args:
        dest: as for :func:`aorc.open_writer`.
        schema: as for :func:`aorc.open_writer`.
        options: as for :func:`aorc.open_writer`.
        storage_options: as for :func:`aorc.open_writer`.
        keys: as for :func:`aorc.open_writer` (the key provider of ``encrypt=``).
        **keywords: :class:`aorc.WriteOptions` fields, as for :func:`aorc.open_writer`.

    Returns:
        A :class:`SyncWriter` (a context manager: an exception aborts the file).
    """
    return SyncWriter(run(_new_writer(dest, schema, options, storage_options, keys,
                                      keywords)))


class RollingSink(_BlockingOutput):
    """A blocking :class:`aorc.sink.RollingSink` (same arguments): ``with RollingSink(...) as
    sink: sink.write(batch, topic=..., partition=..., offsets=...)``; leaving the block
    normally commits everything, an exception aborts. ``on_commit`` may be a plain function
    (run in a worker thread, so that it may block, e.g. on a Kafka consumer's commit) or a
    coroutine function. ``stats``, ``position()``, ``memory_in_use``, ... are the sink's."""

    def __init__(self, prefix: str | os.PathLike[str], schema: pa.Schema, *,
                 on_commit: Callable[[SinkCommit], Any] | None = None, **kwargs: Any) -> None:
        self._target = self._sink = run(_new_sink(prefix, schema, _as_async(on_commit),
                                                  kwargs))

    @property
    def sink(self) -> _RollingSink:
        """The async sink."""
        return self._sink

    def write(self, data: pa.RecordBatch | pa.Table, *, topic: str, partition: int,
              offsets: Any) -> None:
        """Blocking :meth:`aorc.sink.RollingSink.write`.

        Args:
            data: as for :meth:`aorc.sink.RollingSink.write`.
            topic: as for :meth:`aorc.sink.RollingSink.write`.
            partition: as for :meth:`aorc.sink.RollingSink.write`.
            offsets: as for :meth:`aorc.sink.RollingSink.write`.
        """
        run(self._sink.write(data, topic=topic, partition=partition, offsets=offsets))

    def flush(self, streams: Sequence[tuple[str, int]] | None = None) -> None:
        """Blocking :meth:`aorc.sink.RollingSink.flush`.

        Args:
            streams: as for :meth:`aorc.sink.RollingSink.flush`.
        """
        run(self._sink.flush(streams))



def _as_async(callback: Callable[[SinkCommit], Any] | None
              ) -> Callable[[SinkCommit], Awaitable[None]] | None:
    if callback is None or inspect.iscoroutinefunction(callback):
        return callback

    async def in_a_thread(commit: SinkCommit) -> None:
        result = await asyncio.to_thread(callback, commit)
        if inspect.isawaitable(result):
            await result

    return in_a_thread


async def _new_sink(prefix: str | os.PathLike[str], schema: pa.Schema,
                    on_commit: Callable[[SinkCommit], Awaitable[None]] | None,
                    kwargs: dict[str, Any]) -> _RollingSink:
    return _RollingSink(prefix, schema, on_commit=on_commit, **kwargs)


__all__ = [
    "RollingSink",
    "SyncAcidTable",
    "SyncDataset",
    "SyncReader",
    "SyncWriter",
    "open_acid_table",
    "open_dataset",
    "open_reader",
    "open_writer",
    "read_acid_table",
    "read_dataset",
    "read_table",
    "record_batch_reader",
    "run",
    "write_dataset",
    "write_table",
]
