from typing import Any

import numpy as np
import numpy.typing as npt

def decimals_at_scale(data: Any, n: int, offset: int, scales: npt.NDArray[np.int64],
                      target: int, precision: int) -> tuple[npt.NDArray[np.uint64] | None, int]: ...
