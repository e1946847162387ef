"""aorc.iceberg.schema: the Iceberg spec's ORC appendix on every type node, data conversion
and its checks, field ids from attributes or a name mapping."""

from __future__ import annotations

import datetime
import io
import pathlib

import pyarrow as pa
import pyarrow.orc as po
import pytest
from helpers.iceberg import all_types_schema, table_data

import aorc
from aorc.errors import SchemaError
from aorc.iceberg.schema import field_ids, file_schema, to_file_batches

pyorc = pytest.importorskip("pyorc")

from pyiceberg.schema import Schema  # noqa: E402
from pyiceberg.table.name_mapping import create_mapping_from_schema  # noqa: E402
from pyiceberg.types import (  # noqa: E402
    FixedType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    UUIDType,
)

#: What Iceberg Java's ORCSchemaUtil puts on each node of all_types_schema() (by name path).
EXPECTED = {
    "b": {"iceberg.id": "1", "iceberg.required": "false"},
    "i": {"iceberg.id": "2", "iceberg.required": "false"},
    "l": {"iceberg.id": "3", "iceberg.required": "true", "iceberg.long-type": "LONG"},
    "f": {"iceberg.id": "4", "iceberg.required": "false"},
    "d": {"iceberg.id": "5", "iceberg.required": "false"},
    "dec": {"iceberg.id": "6", "iceberg.required": "false"},
    "dt": {"iceberg.id": "7", "iceberg.required": "false"},
    "ts": {"iceberg.id": "8", "iceberg.required": "false"},
    "tz": {"iceberg.id": "9", "iceberg.required": "false"},
    "s": {"iceberg.id": "10", "iceberg.required": "false"},
    "bin": {"iceberg.id": "11", "iceberg.required": "false", "iceberg.binary-type": "BINARY"},
    "st": {"iceberg.id": "12", "iceberg.required": "false"},
    "st.x": {"iceberg.id": "13", "iceberg.required": "false"},
    "st.y": {"iceberg.id": "14", "iceberg.required": "false"},
    "lst": {"iceberg.id": "15", "iceberg.required": "false"},
    "lst.element": {"iceberg.id": "16", "iceberg.required": "false",
                    "iceberg.long-type": "LONG"},
    "mp": {"iceberg.id": "17", "iceberg.required": "false"},
    "mp.key": {"iceberg.id": "18", "iceberg.required": "true"},
    "mp.value": {"iceberg.id": "19", "iceberg.required": "false"},
    "mp.value.a": {"iceberg.id": "20", "iceberg.required": "false"},
    "tm": {"iceberg.id": "21", "iceberg.required": "false", "iceberg.long-type": "TIME"},
    "u": {"iceberg.id": "22", "iceberg.required": "false", "iceberg.binary-type": "UUID"},
    "fx": {"iceberg.id": "23", "iceberg.required": "false", "iceberg.binary-type": "FIXED",
           "iceberg.length": "4"},
}
ORC_TYPES = {"b": "boolean", "i": "int", "l": "bigint", "f": "float", "d": "double",
             "dec": "decimal(10,2)", "dt": "date", "ts": "timestamp",
             "tz": "timestamp with local time zone", "s": "string", "bin": "binary",
             "tm": "bigint", "u": "binary", "fx": "binary"}


def _pyorc_nodes(node: object, path: str, out: dict[str, object]) -> None:
    """Every node of a pyorc type by name path (list element: .element, map: .key/.value)."""
    if path:
        out[path] = node
    prefix = f"{path}." if path else ""
    kind = type(node).__name__
    if kind == "Struct":
        for name, child in node.fields.items():  # type: ignore[attr-defined]
            _pyorc_nodes(child, prefix + name, out)
    elif kind == "Array":
        _pyorc_nodes(node.type, prefix + "element", out)  # type: ignore[attr-defined]
    elif kind == "Map":
        _pyorc_nodes(node.key, prefix + "key", out)  # type: ignore[attr-defined]
        _pyorc_nodes(node.value, prefix + "value", out)  # type: ignore[attr-defined]


