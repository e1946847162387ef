"""Reading Iceberg tables: pyiceberg plans, aorc reads.

A scan is planned by pyiceberg's manifest planner (manifest-list and partition pruning,
file pruning by column metrics) at the scan's snapshot; aorc then reads each data file with
its own pushdown -- stripes, row groups and bloom filters pruned by the filter translated to
the file's columns (:func:`aorc.iceberg.filters.file_pushdown`), only the surviving byte
ranges fetched -- maps the file's columns to the table's by field id
(:mod:`aorc.iceberg.project`; files without ids through the name mapping), applies the
delete files (:mod:`aorc.iceberg.deletes`) and the filter, exactly.

Delete files are matched to data files as the spec says: position deletes by partition (or
the file they name) with a sequence number at or after the data file's, equality deletes by
partition (or an unpartitioned spec) with a sequence number after it. A file with position
deletes is read without row filtering inside the file (the positions count every row), its
stripes still pruned by the partition and metrics planning.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa
from pyiceberg.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression
from pyiceberg.expressions.visitors import bind, extract_field_ids
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import expression_to_pyarrow
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestEntry
from pyiceberg.schema import Schema, index_by_id, prune_columns
from pyiceberg.table import DataScan, ManifestGroupPlanner, Table
from pyiceberg.table.delete_file_index import DeleteFileIndex
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import Record
from pyiceberg.types import ListType, MapType

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.iceberg import config
from aorc.iceberg.deletes import DeleteReader, apply_equality_deletes
from aorc.iceberg.filters import file_pushdown, iceberg_filter
from aorc.iceberg.project import project_batch
from aorc.iceberg.schema import field_ids, output_schema, timestamp_unit_for
from aorc.read.reader import ScanStats, open_reader

__all__ = ["DEFAULT_FILES_AT_ONCE", "FileTask", "IcebergScan", "iter_batches", "plan_tasks",
           "read_table", "scan_of"]

#: Data files read at once.
DEFAULT_FILES_AT_ONCE = 4
_INITIAL_SEQUENCE = 0


@dataclass(frozen=True)
class FileTask:
    """One data file to read and the delete files that apply to it."""

    file: DataFile
    sequence_number: int
    position_deletes: tuple[DataFile, ...] = ()
    equality_deletes: tuple[DataFile, ...] = ()


def plan_tasks(metadata: TableMetadata, io: FileIO, row_filter: BooleanExpression,
               snapshot_id: int | None, case_sensitive: bool = True) -> list[FileTask]:
    """The data files of a snapshot that may hold matching rows, with their delete files
    (synchronous: reads manifests through the FileIO)."""
    snapshot = (metadata.snapshot_by_id(snapshot_id) if snapshot_id is not None
                else metadata.current_snapshot())
    if snapshot_id is not None and snapshot is None:
        raise SchemaError(f"no snapshot {snapshot_id} in the table")
    if snapshot is None:
        return []
    planner = ManifestGroupPlanner(table_metadata=metadata, io=io, row_filter=row_filter,
                                   case_sensitive=case_sensitive)
    entries = list(chain.from_iterable(planner.plan_manifest_entries(snapshot.manifests(io))))
    data: list[ManifestEntry] = []
    positions = DeleteFileIndex()
    equality: list[ManifestEntry] = []
    for entry in entries:
        content = entry.data_file.content
        if content == DataFileContent.DATA:
            data.append(entry)
        elif content == DataFileContent.POSITION_DELETES:
            if entry.data_file.file_format == FileFormat.PUFFIN:
                raise UnsupportedFeatureError(
                    f"{entry.data_file.file_path}: deletion vectors are not supported")
            positions.add_delete_file(entry, partition_key=entry.data_file.partition)
        else:
            equality.append(entry)
    specs = metadata.specs()
    tasks = []
    for entry in data:
        f = entry.data_file
        seq = entry.sequence_number or _INITIAL_SEQUENCE
        pos = positions.for_data_file(seq, f, partition_key=f.partition)
        eq = [e.data_file for e in equality
              if (e.sequence_number or _INITIAL_SEQUENCE) > seq and (
                  specs[e.data_file.spec_id].is_unpartitioned()
                  or (e.data_file.spec_id == f.spec_id
                      and _same(e.data_file.partition, f.partition)))]
        tasks.append(FileTask(f, seq, tuple(sorted(pos, key=lambda d: d.file_path)),
                              tuple(eq)))
    return tasks


def _same(a: Record, b: Record) -> bool:
    return a == b


def scan_of(table_or_scan: Table | DataScan, *, columns: Sequence[str] | None, filters: Any,
            snapshot_id: int | None) -> DataScan:
    """The pyiceberg scan a read means: a table's, or a given scan narrowed further."""
    if isinstance(table_or_scan, Table):
        scan = table_or_scan.scan()
    elif isinstance(table_or_scan, DataScan):
        scan = table_or_scan
    else:
        raise SchemaError(f"expected a pyiceberg Table or DataScan, got "
                          f"{type(table_or_scan).__name__}")
    updates: dict[str, Any] = {}
    if filters is not None:
        updates["row_filter"] = scan.row_filter & iceberg_filter(filters) \
            if not isinstance(scan.row_filter, AlwaysTrue) else iceberg_filter(filters)
    if columns is not None:
        if isinstance(columns, str):
            raise SchemaError("columns must be a list of names, not a string")
        updates["selected_fields"] = tuple(columns)
    if snapshot_id is not None:
        if scan.table_metadata.snapshot_by_id(snapshot_id) is None:
            raise SchemaError(f"no snapshot {snapshot_id} in the table")
        updates["snapshot_id"] = snapshot_id
    return scan.update(**updates) if updates else scan


