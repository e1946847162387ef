"""The process's one bounded thread pool, for CPU work that releases the GIL.

aorc's Cython kernels and the compression codecs release the GIL, so the columns of a stripe
can be encoded and compressed at the same time. :func:`pool_map` runs a function over items
on the shared pool (created on first use with one worker per CPU, re-created in a forked
child) with at most ``threads`` of them at once, the calling thread being one of them. The
results come back in the order of the items, so what is built from them does not depend on
the number of threads. With ``threads=1`` it is a plain loop in the calling thread.

The pool is shared by every reader and writer in the process: a call
never holds more than ``threads - 1`` workers, and a task that itself calls :func:`pool_map`
cannot deadlock: the calling thread works through the items itself and, when they are done,
cancels the helpers that have not started.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

from aorc.errors import SchemaError

__all__ = ["pool_map", "pool_size", "shared_pool", "thread_count"]

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def pool_size() -> int:
    """Workers of the shared pool: one per CPU (at least 1)."""
    return max(1, os.cpu_count() or 1)


def shared_pool() -> ThreadPoolExecutor:
    """The process's pool, created on first use."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=pool_size(), thread_name_prefix="aorc")
        return _pool


def thread_count(use_threads: bool | int) -> int:
    """How many of the pool's threads a read or write may use: ``True`` all of them,
    ``False`` one, an integer that many (at most the pool's size).

    Raises:
        SchemaError: for an integer below 1 or a value of another type.
    """
    if isinstance(use_threads, bool):
        return pool_size() if use_threads else 1
    if not isinstance(use_threads, int) or use_threads < 1:
        raise SchemaError(f"use_threads must be a bool or a positive integer, "
                          f"got {use_threads!r}")
    return min(use_threads, pool_size())


def _forget_pool() -> None:  # a forked child has none of the parent's threads
    global _pool, _lock
    _pool = None
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def pool_map(fn: Callable[[T], R], items: Sequence[T], threads: int) -> list[R]:
    """``[fn(x) for x in items]``, on up to ``threads`` threads (the caller's included).

    Args:
        fn: the work for one item; it should release the GIL for most of its time.
        items: the items.
        threads: the most threads to use at once; 1 runs everything in the calling thread.

    Returns:
        The results, in the order of ``items``.

    Raises:
        Exception: the first exception raised by ``fn`` (in item order of discovery); the
            other items are then skipped.
    """
    helpers = min(threads, len(items), pool_size() + 1) - 1
    if helpers <= 0:
        return [fn(x) for x in items]
    results: list[R | None] = [None] * len(items)
    errors: list[BaseException] = []
    position = iter(range(len(items)))
    take = threading.Lock()

    def work() -> None:
        while not errors:
            with take:
                i = next(position, None)
            if i is None:
                return
            try:
                results[i] = fn(items[i])
            except BaseException as exc:  # re-raised in the caller below
                errors.append(exc)
                return

    futures = [shared_pool().submit(work) for _ in range(helpers)]
    try:
        work()
    finally:
        # Helpers not started yet have nothing left to do: cancel them, and wait only for
        # the running ones (a cancelled future is done only once a worker dequeues it).
        wait([f for f in futures if not f.cancel()])
    if errors:
        raise errors[0]
    return results  # type: ignore[return-value]
