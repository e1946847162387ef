"""Polars scans of ORC files and datasets: an IO source (``polars.io.plugins``) over aorc.

A scan opens the file or dataset once (its tails, for the schema) and hands Polars a
:class:`polars.LazyFrame`. Each time Polars runs it, the source gets the projected columns,
the predicate, a row limit and a batch size: the columns become aorc's ``columns=``, the
predicate is translated into aorc filters where it maps (:mod:`aorc.polars.predicate`) to
prune partitions, stripes, row groups and bloom-filtered groups, and is then applied to every
batch in full; reading stops once the limit is reached. Batches come from aorc's async reader
running on :mod:`aorc.sync`'s event loop.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from aorc.dataset.discovery import DatasetSource
from aorc.dataset.entry import open_dataset
from aorc.dataset.read import Dataset
from aorc.errors import AorcError, SchemaError
from aorc.io import IOStats
from aorc.keys import KeyProvider
from aorc.polars.predicate import to_filters
from aorc.polars.stream import combine_filters, frames, polars_schema, read_columns
from aorc.read.pushdown import ScanStats
from aorc.sync import run

__all__ = ["OrcScan", "open_scan", "read_orc", "scan_orc"]

_DEFAULT_BATCH = 65536


class OrcScan:
    """An ORC file or dataset opened for Polars; get one from :func:`open_scan`.

    :meth:`lazy` makes a :class:`polars.LazyFrame` of it (any number of times); the
    counters of every run add up in :attr:`scan_stats` and :attr:`io_stats`.

    Attributes:
        dataset: the aorc dataset read (a single file is a dataset of one file).
        schema: the Polars schema: data columns, then partition columns.
    """

    def __init__(self, dataset: Dataset, filters: Any = None) -> None:
        self.dataset = dataset
        self.schema = polars_schema(dataset.schema)
        self._filters = filters

    @property
    def scan_stats(self) -> ScanStats:
        """Stripes and row groups pruned and read, rows read and returned, so far."""
        return self.dataset.scan_stats

    @property
    def io_stats(self) -> IOStats:
        """Requests and bytes of the listing, the tails and every read so far."""
        return self.dataset.io_stats

    def lazy(self) -> pl.LazyFrame:
        """A LazyFrame reading this file or dataset.

        Returns:
            A ``polars.LazyFrame``.
        """
        keywords: dict[str, Any] = {"schema": self.schema}
        if "explain_name" in inspect.signature(register_io_source).parameters:
            keywords["explain_name"] = "aorc ORC"
        return register_io_source(self._source, **keywords)

    def filters_for(self, predicate: pl.Expr | None) -> Any:
        """The aorc filters a run with ``predicate`` reads with: the scan's own ``filters``
        and what of ``predicate`` maps (see :mod:`aorc.polars.predicate`).

        Args:
            predicate: Polars' predicate of a run, or ``None``.

        Returns:
            aorc filters (list form or an expression), or ``None``.
        """
        implied = to_filters(predicate, self.schema) if predicate is not None else None
        return combine_filters(self._filters, implied)

    def _source(self, with_columns: list[str] | None, predicate: pl.Expr | None,
                n_rows: int | None, batch_size: int | None) -> Iterator[pl.DataFrame]:
        if n_rows is not None and n_rows <= 0:
            return
        read = read_columns(with_columns, predicate)
        source = self.dataset.iter_batches(read, self.filters_for(predicate),
                                           batch_size=batch_size or _DEFAULT_BATCH)
        yield from frames(source, with_columns, predicate, n_rows)


def open_scan(source: DatasetSource | str, *, storage_options: Mapping[str, Any] | None = None,
              partitioning: Any = "hive", schema: pa.Schema | None = None,
              filters: Any = None, timestamp_unit: str = "ns", max_open_files: int = 16,
              path_glob_filter: str | None = None,
              read_dictionary: Sequence[str] | None = None,
              keys: KeyProvider | None = None) -> OrcScan:
    """Open an ORC file or dataset for Polars (its tails are read now, for the schema).

    Args:
        source: as :func:`scan_orc`.
        storage_options: as :func:`scan_orc`.
        partitioning: as :func:`scan_orc`.
        schema: as :func:`scan_orc`.
        filters: as :func:`scan_orc`.
        timestamp_unit: as :func:`scan_orc`.
        max_open_files: as :func:`scan_orc`.
        path_glob_filter: as :func:`scan_orc`.
        read_dictionary: as :func:`scan_orc`.

    Raises:
        ObjectNotFoundError: nothing exists at ``source``.
        SchemaError, CorruptFileError: as :func:`aorc.open_dataset`.
        UnsupportedFeatureError: a column of a type Polars lacks (a union).

    Returns:
        An :class:`OrcScan`.
    """
    if filters is not None and not isinstance(filters, list) and not _is_expression(filters):
        raise SchemaError("filters must be list-form filters or a pyarrow.compute "
                          f"Expression, got {type(filters).__name__}")
    dataset = run(open_dataset(source, partitioning=partitioning, schema=schema,
                               timestamp_unit=timestamp_unit, storage_options=storage_options,
                               max_open_files=max_open_files, path_glob_filter=path_glob_filter,
                               read_dictionary=read_dictionary, keys=keys))
    return OrcScan(dataset, filters)


def _is_expression(value: Any) -> bool:
    import pyarrow.compute as pc

    return isinstance(value, pc.Expression)


def scan_orc(source: DatasetSource | str, *, storage_options: Mapping[str, Any] | None = None,
             partitioning: Any = "hive", schema: pa.Schema | None = None,
             filters: Any = None, timestamp_unit: str = "ns", max_open_files: int = 16,
             path_glob_filter: str | None = None,
             read_dictionary: Sequence[str] | None = None,
             keys: KeyProvider | None = None) -> pl.LazyFrame:
    """Lazily read an ORC file or dataset as a :class:`polars.LazyFrame`.

    Polars pushes its projection, predicate and row limit down: only the columns used are
    read, the predicate prunes partitions, stripes and row groups where it maps onto ORC
    statistics and bloom filters (comparisons of a column with a literal, ``is_in``,
    ``is_null``, ``is_between``, ``&``, ``|``, ``~``), and a ``head``/``limit`` stops
    reading once its rows are found.

    Args:
        source: one file (local path or URL of any aorc store), a folder or object-store
            prefix (a dataset), a list of files, or a pyiceberg ``Table`` whose data files
            are ORC (needs the ``iceberg`` extra; read by :mod:`aorc.iceberg`, with
            ``filters`` and ``storage_options`` only: see :mod:`aorc.polars.iceberg`).
        storage_options: store settings (see :func:`aorc.open_store`).
        partitioning: for a dataset, as :func:`aorc.open_dataset` (``"hive"``, a list of
            names, a pyarrow schema or partitioning, or ``None``).
        schema: read every file into this Arrow schema (see :func:`aorc.open_dataset`).
        filters: aorc filters applied to every read besides Polars' predicate (list form
            or a pyarrow expression): rows they exclude never reach Polars.
        timestamp_unit: unit of the timestamp columns: ``"s"``, ``"ms"``, ``"us"``, ``"ns"``.
        max_open_files: files of a dataset read at once.
        path_glob_filter: read only the dataset files whose names match this glob.
        read_dictionary: string columns read as Arrow dictionaries (Polars Categorical).
        keys: a key provider for encrypted columns (see :func:`aorc.open_reader`).

    Raises:
        ObjectNotFoundError: nothing exists at ``source``.
        UnsupportedFeatureError: a column of a type Polars lacks (a union).
        SchemaError: as :func:`aorc.open_dataset`.

    Returns:
        A ``polars.LazyFrame``.
    """
    if not isinstance(source, (str, list, tuple, os.PathLike)):
        from aorc.polars.iceberg import is_iceberg_table, scan_iceberg

        if is_iceberg_table(source):
            return scan_iceberg(source, filters=filters, storage_options=storage_options)
    return open_scan(source, storage_options=storage_options, partitioning=partitioning,
                     schema=schema, filters=filters, timestamp_unit=timestamp_unit,
                     max_open_files=max_open_files, path_glob_filter=path_glob_filter,
                     read_dictionary=read_dictionary, keys=keys).lazy()


def read_orc(source: DatasetSource | str, *, columns: Sequence[str] | None = None,
             n_rows: int | None = None, **keywords: Any) -> pl.DataFrame:
    """Read an ORC file or dataset into a :class:`polars.DataFrame`.

    Args:
        source: as :func:`scan_orc`.
        columns: the columns to read (all by default).
        n_rows: read at most this many rows.
        **keywords: the keyword arguments of :func:`scan_orc`.

    Returns:
        A ``polars.DataFrame``.

    Raises:
        ObjectNotFoundError: nothing exists at ``source``.
        SchemaError: as :func:`scan_orc`.
        AorcError: Polars returned no DataFrame.
    """
    frame = scan_orc(source, **keywords)
    if columns is not None:
        frame = frame.select(list(columns))
    if n_rows is not None:
        frame = frame.head(n_rows)
    out = frame.collect()
    if not isinstance(out, pl.DataFrame):
        raise AorcError("Polars returned no DataFrame")
    return out
