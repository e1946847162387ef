"""Writing ORC data files of an Iceberg table, and appending them in one commit.

:func:`write_data_files` fans the rows out by the table's partition spec (identity, year,
month, day, hour, bucket, truncate -- pyiceberg computes the transforms), writes each
partition's rows into files of about ``write.target-file-size-bytes`` with aorc's streaming
writer (straight to the table's store: the local disk, S3, ...; several files at once), with
the ORC appendix's attributes (:mod:`aorc.iceberg.schema`), the ``write.orc.*`` properties
(:mod:`aorc.iceberg.config`) and the column metrics collected while writing
(:mod:`aorc.iceberg.metrics`), and returns pyiceberg ``DataFile`` entries.

:func:`append` writes the files and commits them in one snapshot (a fast append).
:func:`commit` does the commit for any snapshot operation: pyiceberg's catalog commit, which
retries a conflict with another writer on the refreshed table (``commit.retry.*``); aorc
retries it again, a few times, when pyiceberg gives up.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.fileformat import DataFileStatistics
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.partitioning import PartitionFieldValue, PartitionKey, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.typedef import Record
from pyiceberg.types import PrimitiveType

from aorc.errors import SchemaError
from aorc.format.types import OrcType
from aorc.iceberg import config
from aorc.iceberg.metrics import MetricsCollector
from aorc.iceberg.project import convert_primitive
from aorc.iceberg.schema import ICEBERG_ID, file_schema, to_file_batches
from aorc.io import registry
from aorc.io.base import gather_or_cancel
from aorc.io.output import Destination
from aorc.options import WriteOptions
from aorc.write.inputs import collect_batches
from aorc.write.writer import OrcWriter

__all__ = [
    "DEFAULT_CONCURRENCY",
    "WrittenFile",
    "append",
    "column_sizes",
    "commit",
    "data_file",
    "delete_written",
    "partition_codes",
    "partition_groups",
    "write_data_files",
    "write_one_file",
]

#: Files written at once by :func:`write_data_files`.
DEFAULT_CONCURRENCY = 4
#: Rows handed to a writer at a time (so files can end near their target size).
_SLICE_ROWS = 65_536
#: Extra attempts of a commit after pyiceberg's own retries gave up on conflicts.
EXTRA_COMMIT_ATTEMPTS = 3

T = TypeVar("T")


@dataclass(frozen=True)
class WrittenFile:
    """A data file written (complete on the store, not yet committed)."""

    path: str
    size: int
    statistics: DataFileStatistics
    partition: Record


def column_sizes(orc_type: OrcType, sizes: Sequence[int | None]) -> dict[int, int]:
    """Bytes on disk per Iceberg field id, from per-ORC-column sizes of a file whose type
    tree carries ``iceberg.id`` attributes."""
    out = {}
    for node in orc_type.walk():
        fid = dict(node.attributes).get(ICEBERG_ID)
        size = sizes[node.column_id]
        if fid is not None and size is not None:
            out[int(fid)] = size
    return out


async def write_one_file(dest: Destination, schema: Schema, properties: Mapping[str, str],
                         batches: Sequence[pa.RecordBatch], options: WriteOptions,
                         storage_options: Mapping[str, Any] | None = None
                         ) -> tuple[int, DataFileStatistics]:
    """Write file-form batches (:func:`aorc.iceberg.schema.to_file_batches`) as one ORC data
    file; returns its size and metrics."""
    collector = MetricsCollector(schema, properties)
    writer = OrcWriter(dest, file_schema(schema), options, storage_options=storage_options)
    async with writer:
        for batch in batches:
            await writer.write(batch)
            await asyncio.to_thread(collector.add, batch)
    return writer.bytes_written, _statistics(writer, collector)


def _statistics(writer: OrcWriter, collector: MetricsCollector) -> DataFileStatistics:
    sizes = [s.bytes_on_disk for s in writer.column_statistics()]
    return collector.statistics(column_sizes(writer.orc_type, sizes), writer.stripe_offsets)


# =========================================================================== partitions

def _source_values(schema: Schema, spec: PartitionSpec, batch: pa.RecordBatch
                   ) -> list[pa.Array]:
    """Each partition field's transformed values for the rows of a file-form batch."""
    out = []
    for pf in spec.fields:
        source = schema.find_field(pf.source_id)
        name = schema.find_column_name(pf.source_id)
        assert name is not None
        arr: Any = batch
        for part in name.split("."):
            arr = arr.column(part) if isinstance(arr, pa.RecordBatch) else arr.field(part)
        if not isinstance(source.field_type, PrimitiveType):
            raise SchemaError(f"cannot partition by {name!r}: not a primitive column")
        arr = convert_primitive(source.field_type, arr, name)
        out.append(pf.transform.pyarrow_transform(source.field_type)(arr))
    return out


