"""Writing a dataset: rows split into Hive partition folders, many ORC files at once.

:func:`write_dataset` streams its input (a Table, a ``RecordBatchReader``, an iterable or
async iterable of batches; see :mod:`aorc.write.batches`) one batch at a time: each batch is
split by the partition columns (one Arrow group-by; the columns are left out of the files,
as Spark does) and each group appended to its partition folder's open file, an
:func:`aorc.open_writer` (for S3 the streaming multipart writer) that encodes stripes as
they fill. A file is closed after ``max_rows_per_file`` rows, when the memory budget asks,
or at the end; a later row of its partition opens a new file, named with the next ``{i}``.

Memory. ``max_memory`` (default 256 MiB) bounds what the files hold: each file's rows
buffered for its next stripe (a stripe holds at most an eighth of the budget in Arrow
bytes), stripes being encoded and sent, and an object store's parts (5 MiB parts unless
``storage_options`` set ``part_size``). When the buffered rows pass half the budget, the
files buffering the most are closed, biggest first; this depends only on the rows and the
options (not on timing), so the same input and batches give the same files. While the
bytes actually held pass the budget, the next batch waits for stripes and closing files.
Each partition open at once holds at least a stripe's worth of its rows, so many
partitions under a small budget give small files (as pyarrow's ``max_open_files`` does).

Every file is complete or absent: a failure or a cancellation (also of the input's
iteration) aborts the files being written (which leave nothing; a file whose completion had
reached the store is waited for) and deletes every file this call made visible -- with the
default names (``{uuid}``), also any whose completion failed without saying whether it took
effect -- and the local folders it created; the error notes any file it could not delete.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pyarrow as pa

from aorc.dataset.hive import check_folder_name, partition_segment
from aorc.errors import ObjectNotFoundError, SchemaError, StoreError
from aorc.format.arrow import conform
from aorc.format.types import from_arrow_schema
from aorc.io import registry
from aorc.io.base import gather_or_cancel
from aorc.options import WriteOptions
from aorc.progress import ProgressHook, ProgressTracker, tracker
from aorc.threads import give_back_pool, take_pool
from aorc.write.batches import BatchStream, batch_stream
from aorc.write.writer import OrcWriter, open_writer

__all__ = ["DEFAULT_MAX_MEMORY", "EXISTING_DATA_BEHAVIORS", "DatasetWriteStats",
           "write_dataset"]

#: ``max_memory`` when not given (as :class:`aorc.sink.RollingSink`'s ``memory_budget``).
DEFAULT_MAX_MEMORY = 256 << 20
#: A stripe holds at most this share of ``max_memory`` in Arrow bytes.
STRIPE_SHARE = 8
#: Object-store part size of the files unless ``storage_options`` set one (S3's smallest
#: part): every open file holds up to one part, and one being uploaded.
DATASET_PART_SIZE = 5 << 20

#: Accepted values of ``existing_data_behavior``.
EXISTING_DATA_BEHAVIORS = ("overwrite_or_ignore", "error", "delete_matching")
_INDEX = "__aorc_row"
#: The name of the encoder pools (one thread each, reused by the next call).
ENCODER_POOL = "aorc-dataset-encoder"


def _folder(values: Mapping[str, Any]) -> str:
    return "/".join(partition_segment(k, v) for k, v in values.items())


async def _check_empty(base_dir: str, storage_options: Mapping[str, Any] | None) -> None:
    try:
        found = await registry.list_files(base_dir, storage_options)
    except ObjectNotFoundError:
        return
    if found:
        raise StoreError(f"{base_dir}: the target already holds {len(found)} file(s) and "
                         f"existing_data_behavior is 'error'")


async def _delete_others(folders: set[str], written: set[str],
                         storage_options: Mapping[str, Any] | None) -> None:
    """delete_matching: remove the files of the written partitions that this call did not
    write (after the new files are complete, so a failure leaves the old data)."""
    for folder in sorted(folders):
        try:
            found = await registry.list_files(folder, storage_options)
        except ObjectNotFoundError:
            continue
        await gather_or_cancel([registry.delete(f.path, storage_options) for f in found
                                         if f.path not in written])


@dataclass
class _Written:
    """What one call has written so far, for the clean-up after a failure."""

    done: list[str] = field(default_factory=list)  # files made visible
    started: set[str] = field(default_factory=set)  # files whose writer was opened
    folders: set[str] = field(default_factory=set)  # local folders this call created


def _missing_folders(path: str) -> list[str]:
    """``path`` and its ancestors that do not exist yet (deepest first)."""
    missing = []
    while path and not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing


async def _make_parents(uri: str, state: _Written) -> None:
    scheme = registry.scheme_for(uri)
    if isinstance(scheme, registry.LocalScheme):
        folder = os.path.dirname(os.path.abspath(scheme.path_of(uri)))
        state.folders.update(await asyncio.to_thread(_missing_folders, folder))
    await registry.make_parents(uri)


async def _cleanup(state: _Written, unique_names: bool,
                   storage_options: Mapping[str, Any] | None, exc: BaseException) -> None:
    """Delete the files this call wrote. With names unique to the call (``{uuid}``), also
    those whose completion failed or was interrupted (the store may have carried it out
    although the answer was lost); other names may be older files the call did not replace."""
    targets = list(state.done)
    if unique_names:
        targets += sorted(state.started.difference(state.done))
    failed = []
    for uri in targets:
        try:
            await registry.delete(uri, storage_options)
        except Exception as err:  # noqa: BLE001 - reported in the note below
            failed.append(f"{uri} ({err})")
    for folder in sorted(state.folders, key=len, reverse=True):
        with contextlib.suppress(OSError):  # not empty: someone else's files are there
            await asyncio.to_thread(os.rmdir, folder)
    if failed:
        exc.add_note("write_dataset could not delete these files it had written: "
                     + ", ".join(failed))


async def _run_to_end(coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` to its end even if the caller is cancelled (again) meanwhile."""
    task = asyncio.ensure_future(coro)
    while not task.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([task])
    with contextlib.suppress(Exception):
        task.result()


