"""Taking Arrow list and map arrays apart and putting them together again, slices included.

Arrow's ``values`` of a list or map array is the whole child array, whatever the slice, and
its ``from_arrays`` refuses a validity mask with offsets that do not start at the buffer's
beginning; these helpers hand back offsets that start at 0 and the matching child slice.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["list_parts", "map_entries"]


def list_parts(arr: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array | None]:
    """(offsets from 0, the values they index, the null mask or None) of a list or map
    array (the offsets keep the array's own integer width)."""
    offsets = arr.offsets
    if offsets.null_count:
        offsets = offsets.fill_null(0)
    first = offsets[0].as_py() if len(offsets) else 0
    last = offsets[-1].as_py() if len(offsets) else 0
    values = arr.values.slice(first, last - first)
    if first:
        offsets = pc.subtract(offsets, pa.scalar(first, offsets.type))
    else:
        offsets = pa.concat_arrays([offsets])  # a fresh array (no slice offset)
    mask = arr.is_null() if arr.null_count else None
    return offsets, values, mask


def map_entries(arr: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The keys and values of the non-null maps of a map array, in order."""
    if arr.null_count:
        arr = arr.filter(arr.is_valid())
    _, entries, _ = list_parts(arr)
    return entries.field(0), entries.field(1)
