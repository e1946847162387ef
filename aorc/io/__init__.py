"""Stores: where ORC bytes come from and go to (local files, memory, file objects, S3 and
S3-compatible stores, Google Cloud Storage, Azure Blob Storage / ADLS Gen2, HTTP(S)). Only
this package knows URL schemes; it knows nothing of the ORC format.

:func:`open_store` picks the store for a source. All stores implement :class:`Store`:
a one-request tail read that also reveals the size, ranged reads, and coalesced concurrent
batches of ranged reads, with counters in :class:`IOStats`. Writing goes through an
:class:`aorc.io.output.Output` (:func:`aorc.io.open_output`): bytes in order, visible
only once complete (atomic rename locally; multipart, resumable or block uploads on the
object stores).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.io import registry
from aorc.io.azure import AzureOutput, AzureStore
from aorc.io.azure_config import AzureConfig
from aorc.io.base import BaseStore, IOStats, Store, StoreOptions, check_no_options_left
from aorc.io.coalesce import RangePlan, plan_ranges
from aorc.io.fileobj import FileObjectStore, is_file_object
from aorc.io.gcs import GCSOutput, GCSStore
from aorc.io.gcs_config import GCSConfig
from aorc.io.http import HTTPConfig, HTTPStore
from aorc.io.local import LocalStore
from aorc.io.memory import MemoryStore
from aorc.io.pool import close_clients
from aorc.io.registry import (
    FileInfo,
    delete,
    is_remote,
    join,
    list_files,
    make_parents,
    open_input,
    open_output,
    register_scheme,
)
from aorc.io.s3 import S3Output, S3Store
from aorc.io.s3_config import S3Config

__all__ = [
    "AzureConfig",
    "AzureOutput",
    "AzureStore",
    "BaseStore",
    "FileInfo",
    "FileObjectStore",
    "GCSConfig",
    "GCSOutput",
    "GCSStore",
    "HTTPConfig",
    "HTTPStore",
    "IOStats",
    "LocalStore",
    "MemoryStore",
    "RangePlan",
    "S3Config",
    "S3Output",
    "S3Store",
    "Source",
    "Store",
    "StoreOptions",
    "close_clients",
    "delete",
    "is_remote",
    "join",
    "list_files",
    "make_parents",
    "open_input",
    "open_output",
    "open_store",
    "plan_ranges",
    "register_scheme",
    "registry",
    "source_name",
]

#: What :func:`open_store` accepts.
Source = str | os.PathLike[str] | bytes | bytearray | memoryview | IO[bytes] | Store


def source_name(source: object) -> str:
    """A short printable name for a source, for messages.

    Args:
        source: anything :func:`open_store` takes.

    Returns:
        A path, URL or a short description (``<bytes>``, ``<file object>``).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<memory>"
    if isinstance(source, Store):
        return source.path
    if is_file_object(source):
        name = getattr(source, "name", None)
        return name if isinstance(name, str) else f"<{type(source).__name__}>"
    if isinstance(source, os.PathLike):
        return str(os.fspath(source))
    return str(source)


def open_store(source: Source, storage_options: Mapping[str, Any] | None = None,
               mode: str = "r") -> Store:
    """The store that reads ``source``.

    The store opens lazily: a missing file is reported by the first read, or by
    ``async with`` on the store. Close it with ``await store.close()``.

    Args:
        source: a local path (``str`` or ``os.PathLike``), a ``file://`` URI, a URL of
            any scheme of :mod:`aorc.io.registry` (``s3://``, ``gs://``, ``az://``,
            ``abfss://``, ``https://``, ...), a bytes-like object holding a whole ORC file, a
            binary file object (``open(path, "rb")``, ``io.BytesIO``: read with positional
            reads when it has a file descriptor, else with ``seek``/``read``; never closed
            by aorc), or an existing :class:`Store` (returned as is).
        storage_options: store tuning: ``max_merge_distance`` (bytes, default 1 MiB),
            ``max_gap_ratio`` (default 1.0: a gap is read only when it is at most that many
            times the bytes asked for), ``max_request_size`` (default 64 MiB; 8 MiB for S3)
            and ``max_concurrency`` (default 10; 8 for S3), ``max_burst`` (default 32: see
            :class:`StoreOptions`); for S3 also the connection settings of
            :mod:`aorc.io.s3_config`.
        mode: ``"r"``; writing is not implemented yet.

    Raises:
        UnsupportedFeatureError: for a URL scheme no store is registered for.
        SchemaError: for an unknown storage option, mode or source type.

    Returns:
        A :class:`Store` (opened lazily).
    """
    if mode != "r":
        if mode == "w":
            raise UnsupportedFeatureError("writing to a store is not implemented yet")
        raise SchemaError(f"mode must be 'r' or 'w', got {mode!r}")
    if isinstance(source, Store):
        if storage_options:
            raise SchemaError("storage_options cannot be applied to an already open store")
        return source
    if isinstance(source, (str, os.PathLike)):
        return registry.open_input(source, storage_options)
    if isinstance(source, (bytes, bytearray, memoryview)):
        options = dict(storage_options or {})
        tuning = StoreOptions.pop_from(options)
        check_no_options_left(options, "memory")
        return MemoryStore(source, options=tuning)
    if is_file_object(source):
        options = dict(storage_options or {})
        tuning = StoreOptions.pop_from(options, max_request_size=registry.LOCAL_MAX_REQUEST_SIZE)
        check_no_options_left(options, "file objects")
        return FileObjectStore(source, options=tuning)
    raise SchemaError(f"cannot read from a {type(source).__name__}: pass a path, a URL, "
                      "a bytes-like object or a binary file object")
