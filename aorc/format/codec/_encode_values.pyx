# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""One-pass preparation of timestamp and decimal values for their encoders, without the GIL.

The column encoders used to derive these values with a dozen numpy expressions, each a pass
over the whole column through a new array of its size. On a machine whose memory bandwidth
other tenants share, those passes made a write's time swing by half of itself; here each
value is read once and its results, with its group's statistics, are produced while it is in
cache.

- ``timestamp_parts``: a timestamp column's DATA values (seconds from ORC's base, as ORC
  Java's TimestampTreeWriter rounds them), its SECONDARY values (Java's formatNanos), the
  milliseconds its statistics and bloom filters hold, and each group's extremes.
- ``trim_decimal64``: HiveDecimal's trimming of trailing zeros, for the values that fit 64
  bits (the others are left to the caller).
- ``decimal64_group_stats``: Decimal64 statistics (extremes and an 18-digit sum) per group.

The typed fronts are :mod:`aorc.format.columns.encode.timestamps` and
:mod:`aorc.format.columns.encode.decimals`, which keep the numpy versions' results exactly.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t

import numpy as np

from aorc.format.codec._time cimport count_le, format_nanos

from aorc.format.codec._encode_v2 import as_int64, check_groups


cdef inline int64_t _floor_div(int64_t a, int64_t b) noexcept nogil:
    cdef int64_t q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef inline int64_t _wrap_add(int64_t a, int64_t b) noexcept nogil:
    """``a + b`` wrapping as numpy's int64 (and Java's long) arithmetic does."""
    return <int64_t>(<uint64_t>a + <uint64_t>b)


cdef inline int64_t _wrap_mul(int64_t a, int64_t b) noexcept nogil:
    return <int64_t>(<uint64_t>a * <uint64_t>b)


cdef struct _Split:
    const int64_t* src
    int64_t* data
    int64_t* secondary
    int64_t* millis
    int64_t per_second
    int64_t scale
    int64_t max_seconds
    int64_t base_epoch
    const int64_t* wb
    Py_ssize_t nwb
    const int64_t* wo
    bint to_instant
    const int64_t* tr
    Py_ssize_t ntr
    const int64_t* to
    bint to_wall


