"""Cuts and commits of the rolling sink: a *cut* closes every open file of a stream at one
position; its files are finished, then completed on the store and committed (the target's
commit, then ``on_commit``) after the stream's previous cut committed, so the cuts of a
stream commit in order (see :mod:`aorc.sink.rolling`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aorc.sink.files import OpenSinkFile, abort_files, all_or_cancel, committed_file
from aorc.sink.plan import OpenFile, StreamState
from aorc.sink.results import CommitCallback, SinkCommit, SinkFile, SinkStats
from aorc.sink.target import SinkTarget

__all__ = ["Cuts"]


class Cuts:
    """The cut and commit machinery of :class:`aorc.sink.RollingSink` (a base class: the
    sink holds the state these methods share)."""

    target: SinkTarget | None
    stats: SinkStats
    _closing: set[OpenSinkFile]
    _tasks: set[asyncio.Task[Any]]
    _error: BaseException | None
    _state: str
    _released: asyncio.Event
    _uploads: asyncio.Semaphore
    _on_commit: CommitCallback | None
    _before_complete: Callable[[str, int], Awaitable[bool]] | None
    _owned: dict[tuple[str, int], int]

    def _note_memory(self) -> None:
        """Record the peaks of memory and open files (the sink's own)."""


    def _cut(self, stream: StreamState, reason: str) -> None:
        """Close every open file of ``stream``: they are finished, then completed and
        committed after the stream's previous cut committed."""
        if not stream.files:
            return
        assert stream.last_offset is not None
        self._note_memory()
        files = [f for f in stream.files.values() if f.writer is not None]
        self._closing.update(f.writer for f in files)
        stream.files, stream.opened_at = {}, None
        self.stats.cuts[reason] = self.stats.cuts.get(reason, 0) + 1
        if reason == "memory":
            self.stats.files_cut_for_memory += len(files)
        task = asyncio.create_task(self._finish_cut(stream, files, stream.chain, reason))
        stream.chain = task
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None and self._error is None:
            self._error = exc
            if self._state == "open":
                self._state = "failed"
            self._released.set()

    async def _finish_cut(self, stream: StreamState, files: list[OpenFile],
                          previous: asyncio.Task[None] | None, reason: str) -> None:
        offset = max(f.last for f in files)
        writers = [f.writer for f in files]
        try:
            await all_or_cancel([self._finish_file(f, offset) for f in files])
            if previous is not None:
                await previous
            if self._before_complete is not None and not await self._before_complete(
                    stream.topic, stream.partition):  # fenced: the stream is not ours
                await abort_files(files)
                self.stats.cuts_fenced += 1
                return
            await all_or_cancel([self._complete_file(w) for w in writers])
        except BaseException:
            await abort_files(files)
            raise
        finally:
            self._closing.difference_update(writers)
            self._released.set()
        written = [self._done_file(stream, f) for f in files]
        order = sorted(range(len(files)), key=lambda k: (written[k].partition_path,
                                                           written[k].first_offset))
        commit = SinkCommit(stream.topic, stream.partition, offset,
                            tuple(written[k] for k in order), reason)
        if self.target is not None:
            key = (stream.topic, stream.partition)
            positions = {**self._owned, key: offset}
            await self.target.commit(commit, [committed_file(written[k], files[k])
                                              for k in order], positions)
            self._owned[key] = max(offset, self._owned.get(key, offset))
        if self._on_commit is not None:
            await self._on_commit(commit)
        self.stats.commits += 1
        self.stats.rows_committed += sum(f.num_rows for f in written)
        self.stats.files_committed += len(written)

    async def _finish_file(self, f: OpenFile, cut_offset: int) -> None:
        async with self._uploads:  # (the cut's offset: where the stream resumes after it)
            await f.writer.finish({"aorc.sink.last_offset": str(f.last).encode(),
                                   "aorc.sink.cut_offset": str(cut_offset).encode()})

    async def _complete_file(self, writer: OpenSinkFile) -> None:
        async with self._uploads:
            await writer.complete()

    def _done_file(self, stream: StreamState, f: OpenFile) -> SinkFile:
        size = f.writer.size
        self.stats.files_written += 1
        self.stats.rows_written += f.rows
        self.stats.bytes_written += size
        self.stats.retries += f.writer.retries
        return SinkFile(f.writer.uri, f.path, stream.topic, stream.partition, f.first,
                        f.last, f.rows, size)
