"""Output buffer shared by aorc's encoding kernels (``_encode``, ``_encode_v2``).

Encoders ``reserve`` room for a whole run before writing it with the unchecked ``put*``
helpers; a failed allocation sets ``failed``, after which nothing more is written and
``buf_to_bytes`` raises MemoryError.
"""

from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc, realloc


cdef struct Buf:
    uint8_t* data
    Py_ssize_t size
    Py_ssize_t cap
    bint failed


cdef inline bint buf_init(Buf* b, Py_ssize_t cap) noexcept nogil:
    if cap < 256:
        cap = 256
    b.data = <uint8_t*>malloc(cap)
    b.size = 0
    b.cap = cap if b.data != NULL else 0
    b.failed = b.data == NULL
    return not b.failed


cdef inline bint reserve(Buf* b, Py_ssize_t extra) noexcept nogil:
    """Make room for ``extra`` more bytes; False (and ``failed`` set) when out of memory."""
    cdef Py_ssize_t need = b.size + extra
    cdef Py_ssize_t cap
    cdef uint8_t* p
    if need <= b.cap:
        return True
    if b.failed:
        return False
    cap = b.cap * 2
    if cap < need:
        cap = need
    p = <uint8_t*>realloc(b.data, cap)
    if p == NULL:
        b.failed = True
        return False
    b.data = p
    b.cap = cap
    return True


cdef inline object buf_to_bytes(Buf* b):
    """The buffer's content as bytes; frees the buffer."""
    try:
        if b.failed:
            raise MemoryError("out of memory while encoding an ORC stream")
        return PyBytes_FromStringAndSize(<char*>b.data, b.size)
    finally:
        free(b.data)
        b.data = NULL


cdef inline void put(Buf* b, uint8_t x) noexcept nogil:
    b.data[b.size] = x
    b.size += 1


cdef inline void put_vulong(Buf* b, uint64_t v) noexcept nogil:
    while v >= 0x80:
        b.data[b.size] = <uint8_t>(v | 0x80)
        b.size += 1
        v >>= 7
    b.data[b.size] = <uint8_t>v
    b.size += 1


cdef inline uint64_t zigzag(int64_t v) noexcept nogil:
    return (<uint64_t>v << 1) ^ <uint64_t>(v >> 63)


cdef inline void put_vslong(Buf* b, int64_t v) noexcept nogil:
    put_vulong(b, zigzag(v))


cdef inline void put_be(Buf* b, uint64_t v, int nbytes) noexcept nogil:
    cdef int i
    for i in range(nbytes - 1, -1, -1):
        b.data[b.size] = <uint8_t>(v >> (8 * i))
        b.size += 1


cdef inline int64_t wrap_sub(int64_t a, int64_t b) noexcept nogil:
    """``a - b`` with 64-bit wrap-around, as Java computes it."""
    return <int64_t>(<uint64_t>a - <uint64_t>b)


cdef inline const int64_t* i64_ptr(const int64_t[::1] a) noexcept nogil:
    return &a[0] if a.shape[0] > 0 else NULL


cdef inline int64_t* i64_out(int64_t[:, ::1] a) noexcept nogil:
    return &a[0, 0] if a.shape[0] > 0 else NULL

