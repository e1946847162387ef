"""Datasets: a folder, an object-store prefix or a list of ORC files read as one table.

:func:`open_dataset` lists the source and types its Hive partition folders
(:mod:`aorc.dataset.discovery`), then unifies the files' schemas by name
(:mod:`aorc.dataset.evolution`); opening a file is its one tail read, kept for the reads that
follow. A read prunes partitions before any of their files is opened, pushes the data filters
down into every surviving file (stripes, row groups, bloom filters), reads at most
``max_open_files`` files at a time and brings every file's rows into the dataset's schema.

:func:`read_dataset` is the one-shot form: it reads the files that survive the partition
filter at once (small ones with one request each), and by default their schemas make the
data columns: no pruned file is opened. ``schema_from="all"`` also reads the tails of the
pruned files, for their schemas only, as Spark's ``mergeSchema`` takes every footer.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import pyarrow as pa

from aorc.dataset.discovery import (
    DatasetFile,
    DatasetOptions,
    DatasetSource,
    Layout,
    OpenedTail,
    TailCache,
    is_dataset_source,
    open_tail,
)
from aorc.dataset.evolution import (
    conform,
    merge_schemas,
    positional_names,
)
from aorc.dataset.local import (
    SmallFileReads,
    all_small_local,
    group_threads,
    run_groups,
)
from aorc.dataset.partitioning import Clauses
from aorc.dataset.plan import (
    FilePlan,
    ReadPlan,
    concat_files,
    dataset_filter,
    finish_runs,
    has_path,
    plan_columns,
    prune,
)
from aorc.errors import CorruptFileError, SchemaError
from aorc.io import IOStats, registry
from aorc.io.base import gather_or_cancel, map_bounded
from aorc.progress import ProgressHook, ProgressTracker, tracker
from aorc.read.dictionary import present_columns
from aorc.read.export import BatchStream, blocking_reader, export_stream, home_loop
from aorc.read.pushdown import ScanStats
from aorc.read.reader import OrcReader
from aorc.threads import pool_size

__all__ = [
    "Dataset",
    "DatasetFile",
    "DatasetSource",
    "is_dataset_source",
]

_DONE = object()
_T = TypeVar("_T")
_Plan = ReadPlan


class Dataset(SmallFileReads):
    """Many ORC files read as one table. Create it with :func:`open_dataset`.

    The names of :class:`pyarrow.dataset.Dataset` work too: :meth:`to_table`,
    :meth:`to_batches`, :meth:`head`, :meth:`count_rows`, :attr:`schema`, :attr:`files`
    and :attr:`partitioning` (they take ``filter=`` where aorc's own methods take
    ``filters=``; both accept either form: list-form filters or an expression).

    Attributes:
        files: the files (:class:`DatasetFile`: path, size, partition values; each is
            ``os.PathLike`` and prints as its path), sorted by path (invalid ones left out
            when ``exclude_invalid_files`` was given).
        partition_schema: the partition columns and their types.
    """

    def __init__(self, files: list[DatasetFile], partition_schema: pa.Schema,
                 data_schema: pa.Schema, options: DatasetOptions, io_stats: IOStats,
                 tails: TailCache | None = None, layout: Layout | None = None) -> None:
        self.files = files
        self.partition_schema = partition_schema
        self._layout = layout or Layout("hive")
        self._data_schema = data_schema
        self._options = options
        self._io = io_stats
        self._scan = ScanStats()
        self._skipped: set[str] = set()  # invalid files left out (warned about once)
        self._tails = tails if tails is not None else TailCache(options.tail_cache_bytes)
        self._rows: dict[str, int] = {}  # each opened file's row count (tails may be dropped)
        #: the full listing, when the files were listed for a partition filter
        self._full_listing: Callable[[], Awaitable[list[DatasetFile]]] | None = None
        self._semaphore = asyncio.Semaphore(options.max_open_files)
        self._loop = home_loop()  # the loop Arrow streams of this dataset pull on

    # ------------------------------------------------------------------ information
    @property
    def schema(self) -> pa.Schema:
        """The unified schema: the data columns, then the partition columns."""
        return pa.schema([*self._data_schema, *self.partition_schema])

    @property
    def num_rows(self) -> int | None:
        """Rows of all files, from their footers (``None`` when ``schema=`` was given and
        the files were not opened yet)."""
        if any(f.path not in self._rows for f in self.files):
            return None
        return sum(self._rows[f.path] for f in self.files)

    @property
    def partitioning(self) -> Any:
        """The partitioning as :mod:`pyarrow.dataset` describes it (a ``HivePartitioning``
        or ``DirectoryPartitioning`` with the partition columns' types), or ``None``."""
        return self._layout.arrow_partitioning(self.partition_schema)

    def files_matching(self, filters: Any = None) -> list[DatasetFile]:
        """The files a read with ``filters`` opens: those the partition terms leave.

        Args:
            filters: as for :meth:`read`; only its partition terms count here.

        Returns:
            The files left after partition pruning, in path order.

        Raises:
            SchemaError: malformed filters or unknown columns in them.
        """
        return [f for f, _ in self._plan([], filters).files]

    @property
    def tail_cache(self) -> TailCache:
        """The file tails kept for the reads that follow (within ``tail_cache_bytes``)."""
        return self._tails

    @property
    def io_stats(self) -> IOStats:
        """Requests and bytes of the listing and of every file read so far."""
        return self._io

    @property
    def scan_stats(self) -> ScanStats:
        """What the reads skipped and read, summed over the files; its ``requests`` and
        ``bytes`` are :attr:`io_stats`' (the listing, the tails and every read so far)."""
        self._scan.requests, self._scan.bytes = self._io.requests, self._io.bytes
        return self._scan

    # ------------------------------------------------------------------ reading
    async def read(self, columns: Sequence[str] | None = None,
                   filters: Any = None, *, progress: ProgressHook | None = None) -> pa.Table:
        """Read the matching rows of every file into one table.

        Args:
            columns: top-level column names (data or partition columns); ``None``: all.
            filters: as for :meth:`aorc.OrcReader.iter_batches` (list-form filters or a
                :class:`pyarrow.compute.Expression`), on data and partition columns;
                partition terms prune files before they are opened. A column missing from
                a file reads as nulls there.
            progress: a hook told of each file read (unit ``"files"``; the total is the
                files left after partition pruning): a callable taking an
                :class:`aorc.ProgressEvent` or a tqdm-like bar (see :mod:`aorc.progress`).

        Returns:
            The matching rows of ``columns``, files in path order, in the dataset's schema
            (partition columns after the data columns).

        Raises:
            SchemaError: unknown columns, malformed filters, incompatible file schemas.
            CorruptFileError: a file is not ORC or is damaged (the message names it).
        """
        plan = self._plan(columns, filters)
        counter = tracker(progress, "read_dataset", "files", len(plan.files))
        if self._options.keys is None and all_small_local([f for f, _ in plan.files]):
            tables = await self._read_local(plan, counter)
        else:
            threads = self._file_threads(len(plan.files))
            tables = await gather_or_cancel(
                [_counted(self._read_file(f, clauses, plan, threads), counter)
                 for f, clauses in plan.files])
        return concat_files(tables, plan.out_schema)

    def iter_batches(self, columns: Sequence[str] | None = None, filters: Any = None,
                     batch_size: int = 65536) -> BatchStream:
        """Stream the matching rows as record batches, file by file in path order.

        At most ``max_open_files`` files are read ahead, each holding at most two decoded
        batches, so a dataset larger than memory streams. Close the iterator (e.g. with
        ``contextlib.aclosing``) to stop early; that cancels the reads under way. The
        iterator is also an Arrow C stream (``__arrow_c_stream__``): DuckDB, Polars and
        pyarrow can stream it from another thread (see :mod:`aorc.read.export`).

        Args:
            columns: as for :meth:`read`.
            filters: as for :meth:`read`.
            batch_size: the largest number of rows per batch.

        Returns:
            An async iterator of :class:`pyarrow.RecordBatch` (and an Arrow C stream); the
            files are read as it is iterated.

        Raises:
            SchemaError: ``batch_size`` is not a positive integer, unknown columns or
                malformed filters; while iterating, as :meth:`read`.
        """
        if not isinstance(batch_size, int) or batch_size < 1:
            raise SchemaError(f"batch_size must be a positive integer, got {batch_size!r}")
        plan = self._plan(columns, filters)
        return BatchStream(self._stream(plan, batch_size), plan.out_schema, self._loop,
                           "the dataset")

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """Every row as an Arrow C stream (the Arrow PyCapsule interface: DuckDB, Polars,
        pyarrow), read when the consumer pulls; each call is a read of its own. For some
        columns or rows, export ``dataset.iter_batches(columns, filters)``. Pulls run on the
        dataset's event loop (see :mod:`aorc.read.export`).

        Raises:
            AorcError: called from a coroutine of the dataset's own event loop (a deadlock:
                use :mod:`aorc.sync` or a worker thread), or that loop is not running.
            SchemaError: a requested schema the rows cannot be cast to.
        """
        return export_stream(blocking_reader(self.schema, self.iter_batches, self._loop,
                                             "the dataset"), requested_schema)

    async def count_rows(self, filters: Any = None, *, filter: Any = None) -> int:  # noqa: A002
        """The number of matching rows: from the file footers where no data filter is left
        for a file, else by a filtered read of the filter's columns only.

        Args:
            filters: as for :meth:`read`.
            filter: the same, by :mod:`pyarrow.dataset`'s name (give one of the two).

        Returns:
            The number of rows the filter leaves (every row without one).

        Raises:
            SchemaError: both ``filters`` and ``filter`` given, or as :meth:`read`.
        """
        plan = self._plan([], _one_filter(filters, filter))

        async def count(f: DatasetFile, clauses: Clauses | None) -> int:
            if clauses is None and plan.expression is None:
                async with self._semaphore:
                    rows: int = (await self._tail(f)).tail.num_rows
                    return rows
            table = await self._read_file(f, clauses, plan)
            return int(table.num_rows)

        return sum(await gather_or_cancel([count(f, c) for f, c in plan.files]))

    # ------------------------------------------------------------------ pyarrow's names
    async def to_table(self, columns: Sequence[str] | None = None,
                       filter: Any = None) -> pa.Table:  # noqa: A002
        """:meth:`read` by :meth:`pyarrow.dataset.Dataset.to_table`'s name: the matching
        rows (``filter``: list-form filters or an expression) of ``columns``.

        Args:
            columns: as for :meth:`read`.
            filter: as ``filters`` for :meth:`read`.

        Returns:
            The matching rows, as :meth:`read` returns them.

        Raises:
            SchemaError: as for :meth:`read`.
            CorruptFileError: as for :meth:`read`.
        """
        return await self.read(columns, filter)

    def to_batches(self, columns: Sequence[str] | None = None, filter: Any = None,  # noqa: A002
                   batch_size: int = 65536) -> BatchStream:
        """:meth:`iter_batches` by :meth:`pyarrow.dataset.Dataset.to_batches`'s name (an
        async iterator here: ``async for batch in dataset.to_batches(): ...``).

        Args:
            columns: as for :meth:`read`.
            filter: as ``filters`` for :meth:`read`.
            batch_size: the largest number of rows per batch.

        Returns:
            The batch stream :meth:`iter_batches` returns.

        Raises:
            SchemaError: as for :meth:`iter_batches`.
        """
        return self.iter_batches(columns, filter, batch_size=batch_size)

    async def head(self, num_rows: int, columns: Sequence[str] | None = None,
                   filter: Any = None) -> pa.Table:  # noqa: A002
        """The first ``num_rows`` matching rows (files in path order), as
        :meth:`pyarrow.dataset.Dataset.head`; reading stops once they are found.

        Args:
            num_rows: how many rows to return at most.
            columns: as for :meth:`read`.
            filter: as ``filters`` for :meth:`read`.

        Returns:
            At most ``num_rows`` matching rows (fewer when the dataset has fewer), in the
            schema :meth:`read` returns.

        Raises:
            SchemaError: ``num_rows`` is not a non-negative integer, or as :meth:`read`.
        """
        if isinstance(num_rows, bool) or not isinstance(num_rows, int) or num_rows < 0:
            raise SchemaError(f"num_rows must be a non-negative integer, got {num_rows!r}")
        plan = self._plan(columns, filter)
        batches: list[pa.RecordBatch] = []
        left = num_rows
        if left:
            source = self._stream(plan, min(left, 65536))
            async with contextlib.aclosing(source) as stream:
                async for batch in stream:
                    batches.append(batch.slice(0, left))
                    left -= batches[-1].num_rows
                    if not left:
                        break
        return pa.Table.from_batches(batches, schema=plan.out_schema)

    async def read_unresolved(self, columns: Sequence[str] | None, filters: Any,
                              schema_from: str = "read", *,
                              progress: ProgressHook | None = None) -> pa.Table:
        """One-shot read of a dataset whose schema is not known yet: each file that
        survives the partition filter is opened and read at once (small files with one
        request), then the schemas are unified and every file's rows conformed. With
        ``schema_from="all"`` the schemas of the pruned files count too (their tails are
        read at the same time, never their data); with ``"read"`` they are read afterwards
        only when a column that ``columns`` or ``filters`` name is in no file read, so
        that such a column reads as nulls whichever files the filter leaves.

        Args:
            columns: as for :meth:`read`.
            filters: as for :meth:`read`.
            schema_from: ``"read"`` or ``"all"``, as above.
            progress: as for :meth:`read`.

        Returns:
            The matching rows, in the unified schema (as :meth:`read` returns them); the
            dataset's files and schema are resolved afterwards.

        Raises:
            SchemaError: no valid file to infer a schema from, incompatible file schemas,
                unknown columns or malformed filters.
            CorruptFileError: a file is not ORC or is damaged (unless invalid files are
                excluded).
        """
        where = dataset_filter(filters)
        survivors = (prune(self.files, self.partition_schema, where.clauses) if where.clauses
                     else [(f, None) for f in self.files])
        if not survivors:
            self.files += await self._unlisted()
            await self._resolve_schema(self.files)
            return await self.read(columns, filters, progress=progress)
        counter = tracker(progress, "read_dataset", "files", len(survivors))
        kept = {f.path for f, _ in survivors}
        pruned = [f for f in self.files if f.path not in kept]
        wanted = None if columns is None else {*columns, *where.names}
        threads = self._file_threads(len(survivors))
        # at most max_open_files tasks each, not one per file (100,000 files: 100,000 tasks)
        limit = self._options.max_open_files
        schemas_of = pruned if schema_from == "all" else []
        if self._options.keys is None and all_small_local([f for f, _ in survivors]):
            results: list[Any] = [*await self._raw_local(survivors, wanted, counter),
                                  *await map_bounded(schemas_of, self._schema_only, limit)]
        else:
            reads = map_bounded(survivors, lambda s: _counted(
                self._read_raw(s[0], s[1], wanted, threads), counter), limit)
            got: list[list[Any]] = await gather_or_cancel(
                [reads, map_bounded(schemas_of, self._schema_only, limit)])
            results = [*got[0], *got[1]]
        found = [r for r in results[:len(survivors)] if r is not None]
        if not found:
            raise SchemaError("the dataset has no valid files to infer a schema from; pass "
                              "schema=")
        schemas = ([(f.path, schema) for f, schema, _ in found]
                   + [r for r in results[len(survivors):] if r is not None])
        self._data_schema = self._merged_data(schemas)
        known = {*self._data_schema.names, *self.partition_schema.names}
        if schema_from == "read" and not set(wanted or where.names) <= known:
            pruned += await self._unlisted()
            extra = await gather_or_cancel([self._schema_only(f) for f in pruned])
            self._data_schema = self._merged_data(schemas + [r for r in extra if r is not None])
        self.files = [f for f, _, _ in found]
        plan = self._plan(columns, filters)
        parts = [n for n in plan.row_schema.names if n in self.partition_schema.names]
        tables = finish_runs(found, parts, lambda t, f: self._finish(t, f, {}, plan))
        return concat_files(tables, plan.out_schema)

    async def _unlisted(self) -> list[DatasetFile]:
        """The files a listing for a partition filter left out (their partitions cannot
        match), listed now; none when everything was listed."""
        if self._full_listing is None:
            return []
        every, self._full_listing = await self._full_listing(), None
        known = {f.path for f in self.files}
        return [f for f in every if f.path not in known]

    def _merged_data(self, schemas: Iterable[tuple[str, pa.Schema]]) -> pa.Schema:
        """The files' schemas unified, without the partition columns."""
        merged = merge_schemas(schemas)
        return pa.schema([f for f in merged if f.name not in self.partition_schema.names])

    async def _resolve_schema(self, files: list[DatasetFile], schema_from: str = "all"
                              ) -> list[DatasetFile]:
        """Open ``files`` (``schema_from="first"``: the first that opens, else all; their
        tails are kept within the budget) and unify their schemas into the dataset's;
        returns the files that opened (all of them unless invalid files are excluded:
        with ``"first"`` the files before the first valid one are left out)."""

        async def one(f: DatasetFile) -> pa.Schema | None:
            async with self._semaphore:
                tail = await self._unless_invalid(f, self._tail(f))
            return None if tail is None else tail.schema

        if schema_from == "first":
            for i, f in enumerate(files):
                if (first := await one(f)) is not None:
                    self._data_schema = self._merged_data([(f.path, first)])
                    return files[i:]
            raise SchemaError("the dataset has no files to infer a schema from; pass schema=")
        # Each file's schema only (files of one schema share it), merged once per distinct
        # schema; at most max_open_files tails in flight, not a task per file.
        if self._options.keys is None and all_small_local(files):
            opened = await run_groups(files, self._local_schemas,
                                      threads=group_threads(files))
        else:
            opened = await map_bounded(files, one, self._options.max_open_files)
        if all(s is None for s in opened):
            raise SchemaError("the dataset has no files to infer a schema from; pass schema=")
        self._data_schema = self._merged_data(
            (f.path, s) for f, s in zip(files, opened, strict=True) if s is not None)
        if all(s is not None for s in opened):
            return files
        return [f for f, s in zip(files, opened, strict=True) if s is not None]

    async def _read_raw(self, f: DatasetFile, clauses: Clauses | None,
                        columns: set[str] | None, threads: bool | int = True
                        ) -> tuple[DatasetFile, pa.Schema, pa.Table] | None:
        """A file's schema and matching rows in its own schema (``None``: an invalid
        file left out)."""
        async with self._semaphore:
            tail = await self._unless_invalid(
                f, open_tail(f.path, self._options, self._io, f.size))
            if tail is None:
                return None
            reader = self._file_reader(f, tail)
            try:
                wanted = pa.schema([x for x in tail.schema
                                    if columns is None or x.name in columns])
                fake = _Plan([], wanted, wanted, wanted)
                cols, filt, possible, _ = self._file_request(tail.schema, clauses, fake)
                if not possible:
                    return f, tail.schema, wanted.empty_table()
                before = reader.io_stats.snapshot()
                table = await self._read_rows(reader, cols, filt, threads)
                self._count(reader, before)
            finally:
                await reader.close()
        return f, tail.schema, table

    async def _schema_only(self, f: DatasetFile) -> tuple[str, pa.Schema] | None:
        """A file's schema from its tail alone (``None``: an invalid file left out)."""
        async with self._semaphore:
            tail = await self._unless_invalid(
                f, open_tail(f.path, self._options, self._io, listed=f.size))
        return None if tail is None else (f.path, tail.schema)

    # ------------------------------------------------------------------ planning
    def _plan(self, columns: Sequence[str] | None, filters: Any) -> _Plan:
        where = dataset_filter(filters)
        for name in self._options.read_dictionary or ():
            if name.split(".")[0] not in self._data_schema.names:
                raise SchemaError(f"read_dictionary: no data column {name!r} in the dataset "
                                  f"(data columns: {', '.join(self._data_schema.names)})")
        data, rows, out = plan_columns(self.schema, self.partition_schema.names, columns,
                                       where)
        files: list[FilePlan] = (prune(self.files, self.partition_schema, where.clauses)
                                 if where.clauses is not None
                                 else [(f, None) for f in self.files])
        return _Plan(files, data, rows, out, where.expression)

    # ------------------------------------------------------------------ one file
    async def _tail(self, f: DatasetFile) -> OpenedTail:
        cached = self._tails.get(f.path)
        if cached is None:
            cached = await open_tail(f.path, self._options, self._io, listed=f.size)
            self._keep(f, cached)
        return cached

    def _keep(self, f: DatasetFile, tail: OpenedTail, *, evict: bool = True) -> None:
        self._tails.put(f.path, tail, evict=evict)
        self._rows[f.path] = tail.tail.num_rows

    async def _reader(self, f: DatasetFile) -> tuple[OrcReader, pa.Schema]:
        tail = await self._tail(f)
        return self._file_reader(f, tail), tail.schema

    def _file_reader(self, f: DatasetFile, tail: OpenedTail) -> OrcReader:
        """A reader of ``f`` on its opened tail, every request pinned to the version the
        tail came from (a file replaced since fails with ObjectChangedError)."""
        store = registry.open_input(f.path, tail.storage_options(self._options.storage_options))
        dictionary = present_columns(tail.tail.schema, self._options.read_dictionary)
        return OrcReader(store, tail.tail, tail.data, owns_store=True,
                         max_decoded_bytes=self._options.max_decoded_bytes,
                         timestamp_unit=self._options.timestamp_unit,
                         read_dictionary=dictionary or None,
                         use_writer_timezone=self._options.use_writer_timezone)

    def _file_request(self, file_schema: pa.Schema, clauses: Clauses | None, plan: _Plan
                      ) -> tuple[list[str], Clauses | None, bool, dict[str, str]]:
        """The file's columns to read, its filter (in its own names), whether any row can
        match, and the renaming from the file's names to the dataset's (only the names that
        differ: most often none)."""
        given = self._options.given_schema
        renamed = (positional_names(file_schema, given,
                                    self._options.schema_mapping == "position")
                   if given is not None else file_schema)
        to_file = dict(zip(renamed.names, file_schema.names, strict=True))
        cols = [to_file[n] for n in plan.data_schema.names if n in to_file]
        to_dataset = {v: k for k, v in to_file.items() if k != v}
        if clauses is None:
            return cols, None, True, to_dataset
        left: Clauses = []
        for conj in clauses:
            kept = []
            possible = True
            for name, op, value in conj:
                top, _, rest = name.partition(".")
                if top not in to_file or (rest and not has_path(renamed.field(top), rest)):
                    if op == "is null":
                        continue  # a missing column is all nulls
                    possible = False
                    break
                kept.append((to_file[top] + (f".{rest}" if rest else ""), op, value))
            if not possible:
                continue
            if not kept:
                return cols, None, True, to_dataset
            left.append(kept)
        return cols, left or None, bool(left), to_dataset

    async def _valid_reader(self, f: DatasetFile) -> tuple[OrcReader, pa.Schema] | None:
        """A reader of ``f``; ``None`` for an invalid file when invalid files are excluded."""
        return await self._unless_invalid(f, self._reader(f))

    async def _unless_invalid(self, f: DatasetFile, opening: Awaitable[_T]) -> _T | None:
        """``await opening``; ``None`` instead of a :class:`CorruptFileError` (a file that
        is not ORC) when invalid files are excluded (the file warned about and counted)."""
        try:
            return await opening
        except CorruptFileError as exc:
            self._skip_invalid(f.path, exc)
            return None

    async def _read_file(self, f: DatasetFile, clauses: Clauses | None,
                         plan: _Plan, threads: bool | int = True) -> pa.Table:
        async with self._semaphore:
            opened = await self._valid_reader(f)
            if opened is None:
                return plan.out_schema.empty_table()
            reader, file_schema = opened
            try:
                cols, filt, possible, names = self._file_request(file_schema, clauses, plan)
                if not possible:
                    return plan.out_schema.empty_table()
                before = reader.io_stats.snapshot()
                table = await self._read_rows(reader, cols, filt, threads)
                self._count(reader, before)
            finally:
                await reader.close()
        return self._finish(table, f, names, plan)

    def _file_threads(self, files: int) -> bool | int:
        """Threads each file's decoding may use: one when at least as many files are read
        at once as the pool has threads (the files keep every thread busy; a file's columns
        decoded on several threads would only add hand-overs between the event loop and
        the pool, which for small files cost more than their decoding), else all."""
        return 1 if min(files, self._options.max_open_files) >= pool_size() else True

    @staticmethod
    async def _read_rows(reader: OrcReader, cols: list[str], filt: Clauses | None,
                         threads: bool | int = True) -> pa.Table:
        """The file's rows; with no column to read, a table of no columns and as many
        rows (from the footer, or from the filter's first column)."""
        if cols:
            return await reader.read(cols, filters=filt, use_threads=threads)
        if filt is None:
            return pa.table({"n": pa.nulls(reader.num_rows)}).select([])
        first = filt[0][0][0].split(".")[0]
        return (await reader.read([first], filters=filt, use_threads=threads)).select([])

    def _finish(self, table: pa.Table, f: DatasetFile, names: dict[str, str],
                plan: _Plan) -> pa.Table:
        if names:
            table = table.rename_columns([names.get(n, n) for n in table.column_names])
        data = (table if table.schema.equals(plan.data_schema, check_metadata=True)
                else conform(table, plan.data_schema, f.path))
        if not len(plan.row_schema):
            return data
        if len(plan.row_schema) == len(plan.data_schema):
            # the row schema less its partition columns is the data schema (plan_columns):
            # no partition column to add, the rows are the data
            return plan.finish(data)
        columns = []
        for field_ in plan.row_schema:
            if field_.name in self.partition_schema.names:
                value = f.partition.get(field_.name)
                columns.append(pa.repeat(pa.scalar(value, field_.type), data.num_rows))
            else:
                columns.append(data.column(field_.name))
        return plan.finish(pa.Table.from_arrays(columns, schema=plan.row_schema))

    def _count(self, reader: OrcReader, before: IOStats) -> None:
        io = reader.io_stats - before
        self._io.requests += io.requests
        self._io.bytes += io.bytes
        self._io.retries += io.retries
        self._io.unranged += io.unranged
        s = reader.scan_stats
        for name in ("stripes_total", "stripes_pruned_by_stats", "row_groups_total",
                     "row_groups_pruned_by_stats", "row_groups_pruned_by_bloom",
                     "row_groups_read", "rows_read", "rows_returned"):
            setattr(self._scan, name, getattr(self._scan, name) + getattr(s, name))

    # ------------------------------------------------------------------ streaming
    async def _produce(self, f: DatasetFile, clauses: Clauses | None, plan: _Plan,
                       batch_size: int, queue: asyncio.Queue[Any]) -> None:
        try:
            async with self._semaphore:
                opened = await self._valid_reader(f)
                if opened is None:
                    await queue.put(_DONE)
                    return
                reader, file_schema = opened
                try:
                    cols, filt, possible, names = self._file_request(file_schema, clauses,
                                                                     plan)
                    before = reader.io_stats.snapshot()
                    if possible and not cols:
                        table = await self._read_rows(reader, cols, filt)
                        for out in self._finish(table, f, names, plan).to_batches(batch_size):
                            await queue.put(out)
                    elif possible:
                        async for batch in reader.iter_batches(cols, batch_size, filt):
                            table = self._finish(pa.Table.from_batches([batch]), f, names,
                                                 plan)
                            for out in table.to_batches():
                                await queue.put(out)
                    self._count(reader, before)
                finally:
                    await reader.close()
            await queue.put(_DONE)
        except Exception as exc:  # noqa: BLE001 - handed to the consumer, which raises it
            await queue.put(exc)

    async def _stream(self, plan: _Plan, batch_size: int
                      ) -> AsyncGenerator[pa.RecordBatch, None]:
        pending = iter(plan.files)
        active: collections.deque[tuple[asyncio.Task[None], asyncio.Queue[Any]]] = \
            collections.deque()

        def start_next() -> None:
            item = next(pending, None)
            if item is not None:
                queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=2)
                task = asyncio.create_task(self._produce(item[0], item[1], plan, batch_size,
                                                         queue))
                active.append((task, queue))

        for _ in range(self._options.max_open_files):
            start_next()
        try:
            while active:
                task, queue = active[0]
                while (item := await queue.get()) is not _DONE:
                    if isinstance(item, BaseException):
                        raise item
                    yield item
                active.popleft()
                await task
                start_next()
        finally:
            for task, _ in active:
                task.cancel()
            await asyncio.gather(*(t for t, _ in active), return_exceptions=True)


# =========================================================================== opening

async def _counted(work: Awaitable[_T], counter: ProgressTracker | None) -> _T:
    """``work``'s result, counting one file done once it is."""
    result = await work
    if counter is not None:
        counter.advance(1)
    return result


def _one_filter(filters: Any, filter_: Any) -> Any:
    """``filters=`` or pyarrow's ``filter=``, whichever was given."""
    if filters is not None and filter_ is not None:
        raise SchemaError("give filters= or filter= (pyarrow.dataset's name), not both")
    return filter_ if filters is None else filters
