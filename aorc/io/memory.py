"""An in-memory store: reads ORC data held in a bytes-like object."""

from __future__ import annotations

from aorc.io.base import BaseStore, StoreOptions

__all__ = ["MemoryStore"]


class MemoryStore(BaseStore):
    """A store over a buffer (``bytes``, ``bytearray``, ``memoryview``, ...).

    Every read counts as one request, like a real store, so I/O planning can be tested
    against it. The buffer is not copied; do not modify it while the store is in use.

    Args:
        data: the object's contents.
        path: the name used in error messages.
        options: coalescing and concurrency tuning.
    """

    def __init__(self, data: bytes | bytearray | memoryview, path: str = "<memory>",
                 options: StoreOptions | None = None) -> None:
        super().__init__(path, options)
        self._data: memoryview | None = memoryview(data).cast("B")
        self.size = len(self._data)

    def _buffer(self) -> memoryview:
        if self._data is None:  # pragma: no cover - guarded by BaseStore
            raise RuntimeError("store is closed")
        return self._data

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        data = self._buffer()
        take = min(n, len(data))
        return bytes(data[len(data) - take:]), len(data)

    async def _fetch(self, offset: int, length: int) -> bytes:
        return bytes(self._buffer()[offset:offset + length])

    async def _close(self) -> None:
        if self._data is not None:
            self._data.release()
            self._data = None
