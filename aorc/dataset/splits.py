"""Splitting a dataset read into tasks for distributed engines, from the file tails only.

The engine front ends (:mod:`aorc.ray`, :mod:`aorc.dask`, :mod:`aorc.daft`) and
:mod:`aorc.spark` plan the same way: :func:`plan_splits` opens the dataset
(:func:`aorc.open_dataset`: listing, Hive partitions, schema evolution), prunes files by
their partition values, prunes stripes by their statistics and groups the remaining
consecutive stripes of each file into :class:`Split` s of about ``split_bytes`` stored bytes.
Only file tails are read while planning; a pruned file or stripe never becomes a split.
:func:`read_split` is a task's body: it reads one split with aorc's async reader (ranged,
coalesced, pinned to the planned version of the file) and returns its rows in the
dataset's schema, columns in the order asked, partition columns filled in.
:func:`balance_splits` and :func:`pack_splits` size the tasks.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from aorc.dataset.discovery import DatasetFile
from aorc.dataset.entry import open_dataset
from aorc.dataset.evolution import conform
from aorc.dataset.plan import DatasetFilter, dataset_filter, plan_columns, prune
from aorc.dataset.read import Dataset
from aorc.errors import SchemaError
from aorc.format.types import parse_type_string
from aorc.io import registry
from aorc.keys import KeyProvider
from aorc.read.common import group_stripes
from aorc.read.reader import OrcReader, open_reader

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "OPEN_COST_BYTES",
    "Split",
    "SplitPlan",
    "balance_splits",
    "check_projection",
    "is_iceberg_source",
    "pack_splits",
    "plan_splits",
    "read_split",
    "read_split_table",
    "read_splits",
    "stripe_groups",
]

#: Stripes of one file are grouped into splits of about this many (compressed) bytes.
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024
#: What opening a split costs, counted in bytes when splits are packed into tasks (Spark's
#: ``spark.sql.files.openCostInBytes``).
OPEN_COST_BYTES = 4 * 1024 * 1024


def check_projection(schema: pa.Schema, columns: Sequence[str]) -> None:
    """Refuse an engine's projection naming columns ``schema`` lacks.

    Args:
        schema: the read's schema.
        columns: the columns asked for.

    Raises:
        SchemaError: naming the missing columns and the schema's.
    """
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise SchemaError(f"no columns {missing} in the read (columns: "
                          f"{', '.join(schema.names)})")


@dataclass(frozen=True)
class Split:
    """One read task: some stripes of one file, and its partition values.

    Attributes:
        uri: the file.
        stripes: indexes of the stripes to read (consecutive).
        partition: Hive partition values of the file's folder.
        filters: the filters left for this file once partition columns are resolved
            (``None``: every row).
        sizes: the stored bytes of each stripe (empty: not known).
        etag: the file's ETag when it was planned (S3): the task reads that version or
            fails with :class:`aorc.errors.ObjectChangedError` (``None``: other stores).
        rows: the rows of each stripe (empty: not known).
    """

    uri: str
    stripes: tuple[int, ...]
    partition: tuple[tuple[str, Any], ...] = ()
    filters: Any = None
    sizes: tuple[int, ...] = ()
    etag: str | None = None
    rows: tuple[int, ...] = ()

    @property
    def nbytes(self) -> int:
        """The stored bytes of the stripes (0 when the sizes are not known)."""
        return sum(self.sizes)

    @property
    def num_rows(self) -> int:
        """The rows of the stripes before filtering (0 when not known)."""
        return sum(self.rows)


@dataclass(frozen=True)
class SplitPlan:
    """A planned read: what every task reads and how its rows are shaped.

    Attributes:
        schema: the rows returned: the columns asked for, in that order (partition
            columns in the dataset's place when all columns are read).
        data_schema: the data columns each task reads (those asked for and those an
            expression filter reads), in the dataset's types.
        splits: the tasks' work.
        storage_options: store settings for the tasks.
        timestamp_unit: the unit of timestamp columns.
        expression: a pyarrow expression filter applied to each task's rows.
        partition_names: the dataset's partition columns.
        row_schema: the rows built by a task before the expression filter applies (the
            columns asked for, then those the expression reads; ``None``: :attr:`schema`).
        keys: the key provider of encrypted columns, pickled to the tasks (never in the
            plan's ``repr``; ``None``: encrypted columns read as their masked copies).
    """

    schema: pa.Schema
    data_schema: pa.Schema
    splits: list[Split]
    storage_options: Mapping[str, Any] | None = None
    timestamp_unit: str = "ns"
    expression: pc.Expression | None = None
    partition_names: tuple[str, ...] = ()
    row_schema: pa.Schema | None = None
    keys: Any = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def num_rows(self) -> int | None:
        """The rows of the splits when no row filter applies (else ``None``)."""
        if self.expression is not None or any(s.filters is not None for s in self.splits):
            return None
        return sum(s.num_rows for s in self.splits)

    def project(self, columns: Sequence[str]) -> SplitPlan:
        """This plan returning only ``columns`` (of :attr:`schema`), in that order: an
        engine's projection pushed into the tasks (``[]``: no column, the rows counted).

        Raises:
            SchemaError: a column not in :attr:`schema`.
        """
        check_projection(self.schema, columns)
        out = pa.schema([self.schema.field(c) for c in columns])
        extra = []
        if self.expression is not None:  # the expression's columns, read for it alone
            from aorc.filters.expression import split_expression

            used = {n.split(".")[0] for n in split_expression(self.expression).names}
            pool = {f.name: f for f in [*(self.row_schema or []), *self.schema]}
            extra = [f for name, f in pool.items() if name in used and name not in columns]
        row_schema = pa.schema([*out, *extra])
        data = pa.schema([f for f in row_schema if f.name not in self.partition_names])
        return dataclasses.replace(self, schema=out, data_schema=data, row_schema=row_schema)


def is_iceberg_source(source: object) -> bool:
    """Whether ``source`` is a pyiceberg ``Table`` or ``DataScan`` (by its class's name:
    pyiceberg is not imported), which the engine front ends read through
    :mod:`aorc.iceberg.tasks`."""
    return any(k.__module__.startswith("pyiceberg.") and k.__name__ in {"Table", "DataScan"}
               for k in type(source).__mro__)


def stripe_groups(reader: OrcReader, filters: Any, split_bytes: int
                  ) -> list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]:
    """Consecutive stripes not ruled out by their statistics, grouped by size: (indexes,
    stored bytes, rows) of each group."""
    from aorc.filters.predicate import StatsContext, parse_filters

    predicate = (parse_filters(filters, parse_type_string(reader.orc_type))
                 if filters is not None else None)
    context = StatsContext(hybrid_calendar=reader.calendar == "JULIAN_GREGORIAN",
                           decimal_bloom_filters=reader.file_version != "UNSTABLE-PRE-2.0")
    kept = []
    for stripe in reader.stripes:
        stats = stripe.statistics
        if not stripe.num_rows:
            continue
        if predicate is not None and stats is not None:
            def of(c: int, s: list[Any] = stats) -> Any:
                return s[c] if c < len(s) else None
            if not predicate.evaluate(of, context).may_be_true:
                continue
        kept.append(stripe)
    return [(tuple(s.index for s in g), tuple(s.length for s in g),
             tuple(s.num_rows for s in g)) for g in group_stripes(kept, split_bytes)]


def _file_filters(file_schema: pa.Schema, clauses: Any) -> tuple[bool, Any]:
    """The filter clauses a file can evaluate: (can any row match, clauses left); a
    conjunction naming a column the file lacks matches nothing (its values are nulls)
    unless the term is ``is null``."""
    if clauses is None:
        return True, None
    left = []
    for conj in clauses:
        kept = []
        possible = True
        for name, op, value in conj:
            if name.split(".")[0] not in file_schema.names:
                if op == "is null":
                    continue
                possible = False
                break
            kept.append((name, op, value))
        if possible:
            if not kept:
                return True, None
            left.append(kept)
    return bool(left), left or None


async def plan_splits(source: Any, columns: Sequence[str] | None = None, filters: Any = None,
                      *, storage_options: Mapping[str, Any] | None = None,
                      split_bytes: int = DEFAULT_SPLIT_BYTES, partitioning: Any = "hive",
                      timestamp_unit: str = "ns",
                      predicate: pc.Expression | None = None,
                      keys: KeyProvider | None = None,
                      dataset: Dataset | None = None) -> SplitPlan:
    """Plan a read of ``source`` as splits of stripes, from the file tails only.

    Args:
        source: what :func:`aorc.open_dataset` takes: a file, a folder or prefix, a list of
            files.
        columns: top-level columns to read, in this order (default all; ``[]``: none, the
            rows are still counted).
        filters: pyarrow-style list filters or a ``pyarrow.compute`` expression, on data and
            partition columns: files are pruned by partition values, stripes by statistics,
            rows filtered exactly by the tasks.
        storage_options: store settings (see :func:`aorc.open_store`).
        split_bytes: stripes of a file are grouped into splits of about this many bytes.
        partitioning: as :func:`aorc.open_dataset`.
        timestamp_unit: as :func:`aorc.open_dataset`.
        predicate: a pyarrow expression ANDed with ``filters`` (an engine's pushed
            predicate), pruning as an expression filter does and applied exactly.
        keys: an :class:`aorc.KeyProvider` for encrypted columns (as
            :func:`aorc.open_dataset`); it travels with the plan to the tasks, so it must
            pickle (:class:`aorc.InMemoryKeys` does).
        dataset: ``source`` already opened (by :func:`aorc.open_dataset` with these
            settings): an engine planning again with a pushed predicate reuses its listing
            and the tails it keeps, sending no request for them.

    Returns:
        The plan.

    Raises:
        SchemaError: unknown columns, bad filters, incompatible file schemas.
        ObjectNotFoundError: nothing at ``source``.
    """
    ds = dataset if dataset is not None else await open_dataset(
        source, partitioning=partitioning, storage_options=storage_options,
        timestamp_unit=timestamp_unit, keys=keys)
    where = _both(dataset_filter(filters), predicate)
    parts = ds.partition_schema.names
    data, rows, out = plan_columns(ds.schema, parts, columns, where)
    files = (prune(ds.files, ds.partition_schema, where.clauses)
             if where.clauses is not None else [(f, None) for f in ds.files])
    sem = asyncio.Semaphore(16)

    async def plan_file(f: DatasetFile, clauses: Any) -> list[Split]:
        async with sem:
            reader = await _open_planned(ds, f.path, storage_options, timestamp_unit, keys)
            try:
                possible, rest = _file_filters(reader.schema, clauses)
                if not possible:
                    return []
                groups = stripe_groups(reader, rest, split_bytes)
                etag = reader.etag
            finally:
                await reader.close()
        part = tuple((k, f.partition.get(k)) for k in parts)
        return [Split(f.path, g, part, rest, sizes, etag, n) for g, sizes, n in groups]

    planned = await asyncio.gather(*(plan_file(f, c) for f, c in files))
    return SplitPlan(out, data, [s for group in planned for s in group], storage_options,
                     timestamp_unit, where.expression, tuple(parts), rows, keys)


def _both(where: DatasetFilter, predicate: pc.Expression | None) -> DatasetFilter:
    """``where`` and ``predicate``: clauses crossed (an AND of two ORs of ANDs), the
    expressions ANDed."""
    if predicate is None:
        return where
    pushed = dataset_filter(predicate)
    if where.clauses is None or pushed.clauses is None:
        clauses = where.clauses if pushed.clauses is None else pushed.clauses
    else:
        clauses = [a + b for a in where.clauses for b in pushed.clauses]
    expression = predicate if where.expression is None else where.expression & predicate
    names = tuple(dict.fromkeys(where.names + pushed.names))
    return DatasetFilter(clauses, expression, names)


async def _open_planned(ds: Dataset, path: str, storage_options: Mapping[str, Any] | None,
                        timestamp_unit: str, keys: KeyProvider | None = None) -> OrcReader:
    """A reader of ``path`` on the tail the dataset already read (no request), else
    opened (always with ``keys``: the decrypted statistics prune)."""
    tail = None if keys is not None else ds.tail_cache.get(path)
    if tail is None:
        return await open_reader(path, storage_options=storage_options,
                                 timestamp_unit=timestamp_unit, keys=keys)
    store = registry.open_input(path, tail.storage_options(storage_options))
    return OrcReader(store, tail.tail, tail.data, owns_store=True,
                     timestamp_unit=timestamp_unit)


async def read_split(plan: SplitPlan, split: Split, batch_size: int = 65_536
                     ) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of one split, batch by batch, in :attr:`SplitPlan.schema` (a task's body).

    Raises:
        ObjectChangedError: the file was replaced since it was planned.
    """
    options = plan.storage_options
    if split.etag is not None:
        options = {**(options or {}), "if_match": split.etag}
    async with open_reader(split.uri, storage_options=options,
                           timestamp_unit=plan.timestamp_unit, keys=plan.keys) as reader:
        names = [n for n in plan.data_schema.names if n in reader.schema.names]
        if not names and split.filters is None:
            yield _shaped(plan, split, pa.table({"n": pa.nulls(split.num_rows)}).select([]))
            return
        wanted = names or [split.filters[0][0][0].split(".")[0]]
        async for batch in reader.iter_batches(wanted, batch_size=batch_size,
                                               filters=split.filters,
                                               stripes=split.stripes):
            table = pa.Table.from_batches([batch])
            if not names:
                table = table.select([])
            yield _shaped(plan, split, table)


def _shaped(plan: SplitPlan, split: Split, table: pa.Table) -> pa.RecordBatch:
    """A file's rows in the plan's schema: evolved types, partition columns, the order
    asked, the expression filter applied."""
    data = conform(table, plan.data_schema, split.uri)
    row_schema = plan.row_schema or plan.schema
    values = dict(split.partition)
    arrays = []
    for field in row_schema:
        if field.name in values:
            arrays.append(pa.repeat(pa.scalar(values[field.name], field.type), data.num_rows))
        else:
            arrays.append(data.column(field.name))
    if not len(row_schema):
        return pa.RecordBatch.from_pydict({"n": pa.nulls(data.num_rows)}).select([])
    rows = pa.Table.from_arrays(arrays, schema=row_schema)
    if plan.expression is not None and rows.num_rows:
        from aorc.filters.expression import expression_mask

        rows = pa.Table.from_batches([b.filter(expression_mask(plan.expression, b))
                                      for b in rows.to_batches()], schema=rows.schema)
    rows = rows.select(plan.schema.names)
    if not rows.num_columns:
        return pa.RecordBatch.from_pydict({"n": pa.nulls(rows.num_rows)}).select([])
    return rows.combine_chunks().to_batches()[0] if rows.num_rows else \
        pa.RecordBatch.from_pylist([], schema=plan.schema)


async def read_splits(plan: SplitPlan, splits: Sequence[Split]) -> pa.Table:
    """The rows of ``splits`` as one table in :attr:`SplitPlan.schema` (on the caller's
    event loop: an engine worker runs it on a loop it keeps, whose store clients are reused
    by its next tasks)."""
    batches = [b for s in splits async for b in read_split(plan, s)]
    if not batches:
        return plan.schema.empty_table()
    if not len(plan.schema):
        return pa.table({"n": pa.nulls(sum(b.num_rows for b in batches))}).select([])
    return pa.Table.from_batches(batches, schema=plan.schema)


def read_split_table(plan: SplitPlan, splits: Sequence[Split]) -> pa.Table:
    """The rows of ``splits`` as one table in :attr:`SplitPlan.schema`, read in a new event
    loop (:func:`read_splits` for a synchronous caller without a loop of its own)."""
    return asyncio.run(read_splits(plan, splits))


def balance_splits(splits: list[Split], target: int) -> list[Split]:
    """Cut splits of several stripes in two until there are ``target`` splits (or every
    split is one stripe), so that every core has work."""
    out = list(splits)
    while len(out) < target:
        widest = max(range(len(out)), key=lambda i: len(out[i].stripes), default=None)
        if widest is None or len(out[widest].stripes) < 2:
            break
        split = out[widest]
        half = len(split.stripes) // 2
        out[widest:widest + 1] = [
            dataclasses.replace(split, stripes=split.stripes[:half], sizes=split.sizes[:half],
                                rows=split.rows[:half]),
            dataclasses.replace(split, stripes=split.stripes[half:], sizes=split.sizes[half:],
                                rows=split.rows[half:])]
    return out


def pack_splits(splits: list[Split], cores: int | None,
                max_bytes: int = DEFAULT_SPLIT_BYTES) -> list[list[Split]]:
    """The splits of each task, packed as Spark packs files into its read tasks
    (``FilePartition``): consecutive splits share a task up to ``min(max_bytes,
    max(OPEN_COST_BYTES, total / cores))`` bytes, counting :data:`OPEN_COST_BYTES` per
    split; splits keep their order. ``cores`` unknown (``None``): this machine's CPUs.

    Args:
        splits: the splits, in the order their rows are to be read.
        cores: the engine's cores (``None``: this machine's CPUs).
        max_bytes: the most bytes a task holds (a split larger than it is a task alone).

    Returns:
        The tasks, each a non-empty list of consecutive splits (no task for no splits).
    """
    cores = cores or os.cpu_count() or 1
    total = sum(s.nbytes + OPEN_COST_BYTES for s in splits)
    target = min(max_bytes, max(OPEN_COST_BYTES, total // cores))
    packs: list[list[Split]] = []
    size = 0
    for split in splits:
        if not packs or size + split.nbytes > target:
            packs.append([])
            size = 0
        packs[-1].append(split)
        size += split.nbytes + OPEN_COST_BYTES
    return packs
