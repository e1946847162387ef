"""Geospatial columns against ORC Java 2.3 (ORC-1903, PySpark 4.3's orc-core): files ORC Java
writes read in aorc to the same WKB values, CRS, algorithm and bounding-box statistics; files
aorc writes read in ORC Java the same way; pyarrow's and pyorc's ORC C++ refuse them cleanly.

One JVM (``tests/helpers/OrcGeoHelper.java``) writes every Java file and reads every file."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from helpers.geo_wkb import collection, linestring, point, polygon, random_values
from helpers.orc_java_enc import GEO_SOURCE, JavaReadResult, OrcJava, geo_jars, orc_java_or_none

import aorc
from aorc.format import geo

ROWS = 6_000
STRIDE = 1_000
STRIPE_ROWS = 2_500
#: Java files: (name, column spec, compression); aorc writes the same columns.
JAVA_FILES = [
    ("java-zlib", "id|bigint;g|geometry;h|geography|EPSG:4326|VINCENTY", "ZLIB"),
    ("java-none", "id|bigint;g|geometry|EPSG:3857;h|geography", "NONE"),
]
#: What the specs mean for aorc (crs, algorithm) of g and h.
EXPECTED_TYPES = {
    "java-zlib": ("geometry(OGC:CRS84)", "geography(EPSG:4326,VINCENTY)"),
    "java-none": ("geometry(EPSG:3857)", "geography(OGC:CRS84,SPHERICAL)"),
}
#: A few values of every kind and dimension, then ``ROWS`` laid out along x.
SPECIAL = [point(1, 2, 3), point(4, 5, 6, 7), polygon([[(0, 0), (3, 0), (0, 3), (0, 0)]]),
           collection([point(-50, -60), linestring([(-1, -1), (1, 1)])]),
           point(math.nan, math.nan)]


@dataclass
class GeoFiles:
    """Values written, the files (Java's and aorc's) and ORC Java's reading of each."""

    values: list[bytes | None]
    boxes: list[tuple[float, float, float, float] | None]
    paths: dict[str, Path]
    java: dict[str, JavaReadResult]
    raw: dict[str, str]


def _geo_fields(g: str, h: str) -> list[pa.Field]:
    gt = aorc.format.types.parse_type_string(f"struct<g:{g},h:{h}>")
    return list(aorc.format.types.to_arrow_schema(gt))[0:2]


def _table(values: list[bytes | None], g: str, h: str) -> pa.Table:
    fg, fh = _geo_fields(g, h)
    schema = pa.schema([pa.field("id", pa.int64()), fg, fh])
    geog = [None if v is None or i % 5 == 0 else v for i, v in enumerate(values)]
    return pa.table([pa.array(range(len(values)), pa.int64()), pa.array(values, pa.binary()),
                     pa.array(geog, pa.binary())], schema=schema)


@pytest.fixture(scope="module")
def geo_files(tmp_path_factory: pytest.TempPathFactory) -> GeoFiles:
    """ORC Java's files, aorc's files of the same table, and ORC Java's reading of all."""
    if geo_jars() is None:
        pytest.skip("needs PySpark 4.3's ORC Java 2.3 (ORC-1903) jars")
    java = orc_java_or_none(GEO_SOURCE)
    if java is None:
        pytest.skip("needs Java (javac) and PySpark's ORC Java jars")
    root = tmp_path_factory.mktemp("geo-java")
    values, boxes = random_values(ROWS, seed=36)
    values = [*SPECIAL, *values]
    boxes = [None] * len(SPECIAL) + boxes
    table = _table(values, "geometry", "geography")
    rows = root / "rows.txt"
    rows.write_text("".join(
        f"{i}\t{'' if g is None else g.hex()}\t{'' if h is None else h.hex()}\n"
        for i, g, h in zip(*(table.column(c).to_pylist() for c in ("id", "g", "h")),
                           strict=True)))
    paths: dict[str, Path] = {}
    commands = []
    for name, spec, codec in JAVA_FILES:
        paths[name] = root / f"{name}.orc"
        commands.append(["write", str(paths[name]), spec, str(STRIDE), str(STRIPE_ROWS), codec,
                         str(rows)])
        g, h = EXPECTED_TYPES[name]
        paths[name.replace("java", "aorc")] = root / f"{name.replace('java', 'aorc')}.orc"
        aorc.sync.write_table(_table(values, g, h), paths[name.replace("java", "aorc")],
                              compression=codec.lower(), row_index_stride=STRIDE,
                              stripe_size=64 << 10)
    names = list(paths)
    out = java.batch([*commands, *(["read", str(paths[n])] for n in names)])
    assert not any(o.strip() for o in out[:len(commands)]), out[:len(commands)]
    raw = dict(zip(names, out[len(commands):], strict=True))
    reads = {n: OrcJava.parse_read(o) for n, o in raw.items()}
    return GeoFiles(values, boxes, paths, reads, raw)


