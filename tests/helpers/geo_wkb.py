"""WKB values for the geospatial tests, built here from coordinates (independently of aorc's
WKB parser), with the boxes and type codes they should give."""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["Coords", "collection", "linestring", "multi", "point", "polygon", "random_values",
           "xy_box"]

Coords = Sequence[Sequence[float]]
_DIMS = {2: 0, 3: 1000, 4: 3000}


def _head(base: int, ndim: int, big: bool, m_only: bool = False) -> bytes:
    code = base + (2000 if m_only else _DIMS[ndim])
    return struct.pack(">BI" if big else "<BI", 0 if big else 1, code)


def _coords(coords: Coords, big: bool) -> bytes:
    fmt = ">" if big else "<"
    return b"".join(struct.pack(fmt + "d" * len(c), *c) for c in coords)


def point(*xy: float, big: bool = False, m_only: bool = False) -> bytes:
    """POINT with 2, 3 (z, or m with ``m_only``) or 4 ordinates."""
    return _head(1, len(xy), big, m_only) + _coords([xy], big)


def linestring(coords: Coords, big: bool = False) -> bytes:
    """LINESTRING."""
    n = len(coords[0]) if coords else 2
    return (_head(2, n, big) + struct.pack(">I" if big else "<I", len(coords))
            + _coords(coords, big))


def polygon(rings: Sequence[Coords], big: bool = False) -> bytes:
    """POLYGON of rings."""
    n = len(rings[0][0]) if rings and rings[0] else 2
    fmt = ">I" if big else "<I"
    body = b"".join(struct.pack(fmt, len(r)) + _coords(r, big) for r in rings)
    return _head(3, n, big) + struct.pack(fmt, len(rings)) + body


def multi(base: int, parts: Sequence[bytes], ndim: int = 2) -> bytes:
    """MULTIPOINT (4), MULTILINESTRING (5), MULTIPOLYGON (6) of WKB parts."""
    return _head(base, ndim, False) + struct.pack("<I", len(parts)) + b"".join(parts)


def collection(parts: Sequence[bytes], ndim: int = 2) -> bytes:
    """GEOMETRYCOLLECTION of WKB parts."""
    return multi(7, parts, ndim)


def xy_box(coords: Coords) -> tuple[float, float, float, float] | None:
    """(xmin, xmax, ymin, ymax) of coordinates, NaN ignored; None without any."""
    xs = [c[0] for c in coords if not math.isnan(c[0])]
    ys = [c[1] for c in coords if not math.isnan(c[1])]
    if not xs or not ys:
        return None
    return min(xs), max(xs), min(ys), max(ys)


def random_values(n: int, seed: int, null_every: int = 13
                  ) -> tuple[list[bytes | None], list[tuple[float, float, float, float] | None]]:
    """``n`` points and short linestrings laid out along x (so that stripes and row groups
    cover separate x ranges), with their boxes; every ``null_every``-th is null."""
    rng = np.random.default_rng(seed)
    values: list[bytes | None] = []
    boxes: list[tuple[float, float, float, float] | None] = []
    for i in range(n):
        if i % null_every == 0:
            values.append(None)
            boxes.append(None)
            continue
        x0 = 100.0 * i / n
        if i % 3:
            x, y = x0 + rng.uniform(0, 0.01), rng.uniform(-10, 10)
            values.append(point(x, y))
            boxes.append((x, x, y, y))
        else:
            pts = [(x0 + rng.uniform(0, 0.5), rng.uniform(-10, 10)) for _ in range(3)]
            values.append(linestring(pts))
            boxes.append(xy_box(pts))
    return values, boxes