async def test_every_node_carries_the_appendix_attributes(tmp_path: pathlib.Path) -> None:
    schema = all_types_schema()
    data = table_data(schema, 300, seed=1)
    path = tmp_path / "all.orc"
    batches = to_file_batches(schema, data)
    async with aorc.open_writer(path, file_schema(schema)) as writer:
        for b in batches:
            await writer.write(b)
    with path.open("rb") as f:  # ORC C++ sees them on every node
        nodes: dict[str, object] = {}
        _pyorc_nodes(pyorc.Reader(f).schema, "", nodes)
    assert {p: n.attributes for p, n in nodes.items()} == EXPECTED  # type: ignore[attr-defined]
    assert {p: str(n) for p, n in nodes.items() if p in ORC_TYPES} == ORC_TYPES
    # pyarrow.orc reads the file (attributes as field metadata) and its values
    read = po.ORCFile(str(path)).read()
    assert read.schema.field("tm").metadata[b"iceberg.long-type"] == b"TIME"
    assert read.column("l").to_pylist() == data.column("l").to_pylist()
    assert read.column("s").to_pylist() == data.column("s").to_pylist()
    micros = [None if t is None else ((t.hour * 60 + t.minute) * 60 + t.second) * 10**6
              + t.microsecond for t in data.column("tm").to_pylist()]
    assert read.column("tm").to_pylist() == micros
    assert read.column("u").to_pylist() == [None if u is None else u.bytes
                                            for u in data.column("u").to_pylist()]


def test_conversion_checks() -> None:
    schema = Schema(NestedField(1, "id", LongType(), required=True),
                    NestedField(2, "u", UUIDType()), NestedField(3, "fx", FixedType(3)),
                    NestedField(4, "ts", TimestampType()), NestedField(5, "s", StringType()))
    ok = pa.table({"id": pa.array([1, 2], pa.int32()), "s": pa.array(["a", "b"],
                                                                     pa.large_string())})
    [batch] = to_file_batches(schema, ok)
    assert batch.schema.names == ["id", "u", "fx", "ts", "s"]
    assert batch.column("id").type == pa.int64() and batch.column("u").null_count == 2
    with pytest.raises(SchemaError, match="required field 'id' holds nulls"):
        to_file_batches(schema, pa.table({"id": pa.array([1, None], pa.int64())}))
    with pytest.raises(SchemaError, match="required column 'id' is missing"):
        to_file_batches(schema, pa.table({"s": ["a"]}))
    with pytest.raises(SchemaError, match=r"columns \['nope'\] are not in"):
        to_file_batches(schema, pa.table({"id": [1], "nope": [1]}))
    with pytest.raises(SchemaError, match="16 bytes"):
        to_file_batches(schema, pa.table({"id": [1], "u": [b"short"]}))
    with pytest.raises(SchemaError, match="3 bytes"):
        to_file_batches(schema, pa.table({"id": [1], "fx": pa.array([b"abcd"], pa.binary(4))}))
    sub_micro = pa.array([datetime.datetime(2026, 1, 1)], pa.timestamp("ns")).cast(
        pa.int64()).to_numpy() + 1
    with pytest.raises(SchemaError, match="without losing data"):
        to_file_batches(schema, pa.table({"id": [1], "ts": pa.array(sub_micro.astype(
            "datetime64[ns]"))}))
    with pytest.raises(SchemaError, match="is timestamp in the Iceberg schema"):
        to_file_batches(schema, pa.table({"id": [1], "ts": pa.array(
            [datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)])}))
    with pytest.raises(SchemaError, match="is long in the Iceberg schema"):
        to_file_batches(schema, pa.table({"id": ["1"]}))


def test_field_ids_from_attributes_or_a_name_mapping() -> None:
    schema = all_types_schema()
    with_ids = aorc.format.types.from_arrow_schema(file_schema(schema))
    ids = field_ids(with_ids, None)
    assert not ids.from_mapping and sorted(ids.ids.values()) == list(range(1, 24))
    plain = pa.schema([pa.field(f.name, f.type) for f in po.ORCFile(_plain_file()).schema])
    root = aorc.format.types.from_arrow_schema(plain)
    with pytest.raises(SchemaError, match="name mapping"):
        field_ids(root, None, "plain.orc")
    mapped = field_ids(root, create_mapping_from_schema(Schema(
        NestedField(7, "x", LongType()), NestedField(9, "m", aorc_map_type()))))
    assert mapped.from_mapping
    names = {n.column_id: n for n in root.walk()}
    assert {cid: fid for cid, fid in mapped.ids.items()} == {
        1: 7, 2: 9, 3: 10, 4: 11}, names


def aorc_map_type() -> object:
    from pyiceberg.types import MapType
    return MapType(10, StringType(), 11, LongType())


def _plain_file() -> io.BytesIO:
    buf = io.BytesIO()
    po.write_table(pa.table({"x": [1], "m": pa.array([[("a", 1)]], pa.map_(pa.string(),
                                                                           pa.int64())),
                             "other": ["z"]}), buf)
    buf.seek(0)
    return buf
