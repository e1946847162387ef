"""Type stubs for the decoding kernels in ``_decode.pyx`` (documented in aorc.format.codec.rle)."""

from typing import SupportsIndex

import numpy as np
import numpy.typing as npt

_Data = bytes | bytearray | memoryview

def read_byte_rle(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.int8]: ...
def read_bool_rle(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.bool_]: ...
def read_int_rle_v1(
    data: _Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.int64]: ...
def read_int_rle_v2(
    data: _Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> npt.NDArray[np.int64]: ...
def read_varints(
    data: _Data, n: SupportsIndex, signed: bool, offset: SupportsIndex = 0
) -> npt.NDArray[np.int64]: ...
def read_varint128(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0
) -> npt.NDArray[np.uint64]: ...
def decode_nanos(encoded: npt.ArrayLike) -> npt.NDArray[np.int64]: ...
def offsets_int32(
    lengths: npt.ArrayLike, valid: npt.ArrayLike | None, length: int
) -> tuple[npt.NDArray[np.int32], int]: ...
def read_byte_rle_from(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> tuple[npt.NDArray[np.int8], int, int]: ...
def read_bool_rle_from(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0, skip: SupportsIndex = 0
) -> tuple[npt.NDArray[np.bool_], int, int]: ...
def decode_ints_from(
    data: _Data, n: SupportsIndex, signed: bool, version: int, offset: SupportsIndex = 0,
    skip: SupportsIndex = 0,
) -> tuple[npt.NDArray[np.int64], int, int]: ...
def read_varint128_from(
    data: _Data, n: SupportsIndex, offset: SupportsIndex = 0
) -> tuple[npt.NDArray[np.uint64], int]: ...
