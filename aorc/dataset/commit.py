"""Part files staged by an engine's tasks and made durable by its driver in one commit.

An engine front end writing to a local folder (:mod:`aorc.ray`) can have its write tasks
stage their part files instead of completing them one by one: :func:`stage_part_async`
writes a task's files under hidden names beside their final ones,
``.aorc-stage-<write id>-<attempt>-<final name>`` (a leading dot: Spark, Hive,
``pyarrow.dataset`` and aorc's discovery skip them; the attempt is random, so a retried task
never meets the files of an attempt that died), without flushing them to the disk. Once every
task has succeeded, the driver calls :func:`commit_staged`: it flushes every staged file at
once (``fsync`` in a few threads: concurrent flushes share the file system's journal commits,
where one ``fsync`` per file in each task, about 5 ms each on a common disk, made a write
slower than pyarrow's, which does not flush at all), renames each to its final name and
flushes each folder, so that after the commit a crash cannot leave an empty or partial file
under a final name. A write that failed, and the attempts whose results the engine did not
keep (a retried task, a killed worker), leave only staged files, which
:func:`remove_staged` deletes by the write's id.
"""

from __future__ import annotations

import errno
import os
import secrets
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pyarrow as pa

from aorc.dataset.parts import part_template
from aorc.dataset.write import write_dataset
from aorc.errors import ObjectExistsError, ObjectNotFoundError, SchemaError, StoreError
from aorc.io import registry
from aorc.options import WriteOptions
from aorc.threads import WorkerPool

__all__ = ["COMMIT_THREADS", "STAGE_MARKER", "commit_staged", "final_name", "flush_soon",
           "local_commit", "new_attempt", "remove_staged", "remove_staged_tree", "stage_part_async",
           "stage_template"]

#: What starts the name of a staged file (then the write id, the attempt, the final name).
STAGE_MARKER = ".aorc-stage-"
#: Threads flushing the staged files and folders at once.
COMMIT_THREADS = 16


def new_attempt() -> str:
    """A random id of one attempt of a task (a retried task stages under new names)."""
    return secrets.token_hex(4)


def stage_template(write_id: str, task: int, attempt: str) -> str:
    """The ``basename_template`` of an attempt's staged files: the final names
    (:func:`aorc.dataset.parts.part_template`) behind ``.aorc-stage-<id>-<attempt>-``."""
    return f"{STAGE_MARKER}{write_id}-{attempt}-{part_template(write_id, task)}"


def final_name(staged: str, write_id: str) -> str:
    """The final path or URL of the staged file ``staged`` of write ``write_id``.

    Raises:
        SchemaError: ``staged`` is not a staged file of that write.
    """
    marker = f"{STAGE_MARKER}{write_id}-"
    at = staged.rfind(marker)
    if at < 0 or "-" not in staged[at + len(marker):]:
        raise SchemaError(f"{staged} is not a staged file of write {write_id}")
    return staged[:at] + staged[at + len(marker):].split("-", 1)[1]


def local_commit(dest: str, storage_options: Mapping[str, Any] | None
                 ) -> tuple[bool, bool] | None:
    """Whether ``dest`` is committed by the driver (a local folder), and then its
    ``(fsync, overwrite)`` storage options; ``None`` for an object store (each file is
    written atomically by its task, with nothing to flush).

    Raises:
        SchemaError: ``fsync`` or ``overwrite`` is not a bool.
    """
    if registry.local_path(dest) is None:
        return None
    options = dict(storage_options or {})
    fsync, overwrite = options.get("fsync", True), options.get("overwrite", True)
    for name, value in (("fsync", fsync), ("overwrite", overwrite)):
        if not isinstance(value, bool):
            raise SchemaError(f"storage option {name} must be a bool, got {value!r}")
    return fsync, overwrite


async def stage_part_async(table: pa.Table, dest: str, write_id: str, task: int,
                           attempt: str, *, partition_cols: Sequence[str] | None = None,
                           storage_options: Mapping[str, Any] | None = None,
                           options: WriteOptions | None = None,
                           write_options: Mapping[str, Any] | None = None
                           ) -> list[tuple[str, str]]:
    """Write one task's rows under the local folder ``dest`` as staged files (not flushed
    to the disk) for :func:`commit_staged`.

    Returns:
        ``(staged, final)`` paths of each file (none for no rows).

    Raises:
        SchemaError: bad options or a type ORC cannot hold.
        StoreError: the write failed (its files are removed).
    """
    if not table.num_rows:
        return []
    staging = {**(storage_options or {}), "fsync": False, "overwrite": True}
    staged = await write_dataset(
        table, dest, partition_cols=list(partition_cols or []),
        basename_template=stage_template(write_id, task, attempt), storage_options=staging,
        options=options, **dict(write_options or {}))
    flush_soon([_local(path) for path in staged])
    return [(path, final_name(path, write_id)) for path in staged]


_flusher: list[WorkerPool] = []
_flusher_lock = threading.Lock()


def _forget_flusher() -> None:  # a forked child has none of the parent's threads
    global _flusher_lock
    _flusher.clear()
    _flusher_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_flusher)


def _fsync_quiet(path: str) -> None:
    try:
        _fsync(path)
    except OSError:
        pass  # (committed, deleted or failed meanwhile: the driver's flush is the one relied on)


