"""Finding a dataset's files: listing its sources, typing their Hive partition values, and
opening a file's tail.

:func:`list_dataset` lists the sources (one paginated listing per root, sizes included, hidden
names such as ``_SUCCESS`` or ``.crc`` skipped) and parses their ``key=value`` folders
(:mod:`aorc.read.partitioning`) into :class:`DatasetFile` records. :func:`open_tail` reads
and parses a file's tail in one request (small files whole), kept by the dataset for the reads
that follow. :mod:`aorc.read.dataset` drives the reads.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from aorc.errors import AorcError, CorruptFileError, SchemaError
from aorc.format.columns.base import with_timestamp_unit
from aorc.format.columns.timestamps import check_timestamp_unit
from aorc.format.tail import TAIL_READ_SIZE, FileTail, NeedBytes, parse_tail
from aorc.format.types import to_arrow_schema
from aorc.io import IOStats, registry
from aorc.io.base import gather_or_cancel
from aorc.read.common import INLINE_BYTES, run_light
from aorc.read.partitioning import infer_partition_schema, partition_table, partition_values

__all__ = [
    "SMALL_FILE_BYTES",
    "DatasetFile",
    "DatasetOptions",
    "DatasetSource",
    "OpenedTail",
    "check_options",
    "is_dataset_source",
    "list_dataset",
    "open_tail",
]

#: What :func:`aorc.open_dataset` accepts.
DatasetSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

#: One-shot reads (:func:`aorc.read_dataset`) fetch files up to this size whole, in one request.
SMALL_FILE_BYTES = 4 << 20


@dataclass(frozen=True)
class DatasetFile:
    """One file of a dataset.

    Attributes:
        path: its path or URL.
        size: its size in bytes, from the listing.
        partition: its partition values (typed as the partition columns), by column name.
    """

    path: str
    size: int
    partition: dict[str, Any] = field(default_factory=dict)


@dataclass
class OpenedTail:
    """A file's tail as opened, kept for the reads that follow.

    Attributes:
        tail: the parsed tail.
        data: the bytes read from the file's end (the whole file when it is small).
        schema: the file's Arrow schema (timestamps in the dataset's unit).
        etag: the object's version the tail was read from (S3's ETag; ``None`` for other
            stores): later reads of the file must be pinned to it (``if_match``), so that a
            file replaced meanwhile fails with :class:`~aorc.errors.ObjectChangedError`
            instead of being decoded under this tail.
    """

    tail: FileTail
    data: bytes
    schema: pa.Schema
    etag: str | None = None

    def storage_options(self, options: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
        """``options`` for a later read of the file: pinned to :attr:`etag` when known."""
        if self.etag is None:
            return options
        return {**(options or {}), "if_match": self.etag}


@dataclass
class DatasetOptions:
    """The settings of a dataset, checked by :func:`check_options`.

    Attributes:
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_open_files: files opened and read at once.
        exclude_invalid_files: leave out files that are not ORC instead of failing.
        timestamp_unit: the unit of timestamp columns.
        given_schema: the ``schema=`` given to :func:`aorc.open_dataset`, if any.
    """

    storage_options: Mapping[str, Any] | None
    max_open_files: int
    exclude_invalid_files: bool
    timestamp_unit: str
    given_schema: pa.Schema | None


def check_options(partitioning: Any, timestamp_unit: str, max_open_files: int,
                  schema: pa.Schema | None) -> pa.Schema | None:
    """Check the options of :func:`aorc.open_dataset`; the partition schema given by
    ``partitioning`` (``None`` for ``"hive"`` or none)."""
    check_timestamp_unit(timestamp_unit)
    if isinstance(max_open_files, bool) or not isinstance(max_open_files, int) \
            or max_open_files < 1:
        raise SchemaError(f"max_open_files must be a positive integer, got {max_open_files!r}")
    if schema is not None and not isinstance(schema, pa.Schema):
        raise SchemaError(f"schema must be a pyarrow.Schema, got {type(schema).__name__}")
    if partitioning is None or partitioning == "hive":
        return None
    if isinstance(partitioning, pa.Schema):
        return partitioning
    raise SchemaError(f"partitioning must be 'hive', None or a pyarrow.Schema, got "
                      f"{partitioning!r}")


async def is_dataset_source(source: object) -> bool:
    """Whether ``source`` names a dataset rather than one file: a list or tuple, a local
    folder, or a URL ending with ``/``."""
    if isinstance(source, (list, tuple)):
        return True
    if not isinstance(source, (str, os.PathLike)):
        return False
    return await registry.is_folder(source)


async def list_dataset(source: DatasetSource, partitioning: Any,
                       given_parts: pa.Schema | None, options: DatasetOptions, io: IOStats
                       ) -> tuple[list[DatasetFile], pa.Schema]:
    """The files under ``source`` (sorted by path within each root) with their partition
    values, and the partition schema: ``given_parts``, or the columns of ``schema=`` named
    by the folders, or inferred from the folders' values."""
    schema = options.given_schema
    listed = await _discover(source, options, io)
    paths = [info.path for _, info in listed]
    raw = ([partition_values(root, info.path) for root, info in listed]
           if partitioning is not None else [{} for _ in listed])
    if schema is not None and given_parts is None and partitioning is not None:
        given_parts = pa.schema([f for f in schema if raw and f.name in raw[0]])
    part_schema = infer_partition_schema(raw, paths, given_parts)
    typed = partition_table(raw, part_schema, paths).to_pylist() if len(part_schema) \
        else [{} for _ in raw]
    files = [DatasetFile(info.path, info.size, values)
             for (_, info), values in zip(listed, typed, strict=True)]
    return files, part_schema


