"""Datasets of many small local files: a group of files per worker task.

A file of a few kilobytes costs microseconds to decode, so a read that gives each file its
own tasks, locks and thread hand-overs spends most of its time on them. When every file a
read opens is local and small (at most :data:`aorc.read.discovery.SMALL_FILE_BYTES`, read
whole with one ``read``), :func:`run_groups` hands the files to the shared pool in groups,
each group read, opened and decoded on one worker thread without touching the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

from aorc.io.base import gather_or_cancel
from aorc.read.discovery import SMALL_FILE_BYTES, DatasetFile, local_path
from aorc.threads import pool_size, shared_pool

__all__ = ["GROUP_FILES", "all_small_local", "run_groups"]

#: The most files one worker task reads.
GROUP_FILES = 64

_I = TypeVar("_I")
_R = TypeVar("_R")


def all_small_local(files: Sequence[DatasetFile]) -> bool:
    """Whether every file is on local disk and at most ``SMALL_FILE_BYTES`` long."""
    return bool(files) and all(f.size <= SMALL_FILE_BYTES and local_path(f.path) is not None
                               for f in files)


def _groups(items: Sequence[_I]) -> list[Sequence[_I]]:
    """``items`` cut into groups: at most :data:`GROUP_FILES` each, and at least four
    groups per pool thread when there are enough items (so the threads stay busy)."""
    size = max(1, min(GROUP_FILES, len(items) // (4 * pool_size()) or 1))
    return [items[i:i + size] for i in range(0, len(items), size)]


async def run_groups(items: Sequence[_I], work: Callable[[_I], _R], *,
                     done: Callable[[int], None] | None = None) -> list[_R]:
    """``[work(x) for x in items]``, a group of items per task on the shared pool (at most
    one task per pool thread at once); ``done(n)`` is told of each group finished."""
    loop = asyncio.get_running_loop()
    pool = shared_pool()
    limit = asyncio.Semaphore(pool_size())

    def run(group: Sequence[_I]) -> list[_R]:
        return [work(item) for item in group]

    async def one(group: Sequence[_I]) -> list[_R]:
        async with limit:
            out = await loop.run_in_executor(pool, run, group)
        if done is not None:
            done(len(group))
        return out

    results = await gather_or_cancel([one(g) for g in _groups(items)])
    return [r for group in results for r in group]
