"""Type stubs for the value-preparation kernels in ``_encode_values.pyx``."""

import numpy as np
import numpy.typing as npt

_Ints = npt.ArrayLike
_I64 = npt.NDArray[np.int64]
_Bools = npt.NDArray[np.bool_]

def timestamp_parts(
    raw: _Ints, per_second: int, max_seconds: int, base_epoch: int, wall_bounds: _Ints,
    wall_offsets: _Ints, to_instant: bool, transitions: _Ints, offsets: _Ints, to_wall: bool,
    starts: _Ints, ends: _Ints, want_millis: bool, low: _I64, high: _I64, low_sub: _I64,
    high_sub: _I64, nonempty: _Bools
) -> tuple[_I64, _I64, _I64 | None, int]: ...
def trim_decimal64(
    words: npt.NDArray[np.uint64], scale: int
) -> tuple[npt.NDArray[np.uint64], _I64, _I64]: ...
def decimal64_group_stats(
    words: npt.NDArray[np.uint64], starts: _Ints, ends: _Ints, largest: int
) -> tuple[_I64, _I64, _I64, _Bools, _Bools]: ...
def group_true_counts(values: npt.ArrayLike, starts: _Ints, ends: _Ints) -> _I64: ...
