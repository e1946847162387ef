# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The hot loop of ``aorc cat --format jsonl``: rows of Arrow columns rendered as JSON lines
into one byte buffer, with the GIL released.

Each column comes as a kind and its buffers (see :func:`render_lines`); the text is what
``json.dumps`` of the row dict writes (``", "`` and ``": "`` separators, ``ensure_ascii``):
strings escaped as ``json.dumps`` escapes them (``\\"``, ``\\\\``, ``\\n``, ``\\r``, ``\\t``,
``\\b``, ``\\f``, other control characters, DEL and every non-ASCII character as ``\\uXXXX``
in lowercase hex, characters past U+FFFF as a surrogate pair), timestamps as ``isoformat``
writes them, integers and booleans as JSON does, and texts the caller made (floats, dates,
decimals, the values of other types) copied.
"""

from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from libc.stdlib cimport free, malloc

import pyarrow as pa

#: Column kinds.
TEXT = 0        # JSON text as it is (offsets, data)
FLOAT_TEXT = 1  # a float's shortest text; ".0" added when it has no '.', 'e' or 'E'
STRING = 2      # text to quote and escape
INT = 3         # int64 values
BOOL = 4        # uint8 values
TIMESTAMP = 5   # int64 ticks, ticks per second, whether to add "+00:00"
QUOTED = 6      # text quoted as it is (no character needs escaping)
DECIMAL = 7     # decimal128 values (little-endian low, high words), scale 0..6

cdef extern from *:
    """
    typedef unsigned __int128 aorc_u128;
    """
    ctypedef unsigned long long aorc_u128  # 128 bits in the C code

cdef const char* _HEX = b"0123456789abcdef"


cdef struct Column:
    int kind
    const uint8_t* valid     # 1 per valid row, or NULL: every row is valid
    const int64_t* offsets   # n + 1 absolute offsets into data
    const uint8_t* data
    const int64_t* ints      # INT values, TIMESTAMP ticks
    const uint8_t* flags     # BOOL values
    const uint64_t* words    # DECIMAL values
    int clean                # STRING: no byte needs escaping
    int64_t per_second
    int utc
    const char* prefix
    Py_ssize_t prefix_len


cdef inline Py_ssize_t _string_bound(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Bytes the escaped text of ``p[:n]`` takes at most (without the quotes)."""
    cdef Py_ssize_t i, size = 0
    cdef uint8_t b, bad = 0
    for i in range(n):  # the usual case first: nothing to escape (a loop that vectorises)
        b = p[i]
        bad |= (b < 0x20) | (b == 0x22) | (b == 0x5C) | (b >= 0x7F)
    if not bad:
        return n
    for i in range(n):
        b = p[i]
        if b < 0x20 or b == 0x7F:
            size += 6
        elif b == 0x22 or b == 0x5C:
            size += 2
        elif b < 0x80:
            size += 1
        elif b >= 0xF0:
            size += 12
        elif b >= 0xC0:
            size += 6
    return size


cdef inline Py_ssize_t _unicode_escape(uint8_t* out, uint32_t c) noexcept nogil:
    out[0] = 92  # backslash
    out[1] = 117  # u
    out[2] = _HEX[(c >> 12) & 15]
    out[3] = _HEX[(c >> 8) & 15]
    out[4] = _HEX[(c >> 4) & 15]
    out[5] = _HEX[c & 15]
    return 6