async def open_tail(path: str, options: DatasetOptions, io: IOStats, size: int = 0, *,
                    listed: int | None = None) -> OpenedTail:
    """Read and parse a file's tail (one request unless its metadata is longer); a file
    of at most SMALL_FILE_BYTES (``size``, from the listing) is read whole, so reading its
    rows needs no further request. ``listed`` (or ``size``) is the size the listing gave:
    a store without suffix ranges then needs no request for the size."""
    store = registry.open_input(path, options.storage_options, size=listed or size or None)
    first = size if TAIL_READ_SIZE < size <= SMALL_FILE_BYTES else TAIL_READ_SIZE
    try:
        data, size = await store.read_tail(first)
        tail = await run_light(len(data) <= INLINE_BYTES, _parse, path, data, size)
        if isinstance(tail, NeedBytes):
            data, size = await store.read_tail(tail.n)
            tail = await asyncio.to_thread(_parse, path, data, size)
            if isinstance(tail, NeedBytes):
                raise CorruptFileError(f"{path}: the file tail asks for {tail.n} bytes after "
                                       f"{len(data)} were read")
        schema = to_arrow_schema(tail.schema)
        if options.timestamp_unit != "ns":
            schema = pa.schema([f.with_type(with_timestamp_unit(f.type, options.timestamp_unit))
                                for f in schema])
        etag = getattr(store, "etag", None)
    finally:
        io.requests += store.stats.requests
        io.bytes += store.stats.bytes
        await store.close()
    return OpenedTail(tail, data, schema, etag if isinstance(etag, str) else None)


def _parse(path: str, data: bytes, size: int) -> FileTail | NeedBytes:
    try:
        return parse_tail(data, size, source=path)
    except AorcError as exc:
        if path in str(exc):
            raise
        raise type(exc)(f"{path}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any stray failure means a damaged tail
        raise CorruptFileError(f"{path}: not a readable ORC file ({type(exc).__name__}: "
                               f"{exc})") from exc


async def _discover(source: DatasetSource, options: DatasetOptions, io: IOStats
                    ) -> list[tuple[str, registry.FileInfo]]:
    roots = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not roots:
        raise SchemaError("open_dataset: the list of sources is empty")
    found = await gather_or_cancel([registry.list_files(r, options.storage_options, io)
                                    for r in roots])
    out: list[tuple[str, registry.FileInfo]] = []
    for root, files in zip(roots, found, strict=True):
        text = os.fspath(root)
        out.extend((text, info) for info in files)
    return out

