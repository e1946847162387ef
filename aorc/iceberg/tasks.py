"""Iceberg scans split into a distributed engine's tasks: pyiceberg plans, each task reads.

The engine front ends (:mod:`aorc.ray`, :mod:`aorc.dask`, :mod:`aorc.daft`) take a pyiceberg
``Table`` (or ``DataScan``) as ``source``. :func:`plan_iceberg` plans the scan on the driver as
:func:`aorc.iceberg.read_table` does (manifest, partition and metrics pruning, the delete
files of each data file) and keeps the scan without its catalog (which does not pickle);
:func:`read_iceberg_tasks` is a task's body: it reads some of the planned data files with
aorc's reader (stripes and row groups pruned, by field id, deletes applied, the filter
exact), in a new event loop of the worker. A task reads whole data files: position deletes
count a file's rows from its start.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.table import DataScan

from aorc.dataset.splits import check_projection
from aorc.errors import SchemaError
from aorc.iceberg import config
from aorc.iceberg.read import FileTask, IcebergScan, scan_of

__all__ = ["IcebergPlan", "pack_file_tasks", "plan_iceberg",
           "read_iceberg_file", "read_iceberg_table", "read_iceberg_tasks"]

#: What opening a data file costs when tasks are packed, in bytes (as
#: :data:`aorc.dataset.splits.OPEN_COST_BYTES`).
_OPEN_COST = 4 * 1024 * 1024


@dataclass(frozen=True)
class IcebergPlan:
    """A planned Iceberg read: the data files and how each task's rows are shaped.

    Attributes:
        scan: the pyiceberg scan (without its catalog: it pickles to the tasks).
        storage_options: aorc's settings of the table's store (secrets: never in the
            ``repr``).
        tasks: the data files to read, with their delete files.
        schema: the rows returned: the columns asked for, in that order.
        columns: the columns asked for (``None``: all, in the table's order; ``()``:
            none, the rows counted).
    """

    scan: DataScan
    storage_options: Mapping[str, Any] = dataclasses.field(repr=False)
    tasks: list[FileTask]
    schema: pa.Schema
    columns: tuple[str, ...] | None = None

    @property
    def num_rows(self) -> int | None:
        """The rows of the data files when no filter and no delete file applies."""
        if not isinstance(self.scan.row_filter, AlwaysTrue) or any(
                t.position_deletes or t.equality_deletes for t in self.tasks):
            return None
        return sum(int(t.file.record_count) for t in self.tasks)

    @property
    def nbytes(self) -> int:
        """The stored bytes of the data files."""
        return sum(int(t.file.file_size_in_bytes) for t in self.tasks)

    def project(self, columns: Sequence[str]) -> IcebergPlan:
        """This plan returning only ``columns`` (of :attr:`schema`), in that order (an
        engine's projection; ``[]``: no column, the rows counted).

        Raises:
            SchemaError: a column not in :attr:`schema`.
        """
        check_projection(self.schema, columns)
        # (no column: the first one is read for the row count, then dropped)
        read = tuple(columns) or tuple(self.schema.names[:1])
        scan = self.scan.update(selected_fields=read)
        schema = pa.schema([self.schema.field(c) for c in columns])
        return dataclasses.replace(self, scan=scan, schema=schema, columns=tuple(columns))


async def plan_iceberg(source: Any, columns: Sequence[str] | None = None, filters: Any = None,
                       *, storage_options: Mapping[str, Any] | None = None,
                       snapshot_id: int | None = None) -> IcebergPlan:
    """Plan a read of an Iceberg table's ORC data files (manifests read in a thread).

    Args:
        source: a pyiceberg ``Table`` or ``DataScan``.
        columns: columns to return, in this order (default all; ``[]``: none, rows kept).
        filters: a pyiceberg expression, its string form or aorc's list form (as
            :func:`aorc.iceberg.read_table`).
        storage_options: settings of the table's store (default: from its FileIO).
        snapshot_id: read this snapshot instead of the current one.

    Returns:
        The plan.

    Raises:
        SchemaError: an unknown column, a bad filter.
    """
    scan = scan_of(source, columns=None, filters=filters, snapshot_id=snapshot_id)
    scan = scan.update(catalog=None)
    store = config.storage_options(scan.table_metadata.location, scan.io.properties,
                                   storage_options)
    planned = IcebergScan(scan, store)
    tasks = await planned.plan()
    plan = IcebergPlan(scan, planned.storage_options, tasks, planned.output)
    if columns is not None:
        if isinstance(columns, str):
            raise SchemaError("columns must be a list of names, not a string")
        plan = plan.project(list(columns))
    return plan


def pack_file_tasks(plan: IcebergPlan, cores: int, max_bytes: int) -> list[list[FileTask]]:
    """The data files of each engine task: consecutive files share a task up to
    ``min(max_bytes, max(open cost, total / cores))`` bytes (as
    :func:`aorc.dataset.splits.pack_splits`).

    Args:
        plan: the plan.
        cores: the engine's cores.
        max_bytes: the most bytes a task holds (a larger file is a task alone).

    Returns:
        The tasks, each a non-empty list of data files (none for no files).
    """
    sizes = [int(t.file.file_size_in_bytes) for t in plan.tasks]
    total = sum(s + _OPEN_COST for s in sizes)
    target = min(max_bytes, max(_OPEN_COST, total // max(1, cores or os.cpu_count() or 1)))
    packs: list[list[FileTask]] = []
    size = 0
    for task, nbytes in zip(plan.tasks, sizes, strict=True):
        if not packs or size + nbytes > target:
            packs.append([])
            size = 0
        packs[-1].append(task)
        size += nbytes + _OPEN_COST
    return packs


async def read_iceberg_file(plan: IcebergPlan, task: FileTask
                            ) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of one of the plan's data files, batch by batch, in
    :attr:`IcebergPlan.schema` (an async engine task's body).

    Args:
        plan: the plan.
        task: the data file (of ``plan.tasks``).

    Yields:
        Record batches of the file's rows left once deletes and the filter apply.
    """
    scan = IcebergScan(plan.scan, dict(plan.storage_options))
    async for batch in scan.read_file(task):
        yield _shaped(plan, batch)


