"""Struct, list, map and union encoders, and row groups of nested children."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from encode_helpers import (
    K,
    check_positions,
    flatten,
    group_slices,
    kinds,
    round_trip,
    stream,
    value_starts,
)
from helpers.random_tables import ALL_TYPES, random_array

from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.codec.bloom import thomas_wang_hash64
from aorc.format.columns.encode import EncodeOptions
from aorc.format.types import from_arrow_schema, parse_type_string


def _typed(dt: pa.DataType):  # type: ignore[no-untyped-def]
    return from_arrow_schema(pa.schema([("c", dt)])).children[0]


@pytest.mark.parametrize("name", ["list_i32", "list_str", "map_str_i64", "struct", "nested",
                                  "map_nested"])
def test_nested_round_trip(name: str) -> None:
    rng = np.random.default_rng(len(name))
    n = 3000
    arr = random_array(rng, ALL_TYPES[name], n)
    t = _typed(arr.type)
    starts = np.arange(0, n, 700)
    enc, back = round_trip(t, arr, starts, EncodeOptions(bloom_filter_columns=set(range(50))))
    assert back.equals(arr)
    ids = [c.column_id for c in flatten(enc)]
    assert ids == list(range(t.column_id, t.max_column_id + 1))
    for c in flatten(enc):
        for s in c.streams:
            assert len(s.positions) == len(c.row_group_stats) == len(starts)
        assert c.bloom_filters is not None and len(c.bloom_filters) == len(starts)


def test_list_lengths_stats_and_child_row_groups() -> None:
    rng = np.random.default_rng(1)
    n = 5000
    arr = random_array(rng, pa.list_(pa.int64()), n, null_rate=0.2)
    t = _typed(arr.type)
    starts = np.arange(0, n, 1111)
    enc, back = round_trip(t, arr, starts, EncodeOptions(bloom_filter_columns={t.column_id}))
    assert back.equals(arr)
    assert enc.encoding.kind == pb.ColumnEncoding.DIRECT_V2
    assert kinds(enc) == [K.PRESENT, K.LENGTH]
    lengths = pc.list_value_length(arr).to_numpy(zero_copy_only=False)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    present = np.where(valid, lengths, 0).astype(np.int64)
    check_positions(stream(enc, K.LENGTH), "unsigned", int(valid.sum()), value_starts(arr, starts))
    for g, sl in enumerate(group_slices(n, starts)):
        st = enc.row_group_stats[g]
        part = lengths[sl][valid[sl]].astype(np.int64)
        assert st.numberOfValues == len(part)
        cs = st.collectionStatistics
        if len(part):
            assert (cs.minChildren, cs.maxChildren) == (part.min(), part.max())
        assert cs.totalChildren == part.sum()
        assert enc.bloom_filters is not None
        assert enc.bloom_filters[g].test_hashes(thomas_wang_hash64(part)).all()
    # the elements' row groups start at the first element of each list row group
    child = enc.children[0]
    child_starts = np.concatenate(([0], np.cumsum(present)))[starts]
    elements = arr.flatten()
    assert [s.numberOfValues for s in child.row_group_stats] == [
        elements[sl].drop_null().__len__() for sl in group_slices(len(elements), child_starts)]
    check_positions(stream(child, K.DATA), "signed", len(elements) - elements.null_count,
                    value_starts(elements, child_starts))


def test_struct_children_hold_values_of_present_rows() -> None:
    a = pa.array([1, 2, 3, 4, 5, 6], pa.int32())
    b = pa.array(["x", None, "y", "z", "w", "v"])
    arr = pa.StructArray.from_arrays([a, b], names=["a", "b"],
                                     mask=pa.array([False, True, False, True, False, False]))
    t = _typed(arr.type)
    enc, back = round_trip(t, arr, [0, 3])
    assert back.to_pylist() == arr.to_pylist()
    ca, cb = enc.children
    assert [s.numberOfValues for s in ca.row_group_stats] == [2, 2]  # rows 0, 2 | 4, 5
    assert [s.hasNull for s in ca.row_group_stats] == [False, False]
    assert [s.numberOfValues for s in cb.row_group_stats] == [2, 2]
    assert kinds(ca) == [K.DATA]  # no null among the values it stores
    assert enc.stripe_stats.numberOfValues == 4 and enc.stripe_stats.hasNull


def test_root_struct_of_a_batch() -> None:
    table = pa.table({"i": pa.array([1, None, 3]), "s": pa.array(["a", "b", None])})
    root = from_arrow_schema(table.schema)
    arr = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                     names=table.column_names)
    enc, back = round_trip(root, arr, [0])
    assert back.equals(arr)
    assert enc.streams == [] and enc.encoding.kind == pb.ColumnEncoding.DIRECT
    assert enc.stripe_stats.numberOfValues == 3 and not enc.stripe_stats.hasNull
    assert [c.column_id for c in flatten(enc)] == [0, 1, 2]


def test_map_keys_and_values() -> None:
    arr = pa.array([[("a", 1), ("b", None)], None, [], [("c", 3)]],
                   pa.map_(pa.string(), pa.int64()))
    t = _typed(arr.type)
    enc, back = round_trip(t, arr, [0, 2])
    assert back.to_pylist() == arr.to_pylist()
    keys, values = enc.children
    assert [s.numberOfValues for s in keys.row_group_stats] == [2, 1]
    assert [s.numberOfValues for s in values.row_group_stats] == [1, 1]
    assert enc.stripe_stats.collectionStatistics.totalChildren == 3


def test_sliced_and_null_backed_lists() -> None:
    # a null list slot backed by elements, and a slice of a larger array
    values = pa.array(list(range(10)), pa.int32())
    arr = pa.ListArray.from_arrays(pa.array([0, 2, 5, 7, 10], pa.int32()), values,
                                   mask=pa.array([False, True, False, False]))
    t = _typed(arr.type)
    enc, back = round_trip(t, arr)
    assert back.to_pylist() == [[0, 1], None, [5, 6], [7, 8, 9]]
    enc, back = round_trip(t, arr.slice(2))
    assert back.to_pylist() == [[5, 6], [7, 8, 9]]
    assert enc.stripe_stats.collectionStatistics.totalChildren == 5


@pytest.mark.parametrize("mode", ["dense", "sparse"])
def test_union(mode: str) -> None:
    n = 1000
    rng = np.random.default_rng(2)
    tags = rng.integers(0, 3, n).astype(np.int8)
    ints = pa.array(np.arange(n, dtype=np.int32))
    strs = pa.array([f"s{i}" if i % 5 else None for i in range(n)])
    dbls = pa.array(np.arange(n) / 4)
    if mode == "dense":
        counts = [int((tags == k).sum()) for k in range(3)]
        offsets = np.zeros(n, np.int32)
        for k in range(3):
            offsets[tags == k] = np.arange(counts[k])
        children = [ints.slice(0, counts[0]), strs.slice(0, counts[1]), dbls.slice(0, counts[2])]
        arr = pa.UnionArray.from_dense(pa.array(tags), pa.array(offsets), children)
    else:
        arr = pa.UnionArray.from_sparse(pa.array(tags), [ints, strs, dbls])
    t = parse_type_string("uniontype<int,string,double>")
    for part in (arr, arr.slice(123, 600)):
        m = len(part)
        starts = np.arange(0, m, 300)
        enc, back = round_trip(t, part, starts, EncodeOptions(bloom_filter_columns={0}))
        assert back.to_pylist() == part.to_pylist()
        assert enc.encoding.kind == pb.ColumnEncoding.DIRECT and kinds(enc) == [K.DATA]
        part_tags = np.frombuffer(part.buffers()[1], np.int8, m, part.offset).astype(np.int64)
        check_positions(stream(enc, K.DATA), "byte", m, starts)
        items = part.to_pylist()
        for k, child in enumerate(enc.children):
            for g, sl in enumerate(group_slices(m, starts)):
                mine = [v for v, tag in zip(items[sl], part_tags[sl], strict=True) if tag == k]
                st = child.row_group_stats[g]
                assert st.numberOfValues == sum(v is not None for v in mine)
                assert st.hasNull == (None in mine)
        assert enc.bloom_filters is not None
        for g, sl in enumerate(group_slices(m, starts)):
            assert enc.bloom_filters[g].test_hashes(thomas_wang_hash64(part_tags[sl])).all()
