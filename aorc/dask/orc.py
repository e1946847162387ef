"""Dask's ORC reader and writer on aorc: :func:`read_orc` and :func:`to_orc`."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

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
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.read.keyed import check_keys
from aorc.sync import run

__all__ = ["read_orc", "to_orc"]


def _cores() -> int:
    """The threads of the current Dask distributed client, else this machine's CPUs."""
    try:
        from distributed import get_client

        return max(1, int(sum(get_client().nthreads().values())))
    except (ImportError, ValueError):
        return os.cpu_count() or 1


def _to_pandas(table: pa.Table) -> Any:
    import pandas as pd

    if not table.num_columns:  # keeps the row count
        return pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    return table.to_pandas()


def _read_pack(pack: list[Split], plan: SplitPlan, columns: Sequence[str] | None = None
               ) -> Any:
    """One Dask partition: the rows of ``pack`` (``columns``: Dask's projection)."""
    if columns is not None:
        plan = plan.project(list(columns))
    return _to_pandas(run(read_splits(plan, pack)))  # (the worker's aorc loop, kept)


def _read_iceberg_pack(pack: list[Any], plan: Any, columns: Sequence[str] | None = None
                       ) -> Any:
    """One Dask partition of an Iceberg table: the rows of the data files of ``pack``."""
    from aorc.iceberg.tasks import read_iceberg_table

    if columns is not None:
        plan = plan.project(list(columns))
    return _to_pandas(run(read_iceberg_table(plan, pack)))


def read_orc(source: Any, *, columns: Sequence[str] | None = None, filters: Any = None,
             storage_options: Mapping[str, Any] | None = None,
             split_bytes: int = DEFAULT_SPLIT_BYTES, partitioning: Any = "hive",
             timestamp_unit: str = "ns", keys: KeyProvider | None = None,
             snapshot_id: int | None = None) -> Any:
    """A Dask DataFrame of ORC files read by aorc in the workers.

    Args:
        source: a file, a folder or prefix, or a list of files (as
            :func:`aorc.open_dataset`), or a pyiceberg ``Table`` or ``DataScan`` whose data
            files are ORC (deletes applied; a partition reads whole data files).
        columns: top-level columns, in this order (default all; ``[]``: none, rows kept).
        filters: pyarrow-style list filters or a pyarrow expression on data and partition
            columns: files are pruned by partition values, stripes and row groups by
            statistics and bloom filters, rows filtered exactly (an Iceberg table: also a
            pyiceberg expression or its string form).
        storage_options: store settings, passed to the workers.
        split_bytes: stripes of a file are grouped into partitions of about this many
            stored bytes.
        partitioning: as :func:`aorc.open_dataset`.
        timestamp_unit: as :func:`aorc.open_dataset`.
        keys: an :class:`aorc.KeyProvider` for encrypted columns, pickled to the workers;
            without it encrypted columns read as their masked copies.
        snapshot_id: an Iceberg table's snapshot to read (default its current one).

    Returns:
        The DataFrame: one partition per pack of stripe splits (at least one).

    Raises:
        SchemaError: unknown columns, bad filters, incompatible file schemas.
        ObjectNotFoundError: nothing at ``source``.
    """
    import dask.dataframe as dd

    cores = _cores()
    if is_iceberg_source(source):
        from aorc.iceberg.tasks import pack_file_tasks, plan_iceberg

        if keys is not None:
            raise SchemaError("keys= applies to ORC files, not to an Iceberg table")
        iceberg = run(plan_iceberg(source, columns, filters, storage_options=storage_options,
                                   snapshot_id=snapshot_id))
        files = pack_file_tasks(iceberg, cores, split_bytes) or [[]]
        return dd.from_map(_read_iceberg_pack, files, args=[iceberg],
                           meta=_to_pandas(iceberg.schema.empty_table()),
                           label="aorc-read-iceberg", enforce_metadata=False)
    if snapshot_id is not None:
        raise SchemaError("snapshot_id= applies to an Iceberg table")
    plan = run(plan_splits(source, columns, filters, storage_options=storage_options,
                           split_bytes=split_bytes, partitioning=partitioning,
                           timestamp_unit=timestamp_unit, keys=check_keys(keys)))
    packs = pack_splits(balance_splits(plan.splits, cores), cores, split_bytes) or [[]]
    meta = _to_pandas(plan.schema.empty_table())
    return dd.from_map(_read_pack, packs, args=[plan], meta=meta, label="aorc-read-orc",
                       enforce_metadata=False)


def _write_partition(df: Any, write_id: str, dest: str, partition_cols: list[str],
                     storage_options: Mapping[str, Any] | None,
                     options: WriteOptions | None, write_options: dict[str, Any],
                     partition_info: dict[str, Any] | None = None) -> Any:
    import pandas as pd

    task = partition_info["number"] if partition_info is not None else 0
    table = pa.Table.from_pandas(df, preserve_index=False)
    files = run(write_part_async(table, dest, write_id, task, partition_cols=partition_cols,
                                 storage_options=storage_options, options=options,
                                 write_options=write_options))
    return pd.DataFrame({"path": pd.Series(files, dtype=object)})


def to_orc(df: Any, dest: str | os.PathLike[str], *, partition_cols: Sequence[str] | None = None,
           storage_options: Mapping[str, Any] | None = None,
           options: WriteOptions | None = None, keys: KeyProvider | None = None,
           compute: bool = True, **write_options: Any) -> Any:
    """Write a Dask DataFrame as ORC part files under ``dest``, one task per partition.

    Files are named ``part-<write id>-<partition>-<i>.orc`` (Hive ``key=value`` folders by
    ``partition_cols``): a retried task writes the same names again, and a file appears only
    once complete. The index is not written.

    Args:
        df: the DataFrame.
        dest: a local folder or an object-store prefix.
        partition_cols: columns making Hive folders, left out of the files.
        storage_options: store settings, passed to the workers.
        options: an :class:`aorc.WriteOptions` (``encrypt=`` and ``masks=`` encrypt columns).
        keys: the :class:`aorc.KeyProvider` of ``encrypt=``, pickled to the workers.
        compute: write now and return the files (``False``: a lazy Dask DataFrame of the
            files' paths, one partition per task).
        **write_options: fields of :class:`aorc.WriteOptions`, overriding ``options``.

    Returns:
        The files written, sorted (or the lazy DataFrame of them).

    Raises:
        SchemaError: bad options or a type ORC cannot hold.
        StoreError: a write failed.
    """
    import pandas as pd

    meta = pd.DataFrame({"path": pd.Series([], dtype=object)})
    if keys is not None:
        write_options = {**write_options, "keys": check_keys(keys)}
    written = df.map_partitions(_write_partition, new_write_id(), os.fspath(dest),
                                list(partition_cols or []), storage_options, options,
                                write_options, meta=meta, enforce_metadata=False,
                                align_dataframes=False)
    if not compute:
        return written
    return sorted(written.compute()["path"].tolist())
