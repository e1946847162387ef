"""The bounding-box filter of geospatial columns: ``(column, "intersects", (xmin, ymin, xmax,
ymax))``.

A row matches when its GEOMETRY or GEOGRAPHY value's bounding box (the min/max of its x and y
coordinates, NaN ignored) shares a point with the query box, edges included; a null, empty or
unparseable value does not match (null gives null, as comparisons do). It is a bounding-box
test, the way spatial indexes work: a value whose box meets the query box may itself miss
it (refine with a geometry library when that matters).

Pruning reads the ``GeospatialStatistics`` bounding box of a stripe or row group: a group whose
box misses the query box holds no matching row. ORC Java records boxes for GEOMETRY columns
only, so GEOGRAPHY columns are filtered row by row but not pruned. The query box is compared
in the column's coordinates, planar: a box across the antimeridian is two filters OR-ed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from aorc.errors import SchemaError
from aorc.format import geo
from aorc.format.statistics import ColumnStatistics

__all__ = [
    "UDF_NAME",
    "Box",
    "box_outcome",
    "intersects",
    "parse_box",
]

#: A query box: (xmin, ymin, xmax, ymax).
Box = tuple[float, float, float, float]
#: The pyarrow.compute function (a scalar UDF registered on first use) that evaluates the
#: filter inside pyarrow expressions.
UDF_NAME = "aorc_wkb_bbox_intersects"


def parse_box(value: Any, where: str) -> Box:
    """The query box of an ``intersects`` filter: four finite numbers, min <= max.

    Raises:
        SchemaError: anything else.
    """
    try:
        if isinstance(value, str | bytes) or len(value) != 4:
            raise TypeError
        box = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise SchemaError(f"{where}: 'intersects' takes a box (xmin, ymin, xmax, ymax), "
                          f"got {value!r}") from None
    xmin, ymin, xmax, ymax = box
    if not all(map(math.isfinite, box)) or xmin > xmax or ymin > ymax:
        raise SchemaError(f"{where}: the box {value!r} needs finite bounds with xmin <= xmax "
                          "and ymin <= ymax")
    return xmin, ymin, xmax, ymax


def _value_box(value: bytes) -> tuple[float, float, float, float] | None:
    summary = geo.GeoSummary()
    try:
        geo.summarize_wkb(value, summary)
    except geo.InvalidWkbError:
        return None
    if summary.xmin > summary.xmax or summary.ymin > summary.ymax:
        return None
    return summary.xmin, summary.xmax, summary.ymin, summary.ymax


def _mask(values: pa.Array, box: Box) -> pa.Array:
    xmin, ymin, xmax, ymax = box
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.ExtensionArray):
        values = values.storage
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values.to_pylist()):
        own = None if v is None else _value_box(v)
        out[i] = own is not None and (own[0] <= xmax and xmin <= own[1]
                                      and own[2] <= ymax and ymin <= own[3])
    return pa.array(out, mask=np.asarray(values.is_null()))


def _udf(ctx: Any, values: Any, xmin: Any, ymin: Any, xmax: Any, ymax: Any) -> pa.Array:
    box = (xmin.as_py(), ymin.as_py(), xmax.as_py(), ymax.as_py())
    if isinstance(values, pa.Scalar):
        return _mask(pa.array([values.as_py()], pa.binary()), box)[0]
    return _mask(values, box)


def _registered() -> str:
    try:
        pc.get_function(UDF_NAME)
    except pa.ArrowKeyError:
        try:
            pc.register_scalar_function(
                _udf, UDF_NAME,
                {"summary": "WKB bounding box intersects a box",
                 "description": "aorc's 'intersects' filter on geospatial columns"},
                {"wkb": pa.binary(), "xmin": pa.float64(), "ymin": pa.float64(),
                 "xmax": pa.float64(), "ymax": pa.float64()}, pa.bool_())
        except pa.ArrowKeyError:  # registered meanwhile by another thread
            pass
    return UDF_NAME


def intersects(ref: Any, box: Box) -> Any:
    """The filter on rows: ``ref`` is a binary (WKB) array, giving a boolean array, or a
    pyarrow.compute expression, giving an expression (through a registered scalar UDF)."""
    if isinstance(ref, pc.Expression):
        return pc.Expression._call(_registered(), [ref, *(pc.scalar(float(b)) for b in box)])
    return _mask(ref, box)


def box_outcome(box: Box, stats: ColumnStatistics | None) -> tuple[bool, bool]:
    """Whether some non-null value of a group may match, and whether all surely do
    (``(may_match, all_match)``) given the group's statistics; all values surely matching is
    never claimed (a box holds values that miss the query box)."""
    bbox = None if stats is None else stats.bbox
    if bbox is None:
        return True, False
    xmin, ymin, xmax, ymax = box
    return bbox.intersects(xmin, ymin, xmax, ymax), False
