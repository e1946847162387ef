"""Inline helpers of the timestamp kernels, shared at compile time (``cimport``) by
``_encode`` (``encode_nanos``), ``_encode_values`` (``timestamp_parts``) and ``_timestamps``
(the one-pass timestamp decoder)."""

from libc.stdint cimport int64_t


cdef inline int64_t format_nanos(int64_t x) noexcept nogil:
    """ORC Java's formatNanos of nanoseconds within the second (0..999,999,999): trailing
    decimal zeros stripped when there are at least two, the low 3 bits then holding how many
    were removed minus one (at most 7, i.e. 8 zeros)."""
    cdef int zeros
    if x == 0 or x % 100 != 0:
        return x << 3
    x //= 100
    zeros = 1
    while x % 10 == 0 and zeros < 7:
        x //= 10
        zeros += 1
    return (x << 3) | zeros


cdef inline Py_ssize_t count_le(const int64_t* bounds, Py_ssize_t count,
                                int64_t x) noexcept nogil:
    """How many of the ``count`` ascending ``bounds`` are at most ``x`` (numpy's
    ``searchsorted`` with ``side="right"``): the index of the zone offset in force."""
    cdef Py_ssize_t lo = 0, hi = count, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if bounds[mid] <= x:
            lo = mid + 1
        else:
            hi = mid
    return lo
