"""Struct, list, map and union columns, nulls at every level, and column selection."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pyorc
import pytest
from stream_builders import bool_rle, byte_rle, literal_rle_v1, make_streams
from stripe_source import decode_file, pyarrow_orc_bytes, pyarrow_read, pyorc_bytes, stripes

from aorc.errors import CorruptFileError, UnsupportedFeatureError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns import DecodeOptions, arrow_type, decode_column, decode_stripe
from aorc.format.projection import select_columns
from aorc.format.types import parse_type_string, to_arrow_schema

RNG = np.random.default_rng(9)


def _maybe(value: object, p: float = 0.2) -> object:
    return None if RNG.random() < p else value


def _nested_row(i: int) -> dict:
    def inner(j: int) -> object:
        return _maybe({"m": _maybe({f"k{j}": _maybe([j, None, -j]), "z": []}),
                       "s": _maybe(str(j) * (j % 3))})
    return {
        "id": i,
        "st": _maybe({"a": _maybe(i), "b": _maybe({"c": _maybe(f"x{i}"), "d": _maybe(i * 0.5)})}),
        "lst": _maybe([inner(j) for j in range(i % 4)]),
        "m": _maybe({f"key{j}": _maybe([_maybe(j)] * (j % 3)) for j in range(i % 3)}),
        "empty": _maybe([]),
    }


NESTED = pa.schema([
    ("id", pa.int64()),
    ("st", pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string()),
                                                           ("d", pa.float64())]))])),
    ("lst", pa.list_(pa.struct([("m", pa.map_(pa.string(), pa.list_(pa.int64()))),
                                ("s", pa.string())]))),
    ("m", pa.map_(pa.string(), pa.list_(pa.int16()))),
    ("empty", pa.list_(pa.int8())),
])


@pytest.mark.parametrize("version", ["0.11", "0.12"])
def test_nested_matches_pyarrow(version: str) -> None:
    table = pa.Table.from_pylist([_nested_row(i) for i in range(1500)], schema=NESTED)
    data = pyarrow_orc_bytes(table, file_version=version, stripe_size=32 * 1024)
    got = decode_file(data)
    want = pyarrow_read(data)
    assert got.schema == want.schema
    assert got.equals(want)
    got.validate(full=True)
    assert got.to_pylist() == table.to_pylist()


def test_struct_nulls_hide_child_values() -> None:
    """Children hold values only for the struct's non-null slots, then line up with it."""
    rows = [{"s": None}, {"s": {"x": 1, "y": None}}, {"s": None}, {"s": {"x": None, "y": "b"}},
            {"s": {"x": 3, "y": "c"}}, {"s": None}]
    schema = pa.schema([("s", pa.struct([("x", pa.int32()), ("y", pa.string())]))])
    data = pyarrow_orc_bytes(pa.Table.from_pylist(rows, schema=schema))
    got = decode_file(data)
    assert got.to_pylist() == rows
    struct = got.column("s").chunk(0)
    assert struct.field("x").to_pylist() == [None, 1, None, None, 3, None]


def test_all_null_columns() -> None:
    rows = [{"s": None, "l": None, "m": None}] * 40
    schema = pa.schema([("s", pa.struct([("x", pa.int32())])), ("l", pa.list_(pa.string())),
                        ("m", pa.map_(pa.int8(), pa.float32()))])
    data = pyarrow_orc_bytes(pa.Table.from_pylist(rows, schema=schema))
    got = decode_file(data)
    assert got.equals(pyarrow_read(data))
    assert got.to_pylist() == rows


UNION_ROWS = [{"u": 1}, {"u": "a"}, {"u": None}, {"u": {"a": 5}}, {"u": {"a": None}}, {"u": 7},
              {"u": None}, {"u": "bb"}, None]


