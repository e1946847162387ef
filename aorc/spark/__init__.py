"""PySpark integration (3.5, 4.0-4.3; classic sessions and Spark Connect): ORC files written
and read by aorc inside Spark tasks.

:func:`write` writes each partition of a DataFrame as one ORC file through aorc from the
executors (``mapInArrow``; multipart uploads on S3) and returns the files written.
:func:`read` lists ORC files (local folders, ``s3://`` prefixes), splits them by stripes
across tasks and decodes them with aorc, filters pushed down, so a Spark job reads ORC
straight from an S3 endpoint without Hadoop's S3 connector::

    uris = aorc.spark.write(df, "s3://bucket/out", storage_options=s3, compression="zstd")
    df2 = aorc.spark.read(spark, "s3://bucket/out", filters=[("amount", ">", 10)],
                          storage_options=s3)

:func:`register` adds the same reader as a Spark Python data source, ``spark.read.format(
"aorc")``, with options ``columns`` (comma-separated), ``filters`` (JSON), ``splitBytes`` and
``storage.<name>`` for storage options (values parsed as JSON when they parse); it needs
PySpark 4.0 or later (Python data sources), filters pushed from ``.where()`` 4.1 or later.
Spark tells Python data sources nothing of the columns a query uses (up to 4.3), so name them
with ``columns`` (or ``columns=`` of :func:`read`, a ``mapInArrow`` that Spark cannot prune
either): every column read is decoded and handed to the JVM.

With Spark Connect (``SparkSession.builder.remote(...)``), :func:`write`, :func:`read` and
:func:`register` work the same (nothing touches ``SparkContext`` or the JVM), but aorc must be
importable by the server's Python workers. Version differences live in
:mod:`aorc.spark.compat`.

Executors need aorc importable and the store's settings: pass ``storage_options`` (endpoint
and credentials) explicitly, since executors do not see the driver's environment changes.
When aorc is used from a source checkout (not installed), its folder is added to the
``PYTHONPATH`` of a classic session's Python workers (enough for local mode).

Types: ORC timestamps are returned as Spark ``TimestampType`` (the stored wall clock taken as
UTC, as Spark's ORC reader does with a UTC JVM), nanoseconds truncated to microseconds, and
columns Spark marked ``timestamp_ntz`` as ``TimestampNTZType``; :func:`write` types
timestamps as Spark's ORC writer does (see :mod:`aorc.spark.compat`);
``char``/``varchar`` as strings; unions are not supported. Folders named ``key=value`` below
the listed root (Hive style) become columns: integers when every value is one, else strings.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.filters.ops import Op, spark_op
from aorc.read.reader import open_reader
from aorc.spark.compat import (
    NTZ,
    default_parallelism,
    executor_path,
    has_data_sources,
    is_connect,
    require_data_sources,
    to_arrow_schema,
)
from aorc.spark.compat import from_arrow_schema as to_spark_schema
from aorc.spark.plan import (
    DEFAULT_SPLIT_BYTES,
    Filters,
    Split,
    balance_splits,
    dnf,
    list_files,
    pack_splits,
    plan_read,
    read_schema,
)
from aorc.spark.writer import write

#: Spark's timestamps are microseconds: read them so, which holds every ORC timestamp
#: (Spark's 9999-12-31 "end of time" too).
SPARK_TIMESTAMP_UNIT = "us"

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "Split",
    "list_files",
    "pack_splits",
    "plan_read",
    "read",
    "read_schema",
    "register",
    "write",
]

#: Rows per Arrow batch handed to Spark.
SPARK_BATCH_ROWS = 65_536


# =========================================================================== executors

def _executor_path(spark: Any) -> None:
    """Let the session's Python workers import this aorc when it is not installed."""
    executor_path(spark)


def _run_async_iter(agen: AsyncGenerator[pa.RecordBatch, None]) -> Iterator[pa.RecordBatch]:
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
                     use_threads: bool | int = True) -> AsyncGenerator[pa.RecordBatch, None]:
    """The rows of one split as batches in Spark's Arrow types (``use_threads``: as
    :meth:`aorc.OrcReader.iter_batches`; see :func:`task_threads`)."""
    data_columns = [f.name for f in schema if f.name not in dict(split.partition)]
    if split.etag is not None:  # the version that was planned, or ObjectChangedError
        storage_options = {**(storage_options or {}), "if_match": split.etag}
    async with open_reader(split.uri, storage_options=storage_options,
                           timestamp_unit=SPARK_TIMESTAMP_UNIT) as reader:
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


