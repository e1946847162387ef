"""Writing a dataset: rows split into Hive partition folders, many ORC files uploaded at once.

:func:`write_dataset` groups the rows by the partition columns (left out of the files, as
Spark does), cuts each group into files of at most ``max_rows_per_file`` rows and writes
them concurrently through :func:`aorc.open_writer` (for S3 the streaming multipart writer).
Every file is complete or absent: a failure or a cancellation cancels the writes under way
(which leave nothing; a file whose completion had reached the store is waited for) and
deletes every file this call made visible -- with the default names (``{uuid}``), also any
whose completion failed without saying whether it took effect -- and the local folders it
created; the error notes any file it could not delete.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from aorc.errors import ObjectNotFoundError, SchemaError, StoreError
from aorc.format.types import from_arrow_schema
from aorc.hive import check_folder_name, partition_segment
from aorc.io import registry
from aorc.io.base import gather_or_cancel
from aorc.options import WriteOptions
from aorc.progress import ProgressHook, ProgressTracker, tracker
from aorc.write.inputs import collect_batches
from aorc.write.writer import open_writer

__all__ = ["EXISTING_DATA_BEHAVIORS", "write_dataset"]

#: Accepted values of ``existing_data_behavior``.
EXISTING_DATA_BEHAVIORS = ("overwrite_or_ignore", "error", "delete_matching")
_INDEX = "__aorc_row"


def _groups(table: pa.Table, partition_cols: Sequence[str]
            ) -> list[tuple[dict[str, Any], pa.Table]]:
    """The rows of each combination of partition values (rows keep their order)."""
    data = table.drop_columns(list(partition_cols))
    if not partition_cols:
        return [({}, data)]
    keys = table.select(list(partition_cols)).append_column(
        _INDEX, pa.array(range(table.num_rows), pa.int64()))
    grouped = keys.group_by(list(partition_cols), use_threads=False).aggregate(
        [(_INDEX, "list")])
    out = []
    for row in grouped.to_pylist():
        rows = row.pop(f"{_INDEX}_list")
        out.append((row, data.take(pa.array(rows, pa.int64()))))
    return sorted(out, key=lambda g: [(v is None, str(v)) for v in g[0].values()])


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


async def _write_one(table: pa.Table, uri: str, storage_options: Mapping[str, Any] | None,
                     options: WriteOptions, limit: asyncio.Semaphore,
                     state: _Written, counter: ProgressTracker | None = None) -> str:
    async with limit:
        await _make_parents(uri, state)
        writer = open_writer(uri, table.schema, options=options, storage_options=storage_options)
        state.started.add(uri)
        try:
            async with writer:
                for batch in table.to_batches():
                    await writer.write(batch)
        finally:
            # A cancellation can arrive once the file is visible (its rename or final request
            # cannot be recalled): the writer knows, and the clean-up must delete it.
            if writer.completed:
                state.done.append(uri)
    if counter is not None:
        counter.advance(table.num_rows)
    return uri


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


def _plan_files(table: pa.Table, base: str, partition_cols: Sequence[str],
                basename_template: str, max_rows_per_file: int | None
                ) -> tuple[list[tuple[pa.Table, str]], set[str]]:
    """The files to write (rows, path) and the partition folders they go to."""
    call_id = uuid.uuid4().hex
    jobs: list[tuple[pa.Table, str]] = []
    folders: set[str] = set()
    for values, rows in _groups(table, partition_cols):
        folder = registry.join(base, _folder(values))
        folders.add(folder)
        step = max_rows_per_file or max(rows.num_rows, 1)
        for start in range(0, max(rows.num_rows, 1), step):
            name = basename_template.format(uuid=call_id, i=len(jobs))
            jobs.append((rows.slice(start, step), registry.join(folder, name)))
    return jobs, folders


def _check(table: pa.Table, partition_cols: Sequence[str], basename_template: str,
           existing_data_behavior: str, max_rows_per_file: int | None,
           max_concurrency: int) -> None:
    for name in partition_cols:
        if name not in table.column_names:
            raise SchemaError(f"partition column {name!r} is not in the data")
        check_folder_name(name, "partition column")
    if len(partition_cols) >= table.num_columns and table.num_columns:
        raise SchemaError("every column is a partition column: the files would be empty")
    if "{i}" not in basename_template or "/" in basename_template:
        raise SchemaError("basename_template must contain '{i}' and no '/', got "
                          f"{basename_template!r}")
    if existing_data_behavior not in EXISTING_DATA_BEHAVIORS:
        raise SchemaError(f"existing_data_behavior must be one of "
                          f"{', '.join(EXISTING_DATA_BEHAVIORS)}, got "
                          f"{existing_data_behavior!r}")
    for name, value in (("max_rows_per_file", max_rows_per_file),
                        ("max_concurrency", max_concurrency)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or value < 1):
            raise SchemaError(f"{name} must be a positive integer, got {value!r}")


async def write_dataset(data: Any, base_dir: str | os.PathLike[str], *,
                        partition_cols: Sequence[str] | None = None,
                        basename_template: str = "part-{uuid}-{i}.orc",
                        existing_data_behavior: str = "overwrite_or_ignore",
                        max_rows_per_file: int | None = None,
                        storage_options: Mapping[str, Any] | None = None,
                        max_concurrency: int = 8, options: WriteOptions | None = None,
                        progress: ProgressHook | None = None,
                        **write_options: Any) -> list[str]:
    """Write rows as a dataset of ORC files under ``base_dir`` (a folder or S3 prefix).

    Args:
        data: anything :func:`aorc.write_table` takes (a pyarrow Table, RecordBatch or
            RecordBatchReader, a pandas or Polars DataFrame, a DuckDB relation, an iterable
            or async iterable of batches, ...: see :mod:`aorc.write.inputs`).
        base_dir: the dataset's root.
        partition_cols: columns making ``name=value`` folders (escaped as Hive does;
            null is ``__HIVE_DEFAULT_PARTITION__``), left out of the files.
        basename_template: file names; ``{i}`` is the file's number in this call and
            ``{uuid}`` one random id per call, so every call adds new files (append).
        existing_data_behavior: ``"overwrite_or_ignore"`` (add files), ``"error"`` (refuse
            a target holding any file) or ``"delete_matching"`` (replace the partitions
            written: their other files are deleted once the new ones are complete).
        max_rows_per_file: the most rows per file (default: one file per partition).
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_concurrency: files written at once.
        options: writer options as an :class:`aorc.WriteOptions`.
        progress: a hook told of the rows written, file by file once each file is
            complete (a callable taking an :class:`aorc.ProgressEvent`, or a tqdm-like bar;
            see :mod:`aorc.progress`); the total is the input's row count.
        **write_options: writer options as keywords (as :func:`aorc.open_writer` takes them),
            overriding the fields of ``options``.

    Returns:
        The paths or URLs of the files written, sorted.

    Raises:
        InputTypeError: ``data`` is of no accepted kind.
        SchemaError: bad arguments or options (before anything is written).
        StoreError: a non-empty target with ``"error"``, or a failed write (then no file
            of this call is left; a note names any that could not be deleted).
    """
    schema, batches = await collect_batches(data)
    table = (pa.Table.from_batches(batches, schema=schema) if schema is not None
             else pa.table({}))
    partition_cols = list(partition_cols or [])
    _check(table, partition_cols, basename_template, existing_data_behavior,
           max_rows_per_file, max_concurrency)
    base = os.fspath(base_dir)
    file_schema = pa.schema([f for f in table.schema if f.name not in partition_cols])
    opts = WriteOptions.create(options, write_options, caller="write_dataset")
    opts.resolve(from_arrow_schema(file_schema))  # bad options fail before any file is written
    if existing_data_behavior == "error":
        await _check_empty(base, storage_options)
    jobs, folders = _plan_files(table, base, partition_cols, basename_template,
                                max_rows_per_file)
    counter = tracker(progress, "write_dataset", "rows", table.num_rows)
    limit = asyncio.Semaphore(max_concurrency)
    state = _Written()
    try:
        written = await gather_or_cancel([
            _write_one(rows, uri, storage_options, opts, limit, state, counter)
            for rows, uri in jobs if rows.num_rows or not partition_cols])
    except BaseException as exc:
        await _run_to_end(_cleanup(state, "{uuid}" in basename_template, storage_options,
                                   exc))
        raise
    if existing_data_behavior == "delete_matching":
        await _delete_others(folders, set(written), storage_options)
    return sorted(written)
