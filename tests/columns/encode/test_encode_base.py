"""encode_column's contract: whole tables, row groups, PRESENT streams, errors."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from encode_helpers import K, flatten, stripe_streams
from helpers.compare import assert_tables_equal
from helpers.random_tables import ALL_TYPES, random_table

from aorc.errors import SchemaError
from aorc.format.columns import DecodeOptions, decode_stripe
from aorc.format.columns.encode import EncodedColumn, EncodeOptions, encode_column
from aorc.format.columns.encode.base import validity_mask
from aorc.format.types import OrcType, TypeKind, from_arrow_schema, parse_type_string

NS = 10**9


def _root_array(table: pa.Table) -> pa.StructArray:
    return pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns],
                                      fields=list(table.schema))


def _as_java_reads(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """Timestamps in (-1 s, 0) with a millisecond or more come back a second late (ORC
    Java's representation, see test_encode_timestamps.py)."""
    ns = pc.cast(arr, pa.int64())
    quirk = pc.and_(pc.and_(pc.greater(ns, -NS), pc.less(ns, 0)),
                    pc.greater_equal(pc.add(ns, NS), 10**6))
    return pc.cast(pc.if_else(quirk, pc.add(ns, NS), ns), arr.type)


def _canonical_nan(arr: pa.Array) -> pa.Array:
    """Every NaN the canonical one, as ORC Java (and aorc) write them."""
    t = arr.type
    if pa.types.is_floating(t):
        return pc.if_else(pc.is_nan(arr), pa.scalar(float("nan"), t), arr)
    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays([_canonical_nan(arr.field(i)) for i in
                                           range(t.num_fields)], fields=list(t),
                                          mask=pc.invert(arr.is_valid()))
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, arr.keys, _canonical_nan(arr.items), type=t,
                                       mask=pc.invert(arr.is_valid()))
    if pa.types.is_list(t):
        return pa.ListArray.from_arrays(arr.offsets, _canonical_nan(arr.values), type=t,
                                        mask=pc.invert(arr.is_valid()))
    return arr


def test_whole_table_round_trip() -> None:
    types = {k: v for k, v in ALL_TYPES.items() if k != "nested"}
    table = random_table(21, 6000, types)
    root = from_arrow_schema(table.schema)
    starts = np.arange(0, 6000, 2500)
    enc = encode_column(root, _root_array(table), starts, EncodeOptions())
    batch = decode_stripe(root, None, stripe_streams(enc), 6000, DecodeOptions())
    expected = pa.table({n: _canonical_nan(c.combine_chunks()) for n, c in
                         zip(table.column_names, table.columns, strict=True)})
    for name in ("ts", "ts_utc"):
        i = expected.column_names.index(name)
        expected = expected.set_column(i, name, _as_java_reads(expected[name]))
    assert_tables_equal(pa.Table.from_batches([batch]), expected)
    cols = list(flatten(enc))
    assert [c.column_id for c in cols] == list(range(root.max_column_id + 1))
    for c in cols:
        assert len(c.row_group_stats) == len(starts)
        for s in c.streams:
            assert len(s.positions) == len(starts)
        has_present = K.PRESENT in [s.kind for s in c.streams]
        assert has_present == c.stripe_stats.hasNull, f"column {c.column_id}"
        if has_present:
            assert c.streams[0].kind == K.PRESENT
        assert c.stripe_stats.numberOfValues == sum(s.numberOfValues for s in c.row_group_stats)
    # without a row index: the same streams and stripe statistics, no positions
    bare = encode_column(root, _root_array(table), [], EncodeOptions())
    for a, b in zip(flatten(enc), flatten(bare), strict=True):
        # without row groups the dictionary check sees the whole stripe, not its first group
        if a.encoding == b.encoding:
            assert [s.data for s in a.streams] == [s.data for s in b.streams]
        else:
            assert {a.encoding.kind, b.encoding.kind} == {2, 3}
        assert all(s.positions == [] for s in b.streams) and b.row_group_stats == []
        assert b.bloom_filters is None
        x, y = a.stripe_stats, b.stripe_stats
        for kind in ("doubleStatistics", "decimalStatistics"):  # rounded in another order
            if x.HasField(kind):
                getattr(x, kind).ClearField("sum")
                getattr(y, kind).ClearField("sum")
        assert x == y, f"column {a.column_id}"


def test_row_groups_need_not_be_full() -> None:
    arr = pa.array(range(10), pa.int32())
    enc = encode_column(OrcType(TypeKind.INT), arr, [0, 3, 3, 9], EncodeOptions())
    assert [s.numberOfValues for s in enc.row_group_stats] == [3, 0, 6, 1]
    assert len(enc.streams[0].positions) == 4


@pytest.mark.parametrize("starts", [[1, 5], [0, 5, 2], [0, 11]])
def test_bad_row_group_starts(starts: list[int]) -> None:
    with pytest.raises(SchemaError):
        encode_column(OrcType(TypeKind.INT), pa.array(range(10), pa.int32()), starts,
                      EncodeOptions())


def test_type_mismatches_raise_schema_error() -> None:
    with pytest.raises(SchemaError):
        encode_column(OrcType(TypeKind.INT), pa.array([[1]]), [0], EncodeOptions())
    with pytest.raises(SchemaError):
        encode_column(parse_type_string("struct<a:int>"),
                      pa.array([{"a": 1, "b": 2}]), [0], EncodeOptions())
    with pytest.raises(SchemaError):
        encode_column(parse_type_string("array<int>"), pa.array([1]), [0], EncodeOptions())


def test_present_only_with_nulls_in_this_stripe() -> None:
    t = OrcType(TypeKind.STRING)
    with_null: EncodedColumn = encode_column(t, pa.array(["a", None]), [0], EncodeOptions())
    without = encode_column(t, pa.array(["a", "b"]), [0], EncodeOptions())
    assert with_null.streams[0].kind == K.PRESENT and with_null.streams[0].positions == [[0, 0, 0]]
    assert all(s.kind != K.PRESENT for s in without.streams)


def test_extension_and_fixed_size_inputs() -> None:
    class Uuid(pa.ExtensionType):
        def __init__(self) -> None:
            super().__init__(pa.binary(4), "test.uuid4")

        def __arrow_ext_serialize__(self) -> bytes:
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):  # type: ignore[no-untyped-def]
            return cls()

    storage = pa.array([b"abcd", None, b"wxyz"], pa.binary(4))
    arr = pa.ExtensionArray.from_storage(Uuid(), storage)
    enc = encode_column(OrcType(TypeKind.BINARY), arr, [0], EncodeOptions())
    assert enc.stripe_stats.binaryStatistics.sum == 8
    fixed = pa.array([[1, 2], [3, 4]], pa.list_(pa.int32(), 2))
    enc = encode_column(parse_type_string("array<int>"), fixed, [0], EncodeOptions())
    assert enc.stripe_stats.collectionStatistics.totalChildren == 4


def test_validity_mask_of_slices_reads_only_the_slice() -> None:
    # A stripe of a larger table is a slice of its columns; the mask is read from the slice's
    # own bytes of the bitmap, at any bit offset.
    rng = np.random.default_rng(7)
    whole = pa.array(rng.integers(0, 9, 4_000), mask=rng.random(4_000) < 0.3)
    for offset in [*range(17), 1_000, 3_991]:
        for length in (1, 7, 8, 9, 64, 333):
            piece = whole.slice(offset, length)
            expected = pc.is_valid(piece).to_numpy(zero_copy_only=False)
            assert np.array_equal(validity_mask(piece), expected), (offset, length)
