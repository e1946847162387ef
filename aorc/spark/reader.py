"""Reading ORC files in Spark tasks: :func:`read`, a DataFrame over a ``mapInArrow``.

:func:`read` plans on the driver (:mod:`aorc.spark.plan`), then runs one ``mapInArrow``
task per pack of splits: :func:`read_split` decodes a split with aorc into batches of
Spark's Arrow types (:func:`spark_arrow_schema`), on :func:`task_threads` threads.
:func:`read_splits` and :func:`run_async_iter` are the task's body, shared with the data
source (:mod:`aorc.spark.source`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from aorc.errors import UnsupportedFeatureError
from aorc.keys import KeyProvider
from aorc.read.reader import open_reader
from aorc.spark.compat import NTZ, default_parallelism, executor_path, session_time_zone
from aorc.spark.compat import from_arrow_schema as to_spark_schema
from aorc.spark.plan import (
    DEFAULT_SPLIT_BYTES,
    Filters,
    Split,
    balance_splits,
    pack_splits,
    plan_read,
)

__all__ = [
    "SPARK_BATCH_ROWS",
    "SPARK_TIMESTAMP_UNIT",
    "pack_tasks",
    "read",
    "read_split",
    "read_splits",
    "run_async_iter",
    "spark_arrow_schema",
    "task_threads",
]

#: Spark's timestamps are microseconds: read them so, which holds every ORC timestamp
#: (Spark's 9999-12-31 "end of time" too).
SPARK_TIMESTAMP_UNIT = "us"
#: Rows per Arrow batch handed to Spark.
SPARK_BATCH_ROWS = 65_536


# =========================================================================== executors

def run_async_iter(agen: AsyncGenerator[pa.RecordBatch, None]) -> Iterator[pa.RecordBatch]:
    """Drive an async generator from synchronous code (a Spark task), batch by batch; the
    loop's shutdown closes its S3 clients."""
    async def step() -> pa.RecordBatch:
        return await agen.__anext__()

    with asyncio.Runner() as runner:
        try:
            while True:
                try:
                    batch = runner.run(step())
                except StopAsyncIteration:
                    return
                yield batch
        finally:
            runner.run(agen.aclose())


# =========================================================================== read

def _spark_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Spark accepts for an aorc column."""
    if pa.types.is_timestamp(t):  # TimestampNTZType where Spark marked it so
        return NTZ if t == NTZ else pa.timestamp("us", "UTC")
    if pa.types.is_union(t):
        raise UnsupportedFeatureError("Spark cannot hold ORC union columns")
    if pa.types.is_list(t):
        return pa.list_(pa.field("element", _spark_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(_spark_type(t.key_type), _spark_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_type(f.type)) for f in t])
    return t


def spark_arrow_schema(schema: pa.Schema) -> pa.Schema:
    """The Arrow schema of the batches :func:`read` hands to Spark for aorc's ``schema``."""
    return pa.schema([pa.field(f.name, _spark_type(f.type)) for f in schema])


