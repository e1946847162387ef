"""Ray Data's ORC datasource and datasink on aorc: :func:`read_orc` and :func:`write_orc`."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from ray.data import Datasink, Datasource, ReadTask
from ray.data.block import BlockMetadata

from aorc.dataset.commit import (
    commit_staged,
    local_commit,
    new_attempt,
    remove_staged,
    remove_staged_tree,
    stage_part_async,
)
from aorc.dataset.parts import new_write_id, write_part_async
from aorc.dataset.splits import (
    DEFAULT_SPLIT_BYTES,
    Split,
    SplitPlan,
    balance_splits,
    is_iceberg_source,
    pack_splits,
    plan_splits,
    read_splits,
)
from aorc.errors import SchemaError
from aorc.io import registry
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.read.keyed import check_keys
from aorc.sync import run

__all__ = ["STUB_COLUMN", "TASKS_PER_CPU", "OrcDatasink", "OrcDatasource", "read_orc",
           "write_orc"]


#: The column Ray's own readers give a block of no columns so that it keeps its row count
#: (Ray drops it again; ``ray.data._internal.arrow_block``).
STUB_COLUMN = "__bsp_stub"


def _block(table: pa.Table) -> pa.Table:
    """A block of no columns holds Ray's stub column, which keeps the row count."""
    if not table.num_columns:
        return pa.table({STUB_COLUMN: pa.nulls(table.num_rows)})
    return table


def _read_blocks(plan: SplitPlan, pack: list[Split]) -> Iterator[pa.Table]:
    """A read task's body: one block per split."""
    for split in pack:  # (on the worker's aorc loop: its store clients serve every task)
        table = _block(run(read_splits(plan, [split])))
        if table.num_rows:
            yield table


def _read_iceberg_blocks(plan: Any, pack: list[Any]) -> Iterator[pa.Table]:
    """An Iceberg read task's body: one block per data file."""
    from aorc.iceberg.tasks import read_iceberg_table

    for task in pack:
        table = _block(run(read_iceberg_table(plan, [task])))
        if table.num_rows:
            yield table


#: Read tasks per CPU of the cluster at most: each task's start costs (a Ray task, a file
#: opened), so a few tasks per CPU keep every CPU busy without paying it per stripe.
TASKS_PER_CPU = 2


def _task_target(parallelism: int) -> int:
    """How many read tasks to aim at: Ray's ``parallelism``, but at most
    :data:`TASKS_PER_CPU` per CPU of the cluster (Ray's default asks for 200 or more)."""
    import ray

    cpus = int(ray.cluster_resources().get("CPU", 0)) if ray.is_initialized() else 0
    target = max(1, parallelism)
    return min(target, TASKS_PER_CPU * cpus) if cpus else target


def _plan(source: Any, columns: Sequence[str] | None, filters: Any,
          storage_options: Mapping[str, Any] | None, split_bytes: int, partitioning: Any,
          timestamp_unit: str, keys: KeyProvider | None, snapshot_id: int | None,
          predicate: Any = None, dataset: Any = None) -> Any:
    """The read's plan: an Iceberg table's data files, else the files' stripe splits."""
    if is_iceberg_source(source):
        from aorc.iceberg.tasks import plan_iceberg

        if keys is not None:
            raise SchemaError("keys= applies to ORC files, not to an Iceberg table")
        return run(plan_iceberg(source, columns, filters, storage_options=storage_options,
                                snapshot_id=snapshot_id))
    if snapshot_id is not None:
        raise SchemaError("snapshot_id= applies to an Iceberg table")
    return run(plan_splits(source, columns, filters, storage_options=storage_options,
                           split_bytes=split_bytes, partitioning=partitioning,
                           timestamp_unit=timestamp_unit, predicate=predicate, keys=keys,
                           dataset=dataset))


