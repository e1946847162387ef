"""Keep glibc's malloc from retaining freed stripe buffers (bounded memory for streaming reads).

Decoding a stripe allocates large buffers (decompressed streams, NumPy arrays that become the
Arrow columns) with the C library's ``malloc``, not with Arrow's memory pool. glibc serves an
allocation above its *mmap threshold* (128 KiB at start) with ``mmap``, and gives it back to
the system on ``free`` -- but, by default, freeing such a buffer raises the threshold to the
buffer's size (up to 32 MiB). After the first stripe, the next stripes' buffers are then
carved out of the heaps of malloc's arenas, one arena per worker thread that decodes, and
freed memory stays there, fragmented. Each time a stripe is decoded by a thread whose arena
is not yet large enough, the process's resident memory grows; over a long file it climbed by
several stripes' worth (measured: +42 MiB after one stripe of 16 MiB of Arrow, +133 MiB after
27). Setting the threshold explicitly turns that adjustment off: buffers above it keep coming
from ``mmap`` and go back to the system when freed, so the growth no longer depends on the
number of stripes read. The threshold is 8 MiB: at 1 MiB every column buffer is a fresh
``mmap`` (zeroed pages, a ``munmap`` on free) and reads took 20-50 % more CPU time; at 8 MiB
the cost is within noise and a 23-stripe stream levels off (+71 MiB after 3 stripes, +77 MiB
after 23, against +42 to +110 MiB and still growing without the setting).

:func:`limit_malloc_retention` does that once per process, on glibc only. It leaves the
setting alone when the user chose one (``MALLOC_MMAP_THRESHOLD_`` in the environment) or
opted out with ``AORC_MALLOC_TUNING=0``.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

__all__ = ["MMAP_THRESHOLD", "limit_malloc_retention"]

#: Allocations of at least this many bytes are served by ``mmap`` (glibc's ``M_MMAP_THRESHOLD``).
MMAP_THRESHOLD = 8 << 20

_M_MMAP_THRESHOLD = -3  # from glibc's <malloc.h>
_lock = threading.Lock()
_done = False


def limit_malloc_retention() -> bool:
    """Fix glibc's mmap threshold at :data:`MMAP_THRESHOLD` (once per process).

    Returns:
        Whether the setting is in effect (False off glibc, or when left to the user).
    """
    global _done
    with _lock:
        if _done:
            return True
        if (not sys.platform.startswith("linux") or "MALLOC_MMAP_THRESHOLD_" in os.environ
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
        _done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
        return _done
