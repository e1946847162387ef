# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Gathering kernels: the values of a dictionary-encoded string column, copied out of its
dictionary in one pass over the indices (bounds checked, nulls placed), without the GIL.

The typed front is :func:`dictionary_values` here; :mod:`aorc.format.columns.strings` calls it.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy

import numpy as np


def dictionary_values(indices, valid, Py_ssize_t length, offsets, data):
    """The Arrow offsets and data of ``length`` string slots whose valid ones hold the
    dictionary entries ``indices`` (one per valid slot, in order).

    Args:
        indices: int64 indices, one per valid slot (unsigned values above ``2**63 - 1``
            come out negative, and are out of range).
        valid: a bool array of ``length`` flags, or ``None`` when every slot holds a value.
        length: the number of slots.
        offsets: the dictionary's int32 Arrow offsets (``size + 1`` of them, from 0 and
            never decreasing: the dictionary's own, as built from its checked lengths).
        data: the dictionary's bytes (at least ``offsets[-1]`` of them).

    Returns:
        ``(offsets, data, bad)``: int32 offsets (``length + 1``) and uint8 data arrays, and
        ``None``; or ``(None, None, bad)`` with ``bad`` the first index out of range, or
        ``(None, None, None)`` when the values add up to more than ``2**31 - 1`` bytes.

    Raises:
        ValueError: as many indices as valid slots are not given.
    """
    cdef const int64_t[::1] iv = np.ascontiguousarray(indices, dtype=np.int64)
    cdef const int32_t[::1] dof = np.ascontiguousarray(offsets, dtype=np.int32)
    cdef const uint8_t[::1] dv = np.frombuffer(data, dtype=np.uint8) if len(data) else np.zeros(1, np.uint8)
    cdef const uint8_t[::1] vv
    cdef bint masked = valid is not None
    cdef Py_ssize_t n = iv.shape[0], size = dof.shape[0] - 1
    if masked:
        vv = np.ascontiguousarray(valid, dtype=np.bool_).view(np.uint8)
        if vv.shape[0] != length:
            raise ValueError(f"{vv.shape[0]} validity flags for {length} slots")
    elif n != length:
        raise ValueError(f"{n} indices for {length} slots")
    if size < 0 or dof[0] != 0 or dof[size] > dv.shape[0] or (dof[size] and not len(data)):
        raise ValueError("the dictionary's offsets do not fit its data")
    out = np.empty(length + 1, dtype=np.int32)
    cdef int32_t[::1] ov = out
    cdef int64_t acc = 0, k
    cdef Py_ssize_t i, j = 0
    cdef int rc = 0  # 1: an index out of range (in k), 2: over 2**31 - 1 bytes, 3: count
    with nogil:
        ov[0] = 0
        for i in range(length):
            if not masked or vv[i]:
                if j >= n:
                    rc = 3
                    break
                k = iv[j]
                j += 1
                if k < 0 or k >= size:
                    rc = 1
                    break
                acc += dof[k + 1] - dof[k]
                if acc > 2147483647:
                    rc = 2
                    break
            ov[i + 1] = <int32_t>acc
        if rc == 0 and j != n:
            rc = 3
    if rc == 3:
        raise ValueError(f"{n} indices for the valid slots of {length}")
    if rc == 1:
        return None, None, k
    if rc == 2:
        return None, None, None
    values = np.empty(acc, dtype=np.uint8)
    if acc == 0:
        return out, values, None
    cdef uint8_t[::1] xv = values
    cdef int32_t width
    with nogil:
        j = 0
        for i in range(length):
            if not masked or vv[i]:
                k = iv[j]
                j += 1
                width = ov[i + 1] - ov[i]
                if width:
                    memcpy(&xv[ov[i]], &dv[dof[k]], width)
    return out, values, None