def partition_codes(schema: Schema, spec: PartitionSpec, batch: pa.RecordBatch
                    ) -> tuple[np.ndarray, list[PartitionKey | None]]:
    """The partition of each row of a file-form batch: (a code per row, the partition key of
    each code, in order of first appearance; one key None for an unpartitioned spec)."""
    if spec.is_unpartitioned():
        return np.zeros(batch.num_rows, dtype=np.int64), [None]
    code = np.zeros(batch.num_rows, dtype=np.int64)
    dictionaries = []
    for arr in _source_values(schema, spec, batch):
        encoded = pc.dictionary_encode(arr, null_encoding="encode")
        dictionaries.append(encoded.dictionary.to_pylist())
        code = code * len(encoded.dictionary) + encoded.indices.to_numpy(
            zero_copy_only=False).astype(np.int64)
    unique, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # codes by first appearance
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    keys: list[PartitionKey | None] = []
    for k in order.tolist():
        field_values = []
        rest = int(unique[k])
        for pf, dictionary in zip(reversed(spec.fields), reversed(dictionaries), strict=True):
            rest, index = divmod(rest, len(dictionary))
            field_values.append(PartitionFieldValue(pf, dictionary[index]))
        keys.append(PartitionKey(field_values=field_values[::-1], partition_spec=spec,
                                 schema=schema))
    return rank[inverse.reshape(-1)], keys


def partition_groups(schema: Schema, spec: PartitionSpec, batch: pa.RecordBatch
                     ) -> list[tuple[PartitionKey | None, pa.RecordBatch]]:
    """The rows of a file-form batch grouped by partition: (key, rows) in order of first
    appearance."""
    codes, keys = partition_codes(schema, spec, batch)
    if len(keys) == 1:
        return [(keys[0], batch)]
    order = np.argsort(codes, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(codes, minlength=len(keys)))]
    return [(key, batch.take(pa.array(order[bounds[k]:bounds[k + 1]], pa.int64())))
            for k, key in enumerate(keys)]


# =========================================================================== writing

def data_file(table: Table, written: WrittenFile, spec_id: int | None = None) -> DataFile:
    """The pyiceberg ``DataFile`` entry of a written ORC file."""
    meta = table.metadata
    return DataFile.from_args(
        _table_format_version=meta.format_version,
        content=DataFileContent.DATA,
        file_path=written.path,
        file_format=FileFormat.ORC,
        partition=written.partition,
        file_size_in_bytes=written.size,
        sort_order_id=None,
        spec_id=meta.default_spec_id if spec_id is None else spec_id,
        equality_ids=None,
        key_metadata=None,
        **written.statistics.to_serialized_dict(),
    )


async def write_data_files(table: Table, data: Any, *,
                           storage_options: Mapping[str, Any] | None = None,
                           max_concurrency: int = DEFAULT_CONCURRENCY,
                           **write_options: Any) -> list[DataFile]:
    """Write ``data`` as ORC data files of ``table`` (not committed; see :func:`append`).

    Args:
        table: a pyiceberg table (its current schema, spec and properties are used).
        data: anything :func:`aorc.write_table` takes (a pyarrow Table, RecordBatch or
            RecordBatchReader, a pandas or Polars DataFrame, a DuckDB relation, an iterable or
            async iterable of batches, ...); columns matched to the table's by name.
        storage_options: settings of the table's store (default: from its FileIO).
        max_concurrency: files written at once.
        **write_options: :class:`aorc.WriteOptions` fields overriding the table's
            ``write.orc.*`` properties.

    Returns:
        The files' ``DataFile`` entries.

    Raises:
        InputTypeError: ``data`` is of no kind a writer takes.
        SchemaError: data that does not fit the table's schema.
        StoreError: writing failed (the files written by this call are deleted).
    """
    meta = table.metadata
    schema, spec, properties = meta.schema(), meta.spec(), meta.properties
    options = config.write_options(properties, **write_options)
    target = config.target_file_size(properties)
    store = config.storage_options(meta.location, table.io.properties, storage_options)
    _, rows = await collect_batches(data)  # (streams pulled in worker threads)
    batches = await asyncio.to_thread(to_file_batches, schema, rows)
    grouped: dict[str, tuple[PartitionKey | None, list[pa.RecordBatch]]] = {}
    for batch in batches:
        for key, rows in await asyncio.to_thread(partition_groups, schema, spec, batch):
            path = key.to_path() if key is not None else ""
            grouped.setdefault(path, (key, []))[1].append(rows)
    write_id = uuid.uuid4()
    provider = table.location_provider()
    counter = iter(range(1 << 62))
    semaphore = asyncio.Semaphore(max(1, max_concurrency))
    written: list[WrittenFile] = []

    async def one(key: PartitionKey | None, rows: list[pa.RecordBatch]) -> None:
        name = f"00000-{next(counter)}-{write_id}.orc"
        path = provider.new_data_location(name, key)
        async with semaphore:
            size, stats = await write_one_file(config.store_path(path), schema, properties,
                                               rows, options, store)
        written.append(WrittenFile(path, size, stats, key.partition if key else Record()))

    jobs = [one(key, part) for key, rows in grouped.values()
            for part in _split(rows, target)]
    try:
        await gather_or_cancel(jobs)
    except BaseException:
        await delete_written([w.path for w in written], store)
        raise
    return [data_file(table, w) for w in written]


def _split(rows: list[pa.RecordBatch], target: int) -> list[list[pa.RecordBatch]]:
    """A partition's rows cut into files of about ``target`` bytes, estimated from the Arrow
    bytes (the encoded size is not known before encoding; ORC compresses events 3-8 times, so
    the estimate assumes 4)."""
    out: list[list[pa.RecordBatch]] = [[]]
    size = 0
    budget = max(1, target) * 4
    for batch in rows:
        per_row = max(1, batch.nbytes // max(1, batch.num_rows))
        step = max(1, min(_SLICE_ROWS, budget // 8 // per_row))
        for start in range(0, batch.num_rows, step):
            piece = batch.slice(start, step)
            if size and size + piece.nbytes > budget:
                out.append([])
                size = 0
            out[-1].append(piece)
            size += piece.nbytes
    return [part for part in out if part]


async def delete_written(paths: list[str], store: Mapping[str, Any]) -> None:
    """Delete files written by a failed call (also when the caller is being cancelled)."""
    await asyncio.shield(asyncio.gather(
        *(registry.delete(config.store_path(p), store) for p in paths),
        return_exceptions=True))


# =========================================================================== commits

_locks: dict[tuple[str, ...], threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock_for(table: Table) -> threading.Lock:
    key = tuple(table.name())
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


async def commit(table: Table, build: Callable[[Any, dict[str, str]], None], *,
                 snapshot_properties: Mapping[str, str] | None = None) -> Snapshot:
    """Commit one snapshot: ``build(transaction, snapshot_properties)`` stages it (e.g.
    ``transaction.update_snapshot(snapshot_properties=...).fast_append()``); conflicts with
    other writers are retried on the refreshed table.

    Returns:
        The snapshot committed.
    """
    props = dict(snapshot_properties or {})

    def run() -> Snapshot:
        with _lock_for(table):
            for attempt in range(EXTRA_COMMIT_ATTEMPTS + 1):
                try:
                    with table.transaction() as tx:
                        build(tx, props)
                    break
                except CommitFailedException:
                    if attempt == EXTRA_COMMIT_ATTEMPTS:
                        raise
                    table.refresh()
            snapshot = table.current_snapshot()
            assert snapshot is not None
            return snapshot

    return await asyncio.to_thread(run)


async def append(table: Table, data: Any, *, snapshot_properties: Mapping[str, str] | None
                 = None, storage_options: Mapping[str, Any] | None = None,
                 max_concurrency: int = DEFAULT_CONCURRENCY, **write_options: Any) -> Snapshot:
    """Append rows to an Iceberg table as ORC data files, in one snapshot.

    Args:
        table: a pyiceberg table.
        data: anything :func:`aorc.write_table` takes (a pyarrow Table, RecordBatch or
            RecordBatchReader, a pandas or Polars DataFrame, a DuckDB relation, an iterable or
            async iterable of batches, ...); columns matched by name (missing optional
            columns are null).
        snapshot_properties: extra entries for the snapshot's summary.
        storage_options: settings of the table's store (default: from its FileIO).
        max_concurrency: files written at once.
        **write_options: :class:`aorc.WriteOptions` fields overriding the table's
            ``write.orc.*`` properties.

    Returns:
        The committed snapshot (``table`` is refreshed to it).

    Raises:
        InputTypeError: ``data`` is of no kind a writer takes.
        SchemaError: data that does not fit the table's schema.
        StoreError: writing failed (nothing is committed; the files written are deleted).
        CommitFailedException: conflicts persisted through every retry (the files are left
            for an orphan-file cleanup).
    """
    files = await write_data_files(table, data, storage_options=storage_options,
                                   max_concurrency=max_concurrency, **write_options)

    def stage(tx: Any, props: dict[str, str]) -> None:
        with tx.update_snapshot(snapshot_properties=props).fast_append() as fast:
            for f in files:
                fast.append_data_file(f)

    return await commit(table, stage, snapshot_properties=snapshot_properties)
