# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""LZO1X decompression (read only), written from the published description of the format.

An LZO1X block is a sequence of instructions, each either a run of literal bytes or a copy
of earlier output ("match"), most matches followed by up to three literals whose count sits in
the instruction's low two bits. What a byte in 0..15 means depends on that count ("state")
left by the previous instruction:

==========  ==============================================================================
first byte  > 17: a run of ``byte - 17`` literals; any other value is a normal instruction
0..15       state 0: a run of ``3 + L`` literals (L = 0: extended length, see below);
            state 1..3: copy 2 bytes from distance ``1 + (b >> 2) + (next << 2)``;
            state 4: copy 3 bytes from distance ``2049 + (b >> 2) + (next << 2)``
16..31      copy ``2 + L`` (3 bits) from ``16384 + H * 16384 + (le16 >> 2)``; H = bit 3;
            a distance of exactly 16384 marks the end of the block
32..63      copy ``2 + L`` (5 bits) bytes from distance ``1 + (le16 >> 2)``
64..255     copy ``(b >> 5) + 1`` bytes from distance ``1 + ((b >> 2) & 7) + (next << 3)``
==========  ==============================================================================

An extended length (L = 0) continues with zero bytes worth 255 each and one non-zero byte
added to the field's maximum. The literal count of a match is the low two bits of the 16-bit
distance field for 16..63, of the instruction byte otherwise.

