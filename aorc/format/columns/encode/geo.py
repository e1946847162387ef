"""GEOMETRY and GEOGRAPHY columns: encoded as BINARY columns are, with geospatial statistics.

As ORC Java 2.3's ``GeospatialTreeWriter``: DIRECT_V2 (DATA and LENGTH streams), bloom filters
of the WKB bytes when asked for, and ``GeospatialStatistics`` instead of binary statistics --
the bounding box and WKB type codes of GEOMETRY values, an empty message for GEOGRAPHY. A
value that is not well-formed WKB is refused, as ORC Java refuses it.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from aorc.errors import SchemaError
from aorc.format import geo
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.columns.encode.base import EncodeLevel, ValueParts, group_bounds, register
from aorc.format.columns.encode.statistics import BinaryStats, Stats, register_stats
from aorc.format.columns.encode.strings import encode_binary
from aorc.format.types import TypeKind

__all__ = ["GeographyStats", "GeometryStats", "encode_geospatial"]


class GeometryStats(Stats):
    """GEOMETRY columns: bounding box and WKB type codes (ORC Java's
    ``GeospatialStatisticsImpl``)."""

    __slots__ = ("summary",)
    #: Whether values update the box (ORC Java computes none for GEOGRAPHY).
    planar = True

    def __init__(self) -> None:
        super().__init__()
        self.summary = geo.GeoSummary()

    def merge(self, other: Stats) -> None:  # noqa: D102
        if isinstance(other, GeometryStats):
            self.summary.merge(other.summary)
        super().merge(other)

    def _fill(self, p: pb.ColumnStatistics) -> None:
        self.summary.fill(p.geospatialStatistics)

    def _read(self, p: pb.ColumnStatistics) -> None:
        self.summary.read(p)


class GeographyStats(GeometryStats):
    """GEOGRAPHY columns: an empty ``GeospatialStatistics``, as ORC Java 2.3 writes."""

    __slots__ = ()
    planar = False


register_stats(GeometryStats, [TypeKind.GEOMETRY], "geospatialStatistics")
register_stats(GeographyStats, [TypeKind.GEOGRAPHY], "geospatialStatistics")


@register(TypeKind.GEOMETRY, TypeKind.GEOGRAPHY)
def encode_geospatial(level: EncodeLevel, values: pa.Array, vstarts: npt.NDArray[np.int64],
                      groups: list[GeometryStats]) -> ValueParts:
    """Encode a geometry or geography column's (non-null WKB) values.

    Raises:
        SchemaError: a value is not well-formed WKB.
    """
    parts = encode_binary(level, values, vstarts, [BinaryStats() for _ in groups])
    if groups and groups[0].planar:
        starts, ends = group_bounds(vstarts, len(values))
        wkb = values.to_pylist()
        for g, a, b in zip(groups, starts.tolist(), ends.tolist(), strict=True):
            for i in range(a, b):
                try:
                    geo.summarize_wkb(wkb[i], g.summary)
                except geo.InvalidWkbError as exc:
                    raise SchemaError(f"value {i} of a geometry column is not WKB: {exc}"
                                      ) from None
    return dataclasses.replace(parts, stats=groups)