def _java_types(text: str) -> dict[int, dict[str, Any]]:
    """ORC Java's reading of the column types: ``string``, ``crs``, ``algorithm``."""
    return {int(line.split()[1]): json.loads(line.split(" ", 2)[2])
            for line in text.splitlines() if line.startswith("type ")}


def _java_stripes(text: str) -> dict[tuple[int, int], dict[str, Any]]:
    """ORC Java's reading of the stripe statistics by (stripe, column)."""
    out = {}
    for line in text.splitlines():
        if line.startswith("stripe "):
            _, stripe, column, rest = line.split(" ", 3)
            out[int(stripe), int(column)] = json.loads(rest)
    return out


def _java_box(stats: dict[str, Any]) -> geo.BoundingBox | None:
    if "bbox" not in stats:
        return None
    b = [float(v) for v in stats["bbox"]]
    if b[0] > b[1]:
        return None

    def pair(lo: float, hi: float) -> tuple[float | None, float | None]:
        return (None, None) if math.isnan(lo) or lo > hi else (lo, hi)

    return geo.BoundingBox(b[0], b[1], b[2], b[3], *pair(b[4], b[5]), *pair(b[6], b[7]))


def _expected_geometry_box(values: list[bytes | None]) -> geo.BoundingBox:
    """From the coordinates put into the values (SPECIAL's by hand)."""
    xs = [b for b in random_values(ROWS, seed=36)[1] if b is not None]
    return geo.BoundingBox(min(-50.0, *(b[0] for b in xs)), max(4.0, *(b[1] for b in xs)),
                           min(-60.0, *(b[2] for b in xs)), max(5.0, *(b[3] for b in xs)),
                           3.0, 6.0, 7.0, 7.0)


@pytest.mark.parametrize("name", [n for n, _, _ in JAVA_FILES])
def test_aorc_reads_java_files(geo_files: GeoFiles, name: str) -> None:
    path, java = geo_files.paths[name], geo_files.java[name]
    assert java.error is None
    with aorc.sync.open_reader(path) as r:
        table = r.read()
        g, h = r.orc_schema.children[1:]
        theirs = _java_types(geo_files.raw[name])
        assert [str(g), str(h)] == [theirs[2]["string"], theirs[3]["string"]] == list(
            EXPECTED_TYPES[name])
        assert (g.crs, h.crs) == (theirs[2]["crs"], theirs[3]["crs"])
        assert geo.ALGORITHMS[h.algorithm or 0] == theirs[3]["algorithm"].lower()
        assert table.column("g").to_pylist() == geo_files.values
        assert [row[1:] for row in _hex_rows(table)] == [row[1:] for row in java.rows]
        stats = r.statistics
        # the file statistics: as ORC Java reads them, and as the coordinates say
        assert stats[2].bbox == _java_box(java.stats[2]) == _expected_geometry_box(
            geo_files.values)
        assert stats[2].geospatial_types == tuple(java.stats[2]["types"]) == (1, 2, 3, 7, 1001,
                                                                              3001)
        assert stats[3].bbox is None and "bbox" not in java.stats[3]  # geography: no box
        assert stats[2].num_values == java.stats[2]["n"]
        assert len(r.stripes) == math.ceil(len(geo_files.values) / STRIPE_ROWS)
        stripes = _java_stripes(geo_files.raw[name])
        for s in r.stripes:
            java_stripe = stripes[s.index, 2]
            assert s.statistics[2].bbox == _java_box(java_stripe)
            assert s.statistics[2].geospatial_types == tuple(java_stripe["types"])


def _hex_rows(table: pa.Table) -> list[list[Any]]:
    return [[r["id"], None if r["g"] is None else r["g"].hex(),
             None if r["h"] is None else r["h"].hex()] for r in table.to_pylist()]


