"""Struct, list, map and union columns.

A struct (encoding DIRECT) has no streams of its own besides PRESENT; its fields hold values
for the struct's non-null slots only, so their row groups start where the struct's values do.
A list or map (DIRECT_V2) stores one length per non-null slot (LENGTH, unsigned RLE v2) and its
children hold the elements of the non-null slots, row groups starting at the first element of
the parent's row group. A union (DIRECT) stores one tag per slot (DATA, byte RLE) and child
``k`` holds the values of the slots tagged ``k``. Arrow unions have no validity of their own,
so every union slot is written as present; a null value is a null in the chosen child.

Statistics: struct and union only count values; lists and maps also count their elements
(fewest, most, total). Bloom filters hold list/map lengths and union tags, nothing for structs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec import rle
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns.encode.base import (
    NESTED_TASK_BYTES,
    EncodedColumn,
    EncodedStream,
    EncodeLevel,
    ValueParts,
    encode_level,
    group_bounds,
    group_reduce,
    positions_list,
    register,
    split_hashes,
)
from aorc.format.columns.encode.integers import boundaries
from aorc.format.columns.encode.statistics import (
    CollectionStats,
    Stats,
)
from aorc.format.types import OrcType, TypeKind, type_string
from aorc.format.unions import union_branches
from aorc.threads import pool_map

__all__: list[str] = []


def _check_children(t: OrcType, values: pa.Array, kind: str, what: str) -> None:
    """Raise SchemaError unless the Arrow struct or union has one child per ORC child."""
    if values.type.num_fields != len(t.children):
        raise SchemaError(f"column {t.column_id} ({type_string(t)}): Arrow {kind} has "
                          f"{values.type.num_fields} {what}")


@register(TypeKind.STRUCT)
def encode_struct(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                  groups: list[Stats]) -> ValueParts:
    """Encode a struct column's fields."""
    t = level.t
    _check_children(t, values, "struct", "fields")
    starts = boundaries(level, vstarts)
    jobs = [(level.child(c, starts), values.field(i)) for i, c in enumerate(t.children)]
    return ValueParts(pb.ColumnEncoding.DIRECT, [], groups,
                      children=_encode_children(level, jobs))


def _encode_children(level: EncodeLevel, jobs: list[tuple[EncodeLevel, pa.Array]]
                     ) -> list[EncodedColumn]:
    """Encode the children of ``level``'s column (each with its values), in order; on the
    shared pool when ``level`` is parallel and the root, or a nested column whose children
    hold at least ``NESTED_TASK_BYTES`` (the bytes do not depend on it)."""
    if not level.parallel or len(jobs) < 2 or (
            level.nested and sum(values.nbytes for _, values in jobs) < NESTED_TASK_BYTES):
        return [_encode_job(job) for job in jobs]
    # The biggest first, so that no thread is left with a big one at the end.
    order = sorted(range(len(jobs)), key=lambda i: -jobs[i][1].nbytes)
    done = pool_map(_encode_job, [jobs[i] for i in order], level.opts.threads,
                    keep_threads=True)
    children: list[EncodedColumn] = [done[0]] * len(jobs)
    for i, col in zip(order, done, strict=True):
        children[i] = col
    return children


def _encode_job(job: tuple[EncodeLevel, pa.Array]) -> EncodedColumn:
    level, values = job
    col = encode_level(level, values)
    return col if level.finish is None else level.finish(col)


