# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Decoding kernels for ORC's run-length encodings and varints.

Every decoder reads from any C-contiguous buffer (``bytes``, ``bytearray``, ``memoryview``,
read-only is fine), starting at the byte ``offset``, skips ``skip`` values and returns the next
``n`` values in a new numpy array. The loops run without the GIL and write straight into the
output array (the ``*_from`` variants also return the ``(offset, skip)`` of the next value, to
continue from). A stream may hold more values than asked for; the runs that hold the requested
values must be complete. Malformed or truncated data raises
:class:`aorc.errors.CorruptFileError`; nothing here reads outside the buffer or allocates more
than the buffer could possibly describe.

Integer arithmetic follows ORC Java: values are 64-bit two's complement and wrap, so unsigned
values above ``2**63 - 1`` come out negative.

The typed front with the full documentation is :mod:`aorc.format.codec.rle`.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset

from aorc.format.codec._decode_src cimport Src, fail, lacks, run_header, run_hi, run_lo, unzigzag
from aorc.format.codec._decode_src cimport (E_DELTA_SHORT, E_EOF, E_PATCH_EMPTY, E_PATCH_FILLER,
                                            E_PATCH_WIDTH, E_VARINT128_WIDE, E_VARINT_LONG)

import operator

import numpy as np

from aorc.errors import CorruptFileError

# ---------------------------------------------------------------------------------------------
# Error reporting from nogil code: kernels set Src.err (an E_* code of ``_decode_src.pxd``)
# and return -1; the Python wrappers turn that into a CorruptFileError naming the stream kind
# and byte position.

_MESSAGES = {
    E_EOF: "the data ends early",
    E_VARINT_LONG: "a varint is longer than 10 bytes",
    E_VARINT128_WIDE: "a varint is wider than 128 bits",
    E_PATCH_EMPTY: "a PATCHED_BASE run has an empty patch list",
    E_PATCH_WIDTH: "a PATCHED_BASE run has patch width + patch gap width over 64 bits",
    E_PATCH_FILLER: "PATCHED_BASE gap fillers run past the end of the patch list",
    E_DELTA_SHORT: "a DELTA run with bit-packed deltas holds fewer than 2 values",
}

# Most values one input byte can describe, per encoding: bounds allocations by input size.
cdef enum:
    BYTE_RLE_PER_BYTE = 65      # a run of 130 values in 2 bytes
    INT_V1_PER_BYTE = 44        # a run of 130 values in 3 bytes
    INT_V2_PER_BYTE = 128       # a fixed-delta run of 512 values in 4 bytes
    MAX_RUN = 512               # longest RLE v2 run