cdef inline bint _split_one(_Split* z, Py_ssize_t i, int64_t* ms_out,
                            int64_t* sub_out) noexcept nogil:
    """Value ``i``'s DATA, SECONDARY and milliseconds (see :func:`timestamp_parts`); true
    when its seconds are out of range (nothing written)."""
    cdef int64_t x = z.src[i]
    cdef int64_t sec = x // z.per_second
    cdef int64_t frac = x - sec * z.per_second
    cdef int64_t nanos, inst, ms
    if frac < 0:  # C divides toward zero: floor it
        frac += z.per_second
        sec -= 1
    if sec > z.max_seconds or sec < -z.max_seconds:
        return True
    nanos = frac * z.scale
    inst = sec
    if z.to_instant:
        inst = sec - z.wo[count_le(z.wb, z.nwb, sec)]
    if inst < 0 and nanos >= 1000000:
        inst += 1
    z.data[i] = inst - z.base_epoch
    z.secondary[i] = format_nanos(nanos)
    ms = _wrap_add(_wrap_mul(inst, 1000), nanos // 1000000)
    if ms < 0 and nanos > 999999:
        ms = _wrap_add(ms, -1000)
    if z.to_wall:
        ms = _wrap_add(ms, _wrap_mul(1000, z.to[count_le(z.tr, z.ntr, _floor_div(ms, 1000))]))
    if z.millis != NULL:
        z.millis[i] = ms
    ms_out[0] = ms
    sub_out[0] = nanos % 1000000
    return False


cdef inline Py_ssize_t _split_range(_Split* z, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    """Values ``start .. stop - 1`` without statistics; the first out of range, or -1."""
    cdef int64_t ms, sub
    cdef Py_ssize_t i
    for i in range(start, stop):
        if _split_one(z, i, &ms, &sub):
            return i
    return -1


def timestamp_parts(raw, int64_t per_second, int64_t max_seconds, int64_t base_epoch,
                    wall_bounds, wall_offsets, bint to_instant, transitions, offsets,
                    bint to_wall, starts, ends, bint want_millis, low, high, low_sub,
                    high_sub, nonempty):
    """Split timestamps into what a timestamp column stores.

    For each value ``x`` (``per_second`` units a second): ``seconds, fraction = divmod(x,
    per_second)`` (floor); ``nanos = fraction * 10**9 // per_second``; the instant is
    ``seconds`` less the offset of the wall-clock time (``wall_offsets[k]``, ``k`` the count
    of ``wall_bounds`` at most ``seconds``) when ``to_instant``, else ``seconds``; Java's
    seconds are the instant plus one when it is negative with at least a millisecond of
    fraction; DATA holds them less ``base_epoch``, SECONDARY ``formatNanos(nanos)``. The
    milliseconds are Java's (``seconds * 1000 + nanos // 10**6``, less 1000 when negative
    with more than 999,999 nanos), moved to the wall clock when ``to_wall`` (plus 1000 times
    ``offsets[k]``, ``k`` the count of ``transitions`` at most their floor seconds).

    Each group ``starts[g]..ends[g]`` (ascending, not overlapping) has the smallest and the
    largest milliseconds and, among the values that have them, the smallest and the largest
    sub-millisecond nanoseconds: the int64 arrays ``low``, ``high``, ``low_sub`` and
    ``high_sub`` (one entry per group) are updated with this call's values, merged with what
    they hold where the bool array ``nonempty`` is set already (it is set for every group
    with values), so that a column may be passed in pieces (each group's bounds within the
    piece).

    Returns:
        ``(data, secondary, millis or None, bad)``: int64 arrays of the values; ``bad`` is
        the index of the first value whose seconds lie beyond ``max_seconds`` either way (-1:
        none; the other outputs are then incomplete).

    Raises:
        ValueError: a group outside the values, overlapping or out of order, statistics
            arrays not of one entry per group, or a unit that does not divide a second.
    """
    cdef const int64_t[::1] src = as_int64(raw, "raw")
    cdef const int64_t[::1] wb = as_int64(wall_bounds, "wall_bounds")
    cdef const int64_t[::1] wo = as_int64(wall_offsets, "wall_offsets")
    cdef const int64_t[::1] tr = as_int64(transitions, "transitions")
    cdef const int64_t[::1] to = as_int64(offsets, "offsets")
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, src.shape[0], True)
    cdef Py_ssize_t n = src.shape[0], k = a.shape[0], g, i
    if per_second < 1 or 1000000000 % per_second != 0:
        raise ValueError(f"{per_second} units a second do not divide a second")
    if wo.shape[0] != wb.shape[0] + 1 or to.shape[0] != tr.shape[0] + 1:
        raise ValueError("a zone needs one offset more than its bounds")
    for arr in (low, high, low_sub, high_sub):
        if not (isinstance(arr, np.ndarray) and arr.dtype == np.int64 and arr.shape == (k,)):
            raise ValueError("the statistics need one int64 entry per group")
    if not (isinstance(nonempty, np.ndarray) and nonempty.dtype == np.bool_
            and nonempty.shape == (k,)):
        raise ValueError("nonempty needs one bool entry per group")
    data = np.empty(n, np.int64)
    secondary = np.empty(n, np.int64)
    millis = np.empty(n if want_millis else 0, np.int64)
    cdef int64_t[::1] lo = low, hi = high, ls = low_sub, hs = high_sub
    cdef uint8_t[::1] ne = nonempty.view(np.uint8)
    cdef _Split z
    z.src = &src[0] if n else NULL
    cdef int64_t[::1] dv = data, sv = secondary, mv = millis
    z.data = &dv[0] if n else NULL
    z.secondary = &sv[0] if n else NULL
    z.millis = &mv[0] if want_millis and n else NULL
    z.per_second = per_second
    z.scale = 1000000000 // per_second
    z.max_seconds = max_seconds
    z.base_epoch = base_epoch
    z.wb = &wb[0] if wb.shape[0] else NULL
    z.nwb = wb.shape[0]
    z.wo = &wo[0]
    z.to_instant = to_instant
    z.tr = &tr[0] if tr.shape[0] else NULL
    z.ntr = tr.shape[0]
    z.to = &to[0]
    z.to_wall = to_wall
    cdef Py_ssize_t bad = -1
    i = 0
    cdef int64_t ms, sub, mn, mx, mn_sub, mx_sub
    with nogil:
        for g in range(k):
            bad = _split_range(&z, i, a[g])  # values outside every group: no statistics
            if bad >= 0:
                break
            for i in range(a[g], b[g]):
                if _split_one(&z, i, &ms, &sub):
                    bad = i
                    break
                if i == a[g]:
                    mn = mx = ms
                    mn_sub = mx_sub = sub
                    continue
                if ms < mn:
                    mn = ms
                    mn_sub = sub
                elif ms == mn and sub < mn_sub:
                    mn_sub = sub
                if ms > mx:
                    mx = ms
                    mx_sub = sub
                elif ms == mx and sub > mx_sub:
                    mx_sub = sub
            if bad >= 0:
                break
            if b[g] > a[g]:
                if not ne[g] or mn < lo[g] or (mn == lo[g] and mn_sub < ls[g]):
                    lo[g] = mn
                    ls[g] = mn_sub
                if not ne[g] or mx > hi[g] or (mx == hi[g] and mx_sub > hs[g]):
                    hi[g] = mx
                    hs[g] = mx_sub
                ne[g] = 1
            i = b[g]
        if bad < 0:
            bad = _split_range(&z, i, n)
    return data, secondary, millis if want_millis else None, bad


def trim_decimal64(words, int scale):
    """HiveDecimal's trimming of the values that fit 64 bits: trailing decimal zeros removed,
    at most ``scale`` of them (zero keeps none: its scale becomes 0).

    Args:
        words: ``(n, 2)`` uint64 little-endian two's complement unscaled values.
        scale: their common scale (0..38).

    Returns:
        ``(trimmed, scales, wide)``: the ``(n, 2)`` values with the 64-bit ones trimmed, every
        value's scale (``scale`` for the others), and the int64 indices of the values that do
        not fit 64 bits (left as they are, for the caller to trim).
    """
    src = np.ascontiguousarray(words, dtype=np.uint64)
    if src.ndim != 2 or src.shape[1] != 2:
        raise ValueError("words must be an (n, 2) array")
    if scale < 0 or scale > 38:
        raise ValueError(f"scale {scale} is outside 0..38")
    cdef const uint64_t[:, ::1] wv = src
    cdef Py_ssize_t n = wv.shape[0], i, wide_count = 0
    out = np.empty((n, 2), np.uint64)
    scales = np.empty(n, np.int64)
    wide = np.empty(n, np.int64)
    cdef uint64_t[:, ::1] ov = out
    cdef int64_t[::1] sv = scales, widev = wide
    cdef int64_t v
    cdef int removed
    with nogil:
        for i in range(n):
            v = <int64_t>wv[i, 0]
            if <int64_t>wv[i, 1] != (v >> 63):
                ov[i, 0] = wv[i, 0]
                ov[i, 1] = wv[i, 1]
                sv[i] = scale
                widev[wide_count] = i
                wide_count += 1
                continue
            removed = 0
            if v == 0:
                removed = scale
            else:
                while removed < scale and v % 10 == 0:
                    v //= 10
                    removed += 1
            ov[i, 0] = <uint64_t>v
            ov[i, 1] = <uint64_t>(v >> 63)
            sv[i] = scale - removed
    return out, scales, wide[:wide_count].copy()


def decimal64_group_stats(words, starts, ends, int64_t largest):
    """Decimal64 statistics of each group of unscaled values, as ORC Java keeps them:
    the extremes, and the sum while every running sum stays within ``largest`` either way
    (once one leaves it the group has no sum). The running sums wrap as int64 arithmetic
    does; values of at most 18 digits keep them exact until one leaves 18 digits.

    Args:
        words: ``(n, 2)`` uint64 little-endian unscaled values (an Arrow decimal128 buffer);
            the low words are read, as int64 (the values of a precision up to 18 fit them).
        starts: first value index of each group.
        ends: one past the last value index of each group.
        largest: the largest magnitude a sum may have (``10**18 - 1``).

    Returns:
        ``(low, high, sums, has_sum, nonempty)``, one entry per group (``sums`` 0 where
        ``has_sum`` is false).

    Raises:
        ValueError: a group outside the values, or words not of shape ``(n, 2)``.
    """
    src = np.asarray(words)
    if src.dtype != np.uint64 or src.ndim != 2 or src.shape[1] != 2:
        raise ValueError("words must be an (n, 2) uint64 array")
    cdef const uint64_t[:, :] wv = src  # read in place, strides and all
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, wv.shape[0])
    cdef Py_ssize_t n = wv.shape[0], k = a.shape[0], g, i
    low = np.zeros(k, np.int64)
    high = np.zeros(k, np.int64)
    sums = np.zeros(k, np.int64)
    has_sum = np.zeros(k, np.bool_)
    nonempty = np.zeros(k, np.bool_)
    cdef int64_t[::1] lo = low, hi = high, sv = sums
    cdef uint8_t[::1] hv = has_sum.view(np.uint8), ne = nonempty.view(np.uint8)
    cdef int64_t total, mn, mx, x, size
    cdef bint inside
    with nogil:
        for g in range(k):
            if a[g] == b[g]:
                continue
            total = 0
            inside = True
            mn = mx = <int64_t>wv[a[g], 0]
            for i in range(a[g], b[g]):
                x = <int64_t>wv[i, 0]
                if x < mn:
                    mn = x
                elif x > mx:
                    mx = x
                total = _wrap_add(total, x)
                # numpy's abs: the most negative int64 stays negative
                size = total if total >= 0 else _wrap_mul(total, -1)
                if size > largest:
                    inside = False
            lo[g] = mn
            hi[g] = mx
            ne[g] = 1
            if inside:
                sv[g] = total
                hv[g] = 1
    return low, high, sums, has_sum, nonempty


def group_true_counts(values, starts, ends):
    """How many of each group's bytes are non-zero (true), without a column-sized count.

    Args:
        values: 1-D bool (or uint8) array.
        starts: first index of each group.
        ends: one past the last index of each group.

    Returns:
        int64 count per group.

    Raises:
        ValueError: a group outside the values.
    """
    src = np.asarray(values)
    if src.ndim != 1 or src.dtype.itemsize != 1:
        raise ValueError("values must be a 1-D array of bytes")
    cdef const uint8_t[::1] v = np.ascontiguousarray(src).view(np.uint8)
    cdef const int64_t[::1] a, b
    a, b = check_groups(starts, ends, v.shape[0])
    cdef Py_ssize_t n = v.shape[0], k = a.shape[0], g, i
    counts = np.zeros(k, np.int64)
    cdef int64_t[::1] c = counts
    cdef int64_t total
    with nogil:
        for g in range(k):
            total = 0
            for i in range(a[g], b[g]):
                total += v[i] != 0
            c[g] = total
    return counts