class OrcDatasource(Datasource):  # type: ignore[misc]
    """ORC files read by aorc, with Ray's projection and predicate pushdowns.

    Args:
        source: a file, a folder or prefix, or a list of files (as
            :func:`aorc.open_dataset`), or a pyiceberg ``Table`` or ``DataScan`` (ORC data
            files; one task reads whole data files).
        columns: top-level columns, in this order (default all).
        filters: pyarrow-style list filters or a pyarrow expression (an Iceberg table:
            also a pyiceberg expression or its string form).
        storage_options: store settings, passed to the workers.
        split_bytes: stripes of a file are grouped into tasks of about this many bytes.
        partitioning: as :func:`aorc.open_dataset`.
        timestamp_unit: as :func:`aorc.open_dataset`.
        keys: an :class:`aorc.KeyProvider` for encrypted columns, pickled to the workers
            (without it they read masked).
        snapshot_id: an Iceberg table's snapshot to read (default its current one).

    Raises:
        SchemaError: unknown columns, bad filters, incompatible file schemas.
        ObjectNotFoundError: nothing at ``source``.
    """

    def __init__(self, source: Any, *, columns: Sequence[str] | None = None,
                 filters: Any = None, storage_options: Mapping[str, Any] | None = None,
                 split_bytes: int = DEFAULT_SPLIT_BYTES, partitioning: Any = "hive",
                 timestamp_unit: str = "ns", keys: KeyProvider | None = None,
                 snapshot_id: int | None = None) -> None:
        super().__init__()
        self._projection_map: dict[str, str] | None = None
        self._args = dict(source=source, columns=columns, filters=filters,
                          storage_options=storage_options, split_bytes=split_bytes,
                          partitioning=partitioning, timestamp_unit=timestamp_unit,
                          keys=check_keys(keys), snapshot_id=snapshot_id)
        self._iceberg = is_iceberg_source(source)
        # the opened dataset (its listing and file tails), planned again with a pushed
        # predicate without a request (kept on the driver: not pickled)
        self._dataset: Any = None
        if not self._iceberg:
            from aorc.dataset.entry import open_dataset

            self._dataset = run(open_dataset(
                source, partitioning=partitioning, storage_options=storage_options,
                timestamp_unit=timestamp_unit, keys=self._args["keys"]))
        self._plan = self._planned(None)

    def __repr__(self) -> str:
        return f"OrcDatasource({self._args['source']!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_dataset": None}

    def __copy__(self) -> OrcDatasource:
        # (Ray's apply_predicate copies: the copy keeps the opened dataset)
        clone = type(self).__new__(type(self))
        clone.__dict__.update(self.__dict__)
        return clone

    def _planned(self, predicate: Any) -> Any:
        return _plan(**self._args, predicate=predicate, dataset=self._dataset)

    @property
    def plan(self) -> Any:
        """The read as planned, with the pushed projection and predicate."""
        columns = self._get_data_columns()
        return self._plan if columns is None else self._plan.project(columns)

    def get_name(self) -> str:
        """The read tasks' name.

        Returns:
            ``"AorcORC"``.
        """
        return "AorcORC"

    def supports_projection_pushdown(self) -> bool:
        """Ray's column selections are pushed into the reads.

        Returns:
            ``True``.
        """
        return True

    def supports_predicate_pushdown(self) -> bool:
        """Ray's filters (expressions pyarrow can evaluate) are pushed into the reads.

        Returns:
            ``True``.
        """
        return True

    def apply_predicate(self, predicate_expr: Any) -> Any:
        """This datasource with ``predicate_expr`` ANDed into its read (replanned: more
        stripes and files pruned); itself when pyarrow cannot evaluate the expression.

        Args:
            predicate_expr: Ray's filter expression (converted with its ``to_pyarrow()``).

        Returns:
            A copy of this datasource whose plan holds the combined predicate, or this
            datasource unchanged when the expression cannot be converted to pyarrow.
        """
        if self._iceberg:  # (Ray filters an Iceberg table's rows itself)
            return self
        try:
            pushed = predicate_expr.to_pyarrow()
        except (TypeError, ValueError):
            return self
        clone = super().apply_predicate(predicate_expr)
        current = clone.get_current_predicate()
        clone._plan = clone._planned(current.to_pyarrow() if current is not None else pushed)
        return clone

    def estimate_inmemory_data_size(self) -> int | None:
        """The stored bytes of the planned stripes (decoded data is larger).

        Returns:
            The sum of the planned splits' stored bytes (0 when every stripe is pruned).
        """
        if self._iceberg:
            return int(self._plan.nbytes)
        return sum(int(s.nbytes) for s in self._plan.splits)

    def get_read_tasks(self, parallelism: int, per_task_row_limit: int | None = None,
                       data_context: Any = None) -> list[ReadTask]:
        """One task per pack of splits (about ``parallelism`` of them; none when every
        stripe is pruned).

        Args:
            parallelism: the number of tasks Ray asks for (at least one is aimed at).
            per_task_row_limit: at most this many rows per task (passed to Ray's
                ``ReadTask``); ``None``: no limit.
            data_context: Ray's data context (unused).

        Returns:
            Ray ``ReadTask`` objects, each reading its pack of splits (one block per split)
            in a worker, with metadata giving its rows (when known), stored bytes and files.
        """
        plan = self.plan
        target = _task_target(parallelism)
        if self._iceberg:
            from aorc.iceberg.tasks import pack_file_tasks

            tasks = []
            for files in pack_file_tasks(plan, target, self._args["split_bytes"]):
                rows = (None if plan.num_rows is None
                        else sum(int(t.file.record_count) for t in files))
                meta = BlockMetadata(
                    num_rows=rows, size_bytes=sum(int(t.file.file_size_in_bytes)
                                                  for t in files),
                    input_files=tuple(t.file.file_path for t in files), exec_stats=None)
                tasks.append(ReadTask(functools.partial(_read_iceberg_blocks, plan, files),
                                      meta, schema=plan.schema,
                                      per_task_row_limit=per_task_row_limit))
            return tasks
        packs = pack_splits(balance_splits(plan.splits, target), target,
                            self._args["split_bytes"])
        tasks = []
        for pack in packs:
            rows = None if plan.num_rows is None else sum(s.num_rows for s in pack)
            meta = BlockMetadata(num_rows=rows, size_bytes=sum(s.nbytes for s in pack),
                                 input_files=tuple(dict.fromkeys(s.uri for s in pack)),
                                 exec_stats=None)
            tasks.append(ReadTask(functools.partial(_read_blocks, plan, pack), meta,
                                  schema=plan.schema, per_task_row_limit=per_task_row_limit))
        return tasks


