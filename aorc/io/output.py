"""Outputs: where the writer's bytes go (local files, memory, S3 via aorc.io.s3.store).

An output receives a file's bytes in order with :meth:`Output.write` and makes them visible only
when :meth:`Output.complete` is called; :meth:`Output.abort` drops everything written so far.
Readers therefore never see a half-written file:

* :class:`LocalOutput` writes to a temporary file beside the target (same directory, named
  ``.<target name>.aorc-tmp-<random>``) and renames it over the target on completion
  (``os.replace``, atomic on POSIX file systems); abort removes the temporary file.
* :class:`MemoryOutput` collects the bytes in memory, for tests and for ``bytes`` output.

:func:`aorc.io.open_output` (in :mod:`aorc.io.registry`) picks the output for a destination.
"""

from __future__ import annotations

import asyncio
import errno
import os
import secrets
from collections.abc import Mapping
from typing import Any, BinaryIO, Protocol, runtime_checkable

from aorc.errors import (
    AccessDeniedError,
    ObjectExistsError,
    ObjectNotFoundError,
    SchemaError,
    StoreError,
)

__all__ = [
    "Destination",
    "LocalOutput",
    "MemoryOutput",
    "Output",
    "open_local_output",
]

#: Marker in the names of temporary files (``.<name>.aorc-tmp-<random>``).
TEMP_MARKER = ".aorc-tmp-"


@runtime_checkable
class Output(Protocol):
    """Where a file being written goes.

    Attributes:
        path: a printable name of the destination, used in error messages.
    """

    path: str

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data`` to the file being written."""
        ...

    async def complete(self) -> None:
        """Make the written bytes visible as the destination file; no more writes follow."""
        ...

    async def abort(self) -> None:
        """Drop everything written; the destination is left as it was. Safe to repeat, and
        safe after :meth:`complete` failed."""
        ...


#: What :func:`aorc.io.open_output` accepts.
Destination = str | os.PathLike[str] | Output


def _write_error(exc: OSError, path: str, action: str) -> StoreError:
    """The StoreError subclass for an OSError raised while writing ``path``."""
    err: StoreError
    if isinstance(exc, FileNotFoundError) or exc.errno == errno.ENOENT:
        err = ObjectNotFoundError(f"cannot {action} {path}: its directory does not exist")
    elif isinstance(exc, PermissionError) or exc.errno in (errno.EACCES, errno.EPERM):
        err = AccessDeniedError(f"permission denied: cannot {action} {path}")
    else:
        err = StoreError(f"cannot {action} {path}: {exc.strerror or exc}")
    err.errno = exc.errno
    return err


class _OutputState:
    """The life cycle shared by the outputs: open -> completed | aborted."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._completed = False
        self._aborted = False

    @property
    def completed(self) -> bool:
        """Whether the file became visible (:meth:`complete` succeeded, or a cancellation
        arrived once it could no longer be undone)."""
        return self._completed

    def _check_open(self, action: str) -> None:
        if self._aborted:
            raise StoreError(f"cannot {action} {self.path}: the write was aborted")
        if self._completed:
            raise StoreError(f"cannot {action} {self.path}: the file is already complete")


