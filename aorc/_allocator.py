"""Tune glibc's malloc for stripe-sized buffers: reuse freed memory, keep streaming RSS flat.

Decoding a stripe allocates large buffers (fetched and decompressed streams, NumPy arrays that
become the Arrow columns) with the C library's ``malloc``, not with Arrow's memory pool. Two
glibc defaults make that slow or unbounded:

- Memory that malloc gets from the system arrives as fresh pages, which the kernel zeroes on
  first touch (a page fault per 4 KiB). A buffer above the *mmap threshold* is always fresh:
  it is mapped on allocation and unmapped on ``free``; so is the top of the heap once ``free``
  trims it (above the *trim threshold*). With the defaults, reading a 2-million-row table
  took about 100,000 page faults (0.2 s of kernel time, as long as pyarrow.orc's whole read),
  against about 2,500 for pyarrow.orc, whose pool keeps its pages.
- Each thread that allocates gets its own *arena*; freed memory stays in the arena that
  allocated it, fragmented. With several decode threads, the resident memory of a long
  streaming read grew stripe after stripe (measured: +57 MiB over 19 stripes of 14 MiB).

:func:`tune_malloc` sets, once per process and on glibc only: one arena (``M_ARENA_MAX``: the
decode threads share and reuse one heap; the GIL-holding interpreter allocates small objects
with its own allocator, so the shared lock is rarely contended); buffers up to 1 GiB from
the heap (``M_MMAP_THRESHOLD``); and the top of the heap given back to the system only when
more than 512 MiB of it is free (``M_TRIM_THRESHOLD``). A streaming read then levels off
after its first stripes (measured: +73 MiB for 14 MiB stripes, flat over 22 stripes), and
repeated reads reuse the same pages. The price: up to 512 MiB of freed memory can stay
resident until the process allocates again (as with Arrow's own pool).

The settings are left alone when the user chose any of them (``MALLOC_ARENA_MAX``,
``MALLOC_MMAP_THRESHOLD_`` or ``MALLOC_TRIM_THRESHOLD_`` in the environment) or opted out with
``AORC_MALLOC_TUNING=0``. They are applied when this module is imported, first thing in
``import aorc`` (every aorc module imports the package first, so nothing of aorc runs before).
glibc binds a thread to an arena when the thread first allocates, so threads that allocated
before ``import aorc`` (NumPy and pyarrow start some) keep their own arenas, and glibc hands
those arenas to new threads in turn with the main one. aorc's own threads
(:class:`aorc.threads.WorkerPool`) check with :func:`on_main_arena` and start on the main arena
only; a thread on another one faulted fresh pages into its large buffers on every read.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any

__all__ = ["ARENA_MAX", "MMAP_THRESHOLD", "TRIM_THRESHOLD", "on_main_arena", "tune_malloc"]

#: The number of malloc arenas (glibc's ``M_ARENA_MAX``).
ARENA_MAX = 1
#: Allocations of at least this many bytes are served by ``mmap`` (``M_MMAP_THRESHOLD``).
MMAP_THRESHOLD = 1 << 30
#: Free memory at the top of the heap beyond this is given back (``M_TRIM_THRESHOLD``).
TRIM_THRESHOLD = 512 << 20

_M_TRIM_THRESHOLD = -1  # from glibc's <malloc.h>
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_USER_SETTINGS = ("MALLOC_ARENA_MAX", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
_NON_MAIN_ARENA = 0x4  # the flag of a chunk's size field (glibc's malloc/malloc.c)
_lock = threading.Lock()
_state: bool | None = None
_probe: tuple[Any, Any] | None = None  # libc's malloc and free, once the tuning is in effect


def tune_malloc() -> bool:
    """Apply the settings described in the module's docstring (once per process).

    Returns:
        Whether the settings are in effect (False off glibc, or when left to the user).
    """
    global _state
    with _lock:
        if _state is None:
            _state = _apply()
        return _state


def _apply() -> bool:
    if (not sys.platform.startswith("linux") or any(k in os.environ for k in _USER_SETTINGS)
            or os.environ.get("AORC_MALLOC_TUNING", "1") == "0"):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 -- glibc only (musl has no such tuning)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    done = [mallopt(param, value) for param, value in (
        (_M_ARENA_MAX, ARENA_MAX), (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD))]
    if not all(done):
        return False
    global _probe
    malloc, free = libc.malloc, libc.free
    malloc.argtypes, malloc.restype = [ctypes.c_size_t], ctypes.c_void_p
    free.argtypes, free.restype = [ctypes.c_void_p], None
    _probe = (malloc, free)
    return True


def on_main_arena() -> bool:
    """Whether the calling thread allocates from glibc's main arena.

    A thread is bound to an arena by its first allocation. Threads that allocated before
    ``import aorc`` (NumPy's and pyarrow's import start some) may each have an arena of their
    own, and glibc hands a new thread one of those in turn, whatever ``M_ARENA_MAX`` says. A
    non-main arena serves its memory from heaps of at most 64 MiB that are unmapped as soon
    as they are free, so a decode thread bound to one faults fresh pages into its large
    buffers on every read. :mod:`aorc.threads` starts its workers on the main arena only.

    The answer is read from the flag glibc keeps in the header of every chunk it hands out
    (``NON_MAIN_ARENA``, stable since glibc 2.3). Always True when the tuning is not in effect
    (off glibc, or left to the user), where it does not matter which arena a thread uses.
    """
    probe = _probe
    if probe is None:
        return True
    malloc, free = probe
    chunk = malloc(64)
    if not chunk:
        return True
    try:
        size_field = ctypes.c_size_t.from_address(chunk - ctypes.sizeof(ctypes.c_size_t)).value
    finally:
        free(chunk)
    return not size_field & _NON_MAIN_ARENA


tune_malloc()
