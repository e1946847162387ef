"""ORC's run-length encodings and varints: typed front for the Cython kernels.

Decoders wrap :mod:`aorc.format.codec._decode`; the encoders of
:mod:`aorc.format.codec._encode` (byte-identical with ORC Java's, with row-index positions) are
re-exported here so that the column encoders need not reach into the kernel.

Every decoder takes ``data`` (any C-contiguous buffer: bytes,
bytearray, memoryview; read-only is fine), starts reading at byte ``offset``, skips ``skip``
values (as a row-index seek needs) and returns exactly the next ``n`` values in a new numpy
array. A stream may hold more values than asked for. Integers are 64-bit two's complement and
wrap as in ORC Java: unsigned values above ``2**63 - 1`` come out negative.

Every decoder raises :class:`aorc.errors.CorruptFileError` when the data ends early or is
malformed (and for negative ``n``, ``offset`` or ``skip``, or an ``offset`` past the end), and
refuses a count the input bytes could not possibly hold before allocating anything.

The ``*_from`` decoders also say where the next value is, so that a stream can be decoded
piece after piece (a stripe in row slices) in time proportional to its length: the
``(offset, skip)`` they return, passed to the next call, continue where they stopped.
"""

from __future__ import annotations

from typing import SupportsIndex

import numpy as np
import numpy.typing as npt

from aorc.errors import CorruptFileError
from aorc.format.codec import _decimal, _decode, _timestamps
from aorc.format.codec._encode import (
    double_group_stats,
    encode_nanos,
    group_extremes,
    group_sums,
    write_bool_rle_with_positions,
    write_byte_rle_with_positions,
    write_int_rle_v2,
    write_int_rle_v2_with_positions,
    write_varint128_with_positions,
)

__all__ = [
    "decimals_at_scale",
    "decode_ints",
    "decode_ints_from",
    "decode_nanos",
    "double_group_stats",
    "encode_nanos",
    "group_extremes",
    "group_sums",
    "offsets_int32",
    "read_bool_rle",
    "read_bool_rle_from",
    "read_byte_rle",
    "read_byte_rle_from",
    "read_int_rle_v1",
    "read_int_rle_v2",
    "read_varint128",
    "read_varint128_from",
    "read_varints",
    "rle_version",
    "timestamps_ns",
    "write_bool_rle_with_positions",
    "write_byte_rle_with_positions",
    "write_int_rle_v2",
    "write_int_rle_v2_with_positions",
    "write_varint128_with_positions",
]

Data = bytes | bytearray | memoryview
"""Anything the decoders read from."""

# =============================================================================================
# Decoders
# =============================================================================================

_ENCODING_RLE_VERSION = {0: 1, 1: 1, 2: 2, 3: 2}  # DIRECT, DICTIONARY, DIRECT_V2, DICTIONARY_V2


def rle_version(encoding_kind: int) -> int:
    """Integer RLE version used by a column encoding.

    Args:
        encoding_kind: a ``ColumnEncoding.Kind`` value from the stripe footer.

    Returns:
        1 for DIRECT and DICTIONARY, 2 for DIRECT_V2 and DICTIONARY_V2.

    Raises:
        CorruptFileError: the kind is not one ORC defines.
    """
    try:
        return _ENCODING_RLE_VERSION[encoding_kind]
    except KeyError:
        raise CorruptFileError(f"unknown column encoding kind {encoding_kind!r}") from None


def read_byte_rle(
    data: Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.int8]:
    """Decode a byte-RLE stream (tinyint DATA, boolean streams underneath).

    Control byte 0..127 is a run of ``control + 3`` copies of the next byte; -1..-128 is
    ``-control`` literal bytes.

    Args:
        data: the stream bytes.
        n: number of values to return.
        offset: byte where decoding starts (a run boundary).
        skip: values to skip before the first one returned.

    Returns:
        An int8 array of length ``n``.
    """
    return _decode.read_byte_rle(data, n, offset, skip)


def read_bool_rle(
    data: Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.bool_]:
    """Decode a boolean stream (PRESENT, boolean DATA): byte-RLE of bits, MSB first.

    Args:
        data: the stream bytes.
        n: number of booleans to return.
        offset: byte where decoding starts (a byte-RLE run boundary).
        skip: bits to skip before the first one returned (any number, not only multiples of 8).

    Returns:
        A bool array of length ``n``.
    """
    return _decode.read_bool_rle(data, n, offset, skip)


