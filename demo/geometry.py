"""The demo's frame of reference and the shape helpers every layer module draws with.

Why one module: every layer of the demo is drawn in the same local metres (east and north of
``ORIGIN``, the plan area's south-west corner) and measured in the same units, so the CRS, the
plan area's size and name, the unit factors (1 acre = 4046.8564224 m^2, 1 ft = 0.3048 m) and the
rectangle and overlay helpers live here once; ``to_world`` moves local metres into EPSG:26915
when the files are written.
"""

from __future__ import annotations

from shapely import affinity
from shapely.geometry import MultiPolygon, Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

SRID = 26915
CRS = f"EPSG:{SRID}"
ORIGIN = (490_000.0, 5_002_000.0)  # south-west corner of the plan area, Lino Lakes, Anoka County
PLAN_SIZE = (2500.0, 2000.0)
PLAN_NAME = "ACD 53-62 CWMP demo area (synthetic)"
ACRE_M2 = 4046.8564224
FT_M = 0.3048
SQFT_PER_M2 = 1 / FT_M**2

Rect = tuple[float, float, float, float]  # (min x, min y, max x, max y), local metres
XY = tuple[float, float]
Ring = tuple[XY, ...]


def to_world(geom: BaseGeometry) -> BaseGeometry:
    """Local plan metres to EPSG:26915."""
    return affinity.translate(geom, xoff=ORIGIN[0], yoff=ORIGIN[1])


def to_local(geom: BaseGeometry) -> BaseGeometry:
    """EPSG:26915 to local plan metres (for tests and for reading the numbers by hand)."""
    return affinity.translate(geom, xoff=-ORIGIN[0], yoff=-ORIGIN[1])


def rect(r: Rect, hole: Rect | None = None) -> Polygon:
    """A rectangle, optionally with a rectangular hole."""
    if hole is None:
        return box(*r)
    return Polygon(box(*r).exterior.coords, [box(*hole).exterior.coords])


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if isinstance(geom, Polygon):
        return [geom] if geom.area > 0 else []
    return [p for g in getattr(geom, "geoms", ()) for p in _polygons(g)]


def polygonal(geom: BaseGeometry) -> MultiPolygon:
    """The polygon parts of geom, merged, as a MultiPolygon: overlays of touching rectangles
    leave line and point debris that no polygon layer may hold."""
    merged = unary_union(_polygons(geom))
    return MultiPolygon(_polygons(merged))


def fill_holes(geom: BaseGeometry) -> MultiPolygon:
    """geom with its interior rings filled: the upland a wetland encloses belongs in the
    easement (8)."""
    return MultiPolygon([Polygon(p.exterior.coords) for p in polygonal(geom).geoms])


def acres(area_m2: float) -> float:
    """Square metres to acres, the unit of the ledger."""
    return area_m2 / ACRE_M2
