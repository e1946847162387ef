"""Geospatial columns: ORC's GEOMETRY and GEOGRAPHY types (ORC-1903) and their statistics.

A GEOMETRY or GEOGRAPHY column holds one WKB (well-known binary) value per row, stored as a
BINARY column is (DIRECT_V2: PRESENT, DATA, LENGTH). Its type carries a coordinate reference
system (``crs``, ``OGC:CRS84`` when absent) and, for GEOGRAPHY, the edge-interpolation
algorithm (``algorithm``: spherical, vincenty, thomas, andoyer, karney).

ORC Java 2.3 records ``GeospatialStatistics`` for GEOMETRY columns: the bounding box of the
values (x/y always, z and m when some coordinate has them; NaN coordinates ignored, empty
geometries skipped) and the sorted ISO WKB type codes (1 point .. 7 collection, plus 1000 for
Z, 2000 for M, 3000 for ZM). For GEOGRAPHY columns it writes an empty message. This module
parses WKB far enough to compute both, reads them back from protobuf (refusing malformed
ones with :class:`~aorc.errors.CorruptFileError`), and maps the types to GeoArrow's
``geoarrow.wkb`` extension metadata.

It imports nothing above :mod:`aorc.format` and no other type module, so that
:mod:`aorc.format.types` and the statistics modules can use it.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from google.protobuf import unknown_fields

from aorc.errors import CorruptFileError, SchemaError
from aorc.format._proto import orc_proto_pb2 as pb
from aorc.format.unwritable import unwritable

__all__ = [
    "ALGORITHMS",
    "DEFAULT_CRS",
    "EXTENSION_METADATA_KEY",
    "EXTENSION_NAME_KEY",
    "GEOARROW_WKB",
    "BoundingBox",
    "GeoSummary",
    "InvalidWkbError",
    "algorithm_number",
    "bbox_from_proto",
    "geoarrow_metadata",
    "geospatial_from_arrow",
    "geospatial_from_proto",
    "geospatial_of_field",
    "summarize_wkb",
    "types_from_proto",
]

#: The CRS ORC Java gives a geospatial type that names none (longitude/latitude on WGS 84).
DEFAULT_CRS = "OGC:CRS84"
#: Edge-interpolation algorithms, indexed by their protobuf number.
ALGORITHMS = ("spherical", "vincenty", "thomas", "andoyer", "karney")
#: GeoArrow's extension name for WKB values in a binary array.
GEOARROW_WKB = "geoarrow.wkb"
#: Arrow field metadata keys of an extension type (what an unregistered extension carries).
EXTENSION_NAME_KEY = b"ARROW:extension:name"
EXTENSION_METADATA_KEY = b"ARROW:extension:metadata"

#: Deepest nesting of WKB collections accepted (each level costs at least 9 bytes anyway).
MAX_WKB_DEPTH = 64
_BASE_TYPES = range(1, 8)
#: ``Type.algorithm``'s field number: an algorithm number protobuf does not know lands in the
#: unknown fields under it.
_ALGORITHM_FIELD = 9
_DIMENSION_OFFSETS = (0, 1000, 2000, 3000)


class InvalidWkbError(ValueError):
    """A value is not well-formed WKB (raised while writing; the writer wraps it)."""


def algorithm_number(name: str) -> int:
    """The protobuf number of an edge-interpolation algorithm, by name (any case).

    Raises:
        SchemaError: for an unknown name.
    """
    try:
        return ALGORITHMS.index(name.lower())
    except ValueError:
        raise SchemaError(f"unknown edge-interpolation algorithm {name!r} (known: "
                          f"{', '.join(ALGORITHMS)})") from None


# --------------------------------------------------------------------------- Arrow metadata


def _crs_type(crs: str) -> str | None:
    if crs.lstrip().startswith("{"):
        return "projjson"
    if ":" in crs and " " not in crs.strip():
        return "authority_code"
    return None


def geoarrow_metadata(geography: bool, crs: str, algorithm: int | None) -> dict[bytes, bytes]:
    """Arrow field metadata marking a binary field as ``geoarrow.wkb`` with its CRS and edges
    (GeoArrow's extension metadata: ``crs``, ``crs_type``, ``edges``)."""
    meta: dict[str, object] = {}
    crs_type = _crs_type(crs)
    if crs_type == "projjson":
        try:
            meta["crs"] = json.loads(crs)
        except ValueError:
            meta["crs"] = crs
            crs_type = None
    else:
        meta["crs"] = crs
    if crs_type is not None:
        meta["crs_type"] = crs_type
    if geography:
        meta["edges"] = ALGORITHMS[algorithm or 0]
    return {EXTENSION_NAME_KEY: GEOARROW_WKB.encode(),
            EXTENSION_METADATA_KEY: json.dumps(meta, separators=(",", ":")).encode()}


def geospatial_from_arrow(extension_name: str | bytes | None, extension_metadata: str | bytes |
                          None) -> tuple[bool, str, int | None] | None:
    """``(geography, crs, algorithm)`` for a ``geoarrow.wkb`` field, else ``None``: planar
    edges (or none) give GEOMETRY, any other ``edges`` value GEOGRAPHY with that algorithm.

    Raises:
        SchemaError: for metadata that is not a JSON object or names an unknown algorithm.
    """
    if isinstance(extension_name, bytes):
        extension_name = extension_name.decode("utf-8", "replace")
    if extension_name != GEOARROW_WKB:
        return None
    try:
        meta = json.loads(extension_metadata or "{}")
    except ValueError as exc:
        raise SchemaError("geoarrow.wkb metadata is not JSON") from exc
    if not isinstance(meta, dict):
        raise SchemaError("geoarrow.wkb metadata must be a JSON object")
    crs = meta.get("crs")
    if crs is None:
        crs_text = DEFAULT_CRS
    elif isinstance(crs, str):
        crs_text = crs
    else:
        crs_text = json.dumps(crs, separators=(",", ":"))
    edges = meta.get("edges") or "planar"
    if edges == "planar":
        return False, crs_text, None
    return True, crs_text, algorithm_number(str(edges))


# --------------------------------------------------------------------------- protobuf


def geospatial_of_field(dt: pa.DataType, metadata: dict[bytes, bytes] | None
                        ) -> tuple[bool, str, int | None] | None:
    """``(geography, crs, algorithm)`` for a ``geoarrow.wkb`` extension type or a binary
    field carrying its extension metadata, else ``None``.

    Raises:
        UnwritableTypeError: for an extension type other than ``geoarrow.wkb``.
        SchemaError: for bad ``geoarrow.wkb`` metadata.
    """
    if isinstance(dt, pa.BaseExtensionType):
        if dt.extension_name != GEOARROW_WKB:
            raise unwritable(dt)
        serialize = getattr(dt, "__arrow_ext_serialize__", None)
        return geospatial_from_arrow(dt.extension_name,
                                     serialize() if serialize is not None else None)
    if metadata and EXTENSION_NAME_KEY in metadata:
        return geospatial_from_arrow(metadata[EXTENSION_NAME_KEY],
                                     metadata.get(EXTENSION_METADATA_KEY))
    return None


def geospatial_from_proto(p: pb.Type, cid: int) -> tuple[str, int | None]:
    """``(crs, algorithm)`` of a GEOMETRY (algorithm ``None``) or GEOGRAPHY type node.

    Raises:
        CorruptFileError: for a CRS that is not UTF-8 text or an unknown algorithm.
    """
    crs = p.crs if p.HasField("crs") else DEFAULT_CRS
    if isinstance(crs, bytes) or "\x00" in crs:
        raise CorruptFileError(f"column {cid}: the CRS of a geospatial type is not valid text")
    if p.kind != pb.Type.GEOGRAPHY:
        return crs, None
    if not p.HasField("algorithm") and any(
            f.field_number == _ALGORITHM_FIELD for f in unknown_fields.UnknownFieldSet(p)):
        raise CorruptFileError(f"column {cid}: unknown edge-interpolation algorithm")
    algorithm = p.algorithm if p.HasField("algorithm") else 0
    if not 0 <= algorithm < len(ALGORITHMS):
        raise CorruptFileError(f"column {cid}: unknown edge-interpolation algorithm {algorithm}")
    return crs, algorithm


@dataclass(frozen=True)
class BoundingBox:
    """The box around the values of a geospatial column (a file, stripe or row group).

    Attributes:
        xmin: smallest x (longitude for geographic CRSs).
        xmax: largest x.
        ymin: smallest y (latitude).
        ymax: largest y.
        zmin: smallest z, when some value has z.
        zmax: largest z.
        mmin: smallest m, when some value has m.
        mmax: largest m.
    """

    xmin: float
    xmax: float
    ymin: float
    ymax: float
    zmin: float | None = None
    zmax: float | None = None
    mmin: float | None = None
    mmax: float | None = None

    def intersects(self, xmin: float, ymin: float, xmax: float, ymax: float) -> bool:
        """Whether this box and the query box (edges included) share a point."""
        return (self.xmin <= xmax and xmin <= self.xmax
                and self.ymin <= ymax and ymin <= self.ymax)


def _pair(box: pb.BoundingBox, lo: str, hi: str, cid: int | None, required: bool
          ) -> tuple[float | None, float | None]:
    has_lo, has_hi = box.HasField(lo), box.HasField(hi)
    where = "" if cid is None else f"column {cid}: "
    if has_lo != has_hi or required and not has_lo:
        raise CorruptFileError(f"{where}geospatial bounding box has {lo} or {hi} alone")
    if not has_lo:
        return None, None
    a, b = getattr(box, lo), getattr(box, hi)
    if math.isnan(a) or math.isnan(b) or a > b:
        raise CorruptFileError(f"{where}geospatial bounding box has {lo}={a} and {hi}={b}")
    return a, b


def bbox_from_proto(p: pb.ColumnStatistics, cid: int | None = None) -> BoundingBox | None:
    """The bounding box of a statistics message, ``None`` when it records none.

    Raises:
        CorruptFileError: for a box with one bound of a pair, NaN bounds or min > max.
    """
    if not p.HasField("geospatialStatistics"):
        return None
    g = p.geospatialStatistics
    if not g.HasField("bbox"):
        return None
    box = g.bbox
    x = _pair(box, "xmin", "xmax", cid, True)
    y = _pair(box, "ymin", "ymax", cid, True)
    z = _pair(box, "zmin", "zmax", cid, False)
    m = _pair(box, "mmin", "mmax", cid, False)
    return BoundingBox(x[0], x[1], y[0], y[1], z[0], z[1], m[0], m[1])  # type: ignore[arg-type]


def types_from_proto(p: pb.ColumnStatistics, cid: int | None = None) -> tuple[int, ...] | None:
    """The sorted WKB type codes of a statistics message, ``None`` when it records none.

    Raises:
        CorruptFileError: for a code that is no WKB geometry type.
    """
    if not p.HasField("geospatialStatistics"):
        return None
    codes = p.geospatialStatistics.geospatialTypes
    if not codes:
        return None
    for code in codes:
        if code % 1000 not in _BASE_TYPES or code // 1000 * 1000 not in _DIMENSION_OFFSETS:
            where = "" if cid is None else f"column {cid}: "
            raise CorruptFileError(f"{where}geospatial statistics name WKB type {code}")
    return tuple(sorted(set(codes)))


# --------------------------------------------------------------------------- WKB


@dataclass
class GeoSummary:
    """Running bounding box and type codes of WKB values, as ORC Java's geometry statistics
    compute them (infinite bounds mean none seen yet)."""

    xmin: float = math.inf
    xmax: float = -math.inf
    ymin: float = math.inf
    ymax: float = -math.inf
    zmin: float = math.inf
    zmax: float = -math.inf
    mmin: float = math.inf
    mmax: float = -math.inf

    def __post_init__(self) -> None:
        self.types: set[int] = set()

    def merge(self, other: GeoSummary) -> None:
        """Fold ``other`` in."""
        self.xmin, self.xmax = min(self.xmin, other.xmin), max(self.xmax, other.xmax)
        self.ymin, self.ymax = min(self.ymin, other.ymin), max(self.ymax, other.ymax)
        self.zmin, self.zmax = min(self.zmin, other.zmin), max(self.zmax, other.zmax)
        self.mmin, self.mmax = min(self.mmin, other.mmin), max(self.mmax, other.mmax)
        self.types |= other.types

    def fill(self, g: pb.GeospatialStatistics) -> None:
        """Write the box (when x and y were seen) and the sorted codes into ``g``."""
        g.SetInParent()
        if self.xmin <= self.xmax and self.ymin <= self.ymax:
            b = g.bbox
            b.xmin, b.xmax, b.ymin, b.ymax = self.xmin, self.xmax, self.ymin, self.ymax
            if self.zmin <= self.zmax:
                b.zmin, b.zmax = self.zmin, self.zmax
            if self.mmin <= self.mmax:
                b.mmin, b.mmax = self.mmin, self.mmax
        g.geospatialTypes.extend(sorted(self.types))

    def read(self, p: pb.ColumnStatistics) -> None:
        """Take the box and codes of a statistics message (for merging)."""
        box = bbox_from_proto(p)
        if box is not None:
            self.merge(GeoSummary(box.xmin, box.xmax, box.ymin, box.ymax,
                                  *_or_empty(box.zmin, box.zmax), *_or_empty(box.mmin, box.mmax)))
        self.types |= set(types_from_proto(p) or ())


def _or_empty(lo: float | None, hi: float | None) -> tuple[float, float]:
    return (math.inf, -math.inf) if lo is None or hi is None else (lo, hi)


class _Wkb:
    """A cursor over one WKB value that folds its coordinates into a :class:`GeoSummary`."""

    def __init__(self, data: bytes, summary: GeoSummary) -> None:
        self.data = data
        self.pos = 0
        self.summary = summary

    def take(self, fmt: str) -> tuple[int, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise InvalidWkbError("WKB value ends early")
        out = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return out

    def geometry(self, depth: int) -> tuple[int, int, bool]:
        """Parse one geometry; (base type, dimension offset, empty)."""
        if depth > MAX_WKB_DEPTH:
            raise InvalidWkbError(f"WKB collections nested over {MAX_WKB_DEPTH} deep")
        (order,) = self.take("B")
        if order > 1:
            raise InvalidWkbError(f"WKB byte order {order}")
        end = "<" if order else ">"
        (code,) = self.take(end + "I")
        base, dims, srid = code & 0xFFFF, 0, bool(code & 0x20000000)
        if code & 0xE0000000:  # EWKB flags
            dims = (1000 if code & 0x80000000 else 0) + (2000 if code & 0x40000000 else 0)
        else:
            dims, base = base // 1000 * 1000, base % 1000
        if base not in _BASE_TYPES or dims not in _DIMENSION_OFFSETS:
            raise InvalidWkbError(f"WKB geometry type {code}")
        if srid:
            self.take(end + "I")
        if base == 1:
            return base, dims, self.points(end, 1, dims)
        if base == 2:
            return base, dims, self.points(end, self.take(end + "I")[0], dims)
        (count,) = self.take(end + "I")
        if count > (len(self.data) - self.pos) // 4:
            raise InvalidWkbError(f"WKB value declares {count} parts in "
                                  f"{len(self.data) - self.pos} bytes")
        empty = True
        for _ in range(count):
            if base == 3:
                empty &= self.points(end, self.take(end + "I")[0], dims)
            else:
                empty &= self.geometry(depth + 1)[2]
        return base, dims, empty

    def points(self, end: str, n: int, dims: int) -> bool:
        """Fold ``n`` points of the dimensions ``dims`` (0 XY, 1000 XYZ, 2000 XYM, 3000 XYZM)
        in; true when all are empty (NaN x and y)."""
        has_z, has_m = dims in (1000, 3000), dims in (2000, 3000)
        ndim = 2 + has_z + has_m
        axes = [(0, "xmin", "xmax"), (1, "ymin", "ymax")]
        if has_z:
            axes.append((2, "zmin", "zmax"))
        if has_m:
            axes.append((ndim - 1, "mmin", "mmax"))
        size = 8 * n * ndim
        if n < 0 or self.pos + size > len(self.data):
            raise InvalidWkbError("WKB value ends early")
        xyzm = np.frombuffer(self.data, dtype=end + "f8", count=n * ndim,
                             offset=self.pos).reshape(n, ndim)
        self.pos += size
        s = self.summary
        empty = True
        for axis, lo, hi in axes:
            col = xyzm[:, axis]
            col = col[~np.isnan(col)]
            if col.size:
                empty &= axis > 1
                setattr(s, lo, min(getattr(s, lo), float(col.min())))
                setattr(s, hi, max(getattr(s, hi), float(col.max())))
        return empty


def summarize_wkb(value: bytes, summary: GeoSummary) -> None:
    """Fold one WKB value (ISO or EWKB, either byte order) into ``summary``: its coordinates
    into the box and its type code into the set, unless it is empty (as ORC Java skips empty
    geometries).

    Raises:
        InvalidWkbError: for bytes that are not one well-formed WKB geometry.
    """
    own = GeoSummary()
    cursor = _Wkb(value, own)
    base, dims, empty = cursor.geometry(0)
    if cursor.pos != len(value):
        raise InvalidWkbError(f"{len(value) - cursor.pos} bytes after the WKB geometry")
    if empty:
        return
    summary.merge(own)
    summary.types.add(base + dims)
