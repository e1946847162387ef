"""Local files, read through aiofiles' thread pool so the event loop never blocks on disk."""

from __future__ import annotations

import asyncio
import errno
import os
from typing import Any

import aiofiles
import aiofiles.os

from aorc.errors import AccessDeniedError, ObjectNotFoundError, StoreError
from aorc.io.base import BaseStore, StoreOptions

__all__ = ["LocalStore", "map_os_error"]


def map_os_error(exc: OSError, path: str) -> StoreError:
    """The StoreError subclass for an OSError raised while using ``path``.

    The result's message is one line naming the path; its ``errno`` is the original's.
    """
    err: StoreError
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT:
        err = ObjectNotFoundError(f"no such file: {path}")
    elif isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        err = AccessDeniedError(f"permission denied: {path}")
    elif isinstance(exc, IsADirectoryError):
        err = StoreError(f"is a directory, not a file: {path}")
    else:
        err = StoreError(f"cannot read {path}: {exc.strerror or exc}")
    err.errno = exc.errno
    return err


def _pread_full(fd: int, length: int, offset: int) -> bytes:
    """Read up to ``length`` bytes at ``offset``; short only at the end of the file."""
    first = os.pread(fd, length, offset)
    if len(first) == length or not first:
        return first
    parts = [first]
    got = len(first)
    while got < length:
        part = os.pread(fd, length - got, offset + got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def _read_tail_sync(fd: int, n: int) -> tuple[bytes, int]:
    size = os.fstat(fd).st_size
    take = min(n, size)
    return _pread_full(fd, take, size - take), size


_pread = aiofiles.os.wrap(_pread_full)
_tail = aiofiles.os.wrap(_read_tail_sync)


def _close_when_opened(opening: asyncio.Future[Any]) -> None:
    if not opening.cancelled() and opening.exception() is None:
        opening.result().close()


class LocalStore(BaseStore):
    """A file on a local file system.

    Reads use positional reads (``os.pread``) in aiofiles' executor, so any number of them
    can run at once on one file descriptor. Where ``pread`` does not exist (Windows) reads
    are serialised with seek + read.

    Args:
        path: the file's path.
        options: coalescing and concurrency tuning.
    """

    def __init__(self, path: str | os.PathLike[str], options: StoreOptions | None = None) -> None:
        super().__init__(os.fspath(path), options)
        self._file: Any = None
        self._seek_lock: Any = None

    async def _open(self) -> None:
        # The open runs in a thread and cannot be stopped: if this task is cancelled
        # meanwhile, the file it opens is closed when the open completes (no leaked handle).
        opening = asyncio.ensure_future(asyncio.to_thread(open, self.path, "rb", buffering=0))
        try:
            self._file = await asyncio.shield(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(_close_when_opened)
            raise
        except OSError as exc:
            raise map_os_error(exc, self.path) from exc
        if not hasattr(os, "pread"):  # pragma: no cover - Windows only
            self._seek_lock = asyncio.Lock()

    async def _read_tail(self, n: int) -> tuple[bytes, int]:
        try:
            if self._seek_lock is None:
                tail: tuple[bytes, int] = await _tail(self._file.fileno(), n)
                return tail
            async with self._seek_lock:  # pragma: no cover - Windows only
                size = (await aiofiles.os.stat(self.path)).st_size
                take = min(n, size)
                await asyncio.to_thread(self._file.seek, size - take)
                return await asyncio.to_thread(self._file.read, take), size
        except OSError as exc:
            raise map_os_error(exc, self.path) from exc

    async def _fetch(self, offset: int, length: int) -> bytes:
        try:
            if self._seek_lock is None:
                data: bytes = await _pread(self._file.fileno(), length, offset)
                return data
            async with self._seek_lock:  # pragma: no cover - Windows only
                await asyncio.to_thread(self._file.seek, offset)
                chunks = []
                got = 0
                while got < length:
                    chunk = await asyncio.to_thread(self._file.read, length - got)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    got += len(chunk)
                return b"".join(chunks)
        except OSError as exc:
            raise map_os_error(exc, self.path) from exc

    async def _close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()