def _shaped(plan: IcebergPlan, batch: pa.RecordBatch) -> pa.RecordBatch:
    """A batch of the scan's output in the plan's columns, order and types."""
    if plan.columns is not None:
        if not plan.columns:
            return pa.RecordBatch.from_pydict({"n": pa.nulls(batch.num_rows)}).select([])
        batch = batch.select(list(plan.columns))
    return batch.cast(plan.schema) if batch.schema != plan.schema else batch


async def read_iceberg_table(plan: IcebergPlan, tasks: Sequence[FileTask],
                             limit: int | None = None) -> pa.Table:
    """The rows of some of the plan's data files in :attr:`IcebergPlan.schema`, on the
    caller's event loop (an engine worker runs it on a loop it keeps).

    Args:
        plan: the plan.
        tasks: the data files to read (of ``plan.tasks``).
        limit: stop once this many rows have come (``None``: all).

    Returns:
        The rows.
    """
    batches: list[pa.RecordBatch] = []
    rows = 0
    for task in tasks:
        if limit is not None and rows >= limit:
            break
        async with contextlib.aclosing(read_iceberg_file(plan, task)) as source:
            async for batch in source:
                batches.append(batch)
                rows += batch.num_rows
                if limit is not None and rows >= limit:
                    break
    if not len(plan.schema):
        return pa.table({"n": pa.nulls(rows)}).select([])
    table = pa.Table.from_batches(batches, schema=plan.schema)
    return table.slice(0, limit) if limit is not None else table


def read_iceberg_tasks(plan: IcebergPlan, tasks: Sequence[FileTask],
                       limit: int | None = None) -> pa.Table:
    """:func:`read_iceberg_table` in a new event loop (a synchronous caller without a loop
    of its own).

    Args:
        plan, tasks, limit: as for :func:`read_iceberg_table`.

    Returns:
        The rows.
    """
    return asyncio.run(read_iceberg_table(plan, tasks, limit))
