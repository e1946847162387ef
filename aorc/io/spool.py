"""Part buffers of the object stores' uploads: in memory, or spooled to a local folder.

An upload (:class:`aorc.io.remote.UploadOutput`: S3 multipart, GCS resumable, Azure blocks)
collects a file's bytes until a part is full, then sends the part. Where those bytes wait is
a :class:`PartBuffer`:

* :class:`MemoryPartBuffer` (the default) keeps them in memory: an open file holds up to one
  part (5 MiB at least on S3) whatever it writes;
* :class:`DiskPartBuffer` writes them to segment files of a :class:`Spool` folder and reads
  a part back only to send it (in part-sized pieces; never the whole file), as Hadoop S3A's
  ``fs.s3a.fast.upload.buffer=disk`` does. An open file then holds no part in memory and no
  file handle between writes (a segment is opened for each write and read).

A :class:`Spool` is one writer's (one sink's) folder ``<spool_dir>/aorc-spool-<pid>-<hex>``
under ``spool_dir`` (default: :func:`tempfile.gettempdir`). It holds an exclusive lock on
its ``owner.lock`` (``fcntl.flock``; where there is none, the owner's pid is checked) while
it lives; :meth:`Spool.close` removes the folder. A process killed without closing leaves
its folder: the next :class:`Spool` started under the same ``spool_dir`` removes folders
whose lock nobody holds (their owner is dead), never a live one's. ``max_bytes`` bounds
the folder: a write that would take the spool past it stays in memory instead (counted in
:attr:`Spool.overflow_bytes`), where the writer's memory accounting sees it.

Nothing here knows the ORC format.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import os
import re
import secrets
import shutil
import tempfile
from typing import Protocol, runtime_checkable

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX: the pid check stands in
    fcntl = None  # type: ignore[assignment]

from aorc.errors import SchemaError, StoreError

__all__ = [
    "DEFAULT_MAX_SPOOL_BYTES",
    "LOCK_NAME",
    "SPOOL_PREFIX",
    "DiskPartBuffer",
    "MemoryPartBuffer",
    "PartBuffer",
    "Spool",
    "remove_stale_spools",
]

#: The most bytes a spool holds on disk unless told otherwise.
DEFAULT_MAX_SPOOL_BYTES = 8 << 30
#: Prefix of the spool folders (``aorc-spool-<pid>-<12 hex>``).
SPOOL_PREFIX = "aorc-spool-"
#: The lock file a live spool holds locked.
LOCK_NAME = "owner.lock"
_FOLDER = re.compile(re.escape(SPOOL_PREFIX) + r"(?P<pid>\d+)-[0-9a-f]{12}")


@runtime_checkable
class PartBuffer(Protocol):
    """Where an upload's bytes wait until they are sent as a part (first in, first out)."""

    @property
    def buffered(self) -> int:
        """Bytes written and not yet taken."""
        ...

    @property
    def memory(self) -> int:
        """Of those, the bytes held in memory."""
        ...

    async def write(self, data: bytes) -> None:
        """Append ``data``."""
        ...

    async def take(self, size: int) -> bytes:
        """Remove and return the first ``size`` bytes (at most :attr:`buffered`)."""
        ...

    def clear(self) -> None:
        """Drop everything (the upload was aborted or completed). Safe to repeat."""
        ...


class _Counted:
    """The count a part buffer keeps of its bytes written and not yet taken."""

    _buffered: int

    @property
    def buffered(self) -> int:
        """Bytes written and not yet taken."""
        return self._buffered


class MemoryPartBuffer(_Counted):
    """The bytes in memory (chunks as written, joined when a part is taken)."""

    def __init__(self) -> None:
        self._chunks: collections.deque[memoryview] = collections.deque()
        self._buffered = 0

    @property
    def memory(self) -> int:
        """All of them are in memory."""
        return self._buffered

    async def write(self, data: bytes) -> None:
        """Append ``data`` (kept, not copied)."""
        self.append(data)

    def append(self, data: bytes) -> None:
        """Append ``data`` without awaiting."""
        self._chunks.append(memoryview(data))
        self._buffered += len(data)

    async def take(self, size: int) -> bytes:
        """The first ``size`` bytes, removed."""
        return self.take_now(size)

    def take_now(self, size: int) -> bytes:
        """The first ``size`` bytes, removed, without awaiting."""
        if size <= 0:
            return b""
        first = self._chunks[0]
        if len(first) == size and isinstance(first.obj, bytes) and len(first.obj) == size:
            self._chunks.popleft()
            self._buffered -= size
            return first.obj
        pieces = []
        need = size
        while need:
            chunk = self._chunks[0]
            if len(chunk) <= need:
                pieces.append(self._chunks.popleft())
                need -= len(chunk)
            else:
                pieces.append(chunk[:need])
                self._chunks[0] = chunk[need:]
                need = 0
        self._buffered -= size
        return b"".join(pieces)

    def clear(self) -> None:
        """Drop everything."""
        self._chunks.clear()
        self._buffered = 0


