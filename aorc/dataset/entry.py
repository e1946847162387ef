"""The entry points of datasets: :func:`open_dataset` (list a dataset, and unify its files'
schemas unless given one) and :func:`read_dataset` (the same, read into one table at once,
opening only the files a partition filter leaves)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from aorc.dataset.discovery import (
    TAIL_CACHE_BYTES,
    DatasetFile,
    DatasetOptions,
    DatasetSource,
    check_options,
    is_dataset_source,
    list_dataset,
)
from aorc.dataset.evolution import check_schema_mapping
from aorc.dataset.plan import dataset_filter
from aorc.dataset.read import Dataset
from aorc.errors import SchemaError
from aorc.format.codec.budget import DEFAULT_MAX_DECODED_BYTES
from aorc.format.nesting import check_depth
from aorc.format.tail import max_columns
from aorc.io import IOStats
from aorc.keys import KeyProvider
from aorc.progress import ProgressHook
from aorc.read.common import check_max_decoded_bytes
from aorc.read.dictionary import check_read_dictionary

# (the names of the module that had these entry points, aorc.read.dataset, whose old path
# imports this module until it goes)
__all__ = ["Dataset", "DatasetFile", "DatasetSource", "is_dataset_source", "open_dataset",
           "read_dataset"]


async def _open(source: DatasetSource, *, partitioning: Any, schema: pa.Schema | None,
                timestamp_unit: str, storage_options: Mapping[str, Any] | None,
                max_open_files: int, exclude_invalid_files: bool,
                path_glob_filter: str | None = None,
                read_dictionary: Sequence[str] | None = None,
                eager: bool = False, schema_from: str = "all",
                tail_cache_bytes: int = TAIL_CACHE_BYTES, filters: Any = None,
                max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                schema_mapping: str = "name", keys: KeyProvider | None = None,
                use_writer_timezone: bool = False) -> Dataset:
    layout = check_options(partitioning, timestamp_unit, max_open_files, schema,
                           path_glob_filter)
    check_max_decoded_bytes(max_decoded_bytes)
    check_schema_mapping(schema_mapping, schema)
    check_read_dictionary(read_dictionary)
    if isinstance(tail_cache_bytes, bool) or not isinstance(tail_cache_bytes, int) \
            or tail_cache_bytes < 0:
        raise SchemaError(f"tail_cache_bytes must be a non-negative integer, got "
                          f"{tail_cache_bytes!r}")
    if schema is not None:
        check_depth(schema, "the dataset schema")
    options = DatasetOptions(storage_options, max_open_files, exclude_invalid_files,
                             timestamp_unit, schema, path_glob_filter,
                             list(read_dictionary) if read_dictionary is not None else None,
                             tail_cache_bytes, max_decoded_bytes, schema_mapping, keys,
                             bool(use_writer_timezone), max_columns())
    io = IOStats()
    clauses = dataset_filter(filters).clauses
    files, part_schema = await list_dataset(source, layout, options, io, clauses)
    if clauses is not None and not files:  # nothing matches: the schema comes from all
        files, part_schema = await list_dataset(source, layout, options, io)
        clauses = None
    data_schema = (pa.schema([f for f in schema if f.name not in part_schema.names])
                   if schema is not None else None)
    dataset = Dataset(files, part_schema, data_schema or pa.schema([]), options, io,
                      layout=layout)
    if clauses is not None:
        async def full_listing() -> list[DatasetFile]:
            return (await list_dataset(source, layout, options, io))[0]

        dataset._full_listing = full_listing
    if data_schema is not None or eager:
        return dataset
    dataset.files = await dataset._resolve_schema(files, schema_from)
    return dataset


async def open_dataset(source: DatasetSource, *, partitioning: Any = "hive",
                       schema: pa.Schema | None = None, timestamp_unit: str = "ns",
                       storage_options: Mapping[str, Any] | None = None,
                       max_open_files: int = 16,
                       exclude_invalid_files: bool = False,
                       path_glob_filter: str | None = None,
                       read_dictionary: Sequence[str] | None = None,
                       schema_from: str = "all",
                       tail_cache_bytes: int = TAIL_CACHE_BYTES,
                       max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                       schema_mapping: str = "name",
                       keys: KeyProvider | None = None,
                       use_writer_timezone: bool = False) -> Dataset:
    """Open a dataset: a local folder, an ``s3://bucket/prefix`` or a list of files/URLs.

    Files and folders whose names start with ``_`` or ``.`` are skipped, and so are files
    below the root whose names say they are not data (``*.txt``, ``*.md``, ``*.json``,
    ``*.crc``, ... :data:`aorc.dataset.discovery.NON_DATA_SUFFIXES`) unless
    ``path_glob_filter`` is given. Hive folders are listed level by level, the top-level
    partitions concurrently. Without ``schema`` the files' tails are read to unify their
    schemas by name (every file's, at most ``max_open_files`` at once, or only the first
    one's: ``schema_from``); with ``schema`` no file is opened before a read. Opened tails
    are kept for the reads that follow, up to ``tail_cache_bytes`` (least recently used
    dropped first), so memory does not grow with the number of files.

    Args:
        source: the dataset's root(s).
        partitioning: ``"hive"`` (``key=value`` folders, types inferred as Spark does); a
            list of column names, one per folder level (``["country", "day"]`` for
            ``DE/2024-01-01/f.orc``, as pyarrow.dataset's directory partitioning; types
            inferred as for hive); a ``pyarrow.Schema`` (hive folders, these types); a
            ``pyarrow.dataset.HivePartitioning`` or ``DirectoryPartitioning``; or ``None``.
        schema: read every file into this schema (partition columns among it take its
            types); no file is opened before a read.
        timestamp_unit: ``"s"``, ``"ms"``, ``"us"`` or ``"ns"``.
        storage_options: store settings (see :func:`aorc.io.open_store`).
        max_open_files: files opened and read at once.
        exclude_invalid_files: leave out files that are not ORC (or are empty) instead of
            failing, and files at another partition depth than most (with an
            :class:`aorc.AorcWarning` naming them).
        path_glob_filter: read only the files whose names match this glob (``*``, ``?``,
            ``[...]``, ``{a,b}``), as Spark's ``pathGlobFilter``: e.g. ``"*.orc"``, or
            ``"part-*"`` for Hive's files without an extension. The partition folders are
            found as before.
        read_dictionary: string or binary columns (top-level names or dotted paths) read
            as Arrow ``dictionary<int32, ...>`` arrays, as :func:`aorc.open_reader`.
        schema_from: without ``schema``, the files whose schemas make the dataset's:
            ``"all"`` (every file's tail is read and the schemas unified by name, as
            Spark's ``mergeSchema``) or ``"first"`` (the first file's, in path order: one
            tail read, as :func:`pyarrow.dataset.dataset` infers it; columns of other files
            not in it are not read, and missing ones read as nulls).
        tail_cache_bytes: the most bytes of opened file tails kept for later reads
            (default 64 MiB; each tail counts what it holds in memory: the bytes read
            from its file's end, the whole file when it is small, plus its parsed footer,
            about 4.5 KiB for a small file; see :meth:`TailCache.cost`); ``0`` keeps none.
        max_decoded_bytes: the most bytes the decompressed streams of one stripe may take
            (as :func:`aorc.open_reader`; default 1 GiB): a stripe needing more raises
            :class:`aorc.ResourceLimitError`.
        schema_mapping: ``"name"`` (files' columns meet ``schema``'s by name, or by position
            when all are ``_col0, _col1, ...`` as Hive 1 wrote them, as ORC Java does) or
            ``"position"`` (always by position: ORC's ``orc.force.positional.evolution``).
        keys: an :class:`aorc.KeyProvider` for encrypted columns (see
            :func:`aorc.open_reader`): columns whose key it has read decrypted, the others
            masked.
        use_writer_timezone: ``timestamp`` columns as the instants they hold in each
            file's writer zone, ``timestamp[unit, UTC]`` (see :func:`aorc.open_reader`).

    Raises:
        ObjectNotFoundError: nothing exists at ``source``.
        SchemaError: no files and no ``schema``; conflicting partition folders; a partition
            value that does not fit its given type; incompatible file schemas.
        CorruptFileError: a file is not ORC (unless ``exclude_invalid_files``).

    Returns:
        A :class:`Dataset`.
    """
    if schema_from not in ("all", "first"):
        raise SchemaError(f"schema_from must be 'all' or 'first', got {schema_from!r}")
    return await _open(source, partitioning=partitioning, schema=schema,
                       timestamp_unit=timestamp_unit, storage_options=storage_options,
                       max_open_files=max_open_files,
                       exclude_invalid_files=exclude_invalid_files,
                       path_glob_filter=path_glob_filter, read_dictionary=read_dictionary,
                       schema_from=schema_from, tail_cache_bytes=tail_cache_bytes,
                       max_decoded_bytes=max_decoded_bytes,
                       schema_mapping=schema_mapping, keys=keys,
                       use_writer_timezone=use_writer_timezone)


async def read_dataset(source: DatasetSource, *, columns: Sequence[str] | None = None,
                       filters: Any = None, partitioning: Any = "hive",
                       schema: pa.Schema | None = None, timestamp_unit: str = "ns",
                       storage_options: Mapping[str, Any] | None = None,
                       max_open_files: int = 16,
                       exclude_invalid_files: bool = False,
                       schema_from: str = "read",
                       path_glob_filter: str | None = None,
                       read_dictionary: Sequence[str] | None = None,
                       progress: ProgressHook | None = None,
                       max_decoded_bytes: int = DEFAULT_MAX_DECODED_BYTES,
                       schema_mapping: str = "name",
                       keys: KeyProvider | None = None,
                       use_writer_timezone: bool = False) -> pa.Table:
    """Read a dataset into one table (arguments as :func:`open_dataset`, :meth:`Dataset.read`;
    ``progress=`` counts files read). Files of partitions ``filters`` exclude are never read.

    Args:
        schema_from: without ``schema=``, the files whose schemas are unified into the
            table's. ``"read"`` (the default): the files read, so that no file of a pruned
            partition is opened; a column found only in pruned files is left out -- unless
            ``columns`` or ``filters`` name it: then the pruned files' tails are read
            afterwards to find it, and it reads as nulls. ``"all"``: every file's, as
            Spark's ``mergeSchema`` option (whose schema comes from every footer before
            any filter applies) and as ``open_dataset(...).read(...)``: a column found
            only in pruned files reads as nulls, and each pruned file costs its tail read
            (one request, sent with the reads of the surviving files; never its data) --
            with a selective filter, several times the requests of the read itself, which
            is why Spark leaves ``mergeSchema`` off by default.
            With ``schema=`` no file is opened for its schema.
        schema_mapping: as :func:`open_dataset`.
        keys: as :func:`open_dataset`.
        use_writer_timezone: as :func:`open_dataset`.

    Raises:
        SchemaError: as :func:`open_dataset`, or ``schema_from`` is not ``"all"`` or
            ``"read"``.

    Returns:
        The matching rows of the dataset's files, as one ``pyarrow.Table``.
    """
    if schema_from not in ("all", "read"):
        raise SchemaError(f"schema_from must be 'all' or 'read', got {schema_from!r}")
    dataset = await _open(source, partitioning=partitioning, schema=schema,
                          timestamp_unit=timestamp_unit, storage_options=storage_options,
                          max_open_files=max_open_files,
                          exclude_invalid_files=exclude_invalid_files,
                          path_glob_filter=path_glob_filter, read_dictionary=read_dictionary,
                          eager=True, filters=filters if schema_from == "read" else None,
                          max_decoded_bytes=max_decoded_bytes,
                          schema_mapping=schema_mapping, keys=keys,
                          use_writer_timezone=use_writer_timezone)
    if schema is not None:
        return await dataset.read(columns, filters, progress=progress)
    return await dataset.read_unresolved(columns, filters, schema_from, progress=progress)