def test_union_with_nulls_matches_pyorc_and_pyarrow() -> None:
    """A null union reads as branch 0 with a null value (Arrow unions have no validity)."""
    data = pyorc_bytes("struct<u:uniontype<int,string,struct<a:int>>>", UNION_ROWS * 30,
                       struct_repr=pyorc.StructRepr.DICT)
    got = decode_file(data)
    assert got.to_pylist() == pyarrow_read(data).to_pylist()  # pyarrow gives a sparse union
    peer = list(pyorc.Reader(io.BytesIO(data), struct_repr=pyorc.StructRepr.DICT))
    assert got.to_pylist() == [r if r is not None else {"u": None} for r in peer]
    union = got.column("u").chunk(0)
    assert union.type_codes.to_pylist()[:9] == [0, 1, 0, 2, 2, 0, 0, 1, 0]
    assert union.offsets.to_pylist()[:9] == [0, 0, 1, 0, 1, 2, 3, 1, 4]
    got.validate(full=True)


def test_union_in_a_list_of_structs() -> None:
    rows = [{"l": [{"u": 1}, {"u": "x"}, None]}, {"l": None}, {"l": []}, {"l": [{"u": None}]}]
    data = pyorc_bytes("struct<l:array<struct<u:uniontype<bigint,string>>>>", rows * 5,
                       struct_repr=pyorc.StructRepr.DICT)
    got = decode_file(data)
    assert got.to_pylist() == pyarrow_read(data).to_pylist()
    got.validate(full=True)


SELECTIONS = [["id"], ["st.b.c"], ["lst"], ["m", "id"], ["st.a", "st.b.d"], []]


@pytest.mark.parametrize("columns", SELECTIONS, ids=[",".join(c) or "none" for c in SELECTIONS])
def test_selection_prunes_struct_fields(columns: list[str]) -> None:
    table = pa.Table.from_pylist([_nested_row(i) for i in range(300)], schema=NESTED)
    data = pyarrow_orc_bytes(table)
    tail, parts = stripes(data)
    selected = select_columns(tail.schema, columns)
    batch = decode_stripe(tail.schema, selected, parts[0].streams, parts[0].num_rows,
                          DecodeOptions())
    full = to_arrow_schema(tail.schema)
    top = [f for f, c in zip(full, tail.schema.children, strict=False) if c.column_id in selected]
    assert batch.schema.names == [f.name for f in top]
    kept = [c for c in tail.schema.children if c.column_id in selected]
    for f, c in zip(batch.schema, kept, strict=True):
        assert f.type == arrow_type(c, selected)
        want = table.column(f.name).combine_chunks()
        if f.type != want.type:  # a pruned struct: compare the kept fields only
            want = _prune(want, f.type)
        assert batch.column(f.name).to_pylist() == want.to_pylist()


def _prune(array: pa.Array, dt: pa.DataType) -> pa.Array:
    if not pa.types.is_struct(dt):
        return array
    fields = [_prune(array.field(dt.field(i).name), dt.field(i).type)
              for i in range(dt.num_fields)]
    return pa.StructArray.from_arrays(fields, fields=[dt.field(i) for i in range(dt.num_fields)],
                                      mask=array.is_null())


# --------------------------------------------------------------------------- crafted

def test_map_with_a_null_key_is_unsupported() -> None:
    t = parse_type_string("map<int,int>")
    streams = make_streams({
        (0, pb.Stream.LENGTH): literal_rle_v1([2], signed=False),
        (1, pb.Stream.PRESENT): bool_rle([True, False]),
        (1, pb.Stream.DATA): literal_rle_v1([4], signed=True),
        (2, pb.Stream.DATA): literal_rle_v1([1, 2], signed=True),
    }, [pb.ColumnEncoding.DIRECT] * 3)
    with pytest.raises(UnsupportedFeatureError, match="null map keys"):
        decode_column(t, streams, 1, DecodeOptions())


@pytest.mark.parametrize("lengths", [[2**31 - 1, 1], [2**62] * 4, [2**40]])
def test_list_lengths_past_arrow_offsets(lengths: list[int]) -> None:
    t = parse_type_string("array<int>")
    streams = make_streams({(0, pb.Stream.LENGTH): literal_rle_v1(lengths, signed=False)},
                           [pb.ColumnEncoding.DIRECT] * 2)
    with pytest.raises(UnsupportedFeatureError, match="32-bit offsets"):
        decode_column(t, streams, len(lengths), DecodeOptions())


