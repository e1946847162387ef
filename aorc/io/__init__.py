"""Stores: where ORC bytes come from (local files, buffers; S3 later).

:func:`open_store` picks the store for a source. All stores implement :class:`Store`:
a one-request tail read that also reveals the size, ranged reads, and coalesced concurrent
batches of ranged reads, with counters in :class:`IOStats`.
"""

from __future__ import annotations

import os
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from aorc.errors import SchemaError, UnsupportedFeatureError
from aorc.io.base import BaseStore, IOStats, Store, StoreOptions, check_no_options_left
from aorc.io.coalesce import RangePlan, plan_ranges
from aorc.io.local import LocalStore
from aorc.io.memory import MemoryStore

__all__ = [
    "BaseStore",
    "IOStats",
    "LocalStore",
    "MemoryStore",
    "RangePlan",
    "Source",
    "Store",
    "StoreOptions",
    "open_store",
    "plan_ranges",
    "source_name",
]

#: What :func:`open_store` accepts.
Source = str | os.PathLike[str] | bytes | bytearray | memoryview | Store


def source_name(source: object) -> str:
    """A short printable name for a source, for messages."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return "<memory>"
    if isinstance(source, Store):
        return source.path
    if isinstance(source, os.PathLike):
        return str(os.fspath(source))
    return str(source)


def open_store(source: Source, storage_options: Mapping[str, Any] | None = None,
               mode: str = "r") -> Store:
    """The store that reads ``source``.

    The store opens lazily: a missing file is reported by the first read, or by
    ``async with`` on the store. Close it with ``await store.close()``.

    Args:
        source: a local path (``str`` or ``os.PathLike``), a ``file://`` URI, a bytes-like
            object holding a whole ORC file, or an existing :class:`Store` (returned as is).
        storage_options: store tuning: ``max_merge_distance`` (bytes, default 1 MiB),
            ``max_request_size`` (default 64 MiB) and ``max_concurrency`` (default 10).
        mode: ``"r"``; writing is not implemented yet.

    Raises:
        UnsupportedFeatureError: for ``s3://`` and other URL schemes not supported yet.
        SchemaError: for an unknown storage option, mode or source type.
    """
    if mode != "r":
        if mode == "w":
            raise UnsupportedFeatureError("writing to a store is not implemented yet")
        raise SchemaError(f"mode must be 'r' or 'w', got {mode!r}")
    if isinstance(source, Store):
        if storage_options:
            raise SchemaError("storage_options cannot be applied to an already open store")
        return source
    options = dict(storage_options or {})
    tuning = StoreOptions.pop_from(options)
    if isinstance(source, (bytes, bytearray, memoryview)):
        check_no_options_left(options, "memory")
        return MemoryStore(source, options=tuning)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        raise SchemaError(f"cannot read from a {type(source).__name__}: pass a path, a URL "
                          "or a bytes-like object")
    if "://" in source:
        return _open_url(source, options, tuning)
    check_no_options_left(options, "local files")
    return LocalStore(source, tuning)


def _open_url(url: str, options: dict[str, Any], tuning: StoreOptions) -> Store:
    parsed = urllib.parse.urlsplit(url)
    scheme = parsed.scheme.lower()
    if scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise UnsupportedFeatureError(f"file:// URLs on another host are not supported: "
                                          f"{url}")
        check_no_options_left(options, "local files")
        return LocalStore(urllib.request.url2pathname(parsed.path), tuning)
    if scheme in ("s3", "s3a"):
        raise UnsupportedFeatureError("s3 support is not installed yet")
    raise UnsupportedFeatureError(f"unsupported URL scheme {scheme!r} in {url}")