cdef Py_ssize_t _escape(uint8_t* out, const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """Write ``p[:n]`` (UTF-8) escaped; returns the bytes written, or -1 for bad UTF-8."""
    cdef Py_ssize_t i = 0, w = 0
    cdef uint8_t b
    cdef uint32_t c
    while i < n:
        b = p[i]
        if 0x20 <= b < 0x7F and b != 0x22 and b != 0x5C:
            out[w] = b
            w += 1
            i += 1
            continue
        if b < 0x80:
            out[w] = 92
            if b == 0x22 or b == 0x5C:
                out[w + 1] = b
            elif b == 0x0A:
                out[w + 1] = 110  # n
            elif b == 0x0D:
                out[w + 1] = 114  # r
            elif b == 0x09:
                out[w + 1] = 116  # t
            elif b == 0x08:
                out[w + 1] = 98  # b
            elif b == 0x0C:
                out[w + 1] = 102  # f
            else:
                w += _unicode_escape(out + w, b)
                i += 1
                continue
            w += 2
            i += 1
            continue
        if b >= 0xF0 and b < 0xF5 and i + 3 < n \
                and (p[i + 1] & 0xC0) == 0x80 and (p[i + 2] & 0xC0) == 0x80 \
                and (p[i + 3] & 0xC0) == 0x80:
            c = ((b & 0x07) << 18) | ((p[i + 1] & 0x3F) << 12) | ((p[i + 2] & 0x3F) << 6) \
                | (p[i + 3] & 0x3F)
            if c < 0x10000 or c > 0x10FFFF:
                return -1
            c -= 0x10000
            w += _unicode_escape(out + w, 0xD800 | (c >> 10))
            w += _unicode_escape(out + w, 0xDC00 | (c & 0x3FF))
            i += 4
        elif b >= 0xE0 and b < 0xF0 and i + 2 < n and (p[i + 1] & 0xC0) == 0x80 \
                and (p[i + 2] & 0xC0) == 0x80:
            c = ((b & 0x0F) << 12) | ((p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F)
            if c < 0x800 or (0xD800 <= c and c < 0xE000):
                return -1
            w += _unicode_escape(out + w, c)
            i += 3
        elif b >= 0xC2 and b < 0xE0 and i + 1 < n and (p[i + 1] & 0xC0) == 0x80:
            c = ((b & 0x1F) << 6) | (p[i + 1] & 0x3F)
            w += _unicode_escape(out + w, c)
            i += 2
        else:
            return -1
    return w


cdef inline Py_ssize_t _int(uint8_t* out, int64_t v) noexcept nogil:
    cdef uint8_t tmp[20]
    cdef Py_ssize_t k = 0, w = 0
    cdef unsigned long long u
    if v < 0:
        out[0] = 45  # '-'
        w = 1
        u = <unsigned long long>(-(v + 1)) + 1
    else:
        u = <unsigned long long>v
    while True:
        tmp[k] = 48 + <uint8_t>(u % 10)
        k += 1
        u //= 10
        if u == 0:
            break
    while k:
        k -= 1
        out[w] = tmp[k]
        w += 1
    return w


cdef Py_ssize_t _decimal(uint8_t* out, uint64_t lo, uint64_t hi, int scale) noexcept nogil:
    """``"[-]digits[.fraction]"`` of a decimal128 (plain notation, as ``str(Decimal)`` writes
    it for scales up to 6)."""
    cdef uint8_t tmp[48]
    cdef Py_ssize_t k = 0, w = 0, j
    cdef bint negative = (hi >> 63) != 0
    cdef aorc_u128 v128
    cdef uint64_t v64
    out[0] = 34
    w = 1
    if negative:  # two's complement negation of the 128-bit value
        lo = ~lo + 1
        hi = ~hi + (1 if lo == 0 else 0)
        out[w] = 45
        w += 1
    if hi == 0:
        v64 = lo
        while True:
            tmp[k] = 48 + <uint8_t>(v64 % 10)
            k += 1
            v64 //= 10
            if v64 == 0:
                break
    else:
        v128 = ((<aorc_u128>hi) << 64) | lo
        while True:
            tmp[k] = 48 + <uint8_t>(v128 % 10)
            k += 1
            v128 //= 10
            if v128 == 0:
                break
    while k <= scale:  # at least one digit before the point
        tmp[k] = 48
        k += 1
    for j in range(k - 1, -1, -1):
        if j == scale - 1:
            out[w] = 46
            w += 1
        out[w] = tmp[j]
        w += 1
    out[w] = 34
    return w + 1


cdef const char* _PAIRS = (b"00010203040506070809101112131415161718192021222324252627282930313233"
                          b"34353637383940414243444546474849505152535455565758596061626364656667"
                          b"6869707172737475767778798081828384858687888990919293949596979899")


cdef inline void _digits(uint8_t* out, int64_t v, int width) noexcept nogil:
    """``v`` (not negative) as ``width`` zero-padded digits, two at a time."""
    cdef int64_t pair
    while width >= 2:
        pair = (v % 100) * 2
        out[width - 2] = _PAIRS[pair]
        out[width - 1] = _PAIRS[pair + 1]
        v //= 100
        width -= 2
    if width:
        out[0] = 48 + <uint8_t>(v % 10)


cdef inline int64_t _floordiv(int64_t a, const int64_t b) noexcept nogil:
    cdef int64_t q = a // b
    if (a % b != 0) and ((a < 0) != (b < 0)):
        q -= 1
    return q


cdef Py_ssize_t _timestamp(uint8_t* out, int64_t ticks, int64_t per_second,
                           int utc) noexcept nogil:
    """``"YYYY-MM-DDTHH:MM:SS[.ffffff|.fffffffff][+00:00]"``; -1 when the year is outside
    1..9999 (H. Hinnant's days-to-civil algorithm, proleptic Gregorian)."""
    cdef int64_t seconds
    if per_second == 1000000000:  # constant divisors: multiplications
        seconds = _floordiv(ticks, 1000000000)
    elif per_second == 1000000:
        seconds = _floordiv(ticks, 1000000)
    elif per_second == 1000:
        seconds = _floordiv(ticks, 1000)
    else:
        seconds = ticks
    cdef int64_t nanos = (ticks - seconds * per_second) * (1000000000 // per_second)
    cdef int64_t days = _floordiv(seconds, 86400)
    cdef int64_t secs = seconds - days * 86400
    cdef int64_t z = days + 719468
    cdef int64_t era = _floordiv(z, 146097)
    cdef int64_t doe = z - era * 146097
    cdef int64_t yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    cdef int64_t doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    cdef int64_t mp = (5 * doy + 2) // 153
    cdef int64_t day = doy - (153 * mp + 2) // 5 + 1
    cdef int64_t month = mp + 3 if mp < 10 else mp - 9
    cdef int64_t year = yoe + era * 400 + (1 if month <= 2 else 0)
    cdef Py_ssize_t w
    if year < 1 or year > 9999:
        return -1
    out[0] = 34
    _digits(out + 1, year, 4)
    out[5] = 45
    _digits(out + 6, month, 2)
    out[8] = 45
    _digits(out + 9, day, 2)
    out[11] = 84  # T
    _digits(out + 12, secs // 3600, 2)
    out[14] = 58
    _digits(out + 15, (secs // 60) % 60, 2)
    out[17] = 58
    _digits(out + 18, secs % 60, 2)
    w = 20
    if nanos:
        out[20] = 46
        if nanos % 1000:
            _digits(out + 21, nanos, 9)
            w = 30
        else:
            _digits(out + 21, nanos // 1000, 6)
            w = 27
    if utc:
        out[w] = 43
        out[w + 1] = 48
        out[w + 2] = 48
        out[w + 3] = 58
        out[w + 4] = 48
        out[w + 5] = 48
        w += 6
    out[w] = 34
    return w + 1


cdef Py_ssize_t _bound(Column* cols, Py_ssize_t ncols, Py_ssize_t n) noexcept nogil:
    """Bytes the lines take at most (and whether each string column is clean)."""
    cdef Py_ssize_t size = 2 * n, j, length, bound
    cdef Column* c
    for j in range(ncols):
        c = &cols[j]
        size += c.prefix_len * n
        if c.kind == 0 or c.kind == 1 or c.kind == 6:
            size += c.offsets[n] - c.offsets[0] + 4 * n
        elif c.kind == 2:
            length = c.offsets[n] - c.offsets[0]
            bound = _string_bound(c.data + c.offsets[0], length)
            c.clean = bound == length
            size += bound + 4 * n
        elif c.kind == 3:
            size += 20 * n
        elif c.kind == 4:
            size += 5 * n
        elif c.kind == 7:
            size += 44 * n
        else:
            size += 38 * n
    return size


cdef Py_ssize_t _render(Column* cols, Py_ssize_t ncols, Py_ssize_t n,
                        uint8_t* out) noexcept nogil:
    """Write the lines; returns the bytes written, or -1 (bad UTF-8), -2 (a year out of
    range)."""
    cdef Py_ssize_t w = 0, i, j, k, length, got
    cdef Column* c
    cdef const uint8_t* p
    cdef bint plain
    for i in range(n):
        for j in range(ncols):
            c = &cols[j]
            memcpy(out + w, c.prefix, c.prefix_len)
            w += c.prefix_len
            if c.valid != NULL and not c.valid[i]:
                out[w] = 110
                out[w + 1] = 117
                out[w + 2] = 108
                out[w + 3] = 108
                w += 4
                continue
            if c.kind == 3:
                w += _int(out + w, c.ints[i])
            elif c.kind == 4:
                if c.flags[i]:
                    out[w] = 116; out[w + 1] = 114; out[w + 2] = 117; out[w + 3] = 101
                    w += 4
                else:
                    out[w] = 102; out[w + 1] = 97; out[w + 2] = 108; out[w + 3] = 115
                    out[w + 4] = 101
                    w += 5
            elif c.kind == 7:
                w += _decimal(out + w, c.words[2 * i], c.words[2 * i + 1], c.per_second)
            elif c.kind == 5:
                got = _timestamp(out + w, c.ints[i], c.per_second, c.utc)
                if got < 0:
                    return -2
                w += got
            else:
                p = c.data + c.offsets[i]
                length = c.offsets[i + 1] - c.offsets[i]
                if c.kind == 2 and c.clean:
                    out[w] = 34
                    memcpy(out + w + 1, p, length)
                    out[w + 1 + length] = 34
                    w += length + 2
                    continue
                if c.kind == 2:
                    out[w] = 34
                    got = _escape(out + w + 1, p, length)
                    if got < 0:
                        return -1
                    out[w + 1 + got] = 34
                    w += got + 2
                    continue
                if c.kind == 6:
                    out[w] = 34
                    w += 1
                plain = c.kind == 1
                for k in range(length):
                    out[w + k] = p[k]
                    if p[k] == 46 or p[k] == 101 or p[k] == 69:
                        plain = False
                w += length
                if plain:
                    out[w] = 46
                    out[w + 1] = 48
                    w += 2
                elif c.kind == 6:
                    out[w] = 34
                    w += 1
        out[w] = 125  # }
        out[w + 1] = 10
        w += 2
    return w


def render_lines(list columns, Py_ssize_t n):
    """The ``n`` rows of ``columns`` as JSON lines (a memoryview of an Arrow buffer).

    Each column is a tuple ``(kind, prefix, valid, offsets, data, values, per_second, utc)``:
    ``prefix`` (bytes) is written before the value (``{"key": `` for the first column,
    ``, "key": `` for the others); ``valid`` a uint8 array of 1 per valid row, or ``None``;
    ``offsets`` (int64, n + 1 absolute offsets) and ``data`` (uint8) the text of ``TEXT``,
    ``FLOAT_TEXT``, ``STRING`` and ``QUOTED`` columns; ``values`` the int64 values of ``INT``
    and ``TIMESTAMP`` columns, or the uint8 values of ``BOOL`` ones.

    Raises:
        ValueError: a string is not valid UTF-8, or a timestamp's year is outside 1..9999.
    """
    cdef Py_ssize_t ncols = len(columns), j, size, written
    cdef Column* cols = <Column*>malloc(max(ncols, 1) * sizeof(Column))
    cdef const uint8_t[::1] u8
    cdef const int64_t[::1] i64
    cdef const uint64_t[::1] u64
    cdef char[::1] target
    if cols == NULL:
        raise MemoryError()
    keep = []
    try:
        for j in range(ncols):
            kind, prefix, valid, offsets, data, values, per_second, utc = columns[j]
            keep.append(columns[j])
            cols[j].kind = kind
            cols[j].prefix = prefix
            cols[j].prefix_len = len(prefix)
            cols[j].valid = NULL
            cols[j].offsets = NULL
            cols[j].data = NULL
            cols[j].ints = NULL
            cols[j].flags = NULL
            cols[j].words = NULL
            cols[j].clean = 0
            cols[j].per_second = per_second
            cols[j].utc = utc
            if valid is not None:
                if len(valid) < n:
                    raise ValueError("validity shorter than the rows")
                u8 = valid
                cols[j].valid = &u8[0] if n else NULL
            if kind in (TEXT, FLOAT_TEXT, STRING, QUOTED):
                if len(offsets) != n + 1:
                    raise ValueError("offsets must be n + 1 long")
                i64 = offsets
                cols[j].offsets = &i64[0]
                u8 = data
                if len(data) < offsets[n] or (n and offsets[0] < 0):
                    raise ValueError("offsets past the data")
                cols[j].data = &u8[0] if len(data) else NULL
            elif kind in (INT, TIMESTAMP):
                if len(values) < n:
                    raise ValueError("values shorter than the rows")
                i64 = values
                cols[j].ints = &i64[0] if n else NULL
                if kind == TIMESTAMP and per_second not in (1, 1000, 1000000, 1000000000):
                    raise ValueError("per_second must be 1, 1e3, 1e6 or 1e9")
            elif kind == DECIMAL:
                if len(values) < 2 * n:
                    raise ValueError("values shorter than the rows")
                if not 0 <= per_second <= 6:
                    raise ValueError("a decimal's scale must be 0..6")
                u64 = values
                cols[j].words = &u64[0] if n else NULL
            elif kind == BOOL:
                if len(values) < n:
                    raise ValueError("values shorter than the rows")
                u8 = values
                cols[j].flags = &u8[0] if n else NULL
            else:
                raise ValueError(f"unknown column kind {kind}")
        with nogil:
            size = _bound(cols, ncols, n)
        out = pa.allocate_buffer(max(size, 1))  # Arrow's pool: its pages are reused
        target = out
        with nogil:
            written = _render(cols, ncols, n, <uint8_t*>&target[0])
    finally:
        free(cols)
    if written == -1:
        raise ValueError("a string is not valid UTF-8")
    if written == -2:
        raise ValueError("a timestamp's year is outside 1..9999")
    return memoryview(out)[:written]