class _Segment:
    """A spool file holding ``size`` bytes, of which the first ``head`` were taken."""

    __slots__ = ("head", "path", "size")

    def __init__(self, path: str) -> None:
        self.path = path
        self.size = 0
        self.head = 0


class DiskPartBuffer(_Counted):
    """The bytes in segment files of a :class:`Spool` (see the module docstring).

    Segments hold up to ``segment_size`` bytes each (a part's worth), so a taken part frees
    its segments' disk space at once. A write the spool has no room for stays in memory.

    Args:
        spool: the folder.
        segment_size: bytes per segment file (the upload's part size).
    """

    def __init__(self, spool: Spool, segment_size: int) -> None:
        self._spool = spool
        self._segment_size = max(1, segment_size)
        self._queue: collections.deque[_Segment | MemoryPartBuffer] = collections.deque()
        self._buffered = 0
        self._memory = 0
        self._cleared = False

    @property
    def memory(self) -> int:
        """Bytes held in memory (writes the spool had no room for)."""
        return self._memory

    async def write(self, data: bytes) -> None:
        """Append ``data`` to the last segment (and new ones as they fill), in a thread."""
        if not data:
            return
        if self._cleared:
            raise StoreError("the part buffer was already cleared")
        if not self._spool.reserve(len(data)):
            self._memory_tail().append(data)
            self._memory += len(data)
            self._buffered += len(data)
            return
        plan = self._plan(len(data))
        try:
            await asyncio.to_thread(_write_segments, data, plan)
        except BaseException as exc:
            self._spool.release(len(data))  # (the upload fails: only clear() follows)
            if isinstance(exc, OSError):
                raise StoreError(f"cannot spool to {self._spool.path}: "
                                 f"{exc.strerror or exc}") from exc
            raise
        for segment, _, length in plan:
            segment.size += length
        self._buffered += len(data)

    def _memory_tail(self) -> MemoryPartBuffer:
        tail = self._queue[-1] if self._queue else None
        if not isinstance(tail, MemoryPartBuffer):
            tail = MemoryPartBuffer()
            self._queue.append(tail)
        return tail

    def _plan(self, length: int) -> list[tuple[_Segment, int, int]]:
        """Where ``length`` new bytes go: (segment, offset in the data, bytes)."""
        plan: list[tuple[_Segment, int, int]] = []
        at = 0
        tail = self._queue[-1] if self._queue else None
        while at < length:
            if not isinstance(tail, _Segment) or tail.size + sum(
                    n for s, _, n in plan if s is tail) >= self._segment_size:
                tail = _Segment(self._spool.new_segment_path())
                self._queue.append(tail)
            room = self._segment_size - tail.size - sum(n for s, _, n in plan if s is tail)
            n = min(room, length - at)
            plan.append((tail, at, n))
            at += n
        return plan

    async def take(self, size: int) -> bytes:
        """The first ``size`` bytes, removed (read back from the segments in a thread)."""
        if size <= 0:
            return b""
        reads: list[tuple[_Segment | MemoryPartBuffer, int, int]] = []
        need = size
        for item in self._queue:
            if not need:
                break
            have = item.size - item.head if isinstance(item, _Segment) else item.buffered
            n = min(have, need)
            reads.append((item, item.head if isinstance(item, _Segment) else 0, n))
            need -= n
        if need:
            raise StoreError(f"asked for {size} bytes, {self._buffered} buffered")
        files = [(s.path, at, n) for s, at, n in reads if isinstance(s, _Segment)]
        try:
            chunks = iter(await asyncio.to_thread(_read_segments, files) if files else [])
        except OSError as exc:
            raise StoreError(f"cannot read back {self._spool.path}: {exc.strerror or exc}"
                             ) from exc
        pieces = []
        for item, _, n in reads:
            if isinstance(item, _Segment):
                pieces.append(next(chunks))
                item.head += n
                self._spool.release(n)
            else:
                pieces.append(item.take_now(n))
                self._memory -= n
        while self._queue and _drained(self._queue[0], self._segment_size,
                                       len(self._queue) == 1):
            done = self._queue.popleft()
            if isinstance(done, _Segment):
                _remove(done.path)
        self._buffered -= size
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)

    def clear(self) -> None:
        """Remove the segment files and drop the memory held."""
        self._cleared = True
        for item in self._queue:
            if isinstance(item, _Segment):
                self._spool.release(item.size - item.head)
                _remove(item.path)
            else:
                item.clear()
        self._queue.clear()
        self._buffered = self._memory = 0


