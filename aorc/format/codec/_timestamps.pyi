
import numpy as np
import numpy.typing as npt

def timestamps_ns(seconds: npt.NDArray[np.int64], raw_nanos: npt.NDArray[np.int64],
                  valid: npt.NDArray[np.bool_] | None, length: int, base: int,
                  transitions: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64],
                  floor: int | None) -> npt.NDArray[np.int64] | None: ...