@dataclass
class IcebergScan:
    """One read of a table: the plan and what every file's read shares.

    Attributes:
        scan: the pyiceberg scan.
        storage_options: aorc's settings of the table's store.
        stats: what aorc's readers did (stripes and row groups pruned, requests, bytes).
        files_read: data files opened.
    """

    scan: DataScan
    storage_options: dict[str, Any]
    stats: ScanStats = field(default_factory=ScanStats)
    files_read: int = 0

    def __post_init__(self) -> None:
        metadata = self.scan.table_metadata
        self.table_schema = metadata.schema()
        try:  # pyiceberg says ValueError for columns the table lacks and literals that
            # do not fit their column: aorc's callers get its own SchemaError
            self.projected = self.scan.projection()
            self.bound = bind(self.table_schema, self.scan.row_filter,
                              self.scan.case_sensitive)
        except ValueError as exc:
            raise SchemaError(f"{exc} (the table's columns: "
                              f"{', '.join(self.table_schema.column_names)})") from exc
        filter_ids = extract_field_ids(self.bound)
        wanted = {f.field_id for f in self.projected.fields}
        self.read_schema = self.projected if filter_ids <= _all_ids(self.projected) else \
            _prune(self.table_schema, _all_ids(self.projected) | filter_ids)
        self.extra = [f.name for f in self.read_schema.fields if f.field_id not in wanted]
        self.mapping = metadata.name_mapping()
        self.unit = timestamp_unit_for(self.read_schema)
        self.deletes = DeleteReader(self.scan.io, self.table_schema, self.storage_options)
        self.output = output_schema(self.projected)

    async def plan(self) -> list[FileTask]:
        """The files to read (manifests are read in a worker thread)."""
        if isinstance(self.bound, AlwaysFalse):
            return []
        s = self.scan
        return await asyncio.to_thread(plan_tasks, s.table_metadata, s.io, s.row_filter,
                                       s.snapshot_id, s.case_sensitive)

    async def read_file(self, task: FileTask) -> AsyncIterator[pa.RecordBatch]:
        """The matching rows of one data file, in the scan's output schema."""
        if task.file.file_format != FileFormat.ORC:
            raise UnsupportedFeatureError(f"{task.file.file_path}: aorc.iceberg reads ORC "
                                          f"data files, this one is {task.file.file_format}")
        path = task.file.file_path
        schema = self._with_equality_columns(task)
        async with open_reader(config.store_path(path), storage_options=self.storage_options,
                               timestamp_unit=self.unit) as reader:
            self.files_read += 1
            root = reader.orc_schema
            ids = field_ids(root, self.mapping, path)
            by_id = ids.children(root)
            needed = _all_ids(schema) | extract_field_ids(self.bound)
            columns = [root.field_names[by_id[i][0]] for i in sorted(needed) if i in by_id]
            columns = list(dict.fromkeys(columns))
            if not columns and root.field_names:  # (rows are counted by some column)
                columns = [root.field_names[0]]
            deleted = (await self.deletes.positions(task.position_deletes, path)
                       if task.position_deletes else None)
            pushed = None if deleted is not None else file_pushdown(self.bound, root, ids)
            before = reader.scan_stats
            position = 0
            try:
                source = reader.iter_batches(columns=columns, filters=pushed)
            except SchemaError:  # (a literal the file's column cannot hold: no pushdown)
                source = reader.iter_batches(columns=columns)
            try:
                async for batch in source:
                    rows = project_batch(schema.as_struct(), batch, root, ids, path)
                    if deleted is not None:
                        rows, position = _drop_positions(rows, deleted, position)
                    table = await self._finish(pa.Table.from_batches([rows]), task, schema)
                    for out in table.to_batches():
                        yield out
            finally:
                self.stats = self.stats + (reader.scan_stats - before)

    def _with_equality_columns(self, task: FileTask) -> Schema:
        ids = {i for f in task.equality_deletes for i in (f.equality_ids or [])}
        if not ids or ids <= _all_ids(self.read_schema):
            return self.read_schema
        return _prune(self.table_schema, _all_ids(self.read_schema) | ids)

    async def _finish(self, table: pa.Table, task: FileTask, schema: Schema) -> pa.Table:
        """Equality deletes, the exact filter, then the output columns."""
        if task.equality_deletes:
            deletes = []
            for f in task.equality_deletes:
                rows = await self.deletes.equality(f)
                deletes.append((list(rows.column_names), rows))
            table = apply_equality_deletes(table, deletes)
        if not isinstance(self.bound, AlwaysTrue) and table.num_rows:
            table = table.filter(expression_to_pyarrow(self.bound, schema))
        table = table.select([f.name for f in self.projected.fields])
        return table.cast(self.output) if table.schema != self.output else table