def read_orc(source: Any, *, columns: Sequence[str] | None = None, filters: Any = None,
             storage_options: Mapping[str, Any] | None = None,
             split_bytes: int = DEFAULT_SPLIT_BYTES, partitioning: Any = "hive",
             timestamp_unit: str = "ns", keys: KeyProvider | None = None,
             snapshot_id: int | None = None, **read_args: Any) -> Any:
    """A Ray Dataset of ORC files read by aorc in the workers.

    Args:
        source: a file, a folder or prefix, or a list of files (as
            :func:`aorc.open_dataset`), or a pyiceberg ``Table`` or ``DataScan`` whose data
            files are ORC (deletes applied; a task reads whole data files).
        columns: top-level columns, in this order (default all; ``[]``: none, rows kept).
        filters: pyarrow-style list filters or a pyarrow expression on data and partition
            columns: files are pruned by partition values, stripes and row groups by
            statistics and bloom filters, rows filtered exactly (an Iceberg table: also a
            pyiceberg expression or its string form).
        storage_options: store settings, passed to the workers.
        split_bytes: stripes of a file are grouped into tasks of about this many bytes.
        partitioning: as :func:`aorc.open_dataset`.
        timestamp_unit: as :func:`aorc.open_dataset`.
        keys: an :class:`aorc.KeyProvider` for encrypted columns (:class:`aorc.InMemoryKeys`,
            ...), pickled to the workers; without it encrypted columns read as their masked
            copies.
        snapshot_id: an Iceberg table's snapshot to read (default its current one).
        **read_args: passed to ``ray.data.read_datasource`` (``override_num_blocks``,
            ``concurrency``, ``ray_remote_args``, ...).

    Returns:
        The Dataset.

    Raises:
        SchemaError: unknown columns, bad filters, incompatible file schemas.
        ObjectNotFoundError: nothing at ``source``.
    """
    import ray.data

    source_ = OrcDatasource(source, columns=columns, filters=filters,
                            storage_options=storage_options, split_bytes=split_bytes,
                            partitioning=partitioning, timestamp_unit=timestamp_unit,
                            keys=keys, snapshot_id=snapshot_id)
    return ray.data.read_datasource(source_, **read_args)


class OrcDatasink(Datasink):  # type: ignore[misc]
    """Each write task's rows as ORC part files ``part-<write id>-<task>-<i>.orc`` under
    ``dest`` (Hive folders by ``partition_cols``); see :func:`write_orc`.

    A local ``dest`` is committed by the driver: the tasks running on the driver's machine
    stage their files under hidden names (``.aorc-stage-<write id>-<attempt>-<name>``, not
    flushed to the disk), and :meth:`on_write_complete` flushes them all at once, renames
    them and flushes their folders (:func:`aorc.dataset.commit.commit_staged`). A task on
    another machine writes its files whole itself (flushed, renamed into place): the
    driver never has to see a file another machine wrote. Object stores: each task's files
    are written atomically by the task.

    Attributes:
        files: the files written, once the write is complete.
    """

    def __init__(self, dest: str | os.PathLike[str], *,
                 partition_cols: Sequence[str] | None = None,
                 storage_options: Mapping[str, Any] | None = None,
                 options: WriteOptions | None = None, keys: KeyProvider | None = None,
                 **write_options: Any) -> None:
        self._dest = os.fspath(dest)
        self._partition_cols = list(partition_cols or [])
        self._storage_options = storage_options
        self._options = options
        self._write_options = ({**write_options, "keys": check_keys(keys)} if keys is not None
                               else write_options)
        self._write_id = new_write_id()
        self._commit = local_commit(self._dest, storage_options)
        # the driver's node (set by on_write_start: the tasks on it stage their files)
        self._driver_node: str | None = None
        self.files: list[str] = []

    def get_name(self) -> str:
        """The write tasks' name.

        Returns:
            ``"AorcORC"``.
        """
        return "AorcORC"

    def on_write_start(self, schema: pa.Schema | None = None) -> None:
        """Note the driver's node (on the driver, before the tasks are sent): a task on it
        stages its files for the driver's commit.

        Args:
            schema: the first block's schema (unused).
        """
        import ray

        if self._commit is not None and ray.is_initialized():
            self._driver_node = ray.get_runtime_context().get_node_id()

    def _stages(self) -> bool:
        """Whether this task stages its files (it runs on the driver's node)."""
        if self._driver_node is None:
            return False
        import ray

        return bool(ray.get_runtime_context().get_node_id() == self._driver_node)

    def write(self, blocks: Iterable[Any], ctx: Any) -> list[tuple[str | None, str]]:
        """Write one task's blocks as part files named by the task's index.

        Args:
            blocks: the task's blocks (Arrow tables or pandas DataFrames); empty ones are
                skipped.
            ctx: Ray's task context (its ``task_idx`` names the files).

        Returns:
            ``(staged, final)`` names of the files of this task (none when there were no
            rows); ``staged`` is ``None`` for a file the task completed itself.

        Raises:
            SchemaError: bad options or a type ORC cannot hold.
            StoreError: a write failed.
        """
        tables = [_arrow(b) for b in blocks]
        tables = [t for t in tables if t.num_rows]
        if not tables:
            return []
        table = (tables[0] if len(tables) == 1
                 else pa.concat_tables(tables, promote_options="default"))
        common: dict[str, Any] = dict(
            partition_cols=self._partition_cols, storage_options=self._storage_options,
            options=self._options, write_options=self._write_options)
        if self._stages():
            return [(staged, final) for staged, final in run(stage_part_async(
                table, self._dest, self._write_id, int(ctx.task_idx), new_attempt(),
                **common))]
        return [(None, f) for f in run(write_part_async(
            table, self._dest, self._write_id, int(ctx.task_idx), **common))]

    def on_write_complete(self, write_result: Any) -> None:
        """Commit the staged files (flushed together, renamed, their folders flushed),
        delete those of attempts whose results Ray did not keep, and keep the files
        written (:attr:`files`).

        Args:
            write_result: Ray's write result, whose ``write_returns`` are the lists
                :meth:`write` returned.

        Raises:
            ObjectNotFoundError: a staged file is not visible to the driver.
            ObjectExistsError: a final file exists and ``storage_options`` say
                ``overwrite=False``.
            StoreError: the commit failed.
        """
        pairs = [tuple(p) for files in write_result.write_returns for p in files]
        staged = [(s, f) for s, f in pairs if s is not None]
        files = [f for s, f in pairs if s is None]
        if self._commit is not None and self._driver_node is not None:
            fsync, overwrite = self._commit
            files += commit_staged(staged, self._dest, fsync=fsync, overwrite=overwrite)
            # (a retried task's first attempt staged its files in the same folders)
            remove_staged({os.path.dirname(str(registry.local_path(f))) for f in files}
                          | {str(registry.local_path(self._dest))}, self._write_id)
        self.files = sorted(files)

    def on_write_failed(self, error: Exception) -> None:
        """Delete the staged files of this write (its final files never appeared).

        Args:
            error: the write's first error (left to Ray to raise).
        """
        if self._commit is not None and self._driver_node is not None:
            try:
                remove_staged_tree(self._dest, self._write_id)
            except OSError as exc:  # (Ray raises the write's own error)
                error.add_note(f"aorc could not delete the write's staged files "
                               f"(.aorc-stage-{self._write_id}-*) under {self._dest}: {exc}")


def _arrow(block: Any) -> pa.Table:
    if isinstance(block, pa.Table):
        return block
    return pa.Table.from_pandas(block, preserve_index=False)


def write_orc(ds: Any, dest: str | os.PathLike[str], *,
              partition_cols: Sequence[str] | None = None,
              storage_options: Mapping[str, Any] | None = None,
              options: WriteOptions | None = None, keys: KeyProvider | None = None,
              **write_options: Any) -> list[str]:
    """Write a Ray Dataset as ORC part files under ``dest``, by aorc in the workers.

    Files are named ``part-<write id>-<task>-<i>.orc`` (Hive ``key=value`` folders by
    ``partition_cols``): a retried task writes the same names again, and a file appears only
    once complete. A local ``dest`` is committed by the driver once every task succeeded:
    the tasks on the driver's machine stage their files under hidden names
    (``.aorc-stage-...``), the driver flushes them to the disk together, renames them and
    flushes their folders, so the files appear when the write returns and a crash after
    that cannot leave a partial one; a failed write leaves none of its files (staged files
    of retried or killed attempts are deleted too). A task on another machine of a cluster
    writes its files whole itself (flushed and renamed): a local path on a cluster of
    several machines must be a shared file system for the files to meet in one folder.
    Object stores: each file is written atomically by its task.

    Args:
        ds: the Dataset.
        dest: a local folder or an object-store prefix.
        partition_cols: columns making Hive folders, left out of the files.
        storage_options: store settings, passed to the workers.
        options: an :class:`aorc.WriteOptions` (``encrypt=`` and ``masks=`` encrypt columns).
        keys: the :class:`aorc.KeyProvider` of ``encrypt=``, pickled to the workers.
        **write_options: fields of :class:`aorc.WriteOptions`, overriding ``options``.

    Returns:
        The files written, sorted.

    Raises:
        SchemaError: bad options or a type ORC cannot hold.
        StoreError: a write failed (``ObjectExistsError``: a file exists and
            ``storage_options`` say ``overwrite=False``).
    """
    sink = OrcDatasink(dest, partition_cols=partition_cols, storage_options=storage_options,
                       options=options, keys=keys, **write_options)
    ds.write_datasink(sink)
    return sink.files
