"""Opening the files of a Hive ACID table: a bucket file that streaming ingest is still
writing is read only up to the length its ``_flush_length`` side file gives (the writer
flushed a complete ORC tail there), through :class:`FlushedPrefix`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aorc.dataset.acid.layout import AcidFile
from aorc.dataset.acid.listing import flushed_length
from aorc.errors import CorruptFileError
from aorc.io import IOStats, Store, registry

__all__ = ["FlushedPrefix", "open_data_store", "read_small"]


class FlushedPrefix:
    """A store showing the first ``length`` bytes of another store as the whole object.

    Attributes:
        path: the object's name, for messages.
        stats: the inner store's counters.
    """

    def __init__(self, inner: Store, length: int) -> None:
        self._inner = inner
        self._length = length
        self.path = inner.path
        self.stats = inner.stats

    async def read_tail(self, n: int) -> tuple[bytes, int]:
        """The last ``n`` bytes of the prefix and its length."""
        start = max(0, self._length - n)
        return await self._inner.read_range(start, self._length - start), self._length

    async def read_range(self, offset: int, length: int) -> bytes:
        """``length`` bytes from ``offset`` (within the prefix)."""
        if offset + length > self._length:
            raise CorruptFileError(f"{self.path}: a read past the flushed length "
                                   f"{self._length}")
        return await self._inner.read_range(offset, length)

    async def read_ranges(self, ranges: Sequence[tuple[int, int]]) -> list[bytes]:
        """The bytes of each range, in order (within the prefix)."""
        for offset, length in ranges:
            if offset + length > self._length:
                raise CorruptFileError(f"{self.path}: a read past the flushed length "
                                       f"{self._length}")
        return await self._inner.read_ranges(ranges)

    async def close(self) -> None:
        """Close the inner store."""
        await self._inner.close()


async def read_small(f: AcidFile, storage_options: Mapping[str, Any] | None, io: IOStats
                     ) -> bytes:
    """The whole bytes of a small file (a side file)."""
    store = registry.open_input(f.path, storage_options, size=f.size)
    try:
        return await store.read_range(0, f.size) if f.size else b""
    finally:
        io.requests += store.stats.requests
        io.bytes += store.stats.bytes
        await store.close()


async def open_data_store(f: AcidFile, side: AcidFile | None,
                          storage_options: Mapping[str, Any] | None, io: IOStats
                          ) -> Store | None:
    """The store a data file is read through: its flushed prefix when it has a side file
    (``None`` when nothing was flushed yet), else the file itself."""
    store = registry.open_input(f.path, storage_options, size=f.size)
    if side is None:
        return store
    length = flushed_length(await read_small(side, storage_options, io), side.path)
    if length == 0:
        await store.close()
        return None
    if length > f.size:
        await store.close()
        raise CorruptFileError(f"{f.path}: flushed length {length} is beyond the file's "
                               f"{f.size} bytes")
    return FlushedPrefix(store, length)
