"""The Spark Python data source ``spark.read.format("aorc")`` (PySpark 4.0 and later).

:func:`register` registers it; the source plans with :mod:`aorc.spark.plan` and its tasks
read as :func:`aorc.spark.read`'s do (:mod:`aorc.spark.reader`). Its options are ``path`` (or
``paths``, JSON), ``columns`` (comma-separated), ``filters`` (JSON), ``splitBytes``,
``storage.<name>`` (storage options, values parsed as JSON when they parse) and, for
encrypted columns, ``keysFile`` (a local file of ``NAME[@VERSION]=HEX`` lines, read where
Spark plans the read) or ``keyProvider`` (a Hadoop KMS URL);
:func:`spark_filter` translates the filters Spark pushes (4.1 and later). The source classes
exist only when this PySpark has Python data sources (:data:`HAVE_DATA_SOURCES`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from aorc.dataset.partitioning import normalize_filters
from aorc.errors import SchemaError
from aorc.filters.ops import Op, spark_op
from aorc.keys import HadoopKMS, InMemoryKeys, KeyProvider
from aorc.spark.compat import (
    default_parallelism,
    executor_path,
    has_data_sources,
    is_connect,
    require_data_sources,
    session_time_zone,
    to_arrow_schema,
)
from aorc.spark.compat import from_arrow_schema as to_spark_schema
from aorc.spark.plan import (
    DEFAULT_SPLIT_BYTES,
    Filters,
    Split,
    plan_read,
    read_schema,
)
from aorc.spark.reader import pack_tasks, read_splits, run_async_iter, spark_arrow_schema

__all__ = ["HAVE_DATA_SOURCES", "register", "spark_filter"]


_PUSHABLE = (pa.types.is_integer, pa.types.is_string, pa.types.is_boolean, pa.types.is_date,
             pa.types.is_decimal)


def _and(filters: Filters, leaves: list[tuple[Any, ...]]) -> Filters:
    """``filters`` AND ``leaves``."""
    if not leaves:
        return filters
    clauses = normalize_filters(filters or None) or [[]]
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


_INLINE_KEYS = ("key", "keys", "masterkey", "masterkeys")


def _source_keys(items: Mapping[str, str]) -> KeyProvider | None:
    """The key provider of the options ``keysfile`` or ``keyprovider`` (lower-cased), or
    ``None``; keys themselves are refused as options, since Spark shows options in its
    plans and logs (the error does not repeat them)."""
    inline = [k for k in items if k in _INLINE_KEYS]
    if inline:
        raise SchemaError(f"spark.read.format('aorc'): the option {inline[0]!r} is not "
                          f"taken, since Spark shows options in its plans and logs: give "
                          f"keysFile (a local file of NAME[@VERSION]=HEX lines) or "
                          f"keyProvider (a Hadoop KMS URL)")
    path, url = items.get("keysfile"), items.get("keyprovider")
    if path and url:
        raise SchemaError("spark.read.format('aorc'): give keysFile or keyProvider, not both")
    try:
        if path:
            return InMemoryKeys.from_file(path)
        return HadoopKMS(url) if url else None
    except ValueError as exc:
        raise SchemaError(f"spark.read.format('aorc'): {exc}") from None
    except OSError as exc:
        raise SchemaError(f"spark.read.format('aorc'): keysFile {path}: cannot read it "
                          f"({type(exc).__name__})") from None


@dataclass
class _SourceSettings:
    paths: list[str]
    columns: list[str] | None
    filters: Filters
    storage_options: dict[str, Any]
    split_bytes: int
    time_zone: str = "UTC"
    keys: KeyProvider | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str], time_zone: str = "UTC"
                     ) -> _SourceSettings:
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
        filters = normalize_filters(json.loads(items["filters"]) or None) \
            if "filters" in items else None
        return cls(paths, columns, filters, storage,
                   int(items.get("splitbytes", DEFAULT_SPLIT_BYTES)), time_zone,
                   _source_keys(items))

    def plan(self, extra: list[tuple[Any, ...]] | None = None) -> tuple[pa.Schema, list[Split]]:
        return asyncio.run(plan_read(self.paths, self.columns, _and(self.filters, extra or []),
                                     storage_options=self.storage_options or None,
                                     split_bytes=self.split_bytes,
                                     time_zone=self.time_zone, keys=self.keys))

    def schema(self) -> pa.Schema:
        return asyncio.run(read_schema(self.paths, self.columns,
                                       storage_options=self.storage_options or None,
                                       time_zone=self.time_zone))


HAVE_DATA_SOURCES = has_data_sources()


if HAVE_DATA_SOURCES:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class AorcDataSource(DataSource):
        """``spark.read.format("aorc").load(path)``: ORC files read by aorc."""

        pushdown = False  # set by register() when Spark pushes filters to Python sources
        cores: int | None = None  # set by register(): the session's default parallelism
        time_zone = "UTC"  # set by register(): the session's time zone (partition folders)

        @classmethod
        def name(cls) -> str:
            return "aorc"

        def schema(self) -> Any:
            schema = _SourceSettings.from_options(self.options, self.time_zone).schema()
            return to_spark_schema(spark_arrow_schema(schema))

        def reader(self, schema: Any) -> AorcSourceReader:
            settings = _SourceSettings.from_options(self.options, self.time_zone)
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
            packs, threads = pack_tasks(splits, self.cores, self.settings.split_bytes)
            return [AorcPartition(tuple(p), threads) for p in packs]

        def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
            splits = getattr(partition, "value", None)
            if not splits:  # no split left: Spark's stand-in (None in 4.0)
                return
            threads = getattr(partition, "threads", True)
            yield from run_async_iter(read_splits(
                list(splits), self.settings.columns, self.arrow,
                self.settings.storage_options or None, threads, self.settings.keys))

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
    registration (Spark >= 4.1), and timestamp partition folders are read in the session
    time zone at registration (``spark.sql.session.timeZone``): register again after
    changing either.

    Returns:
        True (the data source was registered).

    Raises:
        UnsupportedFeatureError: this PySpark has no Python data sources (before 4.0).

    Args:
        spark: the ``SparkSession`` (classic or Spark Connect).
    """
    require_data_sources(spark)
    executor_path(spark)
    conf = str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false"))
    # the tasks' decoding threads follow the cores (free to learn but over Spark Connect)
    cores = None if is_connect(spark) else default_parallelism(spark)
    settings = {"pushdown": conf.lower() == "true", "cores": cores,
                "time_zone": session_time_zone(spark)}
    spark.dataSource.register(type("AorcDataSource", (AorcDataSource,), settings))
    return True
