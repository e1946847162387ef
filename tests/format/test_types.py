"""ORC type tree: type strings, protobuf and Arrow mappings, column selection."""

from __future__ import annotations

import io
import json
import pathlib

import pyarrow as pa
import pyarrow.orc as po
import pytest

from aorc.errors import CorruptFileError, SchemaError
from aorc.format.projection import select_columns
from aorc.format.types import (
    ORC_ATTRIBUTES_METADATA_KEY,
    ORC_TYPE_METADATA_KEY,
    TypeKind,
    from_arrow_schema,
    parse_type_string,
    to_arrow_schema,
    to_proto,
    type_string,
    types_from_proto,
)

pyorc = pytest.importorskip("pyorc")

TYPE_STRINGS = [
    "struct<a:int>",
    "struct<a:boolean,b:tinyint,c:smallint,d:int,e:bigint,f:float,g:double,h:string,"
    "i:binary,j:timestamp,k:date,l:decimal(38,18),m:char(5),n:varchar(10)>",
    "struct<a:array<struct<x:int,y:map<string,array<double>>>>,b:uniontype<int,string>>",
    "struct<ts:timestamp with local time zone>",
    "bigint",
    "struct<>",
]


@pytest.mark.parametrize("text", TYPE_STRINGS)
def test_type_string_round_trip_agrees_with_pyorc(text: str) -> None:
    t = parse_type_string(text)
    assert type_string(t) == str(pyorc.TypeDescription.from_string(text))
    assert types_from_proto(to_proto(t)) == t


def test_column_ids_are_preorder() -> None:
    t = parse_type_string("struct<a:int,b:map<string,struct<c:int>>,d:array<int>>")
    assert [n.column_id for n in t.walk()] == list(range(8))
    assert pyorc.TypeDescription.from_string(type_string(t)).find_column_id("d") == 6
    assert t.max_column_id == 7


def test_arrow_schema_matches_pyarrow_orc() -> None:
    """The Arrow schema aorc derives for a file equals what pyarrow.orc reads."""
    table = pa.table(
        {
            "b": pa.array([True]),
            "i8": pa.array([1], pa.int8()),
            "i16": pa.array([1], pa.int16()),
            "i32": pa.array([1], pa.int32()),
            "i64": pa.array([1], pa.int64()),
            "f": pa.array([1.0], pa.float32()),
            "d": pa.array([1.0]),
            "s": pa.array(["x"]),
            "bin": pa.array([b"x"]),
            "ts": pa.array([1], pa.timestamp("ns")),
            "date": pa.array([1], pa.date32()),
            "dec": pa.array([1], pa.decimal128(20, 3)),
            "l": pa.array([[1]]),
            "st": pa.array([{"x": 1, "y": "a"}]),
            "m": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int64())),
        }
    )
    buf = io.BytesIO()
    po.write_table(table, buf)
    buf.seek(0)
    ours = to_arrow_schema(from_arrow_schema(table.schema))
    theirs = po.ORCFile(buf).schema
    assert ours.remove_metadata().equals(theirs.remove_metadata(), check_metadata=False)
    # The ORC type aorc would write equals what pyarrow (ORC C++) wrote.
    buf.seek(0)
    assert type_string(from_arrow_schema(table.schema)) == str(pyorc.Reader(buf).schema)


def test_char_varchar_keep_orc_type_in_metadata() -> None:
    t = parse_type_string("struct<c:char(3),v:varchar(7)>")
    schema = to_arrow_schema(t)
    assert schema.field("c").metadata[ORC_TYPE_METADATA_KEY] == b"char(3)"
    assert schema.field("v").type == pa.string()
    assert type_string(from_arrow_schema(schema)) == "struct<c:char(3),v:varchar(7)>"


def test_legacy_decimal() -> None:
    t = parse_type_string("struct<d:decimal(0,0)>")
    assert t.children[0].is_legacy_decimal
    assert to_arrow_schema(t).field("d").type == pa.decimal128(38, 10)


def test_non_struct_root_is_one_column() -> None:
    schema = to_arrow_schema(parse_type_string("timestamp"))
    assert schema.names == ["_col0"]


@pytest.mark.parametrize(
    "bad",
    ["struct<a:int", "struct<a>", "foo", "decimal(50,2)", "map<int>", "struct<a:int>x", "array<>"],
)
def test_bad_type_strings(bad: str) -> None:
    with pytest.raises(SchemaError):
        parse_type_string(bad)


def test_corrupt_proto_types() -> None:
    protos = to_proto(parse_type_string("struct<a:int,b:int>"))
    protos[0].subtypes[1] = 5
    with pytest.raises(CorruptFileError):
        types_from_proto(protos)
    with pytest.raises(CorruptFileError):
        types_from_proto([])
    protos = to_proto(parse_type_string("struct<a:int>"))
    protos[1].kind = TypeKind.LIST  # a list without its child
    with pytest.raises(CorruptFileError):
        types_from_proto(protos)


def test_select_columns() -> None:
    t = parse_type_string(
        "struct<a:int,b:map<string,struct<q:int,r:int>>,c:array<struct<x:int,y:int>>>"
    )
    assert select_columns(t, ["a"]) == {0, 1}
    assert select_columns(t, ["b.value.r"]) == {0, 2, 3, 4, 6}
    assert select_columns(t, ["c.x"]) == {0, 7, 8, 9}
    assert select_columns(t, None) == set(range(11))
    with pytest.raises(SchemaError):
        select_columns(t, ["nope"])
    with pytest.raises(SchemaError):
        select_columns(t, "a")