def _check(schema: pa.Schema, partition_cols: Sequence[str], basename_template: str,
           existing_data_behavior: str, max_rows_per_file: int | None,
           max_concurrency: int, max_memory: int) -> None:
    for name in partition_cols:
        if name not in schema.names:
            raise SchemaError(f"partition column {name!r} is not in the data")
        check_folder_name(name, "partition column")
    if len(partition_cols) >= len(schema.names) and len(schema.names):
        raise SchemaError("every column is a partition column: the files would be empty")
    if "{i}" not in basename_template or "/" in basename_template:
        raise SchemaError("basename_template must contain '{i}' and no '/', got "
                          f"{basename_template!r}")
    if existing_data_behavior not in EXISTING_DATA_BEHAVIORS:
        raise SchemaError(f"existing_data_behavior must be one of "
                          f"{', '.join(EXISTING_DATA_BEHAVIORS)}, got "
                          f"{existing_data_behavior!r}")
    for name, value in (("max_rows_per_file", max_rows_per_file),
                        ("max_concurrency", max_concurrency), ("max_memory", max_memory)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise SchemaError(f"{name} must be a positive integer, got {value!r}")


def _split(batch: pa.RecordBatch, partition_cols: Sequence[str]
           ) -> list[tuple[dict[str, Any], pa.RecordBatch]]:
    """The rows of each combination of partition values in ``batch``, without the partition
    columns (rows keep their order; groups sorted by value, nulls last). Vectorised: one
    Arrow group-by gives every group's row indices, one ``take`` per group copies them."""
    data = batch.drop_columns(list(partition_cols))
    if not partition_cols:
        return [({}, data)]
    keys = pa.Table.from_batches([batch.select(list(partition_cols))]).append_column(
        _INDEX, pa.array(np.arange(batch.num_rows, dtype=np.int64)))
    grouped = keys.group_by(list(partition_cols), use_threads=False).aggregate(
        [(_INDEX, "list")])
    lists = grouped.column(f"{_INDEX}_list").combine_chunks()
    offsets = lists.offsets.to_numpy()
    indices = lists.values
    out = []
    for g, values in enumerate(grouped.select(list(partition_cols)).to_pylist()):
        rows = indices.slice(int(offsets[g]), int(offsets[g + 1] - offsets[g]))
        out.append((values, data.take(rows)))
    return sorted(out, key=lambda g: [(v is None, str(v)) for v in g[0].values()])


@dataclass
class _OpenFile:
    """A file being written, one per partition folder at a time."""

    writer: OrcWriter
    uri: str
    rows: int = 0


@dataclass
class DatasetWriteStats:
    """What one :func:`write_dataset` call did (for tests and benchmarks).

    Attributes:
        files: files opened.
        closes: files closed early, by reason: ``"memory"`` (the budget) or ``"rows"``
            (``max_rows_per_file``); the files open at the end are not counted.
        peak_open_files: the most files open at once.
        peak_memory: the most bytes the open and closing files held at once (as counted,
            see :attr:`aorc.OrcWriter.memory`).
        retries: requests the stores retried for the files written (any failure).
    """

    files: int = 0
    closes: dict[str, int] = field(default_factory=dict)
    peak_open_files: int = 0
    peak_memory: int = 0
    retries: int = 0


class _DatasetWriter:
    """The streaming engine of :func:`write_dataset`: one open file per partition folder,
    closed early when ``max_rows_per_file`` or the memory budget says so."""

    def __init__(self, base: str, partition_cols: Sequence[str], file_schema: pa.Schema,
                 basename_template: str, max_rows_per_file: int | None,
                 storage_options: Mapping[str, Any] | None, options: WriteOptions,
                 max_concurrency: int, max_memory: int,
                 counter: ProgressTracker | None) -> None:
        self.base, self.partition_cols = base, list(partition_cols)
        self.file_schema, self.template = file_schema, basename_template
        self.max_rows, self.options, self.max_memory = max_rows_per_file, options, max_memory
        self.storage_options = dict(storage_options or {})
        if registry.is_remote(base):  # one part buffered per open file, not nine of 8 MiB
            self.storage_options.setdefault("part_size", DATASET_PART_SIZE)
            self.storage_options.setdefault("memory_budget",
                                            2 * self.storage_options["part_size"])
        self.call_id = uuid.uuid4().hex
        self.counter = counter
        self.limit = asyncio.Semaphore(max_concurrency)
        self.state = _Written()
        self.open: dict[str, _OpenFile] = {}
        self.closing: dict[asyncio.Task[None], OrcWriter] = {}
        self.errors: list[BaseException] = []
        self.folders: set[str] = set()
        self.written: list[str] = []
        self.stats = DatasetWriteStats()
        # One thread encodes every file's stripes (as the sink's files do): fewer threads
        # allocating, fewer allocator heaps holding freed memory; a later call of the
        # process reuses it (an engine worker's next task).
        self.encoder = take_pool(ENCODER_POOL)
        #: The key provider of ``encrypt=`` (``keys=`` of :func:`write_dataset`).
        self.keys: Any = None

    # ----------------------------------------------------------------- rows

    async def write(self, batch: pa.RecordBatch) -> None:
        """Give ``batch``'s rows to their partitions' files, in pieces of at most a
        :data:`STRIPE_SHARE` of the budget (the partitions' copies of a large batch, a
        Table's one chunk say, stay small)."""
        if not batch.num_rows:
            return
        per_row = max(1, batch.nbytes // batch.num_rows)
        step = max(1, self.max_memory // STRIPE_SHARE // per_row)
        for start in range(0, batch.num_rows, step):
            await self._write_piece(batch.slice(start, step))

    async def _write_piece(self, batch: pa.RecordBatch) -> None:
        for values, rows in _split(batch, self.partition_cols):
            folder = registry.join(self.base, _folder(values)) if values else self.base
            self.folders.add(folder)
            while rows.num_rows:
                f = self.open.get(folder) or await self._open(folder)
                take = rows.num_rows
                if self.max_rows is not None:
                    take = min(take, self.max_rows - f.rows)
                await f.writer.write(rows if take == rows.num_rows else rows.slice(0, take))
                f.rows += take
                rows = rows.slice(take)
                if self.max_rows is not None and f.rows >= self.max_rows:
                    self._close(folder, "rows")
            await self._fit()

    async def _open(self, folder: str) -> _OpenFile:
        name = self.template.format(uuid=self.call_id, i=self.stats.files)
        uri = registry.join(folder, name)
        self.stats.files += 1
        await _make_parents(uri, self.state)
        writer = open_writer(uri, self.file_schema, options=self.options,
                             storage_options=self.storage_options, keys=self.keys)
        writer.stripe_arrow_limit = max(1, self.max_memory // STRIPE_SHARE)
        writer.executor = self.encoder
        self.state.started.add(uri)
        f = self.open[folder] = _OpenFile(writer, uri)
        self.stats.peak_open_files = max(self.stats.peak_open_files, len(self.open))
        return f

    # ----------------------------------------------------------------- memory

    @property
    def memory(self) -> int:
        """Bytes held by the open files and the files being closed."""
        return (sum(f.writer.memory for f in self.open.values())
                + sum(w.memory for w in self.closing.values()))

    async def _fit(self) -> None:
        """Keep within the budget. Files are closed by a count that depends only on the rows
        (the Arrow bytes they buffer: at most half the budget, the biggest file first), so
        where files end does not depend on timing; then, while the bytes actually held
        (stripes being encoded and sent, files being closed) exceed the budget, wait for
        them."""
        self._raise_failed()
        buffered = sum(f.writer.buffered_bytes for f in self.open.values())
        while self.open and buffered > self.max_memory // 2:
            folder = max(self.open, key=lambda k: self.open[k].writer.buffered_bytes)
            buffered -= self.open[folder].writer.buffered_bytes
            self._close(folder, "memory")
        while (held := self.memory) > self.max_memory:
            self.stats.peak_memory = max(self.stats.peak_memory, held)
            if self.closing:
                await asyncio.wait(list(self.closing), return_when=asyncio.FIRST_COMPLETED)
                self._raise_failed()
                continue
            pending = [f.writer for f in self.open.values() if f.writer.stripes_pending]
            if not pending:
                return  # (the rows alone: the budget is below one stripe of a file)
            await max(pending, key=lambda w: w.memory).settle()
        self.stats.peak_memory = max(self.stats.peak_memory, held)

    # ----------------------------------------------------------------- closing

    def _close(self, folder: str, reason: str | None) -> None:
        """Close the file of ``folder`` in the background (its last stripe and tail)."""
        f = self.open.pop(folder)
        if reason is not None:
            self.stats.closes[reason] = self.stats.closes.get(reason, 0) + 1
        task = asyncio.create_task(self._finish(f))
        self.closing[task] = f.writer
        task.add_done_callback(self._closed)

    def _closed(self, task: asyncio.Task[None]) -> None:
        writer = self.closing.pop(task, None)
        io = writer.io_stats if writer is not None else None
        self.stats.retries += io.retries if io is not None else 0
        if not task.cancelled() and task.exception() is not None:
            self.errors.append(cast(BaseException, task.exception()))

    async def _finish(self, f: _OpenFile) -> None:
        try:
            async with self.limit:
                await f.writer.close()
        except BaseException:
            # (cancelled while waiting for its turn, the file is still open: drop it)
            await _run_to_end(f.writer.abort())
            raise
        finally:
            # A cancellation can arrive once the file is visible (its rename or final
            # request cannot be recalled): the writer knows, and the clean-up must delete it.
            if f.writer.completed:
                self.state.done.append(f.uri)
        self.written.append(f.uri)
        if self.counter is not None:
            self.counter.advance(f.rows)

    def _raise_failed(self) -> None:
        if self.errors:
            raise self.errors[0]

    async def finish(self) -> list[str]:
        """Close every file; returns the files written."""
        if not self.stats.files and not self.partition_cols:
            await self._open(self.base)  # no rows: one empty file, as pyarrow writes
        for folder in list(self.open):
            self._close(folder, None)
        while self.closing:
            await asyncio.wait(list(self.closing), return_when=asyncio.FIRST_COMPLETED)
            self._raise_failed()
        self._raise_failed()
        return self.written

    async def abort(self) -> None:
        """Drop the open files and stop the closing ones (nothing partial is left)."""
        tasks = list(self.closing)
        for task in tasks:
            task.cancel()
        writers = [f.writer for f in self.open.values()]
        self.open.clear()
        await asyncio.gather(*tasks, *(w.abort() for w in writers), return_exceptions=True)


async def write_dataset(data: Any, base_dir: str | os.PathLike[str], *,
                        partition_cols: Sequence[str] | None = None,
                        basename_template: str = "part-{uuid}-{i}.orc",
                        existing_data_behavior: str = "overwrite_or_ignore",
                        max_rows_per_file: int | None = None,
                        storage_options: Mapping[str, Any] | None = None,
                        max_concurrency: int = 8, max_memory: int = DEFAULT_MAX_MEMORY,
                        options: WriteOptions | None = None,
                        progress: ProgressHook | None = None,
                        schema: pa.Schema | None = None,
                        **write_options: Any) -> list[str]:
    """Write rows as a dataset of ORC files under ``base_dir`` (a folder or S3 prefix).

    The rows are streamed: each batch is split by partition and appended to its partition's
    open file, so a dataset far larger than memory can be written from a generator or a
    reader (see the module docstring for the memory budget).

    Args:
        data: anything :func:`aorc.write_table` takes (a pyarrow Table, RecordBatch or
            RecordBatchReader, a pandas or Polars DataFrame, a DuckDB relation, an iterable
            or async iterable of batches, ...: see :mod:`aorc.write.inputs`).
        base_dir: the dataset's root.
        partition_cols: columns making ``name=value`` folders (escaped as Hive does;
            null is ``__HIVE_DEFAULT_PARTITION__``), left out of the files.
        basename_template: file names; ``{i}`` is the file's number in this call (in the
            order the files are opened) and ``{uuid}`` one random id per call, so every
            call adds new files (append).
        existing_data_behavior: ``"overwrite_or_ignore"`` (add files), ``"error"`` (refuse
            a target holding any file) or ``"delete_matching"`` (replace the partitions
            written: their other files are deleted once the new ones are complete).
        max_rows_per_file: the most rows per file (default: one file per partition unless
            the memory budget closes one early).
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_concurrency: files being completed (last stripe, tail, upload) at once.
        max_memory: bytes the files being written may hold (default 256 MiB): rows
            buffered for their next stripe, stripes being encoded and sent, object-store
            parts. When the rows buffered pass half of it, the partition files holding the
            most are closed (a later row of the partition opens a new file), and a stripe
            holds at most an eighth of it in Arrow bytes.
        options: writer options as an :class:`aorc.WriteOptions`.
        progress: a hook told of the rows written, file by file once each file is
            complete (a callable taking an :class:`aorc.ProgressEvent`, or a tqdm-like bar;
            see :mod:`aorc.progress`); the total is the input's row count when known.
        schema: the rows' schema, partition columns included: the data must have it, and
            pandas DataFrames are converted to it (as ``pyarrow.Table.from_pandas(df,
            schema=...)``: what a column of dicts, or of mixed values, needs). Default: the
            data's own.
        **write_options: writer options as keywords (as :func:`aorc.open_writer` takes them,
            ``keys=`` for ``encrypt=`` included),
            overriding the fields of ``options``.

    Returns:
        The paths or URLs of the files written, sorted.

    Raises:
        InputTypeError: ``data`` is of no accepted kind.
        SchemaError: bad arguments or options (before anything is written), a batch
            whose schema differs from the first one's (or from ``schema``), or a pandas
            column pyarrow cannot convert (named, with the fix).
        StoreError: a non-empty target with ``"error"``, or a failed write (then no file
            of this call is left; a note names any that could not be deleted).
    """
    stream = await batch_stream(data, schema)
    try:
        if schema is not None and not stream.schema.equals(schema):
            raise SchemaError(f"the data's schema differs from schema=: {stream.schema} "
                              f"given {schema}")
        return await _write_stream(stream, os.fspath(base_dir), list(partition_cols or []),
                                   basename_template, existing_data_behavior,
                                   max_rows_per_file, storage_options, max_concurrency,
                                   max_memory, options, progress, write_options)
    finally:
        await _run_to_end(stream.aclose())


async def _write_stream(stream: BatchStream, base: str, partition_cols: list[str],
                        basename_template: str, existing_data_behavior: str,
                        max_rows_per_file: int | None,
                        storage_options: Mapping[str, Any] | None, max_concurrency: int,
                        max_memory: int, options: WriteOptions | None,
                        progress: ProgressHook | None, write_options: dict[str, Any]
                        ) -> list[str]:
    """:func:`write_dataset` of a stream of record batches with a known schema."""
    schema = stream.schema
    _check(schema, partition_cols, basename_template, existing_data_behavior,
           max_rows_per_file, max_concurrency, max_memory)
    file_schema = pa.schema([f for f in schema if f.name not in partition_cols])
    keys = write_options.pop("keys", None)  # the key provider of encrypt= (not an option)
    opts = WriteOptions.create(options, write_options, caller="write_dataset")
    opts.resolve(from_arrow_schema(file_schema))  # bad options fail before any file is written
    if existing_data_behavior == "error":
        await _check_empty(base, storage_options)
    counter = tracker(progress, "write_dataset", "rows", stream.num_rows)
    engine = _DatasetWriter(base, partition_cols, file_schema, basename_template,
                            max_rows_per_file, storage_options, opts, max_concurrency,
                            max_memory, counter)
    engine.keys = keys
    try:
        async for batch in stream.batches:
            await engine.write(conform(batch, schema))
        written = await engine.finish()
    except BaseException as exc:
        await _run_to_end(engine.abort())
        await _run_to_end(_cleanup(engine.state, "{uuid}" in basename_template,
                                   storage_options, exc))
        engine.encoder.shutdown(wait=False)  # (not reused: a stripe may still be encoding)
        raise
    finally:
        _LAST_STATS[0] = engine.stats
    give_back_pool(engine.encoder, ENCODER_POOL)  # every file closed: the encoder is idle
    if existing_data_behavior == "delete_matching":
        await _delete_others(engine.folders, set(written), storage_options)
    return sorted(written)


#: The statistics of the last call (a test and benchmark seam; not part of the API).
_LAST_STATS: list[DatasetWriteStats] = [DatasetWriteStats()]
