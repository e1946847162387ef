# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""SHA-256 of every value of an Arrow string or binary column, in one pass without the GIL
(the ``sha256`` mask).

A small self-contained SHA-256 (FIPS 180-4): no library offers a batch hash over Arrow's
offsets and data buffers, and ``hashlib`` costs a Python call (and holds the GIL) per value,
which made masked writes several times slower than plain ones. The result is checked against
``hashlib`` in the tests.
"""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy, memset

cdef uint32_t[64] _K
_K[:] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
]
cdef const char* _HEX = b"0123456789ABCDEF"


cdef inline uint32_t _rotr(uint32_t x, int n) noexcept nogil:
    return (x >> n) | (x << (32 - n))


cdef void _block(uint32_t* h, const uint8_t* p) noexcept nogil:
    cdef uint32_t w[64]
    cdef uint32_t a, b, c, d, e, f, g, hh, t1, t2, s0, s1
    cdef int i
    for i in range(16):
        w[i] = ((<uint32_t>p[4 * i] << 24) | (<uint32_t>p[4 * i + 1] << 16)
                | (<uint32_t>p[4 * i + 2] << 8) | <uint32_t>p[4 * i + 3])
    for i in range(16, 64):
        s0 = _rotr(w[i - 15], 7) ^ _rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
        s1 = _rotr(w[i - 2], 17) ^ _rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
        w[i] = w[i - 16] + s0 + w[i - 7] + s1
    a = h[0]; b = h[1]; c = h[2]; d = h[3]
    e = h[4]; f = h[5]; g = h[6]; hh = h[7]
    for i in range(64):
        s1 = _rotr(e, 6) ^ _rotr(e, 11) ^ _rotr(e, 25)
        t1 = hh + s1 + ((e & f) ^ ((~e) & g)) + _K[i] + w[i]
        s0 = _rotr(a, 2) ^ _rotr(a, 13) ^ _rotr(a, 22)
        t2 = s0 + ((a & b) ^ (a & c) ^ (b & c))
        hh = g; g = f; f = e; e = d + t1
        d = c; c = b; b = a; a = t1 + t2
    h[0] += a; h[1] += b; h[2] += c; h[3] += d
    h[4] += e; h[5] += f; h[6] += g; h[7] += hh


cdef void _digest(const uint8_t* data, int64_t n, uint8_t* out) noexcept nogil:
    cdef uint32_t h[8]
    cdef uint8_t tail[128]
    cdef int64_t full = n - n % 64
    cdef int64_t i
    cdef int rest, pad, k
    cdef uint64_t bits = (<uint64_t>n) * 8
    h[0] = 0x6a09e667; h[1] = 0xbb67ae85; h[2] = 0x3c6ef372; h[3] = 0xa54ff53a
    h[4] = 0x510e527f; h[5] = 0x9b05688c; h[6] = 0x1f83d9ab; h[7] = 0x5be0cd19
    i = 0
    while i < full:
        _block(h, data + i)
        i += 64
    rest = <int>(n - full)
    memset(tail, 0, 128)
    if rest:
        memcpy(tail, data + full, rest)
    tail[rest] = 0x80
    pad = 64 if rest < 56 else 128
    for k in range(8):
        tail[pad - 1 - k] = <uint8_t>(bits >> (8 * k))
    _block(h, tail)
    if pad == 128:
        _block(h, tail + 64)
    for k in range(8):
        out[4 * k] = <uint8_t>(h[k] >> 24)
        out[4 * k + 1] = <uint8_t>(h[k] >> 16)
        out[4 * k + 2] = <uint8_t>(h[k] >> 8)
        out[4 * k + 3] = <uint8_t>h[k]


def sha256_hex(const uint8_t[::1] data, const int64_t[::1] offsets, uint8_t[::1] out):
    """Write the upper-case hex SHA-256 of value ``i`` (``data[offsets[i]:offsets[i+1]]``)
    to ``out[64*i:64*i+64]``, for every value, without the GIL."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef Py_ssize_t i
    cdef int k
    cdef uint8_t digest[32]
    cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
    if n <= 0:
        return
    if out.shape[0] < 64 * n:
        raise ValueError("output buffer too small")
    with nogil:
        for i in range(n):
            _digest(base + offsets[i], offsets[i + 1] - offsets[i], digest)
            for k in range(32):
                out[64 * i + 2 * k] = _HEX[digest[k] >> 4]
                out[64 * i + 2 * k + 1] = _HEX[digest[k] & 15]


def sha256_digests(const uint8_t[::1] data, const int64_t[::1] offsets, uint8_t[::1] out):
    """Write the 32-byte SHA-256 digest of value ``i`` to ``out[32*i:32*i+32]``, for every
    value, without the GIL."""
    cdef Py_ssize_t n = offsets.shape[0] - 1
    cdef Py_ssize_t i
    cdef const uint8_t* base = &data[0] if data.shape[0] else NULL
    if n <= 0:
        return
    if out.shape[0] < 32 * n:
        raise ValueError("output buffer too small")
    with nogil:
        for i in range(n):
            _digest(base + offsets[i], offsets[i + 1] - offsets[i], &out[32 * i])
