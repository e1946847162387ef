# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The common case of a decimal column in one pass without the GIL: every value's scale is
the type's and its unscaled value fits 64 bits (and the precision, when at most 18).

The typed front is :func:`aorc.format.codec.rle.decimals_at_scale`; anything else (another
scale, a wider value, damage) makes the kernel give up, and the general path decodes the
column (and reports the damage).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np


def decimals_at_scale(data, Py_ssize_t n, Py_ssize_t offset, scales, int64_t target,
                      int precision):
    """``(words, next_offset)`` of ``n`` zigzag varints from ``offset`` as (n, 2)
    little-endian 128-bit words, or ``(None, offset)`` when some value's scale is not
    ``target``, does not fit 64 bits or, for a ``precision`` of at most 18, has more digits.
    """
    cdef const uint8_t[::1] view = (data if isinstance(data, (bytes, bytearray))
                                    else memoryview(data).cast("B"))
    cdef const int64_t[::1] sv = np.ascontiguousarray(scales, dtype=np.int64)
    cdef Py_ssize_t size = view.shape[0]
    if n < 0 or offset < 0 or offset > size or n > size - offset or sv.shape[0] != n:
        return None, offset
    out = np.empty((n, 2), dtype=np.uint64)
    if n == 0:
        return out, offset
    cdef uint64_t[:, ::1] ov = out
    cdef int64_t bound = 0
    if precision <= 18:
        bound = 1
        for _ in range(max(precision, 0)):
            bound *= 10
    cdef const uint8_t* p = &view[0]
    cdef Py_ssize_t pos = offset, i
    cdef uint64_t u, c
    cdef int64_t v
    cdef int shift
    cdef bint bad = False
    with nogil:
        for i in range(n):
            if sv[i] != target:
                bad = True
                break
            u = 0
            shift = 0
            while True:
                if pos >= size:
                    bad = True
                    break
                c = p[pos]
                pos += 1
                if shift == 63 and (c & 0x7F) > 1:
                    bad = True  # beyond 64 bits
                    break
                u |= (c & 0x7F) << shift
                if c < 0x80:
                    break
                shift += 7
                if shift > 63:
                    bad = True
                    break
            if bad:
                break
            v = <int64_t>((u >> 1) ^ (<uint64_t>0 - (u & 1)))
            if bound and (v >= bound or v <= -bound):
                bad = True
                break
            ov[i, 0] = <uint64_t>v
            ov[i, 1] = <uint64_t>0 - <uint64_t>(v < 0)
    if bad:
        return None, offset
    return out, pos