def _prune(schema: Schema, ids: set[int]) -> Schema:
    """``schema`` with the fields of ``ids`` (and what holds them), as pyiceberg's reader
    projects a scan: a list or map is kept through the ids below it, never selected by its
    own (``prune_columns`` refuses that without ``select_full_types``, which would take whole
    structs of which one field was asked)."""
    by_id = index_by_id(schema)
    kept = {i for i in ids if not isinstance(by_id[i].field_type, ListType | MapType)}
    return prune_columns(schema, kept, select_full_types=False)


def _all_ids(schema: Schema) -> set[int]:
    """Every field id of a schema, nested ones included."""
    return set(index_by_id(schema))


def _drop_positions(rows: pa.RecordBatch, deleted: np.ndarray, start: int
                    ) -> tuple[pa.RecordBatch, int]:
    """``rows`` (file positions ``start`` on) without the deleted positions."""
    n = rows.num_rows
    lo, hi = np.searchsorted(deleted, [start, start + n])
    if hi > lo:
        keep = np.ones(n, dtype=bool)
        keep[deleted[lo:hi] - start] = False
        rows = rows.filter(pa.array(keep))
    return rows, start + n


async def _file_batches(scan: IcebergScan, tasks: list[FileTask], files_at_once: int
                        ) -> AsyncGenerator[pa.RecordBatch, None]:
    """Every file's batches in plan order; the next files are read ahead while one is
    consumed (each read ahead holds its whole result)."""
    semaphore = asyncio.Semaphore(max(1, files_at_once))

    async def whole(task: FileTask) -> list[pa.RecordBatch]:
        async with semaphore:
            return [b async for b in scan.read_file(task)]

    pending: list[asyncio.Task[list[pa.RecordBatch]]] = []
    try:
        index = 0
        while index < len(tasks) or pending:
            while index < len(tasks) and len(pending) < max(1, files_at_once):
                pending.append(asyncio.ensure_future(whole(tasks[index])))
                index += 1
            first = pending.pop(0)
            for batch in await first:
                yield batch
    finally:
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def _storage(scan: DataScan, storage_options: Mapping[str, Any] | None) -> dict[str, Any]:
    return config.storage_options(scan.table_metadata.location, scan.io.properties,
                                  storage_options)