cdef inline int _uvarint(Src* s, uint64_t* value) noexcept nogil:
    """Read one unsigned base-128 varint (bits past 64 are dropped, as ORC Java does)."""
    cdef uint64_t result = 0
    cdef uint64_t b
    cdef int shift = 0
    cdef Py_ssize_t pos = s.pos
    while True:
        if pos >= s.end:
            return fail(s, E_EOF)
        b = s.p[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            break
        shift += 7
        if shift > 63:
            return fail(s, E_VARINT_LONG)
    s.pos = pos
    value[0] = result
    return 0


# ---------------------------------------------------------------------------------------------
# Big-endian bit unpacking

cdef inline int _width(int code) noexcept nogil:
    """Bit width for a 5-bit RLE v2 width code (every code is valid)."""
    if code < 24:
        return code + 1
    if code < 28:
        return 26 + 2 * (code - 24)     # 26, 28, 30, 32
    return 40 + 8 * (code - 28)         # 40, 48, 56, 64


cdef inline int _closest_fixed_bits(int n) noexcept nogil:
    if n <= 1:
        return 1
    if n <= 24:
        return n
    if n <= 32:
        return n + (n & 1)
    return (n + 7) & ~7


cdef inline uint64_t _load_be64(const uint8_t* q) noexcept nogil:
    return ((<uint64_t>q[0] << 56) | (<uint64_t>q[1] << 48) | (<uint64_t>q[2] << 40)
            | (<uint64_t>q[3] << 32) | (<uint64_t>q[4] << 24) | (<uint64_t>q[5] << 16)
            | (<uint64_t>q[6] << 8) | <uint64_t>q[7])


cdef inline uint64_t _load_be(const uint8_t* q, int nbytes) noexcept nogil:
    cdef uint64_t v = 0
    cdef int k
    for k in range(nbytes):
        v = (v << 8) | q[k]
    return v


cdef inline uint64_t _bits_at(const uint8_t* base, uint64_t bit, int w) noexcept nogil:
    """The ``w``-bit value (w <= 56) at bit offset ``bit``, reading only the bytes it covers."""
    cdef int sh = bit & 7
    cdef int nb = (sh + w + 7) >> 3
    cdef uint64_t v = _load_be(base + (bit >> 3), nb) >> (nb * 8 - sh - w)
    return v & ((<uint64_t>1 << w) - 1)


cdef void _unpack_aligned(const uint8_t* q, int64_t count, int w, uint64_t* dst) noexcept nogil:
    """Unpack values of 8, 16, 32 or 64 bits (``q`` points at the first one)."""
    cdef int64_t i
    if w == 8:
        for i in range(count):
            dst[i] = q[i]
    elif w == 16:
        for i in range(count):
            dst[i] = (<uint64_t>q[2 * i] << 8) | q[2 * i + 1]
    elif w == 32:
        for i in range(count):
            dst[i] = ((<uint64_t>q[4 * i] << 24) | (<uint64_t>q[4 * i + 1] << 16)
                      | (<uint64_t>q[4 * i + 2] << 8) | q[4 * i + 3])
    else:
        for i in range(count):
            dst[i] = _load_be64(q + 8 * i)


cdef void _unpack(const uint8_t* base, Py_ssize_t avail, int64_t start, int64_t count, int w,
                  uint64_t* dst) noexcept nogil:
    """Unpack ``count`` big-endian ``w``-bit values, from value number ``start`` on.

    ``base`` is where the packed run starts (byte aligned) and ``avail`` how many bytes may be
    read from it; the values themselves must lie inside those bytes.
    """
    cdef int64_t i, nfast = 0
    cdef uint64_t bit, last_fast_bit
    cdef int rs = 64 - w
    if w == 8 or w == 16 or w == 32 or w == 64:
        _unpack_aligned(base + start * (w >> 3), count, w, dst)
        return
    bit = <uint64_t>start * w
    # Value i may use one 8-byte load while the load stays inside the buffer.
    if avail >= 8:
        last_fast_bit = <uint64_t>(avail - 8) * 8 + 7
        if last_fast_bit >= bit:
            nfast = <int64_t>((last_fast_bit - bit) // <uint64_t>w) + 1
            if nfast > count:
                nfast = count
    for i in range(nfast):
        dst[i] = (_load_be64(base + (bit >> 3)) << (bit & 7)) >> rs
        bit += w
    for i in range(nfast, count):
        dst[i] = _bits_at(base, bit, w)
        bit += w


# ---------------------------------------------------------------------------------------------
# Byte RLE (also under boolean RLE)

cdef int _byte_rle(Src* s, uint8_t* out, int64_t skip, int64_t total) noexcept nogil:
    cdef int64_t done = 0, lo, hi, length
    cdef int ctrl
    while done < total:
        ctrl = run_header(s, done)
        if ctrl < 0:
            return -1
        if ctrl < 0x80:
            length = ctrl + 3
            if lacks(s, 2):
                return fail(s, E_EOF)
            lo = run_lo(done, skip)
            hi = run_hi(done, length, total)
            if lo < hi:
                memset(out + (done + lo - skip), s.p[s.pos + 1], hi - lo)
            s.pos += 2
        else:
            length = 256 - ctrl
            if lacks(s, 1 + length):
                return fail(s, E_EOF)
            lo = run_lo(done, skip)
            hi = run_hi(done, length, total)
            if lo < hi:
                memcpy(out + (done + lo - skip), s.p + s.pos + 1 + lo, hi - lo)
            s.pos += 1 + length
        done += length
    return 0


cdef void _expand_bits(const uint8_t* packed, int64_t first_bit, int64_t n,
                       uint8_t* out) noexcept nogil:
    """Spread bits MSB first into one 0/1 byte each, from bit ``first_bit`` on."""
    cdef int64_t i, bit
    for i in range(n):
        bit = first_bit + i
        out[i] = (packed[bit >> 3] >> (7 - (bit & 7))) & 1


# ---------------------------------------------------------------------------------------------
# Integer RLE version 1

cdef int _rle_v1(Src* s, uint64_t* out, int64_t skip, int64_t total, bint sgn) noexcept nogil:
    cdef int64_t done = 0, lo, hi, length, k
    cdef uint64_t base, delta, v
    cdef int ctrl
    while done < total:
        ctrl = run_header(s, done)
        if ctrl < 0:
            return -1
        lo = run_lo(done, skip)
        if ctrl < 0x80:
            length = ctrl + 3
            hi = run_hi(done, length, total)
            if lacks(s, 2):
                return fail(s, E_EOF)
            delta = <uint64_t><int64_t>(<int8_t>s.p[s.pos + 1])
            s.pos += 2
            if _uvarint(s, &base) < 0:
                return -1
            if sgn:
                base = unzigzag(base)
            for k in range(lo, hi):
                out[done + k - skip] = base + <uint64_t>k * delta
        else:
            length = 256 - ctrl
            hi = run_hi(done, length, total)
            s.pos += 1
            for k in range(length):
                if _uvarint(s, &v) < 0:
                    return -1
                if lo <= k < hi:
                    out[done + k - skip] = unzigzag(v) if sgn else v
        done += length
    return 0


# ---------------------------------------------------------------------------------------------
# Integer RLE version 2: one function per sub-encoding. Each decodes the run at s.pos, which
# holds values done .. done+length-1 of the stream, writes those in [skip, total) to
# out[value - skip], moves s.pos past the run and returns its length (or -1 on error).

cdef int64_t _v2_short_repeat(Src* s, uint64_t* out, int64_t done, int64_t skip, int64_t total,
                              bint sgn) noexcept nogil:
    cdef uint8_t first = s.p[s.pos]
    cdef int nbytes = ((first >> 3) & 7) + 1
    cdef int64_t length = (first & 7) + 3
    cdef int64_t lo = run_lo(done, skip), hi = run_hi(done, length, total), k
    cdef uint64_t v
    if lacks(s, 1 + nbytes):
        return fail(s, E_EOF)
    v = _load_be(s.p + s.pos + 1, nbytes)
    if sgn:
        v = unzigzag(v)
    for k in range(lo, hi):
        out[done + k - skip] = v
    s.pos += 1 + nbytes
    return length


cdef int64_t _v2_direct(Src* s, uint64_t* out, int64_t done, int64_t skip, int64_t total,
                        bint sgn) noexcept nogil:
    cdef uint8_t first = s.p[s.pos]
    cdef int w = _width((first >> 1) & 31)
    cdef int64_t length, nbytes, lo, hi, k
    cdef uint64_t* dst
    if lacks(s, 2):
        return fail(s, E_EOF)
    length = (((first & 1) << 8) | s.p[s.pos + 1]) + 1
    nbytes = (length * w + 7) >> 3
    if lacks(s, 2 + nbytes):
        return fail(s, E_EOF)
    lo = run_lo(done, skip)
    hi = run_hi(done, length, total)
    if lo < hi:
        dst = out + (done + lo - skip)
        _unpack(s.p + s.pos + 2, s.end - s.pos - 2, lo, hi - lo, w, dst)
        if sgn:
            for k in range(hi - lo):
                dst[k] = unzigzag(dst[k])
    s.pos += 2 + nbytes
    return length


cdef void _delta_values(const uint8_t* packed, Py_ssize_t avail, int w, uint64_t base,
                        uint64_t delta, int64_t lo, int64_t hi, uint64_t* dst,
                        uint64_t* scratch) noexcept nogil:
    """Values lo .. hi-1 of a DELTA run with bit-packed deltas into dst[0 ..]."""
    cdef int64_t k, start
    cdef uint64_t v = base + delta
    if lo == 0:
        dst[0] = base
    if lo <= 1 < hi:
        dst[1 - lo] = v
    if hi <= 2:
        return
    if lo == 0:  # the usual case: unpack in place, then accumulate
        _unpack(packed, avail, 0, hi - 2, w, dst + 2)
        if <int64_t>delta < 0:
            for k in range(2, hi):
                v -= dst[k]
                dst[k] = v
        else:
            for k in range(2, hi):
                v += dst[k]
                dst[k] = v
        return
    _unpack(packed, avail, 0, hi - 2, w, scratch)
    if <int64_t>delta < 0:
        for k in range(hi - 2):
            scratch[k] = <uint64_t>0 - scratch[k]
    start = lo if lo > 2 else 2
    for k in range(2, start):
        v += scratch[k - 2]
    for k in range(start, hi):
        v += scratch[k - 2]
        dst[k - lo] = v


cdef int64_t _v2_delta(Src* s, uint64_t* out, int64_t done, int64_t skip, int64_t total,
                       bint sgn, uint64_t* scratch) noexcept nogil:
    cdef uint8_t first = s.p[s.pos]
    cdef int code = (first >> 1) & 31
    cdef int w = _width(code) if code else 0
    cdef int64_t length, nbytes, lo, hi, k
    cdef uint64_t base, delta
    if lacks(s, 2):
        return fail(s, E_EOF)
    length = (((first & 1) << 8) | s.p[s.pos + 1]) + 1
    s.pos += 2
    if _uvarint(s, &base) < 0 or _uvarint(s, &delta) < 0:
        return -1
    if sgn:
        base = unzigzag(base)
    delta = unzigzag(delta)
    lo = run_lo(done, skip)
    hi = run_hi(done, length, total)
    if w == 0:
        for k in range(lo, hi):
            out[done + k - skip] = base + <uint64_t>k * delta
        return length
    if length < 2:
        return fail(s, E_DELTA_SHORT)
    nbytes = ((length - 2) * w + 7) >> 3
    if lacks(s, nbytes):
        return fail(s, E_EOF)
    if lo < hi:
        _delta_values(s.p + s.pos, s.end - s.pos, w, base, delta, lo, hi,
                      out + (done + lo - skip), scratch)
    s.pos += nbytes
    return length


cdef int _apply_patches(const uint8_t* packed, Py_ssize_t avail, int count, int entry_width,
                        int pw, int w, int64_t length, uint64_t* vals) noexcept nogil:
    """OR the patch list of a PATCHED_BASE run into its unpacked values, as ORC Java does.

    A gap of 255 with patch 0 is a filler that only moves on. A later patch with a gap of 0 is
    never reached by the reference readers, so neither it nor any after it is applied.
    """
    cdef uint64_t entries[32]
    cdef uint64_t pmask = (<uint64_t>1 << pw) - 1      # pw <= 63 here
    cdef uint64_t gap, patch
    cdef int64_t target = 0, step
    cdef int idx = 0
    _unpack(packed, avail, 0, count, entry_width, entries)
    while idx < count:
        step = 0
        gap = entries[idx] >> pw
        patch = entries[idx] & pmask
        while gap == 255 and patch == 0:
            step += 255
            idx += 1
            if idx >= count:
                return -1
            gap = entries[idx] >> pw
            patch = entries[idx] & pmask
        step += <int64_t>gap
        if idx > 0 and step == 0:
            break
        target += step
        if target >= length:
            break
        vals[target] |= patch << (w & 63)
        idx += 1
    return 0


cdef int64_t _v2_patched(Src* s, uint64_t* out, int64_t done, int64_t skip, int64_t total,
                         uint64_t* scratch) noexcept nogil:
    cdef const uint8_t* q = s.p + s.pos
    cdef int w, bw, pw, pgw, pl, cfb
    cdef int64_t length, dbytes, pbytes, lo, hi, k
    cdef uint64_t base, sign
    if lacks(s, 4):
        return fail(s, E_EOF)
    w = _width((q[0] >> 1) & 31)
    length = (((q[0] & 1) << 8) | q[1]) + 1
    bw = ((q[2] >> 5) & 7) + 1
    pw = _width(q[2] & 31)
    pgw = ((q[3] >> 5) & 7) + 1
    pl = q[3] & 31
    if pl == 0:
        return fail(s, E_PATCH_EMPTY)
    if pw + pgw > 64:
        return fail(s, E_PATCH_WIDTH)
    cfb = _closest_fixed_bits(pw + pgw)
    dbytes = (length * w + 7) >> 3
    pbytes = (pl * cfb + 7) >> 3
    if lacks(s, 4 + bw + dbytes + pbytes):
        return fail(s, E_EOF)
    lo = run_lo(done, skip)
    hi = run_hi(done, length, total)
    if lo < hi:
        base = _load_be(q + 4, bw)
        sign = <uint64_t>1 << (bw * 8 - 1)
        if base & sign:
            base = <uint64_t>0 - (base & ~sign)
        _unpack(q + 4 + bw, s.end - s.pos - 4 - bw, 0, length, w, scratch)
        if _apply_patches(q + 4 + bw + dbytes, s.end - s.pos - 4 - bw - dbytes, pl, cfb, pw,
                          w, length, scratch) < 0:
            return fail(s, E_PATCH_FILLER)
        for k in range(lo, hi):
            out[done + k - skip] = base + scratch[k]
    s.pos += 4 + bw + dbytes + pbytes
    return length


cdef int _rle_v2(Src* s, uint64_t* out, int64_t skip, int64_t total, bint sgn) noexcept nogil:
    cdef uint64_t scratch[MAX_RUN]
    cdef int64_t done = 0, length
    cdef int kind
    while done < total:
        kind = run_header(s, done)
        if kind < 0:
            return -1
        kind >>= 6
        if kind == 0:
            length = _v2_short_repeat(s, out, done, skip, total, sgn)
        elif kind == 1:
            length = _v2_direct(s, out, done, skip, total, sgn)
        elif kind == 2:
            length = _v2_patched(s, out, done, skip, total, scratch)
        else:
            length = _v2_delta(s, out, done, skip, total, sgn, scratch)
        if length < 0:
            return -1
        done += length
    return 0


# ---------------------------------------------------------------------------------------------
# Plain varints

cdef int _varints(Src* s, uint64_t* out, int64_t n, bint sgn) noexcept nogil:
    cdef int64_t i
    cdef uint64_t v
    for i in range(n):
        s.run_start = s.pos
        s.done = i
        if _uvarint(s, &v) < 0:
            return -1
        out[i] = unzigzag(v) if sgn else v
    return 0


cdef int _varint128_one(Src* s, uint64_t* dst) noexcept nogil:
    """One zigzag varint of up to 128 bits into dst[0] (low word) and dst[1] (high word)."""
    cdef uint64_t lo = 0, hi = 0, c, b
    cdef int shift = 0
    while True:
        if s.pos >= s.end:
            return fail(s, E_EOF)
        b = s.p[s.pos]
        s.pos += 1
        c = b & 0x7F
        if shift < 64:
            lo |= c << shift
            if shift > 57:
                hi |= c >> (64 - shift)
        else:
            if shift == 126 and c > 3:
                return fail(s, E_VARINT128_WIDE)
            hi |= c << (shift - 64)
        if b < 0x80:
            break
        shift += 7
        if shift > 126:
            return fail(s, E_VARINT128_WIDE)
    c = <uint64_t>0 - (lo & 1)
    dst[0] = ((lo >> 1) | (hi << 63)) ^ c
    dst[1] = (hi >> 1) ^ c
    return 0


cdef int _varint128(Src* s, uint64_t* out, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        s.run_start = s.pos
        s.done = i
        if _varint128_one(s, out + 2 * i) < 0:
            return -1
    return 0


# ---------------------------------------------------------------------------------------------
# Python entry points

cdef const uint8_t[::1] _byte_view(object data):
    if isinstance(data, (bytes, bytearray)):
        return data
    return memoryview(data).cast("B")


cdef tuple _counts(str what, Py_ssize_t size, object n, object offset, object skip,
                   int64_t per_byte):
    """Validate (n, offset, skip) against a buffer of ``size`` bytes; return them as ints."""
    n = operator.index(n)
    offset = operator.index(offset)
    skip = operator.index(skip)
    if n < 0 or offset < 0 or skip < 0:
        raise CorruptFileError(
            f"{what}: negative count, offset or skip (n={n}, offset={offset}, skip={skip})")
    if offset > size:
        raise CorruptFileError(f"{what}: offset {offset} is past the end of the {size}-byte data")
    if n + skip > per_byte * (size - offset):
        raise CorruptFileError(
            f"{what}: {n + skip} values cannot be encoded in the {size - offset} bytes "
            f"from offset {offset}")
    return n, offset, skip


cdef int _raise(Src* s, str what) except -1:
    raise CorruptFileError(
        f"{what}: {_MESSAGES[s.err]} (after {s.done} values, in the run at byte "
        f"{s.run_start} of {s.end})")


cdef inline Src _src(const uint8_t[::1] view, Py_ssize_t offset):
    cdef Src s
    s.p = &view[0] if view.shape[0] > 0 else NULL
    s.pos = offset
    s.end = view.shape[0]
    s.run_start = offset
    s.done = 0
    s.err = 0
    return s


def read_byte_rle(data, n, offset=0, skip=0):
    """Decode ``n`` bytes of a byte-RLE stream (see :func:`aorc.format.codec.rle.read_byte_rle`)."""
    return read_byte_rle_from(data, n, offset, skip)[0]


def read_bool_rle(data, n, offset=0, skip=0):
    """Decode ``n`` booleans of a boolean-RLE stream (see :func:`aorc.format.codec.rle.read_bool_rle`)."""
    return read_bool_rle_from(data, n, offset, skip)[0]


ctypedef int (*_IntKernel)(Src*, uint64_t*, int64_t, int64_t, bint) noexcept nogil


cdef object _read_ints(_IntKernel kernel, str what, int per_byte, data, n, object signed,
                       offset, skip):
    """The front shared by the integer RLE decoders: checks, output, the GIL-free loop;
    returns the values and the ``(offset, skip)`` of the next one."""
    cdef const uint8_t[::1] view = _byte_view(data)
    n, offset, skip = _counts(what, view.shape[0], n, offset, skip, per_byte)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out, offset, skip
    cdef int64_t[::1] ov = out
    cdef Src s = _src(view, offset)
    cdef int rc
    cdef bint sgn = bool(signed)
    cdef int64_t c_skip = skip, c_total = n + skip
    with nogil:
        rc = kernel(&s, <uint64_t*>&ov[0], c_skip, c_total, sgn)
    if rc < 0:
        _raise(&s, what)
    return out, s.run_start, c_total - s.done


def read_int_rle_v1(data, n, object signed, offset=0, skip=0):
    """Decode ``n`` integers of an RLE v1 stream (see :func:`aorc.format.codec.rle.read_int_rle_v1`)."""
    return _read_ints(_rle_v1, "integer RLE v1 stream", INT_V1_PER_BYTE, data, n, signed,
                      offset, skip)[0]


def read_int_rle_v2(data, n, object signed, offset=0, skip=0):
    """Decode ``n`` integers of an RLE v2 stream (see :func:`aorc.format.codec.rle.read_int_rle_v2`)."""
    return _read_ints(_rle_v2, "integer RLE v2 stream", INT_V2_PER_BYTE, data, n, signed,
                      offset, skip)[0]


def read_varints(data, n, object signed, offset=0):
    """Decode ``n`` base-128 varints (see :func:`aorc.format.codec.rle.read_varints`)."""
    cdef const uint8_t[::1] view = _byte_view(data)
    n, offset, _ = _counts("varint stream", view.shape[0], n, offset, 0, 1)
    out = np.empty(n, dtype=np.int64)
    if n == 0:
        return out
    cdef int64_t[::1] ov = out
    cdef Src s = _src(view, offset)
    cdef int rc
    cdef bint sgn = bool(signed)
    cdef int64_t c_n = n
    with nogil:
        rc = _varints(&s, <uint64_t*>&ov[0], c_n, sgn)
    if rc < 0:
        _raise(&s, "varint stream")
    return out


def read_varint128(data, n, offset=0):
    """Decode ``n`` zigzag varints of up to 128 bits (see :func:`aorc.format.codec.rle.read_varint128`)."""
    return read_varint128_from(data, n, offset)[0]


cdef uint64_t[9] _POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000]


def decode_nanos(encoded):
    """Expand timestamp SECONDARY values (see :func:`aorc.format.codec.rle.decode_nanos`)."""
    src = np.ascontiguousarray(encoded, dtype=np.int64)
    out = np.empty_like(src)
    if src.size == 0:
        return out
    cdef const int64_t[::1] sv = src.reshape(-1)
    cdef uint64_t[::1] ov = out.reshape(-1).view(np.uint64)
    cdef Py_ssize_t i, count = sv.shape[0]
    cdef int64_t x
    cdef uint64_t significand
    with nogil:
        for i in range(count):
            x = sv[i]
            significand = <uint64_t>(x >> 3)   # arithmetic shift, as ORC C++ reads it
            ov[i] = significand * _POW10[(x & 7) + 1] if x & 7 else significand
    return out


def offsets_int32(lengths, valid, Py_ssize_t length):
    """Arrow int32 offsets of ``length`` slots (see :func:`aorc.format.codec.rle.offsets_int32`)."""
    cdef const int64_t[::1] lv = np.ascontiguousarray(lengths, dtype=np.int64)
    cdef const uint8_t[::1] vv
    cdef bint masked = valid is not None
    if masked:
        vv = np.ascontiguousarray(valid, dtype=np.bool_).view(np.uint8)
        if vv.shape[0] != length:
            raise ValueError(f"{vv.shape[0]} validity flags for {length} slots")
    elif lv.shape[0] != length:
        raise ValueError(f"{lv.shape[0]} lengths for {length} slots")
    out = np.empty(length + 1, dtype=np.int32)
    cdef int32_t[::1] ov = out
    cdef int64_t acc = 0, x
    cdef Py_ssize_t i, j = 0, nl = lv.shape[0]
    cdef int rc = 0   # 1: a negative length, 2: the total exceeds 2**31 - 1, 3: too few lengths
    with nogil:
        ov[0] = 0
        for i in range(length):
            if not masked or vv[i]:
                if j >= nl:
                    rc = 3
                    break
                x = lv[j]
                j += 1
                if x < 0:
                    rc = 1
                    break
                if x > 2147483647 - acc:
                    rc = 2
                    break
                acc += x
            ov[i + 1] = <int32_t>acc
        if rc == 0 and j != nl:
            rc = 3
    if rc == 1:
        raise ValueError("a negative length")
    if rc == 3:
        raise ValueError(f"{nl} lengths for the valid slots of {length}")
    return out, (acc if rc == 0 else -1)


def read_byte_rle_from(data, n, offset=0, skip=0):
    """:func:`read_byte_rle`, returning ``(values, next_offset, next_skip)``."""
    cdef const uint8_t[::1] view = _byte_view(data)
    n, offset, skip = _counts("byte RLE stream", view.shape[0], n, offset, skip,
                              BYTE_RLE_PER_BYTE)
    out = np.empty(n, dtype=np.int8)
    if n == 0:
        return out, offset, skip
    cdef int8_t[::1] ov = out
    cdef Src s = _src(view, offset)
    cdef int64_t rc, c_skip = skip, c_total = n + skip
    with nogil:
        rc = _byte_rle(&s, <uint8_t*>&ov[0], c_skip, c_total)
    if rc < 0:
        _raise(&s, "byte RLE stream")
    return out, s.run_start, c_total - s.done


def read_bool_rle_from(data, n, offset=0, skip=0):
    """:func:`read_bool_rle`, returning ``(values, next_offset, next_skip)`` (skip in bits)."""
    cdef const uint8_t[::1] view = _byte_view(data)
    n, offset, skip = _counts("boolean RLE stream", view.shape[0], n, offset, skip,
                              8 * BYTE_RLE_PER_BYTE)
    out = np.empty(n, dtype=np.bool_)
    if n == 0:
        return out, offset, skip
    cdef int64_t first_bit = skip & 7, byte_skip = skip >> 3
    cdef int64_t nbytes = (first_bit + n + 7) >> 3, c_n = n
    packed = np.empty(nbytes, dtype=np.uint8)
    cdef uint8_t[::1] pv = packed
    cdef uint8_t[::1] ov = out.view(np.uint8)
    cdef Src s = _src(view, offset)
    cdef int rc
    with nogil:
        rc = _byte_rle(&s, &pv[0], byte_skip, byte_skip + nbytes)
        if rc == 0:
            _expand_bits(&pv[0], first_bit, c_n, &ov[0])
    if rc < 0:
        _raise(&s, "boolean RLE stream")
    return out, s.run_start, skip + n - 8 * s.done


def decode_ints_from(data, n, object signed, int version, offset=0, skip=0):
    """Integer RLE v1 or v2, returning ``(values, next_offset, next_skip)``."""
    if version == 2:
        return _read_ints(_rle_v2, "integer RLE v2 stream", INT_V2_PER_BYTE, data, n, signed,
                          offset, skip)
    return _read_ints(_rle_v1, "integer RLE v1 stream", INT_V1_PER_BYTE, data, n, signed,
                      offset, skip)


def read_varint128_from(data, n, offset=0):
    """:func:`read_varint128`, returning ``(values, next_offset)``."""
    cdef const uint8_t[::1] view = _byte_view(data)
    n, offset, _ = _counts("128-bit varint stream", view.shape[0], n, offset, 0, 1)
    out = np.empty((n, 2), dtype=np.uint64)
    if n == 0:
        return out, offset
    cdef uint64_t[:, ::1] ov = out
    cdef Src s = _src(view, offset)
    cdef int64_t rc, c_n = n
    with nogil:
        rc = _varint128(&s, &ov[0, 0], c_n)
    if rc < 0:
        _raise(&s, "128-bit varint stream")
    return out, s.pos
