"""The CLI's datasets: ``meta``/``head``/``cat`` on folders and prefixes, ``aorc count``, and
the timestamp unit of what ``head``/``cat`` print.

:func:`open_rows` opens a single file (an :class:`~aorc.OrcReader`) or a dataset (a
:class:`RowsOfDataset`, which has the few members the printing commands use). With
``--timestamp-unit auto`` (the default of ``head`` and ``cat``) a file is read in nanoseconds
unless its statistics show a timestamp outside that range (or have none), then in
microseconds, so every timestamp prints; a dataset is read in microseconds.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import Any, TextIO

import pyarrow as pa

from aorc.filters.text import filters_from_text
from aorc.format.types import TypeKind
from aorc.read.dataset import Dataset, is_dataset_source, open_dataset
from aorc.read.partitioning import normalize_filters
from aorc.read.reader import OrcReader, open_reader

__all__ = [
    "TIMESTAMP_UNIT_CHOICES",
    "RowsOfDataset",
    "add_count_command",
    "add_timestamp_unit_flag",
    "count",
    "open_rows",
    "print_dataset_meta",
]

#: Values of ``--timestamp-unit``.
TIMESTAMP_UNIT_CHOICES = ("auto", "s", "ms", "us", "ns")
_NS_LIMIT = 2**63 - 2 * 86_400 * 10**9


class RowsOfDataset:
    """A dataset seen as the printing commands see a reader."""

    def __init__(self, dataset: Dataset) -> None:
        self.dataset = dataset

    @property
    def schema(self) -> pa.Schema:
        """The dataset's unified schema (partition columns last)."""
        return self.dataset.schema

    @property
    def num_rows(self) -> int | None:
        """Rows of the files (from the footers read when the dataset was opened)."""
        return self.dataset.num_rows

    def iter_batches(self, columns: Sequence[str] | None = None, batch_size: int = 65536,
                     filters: Any = None) -> AsyncGenerator[pa.RecordBatch, None]:
        """As :meth:`aorc.Dataset.iter_batches`."""
        return self.dataset.iter_batches(columns, filters, batch_size=batch_size)

    async def read(self, columns: Sequence[str] | None = None, filters: Any = None) -> pa.Table:
        """As :meth:`aorc.Dataset.read`."""
        return await self.dataset.read(columns, filters)


def _extreme_timestamps(reader: OrcReader) -> bool:
    """Whether a timestamp column may hold a value outside ``timestamp[ns]``."""
    stats = reader.statistics
    for t in _walk(reader):
        if t.kind not in (TypeKind.TIMESTAMP, TypeKind.TIMESTAMP_INSTANT):
            continue
        s = stats[t.column_id] if t.column_id < len(stats) else None
        if s is None or s.minimum_nanos is None or s.maximum_nanos is None:
            if s is not None and s.num_values == 0:
                continue
            return True
        low, high = s.minimum_nanos, s.maximum_nanos
        if not (-_NS_LIMIT < low and high < _NS_LIMIT):
            return True
    return False


def _walk(reader: OrcReader) -> list[Any]:
    from aorc.format.types import parse_type_string
    return list(parse_type_string(reader.orc_type).walk())


@contextlib.asynccontextmanager
async def open_rows(source: str, storage_options: Mapping[str, Any] | None,
                    timestamp_unit: str = "ns") -> AsyncIterator[OrcReader | RowsOfDataset]:
    """A reader of the file, or the rows of the dataset, ``source`` names."""
    if await is_dataset_source(source):
        unit = "us" if timestamp_unit == "auto" else timestamp_unit
        dataset = await open_dataset(source, storage_options=storage_options,
                                     timestamp_unit=unit)
        yield RowsOfDataset(dataset)
        return
    unit = timestamp_unit
    if unit == "auto":
        async with open_reader(source, storage_options=storage_options) as probe:
            unit = "us" if _extreme_timestamps(probe) else "ns"
    async with open_reader(source, storage_options=storage_options,
                           timestamp_unit=unit) as reader:
        yield reader


async def print_dataset_meta(source: str, as_json: bool, out: TextIO,
                             storage_options: Mapping[str, Any] | None) -> bool:
    """Describe ``source`` when it is a dataset (and say whether it was one)."""
    if not await is_dataset_source(source):
        return False
    dataset = await open_dataset(source, storage_options=storage_options, timestamp_unit="us")
    info = {
        "source": source,
        "files": len(dataset.files),
        "bytes": sum(f.size for f in dataset.files),
        "rows": dataset.num_rows,
        "schema": [{"name": f.name, "type": str(f.type)} for f in dataset.schema],
        "partition_columns": dataset.partition_schema.names,
    }
    if as_json:
        import json
        json.dump(info, out, indent=2)
        out.write("\n")
        return True
    lines = [f"dataset: {source}", f"files: {info['files']}", f"bytes: {info['bytes']}",
             f"rows: {info['rows']}",
             f"partition columns: {', '.join(dataset.partition_schema.names) or 'none'}",
             "schema:"]
    lines += [f"  {f.name}: {f.type}" for f in dataset.schema]
    out.write("\n".join(lines) + "\n")
    return True


# =========================================================================== count

async def count(source: str, filters: Sequence[str], out: TextIO,
                storage_options: Mapping[str, Any] | None,
                timestamp_unit: str = "us") -> None:
    """Print the matching rows, the files scanned and their bytes of a file or dataset."""
    sources: Any = source if await is_dataset_source(source) else [source]
    dataset = await open_dataset(sources, storage_options=storage_options,
                                 timestamp_unit=timestamp_unit,
                                 partitioning="hive" if sources is source else None)
    terms = filters_from_text(filters, dataset.schema)
    normalize_filters(terms)
    rows = await dataset.count_rows(terms)
    scanned = dataset.files_matching(terms)
    out.write(f"rows: {rows}\nfiles: {len(scanned)}\n"
              f"bytes: {sum(f.size for f in scanned)}\n")


def add_count_command(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add ``aorc count SOURCE [--filter 'col op value' ...]``."""
    cmd = sub.add_parser("count", parents=[parent],
                         help="count rows (matching --filter), files and bytes")
    cmd.add_argument("source", help="an ORC file, a folder, an s3:// prefix or an Iceberg "
                     "table (iceberg://CATALOG/NAMESPACE.TABLE)")
    cmd.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                     help="keep rows where this holds (repeat: all must hold)")
    add_timestamp_unit_flag(cmd, default="us")


def add_timestamp_unit_flag(parser: argparse.ArgumentParser, default: str = "auto") -> None:
    """Add ``--timestamp-unit``."""
    parser.add_argument("--timestamp-unit", choices=TIMESTAMP_UNIT_CHOICES, default=default,
                        help="unit of timestamps read (auto: ns unless a value needs us)")
