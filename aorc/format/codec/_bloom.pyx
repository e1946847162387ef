# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Hot loops of ORC bloom filters: hashing values and setting/testing filter bits.

Every kernel releases the GIL. The arithmetic reproduces ORC Java's signed 64-bit and 32-bit
wrap-around semantics with unsigned C integers (wrap-around is defined for those) and explicit
sign handling for the arithmetic right shifts.
"""

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t

import numpy as np

cimport numpy as cnp

cnp.import_array()

ctypedef fused offset_t:
    int32_t
    int64_t

cdef uint64_t _C1 = 0x87c37b91114253d5ULL
cdef uint64_t _C2 = 0x4cf5ad432745937fULL
cdef uint64_t _N1 = 0x52dce729ULL


cdef inline uint64_t _rotl(uint64_t x, int r) noexcept nogil:
    return (x << r) | (x >> (64 - r))


cdef inline uint64_t _load_le(const uint8_t* p) noexcept nogil:
    return (<uint64_t>p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[2] << 16)
            | (<uint64_t>p[3] << 24) | (<uint64_t>p[4] << 32) | (<uint64_t>p[5] << 40)
            | (<uint64_t>p[6] << 48) | (<uint64_t>p[7] << 56))


cdef inline uint64_t _fmix(uint64_t h) noexcept nogil:
    h ^= h >> 33
    h *= 0xff51afd7ed558ccdULL
    h ^= h >> 33
    h *= 0xc4ceb9fe1a85ec53ULL
    h ^= h >> 33
    return h


cdef uint64_t _murmur(const uint8_t* p, Py_ssize_t n, uint64_t seed) noexcept nogil:
    # Single-lane 64-bit Murmur3 as ORC computes it: one state word, 8-byte blocks,
    # a tail folded in without rotating the state, then length xor and fmix64.
    cdef uint64_t h = seed
    cdef uint64_t k
    cdef Py_ssize_t blocks = n >> 3
    cdef Py_ssize_t i
    cdef Py_ssize_t tail = blocks << 3
    for i in range(blocks):
        k = _load_le(p + (i << 3))
        k *= _C1
        k = _rotl(k, 31)
        k *= _C2
        h ^= k
        h = _rotl(h, 27) * 5 + _N1
    k = 0
    i = n - tail
    while i > 0:
        i -= 1
        k ^= (<uint64_t>p[tail + i]) << (8 * i)
    if n - tail > 0:
        k *= _C1
        k = _rotl(k, 31)
        k *= _C2
        h ^= k
    h ^= <uint64_t>n
    return _fmix(h)


cdef inline uint64_t _sar(uint64_t x, int r) noexcept nogil:
    # arithmetic (sign-propagating) right shift of the two's complement value x
    if x >> 63:
        return ~((~x) >> r)
    return x >> r


cdef inline uint64_t _long_hash(uint64_t key) noexcept nogil:
    # Thomas Wang's 64-bit integer mix on the signed value, as ORC Java's getLongHash.
    key = (~key) + (key << 21)
    key = key ^ _sar(key, 24)
    key = (key + (key << 3)) + (key << 8)
    key = key ^ _sar(key, 14)
    key = (key + (key << 2)) + (key << 4)
    key = key ^ _sar(key, 28)
    key = key + (key << 31)
    return key


cdef inline uint32_t _bit_position(uint64_t hash64, uint32_t i, uint32_t num_bits) noexcept nogil:
    # h1 = low 32 bits, h2 = high 32 bits, both signed; combined = h1 + i * h2 with 32-bit wrap,
    # bits flipped when negative, then taken modulo the number of bits (< 2**31).
    cdef uint32_t h1 = <uint32_t>hash64
    cdef uint32_t h2 = <uint32_t>(hash64 >> 32)
    cdef uint32_t c = h1 + i * h2
    if c & 0x80000000U:
        c = ~c
    return c % num_bits


cdef uint32_t _checked_bits(Py_ssize_t num_words, int k) except 0:
    if num_words <= 0 or num_words >= (1 << 25) or k < 1:
        raise ValueError(
            f"a bloom filter needs 1 to 2**25 - 1 words and at least one hash function: "
            f"{num_words} words, k={k}"
        )
    return <uint32_t>(num_words * 64)


def murmur3_hash64(const uint8_t[::1] data, int64_t seed=104729):
    """Return ORC's 64-bit Murmur3 of ``data`` as a signed Python int."""
    cdef Py_ssize_t n = data.shape[0]
    cdef uint64_t h
    cdef const uint8_t* p = NULL
    if n > 0:
        p = &data[0]
    with nogil:
        h = _murmur(p, n, <uint64_t>seed)
    return <int64_t>h


def murmur3_hash64_offsets(const offset_t[::1] offsets, const uint8_t[::1] data,
                           int64_t seed=104729):
    """Hash every value of an Arrow-style (offsets, data) pair; see the ``.pyi`` stub."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef Py_ssize_t size = data.shape[0]
    cdef Py_ssize_t i
    cdef int64_t start, end
    cdef bint bad = False
    if n < 0:
        raise ValueError("offsets must hold at least one entry")
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] res = out
    cdef const uint8_t* base = NULL
    if size > 0:
        base = &data[0]
    with nogil:
        for i in range(n):
            start = offsets[i]
            end = offsets[i + 1]
            if start < 0 or end < start or end > size:
                bad = True
                break
            res[i] = <int64_t>_murmur(base + start, end - start, <uint64_t>seed)
    if bad:
        raise ValueError(f"offsets out of range at value {i} (data holds {size} bytes)")
    return out


def thomas_wang_hash64(const int64_t[::1] values):
    """Thomas Wang's 64-bit hash of every value (ORC Java ``getLongHash``)."""
    cdef Py_ssize_t n = values.shape[0]
    cdef Py_ssize_t i
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] res = out
    with nogil:
        for i in range(n):
            res[i] = <int64_t>_long_hash(<uint64_t>values[i])
    return out


