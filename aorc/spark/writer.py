"""Writing a DataFrame as ORC files in Spark tasks: :func:`write`, one file per partition
written by aorc from a ``mapInArrow`` task.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

import aorc
from aorc.errors import SchemaError
from aorc.io import registry
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.spark.compat import (
    executor_path,
    orc_schema,
    storage_schema,
    to_arrow_schema,
    unbounded_arrow_batch_bytes,
)

__all__ = ["write"]


async def _write_partition(batches: Iterator[pa.RecordBatch], uri: str,
                           storage_options: Mapping[str, Any] | None,
                           options: WriteOptions,
                           schema: pa.Schema | None = None,
                           keys: KeyProvider | None = None) -> tuple[int, int]:
    """Write a partition's batches as one file (none when it has no rows); ``schema``: the
    Arrow schema to write and cast the batches to (default: the batches')."""
    batch: pa.RecordBatch | None = await asyncio.to_thread(next, batches, None)
    while batch is not None and batch.num_rows == 0:
        batch = await asyncio.to_thread(next, batches, None)
    if batch is None:
        return 0, 0
    await registry.make_parents(uri)
    storage = schema if schema is not None else batch.schema
    writer = aorc.open_writer(uri, storage, options, storage_options=storage_options,
                              keys=keys)
    async with writer:
        while batch is not None:
            await writer.write(_stored(batch, storage))
            batch = await asyncio.to_thread(next, batches, None)
    return writer.num_rows, writer.bytes_written


def _stored(batch: pa.RecordBatch, storage: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the columns whose storage type differs cast to it."""
    if batch.schema == storage:
        return batch
    arrays = [column if column.type == field.type else column.cast(field.type)
              for column, field in zip(batch.columns, storage, strict=True)]
    return pa.RecordBatch.from_arrays(arrays, schema=storage)


def _write_task(prefix: str, job: str, storage_options: Mapping[str, Any] | None,
                options: WriteOptions, schema: pa.Schema,
                keys: KeyProvider | None = None) -> Any:
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import TaskContext

        context = TaskContext.get()
        number = context.partitionId() if context is not None else 0
        uri = registry.join(prefix, f"part-{number:05d}-{job}.orc")
        rows, size = asyncio.run(_write_partition(iter(batches), uri, storage_options,
                                                  options, schema, keys))
        out = {"uri": [uri] if rows else [], "rows": [rows] if rows else [],
               "bytes": [size] if rows else []}
        yield pa.RecordBatch.from_pydict(out, schema=pa.schema(
            [("uri", pa.string()), ("rows", pa.int64()), ("bytes", pa.int64())]))
    return task


def write(df: Any, uri_prefix: str, options: WriteOptions | None = None, *,
          storage_options: Mapping[str, Any] | None = None, keys: KeyProvider | None = None,
          **keywords: Any) -> list[str]:
    """Write a DataFrame as ORC files under ``uri_prefix``, one per non-empty partition.

    Files are named ``part-<partition>-<job id>.orc``; a retried task rewrites the same
    object, so retries leave no duplicates. Each file is complete or absent. On Spark 4 the
    job runs without the byte bound of the Arrow batches Spark sends to Python (see
    :func:`aorc.spark.compat.unbounded_arrow_batch_bytes`) unless the session sets one.

    Args:
        df: the DataFrame.
        uri_prefix: a local folder or an ``s3://bucket/prefix``.
        storage_options: store settings, passed to the executors (see
            :func:`aorc.io.open_store`).
        options: an :class:`aorc.WriteOptions` (default: the defaults).
        keys: the key provider of the master keys ``encrypt=`` names (see
            :func:`aorc.open_writer`); pickled into the tasks, so executors must reach it.
            Files are ORC Java's: Spark reads them with ``orc.key.provider`` holding the
            same master keys.
        **keywords: fields of :class:`aorc.WriteOptions`, overriding ``options``.

    Returns:
        The URIs of the files written, in partition order.

    Raises:
        SchemaError: bad writer options, ``encrypt=`` without ``keys=`` (checked before
            any task runs).
    """
    arrow_schema = to_arrow_schema(df.schema)
    orc = orc_schema(arrow_schema)  # TimestampNTZType stored as Spark stores it
    options = WriteOptions.create(options, keywords, caller="aorc.spark.write")
    options.resolve(orc)  # check column names before any task
    if options.encrypt and keys is None:
        raise SchemaError("encrypt= needs keys= (a key provider such as aorc.InMemoryKeys)")
    if storage_options is not None:
        registry.check_options(uri_prefix, storage_options)  # fail fast on bad settings
    executor_path(df.sparkSession)
    job = uuid.uuid4().hex[:16]
    task = _write_task(uri_prefix, job, storage_options, options,
                       storage_schema(arrow_schema), keys)
    with unbounded_arrow_batch_bytes(df.sparkSession):  # Spark 4's per-row check: see there
        rows = df.mapInArrow(task, "uri string, rows long, bytes long").collect()
    return sorted(r["uri"] for r in rows)
