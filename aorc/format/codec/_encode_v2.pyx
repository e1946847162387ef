# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""RLE v2 encoding exactly as ORC Java's RunLengthIntegerWriterV2 (used through ``_encode``).

The encoder is Java's state machine, value by value: runs of up to 512 values, repeats of 3
to 10 values as SHORT_REPEAT and longer ones as fixed DELTA runs, monotone runs as DELTA,
runs whose 90th and 100th percentile widths differ by more than one bit as PATCHED_BASE (when
the 95th and 100th percentile widths of the base-reduced values differ too, and the base is
below 2**56), DIRECT otherwise; widths are rounded as Java rounds them, with aligned bit
packing for DIRECT and DELTA when asked (Java's SPEED strategy, its default).
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from aorc.format.codec._encode_buffer cimport (
    Buf,
    buf_init,
    buf_to_bytes,
    put,
    put_be,
    put_vslong,
    put_vulong,
    reserve,
    wrap_sub,
    zigzag,
)

import numpy as np

cdef extern from *:
    int __builtin_clzll(unsigned long long x) nogil
    uint64_t __builtin_bswap64(uint64_t x) nogil

cdef enum:
    MAX_SCOPE = 512          # values per run at most
    MIN_REPEAT = 3           # shortest run of repeats
    MAX_SHORT_REPEAT = 10    # longest SHORT_REPEAT run
    V2_RUN_BYTES = 4608      # bytes of one run at most (4102), plus 8 spare
    SHORT_REPEAT = 0
    DIRECT = 1
    PATCHED_BASE = 2
    DELTA = 3

cdef int64_t BASE_VALUE_LIMIT = 1LL << 56
cdef bint LITTLE_ENDIAN = np.little_endian

# header code of every bit width 0..64 after rounding up to a width RLE v2 can store
cdef int WIDTH_CODE[65]
cdef int CODE_WIDTH[32]


# ----------------------------------------------------------------------------------------
# bit widths (SerializationUtils)


cdef inline int num_bits(uint64_t v) noexcept nogil:
    return 0 if v == 0 else 64 - __builtin_clzll(v)


cdef int closest_fixed_bits(int n) noexcept nogil:
    if n == 0:
        return 1
    if n <= 24:
        return n
    if n <= 26:
        return 26
    if n <= 28:
        return 28
    if n <= 30:
        return 30
    if n <= 32:
        return 32
    if n <= 40:
        return 40
    if n <= 48:
        return 48
    if n <= 56:
        return 56
    return 64


cdef int closest_aligned_bits(int n) noexcept nogil:
    if n <= 1:
        return 1
    if n <= 2:
        return 2
    if n <= 4:
        return 4
    if n <= 8:
        return 8
    if n <= 16:
        return 16
    if n <= 24:
        return 24
    if n <= 32:
        return 32
    if n <= 40:
        return 40
    if n <= 48:
        return 48
    if n <= 56:
        return 56
    return 64


cdef inline int encode_width(int n) noexcept nogil:
    return WIDTH_CODE[n]


cdef inline int value_bits(int64_t v) noexcept nogil:
    """Java's findClosestNumBits: the storable width that holds ``v`` (as unsigned)."""
    return CODE_WIDTH[WIDTH_CODE[num_bits(<uint64_t>v)]]


cdef void init_width_tables() noexcept nogil:
    cdef int n, w, code
    cdef int wide[8]
    wide[:] = [26, 28, 30, 32, 40, 48, 56, 64]
    for n in range(65):
        w = closest_fixed_bits(n)
        code = w - 1
        if w > 24:
            code = 24
            while wide[code - 24] != w:
                code += 1
        WIDTH_CODE[n] = code
        CODE_WIDTH[code] = w


init_width_tables()


cdef void width_histogram(const int64_t* data, int n, int* hist) noexcept nogil:
    """Count the values of each storable width (by header code) into ``hist[32]``."""
    cdef int parts[4][32]
    cdef int i, j
    memset(parts, 0, sizeof(parts))
    # four partial histograms, so that equal neighbours do not wait on each other's counts
    for i in range(0, n - 3, 4):
        parts[0][WIDTH_CODE[num_bits(<uint64_t>data[i])]] += 1
        parts[1][WIDTH_CODE[num_bits(<uint64_t>data[i + 1])]] += 1
        parts[2][WIDTH_CODE[num_bits(<uint64_t>data[i + 2])]] += 1
        parts[3][WIDTH_CODE[num_bits(<uint64_t>data[i + 3])]] += 1
    for i in range(n - n % 4, n):
        parts[0][WIDTH_CODE[num_bits(<uint64_t>data[i])]] += 1
    for j in range(32):
        hist[j] = parts[0][j] + parts[1][j] + parts[2][j] + parts[3][j]


cdef int percentile_bits(const int* hist, int n, double p) noexcept nogil:
    """Java's percentileBits over a width histogram of ``n`` values: the width that holds
    all but (n * (1 - p)) of them."""
    cdef int i
    cdef int per_len = <int>(n * (1.0 - p))
    for i in range(31, -1, -1):
        per_len -= hist[i]
        if per_len < 0:
            return CODE_WIDTH[i]
    return 0


cdef void pack_bytes(Buf* b, const int64_t* vals, int n, int nbytes) noexcept nogil:
    """Values as ``nbytes``-byte big-endian integers (needs 8 spare bytes in the buffer)."""
    cdef int i
    cdef int shift = 64 - 8 * nbytes
    cdef uint64_t x
    if not LITTLE_ENDIAN:
        for i in range(n):
            put_be(b, <uint64_t>vals[i], nbytes)
        return
    for i in range(n):
        x = __builtin_bswap64(<uint64_t>vals[i] << shift)
        memcpy(b.data + b.size, &x, 8)
        b.size += nbytes


cdef void pack_ints(Buf* b, const int64_t* vals, int n, int width) noexcept nogil:
    """Bit-pack ``n`` values MSB first, ``width`` bits each, padding the last byte."""
    cdef uint64_t acc = 0
    cdef uint64_t mask
    cdef int bits = 0
    cdef int i
    if n < 1 or width < 1:
        return
    if width & 7 == 0:
        pack_bytes(b, vals, n, width >> 3)
        return
    # the other storable widths are all below 32, so acc never holds more than 38 bits
    mask = (1ULL << width) - 1
    for i in range(n):
        acc = (acc << width) | (<uint64_t>vals[i] & mask)
        bits += width
        while bits >= 8:
            bits -= 8
            b.data[b.size] = <uint8_t>(acc >> bits)
            b.size += 1
        acc &= (1ULL << bits) - 1
    if bits > 0:
        put(b, <uint8_t>(acc << (8 - bits)))


# ----------------------------------------------------------------------------------------
# RLE v2 (RunLengthIntegerWriterV2)


cdef struct V2:
    int64_t lit[MAX_SCOPE + 8]
    int64_t zz[MAX_SCOPE + 8]
    int64_t base_red[MAX_SCOPE + 8]
    int64_t adj[MAX_SCOPE + 8]
    int64_t gap_patch[64]
    int hist[32]
    int64_t prev_delta
    int64_t fixed_delta
    int64_t min
    int num
    int fixed_run
    int var_run
    int encoding
    int zz100
    int br95
    int br100
    int bits_delta_max
    int patch_width
    int patch_gap_width
    int patch_length
    bint is_fixed_delta
    bint is_signed
    bint aligned


cdef inline int64_t java_abs(int64_t v) noexcept nogil:
    return v if v >= 0 else <int64_t>(0 - <uint64_t>v)


cdef void v2_clear(V2* st) noexcept nogil:
    st.num = 0
    st.encoding = -1
    st.prev_delta = 0
    st.fixed_delta = 0
    st.zz100 = 0
    st.br95 = 0
    st.br100 = 0
    st.bits_delta_max = 0
    st.patch_gap_width = 0
    st.patch_length = 0
    st.patch_width = 0
    st.min = 0
    st.is_fixed_delta = True


cdef void v2_init(V2* st, bint is_signed, bint aligned) noexcept nogil:
    v2_clear(st)
    st.fixed_run = 0
    st.var_run = 0
    st.is_signed = is_signed
    st.aligned = aligned


cdef inline int64_t* v2_direct_values(V2* st) noexcept nogil:
    if st.is_signed:
        return &st.zz[0]
    return &st.lit[0]


cdef void v2_prepare_direct(V2* st) noexcept nogil:
    cdef int i
    if st.is_signed:
        for i in range(st.num):
            st.zz[i] = <int64_t>zigzag(st.lit[i])
    width_histogram(v2_direct_values(st), st.num, st.hist)
    st.zz100 = percentile_bits(st.hist, st.num, 1.0)


cdef void v2_determine(V2* st) noexcept nogil:
    """Choose the sub-encoding of the buffered variable run (Java's determineEncoding)."""
    cdef int i
    cdef int n = st.num
    cdef bint increasing = True
    cdef bint decreasing = True
    cdef int64_t mx, first_delta, cur_delta = 0, delta_max = 0, l0, l1
    if n <= MIN_REPEAT:
        v2_prepare_direct(st)
        st.encoding = DIRECT
        return
    st.is_fixed_delta = True
    st.min = mx = st.lit[0]
    first_delta = wrap_sub(st.lit[1], st.lit[0])
    st.adj[0] = first_delta
    for i in range(1, n):
        l1 = st.lit[i]
        l0 = st.lit[i - 1]
        cur_delta = wrap_sub(l1, l0)
        if l1 < st.min:
            st.min = l1
        if l1 > mx:
            mx = l1
        increasing = increasing and l0 <= l1
        decreasing = decreasing and l0 >= l1
        st.is_fixed_delta = st.is_fixed_delta and cur_delta == first_delta
        if i > 1:
            st.adj[i - 1] = java_abs(cur_delta)
            if st.adj[i - 1] > delta_max:
                delta_max = st.adj[i - 1]
    if not ((mx ^ st.min) >= 0 or (mx ^ wrap_sub(mx, st.min)) >= 0):
        # max - min overflows: DIRECT, without looking at PATCHED_BASE
        v2_prepare_direct(st)
        st.encoding = DIRECT
        return
    if st.min == mx or st.is_fixed_delta:
        st.encoding = DELTA
        st.fixed_delta = 0 if st.min == mx else cur_delta
        return
    if first_delta != 0:
        st.bits_delta_max = value_bits(delta_max)
        if increasing or decreasing:
            st.encoding = DELTA
            return
    v2_patched_or_direct(st)


cdef void v2_patched_or_direct(V2* st) noexcept nogil:
    cdef int i
    cdef int zz90
    v2_prepare_direct(st)
    zz90 = percentile_bits(st.hist, st.num, 0.9)
    st.encoding = DIRECT
    if st.zz100 - zz90 <= 1:
        return
    for i in range(st.num):
        st.base_red[i] = wrap_sub(st.lit[i], st.min)
    width_histogram(&st.base_red[0], st.num, st.hist)
    st.br95 = percentile_bits(st.hist, st.num, 0.95)
    st.br100 = percentile_bits(st.hist, st.num, 1.0)
    # Java tests Math.abs(min) < 2**56, which Long.MIN_VALUE would pass; it cannot get here
    if st.br100 != st.br95 and -BASE_VALUE_LIMIT < st.min < BASE_VALUE_LIMIT:
        st.encoding = PATCHED_BASE
        v2_prepare_patches(st)


cdef void v2_prepare_patches(V2* st) noexcept nogil:
    """Cut the values above the 95th percentile width into the gap/patch list."""
    cdef int64_t gaps[MAX_SCOPE]
    cdef int64_t patches[MAX_SCOPE]
    cdef int64_t mask, g
    cdef int i, count = 0, prev = 0, max_gap = 0, j = 0
    st.patch_width = closest_fixed_bits(st.br100 - st.br95)
    if st.patch_width == 64:
        # gap and patch must share one 64-bit entry
        st.patch_width = 56
        st.br95 = 8
    mask = <int64_t>((1ULL << st.br95) - 1)
    for i in range(st.num):
        if st.base_red[i] > mask:
            if i - prev > max_gap:
                max_gap = i - prev
            gaps[count] = i - prev
            patches[count] = <int64_t>(<uint64_t>st.base_red[i] >> st.br95)
            count += 1
            prev = i
            st.base_red[i] &= mask
    if max_gap == 0 and count != 0:
        st.patch_gap_width = 1
    else:
        st.patch_gap_width = value_bits(max_gap)
    if st.patch_gap_width > 8:
        st.patch_gap_width = 8
    # a gap over 255 is stored as filler entries (gap 255, patch 0) before the real one
    for i in range(count):
        g = gaps[i]
        while g > 255:
            st.gap_patch[j] = <int64_t>(255ULL << st.patch_width)
            j += 1
            g -= 255
        st.gap_patch[j] = <int64_t>((<uint64_t>g << st.patch_width) | <uint64_t>patches[i])
        j += 1
    st.patch_length = j


cdef void v2_write_short_repeat(V2* st, Buf* b) noexcept nogil:
    cdef uint64_t value = zigzag(st.lit[0]) if st.is_signed else <uint64_t>st.lit[0]
    cdef int nbytes = (value_bits(<int64_t>value) + 7) >> 3
    put(b, <uint8_t>(((nbytes - 1) << 3) | (st.fixed_run - MIN_REPEAT)))
    put_be(b, value, nbytes)
    st.fixed_run = 0


cdef void v2_write_direct(V2* st, Buf* b) noexcept nogil:
    cdef int width = closest_aligned_bits(st.zz100) if st.aligned else st.zz100
    st.var_run -= 1
    put(b, <uint8_t>(0x40 | (encode_width(width) << 1) | ((st.var_run >> 8) & 1)))
    put(b, <uint8_t>(st.var_run & 0xff))
    pack_ints(b, v2_direct_values(st), st.num, width)
    st.var_run = 0


cdef void v2_write_patched(V2* st, Buf* b) noexcept nogil:
    cdef bint negative = st.min < 0
    cdef uint64_t base = (0 - <uint64_t>st.min) if negative else <uint64_t>st.min
    cdef int base_bytes = (value_bits(<int64_t>base) + 1 + 7) >> 3
    if negative:
        base |= 1ULL << (base_bytes * 8 - 1)
    st.var_run -= 1
    put(b, <uint8_t>(0x80 | (encode_width(st.br95) << 1) | ((st.var_run >> 8) & 1)))
    put(b, <uint8_t>(st.var_run & 0xff))
    put(b, <uint8_t>(((base_bytes - 1) << 5) | encode_width(st.patch_width)))
    put(b, <uint8_t>(((st.patch_gap_width - 1) << 5) | st.patch_length))
    put_be(b, base, base_bytes)
    pack_ints(b, &st.base_red[0], st.num, closest_fixed_bits(st.br95))
    pack_ints(b, &st.gap_patch[0], st.patch_length,
              closest_fixed_bits(st.patch_gap_width + st.patch_width))
    st.var_run = 0


cdef void v2_write_delta(V2* st, Buf* b) noexcept nogil:
    cdef int length
    cdef int width = closest_aligned_bits(st.bits_delta_max) if st.aligned else st.bits_delta_max
    cdef int code = 0
    if st.is_fixed_delta:
        if st.fixed_run > MIN_REPEAT:
            length = st.fixed_run - 1
            st.fixed_run = 0
        else:
            length = st.var_run - 1
            st.var_run = 0
    else:
        if width == 1:
            width = 2
        code = encode_width(width)
        length = st.var_run - 1
        st.var_run = 0
    put(b, <uint8_t>(0xc0 | (code << 1) | ((length >> 8) & 1)))
    put(b, <uint8_t>(length & 0xff))
    if st.is_signed:
        put_vslong(b, st.lit[0])
    else:
        put_vulong(b, <uint64_t>st.lit[0])
    if st.is_fixed_delta:
        put_vslong(b, st.fixed_delta)
    else:
        put_vslong(b, st.adj[0])
        pack_ints(b, &st.adj[1], st.num - 2, width)


cdef void v2_write_values(V2* st, Buf* b) noexcept nogil:
    if st.num == 0:
        return
    if reserve(b, V2_RUN_BYTES):
        if st.encoding == SHORT_REPEAT:
            v2_write_short_repeat(st, b)
        elif st.encoding == DIRECT:
            v2_write_direct(st, b)
        elif st.encoding == PATCHED_BASE:
            v2_write_patched(st, b)
        else:
            v2_write_delta(st, b)
    v2_clear(st)


cdef inline void v2_start(V2* st, int64_t value) noexcept nogil:
    st.lit[st.num] = value
    st.num += 1
    st.fixed_run = 1
    st.var_run = 1


cdef void v2_fixed_step(V2* st, Buf* b, int64_t value) noexcept nogil:
    """A value equal to the two before it."""
    st.lit[st.num] = value
    st.num += 1
    if st.var_run > 0:
        st.fixed_run = 2
    st.fixed_run += 1
    if st.fixed_run >= MIN_REPEAT and st.var_run > 0:
        # emit the variable run before the repeats, keep the three repeats
        st.num -= MIN_REPEAT
        st.var_run -= MIN_REPEAT - 1
        v2_determine(st)
        v2_write_values(st, b)
        st.lit[0] = st.lit[1] = st.lit[2] = value
        st.num = MIN_REPEAT
    if st.fixed_run == MAX_SCOPE:
        st.encoding = DELTA
        st.is_fixed_delta = True
        v2_write_values(st, b)


cdef void v2_variable_step(V2* st, Buf* b, int64_t value) noexcept nogil:
    if st.fixed_run >= MIN_REPEAT:
        if st.fixed_run <= MAX_SHORT_REPEAT:
            st.encoding = SHORT_REPEAT
        else:
            st.encoding = DELTA
            st.is_fixed_delta = True
        v2_write_values(st, b)
    if 0 < st.fixed_run < MIN_REPEAT and value != st.lit[st.num - 1]:
        st.var_run = st.fixed_run
        st.fixed_run = 0
    if st.num == 0:
        v2_start(st, value)
        return
    st.prev_delta = wrap_sub(value, st.lit[st.num - 1])
    st.lit[st.num] = value
    st.num += 1
    st.var_run += 1
    if st.var_run == MAX_SCOPE:
        v2_determine(st)
        v2_write_values(st, b)


cdef void v2_write(V2* st, Buf* b, int64_t value) noexcept nogil:
    cdef int64_t delta
    if st.num == 0:
        v2_start(st, value)
    elif st.num == 1:
        st.prev_delta = wrap_sub(value, st.lit[0])
        st.lit[1] = value
        st.num = 2
        if value == st.lit[0]:
            st.fixed_run = 2
            st.var_run = 0
        else:
            st.fixed_run = 0
            st.var_run = 2
    else:
        delta = wrap_sub(value, st.lit[st.num - 1])
        if st.prev_delta == 0 and delta == 0:
            v2_fixed_step(st, b, value)
        else:
            v2_variable_step(st, b, value)


cdef void v2_flush(V2* st, Buf* b) noexcept nogil:
    if st.num == 0:
        return
    if st.var_run != 0:
        v2_determine(st)
    elif st.fixed_run < MIN_REPEAT:
        st.var_run = st.fixed_run
        st.fixed_run = 0
        v2_determine(st)
    elif st.fixed_run <= MAX_SHORT_REPEAT:
        st.encoding = SHORT_REPEAT
    else:
        st.encoding = DELTA
        st.is_fixed_delta = True
    v2_write_values(st, b)


# ----------------------------------------------------------------------------------------
# Python entry points


def as_int64(values, name="values"):
    """``values`` as a contiguous 1-D int64 array (integer and boolean dtypes only)."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "biu":
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr.astype(np.int64, copy=False))


def check_boundaries(boundaries, Py_ssize_t n):
    """Row-group boundaries as int64 value indexes, sorted and within ``[0, n]``."""
    b = as_int64(boundaries if boundaries is not None else (), "boundaries")
    if b.size and (b.min() < 0 or b.max() > n or bool(np.any(b[1:] < b[:b.size - 1]))):
        raise ValueError(f"boundaries must be sorted value indexes in [0, {n}]")
    return b


def check_groups(starts, ends, Py_ssize_t n, bint ordered=False):
    """Group bounds as int64 arrays of equal length, each group ``starts[g]..ends[g]`` within
    the ``n`` values and, when ``ordered``, none starting before the one before it ends
    (ValueError otherwise): the check every grouped kernel makes first."""
    a, b = as_int64(starts, "starts"), as_int64(ends, "ends")
    cdef const int64_t[::1] av = a, bv = b
    cdef Py_ssize_t g, k = av.shape[0]
    if bv.shape[0] != k:
        raise ValueError("starts and ends differ in length")
    for g in range(k):
        if av[g] < 0 or av[g] > bv[g] or bv[g] > n:
            raise ValueError(f"group {g} ({av[g]}..{bv[g]}) lies outside the {n} values")
        if ordered and g and av[g] < bv[g - 1]:
            raise ValueError(f"group {g} ({av[g]}..{bv[g]}) starts before group {g - 1} ends")
    return a, b


def _rle_v2(values, bint is_signed, boundaries, bint aligned):
    vals = as_int64(values)
    stream = RleV2Stream(is_signed, boundaries, vals.shape[0], aligned=aligned)
    stream.write(vals)
    return stream.finish()


def write_int_rle_v2(values, bint signed, *, bint aligned=True):
    """Encode integers with RLE v2 exactly as ORC Java's RunLengthIntegerWriterV2.

    Args:
        values: 1-D integer array (converted to int64; uint64 wraps as in Java).
        signed: zigzag-encode the values (signed column types) or not (lengths, counts).
        aligned: aligned bit packing, as Java's SPEED encoding strategy (the default);
            False gives Java's COMPRESSION strategy.

    Returns:
        The encoded stream.
    """
    return _rle_v2(values, signed, None, aligned)[0]


def write_int_rle_v2_with_positions(values, bint signed, boundaries, *, bint aligned=True):
    """Like :func:`write_int_rle_v2`, also returning row-index positions.

    Args:
        values: 1-D integer array.
        signed: zigzag-encode the values or not.
        boundaries: sorted value indexes in ``[0, len(values)]``; each starts a row group.
        aligned: aligned bit packing (Java's SPEED strategy).

    Returns:
        ``(stream, positions)``: positions is an int64 array of shape ``(len(boundaries), 2)``,
        per boundary the bytes emitted before that value and the number of values then
        buffered (which precede it), as ORC Java's ``getPosition`` records them.
    """
    return _rle_v2(values, signed, boundaries, aligned)


cdef class RleV2Stream:
    """One RLE v2 stream written in pieces: :meth:`write` takes the values in order, in as
    many arrays as suit the caller (so that no column-sized array of them need exist), and
    :meth:`finish` returns what :func:`write_int_rle_v2_with_positions` returns for all of
    them at once, byte for byte.

    Args:
        signed: zigzag-encode the values or not.
        boundaries: sorted value indexes in ``[0, total]`` where row groups start.
        total: how many values will be written.
        aligned: aligned bit packing (Java's SPEED strategy).
    """

    cdef V2* st
    cdef Buf buf
    cdef object bounds
    cdef object positions
    cdef Py_ssize_t k, written, total
    cdef bint finished

    def __cinit__(self, bint signed, boundaries, Py_ssize_t total, *, bint aligned=True):
        self.st = NULL
        self.buf.data = NULL
        if total < 0:
            raise ValueError(f"a stream of {total} values")
        self.bounds = check_boundaries(boundaries, total)
        self.positions = np.zeros((self.bounds.shape[0], 2), dtype=np.int64)
        self.total = total
        self.st = <V2*>malloc(sizeof(V2))
        if self.st == NULL or not buf_init(&self.buf, total + total // 2):
            raise MemoryError("out of memory while encoding an ORC stream")
        v2_init(self.st, signed, aligned)

    def __dealloc__(self):
        free(self.st)
        free(self.buf.data)

    def write(self, values):
        """Encode the next values (a 1-D integer array).

        Raises:
            ValueError: more values than ``total``, or the stream is finished.
        """
        cdef const int64_t[::1] vals = as_int64(values)
        cdef Py_ssize_t n = vals.shape[0], i, k = self.k, start = self.written
        if self.finished or n > self.total - start:
            raise ValueError("more values than the stream was opened for")
        cdef const int64_t[::1] bounds = self.bounds
        cdef int64_t[:, ::1] pos = self.positions
        cdef Py_ssize_t nb = bounds.shape[0]
        with nogil:
            for i in range(n):
                while k < nb and bounds[k] == start + i:
                    pos[k, 0] = self.buf.size
                    pos[k, 1] = self.st.num
                    k += 1
                v2_write(self.st, &self.buf, vals[i])
        self.k = k
        self.written = start + n

    def finish(self):
        """The stream and its positions (see :func:`write_int_rle_v2_with_positions`).

        Raises:
            ValueError: fewer values were written than ``total``, or it was finished.
        """
        if self.finished or self.written != self.total:
            raise ValueError(f"{self.written} of the {self.total} values were written")
        cdef const int64_t[::1] bounds = self.bounds
        cdef int64_t[:, ::1] pos = self.positions
        cdef Py_ssize_t k = self.k, nb = bounds.shape[0]
        while k < nb:
            pos[k, 0] = self.buf.size
            pos[k, 1] = self.st.num
            k += 1
        self.k = k
        v2_flush(self.st, &self.buf)
        self.finished = True
        return buf_to_bytes(&self.buf), self.positions