Every read and write is checked against the input length and the output capacity; the loop
runs without the GIL. Errors raise :class:`aorc.errors.CorruptFileError`.
"""

from libc.string cimport memcpy

from aorc.errors import CorruptFileError

cdef enum:
    _OK = 0
    _ERR_INPUT = 1       # an instruction or literal run reaches past the input
    _ERR_OUTPUT = 2      # the output would exceed its capacity
    _ERR_DISTANCE = 3    # a match reaches before the start of the output
    _ERR_TRAILING = 4    # bytes follow the end-of-block marker


cdef struct _State:
    Py_ssize_t ip        # next input byte
    Py_ssize_t op        # next output byte
    Py_ssize_t at        # start of the failing instruction (for messages)
    Py_ssize_t extra     # detail for messages (distance, length, ...)
    int error


cdef inline bint _refuse(_State* st, int error, Py_ssize_t extra) noexcept nogil:
    """Record why the instruction fails (``extra``: the length or distance at fault); False."""
    st.error = error
    st.extra = extra
    return False


cdef inline Py_ssize_t _extended(const unsigned char* src, Py_ssize_t n, _State* st,
                                 Py_ssize_t field_max, Py_ssize_t limit) noexcept nogil:
    """Read an extended length; -1 on error (st.error set). ``limit`` bounds the result."""
    cdef Py_ssize_t zeros = 0
    while st.ip < n and src[st.ip] == 0:
        zeros += 1
        st.ip += 1
        if zeros * 255 > limit:
            st.error = _ERR_OUTPUT
            return -1
    if st.ip >= n:
        st.error = _ERR_INPUT
        return -1
    st.ip += 1
    return field_max + zeros * 255 + src[st.ip - 1]


cdef inline bint _literals(const unsigned char* src, Py_ssize_t n, unsigned char* dst,
                           Py_ssize_t cap, _State* st, Py_ssize_t count) noexcept nogil:
    """Copy ``count`` literal bytes; False on error (st.error set)."""
    if count > n - st.ip:
        return _refuse(st, _ERR_INPUT, count)
    if count > cap - st.op:
        return _refuse(st, _ERR_OUTPUT, count)
    if count <= 16 and n - st.ip >= 16 and cap - st.op >= 16:
        # Short run with room to spare on both sides: one fixed-size copy is faster; the bytes
        # written past the run are inside the output and are overwritten later.
        memcpy(dst + st.op, src + st.ip, 16)
    else:
        memcpy(dst + st.op, src + st.ip, count)
    st.ip += count
    st.op += count
    return True


cdef inline bint _match(unsigned char* dst, Py_ssize_t cap, _State* st,
                        Py_ssize_t distance, Py_ssize_t length) noexcept nogil:
    """Copy ``length`` bytes from ``distance`` bytes back; False on error (st.error set)."""
    cdef Py_ssize_t i, start
    if distance > st.op:
        return _refuse(st, _ERR_DISTANCE, distance)
    if length > cap - st.op:
        return _refuse(st, _ERR_OUTPUT, length)
    start = st.op - distance
    if distance >= 8 and cap - st.op >= length + 8:
        # Eight bytes at a time; each read lies in output already written (distance >= 8).
        # Up to seven bytes past the match are written, inside the output, to be overwritten.
        i = 0
        while i < length:
            memcpy(dst + st.op + i, dst + start + i, 8)
            i += 8
    elif distance >= length:
        memcpy(dst + st.op, dst + start, length)
    else:
        # Overlapping copy: a repeated pattern, copied forward byte by byte.
        for i in range(length):
            dst[st.op + i] = dst[start + i]
    st.op += length
    return True


cdef int _decompress(const unsigned char* src, Py_ssize_t n, unsigned char* dst,
                     Py_ssize_t cap, _State* st) noexcept nogil:
    """Decode one LZO1X block; returns 0 or an error code (details in ``st``)."""
    cdef Py_ssize_t t, length, distance, word
    cdef int state = 0
    if n > 0 and src[0] > 17:
        st.at = 0
        st.ip = 1
        if not _literals(src, n, dst, cap, st, src[0] - 17):
            return st.error
        state = 4 if src[0] - 17 >= 4 else src[0] - 17
    while True:
        st.at = st.ip
        if st.ip >= n:
            st.error = _ERR_INPUT
            return st.error
        t = src[st.ip]
        st.ip += 1
        if t < 16 and state == 0:
            # A run of four or more literals.
            length = t + 3
            if t == 0:
                length = _extended(src, n, st, 15, cap) + 3
                if st.error:
                    return st.error
            if not _literals(src, n, dst, cap, st, length):
                return st.error
            state = 4
            continue
        if t < 16:
            # Short match; its length and base distance depend on the previous literal count.
            if st.ip >= n:
                st.error = _ERR_INPUT
                return st.error
            distance = (t >> 2) + (<Py_ssize_t>src[st.ip] << 2) + (2049 if state == 4 else 1)
            length = 3 if state == 4 else 2
            st.ip += 1
        elif t < 64:
            # Long-distance (16..31) or medium (32..63) match with a 16-bit distance field.
            length = t & (7 if t < 32 else 31)
            if length == 0:
                length = _extended(src, n, st, 7 if t < 32 else 31, cap)
                if st.error:
                    return st.error
            length += 2
            if n - st.ip < 2:
                st.error = _ERR_INPUT
                return st.error
            word = src[st.ip] | (<Py_ssize_t>src[st.ip + 1] << 8)
            st.ip += 2
            if t < 32:
                distance = ((t & 8) << 11) + (word >> 2)
                if distance == 0:
                    # End of block: nothing may follow.
                    if st.ip != n:
                        st.error = _ERR_TRAILING
                        st.extra = n - st.ip
                        return st.error
                    return _OK
                distance += 16384
            else:
                distance = (word >> 2) + 1
            t = word
        else:
            # Near match of 3 to 8 bytes.
            if st.ip >= n:
                st.error = _ERR_INPUT
                return st.error
            distance = ((t >> 2) & 7) + (<Py_ssize_t>src[st.ip] << 3) + 1
            length = (t >> 5) + 1
            st.ip += 1
        if not _match(dst, cap, st, distance, length):
            return st.error
        state = t & 3
        if state and not _literals(src, n, dst, cap, st, state):
            return st.error


cdef _raise(_State st, Py_ssize_t n, Py_ssize_t cap):
    if st.error == _ERR_INPUT:
        if st.at >= n:
            raise CorruptFileError(f"LZO1X data of {n} bytes ends without an end-of-block marker")
        raise CorruptFileError(
            f"LZO1X data of {n} bytes is truncated in the instruction at input offset {st.at}"
        )
    if st.error == _ERR_OUTPUT:
        raise CorruptFileError(
            f"LZO1X data expands beyond {cap} bytes (instruction at input offset {st.at}, "
            f"output offset {st.op})"
        )
    if st.error == _ERR_DISTANCE:
        raise CorruptFileError(
            f"LZO1X match at input offset {st.at} refers {st.extra} bytes back, but only "
            f"{st.op} bytes have been written"
        )
    raise CorruptFileError(
        f"LZO1X data has {st.extra} bytes after its end-of-block marker at input offset {st.at}"
    )


def decompress_into(const unsigned char[::1] src, unsigned char[::1] dst) -> int:
    """Decompress the LZO1X block ``src`` into ``dst``; return the number of bytes written.

    Args:
        src: one complete LZO1X block (ending with its end-of-block marker).
        dst: writable output buffer; its length is the capacity.

    Returns:
        The decompressed size. Bytes of ``dst`` past it may have been overwritten.

    Raises:
        CorruptFileError: the block is malformed, truncated, or larger than ``dst``.
    """
    cdef _State st
    cdef Py_ssize_t n = src.shape[0]
    cdef Py_ssize_t cap = dst.shape[0]
    cdef const unsigned char* sp = &src[0] if n > 0 else NULL
    cdef unsigned char* dp = &dst[0] if cap > 0 else NULL
    cdef int rc
    st.ip = 0
    st.op = 0
    st.at = 0
    st.extra = 0
    st.error = _OK
    with nogil:
        rc = _decompress(sp, n, dp, cap, &st)
    if rc != _OK:
        _raise(st, n, cap)
    return st.op


def decompress(src, max_size: int) -> bytearray:
    """Decompress the LZO1X block ``src``, which must expand to at most ``max_size`` bytes.

    Raises:
        CorruptFileError: the block is malformed, truncated, or larger than ``max_size``.
    """
    out = bytearray(max_size)
    size = decompress_into(src, out)
    del out[size:]
    return out
