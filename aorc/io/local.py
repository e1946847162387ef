"""Local files, read through aiofiles' thread pool so the event loop never blocks on disk."""

from __future__ import annotations

import asyncio
import errno
import os
from typing import Any

import aiofiles
import aiofiles.os

from aorc.errors import AccessDeniedError, ObjectNotFoundError, StoreError
from aorc.io.base import BaseStore, StoreOptions, gather_or_cancel

try:
    from aorc.io import _pread as _split
except ImportError:  # pragma: no cover - a platform without pread (Windows): no kernel
    _split = None  # type: ignore[assignment]

__all__ = ["PIECE_BYTES", "LocalStore", "map_os_error"]

#: A read longer than twice this is split into pieces of about this many bytes (at most
#: :data:`MAX_PIECES`), read into one ``bytes`` object by several threads at once: copying
#: a 64 MiB stripe out of the page cache takes one thread about 10 ms, while the decode
#: threads wait for it.
PIECE_BYTES = 8 << 20
#: The most pieces (threads) of one split read.
MAX_PIECES = 4


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
                if _split is None:  # pragma: no cover - a platform without pread
                    data: bytes = await _pread(self._file.fileno(), length, offset)
                    return data
                return await self._read_into(offset, length)
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

    async def _read_into(self, offset: int, length: int) -> bytes:
        """The range read into one ``bytes`` object made in this thread, not in an executor
        thread (which may allocate from a malloc arena that maps its buffers fresh on every
        read: see :func:`aorc._allocator.on_main_arena`); a read of at least twice
        :data:`PIECE_BYTES` is filled in pieces by the executor's threads at once. Short
        only where the file ends."""
        count = max(1, min(MAX_PIECES, length // PIECE_BYTES))
        size = max(1, -(-length // count))
        target = _split.new_bytes(length)
        fd = self._file.fileno()
        loop = asyncio.get_running_loop()

        async def piece(start: int) -> int:
            n: int = await loop.run_in_executor(None, _split.pread_into, fd, target, start,
                                                min(size, length - start), offset + start)
            return n

        starts = range(0, length, size)
        if len(starts) == 1:  # one piece: no task to gather
            got = [await piece(0)]
        else:
            got = await gather_or_cancel([piece(start) for start in starts])
        for start, n in zip(starts, got, strict=True):
            if n < min(size, length - start):  # the file ends in this piece
                return target[:start + n]
        return target

    async def _close(self) -> None:
        if self._file is not None:
            file, self._file = self._file, None
            file.close()
