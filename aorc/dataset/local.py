"""Datasets of many small local files: a group of files per worker task.

A file of a few kilobytes costs microseconds to decode, so a read that gives each file its
own tasks, locks and thread hand-overs spends most of its time on them. When every file a
read opens is local and small (at most :data:`aorc.dataset.discovery.SMALL_FILE_BYTES`, read
whole with one ``read``), :func:`run_groups` hands the files to the shared pool in groups,
each group read, opened and decoded on one worker thread without touching the event loop,
the pool's tasks taking group after group. Files of a few kilobytes are Python work that
holds the GIL: they go to one thread at a time (:func:`group_threads`). What depends only
on a file's schema (its columns to read, the file's type tree, the selection) is worked
out once per schema, and an unfiltered read decodes each file's bytes in one go
(:func:`aorc.read.plan.decode_file`), without a reader.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from aorc.dataset.discovery import (
    SMALL_FILE_BYTES,
    DatasetFile,
    DatasetOptions,
    OpenedTail,
    TailCache,
    open_local_tail,
)
from aorc.dataset.partitioning import Clauses
from aorc.dataset.plan import FilePlan, ReadPlan
from aorc.errors import CorruptFileError, deferred_warnings, warn
from aorc.format.columns import DecodeOptions
from aorc.format.projection import requested_order, select_columns
from aorc.format.types import OrcType
from aorc.io import IOStats, registry
from aorc.progress import ProgressTracker
from aorc.read import plan as file_plan
from aorc.read.pushdown import ScanStats
from aorc.read.reader import OrcReader
from aorc.threads import pool_size, shared_pool

__all__ = [
    "GROUP_FILES",
    "TINY_FILE_BYTES",
    "SmallFileReads",
    "all_small_local",
    "group_threads",
    "run_groups",
]

#: The most files one worker task reads.
GROUP_FILES = 64
#: Files of at most this many bytes on average are read by one worker thread at a time.
#: Their reading is Python (tail parse, read plan, a few hundred rows decoded), which holds
#: the GIL: two threads at once fight for it, each kernel's or syscall's release of the GIL
#: handing it over and taking it back across cores. Measured on 10,000 files of 100 rows
#: (1.5 KiB) on 2 cores: 3.75 s on two threads, 2.6 s on one. Larger files spend most of
#: their time in decompression and decoding kernels that release the GIL: all threads.
TINY_FILE_BYTES = 64 << 10

_I = TypeVar("_I")
_IO_LOCK = threading.Lock()  # the counts of every dataset's worker threads
_R = TypeVar("_R")


def all_small_local(files: Sequence[DatasetFile]) -> bool:
    """Whether every file is on local disk and at most ``SMALL_FILE_BYTES`` long."""
    return bool(files) and all(f.size <= SMALL_FILE_BYTES
                               and registry.local_path(f.path) is not None for f in files)


def group_threads(files: Sequence[DatasetFile]) -> int:
    """Worker threads for reading ``files`` a group at a time: one when they average at
    most :data:`TINY_FILE_BYTES` (their reading holds the GIL), else the pool's size."""
    if files and sum(f.size for f in files) <= TINY_FILE_BYTES * len(files):
        return 1
    return pool_size()