@pytest.mark.parametrize(("precision", "scale"), [(39, 0), (1 << 31, 2), (5, 6), (38, 39)])
def test_corrupt_decimal_precision(precision: int, scale: int) -> None:
    """Precision over 38 (more than Arrow's decimal128 holds) or a scale above the precision
    is refused, as ORC Java refuses it, instead of failing later in pyarrow."""
    protos = to_proto(parse_type_string("struct<d:decimal(10,2)>"))
    protos[1].precision, protos[1].scale = precision, scale
    with pytest.raises(CorruptFileError, match="decimal precision"):
        types_from_proto(protos)
    protos[1].precision, protos[1].scale = 38, 38  # the largest valid one still reads
    assert types_from_proto(protos).children[0].precision == 38


def _attrs(name: str) -> dict[bytes, bytes]:
    return {ORC_ATTRIBUTES_METADATA_KEY: json.dumps({"iceberg.id": name,
                                                    "note": f"n-{name}"}).encode()}


def test_attributes_on_every_node_reach_pyarrow_and_pyorc(tmp_path: pathlib.Path) -> None:
    """ORC:attributes field metadata becomes type attributes on every node -- columns, struct
    fields, list elements, map keys and values (the Iceberg spec's ORC appendix puts ids on
    all of them) -- and ORC C++ (pyarrow.orc, pyorc) reads them back."""
    import aorc.sync

    key = pa.field("key", pa.string(), nullable=False, metadata=_attrs("4"))
    value = pa.field("value", pa.list_(pa.field("element", pa.int32(), metadata=_attrs("6"))),
                     metadata=_attrs("5"))
    inner = pa.struct([pa.field("x", pa.float64(), metadata=_attrs("8"))])
    schema = pa.schema([
        pa.field("a", pa.int64(), metadata=_attrs("1")),
        pa.field("m", pa.map_(key, value), metadata=_attrs("3")),
        pa.field("s", inner, metadata=_attrs("7")),
    ])
    root = from_arrow_schema(schema)
    found = {dict(n.attributes).get("iceberg.id"): type_string(n) for n in root.walk()
             if n.attributes}
    assert found == {"1": "bigint", "3": "map<string,array<int>>", "4": "string",
                     "5": "array<int>", "6": "int", "7": "struct<x:double>", "8": "double"}
    table = pa.table({"a": [1, None], "m": [[("k", [1, None])], None],
                      "s": [{"x": 1.5}, None]}, schema=schema)
    path = tmp_path / "attrs.orc"
    aorc.sync.write_table(table, path)
    with aorc.sync.open_reader(path) as reader:
        assert [dict(n.attributes).get("iceberg.id") for n in reader.orc_schema.walk()] == \
            [None, "1", "3", "4", "5", "6", "7", "8"]
    read = po.ORCFile(str(path)).schema
    assert read.field("a").metadata[b"iceberg.id"] == b"1"
    assert read.field("m").metadata[b"iceberg.id"] == b"3"
    mt = read.field("m").type
    assert mt.item_field.metadata[b"iceberg.id"] == b"5"
    assert mt.item_field.type.value_field.metadata[b"iceberg.id"] == b"6"
    assert read.field("s").type.field("x").metadata[b"iceberg.id"] == b"8"
    assert po.ORCFile(str(path)).read().equals(pa.table(
        {"a": [1, None], "m": [[("k", [1, None])], None], "s": [{"x": 1.5}, None]},
        schema=pa.schema([(f.name, f.type) for f in read])))
    with path.open("rb") as f:
        orc = pyorc.Reader(f).schema
    assert orc.fields["a"].attributes == {"iceberg.id": "1", "note": "n-1"}
    assert orc.fields["m"].key.attributes == {"iceberg.id": "4", "note": "n-4"}
    assert orc.fields["m"].value.attributes == {"iceberg.id": "5", "note": "n-5"}
    assert orc.fields["m"].value.type.attributes == {"iceberg.id": "6", "note": "n-6"}
    assert orc.fields["s"].fields["x"].attributes == {"iceberg.id": "8", "note": "n-8"}


def test_selections_are_worked_out_once_per_tree() -> None:
    """select_columns and requested_order keep their answers per type tree and names (a
    dataset's files share their tree): the same answer again, in a set of the caller's own."""
    from aorc.format import projection as types_module
    from aorc.format.projection import requested_order, select_columns
    from aorc.format.types import from_arrow_schema

    root = from_arrow_schema(pa.schema([("a", pa.int64()), ("b", pa.struct([("c", pa.string())])),
                                       ("d", pa.float64())]))
    first = select_columns(root, ["d", "b.c"])
    assert first == {0, 2, 3, 4}
    first.add(99)  # the caller's set: the kept answer does not change
    assert select_columns(root, ["d", "b.c"]) == {0, 2, 3, 4}
    assert (id(root), ("d", "b.c")) in types_module._SELECTED
    assert requested_order(root, ["d", "a"]) == ["d", "a"]
    assert requested_order(root, ["a", "d"]) is None
    order = requested_order(root, ["d", "a"])
    assert order is not None
    order.append("x")
    assert requested_order(root, ["d", "a"]) == ["d", "a"]
    with pytest.raises(SchemaError, match="nope"):
        select_columns(root, ["nope"])
    with pytest.raises(SchemaError, match="nope"):
        requested_order(root, ["nope"])