def read_int_rle_v1(data: Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0,
                    skip: SupportsIndex = 0) -> npt.NDArray[np.int64]:
    """Decode an integer RLE version 1 stream (Hive 0.11 files, DIRECT/DICTIONARY encodings):
    :func:`decode_ints` with ``version=1``.

    Control byte 0..127 is a run of ``control + 3`` values: a signed delta byte, then the first
    value as a varint. Control -1..-128 is ``-control`` literal varints.
    """
    return _decode.read_int_rle_v1(data, n, signed, offset, skip)


def read_int_rle_v2(data: Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0,
                    skip: SupportsIndex = 0) -> npt.NDArray[np.int64]:
    """Decode an integer RLE version 2 stream (DIRECT_V2/DICTIONARY_V2 encodings):
    :func:`decode_ints` with ``version=2``.

    All four sub-encodings (SHORT_REPEAT, DIRECT, PATCHED_BASE, DELTA) at every bit width the
    5-bit width code can name, the ones the specification calls deprecated included. Decoding
    follows ORC Java where the specification is vague: patch gaps over 255 use filler patches,
    patch width + gap width over 64 is corrupt, and DELTA with width 0 is a fixed-delta run.
    Signed DELTA bases are signed varints.
    """
    return _decode.read_int_rle_v2(data, n, signed, offset, skip)


def decode_ints(
    data: Data,
    n: SupportsIndex,
    signed: bool,
    version: int,
    offset: SupportsIndex = 0,
    skip: SupportsIndex = 0,
) -> npt.NDArray[np.int64]:
    """Decode an integer RLE stream of either version.

    Args:
        data: the stream bytes.
        n: number of values to return.
        signed: whether the stream holds signed (zigzag) values.
        version: 1 or 2, see :func:`rle_version`.
        offset: byte where decoding starts (a run boundary).
        skip: values to skip before the first one returned.

    Returns:
        An int64 array of length ``n``.

    Raises:
        ValueError: ``version`` is neither 1 nor 2.
        CorruptFileError: the stream is malformed or too short.
    """
    if version == 2:
        return _decode.read_int_rle_v2(data, n, signed, offset, skip)
    if version == 1:
        return _decode.read_int_rle_v1(data, n, signed, offset, skip)
    raise ValueError(f"integer RLE version must be 1 or 2, not {version!r}")


def read_varints(
    data: Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0
) -> npt.NDArray[np.int64]:
    """Decode ``n`` consecutive base-128 varints (little-endian groups of 7 bits).

    Args:
        data: the stream bytes.
        n: number of values to return.
        signed: whether the values are zigzag encoded.
        offset: byte where decoding starts.

    Returns:
        An int64 array of length ``n``. Bits past the 64th are dropped (as ORC Java does);
        a varint longer than 10 bytes is corrupt.
    """
    return _decode.read_varints(data, n, signed, offset)


def read_varint128(
    data: Data, n: SupportsIndex, offset: SupportsIndex = 0
) -> npt.NDArray[np.uint64]:
    """Decode ``n`` zigzag varints of up to 128 bits (decimal DATA streams).

    Args:
        data: the stream bytes.
        n: number of values to return.
        offset: byte where decoding starts.

    Returns:
        A ``(n, 2)`` uint64 array: each row is the value's little-endian two's complement
        (low word, high word), so ``result.view(np.uint8)`` is an Arrow decimal128 buffer.
        A value whose zigzag form needs more than 128 bits is corrupt.
    """
    return _decode.read_varint128(data, n, offset)