def _to_spark(batch: pa.RecordBatch, schema: pa.Schema,
              partition: tuple[tuple[str, Any], ...]) -> pa.RecordBatch:
    arrays = [batch.column(f.name).cast(f.type, safe=False)
              for f in schema if f.name in batch.schema.names]
    for name, value in partition:
        arrays.append(pa.array([value] * batch.num_rows, schema.field(name).type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


async def read_split(split: Split, columns: Sequence[str] | None, schema: pa.Schema,
                     storage_options: Mapping[str, Any] | None,
                     batch_size: int = SPARK_BATCH_ROWS, *,
                     use_threads: bool | int = True,
                     keys: KeyProvider | None = None) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of one split as batches in Spark's Arrow types (``use_threads``: as
    :meth:`aorc.OrcReader.iter_batches`; see :func:`task_threads`; ``keys``: the key
    provider of encrypted columns, see :func:`aorc.open_reader`)."""
    data_columns = [f.name for f in schema if f.name not in dict(split.partition)]
    if split.etag is not None:  # the version that was planned, or ObjectChangedError
        storage_options = {**(storage_options or {}), "if_match": split.etag}
    async with open_reader(split.uri, storage_options=storage_options,
                           timestamp_unit=SPARK_TIMESTAMP_UNIT, keys=keys) as reader:
        wanted = data_columns if columns is not None else None
        async for batch in reader.iter_batches(wanted, batch_size=batch_size,
                                               filters=split.filters, stripes=split.stripes,
                                               use_threads=use_threads):
            yield _to_spark(batch, schema, split.partition)


def task_threads(cores: int | None, tasks: int) -> int:
    """Decoding threads for each of ``tasks`` read tasks on ``cores`` cores: Spark already
    runs one task per core, so a task decodes on one thread unless cores would stay idle
    (fewer tasks than cores). ``cores`` unknown (``None``): this machine's CPUs."""
    cores = cores or os.cpu_count() or 1
    return max(1, cores // max(1, min(tasks, cores)))


def pack_tasks(splits: list[Split], cores: int | None, split_bytes: int
               ) -> tuple[list[list[Split]], int]:
    """The read tasks of ``splits`` for ``cores`` cores (``None``: unknown): the splits
    balanced over the cores and packed (:func:`~aorc.spark.plan.pack_splits`), and the
    decoding threads each task may use (:func:`task_threads`).

    Args:
        splits: the planned splits.
        cores: Spark's default parallelism, if known.
        split_bytes: the most bytes of a split.

    Returns:
        The tasks' splits, and the threads of each task.
    """
    if cores:
        splits = balance_splits(splits, cores)
    packs = pack_splits(splits, cores, split_bytes)
    return packs, task_threads(cores, len(packs))


async def read_splits(splits: list[Split], columns: Sequence[str] | None,
                      schema: pa.Schema, storage_options: Mapping[str, Any] | None,
                      threads: int, keys: KeyProvider | None = None
                      ) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of ``splits``, one after another, as :func:`read_split` gives them (a read
    task's body)."""
    for split in splits:  # in one event loop, so S3 clients are made once per task
        async for batch in read_split(split, columns, schema, storage_options,
                                      use_threads=threads, keys=keys):
            yield batch


def _read_task(packs: list[list[Split]], columns: Sequence[str] | None,
               schema: pa.Schema, storage_options: Mapping[str, Any] | None,
               threads: int = 1, keys: KeyProvider | None = None) -> Any:
    """The function of ``mapInArrow`` over ``range(len(packs))``: task ``i`` reads the splits
    ``packs[i]`` on ``threads`` decoding threads (the splits travel with the function, so
    no driver-side RDD is needed, which Spark Connect has not)."""
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        mine = [s for batch in batches for i in batch.column(0).to_pylist()
                for s in packs[i]]
        if mine:
            yield from run_async_iter(read_splits(mine, columns, schema, storage_options,
                                                  threads, keys))
    return task


def read(spark: Any, uris: str | Sequence[str], columns: Sequence[str] | None = None,
         filters: Filters = None, *, storage_options: Mapping[str, Any] | None = None,
         split_bytes: int = DEFAULT_SPLIT_BYTES, keys: KeyProvider | None = None) -> Any:
    """A DataFrame of ORC files read by aorc in Spark tasks.

    Args:
        spark: the SparkSession.
        uris: files, local folders or ``s3://`` prefixes (hidden names skipped).
        columns: top-level columns to read (default all), in this order.
        filters: pyarrow-style filters (see :meth:`aorc.OrcReader.iter_batches`), or a
            pyarrow.compute expression over data (not partition) columns; stripes
            and row groups are pruned with statistics and bloom filters, rows filtered
            exactly. Filters on Hive partition columns skip whole files (texts are
            parsed as the folders are, so ``("dt", "==", "2024-01-01")`` compares dates).
        storage_options: store settings, passed to the executors.
        split_bytes: stripes of a file are grouped into splits of about this many bytes.
        keys: an :class:`aorc.KeyProvider` for encrypted columns (see
            :func:`aorc.open_reader`): columns whose key it holds read decrypted, the others
            as their masked copy; filters prune with the decrypted statistics. The provider
            is pickled into the tasks: executors need to reach it (an
            :class:`aorc.InMemoryKeys` travels with its master keys; a
            :class:`aorc.HadoopKMS` with its URL only).

    Returns:
        The DataFrame: one Spark partition per task of :func:`pack_splits` (several
        splits of ``split_bytes`` at most each).

    Raises:
        SchemaError: files with different schemas, unknown columns, bad filters.
        ObjectNotFoundError: a URI names nothing.
    """
    schema, splits = asyncio.run(plan_read(uris, columns, filters,
                                           storage_options=storage_options,
                                           split_bytes=split_bytes,
                                           time_zone=session_time_zone(spark),
                                           keys=keys))
    arrow = spark_arrow_schema(schema)
    executor_path(spark)
    cores = default_parallelism(spark)
    packs, threads = pack_tasks(splits, cores, split_bytes)
    packs = packs or [[]]  # an empty read is one empty task
    task = _read_task(packs, columns, arrow, storage_options, threads, keys)
    tasks = len(packs)
    df = spark.range(0, tasks, 1, tasks).mapInArrow(task, to_spark_schema(arrow))
    if columns is not None:  # in the order asked, partition columns last
        df = df.select(*columns, *[n for n in arrow.names if n not in columns])
    return df