async def read_table(table_or_scan: Table | DataScan, *, columns: Sequence[str] | None = None,
                     filters: Any = None, snapshot_id: int | None = None,
                     storage_options: Mapping[str, Any] | None = None,
                     files_at_once: int = DEFAULT_FILES_AT_ONCE) -> pa.Table:
    """Read an Iceberg table (or a pyiceberg scan of one) into an Arrow table.

    Args:
        table_or_scan: a pyiceberg ``Table``, or a ``DataScan`` (``table.scan(...)``) whose
            filter, fields and snapshot apply.
        columns: the columns to return (Iceberg names, dotted for nested fields); None: all.
        filters: rows to keep: a pyiceberg expression, its string form, or aorc's list form
            (``[("region", "==", "eu")]``), added to the scan's own filter.
        snapshot_id: read this snapshot (time travel) instead of the current one.
        storage_options: settings of the table's store (default: from its FileIO).
        files_at_once: data files read at once.

    Returns:
        The rows, with the schema pyiceberg's ``scan().to_arrow()`` gives.

    Raises:
        SchemaError: an unknown column, a bad filter, a file that cannot be read as the
            table's schema.
        UnsupportedFeatureError: Parquet or Avro data files, deletion vectors.
    """
    scan = IcebergScan(scan_of(table_or_scan, columns=columns, filters=filters,
                               snapshot_id=snapshot_id), {})
    scan.storage_options = _storage(scan.scan, storage_options)
    tasks = await scan.plan()
    batches = [b async for b in _file_batches(scan, tasks, files_at_once)]
    table = pa.Table.from_batches(batches, schema=scan.output)
    limit = scan.scan.limit
    return table.slice(0, limit) if limit is not None else table


async def iter_batches(table_or_scan: Table | DataScan, *,
                       columns: Sequence[str] | None = None, filters: Any = None,
                       snapshot_id: int | None = None,
                       storage_options: Mapping[str, Any] | None = None,
                       files_at_once: int = DEFAULT_FILES_AT_ONCE
                       ) -> AsyncIterator[pa.RecordBatch]:
    """Stream an Iceberg table's matching rows as record batches (arguments as
    :func:`read_table`), file by file in plan order, the next files read ahead.

    Args:
        table_or_scan: as for :func:`read_table`.
        columns: as for :func:`read_table`.
        filters: as for :func:`read_table`.
        snapshot_id: as for :func:`read_table`.
        storage_options: as for :func:`read_table`.
        files_at_once: as for :func:`read_table`.

    Returns:
        An async iterator of ``pyarrow.RecordBatch``.
    """
    scan = IcebergScan(scan_of(table_or_scan, columns=columns, filters=filters,
                               snapshot_id=snapshot_id), {})
    scan.storage_options = _storage(scan.scan, storage_options)
    tasks = await scan.plan()
    remaining = scan.scan.limit
    source = _file_batches(scan, tasks, files_at_once)
    async with contextlib.aclosing(source):
        async for batch in source:
            if remaining is not None:
                if remaining <= 0:
                    return
                batch = batch.slice(0, remaining)
                remaining -= batch.num_rows
            yield batch
