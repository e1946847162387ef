# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The hot loop of the ``avro`` format: Confluent-framed Avro values of one flat record
schema decoded straight into Arrow column buffers, with the GIL released.

Each field is a kind (see the constants) with how a union places its null (``-1``: not a
union; ``0``/``1``: the null branch's index of a two-branch union) and a size (``FIXED``
bytes, ``ENUM`` symbols). :func:`decode_columns` decodes every value or none: it stops at
the first value that is not framed with the expected header, is cut short, or holds anything
the per-record path (fastavro) might read differently -- a boolean byte other than 0 or 1,
an ``int`` outside 32 bits, a varint of more than 10 bytes, a negative length, a union
branch or enum index out of range, a date or timestamp outside 1900..9000 -- and returns its
index; the caller then decodes the values one by one. Bytes after a value's last field are
ignored, as fastavro ignores them. Strings are not checked for UTF-8 here: a column is
flagged when it holds a byte >= 0x80, for the caller to validate.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_CheckExact
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

import numpy as np

cdef enum:
    K_NULL = 0
    K_BOOLEAN = 1
    K_INT = 2
    K_LONG = 3
    K_FLOAT = 4
    K_DOUBLE = 5
    K_STRING = 6
    K_BYTES = 7
    K_FIXED = 8
    K_ENUM = 9
    K_DATE = 10
    K_TIMESTAMP_MILLIS = 11
    K_TIMESTAMP_MICROS = 12

#: Field kinds.
KIND_NULL = K_NULL
KIND_BOOLEAN = K_BOOLEAN
KIND_INT = K_INT
KIND_LONG = K_LONG
KIND_FLOAT = K_FLOAT
KIND_DOUBLE = K_DOUBLE
KIND_STRING = K_STRING
KIND_BYTES = K_BYTES
KIND_FIXED = K_FIXED
KIND_ENUM = K_ENUM
KIND_DATE = K_DATE
KIND_TIMESTAMP_MILLIS = K_TIMESTAMP_MILLIS
KIND_TIMESTAMP_MICROS = K_TIMESTAMP_MICROS

# 1900-01-01 and 9000-01-01 since the epoch, in days, ms and us
cdef int64_t _DAY_LO = -25567
cdef int64_t _DAY_HI = 2556118
cdef int64_t _MS_LO = _DAY_LO * 86400000
cdef int64_t _MS_HI = _DAY_HI * 86400000
cdef int64_t _US_LO = _MS_LO * 1000
cdef int64_t _US_HI = _MS_HI * 1000


cdef struct Field:
    int kind
    int null_index          # -1, 0 or 1
    int64_t size            # FIXED bytes, ENUM symbols
    uint8_t* valid          # 1 per present value (unions only)
    uint8_t* values         # fixed-width values (BOOLEAN; INT, ENUM, DATE: 1, 4 bytes)
    int32_t* offsets        # STRING, BYTES, FIXED: n + 1
    uint8_t* data           # their bytes
    int64_t used            # bytes of data used
    int high                # a data byte >= 0x80 was seen


cdef inline int _varint(const uint8_t* p, Py_ssize_t n, Py_ssize_t* pos,
                        int64_t* out) noexcept nogil:
    """A zigzag varint at ``p[pos]``; 0 when cut short or longer than 10 bytes."""
    cdef uint64_t acc = 0, b
    cdef int shift = 0
    while True:
        if pos[0] >= n or shift > 63:
            return 0
        b = p[pos[0]]
        pos[0] += 1
        acc |= (b & 0x7F) << shift
        if not (b & 0x80):
            break
        shift += 7
    out[0] = <int64_t>(acc >> 1) ^ -(<int64_t>(acc & 1))
    return 1


cdef int _value(Field* fields, int nfields, const uint8_t* p, Py_ssize_t n,
                Py_ssize_t row) noexcept nogil:
    """Decode one value (header skipped) into row ``row``; 0 when it must go the slow way."""
    cdef Py_ssize_t pos = 0
    cdef int i
    cdef int64_t v, length, j
    cdef Field* f
    cdef uint8_t b
    cdef Py_ssize_t width
    for i in range(nfields):
        f = &fields[i]
        if f.null_index >= 0:
            if not _varint(p, n, &pos, &v) or v < 0 or v > 1:
                return 0
            if v == f.null_index:
                f.valid[row] = 0
                if f.offsets != NULL:
                    f.offsets[row + 1] = f.offsets[row]
                continue
            f.valid[row] = 1
        if f.kind == K_NULL:
            continue
        elif f.kind == K_BOOLEAN:
            if pos >= n:
                return 0
            b = p[pos]
            pos += 1
            if b > 1:
                return 0
            f.values[row] = b
        elif f.kind == K_INT or f.kind == K_ENUM or f.kind == K_DATE:
            if not _varint(p, n, &pos, &v) or v < -2147483648 or v > 2147483647:
                return 0
            if f.kind == K_ENUM and (v < 0 or v >= f.size):
                return 0
            if f.kind == K_DATE and (v < _DAY_LO or v > _DAY_HI):
                return 0
            (<int32_t*>f.values)[row] = <int32_t>v
        elif f.kind == K_LONG or f.kind == K_TIMESTAMP_MILLIS or f.kind == K_TIMESTAMP_MICROS:
            if not _varint(p, n, &pos, &v):
                return 0
            if f.kind == K_TIMESTAMP_MILLIS and (v < _MS_LO or v > _MS_HI):
                return 0
            if f.kind == K_TIMESTAMP_MICROS and (v < _US_LO or v > _US_HI):
                return 0
            (<int64_t*>f.values)[row] = v
        elif f.kind == K_FLOAT or f.kind == K_DOUBLE:  # IEEE bits, copied as Avro stores them
            width = 4 if f.kind == K_FLOAT else 8
            if pos + width > n:
                return 0
            memcpy(<char*>f.values + row * width, p + pos, width)
            pos += width
        else:  # STRING, BYTES, FIXED
            if f.kind == K_FIXED:
                length = f.size
            elif not _varint(p, n, &pos, &length) or length < 0:
                return 0
            if length > n - pos:
                return 0
            memcpy(f.data + f.used, p + pos, <size_t>length)
            if f.kind == K_STRING and not f.high:
                for j in range(length):
                    f.high |= p[pos + j] >= 0x80
            pos += length
            f.used += length
            f.offsets[row + 1] = <int32_t>f.used
    return 1