def test_list_lengths_beyond_child_data() -> None:
    """Huge lengths with little child data fail on the child's stream, before allocating."""
    t = parse_type_string("array<bigint>")
    streams = make_streams({(0, pb.Stream.LENGTH): literal_rle_v1([2**29, 2**29], signed=False),
                            (1, pb.Stream.DATA): literal_rle_v1([1, 2, 3], signed=True)},
                           [pb.ColumnEncoding.DIRECT] * 2)
    with pytest.raises(CorruptFileError, match=r"column 1 \(bigint\), DATA"):
        decode_column(t, streams, 2, DecodeOptions())


def test_union_tag_out_of_range() -> None:
    t = parse_type_string("uniontype<int,string>")
    streams = make_streams({(0, pb.Stream.DATA): byte_rle([0, 2])},
                           [pb.ColumnEncoding.DIRECT] * 3)
    with pytest.raises(CorruptFileError, match="tag 2"):
        decode_column(t, streams, 2, DecodeOptions())


def test_struct_without_fields() -> None:
    t = parse_type_string("struct<s:struct<>>")
    streams = make_streams({(1, pb.Stream.PRESENT): bool_rle([True, False, True])},
                           [pb.ColumnEncoding.DIRECT] * 2)
    arr = decode_column(t, streams, 3, DecodeOptions())
    assert arr.to_pylist() == [{"s": {}}, {"s": None}, {"s": {}}]


def test_union_with_a_struct_first_branch_and_nulls() -> None:
    """Null union slots become nulls of child 0, here a struct whose fields line up.

    (Hand-built: pyorc's writer crashes on this shape once pyarrow is loaded.)
    """
    t = parse_type_string("struct<u:uniontype<struct<a:int>,string>>")
    streams = make_streams({
        (1, pb.Stream.PRESENT): bool_rle([True, False, True, True, False, True]),
        (1, pb.Stream.DATA): byte_rle([0, 1, 0, 0]),
        (3, pb.Stream.PRESENT): bool_rle([True, False, True]),
        (3, pb.Stream.DATA): literal_rle_v1([1, 3], signed=True),
        (4, pb.Stream.LENGTH): literal_rle_v1([1], signed=False),
        (4, pb.Stream.DATA): b"s",
    }, [pb.ColumnEncoding.DIRECT] * 5)
    got = decode_column(t, streams, 6, DecodeOptions())
    got.validate(full=True)
    assert got.to_pylist() == [{"u": {"a": 1}}, {"u": None}, {"u": "s"}, {"u": {"a": None}},
                               {"u": None}, {"u": {"a": 3}}]
    child = got.field(0).field(0)
    assert child.to_pylist() == [{"a": 1}, None, {"a": None}, None, {"a": 3}]


def test_unselected_map_values_read_as_nulls() -> None:
    """Selecting only map keys: the values' streams are not there, the values are null."""
    rows = [{"m": [("a", 1), ("b", 2)]}, {"m": None}, {"m": [("c", None)]}]
    schema = pa.schema([("m", pa.map_(pa.string(), pa.int64()))])
    data = pyarrow_orc_bytes(pa.Table.from_pylist(rows, schema=schema))
    tail, parts = stripes(data)
    # select_columns keeps a map's values (Arrow maps need them); the decoder must still
    # cope with a selection that leaves them out.
    assert select_columns(tail.schema, ["m.key"]) == {0, 1, 2, 3}
    selected = {0, 1, 2}
    s = parts[0].streams
    only = make_streams({k: v for k, v in s.streams.items() if k[0] in selected}, s.encodings)
    batch = decode_stripe(tail.schema, selected, only, parts[0].num_rows, DecodeOptions())
    assert batch.column(0).to_pylist() == [[("a", None), ("b", None)], None, [("c", None)]]