def _drained(item: _Segment | MemoryPartBuffer, segment_size: int, last: bool) -> bool:
    """A segment fully taken that gets no more writes (full, or not the last), or an empty
    memory piece."""
    if isinstance(item, _Segment):
        return item.head >= item.size and (item.size >= segment_size or not last)
    return item.buffered == 0


def _write_segments(data: bytes, plan: list[tuple[_Segment, int, int]]) -> None:
    view = memoryview(data)
    for segment, at, n in plan:
        with open(segment.path, "ab") as f:
            f.write(view[at:at + n])


def _read_segments(files: list[tuple[str, int, int]]) -> list[bytes]:
    out = []
    for path, at, n in files:
        with open(path, "rb") as f:
            f.seek(at)
            data = f.read(n)
        if len(data) != n:
            raise OSError(errno.EIO, f"{path}: {len(data)} bytes where {n} were spooled")
        out.append(data)
    return out


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


# =========================================================================== the folder

class Spool:
    """One writer's spool folder (see the module docstring). Created by :meth:`open`.

    Attributes:
        path: the folder.
        max_bytes: most bytes on disk at once.
        used: bytes on disk now.
        peak: the most bytes on disk so far.
        overflow_bytes: bytes kept in memory because the spool was full.
        removed: stale folders of dead writers removed when this one started.
    """

    def __init__(self, path: str, max_bytes: int, lock: int | None) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self._lock = lock
        self._count = 0
        self.used = 0
        self.peak = 0
        self.overflow_bytes = 0
        self.removed: list[str] = []
        self.closed = False

    @classmethod
    def open(cls, spool_dir: str | os.PathLike[str] | None = None,
             max_bytes: int = DEFAULT_MAX_SPOOL_BYTES) -> Spool:
        """Create a spool folder under ``spool_dir`` (default: the system's temporary
        folder), first removing the folders dead writers left there.

        Raises:
            SchemaError: ``max_bytes`` is not a positive integer.
            StoreError: the folder cannot be created.
        """
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise SchemaError(f"max_spool_bytes must be a positive integer, got {max_bytes!r}")
        root = os.fspath(spool_dir) if spool_dir is not None else tempfile.gettempdir()
        try:
            os.makedirs(root, exist_ok=True)
            removed = remove_stale_spools(root)
            path = os.path.join(root, f"{SPOOL_PREFIX}{os.getpid()}-{secrets.token_hex(6)}")
            os.mkdir(path, 0o700)  # (the bytes of files being written: private)
            lock = _lock(os.path.join(path, LOCK_NAME))
        except OSError as exc:
            raise StoreError(f"cannot create a spool folder in {root}: "
                             f"{exc.strerror or exc}") from exc
        spool = cls(path, max_bytes, lock)
        spool.removed = removed
        return spool

    def new_segment_path(self) -> str:
        """A fresh segment file's path."""
        self._count += 1
        return os.path.join(self.path, f"{self._count:08d}.part")

    def reserve(self, nbytes: int) -> bool:
        """Count ``nbytes`` about to be spooled; False (nothing counted) when they would
        take the spool past :attr:`max_bytes` or the spool is closed."""
        if self.closed or self.used + nbytes > self.max_bytes:
            self.overflow_bytes += nbytes
            return False
        self.used += nbytes
        self.peak = max(self.peak, self.used)
        return True

    def release(self, nbytes: int) -> None:
        """``nbytes`` left the spool."""
        self.used = max(0, self.used - nbytes)

    def buffer(self, segment_size: int) -> DiskPartBuffer:
        """A part buffer spooling to this folder."""
        return DiskPartBuffer(self, segment_size)

    def close(self) -> None:
        """Remove the folder and release its lock. Safe to repeat."""
        if self.closed:
            return
        self.closed = True
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None


def _lock(path: str) -> int | None:
    """Create ``path`` and hold an exclusive lock on it (None without ``fcntl``: the folder
    name's pid stands in)."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    if fcntl is None:  # pragma: no cover
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        return None
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def _is_dead(folder: str, pid: int) -> bool:
    """Whether the spool folder's owner is gone: nobody holds its lock (or, without
    ``fcntl``, its pid is not running). A folder without a lock file yet is being created
    by a live owner, unless its pid is gone."""
    lock_path = os.path.join(folder, LOCK_NAME)
    if fcntl is not None and os.path.exists(lock_path):
        try:
            fd = os.open(lock_path, os.O_RDWR)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # locked: its owner lives
        finally:
            os.close(fd)  # (closing releases a lock we took)
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # exists, not ours to signal
    return False


def remove_stale_spools(root: str) -> list[str]:
    """Remove the spool folders under ``root`` whose owners are dead; their paths."""
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return []
    for name in names:
        match = _FOLDER.fullmatch(name)
        folder = os.path.join(root, name)
        if match is None or not os.path.isdir(folder):
            continue
        if _is_dead(folder, int(match["pid"])):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed
