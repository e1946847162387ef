"""Exactly-once streaming into an Iceberg table: the :class:`aorc.sink.RollingSink` target.

``RollingSink(table, ...)`` (after ``import aorc.iceberg``) or ``RollingSink(IcebergTarget(
table, ...), ...)`` writes the rows as ORC data files of the table -- partitioned by the
table's spec, under its data location (``write.data.path``, default ``<location>/data``),
named ``<topic>+<partition>+<first offset>.orc`` -- and commits each cut's files in one
snapshot whose summary holds the positions reached: ``aorc.offsets.<topic>.<partition>`` =
the last offset stored (as Iceberg's Kafka Connect sink keeps its offsets in snapshot
summaries). Each commit carries the positions of every stream the sink owns, so the newest
snapshot that names a stream has its position even after older snapshots expire.

A restarted sink reads the positions back (:meth:`IcebergTarget.restore`: the current
snapshot and its ancestors, newest first) and drops rows at or before them. So after any
crash -- an exception, a cancellation, a SIGKILL between an upload and its commit (the files
are complete but no snapshot references them: orphans, overwritten by the replay, which
gives them the same names) or between the table commit and the source's own offset commit
(the source replays, the sink drops what the table has) -- every record is in the table
exactly once. Several sinks (one per set of Kafka partitions) may commit to one table at
once: a conflict is retried on the refreshed table (:func:`aorc.iceberg.write.commit`);
each stream must be written by one sink at a time.

Cuts that complete while a commit is in flight are committed together in the next
snapshot (fewer snapshots under load).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table
from pyiceberg.typedef import Record

from aorc.errors import SchemaError
from aorc.format.types import from_arrow_schema
from aorc.iceberg import config
from aorc.iceberg.metrics import MetricsCollector
from aorc.iceberg.schema import file_schema, to_file_batches
from aorc.iceberg.write import (
    WrittenFile,
    column_sizes,
    commit,
    data_file,
    partition_codes,
)
from aorc.sink.results import SinkCommit
from aorc.sink.target import CommittedFile, register_target

__all__ = ["OFFSETS_PREFIX", "IcebergTarget", "offsets_in_summary"]

#: Snapshot summary keys of the positions: ``aorc.offsets.<topic>.<partition>``.
OFFSETS_PREFIX = "aorc.offsets."
_DATA_PATH = "write.data.path"


def offsets_in_summary(summary: Mapping[str, str]) -> dict[tuple[str, int], int]:
    """The positions a snapshot summary records."""
    out = {}
    for key, value in summary.items():
        if not key.startswith(OFFSETS_PREFIX):
            continue
        topic, _, partition = key[len(OFFSETS_PREFIX):].rpartition(".")
        if topic and partition.lstrip("-").isdigit():
            out[(topic, int(partition))] = int(value)
    return out


class IcebergTarget:
    """A :class:`aorc.sink.target.SinkTarget` writing into a pyiceberg table.

    Args:
        table: the table (its current schema, spec and properties; refreshed on restore).
        storage_options: settings of the table's store (default: from its FileIO).
        snapshot_properties: extra entries of every snapshot summary.
    """

    def __init__(self, table: Table, *, storage_options: Mapping[str, Any] | None = None,
                 snapshot_properties: Mapping[str, str] | None = None) -> None:
        self.table = table
        meta = table.metadata
        self._schema = meta.schema()
        self._spec = meta.spec()
        self._properties = dict(meta.properties)
        self.schema: pa.Schema = file_schema(self._schema)
        self.orc_type = from_arrow_schema(self.schema)
        self.data_location = meta.properties.get(_DATA_PATH,
                                                 f"{meta.location.rstrip('/')}/data")
        self.location = config.store_path(self.data_location)  # (where the sink writes)
        self.storage_options: dict[str, Any] = config.storage_options(
            meta.location, table.io.properties, storage_options)
        self.snapshot_properties = dict(snapshot_properties or {})
        self._partitions: dict[str, Record] = {"": Record()}
        self._pending: list[tuple[SinkCommit, Sequence[CommittedFile],
                                  dict[tuple[str, int], int], asyncio.Future[None]]] = []
        self._worker: asyncio.Task[None] | None = None
        self.snapshots = 0  # snapshots committed
        self._latest: dict[tuple[str, int], int] = {}  # positions committed by this target

    # ----------------------------------------------------------------- rows

    def prepare(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Rows in the table's file form (columns by name; see
        :func:`aorc.iceberg.schema.to_file_batches`).

        Args:
            batch: the rows as the sink got them.

        Returns:
            The rows in the table's file form.

        Raises:
            SchemaError: the rows do not fit the table's schema, or came back as several
                batches.
        """
        batches = to_file_batches(self._schema, batch)
        if len(batches) != 1:  # pragma: no cover - one batch in, one out
            raise SchemaError("internal error: one batch became several")
        return batches[0]

    def route(self, batch: pa.RecordBatch) -> tuple[np.ndarray, list[str]]:
        """Each row's partition folder (``PartitionKey.to_path()``).

        Args:
            batch: rows in the table's file form.

        Returns:
            ``(index of each row's folder, the folders)``.
        """
        codes, keys = partition_codes(self._schema, self._spec, batch)
        paths = []
        for key in keys:
            path = key.to_path() if key is not None else ""
            if key is not None:
                self._partitions.setdefault(path, key.partition)
            paths.append(path)
        return codes, paths

    def file_metrics(self) -> MetricsCollector:
        """The metrics of one data file.

        Returns:
            A new :class:`MetricsCollector`.
        """
        return MetricsCollector(self._schema, self._properties)

    # ----------------------------------------------------------------- positions

    async def restore(self) -> dict[tuple[str, int], int]:
        """The positions committed: for each stream, the newest snapshot (of the current
        one's ancestry) that names it (the table is refreshed first).

        Returns:
            ``{(topic, partition): last committed offset}``.
        """
        def read() -> dict[tuple[str, int], int]:
            self.table.refresh()
            meta = self.table.metadata
            found: dict[tuple[str, int], int] = {}
            snapshot = meta.current_snapshot()
            while snapshot is not None:
                summary = snapshot.summary
                if summary is not None:
                    for key, value in offsets_in_summary(summary.additional_properties
                                                         ).items():
                        found.setdefault(key, value)
                parent = snapshot.parent_snapshot_id
                snapshot = meta.snapshot_by_id(parent) if parent is not None else None
            return found

        return await asyncio.to_thread(read)

    # ----------------------------------------------------------------- commits

    async def commit(self, commit: SinkCommit, files: Sequence[CommittedFile],
                     positions: dict[tuple[str, int], int]) -> None:
        """Commit a cut's files and the positions (batched with cuts arriving meanwhile).

        Args:
            commit: what the sink commits (files and positions).
            files: the data files written, with their metrics.
            positions: the newest offset of each stream in them.
        """
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        done.add_done_callback(_retrieved)  # (an aborted cut no longer awaits its result)
        self._pending.append((commit, files, dict(positions), done))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.ensure_future(self._drain())
        await asyncio.shield(done)

    async def settle(self) -> None:
        """Wait until no commit is in flight."""
        worker = self._worker
        if worker is not None:
            await asyncio.gather(worker, return_exceptions=True)

    async def _drain(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await self._commit_batch(batch)
            except BaseException as exc:
                for *_, done in batch:
                    if not done.done():
                        done.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                for *_, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def _commit_batch(self, batch: list[Any]) -> None:
        files: list[DataFile] = []
        positions: dict[tuple[str, int], int] = {}
        for _, committed, owned, _done in batch:
            for key, offset in owned.items():  # (a cut's sink may not know the newest yet)
                positions[key] = max(offset, positions.get(key, offset),
                                     self._latest.get(key, offset))
            for cf in committed:
                files.append(self._data_file(cf))
        props = {**self.snapshot_properties,
                 **{f"{OFFSETS_PREFIX}{t}.{p}": str(o) for (t, p), o in sorted(
                     positions.items())}}

        def stage(tx: Any, snapshot_properties: dict[str, str]) -> None:
            with tx.update_snapshot(snapshot_properties=snapshot_properties
                                    ).fast_append() as fast:
                for f in files:
                    fast.append_data_file(f)

        await commit(self.table, stage, snapshot_properties=props)
        self.snapshots += 1
        for key, offset in positions.items():
            self._latest[key] = max(offset, self._latest.get(key, offset))

    def _data_file(self, cf: CommittedFile) -> DataFile:
        f = cf.file
        metrics = cf.metrics
        if not isinstance(metrics, MetricsCollector):
            raise SchemaError("internal error: a file without Iceberg metrics")
        stats = metrics.statistics(column_sizes(self.orc_type, cf.column_sizes),
                                   cf.stripe_offsets)
        partition = self._partitions.get(f.partition_path)
        if partition is None:
            raise SchemaError(f"internal error: unknown partition folder {f.partition_path!r}")
        if not f.uri.startswith(self.location):
            raise SchemaError(f"internal error: {f.uri} is not under {self.location}")
        path = self.data_location + f.uri[len(self.location):]  # (the table's form)
        return data_file(self.table, WrittenFile(path, f.num_bytes, stats, partition),
                         spec_id=self._spec.spec_id)


def _retrieved(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


def _is_table(obj: Any) -> bool:
    return isinstance(obj, Table)


register_target(_is_table, IcebergTarget)
