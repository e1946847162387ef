# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Encoders for ORC's run-length and varint streams, byte for byte as ORC Java writes them.

Each encoder makes the same choices as the ORC Java writer class it is named after, so a file
aorc writes is as small as one Spark writes:

- ``write_int_rle_v2``: RunLengthIntegerWriterV2 (SHORT_REPEAT, DIRECT, PATCHED_BASE, DELTA),
  with aligned bit packing (Java's SPEED encoding strategy, the default) or without it
  (COMPRESSION strategy); the kernel lives in ``_encode_v2`` and is re-exported here.
- ``write_int_rle_v1``: RunLengthIntegerWriter.
- ``write_byte_rle``: RunLengthByteWriter; ``write_bool_rle``: BitFieldWriter over it.
- ``write_varints`` / ``write_varint128``: base-128 varints (zigzag for signed values).
- ``encode_nanos``: the timestamp SECONDARY value (TimestampTreeWriter.formatNanos).

The ``*_with_positions`` variants also return what ORC Java's ``getPosition`` records for the
row index when the value at each given index is about to be written: the number of bytes the
encoder has emitted so far (the uncompressed offset in the stream) and the number of values it
holds buffered, which a reader skips after seeking (plus the bit offset for boolean streams).
The encoders buffer runs in C structures and emit into a growing malloc'd buffer
(``_encode_buffer.pxd``); the loops run without the GIL.
"""

from libc.stdint cimport int8_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp, memset

from aorc.format.codec._encode_buffer cimport (
    Buf,
    buf_init,
    buf_to_bytes,
    i64_out,
    i64_ptr,
    put,
    put_vslong,
    put_vulong,
    reserve,
    wrap_sub,
)
from aorc.format.codec._time cimport format_nanos

import numpy as np

from aorc.format.codec._encode_v2 import as_int64, check_boundaries, check_groups
from aorc.format.codec._encode_v2 import write_int_rle_v2 as write_int_rle_v2
from aorc.format.codec._encode_v2 import (
    write_int_rle_v2_with_positions as write_int_rle_v2_with_positions,
)

cdef enum:
    MIN_REPEAT = 3           # shortest repeat run (RLE v1 and byte RLE)
    V1_MAX_LITERALS = 128
    V1_MAX_REPEAT = 130
    V1_RUN_BYTES = 2 + 128 * 10
    BYTE_RUN_BYTES = 1 + 128


# ----------------------------------------------------------------------------------------
# RLE v1 (RunLengthIntegerWriter)


cdef struct V1:
    int64_t lit[V1_MAX_LITERALS + 2]
    int64_t delta
    int num
    int tail
    bint repeat
    bint is_signed


cdef void v1_write_values(V1* st, Buf* b) noexcept nogil:
    cdef int i
    if st.num == 0:
        return
    if reserve(b, V1_RUN_BYTES):
        if st.repeat:
            put(b, <uint8_t>(st.num - MIN_REPEAT))
            put(b, <uint8_t>st.delta)
            if st.is_signed:
                put_vslong(b, st.lit[0])
            else:
                put_vulong(b, <uint64_t>st.lit[0])
        else:
            put(b, <uint8_t>(-st.num))
            for i in range(st.num):
                if st.is_signed:
                    put_vslong(b, st.lit[i])
                else:
                    put_vulong(b, <uint64_t>st.lit[i])
    st.repeat = False
    st.num = 0
    st.tail = 0


cdef inline int v1_tail_after_new_delta(V1* st, int64_t value) noexcept nogil:
    st.delta = wrap_sub(value, st.lit[st.num - 1])
    return 1 if st.delta < -128 or st.delta > 127 else 2


cdef void v1_write(V1* st, Buf* b, int64_t value) noexcept nogil:
    cdef int64_t base
    if st.num == 0:
        st.lit[0] = value
        st.num = 1
        st.tail = 1
    elif st.repeat:
        if <uint64_t>value == <uint64_t>st.lit[0] + <uint64_t>st.delta * <uint64_t>st.num:
            st.num += 1
            if st.num == V1_MAX_REPEAT:
                v1_write_values(st, b)
        else:
            v1_write_values(st, b)
            st.lit[0] = value
            st.num = 1
            st.tail = 1
    else:
        if st.tail == 1:
            st.tail = v1_tail_after_new_delta(st, value)
        elif <uint64_t>value == <uint64_t>st.lit[st.num - 1] + <uint64_t>st.delta:
            st.tail += 1
        else:
            st.tail = v1_tail_after_new_delta(st, value)
        if st.tail == MIN_REPEAT:
            if st.num + 1 == MIN_REPEAT:
                st.repeat = True
                st.num += 1
            else:
                st.num -= MIN_REPEAT - 1
                base = st.lit[st.num]
                v1_write_values(st, b)
                st.lit[0] = base
                st.repeat = True
                st.num = MIN_REPEAT
        else:
            st.lit[st.num] = value
            st.num += 1
            if st.num == V1_MAX_LITERALS:
                v1_write_values(st, b)


cdef void v1_encode(V1* st, Buf* b, const int64_t* vals, Py_ssize_t n,
                    const int64_t* bounds, Py_ssize_t nb, int64_t* pos) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        while k < nb and bounds[k] == i:
            pos[2 * k] = b.size
            pos[2 * k + 1] = st.num
            k += 1
        v1_write(st, b, vals[i])
    while k < nb:
        pos[2 * k] = b.size
        pos[2 * k + 1] = st.num
        k += 1
    v1_write_values(st, b)


# ----------------------------------------------------------------------------------------
# byte RLE (RunLengthByteWriter)


cdef struct ByteRle:
    int8_t lit[V1_MAX_LITERALS + 2]
    int num
    int tail
    bint repeat


cdef void byte_write_values(ByteRle* st, Buf* b) noexcept nogil:
    cdef int i
    if st.num == 0:
        return
    if reserve(b, BYTE_RUN_BYTES):
        if st.repeat:
            put(b, <uint8_t>(st.num - MIN_REPEAT))
            put(b, <uint8_t>st.lit[0])
        else:
            put(b, <uint8_t>(-st.num))
            for i in range(st.num):
                put(b, <uint8_t>st.lit[i])
    st.repeat = False
    st.num = 0
    st.tail = 0


cdef void byte_write(ByteRle* st, Buf* b, int8_t value) noexcept nogil:
    if st.num == 0:
        st.lit[0] = value
        st.num = 1
        st.tail = 1
    elif st.repeat:
        if value == st.lit[0]:
            st.num += 1
            if st.num == V1_MAX_REPEAT:
                byte_write_values(st, b)
        else:
            byte_write_values(st, b)
            st.lit[0] = value
            st.num = 1
            st.tail = 1
    else:
        st.tail = st.tail + 1 if value == st.lit[st.num - 1] else 1
        if st.tail == MIN_REPEAT:
            if st.num + 1 == MIN_REPEAT:
                st.repeat = True
                st.num += 1
            else:
                st.num -= MIN_REPEAT - 1
                byte_write_values(st, b)
                st.lit[0] = value
                st.repeat = True
                st.num = MIN_REPEAT
        else:
            st.lit[st.num] = value
            st.num += 1
            if st.num == V1_MAX_LITERALS:
                byte_write_values(st, b)


cdef void byte_encode(ByteRle* st, Buf* b, const int8_t* vals, Py_ssize_t n,
                      const int64_t* bounds, Py_ssize_t nb, int64_t* pos,
                      int stride) noexcept nogil:
    """Byte RLE; position k goes to pos[stride * k], pos[stride * k + 1]."""
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        while k < nb and bounds[k] == i:
            pos[stride * k] = b.size
            pos[stride * k + 1] = st.num
            k += 1
        byte_write(st, b, vals[i])
    while k < nb:
        pos[stride * k] = b.size
        pos[stride * k + 1] = st.num
        k += 1
    byte_write_values(st, b)


# ----------------------------------------------------------------------------------------
# varints


cdef void varint_encode(Buf* b, const int64_t* vals, Py_ssize_t n, bint is_signed,
                        const int64_t* bounds, Py_ssize_t nb, int64_t* pos) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        while k < nb and bounds[k] == i:
            pos[k] = b.size
            k += 1
        if not reserve(b, 10):
            return
        if is_signed:
            put_vslong(b, vals[i])
        else:
            put_vulong(b, <uint64_t>vals[i])
    while k < nb:
        pos[k] = b.size
        k += 1


cdef void varint128_encode(Buf* b, const uint64_t* words, Py_ssize_t n,
                           const int64_t* bounds, Py_ssize_t nb, int64_t* pos) noexcept nogil:
    cdef Py_ssize_t i, k = 0
    cdef uint64_t lo, hi, sign
    for i in range(n):
        while k < nb and bounds[k] == i:
            pos[k] = b.size
            k += 1
        if not reserve(b, 19):
            return
        lo = words[2 * i]
        hi = words[2 * i + 1]
        sign = <uint64_t>(<int64_t>hi >> 63)
        hi = ((hi << 1) | (lo >> 63)) ^ sign
        lo = (lo << 1) ^ sign
        while hi != 0 or lo >= 0x80:
            put(b, <uint8_t>((lo & 0x7f) | 0x80))
            lo = (lo >> 7) | (hi << 57)
            hi >>= 7
        put(b, <uint8_t>lo)
    while k < nb:
        pos[k] = b.size
        k += 1


# ----------------------------------------------------------------------------------------
# Python entry points


def _rle_v1(values, bint is_signed, boundaries):
    cdef const int64_t[::1] vals = as_int64(values)
    cdef Py_ssize_t n = vals.shape[0]
    cdef const int64_t[::1] bounds = check_boundaries(boundaries, n)
    positions = np.zeros((bounds.shape[0], 2), dtype=np.int64)
    cdef int64_t[:, ::1] pos = positions
    cdef Buf buf
    cdef V1* st = <V1*>malloc(sizeof(V1))
    buf.data = NULL
    if st == NULL or not buf_init(&buf, n + n // 2):
        free(st)
        free(buf.data)
        raise MemoryError("out of memory while encoding an ORC stream")
    with nogil:
        memset(st, 0, sizeof(V1))
        st.is_signed = is_signed
        v1_encode(st, &buf, i64_ptr(vals), n, i64_ptr(bounds), bounds.shape[0], i64_out(pos))
    free(st)
    return buf_to_bytes(&buf), positions


def write_int_rle_v1(values, bint signed):
    """Encode integers with RLE v1 exactly as ORC Java's RunLengthIntegerWriter.

    Args:
        values: 1-D integer array (converted to int64).
        signed: zigzag-encode the varints or not.

    Returns:
        The encoded stream.
    """
    return _rle_v1(values, signed, None)[0]


def write_int_rle_v1_with_positions(values, bint signed, boundaries):
    """Like :func:`write_int_rle_v1`, also returning row-index positions.

    Returns:
        ``(stream, positions)`` with positions of shape ``(len(boundaries), 2)``: bytes emitted
        before each boundary value and the number of values then buffered.
    """
    return _rle_v1(values, signed, boundaries)


def _byte_values(values):
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "biu":
        raise TypeError(f"values must hold integers, got dtype {arr.dtype}")
    if arr.dtype.itemsize != 1:
        arr = arr.astype(np.int8)
    return np.ascontiguousarray(arr).view(np.int8)


cdef object _byte_rle(const int8_t[::1] vals, const int64_t[::1] bounds, int64_t[:, ::1] pos):
    cdef Py_ssize_t n = vals.shape[0]
    cdef Buf buf
    cdef ByteRle st
    memset(&st, 0, sizeof(ByteRle))
    if not buf_init(&buf, n // 4):
        raise MemoryError("out of memory while encoding an ORC stream")
    with nogil:
        byte_encode(&st, &buf, &vals[0] if n > 0 else NULL, n, i64_ptr(bounds),
                    bounds.shape[0], i64_out(pos), pos.shape[1])
    return buf_to_bytes(&buf)


def write_byte_rle(values):
    """Encode bytes with ORC's byte RLE exactly as ORC Java's RunLengthByteWriter.

    Args:
        values: 1-D int8 (or other one-byte integer) array; wider integers are truncated.

    Returns:
        The encoded stream.
    """
    vals = _byte_values(values)
    return _byte_rle(vals, np.zeros(0, np.int64), np.zeros((0, 2), np.int64))


def write_byte_rle_with_positions(values, boundaries):
    """Like :func:`write_byte_rle`, also returning row-index positions.

    Returns:
        ``(stream, positions)`` with positions of shape ``(len(boundaries), 2)``: bytes emitted
        before each boundary value and the number of values then buffered.
    """
    vals = _byte_values(values)
    bounds = check_boundaries(boundaries, vals.shape[0])
    positions = np.zeros((bounds.shape[0], 2), dtype=np.int64)
    return _byte_rle(vals, bounds, positions), positions


def _packed_bits(values):
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "biu":
        raise TypeError(f"values must be booleans, got dtype {arr.dtype}")
    return np.packbits(arr.astype(bool, copy=False), bitorder="big").view(np.int8)


def write_bool_rle(values):
    """Encode booleans as ORC Java's BitFieldWriter: bits MSB first, then byte RLE.

    Args:
        values: 1-D boolean array (integers count as true when non-zero).

    Returns:
        The encoded stream.
    """
    return write_byte_rle(_packed_bits(values))


def write_bool_rle_with_positions(values, boundaries):
    """Like :func:`write_bool_rle`, also returning row-index positions.

    Returns:
        ``(stream, positions)`` with positions of shape ``(len(boundaries), 3)``: per boundary
        the bytes emitted, the bytes buffered in the byte RLE, and the bits already used in
        the byte being filled, as ORC Java's BitFieldWriter records them.
    """
    n = len(values)
    bounds = check_boundaries(boundaries, n)
    positions = np.zeros((bounds.shape[0], 3), dtype=np.int64)
    stream = _byte_rle(_packed_bits(values), np.ascontiguousarray(bounds >> 3), positions)
    positions[:, 2] = bounds & 7
    return stream, positions


def _varints(values, bint is_signed, boundaries):
    cdef const int64_t[::1] vals = as_int64(values)
    cdef Py_ssize_t n = vals.shape[0]
    cdef const int64_t[::1] bounds = check_boundaries(boundaries, n)
    positions = np.zeros((bounds.shape[0], 1), dtype=np.int64)
    cdef int64_t[:, ::1] pos = positions
    cdef Buf buf
    if not buf_init(&buf, 2 * n):
        raise MemoryError("out of memory while encoding an ORC stream")
    with nogil:
        varint_encode(&buf, i64_ptr(vals), n, is_signed, i64_ptr(bounds), bounds.shape[0],
                      i64_out(pos))
    return buf_to_bytes(&buf), positions


def write_varints(values, bint signed):
    """Encode integers as base-128 varints (zigzag first when ``signed``), as ORC Java.

    Args:
        values: 1-D integer array (converted to int64; unsigned negatives take 10 bytes).
        signed: zigzag-encode the values or not.

    Returns:
        The encoded stream.
    """
    return _varints(values, signed, None)[0]


def write_varints_with_positions(values, bint signed, boundaries):
    """Like :func:`write_varints`; positions (shape ``(k, 1)``) are the byte offsets."""
    return _varints(values, signed, boundaries)


def _varint128(values, boundaries):
    arr = np.asarray(values)
    if arr.ndim != 2 or arr.shape[1] != 2 or (arr.size and arr.dtype.kind not in "iu"):
        raise ValueError(f"values must be an (n, 2) array of 64-bit words, got {arr.shape}")
    words = np.ascontiguousarray(arr.astype(np.uint64, copy=False))
    cdef const uint64_t[:, ::1] w = words
    cdef Py_ssize_t n = w.shape[0]
    cdef const int64_t[::1] bounds = check_boundaries(boundaries, n)
    positions = np.zeros((bounds.shape[0], 1), dtype=np.int64)
    cdef int64_t[:, ::1] pos = positions
    cdef Buf buf
    if not buf_init(&buf, 4 * n):
        raise MemoryError("out of memory while encoding an ORC stream")
    with nogil:
        varint128_encode(&buf, &w[0, 0] if n > 0 else NULL, n, i64_ptr(bounds),
                         bounds.shape[0], i64_out(pos))
    return buf_to_bytes(&buf), positions


def write_varint128(values):
    """Encode 128-bit integers as zigzag base-128 varints (decimal DATA streams), as ORC Java.

    Args:
        values: ``(n, 2)`` uint64 array, each row a little-endian two's complement value
            (low word, high word), the layout of an Arrow decimal128 buffer.

    Returns:
        The encoded stream.
    """
    return _varint128(values, None)[0]


def write_varint128_with_positions(values, boundaries):
    """Like :func:`write_varint128`; positions (shape ``(k, 1)``) are the byte offsets."""
    return _varint128(values, boundaries)


def encode_nanos(nanos):
    """Timestamp nanoseconds as ORC stores them in SECONDARY (Java's formatNanos).

    Trailing decimal zeros are stripped when there are at least two; the low 3 bits then hold
    the number of zeros removed minus one (at most 7, i.e. 8 zeros).

    Args:
        nanos: 1-D integer array of nanoseconds within the second, 0..999,999,999.

    Returns:
        int64 array of the encoded values.

    Raises:
        ValueError: a value is outside 0..999,999,999.
    """
    cdef const int64_t[::1] src = as_int64(nanos, "nanos")
    cdef Py_ssize_t n = src.shape[0], i, bad = -1
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] dst = out
    cdef int64_t x
    with nogil:
        for i in range(n):
            x = src[i]
            if x < 0 or x > 999999999:
                bad = i
                break
            dst[i] = format_nanos(x)
    if bad >= 0:
        raise ValueError(f"nanos[{bad}] = {src[bad]} is outside 0..999999999")
    return out


# ----------------------------------------------------------------------------------------
# Statistics


cdef extern from *:
    """
    static inline int aorc_add_overflows(int64_t a, int64_t b, int64_t *out) {
        return __builtin_add_overflow(a, b, out);
    }
    """
    bint aorc_add_overflows(int64_t a, int64_t b, int64_t *out) nogil


def group_sums(values, starts, ends):
    """Sums of int64 groups as ORC Java's IntegerStatistics keeps them: a group whose running
    sum leaves the int64 range (``Math.addExact`` throws) is flagged as overflowed.

    Args:
        values: 1-D int64 values.
        starts: first value index of each group.
        ends: one past the last value index of each group (``starts[g] <= ends[g] <= n``).

    Returns:
        (int64 sum per group, 0 where it overflowed; bool overflow flag per group).

    Raises:
        ValueError: a group outside the values.
    """
    cdef const int64_t[::1] v = as_int64(values)
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, v.shape[0])
    cdef Py_ssize_t k = a.shape[0], n = v.shape[0], g, i
    sums = np.zeros(k, dtype=np.int64)
    flags = np.zeros(k, dtype=np.bool_)
    cdef int64_t[::1] s = sums
    cdef uint8_t[::1] f = flags.view(np.uint8)
    cdef int64_t total
    with nogil:
        for g in range(k):
            total = 0
            for i in range(a[g], b[g]):
                if aorc_add_overflows(total, v[i], &total):
                    f[g] = 1
                    total = 0
                    break
            s[g] = total
    return sums, flags


cdef inline int _compare_bytes(const uint8_t* a, int64_t la, const uint8_t* b,
                               int64_t lb) noexcept nogil:
    cdef int c = memcmp(a, b, <size_t>(la if la < lb else lb))
    if c != 0:
        return c
    return (la > lb) - (la < lb)


def group_extremes(offsets, data, starts, ends):
    """Index of the smallest and of the largest value of each group of byte strings, in
    unsigned byte order (a prefix sorts first), as ORC's string statistics compare them.

    Args:
        offsets: int64 offsets of the values into ``data`` (n + 1 of them, increasing).
        data: the values' bytes (any buffer).
        starts: first value index of each group.
        ends: one past the last value index of each group.

    Returns:
        (index of a smallest value, index of a largest value) per group; -1 for an empty
        group.

    Raises:
        ValueError: a group or an offset outside the values.
    """
    cdef const int64_t[::1] off = as_int64(offsets, "offsets")
    cdef const uint8_t[::1] buf = memoryview(data).cast("B") if len(data) else b"\0"
    if off.shape[0] < 1:
        raise ValueError("bad offsets or group bounds")
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, off.shape[0] - 1)
    cdef Py_ssize_t k = a.shape[0], n = off.shape[0] - 1, g, i
    if n and (off[0] < 0 or off[n] > len(data)):
        raise ValueError("offsets outside the data")
    if n and np.any(np.diff(np.asarray(off)) < 0):
        raise ValueError("offsets decrease")
    low = np.full(k, -1, dtype=np.int64)
    high = np.full(k, -1, dtype=np.int64)
    cdef int64_t[::1] lo = low
    cdef int64_t[::1] hi = high
    cdef int64_t best_lo, best_hi
    cdef const uint8_t* base = &buf[0]
    with nogil:
        for g in range(k):
            if a[g] == b[g]:
                continue
            best_lo = best_hi = a[g]
            for i in range(a[g] + 1, b[g]):
                if _compare_bytes(base + off[i], off[i + 1] - off[i], base + off[best_lo],
                                  off[best_lo + 1] - off[best_lo]) < 0:
                    best_lo = i
                elif _compare_bytes(base + off[i], off[i + 1] - off[i], base + off[best_hi],
                                    off[best_hi + 1] - off[best_hi]) > 0:
                    best_hi = i
            lo[g] = best_lo
            hi[g] = best_hi
    return low, high


def double_group_stats(values, starts, ends):
    """Sum, minimum and maximum of each group of doubles as ORC Java's DoubleStatistics
    keeps them: ``sum += value`` from 0.0 in order (NaN operands propagate as the hardware
    adds them), the first value as both extremes, then ``value < minimum`` / ``value >
    maximum`` (so NaNs after the first value are ignored, a NaN first value stays, and the
    first of 0.0 / -0.0 seen is kept).

    Args:
        values: 1-D float64 values.
        starts: first value index of each group.
        ends: one past the last value index of each group.

    Returns:
        (sums, minimums, maximums), float64 per group; 0.0 for empty groups.

    Raises:
        ValueError: a group outside the values.
    """
    cdef const double[::1] v = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, v.shape[0])
    cdef Py_ssize_t k = a.shape[0], n = v.shape[0], g, i
    sums = np.zeros(k, dtype=np.float64)
    lows = np.zeros(k, dtype=np.float64)
    highs = np.zeros(k, dtype=np.float64)
    cdef double[::1] s = sums
    cdef double[::1] lo = lows
    cdef double[::1] hi = highs
    cdef double total, mn, mx, x
    with nogil:
        for g in range(k):
            if a[g] == b[g]:
                continue
            total = 0.0
            mn = mx = v[a[g]]
            for i in range(a[g], b[g]):
                x = v[i]
                total = total + x
                if x < mn:
                    mn = x
                elif x > mx:
                    mx = x
            s[g] = total
            lo[g] = mn
            hi[g] = mx
    return sums, lows, highs
