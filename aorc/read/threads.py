"""The decode thread pool: one per process, shared by every read.

Decoders are synchronous and their Cython kernels release the GIL, so stripes and columns
decode in parallel on a bounded pool of threads. Each read says how many of the pool's
threads it may use at once (``use_threads``, as pyarrow's option).
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from aorc.errors import SchemaError

__all__ = ["decode_pool", "pool_size", "thread_count"]

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def pool_size() -> int:
    """Threads of the process's decode pool: the number of CPUs (at least 1)."""
    return max(1, os.cpu_count() or 1)


def decode_pool() -> ThreadPoolExecutor:
    """The process's decode pool, made on first use."""
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(pool_size(), thread_name_prefix="aorc-decode")
        return _pool


def thread_count(use_threads: bool | int) -> int:
    """How many decode threads a read may use: ``True`` all of the pool's, ``False`` one,
    an integer that many (at most the pool's size).

    Raises:
        SchemaError: for an integer below 1 or a value of another type.
    """
    if isinstance(use_threads, bool):
        return pool_size() if use_threads else 1
    if not isinstance(use_threads, int) or use_threads < 1:
        raise SchemaError(f"use_threads must be a bool or a positive integer, "
                          f"got {use_threads!r}")
    return min(use_threads, pool_size())