class LocalOutput(_OutputState):
    """A file on a local file system, written atomically.

    The temporary file is created by the first :meth:`write` (so a writer that fails before
    writing anything leaves no trace). Disk work runs in worker threads; a write that was
    cancelled keeps running in its thread, and :meth:`abort` waits for it before it removes
    the temporary file. A cancellation that arrives while :meth:`complete` renames the file
    cannot undo the rename: the file is then complete and :meth:`abort` leaves it.

    Args:
        path: the target file's path. Missing parent directories are created (by the first
            write).
        fsync: flush the data to the disk before the rename (default), so that a crash
            after :meth:`complete` cannot leave an empty or partial target.
        overwrite: replace an existing target (default). ``False``: the finished file is
            hard-linked into place, which fails atomically with
            :class:`~aorc.errors.ObjectExistsError` when the target exists.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True,
                 overwrite: bool = True) -> None:
        super().__init__(os.fspath(path))
        directory, name = os.path.split(os.path.abspath(self.path))
        if not name or self.path.endswith((os.sep, os.altsep or os.sep)):
            raise SchemaError(f"cannot write to {self.path!r}: it names a directory")
        self.temp_path = os.path.join(
            directory, f".{name}{TEMP_MARKER}{secrets.token_hex(6)}")
        self._fsync = fsync
        self._overwrite = overwrite
        self._file: BinaryIO | None = None
        self._busy: asyncio.Future[Any] | None = None
        self.bytes_written = 0

    # ----------------------------------------------------------------- blocking parts

    def _open_sync(self) -> BinaryIO:
        if os.path.isdir(self.path):
            raise IsADirectoryError(errno.EISDIR, "is a directory", self.path)
        os.makedirs(os.path.dirname(self.temp_path), exist_ok=True)
        return open(self.temp_path, "xb")  # noqa: SIM115 - closed by complete/abort

    def _write_sync(self, data: bytes | bytearray | memoryview) -> None:
        if self._file is None:
            self._file = self._open_sync()
        self._file.write(data)
        self._file.flush()  # the bytes reach the file as they come (a large file streams)

    def _complete_sync(self) -> None:
        if self._file is None:
            self._file = self._open_sync()
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        if self._overwrite:
            os.replace(self.temp_path, self.path)
            return
        os.link(self.temp_path, self.path)  # FileExistsError when the target exists
        os.remove(self.temp_path)

    def _abort_sync(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError:
                pass  # the data is being thrown away anyway
        try:
            os.remove(self.temp_path)
        except (FileNotFoundError, NotADirectoryError):
            pass  # never created

    # ----------------------------------------------------------------- async API

    async def _run(self, func: Any, *args: Any) -> None:
        """Run ``func`` in a thread; cancelling the caller does not orphan the thread's
        file work: :meth:`abort` waits for it."""
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, func, *args)
        self._busy = future
        await asyncio.shield(future)

    async def _settle(self) -> None:
        """Wait for a thread left running by a cancelled call; its outcome no longer matters."""
        busy, self._busy = self._busy, None
        if busy is not None:
            try:
                await busy
            except (Exception, asyncio.CancelledError):  # noqa: BLE001 - discarded on purpose
                pass

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data`` to the temporary file (created by the first call).

        Raises:
            StoreError: the file cannot be created or written (``ObjectNotFoundError`` when
                the directory is missing, ``AccessDeniedError`` without permission).
        """
        self._check_open("write")
        await self._settle()
        try:
            await self._run(self._write_sync, data)
        except OSError as exc:
            raise _write_error(exc, self.path, "write") from exc
        self.bytes_written += len(data)

    async def complete(self) -> None:
        """Flush the temporary file and rename it to the target, replacing any file there.

        Raises:
            StoreError: flushing or renaming failed; the temporary file is then removed.
        """
        self._check_open("complete")
        await self._settle()
        try:
            await self._run(self._complete_sync)
        except FileExistsError as exc:
            await self.abort()
            raise ObjectExistsError(f"{self.path}: the file already exists and the write "
                                    f"does not overwrite (overwrite=False)") from exc
        except OSError as exc:
            await self.abort()
            raise _write_error(exc, self.path, "write") from exc
        except asyncio.CancelledError:
            await self._finish_cancelled_complete()
            raise
        self._completed = True

    async def _finish_cancelled_complete(self) -> None:
        """A cancellation cannot stop a rename under way: wait for it so that the output's
        state says whether the file became visible (then :meth:`abort` leaves it)."""
        busy, self._busy = self._busy, None
        if busy is None:  # pragma: no cover - _run always sets it
            return
        try:
            await busy
        except Exception:  # noqa: BLE001 - failed: abort() removes the temporary file
            return
        self._completed = True

    async def abort(self) -> None:
        """Close and remove the temporary file; the target is untouched."""
        if self._completed or self._aborted:
            return
        self._aborted = True
        await self._settle()
        await asyncio.shield(asyncio.get_running_loop().run_in_executor(None, self._abort_sync))


class MemoryOutput(_OutputState):
    """Collects the file in memory; :meth:`getvalue` returns it once complete.

    Args:
        path: the name used in error messages.
    """

    def __init__(self, path: str = "<memory>") -> None:
        super().__init__(path)
        self._buffer: bytearray | None = bytearray()

    @property
    def bytes_written(self) -> int:
        """Bytes written so far (0 after an abort)."""
        return len(self._buffer) if self._buffer is not None else 0

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Append ``data``."""
        self._check_open("write")
        assert self._buffer is not None
        self._buffer += data

    async def complete(self) -> None:
        """Mark the file complete."""
        self._check_open("complete")
        self._completed = True

    async def abort(self) -> None:
        """Drop the bytes written so far."""
        if self._completed or self._aborted:
            return
        self._aborted = True
        self._buffer = None

    def getvalue(self) -> bytes:
        """The complete file.

        Raises:
            StoreError: the file is not complete (still being written, or aborted).
        """
        if not self._completed or self._buffer is None:
            state = "aborted" if self._aborted else "not complete yet"
            raise StoreError(f"{self.path}: the file is {state}")
        return bytes(self._buffer)


def open_local_output(path: str, storage_options: Mapping[str, Any] | None = None) -> Output:
    """The output that writes the local file ``path`` (see :class:`LocalOutput`).

    Args:
        path: the file's path.
        storage_options: ``fsync`` (bool, default true: flush to disk before the final
            rename), ``overwrite`` (bool, default true; ``False``: create only).

    Raises:
        SchemaError: for an unknown storage option or a bad value.
    """
    options = dict(storage_options or {})
    fsync = options.pop("fsync", True)
    overwrite = options.pop("overwrite", True)
    if options:
        unknown = ", ".join(sorted(map(str, options)))
        raise SchemaError(f"unknown storage option(s) for local files: {unknown}")
    for name, value in (("fsync", fsync), ("overwrite", overwrite)):
        if not isinstance(value, bool):
            raise SchemaError(f"storage option {name} must be a bool, got {value!r}")
    return LocalOutput(path, fsync=fsync, overwrite=overwrite)
