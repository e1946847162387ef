"""Hive transactional (ACID) tables into Spark DataFrames: :func:`read_acid_table`.

Pointed at such a table, ``spark.read.orc`` returns Hive's raw event records (``operation,
originalTransaction, ..., row``) with deletes not applied. :func:`read_acid_table` plans on
the driver with :func:`aorc.open_acid_table` (listing, Hive's folder selection, the table's
schema), then reads in ``mapInArrow`` tasks: each task takes some of the data files of a
partition, loads that partition's delete events and returns the table's rows with deletes
applied, filters pushed down. No JVM access, so it works on classic sessions and on Spark
Connect alike (aorc must be importable by the workers).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa

from aorc.dataset.acid import AcidTable, WriteIdList, open_acid_table
from aorc.io import IOStats
from aorc.spark.compat import default_parallelism, executor_path
from aorc.spark.compat import from_arrow_schema as to_spark_schema
from aorc.spark.reader import (
    SPARK_BATCH_ROWS,
    SPARK_TIMESTAMP_UNIT,
    run_async_iter,
    spark_arrow_schema,
)

__all__ = ["read_acid_table"]

#: A task's work: (index of the partition, paths of the data files it reads there).
_Unit = tuple[int, tuple[str, ...]]


def _units(table: AcidTable, tasks: int) -> list[list[_Unit]]:
    """The data files of every partition in about ``tasks`` groups (a partition's files
    may be spread over several tasks; each then loads its delete events)."""
    files = [(i, f.path) for i, p in enumerate(table.partitions) for f in p.data]
    packs: list[list[_Unit]] = []
    per = max(1, -(-len(files) // max(1, tasks)))
    for start in range(0, len(files), per):
        chunk = files[start:start + per]
        units: dict[int, list[str]] = {}
        for i, path in chunk:
            units.setdefault(i, []).append(path)
        packs.append([(i, tuple(paths)) for i, paths in units.items()])
    return packs


def _task(table: AcidTable, packs: list[list[_Unit]], columns: list[str], filters: Any,
          schema: pa.Schema, storage_options: Mapping[str, Any] | None) -> Any:
    """The function of ``mapInArrow`` over ``range(len(packs))``."""
    partitions = table.partitions
    settings = (table.root, table.data_schema, table.partition_schema,
                table.valid_write_ids, table.row_id, table.bucket_v1)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        mine = [u for batch in batches for i in batch.column(0).to_pylist()
                for u in packs[i]]
        if not mine:
            return
        root, data_schema, part_schema, ids, row_id, v1 = settings
        parts = []
        for i, paths in mine:
            p = partitions[i]
            parts.append(replace(p, data=[f for f in p.data if f.path in paths]))
        sub = AcidTable(root, parts, data_schema, part_schema, ids, row_id=row_id,
                        columns=None, filters=None, storage_options=storage_options,
                        timestamp_unit=SPARK_TIMESTAMP_UNIT, max_open_files=8,
                        io=IOStats(), bucket_v1=v1)
        yield from run_async_iter(_spark_batches(sub, columns, filters, schema))

    return task


async def _spark_batches(table: AcidTable, columns: list[str], filters: Any,
                         schema: pa.Schema) -> AsyncGenerator[pa.RecordBatch, None]:
    async for batch in table.iter_batches(columns, filters, batch_size=SPARK_BATCH_ROWS):
        yield pa.RecordBatch.from_arrays(
            [batch.column(i).cast(f.type, safe=False) for i, f in enumerate(schema)],
            schema=schema)


def read_acid_table(spark: Any, uri: str | os.PathLike[str],
                    columns: Sequence[str] | None = None, filters: Any = None, *,
                    valid_write_ids: str | WriteIdList | None = None,
                    row_id: bool = False, schema: pa.Schema | None = None,
                    storage_options: Mapping[str, Any] | None = None) -> Any:
    """A DataFrame of a Hive transactional table's rows, deletes applied, read by aorc in
    Spark tasks (see :func:`aorc.open_acid_table` for what is read).

    Args:
        spark: the SparkSession (classic or Spark Connect).
        uri: the table's folder (local, ``s3://``, any store of aorc's).
        columns: top-level columns (table, partition or ``ROW__ID``), default all.
        filters: list-form filters or a pyarrow expression, on table and partition columns.
        valid_write_ids: Hive's valid write-id list (see :func:`aorc.open_acid_table`).
        row_id: add Hive's ``ROW__ID`` column.
        schema: the table's columns (``None``: those of its newest data file; needed for a
            table with no data files).
        storage_options: store settings, passed to the executors.

    Returns:
        A ``pyspark.sql.DataFrame`` (lazy: Spark tasks read the files when an action runs),
        with the columns asked for; the data files are spread over about
        the session's default parallelism in tasks.

    Raises:
        ObjectNotFoundError: nothing exists at ``uri``.
        SchemaError: bad columns, filters or write-id list.
    """
    table = asyncio.run(open_acid_table(uri, valid_write_ids=valid_write_ids,
                                        row_id=row_id, schema=schema,
                                        storage_options=storage_options,
                                        timestamp_unit=SPARK_TIMESTAMP_UNIT))
    names = list(columns) if columns is not None else table.schema.names
    table.check(names, filters)
    arrow = spark_arrow_schema(pa.schema([table.schema.field(n) for n in names]))
    executor_path(spark)
    packs = _units(table, default_parallelism(spark)) or [[]]
    task = _task(table, packs, names, filters, arrow, storage_options)
    return spark.range(0, len(packs), 1, len(packs)).mapInArrow(task, to_spark_schema(arrow))