async def _read_splits(splits: list[Split], columns: Sequence[str] | None,
                       schema: pa.Schema, storage_options: Mapping[str, Any] | None,
                       threads: int) -> AsyncGenerator[pa.RecordBatch, None]:
    for split in splits:  # in one event loop, so S3 clients are made once per task
        async for batch in read_split(split, columns, schema, storage_options,
                                      use_threads=threads):
            yield batch


def _read_task(packs: list[list[Split]], columns: Sequence[str] | None,
               schema: pa.Schema, storage_options: Mapping[str, Any] | None,
               threads: int = 1) -> Any:
    """The function of ``mapInArrow`` over ``range(len(packs))``: task ``i`` reads the splits
    ``packs[i]`` on ``threads`` decoding threads (the splits travel with the function, so
    no driver-side RDD is needed, which Spark Connect has not)."""
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        mine = [s for batch in batches for i in batch.column(0).to_pylist()
                for s in packs[i]]
        if mine:
            yield from _run_async_iter(_read_splits(mine, columns, schema, storage_options,
                                                    threads))
    return task


def read(spark: Any, uris: str | Sequence[str], columns: Sequence[str] | None = None,
         filters: Filters = None, *, storage_options: Mapping[str, Any] | None = None,
         split_bytes: int = DEFAULT_SPLIT_BYTES) -> Any:
    """A DataFrame of ORC files read by aorc in Spark tasks.

    Args:
        spark: the SparkSession.
        uris: files, local folders or ``s3://`` prefixes (hidden names skipped).
        columns: top-level columns to read (default all), in this order.
        filters: pyarrow-style filters (see :meth:`aorc.OrcReader.iter_batches`), or a
            pyarrow.compute expression over data (not partition) columns; stripes
            and row groups are pruned with statistics and bloom filters, rows filtered
            exactly. Filters on Hive partition columns skip whole files.
        storage_options: store settings, passed to the executors.
        split_bytes: stripes of a file are grouped into splits of about this many bytes.

    Returns:
        The DataFrame: one Spark partition per task of :func:`pack_splits` (several
        splits of ``split_bytes`` at most each).

    Raises:
        SchemaError: files with different schemas, unknown columns, bad filters.
        ObjectNotFoundError: a URI names nothing.
    """
    schema, splits = asyncio.run(plan_read(uris, columns, filters,
                                           storage_options=storage_options,
                                           split_bytes=split_bytes))
    arrow = spark_arrow_schema(schema)
    _executor_path(spark)
    cores = default_parallelism(spark)
    packs = pack_splits(balance_splits(splits, cores), cores, split_bytes) or [[]]
    task = _read_task(packs, columns, arrow, storage_options,
                      task_threads(cores, len(packs)))
    tasks = len(packs)
    df = spark.range(0, tasks, 1, tasks).mapInArrow(task, to_spark_schema(arrow))
    if columns is not None:  # in the order asked, partition columns last
        df = df.select(*columns, *[n for n in arrow.names if n not in columns])
    return df


# =========================================================================== data source

_PUSHABLE = (pa.types.is_integer, pa.types.is_string, pa.types.is_boolean, pa.types.is_date,
             pa.types.is_decimal)


def _and(filters: Filters, leaves: list[tuple[Any, ...]]) -> Filters:
    """``filters`` AND ``leaves``."""
    if not leaves:
        return filters
    clauses = dnf(filters) or [[]]
    return [[*c, *leaves] for c in clauses]


def spark_filter(f: Any, schema: pa.Schema) -> tuple[Any, ...] | None:
    """An aorc filter for a Spark data source filter whose meaning aorc shares exactly
    (comparisons on integer, string, boolean, date and decimal columns, null tests), else
    ``None``."""
    path = getattr(f, "attribute", None)
    if not path or len(path) != 1 or path[0] not in schema.names:
        return None
    name = path[0]
    op = spark_op(type(f).__name__)
    if op is None or type(f).__module__ != "pyspark.sql.datasource":
        return None
    if op in (Op.IS_NULL, Op.NOT_NULL):
        return (name, op.value)
    if not any(test(schema.field(name).type) for test in _PUSHABLE):
        return None
    value: Any = getattr(f, "value", None)
    if op == Op.IN:
        return (name, op.value, list(value)) if all(v is not None for v in value) else None
    return (name, op.value, value) if value is not None else None


