"""The CLI's datasets: ``meta``/``head``/``cat`` on folders and prefixes, ``aorc count``, and
the timestamp unit of what ``head``/``cat`` print.

Every command decides "file or dataset" as :func:`aorc.read_table` does
(:func:`aorc.dataset.discovery.file_or_dataset`): a folder, or a URL ending with ``/``, is a
dataset; otherwise a file, unless no file has that name and it is an object-store prefix
(``s3://lake/events`` as well as ``s3://lake/events/``). Datasets take
``--exclude-invalid-files`` and ``--path-glob-filter`` (:func:`dataset_flags`).

:func:`open_rows` opens a single file (an :class:`~aorc.OrcReader`) or a dataset (a
:class:`RowsOfDataset`, which has the few members the printing commands use). With
``--timestamp-unit auto`` (the default of ``head`` and ``cat``) a file is read in nanoseconds
unless its statistics show a timestamp outside that range (or have none), then in
microseconds, so every timestamp prints; a dataset is read in microseconds.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import pyarrow as pa

from aorc.cli.convert import Progress
from aorc.dataset.compaction import DEFAULT_TARGET_SIZE, compact
from aorc.dataset.discovery import file_or_dataset
from aorc.dataset.entry import open_dataset
from aorc.dataset.partitioning import normalize_filters
from aorc.dataset.read import Dataset
from aorc.filters.text import filters_from_text
from aorc.format.codec.budget import DEFAULT_MAX_DECODED_BYTES
from aorc.format.types import TypeKind
from aorc.keys import KeyProvider
from aorc.options import WriteOptions
from aorc.read.reader import OrcReader, open_reader

__all__ = [
    "FILTER_HELP",
    "NO_DATASET_FLAGS",
    "TIMESTAMP_UNIT_CHOICES",
    "DatasetFlags",
    "RowsOfDataset",
    "add_compact_command",
    "add_count_command",
    "add_dataset_flags",
    "add_timestamp_unit_flag",
    "compact_command",
    "count",
    "dataset_flags",
    "open_rows",
    "open_source",
    "print_dataset_meta",
]

#: The help of every ``--filter`` that filters rows (``head``, ``cat``, ``count``).
FILTER_HELP = ("only rows matching, e.g. 'amount >= 10' or \"name in (a, b)\" (ops as "
               "filters=: == != < <= > >= in, not in, is null, is not null); repeatable: all "
               "must match")

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


@dataclass(frozen=True)
class DatasetFlags:
    """The dataset options of ``meta``, ``head``, ``cat`` and ``count`` (see
    :func:`aorc.open_dataset`)."""

    exclude_invalid_files: bool = False
    path_glob_filter: str | None = None
    #: the decoding budget of one stripe (``--max-decoded-bytes``; also for one file)
    max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES


#: No dataset flags given.
NO_DATASET_FLAGS = DatasetFlags()


def add_dataset_flags(parser: argparse.ArgumentParser) -> None:
    """Add ``--exclude-invalid-files``, ``--path-glob-filter`` and ``--max-decoded-bytes``."""
    group = parser.add_argument_group("datasets (a folder or prefix)")
    group.add_argument("--exclude-invalid-files", action="store_true",
                       help="skip files that are not ORC, and files at another partition "
                       "depth than most (with a warning), instead of failing")
    group.add_argument("--path-glob-filter", metavar="GLOB",
                       help="read only files whose names match, e.g. '*.orc' or 'part-*' "
                       "(default: every file but hidden ones and *.txt, *.md, *.json, *.crc, "
                       "...)")
    parser.add_argument("--max-decoded-bytes", type=int, metavar="BYTES",
                        default=DEFAULT_MAX_DECODED_BYTES,
                        help="the most bytes the decompressed streams of one stripe may take "
                        f"(default {DEFAULT_MAX_DECODED_BYTES}, 1 GiB); a stripe needing more "
                        "is refused with ResourceLimitError")


def dataset_flags(args: argparse.Namespace) -> DatasetFlags:
    """The :class:`DatasetFlags` of parsed arguments."""
    return DatasetFlags(bool(getattr(args, "exclude_invalid_files", False)),
                        getattr(args, "path_glob_filter", None),
                        getattr(args, "max_decoded_bytes", DEFAULT_MAX_DECODED_BYTES))


async def open_source(source: str, storage_options: Mapping[str, Any] | None,
                      timestamp_unit: str = "ns", flags: DatasetFlags = NO_DATASET_FLAGS,
                      keys: KeyProvider | None = None) -> OrcReader | Dataset:
    """The open file (an :class:`~aorc.OrcReader`, to be closed) or the opened dataset
    ``source`` names, decided as :func:`aorc.read_table` decides. ``timestamp_unit="auto"``
    reads a dataset in microseconds and a file as :func:`open_rows` says; ``keys``: the
    master keys of encrypted columns (``--key``/``--keys``)."""
    async def one_file() -> OrcReader:
        unit = timestamp_unit
        if unit == "auto":
            async with open_reader(source, storage_options=storage_options) as probe:
                unit = "us" if _extreme_timestamps(probe) else "ns"
        return await open_reader(source, storage_options=storage_options, timestamp_unit=unit,
                                 max_decoded_bytes=flags.max_decoded_bytes, keys=keys)

    async def dataset() -> Dataset:
        return await open_dataset(source, storage_options=storage_options,
                                  timestamp_unit="us" if timestamp_unit == "auto"
                                  else timestamp_unit,
                                  exclude_invalid_files=flags.exclude_invalid_files,
                                  path_glob_filter=flags.path_glob_filter,
                                  max_decoded_bytes=flags.max_decoded_bytes, keys=keys)

    opened: OrcReader | Dataset = await file_or_dataset(source, one_file, dataset)
    return opened


@contextlib.asynccontextmanager
async def open_rows(source: str, storage_options: Mapping[str, Any] | None,
                    timestamp_unit: str = "ns", flags: DatasetFlags = NO_DATASET_FLAGS,
                    keys: KeyProvider | None = None
                    ) -> AsyncIterator[OrcReader | RowsOfDataset]:
    """A reader of the file, or the rows of the dataset, ``source`` names (``keys``: as
    :func:`open_source`)."""
    opened = await open_source(source, storage_options, timestamp_unit, flags, keys)
    if isinstance(opened, Dataset):
        yield RowsOfDataset(opened)
        return
    try:
        yield opened
    finally:
        await opened.close()


async def print_dataset_meta(dataset: Dataset, source: str, as_json: bool,
                             out: TextIO) -> None:
    """Describe the dataset ``source`` names."""
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
        return
    lines = [f"dataset: {source}", f"files: {info['files']}", f"bytes: {info['bytes']}",
             f"rows: {info['rows']}",
             f"partition columns: {', '.join(dataset.partition_schema.names) or 'none'}",
             "schema:"]
    lines += [f"  {f.name}: {f.type}" for f in dataset.schema]
    out.write("\n".join(lines) + "\n")


# =========================================================================== count

async def count(source: str, filters: Sequence[str], out: TextIO,
                storage_options: Mapping[str, Any] | None,
                timestamp_unit: str = "us", flags: DatasetFlags = NO_DATASET_FLAGS) -> None:
    """Print the matching rows, the files scanned and their bytes of a file or dataset."""
    async def one_file() -> Dataset:
        async with open_reader(source, storage_options=storage_options):
            pass  # a file of that name exists (else a prefix is tried)
        return await open_dataset([source], storage_options=storage_options,
                                  timestamp_unit=timestamp_unit, partitioning=None,
                                  max_decoded_bytes=flags.max_decoded_bytes)

    async def whole() -> Dataset:
        return await open_dataset(source, storage_options=storage_options,
                                  timestamp_unit=timestamp_unit,
                                  exclude_invalid_files=flags.exclude_invalid_files,
                                  path_glob_filter=flags.path_glob_filter,
                                  max_decoded_bytes=flags.max_decoded_bytes)

    dataset: Dataset = await file_or_dataset(source, one_file, whole)
    terms = filters_from_text(filters, dataset.schema)
    normalize_filters(terms)
    rows = await dataset.count_rows(terms)
    scanned = dataset.files_matching(terms)
    out.write(f"rows: {rows}\nfiles: {len(scanned)}\n"
              f"bytes: {sum(f.size for f in scanned)}\n")
    if dataset.scan_stats.files_skipped:
        out.write(f"skipped: {dataset.scan_stats.files_skipped}\n")  # each one warned about


def add_count_command(sub: Any, parent: argparse.ArgumentParser) -> None:
    """Add ``aorc count SOURCE [--filter 'col op value' ...]``."""
    cmd = sub.add_parser("count", parents=[parent],
                         help="count rows (matching --filter), files and bytes")
    cmd.add_argument("source", help="an ORC file, a folder, an s3:// prefix or an Iceberg "
                     "table (iceberg://CATALOG/NAMESPACE.TABLE)")
    cmd.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                     help=FILTER_HELP)
    add_timestamp_unit_flag(cmd, default="us")
    add_dataset_flags(cmd)


# =========================================================================== compact

async def compact_command(source: str, filters: Sequence[str], target_size: int,
                          min_size: int | None, out: TextIO,
                          storage_options: Mapping[str, Any] | None, options: WriteOptions,
                          progress: bool | None, keys: KeyProvider | None = None) -> None:
    """Compact a dataset's small files (:func:`aorc.compact`) and say what was done
    (``keys``: of encrypted files, ``--key``/``--keys``)."""
    terms = None
    if filters:
        dataset = await open_dataset(source, storage_options=storage_options, keys=keys)
        terms = filters_from_text(filters, dataset.schema)
    bar = Progress(f"compacting {source}", None, "files", enabled=progress)
    result = await compact(source, target_size=target_size, min_size=min_size, filters=terms,
                           storage_options=storage_options, options=options,
                           progress=lambda e: bar.set(e.done), keys=keys)
    bar.close()
    out.write(f"merged: {len(result.removed)} files into {len(result.written)} "
              f"(stripe copy: {result.stripe_copied}, re-encoded: {result.re_encoded})\n"
              f"recovered: {result.recovered} interrupted merges\n"
              f"skipped: {sum(len(paths) for paths, _ in result.skipped)} files\n")
    for path in result.written:
        out.write(f"  {path}\n")


def add_compact_command(sub: Any, parent: argparse.ArgumentParser,
                        size: Callable[[str], int]) -> argparse.ArgumentParser:
    """Add ``aorc compact SOURCE [--target-size 128M] [--min-size N] [--filter ...]``; the
    caller adds the writer and progress flags."""
    cmd: argparse.ArgumentParser = sub.add_parser("compact", parents=[parent],
                                                  help="merge each partition folder's "
                                                  "small files (stripe copy where the files "
                                                  "allow it); crash-safe")
    cmd.add_argument("source", help="a dataset's root folder or prefix")
    cmd.add_argument("--target-size", type=size, default=DEFAULT_TARGET_SIZE,
                     help="largest input bytes merged into one file (128M)")
    cmd.add_argument("--min-size", type=size,
                     help="files this size or larger are left alone (3/4 of --target-size)")
    cmd.add_argument("--filter", action="append", default=[], metavar="'COL OP VALUE'",
                     help="only partition folders where this holds (partition columns; ops "
                     "as filters=: == != < <= > >= in, not in, is null, is not null; "
                     "repeatable: all must hold)")
    return cmd


def add_timestamp_unit_flag(parser: argparse.ArgumentParser, default: str = "auto") -> None:
    """Add ``--timestamp-unit``."""
    parser.add_argument("--timestamp-unit", choices=TIMESTAMP_UNIT_CHOICES, default=default,
                        help="unit of timestamps read (auto: ns unless a value needs us)")