def decode_columns(list values, bytes header, list kinds, list null_indexes,
                   list sizes):
    """The columns of ``values`` (``header`` + a record of the fields), or the index of the
    first value that must be decoded the slow way.

    Returns:
        ``(failed, columns)``: ``failed`` is -1 and ``columns`` one tuple per field,
        ``(valid, values, offsets, data, high)`` of numpy arrays (``valid`` None outside
        unions; ``values`` None for strings, bytes and fixed; ``offsets``/``data`` None
        otherwise); or ``failed`` the index and ``columns`` None.
    """
    cdef Py_ssize_t n = PyList_GET_SIZE(values), i, total = 0, hlen = len(header)
    cdef int nfields = len(kinds), k, ok = 1
    cdef const uint8_t** ptrs = <const uint8_t**>malloc(max(n, 1) * sizeof(uint8_t*))
    cdef Py_ssize_t* lens = <Py_ssize_t*>malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Field* fields = <Field*>malloc(max(nfields, 1) * sizeof(Field))
    cdef const uint8_t* h = <const uint8_t*>PyBytes_AS_STRING(header)
    cdef object item
    cdef Py_ssize_t failed = -1
    try:
        for i in range(n):
            item = <object>PyList_GET_ITEM(values, i)
            if not PyBytes_CheckExact(item) or PyBytes_GET_SIZE(item) < hlen:
                return i, None
            ptrs[i] = <const uint8_t*>PyBytes_AS_STRING(item)
            lens[i] = PyBytes_GET_SIZE(item)
            total += lens[i] - hlen
        if total > 2147483647:
            return 0, None
        arrays = []
        for k in range(nfields):
            kind, null_index, size = kinds[k], null_indexes[k], sizes[k]
            valid = np.ones(n, np.uint8) if null_index >= 0 else None
            vals = offsets = data = None
            if kind in (K_STRING, K_BYTES, K_FIXED):
                offsets = np.zeros(n + 1, np.int32)
                data = np.empty(max(total, 1), np.uint8)
            elif kind == K_BOOLEAN:
                vals = np.zeros(n, np.uint8)
            elif kind in (K_INT, K_ENUM, K_DATE):
                vals = np.zeros(n, np.int32)
            elif kind in (K_LONG, K_TIMESTAMP_MILLIS, K_TIMESTAMP_MICROS):
                vals = np.zeros(n, np.int64)
            elif kind == K_FLOAT:
                vals = np.zeros(n, np.float32)
            elif kind == K_DOUBLE:
                vals = np.zeros(n, np.float64)
            elif kind != K_NULL:
                raise ValueError(f"unknown Avro field kind {kind}")
            arrays.append([valid, vals, offsets, data])
            fields[k].kind = kind
            fields[k].null_index = null_index
            fields[k].size = size
            fields[k].valid = _pointer(valid)
            fields[k].values = _pointer(vals)
            fields[k].offsets = <int32_t*>_pointer(offsets)
            fields[k].data = _pointer(data)
            fields[k].used = 0
            fields[k].high = 0
        with nogil:
            for i in range(n):
                if lens[i] < hlen:
                    ok = 0
                for k in range(hlen):
                    if ptrs[i][k] != h[k]:
                        ok = 0
                if ok:
                    ok = _value(fields, nfields, ptrs[i] + hlen, lens[i] - hlen, i)
                if not ok:
                    failed = i
                    break
        if failed >= 0:
            return failed, None
        columns = []
        for k in range(nfields):
            valid, vals, offsets, data = arrays[k]
            if data is not None:
                data = data[:fields[k].used].copy()  # not the whole capacity
            columns.append((valid, vals, offsets, data, bool(fields[k].high)))
        return -1, columns
    finally:
        free(ptrs)
        free(lens)
        free(fields)


cdef uint8_t* _pointer(object array):
    cdef uint8_t[::1] view
    if array is None:
        return NULL
    view = array.view(np.uint8)
    if view.shape[0] == 0:
        return NULL
    return &view[0]
