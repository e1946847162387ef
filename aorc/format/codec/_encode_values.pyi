"""Type stubs for the value-preparation kernels in ``_encode_values.pyx``."""

import numpy as np
import numpy.typing as npt

_Ints = npt.ArrayLike
_I64 = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]

def timestamp_parts(
    raw: _Ints, per_second: int, max_seconds: int, base_epoch: int, wall_bounds: _Ints,
    wall_offsets: _Ints, to_instant: bool, transitions: _Ints, offsets: _Ints, to_wall: bool,
    starts: _Ints, ends: _Ints, want_millis: bool
) -> tuple[_I64, _I64, _I64 | None, _I64, _I64, _I64, _I64, _Bools, int]: ...
def trim_decimal64(
    words: npt.NDArray[np.uint64], scale: int
) -> tuple[npt.NDArray[np.uint64], _I64, _I64]: ...
def decimal64_group_stats(
    values: _Ints, starts: _Ints, ends: _Ints, largest: int
) -> tuple[_I64, _I64, _I64, _Bools, _Bools]: ...
