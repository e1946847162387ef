# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The common case of a timestamp column in one pass without the GIL: nanoseconds expanded,
seconds moved to the epoch and to the zone's wall clock, combined into ``timestamp[ns]``
values and spread over the slots (nulls 0).

The typed front is :func:`aorc.format.codec.rle.timestamps_ns`; a value that needs a closer
look (nanoseconds or seconds out of range, a result near the ends of ``timestamp[ns]``, a
wall-clock time before ``floor``) makes the kernel give up, and the general path decodes the
column (and raises the right error).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

from aorc.format.codec._time cimport count_le

import numpy as np

cdef uint64_t[9] _POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000]
cdef int64_t _MAX_SECONDS = 9223372035  # |seconds * 1e9 + nanos| < 2**63 up to here
cdef int64_t _MAX_RAW = 1099511627776  # 2**40


def timestamps_ns(seconds, raw_nanos, valid, Py_ssize_t length, int64_t base,
                  transitions, offsets, floor):
    """``length`` int64 nanoseconds since the naive epoch, or ``None`` (see the module)."""
    cdef const int64_t[::1] sv = np.ascontiguousarray(seconds, dtype=np.int64)
    cdef const int64_t[::1] nv = np.ascontiguousarray(raw_nanos, dtype=np.int64)
    cdef const int64_t[::1] tv = np.ascontiguousarray(transitions, dtype=np.int64)
    cdef const int64_t[::1] fv = np.ascontiguousarray(offsets, dtype=np.int64)
    cdef const uint8_t[::1] vv
    cdef bint masked = valid is not None
    cdef Py_ssize_t n = sv.shape[0], nt = tv.shape[0]
    if nv.shape[0] != n or fv.shape[0] != nt + 1:
        return None
    if masked:
        vv = np.ascontiguousarray(valid, dtype=np.bool_).view(np.uint8)
        if vv.shape[0] != length:
            return None
    elif n != length:
        return None
    cdef bint has_floor = floor is not None
    cdef int64_t low = floor if has_floor else 0
    out = np.empty(length, dtype=np.int64)
    if length == 0:
        return out
    cdef int64_t[::1] ov = out
    cdef Py_ssize_t i, j = 0
    cdef int64_t s, x, nanos, inst, wall
    cdef bint bad = False
    with nogil:
        for i in range(length):
            if masked and not vv[i]:
                ov[i] = 0
                continue
            if j >= n:
                bad = True
                break
            s = sv[j]
            x = nv[j]
            j += 1
            if x & 7:
                nanos = <int64_t>(<uint64_t>(x >> 3) * _POW10[(x & 7) + 1])
            else:
                nanos = x >> 3
            if nanos < -999999999 or nanos > 999999999 or s < -_MAX_RAW or s > _MAX_RAW:
                bad = True
                break
            inst = s + base
            if inst < 0 and nanos > 999999:
                inst -= 1
            if nt == 0:
                wall = inst + fv[0]
            else:  # the offset after the last transition at or before the instant
                wall = inst + fv[count_le(&tv[0], nt, inst)]
            if wall < -_MAX_SECONDS or wall > _MAX_SECONDS or (has_floor and wall < low):
                bad = True
                break
            ov[i] = wall * 1000000000 + nanos
        if j != n:
            bad = True
    if bad:
        return None
    return out