@dataclass
class _SourceSettings:
    paths: list[str]
    columns: list[str] | None
    filters: Filters
    storage_options: dict[str, Any]
    split_bytes: int

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> _SourceSettings:
        items = {str(k).lower(): v for k, v in options.items()}
        paths = [p for p in (items.get("path"), *json.loads(items.get("paths", "[]"))) if p]
        if not paths:
            raise SchemaError("spark.read.format('aorc'): give a path (load(path))")
        storage = {}
        for key, value in options.items():
            if str(key).lower().startswith("storage."):
                try:
                    storage[str(key)[8:]] = json.loads(value)
                except json.JSONDecodeError:
                    storage[str(key)[8:]] = value
        columns = [c.strip() for c in items["columns"].split(",")] if "columns" in items \
            else None
        filters = json.loads(items["filters"]) if "filters" in items else None
        if filters:
            filters = [[tuple(x) for x in c] for c in dnf(filters)]
        return cls(paths, columns, filters, storage,
                   int(items.get("splitbytes", DEFAULT_SPLIT_BYTES)))

    def plan(self, extra: list[tuple[Any, ...]] | None = None) -> tuple[pa.Schema, list[Split]]:
        return asyncio.run(plan_read(self.paths, self.columns, _and(self.filters, extra or []),
                                     storage_options=self.storage_options or None,
                                     split_bytes=self.split_bytes))

    def schema(self) -> pa.Schema:
        return asyncio.run(read_schema(self.paths, self.columns,
                                       storage_options=self.storage_options or None))


HAVE_DATA_SOURCES = has_data_sources()


if HAVE_DATA_SOURCES:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class AorcDataSource(DataSource):
        """``spark.read.format("aorc").load(path)``: ORC files read by aorc."""

        pushdown = False  # set by register() when Spark pushes filters to Python sources
        cores: int | None = None  # set by register(): the session's default parallelism

        @classmethod
        def name(cls) -> str:
            return "aorc"

        def schema(self) -> Any:
            schema = _SourceSettings.from_options(self.options).schema()
            return to_spark_schema(spark_arrow_schema(schema))

        def reader(self, schema: Any) -> AorcSourceReader:
            settings = _SourceSettings.from_options(self.options)
            kind = AorcPushdownReader if self.pushdown else AorcSourceReader
            return kind(settings, to_arrow_schema(schema), self.cores)

    class AorcPartition(InputPartition):
        """The splits of one task (:func:`pack_splits`), and the decoding threads it may
        use (see :func:`task_threads`)."""

        def __init__(self, splits: tuple[Split, ...], threads: int) -> None:
            super().__init__(splits)
            self.threads = threads

    class AorcSourceReader(DataSourceReader):
        """Plans splits of stripes on the driver and reads them with aorc in tasks. The
        Arrow schema of the batches is Spark's (the one it checks them against), so no task
        opens a file only to learn it."""

        def __init__(self, settings: _SourceSettings, arrow: pa.Schema,
                     cores: int | None = None) -> None:
            self.settings = settings
            self.arrow = arrow
            self.cores = cores
            self.pushed: list[tuple[Any, ...]] = []

        def partitions(self) -> list[Any]:
            _, splits = self.settings.plan(self.pushed)
            if self.cores:
                splits = balance_splits(splits, self.cores)
            packs = pack_splits(splits, self.cores, self.settings.split_bytes)
            threads = task_threads(self.cores, len(packs))
            return [AorcPartition(tuple(p), threads) for p in packs]

        def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
            splits = getattr(partition, "value", None)
            if not splits:  # no split left: Spark's stand-in (None in 4.0)
                return
            threads = getattr(partition, "threads", True)
            yield from _run_async_iter(_read_splits(
                list(splits), self.settings.columns, self.arrow,
                self.settings.storage_options or None, threads))

    class AorcPushdownReader(AorcSourceReader):
        """The reader when Spark pushes filters: those aorc evaluates exactly are applied
        while reading (statistics, bloom filters, rows) and not re-checked by Spark."""

        def pushFilters(self, filters: list[Any]) -> Iterator[Any]:  # noqa: N802
            for f in filters:
                leaf = spark_filter(f, self.arrow)
                if leaf is None:
                    yield f
                else:
                    self.pushed.append(leaf)


def register(spark: Any) -> bool:
    """Register ``spark.read.format("aorc")`` when this Spark has Python data sources.

    Filters are pushed to aorc when ``spark.sql.python.filterPushdown.enabled`` is true at
    registration (Spark >= 4.1; register again after changing it).

    Returns:
        True (the data source was registered).

    Raises:
        UnsupportedFeatureError: this PySpark has no Python data sources (before 4.0).
    """
    require_data_sources(spark)
    _executor_path(spark)
    conf = str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false"))
    # the tasks' decoding threads follow the cores (free to learn but over Spark Connect)
    cores = None if is_connect(spark) else default_parallelism(spark)
    settings = {"pushdown": conf.lower() == "true", "cores": cores}
    spark.dataSource.register(type("AorcDataSource", (AorcDataSource,), settings))
    return True
