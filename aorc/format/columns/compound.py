"""Struct, list, map and union columns.

A struct's fields hold values for the struct's non-null slots only; they are decoded at the
struct's level with its validity, so the field arrays line up with the struct without a
scatter. A list or map stores one length per non-null slot (LENGTH, unsigned integer RLE) and
its children hold ``sum(lengths)`` values. A union stores one tag per non-null slot (DATA,
byte RLE) and child ``k`` holds the values of the rows tagged ``k``.

Arrow unions have no validity bitmap: a null union slot becomes tag 0 pointing at a null
value appended to child 0, in row order. Arrow map keys cannot be null, while ORC allows them;
a map with a null key raises UnsupportedFeatureError rather than lose entries silently.
A list, map or union child left out of the column selection (e.g. map values when only
``m.key`` is selected) reads as nulls of its type.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from aorc.errors import UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.base import (
    Context,
    Placement,
    Slots,
    column_error,
    decode_level,
    offsets_from_lengths,
    register,
)
from aorc.format.types import OrcType, TypeKind, type_string

__all__: list[str] = []


@register(TypeKind.STRUCT)
def decode_struct(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a struct column and its selected fields."""
    slots = ctx.slots(t, level)
    child_level = slots.level()
    children = [decode_level(c, ctx, child_level) for c in t.children if ctx.is_selected(c)]
    return pa.Array.from_buffers(ctx.arrow_type(t), slots.length, [slots.validity()],
                                 null_count=slots.null_count, children=children)


def _decode_child(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a list, map or union child; one left out of the selection reads as nulls
    (Arrow cannot leave it out, and its streams were not read)."""
    if ctx.is_selected(t):
        return decode_level(t, ctx, level)
    return pa.nulls(level.length, ctx.arrow_type(t))


def _offsets(t: OrcType, ctx: Context, level: Placement, what: str
             ) -> tuple[Slots, pa.Buffer, int]:
    """The slots of a list or map column, the Arrow offsets of its entries (``what``, for
    messages) from its LENGTH stream, and how many entries there are."""
    slots = ctx.slots(t, level)
    lengths = ctx.lengths(t, pb.Stream.LENGTH, slots.count)
    offsets, total = offsets_from_lengths(t, slots, lengths, what)
    return slots, offsets, total


@register(TypeKind.LIST)
def decode_list(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a list column and its elements."""
    slots, offsets, total = _offsets(t, ctx, level, "list elements")
    items = _decode_child(t.children[0], ctx, Placement(total))
    return pa.Array.from_buffers(ctx.arrow_type(t), slots.length, [slots.validity(), offsets],
                                 null_count=slots.null_count, children=[items])


@register(TypeKind.MAP)
def decode_map(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a map column, its keys and its values."""
    slots, offsets, total = _offsets(t, ctx, level, "map entries")
    keys = _decode_child(t.children[0], ctx, Placement(total))
    if keys.null_count:
        raise UnsupportedFeatureError(
            f"column {t.column_id} ({type_string(t)}) has {keys.null_count} null map keys, "
            "which Arrow maps cannot hold")
    values = _decode_child(t.children[1], ctx, Placement(total))
    dt = ctx.arrow_type(t)
    entries = pa.Array.from_buffers(pa.struct([dt.key_field, dt.item_field]), total, [None],
                                    null_count=0, children=[keys, values])
    return pa.Array.from_buffers(dt, slots.length, [slots.validity(), offsets],
                                 null_count=slots.null_count, children=[entries])


@register(TypeKind.UNION)
def decode_union(t: OrcType, ctx: Context, level: Placement) -> pa.Array:
    """Decode a union column into an Arrow dense union."""
    slots = ctx.slots(t, level)
    tags = ctx.bytes_rle(t, pb.Stream.DATA, slots.count).view(np.uint8)
    if len(tags) and int(tags.max()) >= len(t.children):
        raise column_error(t, pb.Stream.DATA, f"tag {int(tags.max())} but the union has "
                                              f"{len(t.children)} branches")
    type_ids = slots.expand(tags)  # a null slot gets tag 0 ...
    offsets = np.zeros(slots.length, np.int32)
    children = []
    for branch, child in enumerate(t.children):
        rows = type_ids == branch
        count = int(np.count_nonzero(rows))
        offsets[rows] = np.arange(count, dtype=np.int32)
        if branch == 0 and slots.valid is not None:
            # ... and a null value of child 0, at its place among the branch's values.
            child_level = Placement(count, slots.valid[rows])
        else:
            child_level = Placement(count)
        children.append(_decode_child(child, ctx, child_level))
    buffers = [None, pa.py_buffer(type_ids.astype(np.int8)), pa.py_buffer(offsets)]
    return pa.Array.from_buffers(ctx.arrow_type(t), slots.length, buffers, children=children)
