"""Binary file objects as sources (``open(path, "rb")``, ``io.BytesIO``, a spooled temporary
file, an fsspec file...), as pyarrow.orc reads them.

A file object with a real file descriptor is read with positional reads (``os.pread``) in
worker threads, so reads run concurrently and the object's position is not used. Any other
object is read with ``seek`` and ``read`` under a lock: in a worker thread, or directly for an
in-memory ``io.BytesIO``. The object is never closed by aorc: it belongs to the caller.
"""

from __future__ import annotations

import asyncio
import io
import os
from typing import Any, Protocol, runtime_checkable

from aorc.errors import SchemaError, StoreError
from aorc.io.base import BaseStore, StoreOptions

__all__ = ["FileObjectStore", "ReadableFile", "is_file_object"]


@runtime_checkable
class ReadableFile(Protocol):
    """What a binary file object needs to be read: ``read`` and ``seek``."""

    def read(self, size: int = -1, /) -> bytes:
        """Read up to ``size`` bytes."""
        ...

    def seek(self, offset: int, whence: int = 0, /) -> int:
        """Move to ``offset``."""
        ...


def is_file_object(source: object) -> bool:
    """Whether ``source`` is a readable binary file object (not a path, URL or buffer)."""
    return (not isinstance(source, (str, bytes, bytearray, memoryview, os.PathLike))
            and callable(getattr(source, "read", None))
            and callable(getattr(source, "seek", None)))


def _descriptor(file: Any) -> int | None:
    """The file's descriptor when positional reads can serve it, else ``None``."""
    if not hasattr(os, "pread") or isinstance(file, io.BytesIO):
        return None
    try:
        fd = file.fileno()
        os.fstat(fd)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if isinstance(fd, int) else None


class FileObjectStore(BaseStore):
    """A store over a caller's binary file object.

    Args:
        file: the object (opened for binary reading; ``seek`` must work).
        name: the name used in messages (default: the object's ``name``, if a string).
        options: coalescing and concurrency tuning.

    Raises:
        SchemaError: the object is not readable, or gives text.
    """

    def __init__(self, file: Any, name: str | None = None,
                 options: StoreOptions | None = None) -> None:
        if not is_file_object(file):
            raise SchemaError(f"cannot read from a {type(file).__name__}: a file object needs "
                              f"read() and seek()")
        if isinstance(file, io.TextIOBase):
            raise SchemaError("the file object is opened in text mode: open it with 'rb'")
        label = name or getattr(file, "name", None)
        super().__init__(label if isinstance(label, str) else f"<{type(file).__name__}>",
                         options)
        self._file = file
        self._fd = _descriptor(file)
        self._lock = asyncio.Lock()
        self._inline = isinstance(file, io.BytesIO)

    def _size(self) -> int:
        if self._fd is not None:
            return os.fstat(self._fd).st_size
        return int(self._file.seek(0, io.SEEK_END))

    def _read_at(self, offset: int, length: int) -> bytes:
        if self._fd is not None:
            parts = []
            while length > 0:
                piece = os.pread(self._fd, length, offset)
                if not piece:
                    break
                parts.append(piece)
                offset += len(piece)
                length -= len(piece)
            return b"".join(parts)
        self._file.seek(offset)
        data = self._file.read(length)
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise StoreError(f"{self.path}: the file object's read() gave a "
                             f"{type(data).__name__}, not bytes: open it with 'rb'")
        return bytes(data)

    def _tail_sync(self, n: int) -> tuple[bytes, int]:
        size = self._size()
        take = min(n, size)
        return self._read_at(size - take, take), size

    async def _call(self, func: Any, *args: Any) -> Any:
        try:
            if self._fd is not None:  # positional: no shared position, no lock
                return await asyncio.to_thread(func, *args)
            async with self._lock:
                return func(*args) if self._inline else await asyncio.to_thread(func, *args)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read the file object: "
                             f"{exc.strerror or exc}") from exc

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        data, size = await self._call(self._tail_sync, n)
        return data, size

    async def _fetch(self, offset: int, length: int) -> bytes:
        data: bytes = await self._call(self._read_at, offset, length)
        return data
