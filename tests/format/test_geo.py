"""Geospatial types (aorc.format.geo, the GEOMETRY/GEOGRAPHY parts of aorc.format.types and
of the statistics): WKB boxes and type codes, type strings, protobuf, GeoArrow metadata, and
hostile metadata and statistics."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pyarrow as pa
import pytest
from helpers.geo_wkb import collection, linestring, multi, point, polygon

import aorc
from aorc.errors import CorruptFileError, SchemaError
from aorc.format import geo
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.statistics import column_statistics_from_proto
from aorc.format.types import (
    TypeKind,
    from_arrow_schema,
    parse_type_string,
    to_arrow_schema,
    to_proto,
    type_string,
    types_from_proto,
)

NAN = math.nan


def _summary(*values: bytes) -> geo.GeoSummary:
    s = geo.GeoSummary()
    for v in values:
        geo.summarize_wkb(v, s)
    return s


def _box(s: geo.GeoSummary) -> tuple[float, ...]:
    return (s.xmin, s.xmax, s.ymin, s.ymax, s.zmin, s.zmax, s.mmin, s.mmax)


INF = math.inf
WKB_CASES = [
    # value, box (x, y, z, m pairs; inf/-inf for none), type codes
    (point(1, 2), (1, 1, 2, 2, INF, -INF, INF, -INF), {1}),
    (point(1, 2, big=True), (1, 1, 2, 2, INF, -INF, INF, -INF), {1}),
    (point(1, 2, 3), (1, 1, 2, 2, 3, 3, INF, -INF), {1001}),
    (point(1, 2, 5, m_only=True), (1, 1, 2, 2, INF, -INF, 5, 5), {2001}),
    (point(1, 2, 3, 4), (1, 1, 2, 2, 3, 3, 4, 4), {3001}),
    (linestring([(0, 0), (5, -3), (2, 9)]), (0, 5, -3, 9, INF, -INF, INF, -INF), {2}),
    (polygon([[(0, 0), (4, 0), (4, 4), (0, 0)], [(1, 1), (2, 1), (1, 2), (1, 1)]]),
     (0, 4, 0, 4, INF, -INF, INF, -INF), {3}),
    (multi(4, [point(1, 1), point(-1, 7)]), (-1, 1, 1, 7, INF, -INF, INF, -INF), {4}),
    (multi(5, [linestring([(0, 0), (1, 1)]), linestring([(3, 3), (2, 8)])]),
     (0, 3, 0, 8, INF, -INF, INF, -INF), {5}),
    (multi(6, [polygon([[(0, 0), (1, 0), (0, 1), (0, 0)]])]), (0, 1, 0, 1, INF, -INF, INF, -INF),
     {6}),
    (collection([point(9, 9), collection([linestring([(-2, 0), (0, -4)])])]),
     (-2, 9, -4, 9, INF, -INF, INF, -INF), {7}),
    # NaN ordinates are ignored; an all-NaN point is empty and counts for nothing
    (linestring([(NAN, 1), (2, NAN), (3, 4)]), (2, 3, 1, 4, INF, -INF, INF, -INF), {2}),
    (point(NAN, NAN), (INF, -INF, INF, -INF, INF, -INF, INF, -INF), set()),
    (collection([]), (INF, -INF, INF, -INF, INF, -INF, INF, -INF), set()),
]


@pytest.mark.parametrize(("value", "box", "codes"), WKB_CASES)
def test_wkb_box_and_type_codes(value: bytes, box: tuple[float, ...], codes: set[int]) -> None:
    s = _summary(value)
    assert _box(s) == box
    assert s.types == codes


def test_ewkb_flags_and_srid() -> None:
    # EWKB: Z flag and an SRID before the coordinates
    ewkb = struct.pack("<BIIddd", 1, 0x80000001 | 0x20000000, 4326, 1.0, 2.0, 3.0)
    s = _summary(ewkb)
    assert _box(s)[:6] == (1, 1, 2, 2, 3, 3)
    assert s.types == {1001}


def test_summaries_merge() -> None:
    s = _summary(point(1, 2), point(-5, 7, 3))
    assert _box(s)[:6] == (-5, 1, 2, 7, 3, 3)
    assert s.types == {1, 1001}


@pytest.mark.parametrize("bad", [
    b"", b"\x01", b"\x02\x01\x00\x00\x00", point(1, 2)[:-1], point(1, 2) + b"\x00",
    struct.pack("<BI", 1, 8),  # no such geometry type
    struct.pack("<BI", 1, 4001),  # no such dimension
    struct.pack("<BII", 1, 2, 2**31),  # 2**31 points in 0 bytes: refused before allocating
    struct.pack("<BII", 1, 7, 2**31),  # 2**31 parts likewise
])
def test_malformed_wkb_is_refused(bad: bytes) -> None:
    with pytest.raises(geo.InvalidWkbError):
        _summary(bad)


def test_wkb_nesting_is_bounded() -> None:
    value = point(0, 0)
    for _ in range(geo.MAX_WKB_DEPTH + 2):
        value = collection([value])
    with pytest.raises(geo.InvalidWkbError, match="nested"):
        _summary(value)


# --------------------------------------------------------------------------- types

@pytest.mark.parametrize(("text", "rendered", "crs", "algorithm"), [
    ("geometry", "geometry(OGC:CRS84)", "OGC:CRS84", None),
    ("geometry(EPSG:3857)", "geometry(EPSG:3857)", "EPSG:3857", None),
    ("geography", "geography(OGC:CRS84,SPHERICAL)", "OGC:CRS84", 0),
    ("geography(EPSG:4326,karney)", "geography(EPSG:4326,KARNEY)", "EPSG:4326", 4),
    ("geography(EPSG:4326)", "geography(EPSG:4326,SPHERICAL)", "EPSG:4326", 0),
])
def test_type_strings(text: str, rendered: str, crs: str, algorithm: int | None) -> None:
    t = parse_type_string(f"struct<g:{text}>").children[0]
    assert (t.crs, t.algorithm) == (crs, algorithm)
    assert type_string(t) == rendered  # ORC Java's TypeDescription.toString spelling
    assert parse_type_string(f"struct<g:{rendered}>").children[0] == t


def test_protobuf_as_orc_java_writes_it() -> None:
    root = parse_type_string("struct<g:geometry,h:geography(EPSG:4326,vincenty)>")
    protos = to_proto(root)
    assert protos[1].kind == pb.Type.GEOMETRY and protos[1].crs == "OGC:CRS84"
    assert not protos[1].HasField("algorithm")
    assert protos[2].kind == pb.Type.GEOGRAPHY and protos[2].crs == "EPSG:4326"
    assert protos[2].algorithm == pb.Type.VINCENTY
    assert types_from_proto(protos) == root
    # a type without crs or algorithm gets ORC Java's defaults
    bare = [pb.Type(kind=pb.Type.STRUCT, subtypes=[1, 2], fieldNames=["g", "h"]),
            pb.Type(kind=pb.Type.GEOMETRY), pb.Type(kind=pb.Type.GEOGRAPHY)]
    tree = types_from_proto(bare)
    assert [(c.crs, c.algorithm) for c in tree.children] == [("OGC:CRS84", None),
                                                              ("OGC:CRS84", 0)]


def test_arrow_fields_carry_geoarrow_metadata() -> None:
    root = parse_type_string("struct<g:geometry(EPSG:3857),h:geography(OGC:CRS84,thomas)>")
    schema = to_arrow_schema(root)
    assert schema.field("g").type == pa.binary()
    meta = {f.name: json.loads(f.metadata[geo.EXTENSION_METADATA_KEY]) for f in schema}
    assert {f.metadata[geo.EXTENSION_NAME_KEY] for f in schema} == {b"geoarrow.wkb"}
    assert meta["g"] == {"crs": "EPSG:3857", "crs_type": "authority_code"}
    assert meta["h"] == {"crs": "OGC:CRS84", "crs_type": "authority_code", "edges": "thomas"}
    assert from_arrow_schema(schema) == root


def test_projjson_crs_round_trips() -> None:
    projjson = '{"type":"GeographicCRS","name":"WGS 84","id":{"authority":"EPSG","code":4326}}'
    field = pa.field("g", pa.binary(), metadata=geo.geoarrow_metadata(False, projjson, None))
    assert json.loads(field.metadata[geo.EXTENSION_METADATA_KEY])["crs_type"] == "projjson"
    t = from_arrow_schema(pa.schema([field])).children[0]
    assert t.kind == TypeKind.GEOMETRY and json.loads(t.crs or "") == json.loads(projjson)


class _Wkb(pa.ExtensionType):
    def __init__(self, meta: bytes) -> None:
        self._meta = meta
        super().__init__(pa.binary(), "geoarrow.wkb")

    def __arrow_ext_serialize__(self) -> bytes:
        return self._meta

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> _Wkb:
        return cls(serialized)


def test_registered_extension_type_is_written(tmp_path: Path) -> None:
    """A ``geoarrow.wkb`` extension array (as geoarrow-pyarrow makes) writes as GEOGRAPHY when
    its edges are spherical, and reads back as binary with the same metadata."""
    ext = _Wkb(b'{"crs":"OGC:CRS84","edges":"spherical"}')
    arr = pa.ExtensionArray.from_storage(ext, pa.array([point(1, 2), None], pa.binary()))
    path = tmp_path / "ext.orc"
    aorc.sync.write_table(pa.table({"g": arr}), path)
    with aorc.sync.open_reader(path) as r:
        assert r.orc_type == \
            "struct<g:geography(OGC:CRS84,SPHERICAL)>"
        table = r.read()
    assert table.column("g").to_pylist() == [point(1, 2), None]


def test_unknown_edges_or_bad_metadata_are_refused() -> None:
    for meta in (b'{"edges":"zigzag"}', b"[1]", b"{"):
        field = pa.field("g", pa.binary(), metadata={geo.EXTENSION_NAME_KEY: b"geoarrow.wkb",
                                                     geo.EXTENSION_METADATA_KEY: meta})
        with pytest.raises(SchemaError):
            from_arrow_schema(pa.schema([field]))


def test_string_values_are_refused(tmp_path: Path) -> None:
    field = pa.field("g", pa.string(), metadata=geo.geoarrow_metadata(False, "OGC:CRS84", None))
    with pytest.raises(SchemaError, match="WKB values must be binary"):
        aorc.sync.write_table(pa.table({"g": pa.array(["POINT (1 2)"])},
                                       schema=pa.schema([field])), tmp_path / "s.orc")


def test_invalid_wkb_is_refused_when_writing_geometry(tmp_path: Path) -> None:
    field = pa.field("g", pa.binary(), metadata=geo.geoarrow_metadata(False, "OGC:CRS84", None))
    with pytest.raises(SchemaError, match="not WKB"):
        aorc.sync.write_table(pa.table({"g": pa.array([point(1, 2), b"\x01\x01"])},
                                       schema=pa.schema([field])), tmp_path / "bad.orc")


# --------------------------------------------------------------------------- hostile input

def _bbox_stats(**fields: float) -> pb.ColumnStatistics:
    p = pb.ColumnStatistics(numberOfValues=3)
    for k, v in fields.items():
        setattr(p.geospatialStatistics.bbox, k, v)
    return p


@pytest.mark.parametrize("fields", [
    {"xmin": 0.0, "ymin": 0.0, "ymax": 1.0},  # xmax missing
    {"xmin": 0.0, "xmax": 1.0},  # no y at all
    {"xmin": NAN, "xmax": 1.0, "ymin": 0.0, "ymax": 1.0},
    {"xmin": 2.0, "xmax": 1.0, "ymin": 0.0, "ymax": 1.0},
    {"xmin": 0.0, "xmax": 1.0, "ymin": 0.0, "ymax": 1.0, "zmin": 3.0},
])
def test_malformed_bounding_boxes_are_corrupt(fields: dict[str, float]) -> None:
    t = parse_type_string("geometry")
    with pytest.raises(CorruptFileError, match="bounding box"):
        column_statistics_from_proto(_bbox_stats(**fields), t)


def test_bad_type_codes_are_corrupt() -> None:
    p = pb.ColumnStatistics(numberOfValues=1)
    p.geospatialStatistics.geospatialTypes.extend([1, 4008])
    with pytest.raises(CorruptFileError, match="WKB type 4008"):
        column_statistics_from_proto(p, parse_type_string("geometry"))


def test_good_statistics_view() -> None:
    p = _bbox_stats(xmin=0.0, xmax=1.0, ymin=-1.0, ymax=2.0, zmin=5.0, zmax=6.0)
    p.geospatialStatistics.geospatialTypes.extend([1001, 1])
    s = column_statistics_from_proto(p)  # kind inferred from the message, as ORC Java does
    assert s.kind == TypeKind.GEOMETRY
    assert s.bbox == geo.BoundingBox(0.0, 1.0, -1.0, 2.0, 5.0, 6.0)
    assert s.geospatial_types == (1, 1001)
    assert s.to_dict()["bbox"] == {"xmin": 0.0, "xmax": 1.0, "ymin": -1.0, "ymax": 2.0,
                                   "zmin": 5.0, "zmax": 6.0}


def _rewrite_footer(path: Path, edit: object) -> bytes:
    """The file at ``path`` (written uncompressed) with its footer edited by ``edit``."""
    data = path.read_bytes()
    ps_len = data[-1]
    ps = pb.PostScript.FromString(data[-1 - ps_len:-1])
    assert ps.compression == pb.NONE
    footer_start = len(data) - 1 - ps_len - ps.footerLength
    footer = pb.Footer.FromString(data[footer_start:footer_start + ps.footerLength])
    edit(footer)  # type: ignore[operator]
    body = footer.SerializeToString()
    ps.footerLength = len(body)
    tail = ps.SerializeToString()
    return data[:footer_start] + body + tail + bytes([len(tail)])


@pytest.mark.parametrize("edit", ["algorithm", "crs", "bbox"])
def test_hostile_metadata_in_a_file_is_corrupt(tmp_path: Path, edit: str) -> None:
    field = pa.field("g", pa.binary(), metadata=geo.geoarrow_metadata(True, "OGC:CRS84", 0))
    path = tmp_path / "good.orc"
    aorc.sync.write_table(pa.table({"g": pa.array([point(1, 2)])}, schema=pa.schema([field])),
                          path, compression="none")

    def change(footer: pb.Footer) -> None:
        t = footer.types[1]
        if edit == "algorithm":
            t.algorithm = 4
            raw = t.SerializeToString()  # then an algorithm number no reader knows
            footer.types[1].Clear()
            footer.types[1].MergeFromString(raw.replace(b"\x48\x04", b"\x48\x63"))
        elif edit == "crs":
            footer.types[1].MergeFromString(b"\x42\x02\xff\xfe")  # crs: not UTF-8
        else:
            box = footer.statistics[1].geospatialStatistics.bbox
            box.xmin, box.xmax, box.ymin = 5.0, 1.0, 0.0
            box.ymax = 1.0

    bad = tmp_path / "bad.orc"
    bad.write_bytes(_rewrite_footer(path, change))
    with pytest.raises(CorruptFileError):
        with aorc.sync.open_reader(bad) as r:
            r.read()
            _ = r.statistics


def test_other_extension_types_are_still_refused(tmp_path: Path) -> None:
    arr = pa.array([b"0123456789abcdef"], pa.uuid())
    with pytest.raises(SchemaError, match="extension<arrow.uuid>"):
        aorc.sync.write_table(pa.table({"u": arr}), tmp_path / "u.orc")


def test_merge_statistics_as_orc_java() -> None:
    """Stripe statistics fold into file statistics: boxes and codes united; geography stays
    an empty message."""
    from aorc.format.columns.encode.statistics import merge_statistics

    a = _bbox_stats(xmin=0.0, xmax=1.0, ymin=0.0, ymax=1.0)
    a.geospatialStatistics.geospatialTypes.append(1)
    b = _bbox_stats(xmin=-3.0, xmax=0.5, ymin=2.0, ymax=4.0, mmin=1.0, mmax=2.0)
    b.geospatialStatistics.geospatialTypes.extend([2, 2002])
    merged = merge_statistics(a, b, parse_type_string("geometry"))
    assert merged.numberOfValues == 6
    box = merged.geospatialStatistics.bbox
    assert (box.xmin, box.xmax, box.ymin, box.ymax) == (-3.0, 1.0, 0.0, 4.0)
    assert (box.mmin, box.mmax) == (1.0, 2.0) and not box.HasField("zmin")
    assert list(merged.geospatialStatistics.geospatialTypes) == [1, 2, 2002]
    empty = pb.ColumnStatistics(numberOfValues=2)
    empty.geospatialStatistics.SetInParent()
    geog = merge_statistics(empty, empty, parse_type_string("geography"))
    assert geog.HasField("geospatialStatistics")
    assert geog.geospatialStatistics == pb.GeospatialStatistics()


def test_mutated_wkb_raises_only_invalid_wkb() -> None:
    """Hostile values: truncations and byte flips of valid WKB either parse or raise
    InvalidWkbError (never another exception, never a huge allocation)."""
    import random

    rng = random.Random(36)
    seeds = [value for value, _, _ in WKB_CASES]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            if data and rng.random() < 0.8:
                data[rng.randrange(len(data))] = rng.randrange(256)
            else:
                del data[rng.randrange(len(data) + 1):]
        try:
            _summary(bytes(data))
        except geo.InvalidWkbError:
            pass
