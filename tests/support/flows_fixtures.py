"""Small delivered files for the flow tests: what a county or a consultant drops into the inbox.

Geometry on a metre grid in EPSG:26915 (the test databases' working CRS), so the acres are
worked out by hand: a 100 m square is 2.4711 acres. Local coordinates are metres from ORIGIN, a
point in Anoka County (ingest refuses files outside the working CRS's area of use); `at()`
turns local rectangles into world ones for the SQL helpers of tests/support/ledger_scenarios.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
from shapely.geometry import MultiPolygon, box

CRS = "EPSG:26915"
ORIGIN = (490_000.0, 5_002_000.0)  # Lino Lakes, Anoka County (as demo.generate)

Rect = tuple[float, float, float, float]


def at(x0: float, y0: float, x1: float, y1: float) -> Rect:
    """A local rectangle (metres from ORIGIN) in world coordinates."""
    ox, oy = ORIGIN
    return (x0 + ox, y0 + oy, x1 + ox, y1 + oy)


def _square(x0: float, y0: float, x1: float, y1: float) -> MultiPolygon:
    return MultiPolygon([box(*at(x0, y0, x1, y1))])


def parcels_gpkg(path: Path, parcels: dict[str, Rect]) -> Path:
    """A county parcel file: one polygon per PIN (local rectangles)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = gpd.GeoDataFrame({"pin": list(parcels)},
                             geometry=[_square(*r) for r in parcels.values()], crs=CRS)
    frame.to_file(path, driver="GPKG", engine="pyogrio")
    return path


def plan_area_geojson(path: Path, rect: Rect = (-1000, -1000, 5000, 5000)) -> Path:
    """The CWMP area boundary, as GeoJSON in lon/lat (ingest reprojects it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = gpd.GeoDataFrame({"name": ["test plan"], "adopted_on": ["2004-01-28"]},
                             geometry=[_square(*rect)], crs=CRS).to_crs("EPSG:4326")
    path.write_text(frame.to_json())
    return path


def parcels_without_pin(path: Path) -> Path:
    """A parcel file that lacks the required PIN field: ingest must refuse it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = gpd.GeoDataFrame({"owner": ["Smith"], "acres": [2.4711]},
                             geometry=[_square(0, 0, 100, 100)], crs=CRS).to_crs("EPSG:4326")
    path.write_text(frame.to_json())
    return path


def inbox_two_good_one_bad(root: Path) -> Path:
    """inbox/ with a plan boundary and a parcel file (good) and a parcel file with no PIN."""
    inbox = root / "inbox"
    plan_area_geojson(inbox / "cwmp_area" / "boundary.geojson")
    parcels_gpkg(inbox / "parcel" / "parcels_2026.gpkg",
                 {"P-1": (0, 0, 500, 500), "P-2": (500, 0, 1000, 500)})
    parcels_without_pin(inbox / "parcel" / "parcels_no_pin.geojson")
    (inbox / "README.txt").write_text(json.dumps("drop files into <layer>/"))
    return inbox