def decode_nanos(encoded: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Expand timestamp SECONDARY values into nanoseconds.

    The low 3 bits ``z`` of each value say how many trailing decimal zeros were stripped:
    none when ``z == 0``, else ``z + 1``. The rest of the value, shifted right arithmetically
    by 3 as ORC C++ does, is the significand; so the negative nanoseconds ORC C++ writes for
    instants before 1970 come back negative (ORC Java's 32-bit arithmetic agrees for them).
    Products wrap in 64 bits; range checks are the caller's.

    Args:
        encoded: the decoded SECONDARY integers.

    Returns:
        An int64 array of the same shape with the nanosecond values.
    """
    return _decode.decode_nanos(encoded)


def offsets_int32(lengths: npt.NDArray[np.int64], valid: npt.NDArray[np.bool_] | None,
                  length: int) -> tuple[npt.NDArray[np.int32], int]:
    """Arrow int32 offsets for ``length`` slots, in one pass without the GIL.

    Args:
        lengths: the non-negative lengths of the valid slots, in order.
        valid: which slots are valid (``None``: all); null slots have length 0.
        length: the number of slots.

    Returns:
        The ``length + 1`` offsets and their total, or ``-1`` as the total when it exceeds
        ``2**31 - 1`` (the offsets are then unusable).

    Raises:
        ValueError: a negative length, or as many lengths as valid slots not given (a
            caller's error).
    """
    out, total = _decode.offsets_int32(lengths, valid, length)
    return out, total


def read_byte_rle_from(data: Data, n: SupportsIndex, offset: SupportsIndex = 0,
                       skip: SupportsIndex = 0) -> tuple[npt.NDArray[np.int8], int, int]:
    """:func:`read_byte_rle`, also returning the ``(offset, skip)`` of the next value."""
    return _decode.read_byte_rle_from(data, n, offset, skip)


def read_bool_rle_from(data: Data, n: SupportsIndex, offset: SupportsIndex = 0,
                       skip: SupportsIndex = 0) -> tuple[npt.NDArray[np.bool_], int, int]:
    """:func:`read_bool_rle`, also returning the ``(offset, skip)`` (in bits) of the next
    value."""
    return _decode.read_bool_rle_from(data, n, offset, skip)


def decode_ints_from(data: Data, n: SupportsIndex, signed: bool, version: int,
                     offset: SupportsIndex = 0, skip: SupportsIndex = 0
                     ) -> tuple[npt.NDArray[np.int64], int, int]:
    """:func:`decode_ints`, also returning the ``(offset, skip)`` of the next value.

    Raises:
        ValueError: ``version`` is neither 1 nor 2.
        CorruptFileError: the stream is malformed or too short.
    """
    if version not in (1, 2):
        raise ValueError(f"integer RLE version must be 1 or 2, not {version!r}")
    return _decode.decode_ints_from(data, n, signed, version, offset, skip)


def read_varint128_from(data: Data, n: SupportsIndex, offset: SupportsIndex = 0
                        ) -> tuple[npt.NDArray[np.uint64], int]:
    """:func:`read_varint128`, also returning the offset of the next value."""
    return _decode.read_varint128_from(data, n, offset)



def timestamps_ns(seconds: npt.NDArray[np.int64], raw_nanos: npt.NDArray[np.int64],
                  valid: npt.NDArray[np.bool_] | None, length: int, base: int,
                  transitions: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64],
                  floor: int | None = None) -> npt.NDArray[np.int64] | None:
    """A timestamp column's ``timestamp[ns]`` values in one pass, nulls 0: ``seconds`` (DATA,
    from 2015-01-01 in the zone, i.e. ``base`` UTC) and SECONDARY's ``raw_nanos`` (one per
    true flag of ``valid``, or per slot when it is ``None``) become the zone's wall clock
    (``offsets[k]`` seconds east of UTC before ``transitions[k]``, the last one after),
    with ORC's second taken off negative instants with a fraction of a millisecond or more.
    ``None`` when a value needs the general way: nanoseconds or seconds out of range, a
    result near the ends of ``timestamp[ns]``, or a wall-clock second before ``floor``."""
    return _timestamps.timestamps_ns(seconds, raw_nanos, valid, length, base, transitions,
                                     offsets, floor)

def decimals_at_scale(data: Data, n: int, offset: int, scales: npt.NDArray[np.int64],
                      target: int, precision: int
                      ) -> tuple[npt.NDArray[np.uint64] | None, int]:
    """A decimal column's DATA in the common case, in one pass: ``n`` zigzag varints from
    ``offset`` as (n, 2) little-endian 128-bit words and the offset after them, when every
    value's scale (``scales``) is ``target``, fits 64 bits and, for a ``precision`` of at
    most 18, has at most that many digits; else ``(None, offset)`` and the caller decodes
    the general way (:func:`read_varint128_from`), which also reports damage."""
    return _decimal.decimals_at_scale(data, n, offset, scales, target, precision)

# =============================================================================================
# Encoders (wrapping aorc.format.codec._encode; added with the writer)
# =============================================================================================