def _groups(items: Sequence[_I], threads: int | None = None) -> list[Sequence[_I]]:
    """``items`` cut into groups: at most :data:`GROUP_FILES` each, and at least four
    groups per thread when there are enough items (so the threads stay busy)."""
    threads = pool_size() if threads is None else threads
    size = max(1, min(GROUP_FILES, len(items) // (4 * threads) or 1))
    return [items[i:i + size] for i in range(0, len(items), size)]


async def run_groups(items: Sequence[_I], work: Callable[[Sequence[_I]], list[_R]], *,
                     threads: int | None = None,
                     done: Callable[[int], None] | None = None) -> list[_R]:
    """The concatenated ``work(group)`` of ``items`` cut into groups; ``work`` gives one
    result per item. ``threads`` (default: the pool's size) tasks of the shared pool take
    the groups in turn (:meth:`aorc.threads.WorkerPool.share`), each going on to the next
    group without a trip through the event loop (under load, every trip waits for the
    loop's thread to be scheduled: with a group per task, 10,000 files spent a third of
    their time so). ``done(n)`` is told of each group finished. The first failure stops the
    tasks after their current group."""
    loop = asyncio.get_running_loop()
    threads = pool_size() if threads is None else max(1, min(threads, pool_size()))
    groups = _groups(items, threads)
    if not groups:
        return []
    finished: asyncio.Future[list[list[_R]]] = loop.create_future()
    stopped = False

    def settle(results: list[list[_R]] | None, exc: BaseException | None) -> None:
        if finished.done():
            return
        if exc is not None:
            finished.set_exception(exc)
        else:
            finished.set_result(results if results is not None else [])

    def told(n: int) -> None:
        if done is not None and not stopped:
            done(n)

    def each(i: int) -> None:
        if done is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody to tell
                loop.call_soon_threadsafe(told, len(groups[i]))

    def end(results: list[list[_R]] | None, exc: BaseException | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits any more
            loop.call_soon_threadsafe(settle, results, exc)

    # Each group runs in a copy of this context: aorc's warnings issued on the pool's
    # threads are held and issued here, on the caller's thread (aorc.errors.warn then names
    # the caller's line, not aorc's).
    with deferred_warnings():
        context = contextvars.copy_context()
        share = shared_pool().share(lambda i: context.copy().run(work, groups[i]),
                                    len(groups), helpers=threads, each=each, end=end)
        try:
            results = await finished
        finally:
            stopped = True
            share.stop()  # after a failure or a cancellation, no further group starts
    return [r for group in results for r in group]


class SmallFileReads:
    """What :class:`aorc.dataset.read.Dataset` does with small local files: each file read,
    opened and decoded on a worker thread, a group of files per task (the methods whose
    names end in ``_local``); a file that needs more than its bytes read at open time goes
    the async way. The stubs below are the dataset's own methods."""

    _tails: TailCache
    _options: DatasetOptions
    _io: IOStats
    _scan: ScanStats
    _skipped: set[str]

    def _skip_invalid(self, path: str, exc: CorruptFileError) -> None:
        """Leave out the invalid file ``path`` (``exc`` says why) when invalid files are
        excluded: warned about and counted in ``scan_stats.files_skipped`` once per dataset;
        else raise ``exc``. Safe on worker threads."""
        if not self._options.exclude_invalid_files:
            if "exclude_invalid_files" not in str(exc):
                exc.args = (f"{exc}; to skip the files of a dataset that are not ORC, pass "
                            f"exclude_invalid_files=True (CLI: --exclude-invalid-files)",)
            raise exc
        with _IO_LOCK:
            if path in self._skipped:
                return
            self._skipped.add(path)
            self._scan.files_skipped += 1
        reason = re.sub(rf"^{re.escape(path)}( \(\d+ bytes\))?: ", "", str(exc))
        warn(f"skipped {path} (exclude_invalid_files): {reason}")

    def _keep(self, f: DatasetFile, tail: OpenedTail, *, evict: bool = True) -> None:
        raise NotImplementedError

    def _file_request(self, file_schema: pa.Schema, clauses: Clauses | None, plan: ReadPlan
                      ) -> tuple[list[str], Clauses | None, bool, dict[str, str]]:
        raise NotImplementedError

    def _file_reader(self, f: DatasetFile, tail: OpenedTail) -> OrcReader:
        raise NotImplementedError

    def _finish(self, table: pa.Table, f: DatasetFile, names: dict[str, str],
                plan: ReadPlan) -> pa.Table:
        raise NotImplementedError

    async def _read_file(self, f: DatasetFile, clauses: Clauses | None,
                         plan: ReadPlan, threads: bool | int = True) -> pa.Table:
        raise NotImplementedError

    async def _read_raw(self, f: DatasetFile, clauses: Clauses | None,
                        columns: set[str] | None, threads: bool | int = True
                        ) -> tuple[DatasetFile, pa.Schema, pa.Table] | None:
        raise NotImplementedError

    def _local_tail(self, f: DatasetFile, *, keep: bool = True, io: IOStats | None = None
                    ) -> OpenedTail | None:
        """The tail of a small local file, on this thread (``None``: an invalid file left
        out); kept for later reads unless ``keep`` is false, while the tail budget has room
        (a pass over the files keeps the first ones, dropping none: see
        :meth:`TailCache.put`). Its request is counted in ``io`` when given (a group's,
        added to the dataset's once), else at once."""
        cached = self._tails.get(f.path) if len(self._tails) else None
        if cached is not None:
            return cached
        try:
            mine = io if io is not None else IOStats()
            cached = open_local_tail(f.path, self._options, mine, f.size)
            if io is None:
                self._add_io(mine)
        except CorruptFileError as exc:
            self._skip_invalid(f.path, exc)
            return None
        if keep:
            self._keep(f, cached, evict=False)
        return cached

    def _local_schemas(self, group: Sequence[DatasetFile]) -> list[pa.Schema | None]:
        """The schemas of a group of small local files (``None``: an invalid file)."""
        io = IOStats()
        try:
            out: list[pa.Schema | None] = []
            for f in group:
                tail = self._local_tail(f, io=io)
                out.append(None if tail is None else tail.schema)
            return out
        finally:
            self._add_io(io)

    def _decode_group(self, group: Sequence[FilePlan], plan: ReadPlan,
                      requests: _Requests) -> list[pa.Table | None]:
        """The rows of a group of small local files in the read's schema, on this thread
        (``None``: a file that needs the async path). No reader outlives its file:
        thousands would hold their tails."""
        counts = _Counts()
        try:
            out: list[pa.Table | None] = []
            for f, clauses in group:
                tail = self._local_tail(f, io=counts.io)
                if tail is None:
                    out.append(plan.out_schema.empty_table())
                    continue
                cols, filt, possible, names = requests.get(
                    tail.schema, clauses, lambda s, c: self._file_request(s, c, plan))
                if not possible:
                    out.append(plan.out_schema.empty_table())
                    continue
                table = self._scan_buffered(f, tail, cols, filt, counts)
                out.append(None if table is None else self._finish(table, f, names, plan))
            return out
        finally:
            self._add_counts(counts)

    async def _read_local(self, plan: ReadPlan, counter: ProgressTracker | None
                          ) -> list[pa.Table]:
        """:meth:`read`'s tables of small local files, a group of files per worker task."""
        done = None if counter is None else counter.advance
        requests = _Requests()
        results = await run_groups(
            plan.files, lambda group: self._decode_group(group, plan, requests),
            threads=group_threads([f for f, _ in plan.files]), done=done)
        return [table if table is not None else await self._read_file(f, clauses, plan)
                for (f, clauses), table in zip(plan.files, results, strict=True)]

    def _raw_group(self, group: Sequence[FilePlan], columns: set[str] | None,
                   requests: _Requests) -> list[_Raw | None | bool]:
        """:meth:`_read_raw` of a group of small local files on this thread (``False``: a
        file that needs the async path)."""

        def request(schema: pa.Schema, clauses: Clauses | None) -> _Request:
            wanted = pa.schema([x for x in schema if columns is None or x.name in columns])
            cols, filt, possible, _ = self._file_request(schema, clauses,
                                                         ReadPlan([], wanted, wanted, wanted))
            return wanted, cols, filt, possible

        counts = _Counts()
        try:
            out: list[_Raw | None | bool] = []
            for f, clauses in group:
                tail = self._local_tail(f, keep=False, io=counts.io)
                if tail is None:
                    out.append(None)
                    continue
                wanted, cols, filt, possible = requests.get(tail.schema, clauses, request)
                if not possible:
                    out.append((f, tail.schema, wanted.empty_table()))
                    continue
                table = self._scan_buffered(f, tail, cols, filt, counts)
                out.append(False if table is None else (f, tail.schema, table))
            return out
        finally:
            self._add_counts(counts)

    async def _raw_local(self, survivors: Sequence[FilePlan], columns: set[str] | None,
                         counter: ProgressTracker | None) -> list[_Raw | None]:
        """:meth:`_read_raw` of small local files, a group of files per worker task."""
        done = None if counter is None else counter.advance
        requests = _Requests()
        results = await run_groups(
            survivors, lambda group: self._raw_group(group, columns, requests),
            threads=group_threads([f for f, _ in survivors]), done=done)
        out: list[_Raw | None] = []
        for (f, clauses), found in zip(survivors, results, strict=True):
            out.append(await self._read_raw(f, clauses, columns) if found is False
                       else None if found is True else found)
        return out

    def _scan_buffered(self, f: DatasetFile, tail: OpenedTail, cols: list[str],
                       filt: Clauses | None, counts: _Counts) -> pa.Table | None:
        """A file's rows from the bytes read at open time, its scan counted in ``counts``
        (``None``: more bytes are needed)."""
        if filt is None and cols and not self._options.read_dictionary \
                and not self._options.use_writer_timezone:
            table = _whole_table(f.path, tail, cols, self._options.timestamp_unit,
                                 self._options.max_decoded_bytes)
            if table is not None:
                return table  # an unfiltered read counts no scan
        reader = self._file_reader(f, tail)  # its store is never opened: nothing to close
        table = self._buffered_rows(reader, cols, filt)
        if table is not None:
            counts.add_scan(reader.scan_stats)
        return table

    def _add_counts(self, counts: _Counts) -> None:
        """Count a group's requests and scans in the dataset's."""
        with _IO_LOCK:
            self._io.requests += counts.io.requests
            self._io.bytes += counts.io.bytes
            scan, mine = self._scan, counts.scan
            for name in _SCAN_COUNTS:
                setattr(scan, name, getattr(scan, name) + getattr(mine, name))

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


def _whole_table(path: str, tail: OpenedTail, cols: list[str], unit: str,
                 max_decoded_bytes: int) -> pa.Table | None:
    """:meth:`OrcReader.read_buffered` of an unfiltered read of ``cols`` without a reader:
    the file's bytes decoded in one go (``None``: they are not the whole file)."""
    orc = tail.tail
    if len(tail.data) != orc.file_length:
        return None
    opts = DecodeOptions.shared_from_tail(orc, timestamp_unit=unit,
                                          max_decoded_bytes=max_decoded_bytes)
    key = (id(orc.schema), tuple(cols), unit)
    known = _SELECTIONS.get(key)
    if known is None or known[0] is not orc.schema:
        selected = select_columns(orc.schema, cols)
        schema = file_plan.ReadPlan(orc, selected, opts=opts, path=path).schema()
        if len(_SELECTIONS) >= 64:
            _SELECTIONS.clear()
        known = _SELECTIONS[key] = (orc.schema, selected, schema,
                                    requested_order(orc.schema, cols),
                                    file_plan.selected_pairs(orc.schema, selected), {})
    _, selected, schema, order, pairs, types = known
    batches = file_plan.decode_file(orc, tail.data, selected, opts, schema, path, pairs=pairs,
                                    types=types)
    table = pa.Table.from_batches(batches, schema=schema)
    return table if order is None else table.select(order)


#: What an unfiltered read of some columns selects in a type tree, by the tree (kept with
#: it: its id stays its own), the columns and the timestamp unit: the selected ids, the
#: batches' schema, the columns' order, the selected top-level fields and the columns' Arrow
#: types (filled as the files are decoded).
_SELECTIONS: dict[tuple[int, tuple[str, ...], str],
                  tuple[OrcType, set[int], pa.Schema, list[str] | None,
                        list[tuple[str, OrcType]], dict[int, pa.DataType]]] = {}


_Raw = tuple[DatasetFile, pa.Schema, pa.Table]
#: A file's read in its own schema: the columns wanted, those to read, the filter left and
#: whether any row can match.
_Request = tuple[pa.Schema, list[str], "Clauses | None", bool]
_T = TypeVar("_T")
#: The :class:`ScanStats` counts a scan of buffered bytes adds to the dataset's.
_SCAN_COUNTS = ("stripes_total", "stripes_pruned_by_stats", "row_groups_total",
                "row_groups_pruned_by_stats", "row_groups_pruned_by_bloom", "row_groups_read",
                "rows_read", "rows_returned")


class _Requests:
    """What a read asks of each file schema, worked out once per schema: the files of a
    dataset mostly share one (see :func:`aorc.dataset.discovery._opened`). Files with a filter
    left (after partition pruning) work it out each time."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[pa.Schema, Any]] = {}

    def get(self, schema: pa.Schema, clauses: Clauses | None,
            make: Callable[[pa.Schema, Clauses | None], _T]) -> _T:
        """``make(schema, clauses)``, kept for ``schema`` when ``clauses`` is None."""
        if clauses is not None:
            return make(schema, clauses)
        known = self._known.get(id(schema))
        if known is not None and known[0] is schema:
            found: _T = known[1]
            return found
        made = make(schema, None)
        if len(self._known) >= 64:
            self._known.clear()
        self._known[id(schema)] = (schema, made)  # the schema kept: its id stays its own
        return made


class _Counts:
    """A worker group's requests and scan counts, added to the dataset's once."""

    def __init__(self) -> None:
        self.io = IOStats()
        self.scan = ScanStats()

    def add_scan(self, s: ScanStats) -> None:
        mine = self.scan
        mine.stripes_total += s.stripes_total
        mine.stripes_pruned_by_stats += s.stripes_pruned_by_stats
        mine.row_groups_total += s.row_groups_total
        mine.row_groups_pruned_by_stats += s.row_groups_pruned_by_stats
        mine.row_groups_pruned_by_bloom += s.row_groups_pruned_by_bloom
        mine.row_groups_read += s.row_groups_read
        mine.rows_read += s.rows_read
        mine.rows_returned += s.rows_returned
