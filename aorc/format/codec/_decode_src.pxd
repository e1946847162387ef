"""The input cursor shared by the decoding kernels of ``_decode.pyx``: where a kernel
reads, where the run it decodes started (for messages and for resuming) and why it failed.

Kernels set ``Src.err`` to an ``E_*`` code and return -1 (:func:`fail`); the Python wrappers
turn that into a CorruptFileError naming the stream kind and byte position.
"""

from libc.stdint cimport int64_t, uint8_t, uint64_t


cdef enum:
    E_EOF = 1
    E_VARINT_LONG = 2
    E_VARINT128_WIDE = 3
    E_PATCH_EMPTY = 4
    E_PATCH_WIDTH = 5
    E_PATCH_FILLER = 6
    E_DELTA_SHORT = 7


cdef struct Src:
    const uint8_t* p        # the whole buffer
    Py_ssize_t pos          # next byte to read
    Py_ssize_t end          # buffer length
    Py_ssize_t run_start    # where the run (or varint) being decoded starts, for messages
    int64_t done            # values decoded (or skipped) before that run, for messages
    int err                 # an E_* code once a kernel failed


cdef inline int fail(Src* s, int code) noexcept nogil:
    s.err = code
    return -1


cdef inline int run_header(Src* s, int64_t done) noexcept nogil:
    """Start the run at ``s.pos`` (``done`` values decoded before it; both kept for errors
    and for resuming): its first byte, or -1 at the end of the data (``s.err`` set)."""
    s.run_start = s.pos
    s.done = done
    if s.pos >= s.end:
        return fail(s, E_EOF)
    return s.p[s.pos]


cdef inline bint lacks(Src* s, Py_ssize_t nbytes) noexcept nogil:
    """True when fewer than ``nbytes`` bytes remain from ``s.pos``."""
    return nbytes > s.end - s.pos


cdef inline int64_t run_lo(int64_t done, int64_t skip) noexcept nogil:
    """First index inside a run (which starts at value ``done``) that is not skipped."""
    return skip - done if skip > done else 0


cdef inline int64_t run_hi(int64_t done, int64_t length, int64_t total) noexcept nogil:
    """One past the last index inside a run that is still wanted."""
    return total - done if total - done < length else length


cdef inline uint64_t unzigzag(uint64_t v) noexcept nogil:
    return (v >> 1) ^ (<uint64_t>0 - (v & 1))
