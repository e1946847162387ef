"""Float and double columns: DATA holds raw little-endian IEEE 754 values."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.base import Context, Placement, column_error, fixed_width_array, register
from aorc.format.types import OrcType, TypeKind

__all__: list[str] = []

_DTYPES: dict[TypeKind, np.dtype[np.floating]] = {TypeKind.FLOAT: np.dtype("<f4"),
                                                  TypeKind.DOUBLE: np.dtype("<f8")}


@register(TypeKind.FLOAT, TypeKind.DOUBLE)
def decode_float(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a float or double column."""
    slots = ctx.slots(t, level)
    dtype = _DTYPES[t.kind]
    data = ctx.require(t, pb.Stream.DATA, slots.count, 1)
    offset = ctx.byte_offset(t, pb.Stream.DATA)  # 0 but for a stripe decoded in slices
    needed = slots.count * dtype.itemsize
    if len(data) - offset < needed:
        raise column_error(t, pb.Stream.DATA, f"{len(data) - offset} bytes hold fewer than "
                                              f"the {slots.count} values needed")
    values = np.frombuffer(data, dtype, slots.count, offset)
    ctx.consumed(t, pb.Stream.DATA, offset + needed)
    return fixed_width_array(ctx.arrow_type(t), slots, values)
