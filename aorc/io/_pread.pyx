# cython: language_level=3, boundscheck=False, wraparound=False
"""Reading a long range of a local file into one ``bytes`` object from several threads.

:func:`new_bytes` makes an uninitialised ``bytes`` object of the range's length and each
thread fills its own slice of it with :func:`pread_into` (``pread`` without the GIL), as
``os.pread`` fills the object it returns; the object is handed to other code only once every
slice is filled. No copy is made, unlike joining the ``bytes`` of several ``os.pread`` calls.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from libc.errno cimport EINTR, errno
from posix.unistd cimport pread


def new_bytes(Py_ssize_t length):
    """An uninitialised ``bytes`` object of ``length`` bytes, to be filled by
    :func:`pread_into` before it is used."""
    if length < 0:
        raise ValueError(f"negative length {length}")
    return PyBytes_FromStringAndSize(NULL, length)


def pread_into(int fd, bytes target, Py_ssize_t start, Py_ssize_t length, long long offset):
    """Read ``length`` bytes of ``fd`` at ``offset`` into ``target[start:start + length]``
    (without the GIL); the bytes read, short only at the end of the file.

    Raises:
        ValueError: the slice is not inside ``target``.
        OSError: the read failed.
    """
    if start < 0 or length < 0 or start + length > len(target):
        raise ValueError(f"slice [{start}, {start + length}) outside {len(target)} bytes")
    cdef char* base = PyBytes_AS_STRING(target) + start
    cdef Py_ssize_t got = 0
    cdef ssize_t n = 0
    cdef int err = 0
    with nogil:
        while got < length:
            n = pread(fd, base + got, length - got, offset + got)
            if n < 0:
                if errno == EINTR:
                    continue
                err = errno
                break
            if n == 0:
                break
            got += n
    if err:
        raise OSError(err, "pread failed")
    return got
