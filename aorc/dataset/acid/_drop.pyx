# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Copying a column without a few of its rows, run by run, without the GIL: the kernels of
:mod:`aorc.dataset.acid.drop`.

Deletes drop about one row in a hundred, so the rows kept form long runs: each run's values
are copied with one ``memcpy`` (and, for strings, the offsets of the run shifted by the bytes
dropped before it), where Arrow's filter kernels test the mask bit by bit for strings.
``gone`` is always the sorted, distinct positions of the rows to drop, all below ``n``.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy


def drop_fixed(const uint8_t[::1] src, uint8_t[::1] dst, Py_ssize_t width,
               const int64_t[::1] gone) -> None:
    """Copy the ``len(src) // width`` values of ``width`` bytes of ``src`` but those at
    ``gone`` into ``dst`` (which holds exactly the values kept)."""
    cdef Py_ssize_t n = src.shape[0] // width, k = gone.shape[0], i, start = 0, out = 0, stop
    for i in range(k):
        if gone[i] < start or gone[i] >= n:
            raise ValueError("the positions to drop are not sorted, distinct and in range")
        start = gone[i] + 1
    if dst.shape[0] != (n - k) * width:
        raise ValueError("the output does not fit the values kept")
    start = 0
    with nogil:
        for i in range(k + 1):
            stop = gone[i] if i < k else n
            if stop > start:
                memcpy(&dst[out], &src[start * width], (stop - start) * width)
                out += (stop - start) * width
            start = stop + 1


ctypedef fused offset_t:
    int32_t
    int64_t


def _binary_size(const offset_t[::1] offsets, const int64_t[::1] gone):
    cdef Py_ssize_t n = offsets.shape[0] - 1, k = gone.shape[0], i
    cdef int64_t dropped = 0, start = 0
    for i in range(k):
        if gone[i] < start or gone[i] >= n:
            raise ValueError("the positions to drop are not sorted, distinct and in range")
        dropped += offsets[gone[i] + 1] - offsets[gone[i]]
        start = gone[i] + 1
    return int(offsets[n] - offsets[0] - dropped)


def binary_kept_bytes(offsets, const int64_t[::1] gone) -> int:
    """The bytes of the values of a string or binary column kept (``offsets``: its
    ``n + 1`` offsets, int32 or int64)."""
    return _binary_size(offsets, gone)


def _drop_binary(const offset_t[::1] offsets, const uint8_t[::1] data,
                 offset_t[::1] out_offsets, uint8_t[::1] out_data,
                 const int64_t[::1] gone):
    cdef Py_ssize_t n = offsets.shape[0] - 1, k = gone.shape[0], i, j, start = 0, stop
    cdef Py_ssize_t out = 0
    cdef offset_t at = 0, shift, base = offsets[0], size = data.shape[0]
    cdef bint bad = False
    if out_offsets.shape[0] != n - k + 1:
        raise ValueError("the output offsets do not fit the values kept")
    if out_data.shape[0] != _binary_size(offsets, gone):
        raise ValueError("the output bytes do not fit the values kept")
    if offsets[n] - base > size:
        raise ValueError("the offsets point past the data")
    with nogil:
        out_offsets[0] = 0
        for i in range(k + 1):
            stop = gone[i] if i < k else n
            if stop > start:
                if (offsets[start] < base or offsets[stop] < offsets[start]
                        or offsets[stop] - base > size
                        or at + (offsets[stop] - offsets[start]) > out_data.shape[0]):
                    bad = True
                    break
                shift = offsets[start] - at
                for j in range(start, stop):
                    out += 1
                    out_offsets[out] = offsets[j + 1] - shift
                memcpy(&out_data[at], &data[offsets[start] - base],
                       offsets[stop] - offsets[start])
                at = out_offsets[out]
            start = stop + 1
    if bad:
        raise ValueError("the offsets are not ascending within the data")


def drop_binary(offsets, data, out_offsets, out_data, const int64_t[::1] gone) -> None:
    """Copy the values of a string or binary column but those at ``gone``: ``offsets`` its
    ``n + 1`` offsets (int32 or int64, from any start), ``data`` its bytes from
    ``offsets[0]``; ``out_offsets`` (same type, from 0) and ``out_data`` sized for the
    values kept (:func:`binary_kept_bytes`)."""
    _drop_binary(offsets, data, out_offsets, out_data, gone)