def flush_soon(paths: Sequence[str]) -> None:
    """Start flushing staged files to the disk in a background thread of this process,
    without waiting: the task returns at once, the flush overlaps the process's next work,
    and the driver's :func:`commit_staged` then finds them written (its own flush is the one
    relied on: a process that dies before leaves them to it)."""
    with _flusher_lock:
        if not _flusher:
            _flusher.append(WorkerPool(1, "aorc-stage-flush"))
        pool = _flusher[0]
    for path in paths:
        pool.submit(_fsync_quiet, path)


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _local(uri: str) -> str:
    path = registry.local_path(uri)
    if path is None:
        raise SchemaError(f"{uri} is not a local file")
    return path


def _folders(finals: Iterable[str], root: str) -> set[str]:
    """The folders whose entries the commit changed: each file's, its ancestors up to
    ``root`` (new partition folders) and ``root``'s parent (``root`` may be new too)."""
    top = os.path.abspath(root)
    out = {os.path.dirname(top)}
    for path in finals:
        folder = os.path.dirname(os.path.abspath(path))
        while folder not in out:
            out.add(folder)
            if folder == top or len(folder) <= len(top):
                break
            folder = os.path.dirname(folder)
    return out


def commit_staged(pairs: Sequence[tuple[str, str]], root: str, *, fsync: bool = True,
                  overwrite: bool = True) -> list[str]:
    """Make staged files durable and visible under their final names (on the driver, once
    every task has succeeded): flush them all at once, rename each, flush the folders.

    Args:
        pairs: ``(staged, final)`` local paths or ``file://`` URLs, as
            :func:`stage_part_async` returns them.
        root: the write's destination folder (its new subfolders are flushed too).
        fsync: flush files and folders to the disk (default); ``False`` only renames.
        overwrite: replace an existing final file (default); ``False``: fail with
            :class:`~aorc.errors.ObjectExistsError` instead.

    Returns:
        The final names, sorted.

    Raises:
        ObjectNotFoundError: a staged file is not visible here (a local path written by
            tasks on other machines: it must be a shared file system); nothing is renamed.
        ObjectExistsError: a final file exists and ``overwrite`` is false.
        StoreError: flushing or renaming failed; the files this call renamed are removed
            again (their names are the write's own).
    """
    local = [(_local(s), _local(f)) for s, f in pairs]
    for (staged, _), (uri, _) in zip(local, pairs, strict=True):
        if not os.path.isfile(staged):
            raise ObjectNotFoundError(
                f"cannot commit the write: its staged file {uri} is not visible to the "
                f"driver (a local destination written by the tasks of several machines "
                f"must be a shared file system)")
    if not local:
        return []
    done: list[str] = []
    with ThreadPoolExecutor(min(COMMIT_THREADS, len(local)), "aorc-commit") as pool:
        try:
            if fsync:
                list(pool.map(_fsync, [s for s, _ in local]))
            for staged, final in local:
                if overwrite:
                    os.replace(staged, final)
                else:
                    os.link(staged, final)  # FileExistsError when the target exists
                    os.remove(staged)
                done.append(final)
            if fsync:
                list(pool.map(_fsync, sorted(_folders(done, _local(root)))))
        except OSError as exc:
            for final in done:
                try:
                    os.remove(final)
                except OSError:
                    pass  # (the note below would need it; the rename error says enough)
            if isinstance(exc, FileExistsError):
                raise ObjectExistsError(f"{exc.filename2 or exc.filename}: the file already "
                                        f"exists and the write does not overwrite "
                                        f"(overwrite=False)") from exc
            err = StoreError(f"cannot commit the write's file {exc.filename}: "
                             f"{exc.strerror or exc}")
            err.errno = exc.errno
            raise err from exc
    return sorted(f for _, f in pairs)


def _is_staged(name: str, write_id: str) -> bool:
    """A staged file of write ``write_id``, or the temporary file of one being written."""
    return name.startswith(".") and f"{STAGE_MARKER[1:]}{write_id}-" in name


def remove_staged(folders: Iterable[str], write_id: str) -> list[str]:
    """Delete the staged files of write ``write_id`` left in ``folders`` (local paths or
    ``file://`` URLs; missing folders are skipped): those of attempts whose results were
    not kept, and their temporary files.

    Returns:
        The paths deleted.
    """
    removed = []
    for folder in folders:
        path = _local(folder)
        try:
            with os.scandir(path) as it:
                names = [e.name for e in it if _is_staged(e.name, write_id)]
        except OSError as exc:
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                continue
            raise
        for name in names:
            try:
                os.remove(os.path.join(path, name))
            except FileNotFoundError:
                continue
            removed.append(os.path.join(path, name))
    return removed


def remove_staged_tree(root: str, write_id: str) -> list[str]:
    """Delete the staged files of write ``write_id`` anywhere under ``root`` (after a
    failed write), and the folders under ``root`` that this leaves empty.

    Returns:
        The paths deleted.
    """
    top = _local(root)
    removed: list[str] = []
    emptied: set[str] = set()
    for folder, _, _ in sorted(os.walk(top), key=lambda w: len(w[0]), reverse=True):
        gone = remove_staged([folder], write_id)
        removed += gone
        if (gone or folder in emptied) and folder != top:
            try:
                os.rmdir(folder)
            except OSError:
                continue  # not empty: other files are there
            emptied.add(os.path.dirname(folder))
    return removed
