"""The bounding-box filter of geospatial columns, ``(column, "intersects", (xmin, ymin, xmax,
ymax))``: it prunes stripes and row groups of aorc-written files by their geospatial
statistics, and its rows are those a brute-force check of each value's coordinates finds."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from helpers.geo_wkb import point, random_values

import aorc
from aorc.errors import SchemaError
from aorc.filters import spatial
from aorc.format import geo

ROWS = 20_000
STRIDE = 1_000


def _matches(boxes: list[tuple[float, float, float, float] | None],
             box: tuple[float, float, float, float]) -> list[int]:
    """Brute force, from the coordinates the values were built from."""
    xmin, ymin, xmax, ymax = box
    return [i for i, b in enumerate(boxes)
            if b is not None and b[0] <= xmax and xmin <= b[1] and b[2] <= ymax and ymin <= b[3]]


@pytest.fixture(scope="module")
def spatial_file(tmp_path_factory: pytest.TempPathFactory
                 ) -> tuple[Path, list[tuple[float, float, float, float] | None]]:
    values, boxes = random_values(ROWS, seed=7)
    fields = [pa.field("id", pa.int64()),
              pa.field("g", pa.binary(), metadata=geo.geoarrow_metadata(False, "OGC:CRS84",
                                                                         None)),
              pa.field("h", pa.binary(), metadata=geo.geoarrow_metadata(True, "OGC:CRS84", 0))]
    table = pa.table([pa.array(range(ROWS), pa.int64()), pa.array(values, pa.binary()),
                      pa.array(values, pa.binary())], schema=pa.schema(fields))
    path = tmp_path_factory.mktemp("geo-filter") / "points.orc"
    aorc.sync.write_table(table, path, row_index_stride=STRIDE, stripe_size=128 << 10)
    return path, boxes


BOXES = [
    (40.0, -2.0, 45.0, 2.0),  # a narrow band of x: most stripes and row groups pruned
    (0.0, -10.0, 0.5, 10.0),  # the first rows only
    (99.9, 9.0, 150.0, 20.0),  # the last rows, partly outside the data
    (200.0, -5.0, 300.0, 5.0),  # nothing
    (-180.0, -90.0, 180.0, 90.0),  # everything but the nulls
]


@pytest.mark.parametrize("box", BOXES)
def test_intersects_prunes_and_matches_brute_force(spatial_file: tuple[Path, list], box: tuple
                                                   ) -> None:
    path, boxes = spatial_file
    expected = _matches(boxes, box)
    with aorc.sync.open_reader(path) as r:
        assert r.num_stripes > 3
        got = r.read(filters=[("g", "intersects", box)], columns=["id"])
        scan = r.scan_stats
    assert got.column("id").to_pylist() == expected
    assert scan.rows_returned == len(expected)
    if box[2] - box[0] <= 50 and box != (-180.0, -90.0, 180.0, 90.0):
        # a box over a fraction of the x range skips most of the file
        assert scan.stripes_pruned_by_stats >= 1, scan
        assert scan.rows_read <= ROWS // 4, scan
    if box == BOXES[0]:
        assert scan.row_groups_pruned_by_stats >= 1, scan  # inside the kept stripe too
    if box == BOXES[-1]:
        assert scan.stripes_pruned_by_stats == scan.row_groups_pruned_by_stats == 0


def test_geography_is_filtered_but_not_pruned(spatial_file: tuple[Path, list]) -> None:
    """ORC Java (and so aorc) records no box for geography: every row group is read."""
    path, boxes = spatial_file
    box = BOXES[0]
    with aorc.sync.open_reader(path) as r:
        got = r.read(filters=[("h", "intersects", box)], columns=["id"])
        scan = r.scan_stats
        assert r.statistics["h"].bbox is None and r.statistics["g"].bbox is not None
    assert got.column("id").to_pylist() == _matches(boxes, box)
    assert scan.stripes_pruned_by_stats == scan.row_groups_pruned_by_stats == 0


def test_or_of_boxes_across_the_antimeridian_and_and_with_other_columns(
        spatial_file: tuple[Path, list]) -> None:
    path, boxes = spatial_file
    left, right = (0.0, -10.0, 1.0, 0.0), (99.0, 0.0, 100.0, 10.0)
    expected = sorted(set(_matches(boxes, left)) | set(_matches(boxes, right)))
    with aorc.sync.open_reader(path) as r:
        got = r.read(filters=[[("g", "intersects", left)], [("g", "intersects", right)]],
                     columns=["id"])
        assert got.column("id").to_pylist() == expected
        both = r.read(filters=[("g", "intersects", left), ("id", ">=", 100)], columns=["id"])
    assert both.column("id").to_pylist() == [i for i in _matches(boxes, left) if i >= 100]


def test_expression_form_evaluates_in_pyarrow() -> None:
    """The filter as a pyarrow expression (a registered scalar UDF) gives the rows' mask."""
    values = [point(1, 1), None, point(5, 5), b"\x01\x01\x00\x00\x00", point(2, 0)]
    table = pa.table({"g": pa.array(values, pa.binary())})
    expr = spatial.intersects(pc.field("g"), (0.0, 0.0, 2.0, 2.0))
    assert isinstance(expr, pc.Expression)
    assert table.filter(expr).column("g").to_pylist() == [point(1, 1), point(2, 0)]
    mask = spatial.intersects(table.column("g").combine_chunks(), (0.0, 0.0, 2.0, 2.0))
    assert mask.to_pylist() == [True, None, False, False, True]


@pytest.mark.parametrize(("flt", "match"), [
    (("g", "intersects", (1, 2, 3)), "takes a box"),
    (("g", "intersects", "POLYGON"), "takes a box"),
    (("g", "intersects", (3, 0, 1, 1)), "xmin <= xmax"),
    (("g", "intersects", (0, 0, float("inf"), 1)), "finite"),
    (("id", "intersects", (0, 0, 1, 1)), "geometry and geography"),
    (("g", "==", b"\x01"), "geometry and geography"),
])
def test_bad_filters_are_refused(spatial_file: tuple[Path, list], flt: tuple, match: str
                                 ) -> None:
    path, _ = spatial_file
    with aorc.sync.open_reader(path) as r, pytest.raises(SchemaError, match=match):
        r.read(filters=[flt])


def test_dataset_filter(tmp_path: Path) -> None:
    """A dataset of two files: the filter applies (and prunes) in each."""
    fields = [pa.field("id", pa.int64()),
              pa.field("g", pa.binary(), metadata=geo.geoarrow_metadata(False, "EPSG:3857",
                                                                         None))]
    for part, (lo, hi) in enumerate(((0.0, 10.0), (100.0, 110.0))):
        values = [point(lo + (hi - lo) * i / 500, 0.0) for i in range(500)]
        aorc.sync.write_table(pa.table([pa.array(range(part * 500, part * 500 + 500)),
                                        pa.array(values, pa.binary())],
                                       schema=pa.schema(fields)),
                              tmp_path / f"part-{part}.orc")
    got = aorc.sync.read_dataset(str(tmp_path), filters=[("g", "intersects", (105, -1, 200, 1))])
    assert sorted(got.column("id").to_pylist()) == list(range(750, 1000))
    assert got.schema.field("g").metadata == pa.schema(fields).field("g").metadata
