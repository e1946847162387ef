"""Datasets of many small local files: a group of files per worker task.

A file of a few kilobytes costs microseconds to decode, so a read that gives each file its
own tasks, locks and thread hand-overs spends most of its time on them. When every file a
read opens is local and small (at most :data:`aorc.read.discovery.SMALL_FILE_BYTES`, read
whole with one ``read``), :func:`run_groups` hands the files to the shared pool in groups,
each group read, opened and decoded on one worker thread without touching the event loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

import pyarrow as pa

from aorc.errors import CorruptFileError
from aorc.io import IOStats, registry
from aorc.io.base import gather_or_cancel
from aorc.progress import ProgressTracker
from aorc.read.dataset_plan import FilePlan, ReadPlan
from aorc.read.discovery import (
    SMALL_FILE_BYTES,
    DatasetFile,
    DatasetOptions,
    OpenedTail,
    TailCache,
    open_local_tail,
)
from aorc.read.partitioning import Clauses
from aorc.read.reader import OrcReader
from aorc.threads import pool_size, shared_pool

__all__ = ["GROUP_FILES", "SmallFileReads", "all_small_local", "run_groups"]

#: The most files one worker task reads.
GROUP_FILES = 64

_I = TypeVar("_I")
_IO_LOCK = threading.Lock()  # the counts of every dataset's worker threads
_R = TypeVar("_R")


def all_small_local(files: Sequence[DatasetFile]) -> bool:
    """Whether every file is on local disk and at most ``SMALL_FILE_BYTES`` long."""
    return bool(files) and all(f.size <= SMALL_FILE_BYTES
                               and registry.local_path(f.path) is not None for f in files)


def _groups(items: Sequence[_I]) -> list[Sequence[_I]]:
    """``items`` cut into groups: at most :data:`GROUP_FILES` each, and at least four
    groups per pool thread when there are enough items (so the threads stay busy)."""
    size = max(1, min(GROUP_FILES, len(items) // (4 * pool_size()) or 1))
    return [items[i:i + size] for i in range(0, len(items), size)]


async def run_groups(items: Sequence[_I], work: Callable[[_I], _R], *,
                     done: Callable[[int], None] | None = None) -> list[_R]:
    """``[work(x) for x in items]``, a group of items per task on the shared pool (at most
    one task per pool thread at once); ``done(n)`` is told of each group finished."""
    loop = asyncio.get_running_loop()
    pool = shared_pool()
    limit = asyncio.Semaphore(pool_size())

    def run(group: Sequence[_I]) -> list[_R]:
        return [work(item) for item in group]

    async def one(group: Sequence[_I]) -> list[_R]:
        async with limit:
            out = await loop.run_in_executor(pool, run, group)
        if done is not None:
            done(len(group))
        return out

    results = await gather_or_cancel([one(g) for g in _groups(items)])
    return [r for group in results for r in group]


class SmallFileReads:
    """What :class:`aorc.read.dataset.Dataset` does with small local files: each file read,
    opened and decoded on a worker thread, a group of files per task (the methods whose
    names end in ``_local``); a file that needs more than its bytes read at open time goes
    the async way. The stubs below are the dataset's own methods."""

    _tails: TailCache
    _options: DatasetOptions
    _io: IOStats

    def _keep(self, f: DatasetFile, tail: OpenedTail) -> None:
        raise NotImplementedError

    def _file_request(self, file_schema: pa.Schema, clauses: Clauses | None, plan: ReadPlan
                      ) -> tuple[list[str], Clauses | None, bool, dict[str, str]]:
        raise NotImplementedError

    def _file_reader(self, f: DatasetFile, tail: OpenedTail) -> OrcReader:
        raise NotImplementedError

    def _finish(self, table: pa.Table, f: DatasetFile, names: dict[str, str],
                plan: ReadPlan) -> pa.Table:
        raise NotImplementedError

    def _count(self, reader: OrcReader, before: IOStats) -> None:
        raise NotImplementedError

    async def _read_file(self, f: DatasetFile, clauses: Clauses | None,
                         plan: ReadPlan, threads: bool | int = True) -> pa.Table:
        raise NotImplementedError

    async def _read_raw(self, f: DatasetFile, clauses: Clauses | None,
                        columns: set[str] | None, threads: bool | int = True
                        ) -> tuple[DatasetFile, pa.Schema, pa.Table] | None:
        raise NotImplementedError

    def _local_tail(self, f: DatasetFile, *, keep: bool = True) -> OpenedTail | None:
        """The tail of a small local file, on this thread (``None``: an invalid file left
        out); kept for later reads unless ``keep`` is false."""
        cached = self._tails.get(f.path)
        if cached is not None:
            return cached
        try:
            io = IOStats()
            cached = open_local_tail(f.path, self._options, io)
            self._add_io(io)
        except CorruptFileError:
            if not self._options.exclude_invalid_files:
                raise
            return None
        if keep:
            self._keep(f, cached)
        return cached

    def _local_schema(self, f: DatasetFile) -> tuple[str, pa.Schema] | None:
        tail = self._local_tail(f)
        return None if tail is None else (f.path, tail.schema)

    def _decode_local(self, item: FilePlan, plan: ReadPlan) -> pa.Table | None:
        """A small local file's rows in the read's schema, on this thread (``None``: it
        needs the async path). No reader outlives it: thousands would hold their tails."""
        f, clauses = item
        tail = self._local_tail(f)
        if tail is None:
            return plan.out_schema.empty_table()
        cols, filt, possible, names = self._file_request(tail.schema, clauses, plan)
        if not possible:
            return plan.out_schema.empty_table()
        reader = self._file_reader(f, tail)  # its store is never opened: nothing to close
        table = self._buffered_rows(reader, cols, filt)
        if table is None:
            return None
        self._count_scan(reader)
        return self._finish(table, f, names, plan)

    async def _read_local(self, plan: ReadPlan, counter: ProgressTracker | None
                          ) -> list[pa.Table]:
        """:meth:`read`'s tables of small local files, a group of files per worker task."""
        done = None if counter is None else counter.advance
        results = await run_groups(plan.files, lambda item: self._decode_local(item, plan),
                                   done=done)
        return [table if table is not None else await self._read_file(f, clauses, plan)
                for (f, clauses), table in zip(plan.files, results, strict=True)]

    async def _raw_local(self, survivors: Sequence[FilePlan], columns: set[str] | None,
                         counter: ProgressTracker | None
                         ) -> list[tuple[DatasetFile, pa.Schema, pa.Table] | None]:
        """:meth:`_read_raw` of small local files, a group of files per worker task."""

        def one(item: FilePlan) -> tuple[DatasetFile, pa.Schema, pa.Table] | None | bool:
            f, clauses = item
            tail = self._local_tail(f, keep=False)
            if tail is None:
                return None
            wanted = pa.schema([x for x in tail.schema if columns is None or x.name in columns])
            cols, filt, possible, _ = self._file_request(tail.schema, clauses,
                                                         ReadPlan([], wanted, wanted, wanted))
            if not possible:
                return f, tail.schema, wanted.empty_table()
            reader = self._file_reader(f, tail)
            table = self._buffered_rows(reader, cols, filt)
            if table is None:
                return False  # it needs more than its bytes read
            self._count_scan(reader)
            return f, tail.schema, table

        done = None if counter is None else counter.advance
        results = await run_groups(survivors, one, done=done)
        out: list[tuple[DatasetFile, pa.Schema, pa.Table] | None] = []
        for (f, clauses), found in zip(survivors, results, strict=True):
            out.append(await self._read_raw(f, clauses, columns) if found is False
                       else None if found is True else found)
        return out

    def _count_scan(self, reader: OrcReader) -> None:
        """Count a worker thread's reader's scan in the dataset's."""
        with _IO_LOCK:
            self._count(reader, reader.io_stats.snapshot())

    @staticmethod
    def _buffered_rows(reader: OrcReader, cols: list[str], filt: Clauses | None
                       ) -> pa.Table | None:
        """:meth:`_read_rows` from the bytes read at open time (``None``: more are needed)."""
        if not cols and filt is None:
            return pa.table({"n": pa.nulls(reader.num_rows)}).select([])
        if not cols:
            assert filt is not None
            got = reader.read_buffered([filt[0][0][0].split(".")[0]], filt)
            return None if got is None else got.select([])
        return reader.read_buffered(cols, filt)

    def _add_io(self, io: IOStats) -> None:
        """Count a worker thread's requests in the dataset's."""
        with _IO_LOCK:
            self._io.requests += io.requests
            self._io.bytes += io.bytes