def _lengths(level: EncodeLevel, lengths: npt.NDArray[np.int64], vstarts: npt.NDArray[np.int64],
             groups: list[CollectionStats]) -> tuple[EncodedStream, npt.NDArray[np.int64],
                                                     list[npt.NDArray[np.int64]] | None]:
    """The LENGTH stream, the children's row-group starts, the statistics and bloom hashes."""
    bounds = boundaries(level, vstarts)
    data, pos = rle.write_int_rle_v2_with_positions(lengths, False, bounds)
    starts, ends = group_bounds(vstarts, len(lengths))
    low, nonempty = group_reduce(np.minimum, lengths, starts, ends)
    high, _ = group_reduce(np.maximum, lengths, starts, ends)
    before = np.concatenate(([0], np.cumsum(lengths)))
    for i, g in enumerate(groups):
        if nonempty[i]:
            g.minimum, g.maximum = int(low[i]), int(high[i])
            g.sum = int(before[ends[i]] - before[starts[i]])
    hashes = split_hashes(thomas_wang_hash64(lengths), vstarts) if level.bloom else None
    return EncodedStream(pb.Stream.LENGTH, data, positions_list(pos)), before[bounds], hashes


def _entries(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
             groups: list[CollectionStats]
             ) -> tuple[EncodedStream, npt.NDArray[np.int64], list[npt.NDArray[np.int64]] | None,
                        int, int]:
    """A list or map column's LENGTH stream, its children's row-group starts, its bloom
    hashes, and where its entries start in the child arrays and how many there are."""
    offsets = np.asarray(values.offsets.to_numpy(zero_copy_only=False), np.int64)
    stream, child_starts, hashes = _lengths(level, np.diff(offsets), vstarts, groups)
    first = int(offsets[0])
    return stream, child_starts, hashes, first, int(offsets[-1]) - first


@register(TypeKind.LIST)
def encode_list(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                groups: list[CollectionStats]) -> ValueParts:
    """Encode a list column's lengths and elements."""
    stream, child_starts, hashes, first, count = _entries(level, values, vstarts, groups)
    items = values.values.slice(first, count)
    child = encode_level(level.child(level.t.children[0], child_starts), items)
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, [stream], groups, hashes, children=[child])


@register(TypeKind.MAP)
def encode_map(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
               groups: list[CollectionStats]) -> ValueParts:
    """Encode a map column's lengths, keys and values."""
    stream, child_starts, hashes, first, count = _entries(level, values, vstarts, groups)
    key_t, value_t = level.t.children
    children = _encode_children(level, [
        (level.child(key_t, child_starts), values.keys.slice(first, count)),
        (level.child(value_t, child_starts), values.items.slice(first, count))])
    return ValueParts(pb.ColumnEncoding.DIRECT_V2, [stream], groups, hashes, children=children)


def _branch_values(values: pa.Array, k: int, rows: npt.NDArray[np.bool_],
                   offsets: npt.NDArray[np.int64] | None) -> pa.Array:
    child = values.field(k)
    if offsets is None:  # sparse: the child is as long as the union (pyarrow slices it)
        return child.filter(pa.array(rows))
    picked = offsets[rows]
    if len(picked) == 0:
        return child.slice(0, 0)
    first = int(picked[0])
    if np.array_equal(picked, np.arange(first, first + len(picked))):
        return child.slice(first, len(picked))
    return child.take(pa.array(picked))


@register(TypeKind.UNION)
def encode_union(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                 groups: list[Stats]) -> ValueParts:
    """Encode a union column's tags and branches."""
    t = level.t
    _check_children(t, values, "union", "branches")
    branches, offsets = union_branches(values)
    bounds = boundaries(level, vstarts)
    data, pos = rle.write_byte_rle_with_positions(branches.astype(np.int8), bounds)
    jobs: list[tuple[EncodeLevel, pa.Array]] = []
    for k, child_t in enumerate(t.children):
        rows = branches == k
        before = np.concatenate(([0], np.cumsum(rows)))
        jobs.append((level.child(child_t, before[bounds]),
                     _branch_values(values, k, rows, offsets)))
    children = _encode_children(level, jobs)
    hashes = split_hashes(thomas_wang_hash64(branches), vstarts) if level.bloom else None
    return ValueParts(pb.ColumnEncoding.DIRECT, [EncodedStream(pb.Stream.DATA, data,
                                                               positions_list(pos))],
                      groups, hashes, children=children)