def add_hashes(uint64_t[::1] words, const int64_t[::1] hashes, int k):
    """Set the ``k`` bits of every hash in the filter ``words`` (in place)."""
    cdef Py_ssize_t n = hashes.shape[0]
    cdef uint32_t num_bits = _checked_bits(words.shape[0], k)
    cdef Py_ssize_t j
    cdef uint32_t i, pos
    cdef uint64_t h
    with nogil:
        for j in range(n):
            h = <uint64_t>hashes[j]
            for i in range(1, <uint32_t>k + 1):
                pos = _bit_position(h, i, num_bits)
                words[pos >> 6] |= (<uint64_t>1) << (pos & 63)


cdef inline bint _test(const uint64_t* words, uint32_t num_bits, uint64_t h,
                       uint32_t k) noexcept nogil:
    cdef uint32_t i, pos
    for i in range(1, k + 1):
        pos = _bit_position(h, i, num_bits)
        if not (words[pos >> 6] >> (pos & 63)) & 1:
            return False
    return True


def test_hashes(const uint64_t[::1] words, const int64_t[::1] hashes, int k):
    """Membership of every hash: a numpy bool array, True where all ``k`` bits are set."""
    cdef Py_ssize_t n = hashes.shape[0]
    cdef uint32_t num_bits = _checked_bits(words.shape[0], k)
    cdef Py_ssize_t j
    out = np.empty(n, dtype=np.bool_)
    cdef uint8_t[::1] res = out.view(np.uint8)
    with nogil:
        for j in range(n):
            res[j] = _test(&words[0], num_bits, <uint64_t>hashes[j], <uint32_t>k)
    return out


def test_hash(const uint64_t[::1] words, int64_t hash64, int k):
    """True when all ``k`` bits of one hash are set."""
    cdef uint32_t num_bits = _checked_bits(words.shape[0], k)
    return _test(&words[0], num_bits, <uint64_t>hash64, <uint32_t>k)


cdef int _decimal_text(uint64_t lo, uint64_t hi, int scale, uint8_t* out) noexcept nogil:
    # Writes the plain decimal text of the 128-bit two's complement value (lo, hi) / 10**scale
    # with trailing fractional zeros (and a bare point) removed, as ORC writers format decimals
    # for bloom filters. Returns the length; ``out`` must hold at least 42 + scale bytes.
    cdef uint8_t digits[40]
    cdef uint32_t limbs[4]
    cdef int nd = 0, j, pos = 0, frac, lead
    cdef uint64_t cur
    cdef bint neg = (hi >> 63) != 0
    if neg:
        lo = ~lo + 1
        hi = ~hi + (1 if lo == 0 else 0)
    limbs[0] = <uint32_t>(hi >> 32)
    limbs[1] = <uint32_t>hi
    limbs[2] = <uint32_t>(lo >> 32)
    limbs[3] = <uint32_t>lo
    while limbs[0] or limbs[1]:
        # long division of the 128-bit magnitude by 10, 32 bits at a time
        cur = 0
        for j in range(4):
            cur = (cur << 32) | limbs[j]
            limbs[j] = <uint32_t>(cur // 10)
            cur = cur % 10
        digits[nd] = <uint8_t>(48 + cur)
        nd += 1
    lo = ((<uint64_t>limbs[2]) << 32) | limbs[3]
    while True:
        # the rest fits 64 bits: division by a constant compiles to a multiplication
        digits[nd] = <uint8_t>(48 + lo % 10)
        nd += 1
        lo //= 10
        if lo == 0:
            break
    # digits holds the magnitude least significant first; drop fractional trailing zeros
    frac = scale
    lead = 0
    while frac > 0 and lead < nd and digits[lead] == 48:
        lead += 1
        frac -= 1
    if lead == nd:
        out[0] = 48
        return 1
    if neg:
        out[pos] = 45
        pos += 1
    if nd - lead <= frac:
        out[pos] = 48
        out[pos + 1] = 46
        pos += 2
        for j in range(frac - (nd - lead)):
            out[pos] = 48
            pos += 1
        for j in range(nd - 1, lead - 1, -1):
            out[pos] = digits[j]
            pos += 1
        return pos
    for j in range(nd - 1, lead - 1, -1):
        out[pos] = digits[j]
        pos += 1
        if j - lead == frac and frac > 0:
            out[pos] = 46
            pos += 1
    return pos


def hash_decimal128(const uint64_t[::1] words, int scale, int64_t seed=104729):
    """Murmur3 of the trimmed decimal text of every value; see the ``.pyi`` stub."""
    cdef Py_ssize_t n = words.shape[0] // 2
    cdef Py_ssize_t i
    cdef int length
    cdef uint8_t[::1] buf
    if scale < 0 or scale > 76:
        raise ValueError(f"decimal scale {scale} out of range")
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] res = out
    buf = np.empty(48 + scale, dtype=np.uint8)
    with nogil:
        for i in range(n):
            length = _decimal_text(words[2 * i], words[2 * i + 1], scale, &buf[0])
            res[i] = <int64_t>_murmur(&buf[0], length, <uint64_t>seed)
    return out


def decimal128_text(uint64_t lo, uint64_t hi, int scale):
    """The trimmed decimal text of one 128-bit value (for tests and literals)."""
    if scale < 0 or scale > 76:
        raise ValueError(f"decimal scale {scale} out of range")
    buf = np.empty(48 + scale, dtype=np.uint8)
    cdef uint8_t[::1] b = buf
    cdef int length = _decimal_text(lo, hi, scale, &b[0])
    return bytes(buf[:length])
