"""The layout of an Arrow union array, read from its buffers: pyarrow's ``type_codes`` and
``offsets`` ignore a slice's offset (they give the first slots of the unsliced array), and a
``UnionScalar``'s ``type_code`` is 0 when its branch's value is null, so every path that
needs a union's tags (the encoder, bloom filter hashes, masks) reads them here.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import SchemaError

__all__ = ["union_branches", "union_codes"]


def union_codes(values: pa.Array) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32] | None]:
    """The type code of every slot of a union array and, for a dense union, the slot's offset
    into its branch (``None`` for a sparse one), at the array's offset. Views of the
    buffers, not copies."""
    n, start = len(values), values.offset
    bufs = values.buffers()
    codes = np.frombuffer(bufs[1], np.int8, count=n, offset=start)
    if values.type.mode == "dense":
        return codes, np.frombuffer(bufs[2], np.int32, count=n, offset=start * 4)
    return codes, None


def union_branches(values: pa.Array
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """The branch index (0, 1, ...: ORC's tag) of every slot of a union array and, for a
    dense union, the slot's offset into its branch.

    Raises:
        SchemaError: a type code that is not one of the union type's.
    """
    dt = values.type
    codes, offsets = union_codes(values)
    lookup = np.full(128, -1, np.int64)
    lookup[np.asarray(dt.type_codes, np.int64)] = np.arange(dt.num_fields)
    branches = lookup[codes.astype(np.int64) & 0x7F] if len(codes) else np.zeros(0, np.int64)
    if len(branches) and int(branches.min()) < 0:
        raise SchemaError(f"union array holds a type code outside {dt.type_codes}")
    return branches, None if offsets is None else offsets.astype(np.int64)
