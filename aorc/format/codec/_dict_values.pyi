from typing import Any

import numpy as np
import numpy.typing as npt

def dictionary_values(
    indices: npt.NDArray[np.int64], valid: npt.NDArray[np.bool_] | None, length: int,
    offsets: Any, data: Any,
) -> tuple[npt.NDArray[np.int32] | None, npt.NDArray[np.uint8] | None, int | None]: ...