@pytest.mark.parametrize("name", [n.replace("java", "aorc") for n, _, _ in JAVA_FILES])
def test_java_reads_aorc_files(geo_files: GeoFiles, name: str) -> None:
    java = geo_files.java[name]
    assert java.error is None
    with aorc.sync.open_reader(geo_files.paths[name]) as r:
        table = r.read()
        ours = r.statistics
    assert java.rows == _hex_rows(table)
    assert [row[1] for row in java.rows] == [None if v is None else v.hex()
                                             for v in geo_files.values]
    assert _java_box(java.stats[2]) == ours[2].bbox == _expected_geometry_box(geo_files.values)
    assert tuple(java.stats[2]["types"]) == ours[2].geospatial_types
    assert "bbox" not in java.stats[3] and ours[3].bbox is None


def test_java_reads_aorc_types(geo_files: GeoFiles) -> None:
    """The CRS and algorithm aorc writes are those ORC Java reads, as in its own files."""
    for name, (g, h) in EXPECTED_TYPES.items():
        theirs = _java_types(geo_files.raw[name.replace("java", "aorc")])
        assert [theirs[2]["string"], theirs[3]["string"]] == [g, h]
        assert theirs == _java_types(geo_files.raw[name])


def test_stripe_statistics_of_aorc_files(geo_files: GeoFiles) -> None:
    """ORC Java reads aorc's stripe statistics as aorc wrote them."""
    for name in ("aorc-zlib", "aorc-none"):
        stripes = _java_stripes(geo_files.raw[name])
        with aorc.sync.open_reader(geo_files.paths[name]) as r:
            assert len(r.stripes) > 1
            for s in r.stripes:
                assert s.statistics[2].bbox == _java_box(stripes[s.index, 2])
                assert s.statistics[2].geospatial_types == tuple(stripes[s.index, 2]["types"])


def test_filters_prune_java_files(geo_files: GeoFiles) -> None:
    """aorc prunes ORC Java's row groups and stripes with their geospatial statistics."""
    box = (40.0, -2.0, 45.0, 2.0)
    expected = [i for i, b in enumerate(geo_files.boxes) if b is not None
                and b[0] <= box[2] and box[0] <= b[1] and b[2] <= box[3] and box[1] <= b[3]]
    assert expected
    for name in ("java-zlib", "aorc-zlib"):
        with aorc.sync.open_reader(geo_files.paths[name]) as r:
            got = r.read(filters=[("g", "intersects", box)], columns=["id"])
            scan = r.scan_stats
        assert got.column("id").to_pylist() == expected
        assert scan.stripes_pruned_by_stats + scan.row_groups_pruned_by_stats > 0, scan
        assert scan.row_groups_read < scan.row_groups_total


def test_pyarrow_and_pyorc_refuse_geospatial_files(geo_files: GeoFiles) -> None:
    """ORC C++ as pyarrow 26 and pyorc carry it knows the types but neither converts them:
    both refuse with an error, not a crash or wrong values."""
    po = pytest.importorskip("pyarrow.orc")
    pyorc = pytest.importorskip("pyorc")
    for name in ("java-zlib", "aorc-zlib"):
        with pytest.raises(pa.ArrowTypeError, match="geometry"):
            po.read_table(geo_files.paths[name])
        with open(geo_files.paths[name], "rb") as f, pytest.raises(ValueError):
            list(pyorc.Reader(f))


def test_footer_protobuf_as_orc_java_writes_it(geo_files: GeoFiles) -> None:
    """For the same values, aorc's footer holds the same geospatial type nodes and file
    statistics messages as ORC Java's (the box, the sorted codes; geography's empty
    message), field for field."""
    from aorc.format.tail import FileTail, parse_tail

    for name in ("java-zlib", "java-none"):
        tails = {}
        for who in (name, name.replace("java", "aorc")):
            data = geo_files.paths[who].read_bytes()
            tail = parse_tail(data, len(data))
            assert isinstance(tail, FileTail)
            tails[who] = tail.footer
        java, ours = tails.values()
        assert list(ours.types) == list(java.types)
        for column in (2, 3):
            assert ours.statistics[column].HasField("geospatialStatistics")
            assert (ours.statistics[column].geospatialStatistics
                    == java.statistics[column].geospatialStatistics)
            assert not ours.statistics[column].HasField("binaryStatistics")
            assert not java.statistics[column].HasField("binaryStatistics")
        assert java.statistics[3].geospatialStatistics.ByteSize() == 0
