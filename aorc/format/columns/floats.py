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
    needed = slots.count * dtype.itemsize
    if len(data) < needed:
        raise column_error(t, pb.Stream.DATA,
                           f"{len(data)} bytes hold fewer than the {slots.count} values needed")
    values = np.frombuffer(data, dtype, slots.count)
    return fixed_width_array(ctx.arrow_type(t), slots, values)
