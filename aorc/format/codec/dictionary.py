"""Copying a dictionary-encoded string column's values out of its dictionary.

The typed front of the kernel :mod:`aorc.format.codec._dict_values` (one pass over the
indices without the GIL: bounds checked, nulls placed, values copied).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from aorc.format.codec import _dict_values

__all__ = ["dictionary_values"]


def dictionary_values(indices: npt.NDArray[np.int64], valid: npt.NDArray[np.bool_] | None,
                      length: int, offsets: Any, data: Any
                      ) -> tuple[npt.NDArray[np.int32] | None, npt.NDArray[np.uint8] | None,
                                 int | None]:
    """The Arrow offsets and data of ``length`` string slots whose valid ones hold the
    dictionary entries ``indices`` (one per valid slot, in order).

    Args:
        indices: int64 indices, one per valid slot (unsigned values above ``2**63 - 1``
            come out negative, and are out of range).
        valid: ``length`` flags, or ``None`` when every slot holds a value.
        length: the number of slots.
        offsets: the dictionary's int32 Arrow offsets (``size + 1``, from 0, never
            decreasing).
        data: the dictionary's bytes (at least ``offsets[-1]`` of them).

    Returns:
        ``(offsets, data, None)``; ``(None, None, bad)`` with ``bad`` the first index out of
        range; ``(None, None, None)`` when the values add up to more than ``2**31 - 1``
        bytes.

    Raises:
        ValueError: not as many indices as valid slots, or offsets beyond the data.
    """
    return _dict_values.dictionary_values(indices, valid, length, offsets, data)
