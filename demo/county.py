"""The real Anoka County outline, read from the shared metro counties dump, and the check that
the synthetic plan area lies well inside it.

Why its own module: it is the demo's only reading of real data, optional (the shared folder is
not part of an installed package) and parsed in Python so that neither the demo nor its tests
need a database.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import shapely
from shapely.geometry import Polygon, box
from shapely.geometry.base import BaseGeometry

from demo.geometry import PLAN_SIZE, to_world

ANOKA_CO_CODE = "003"
COUNTY_MARGIN_M = 1000.0  # the plan area must lie at least this far inside Anoka County


def shared_dir() -> Path:
    """The team's read-only shared folder, found from the repository (override:
    RULEM_SHARED_DIR), so the demo never needs a copy of the real data in the project."""
    env = os.environ.get("RULEM_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared"


def counties_dump_path(shared: Path | None = None) -> Path:
    """Where the metro counties shp2pgsql dump lives in the shared folder."""
    return (shared or shared_dir()) / "data" / "real" / "mn_metro_counties" / "counties.sql.gz"


_INSERT = re.compile(
    r'^INSERT INTO "public"\."counties" \((?P<cols>[^)]*)\) VALUES \((?P<vals>.*)\);$')
_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def parse_counties_dump(text: str) -> dict[str, tuple[dict[str, str], BaseGeometry]]:
    """County rows of a shp2pgsql dump by co_code: attributes and geometry (hex EWKB).

    Parsed in Python so that neither the demo nor its tests need a database.
    """
    out: dict[str, tuple[dict[str, str], BaseGeometry]] = {}
    for line in text.splitlines():
        m = _INSERT.match(line.strip())
        if not m:
            continue
        cols = [c.strip().strip('"') for c in m.group("cols").split(",")]
        vals = [v.replace("''", "'") for v in _QUOTED.findall(m.group("vals"))]
        if len(cols) != len(vals):
            raise ValueError(f"cannot parse counties row: {line[:120]}...")
        row = dict(zip(cols, vals, strict=True))
        geom = shapely.from_wkb(row.pop("geom"))
        out[row["co_code"]] = (row, geom)
    return out


def anoka_outline(shared: Path | None = None) -> BaseGeometry:
    """Anoka County's outline (EPSG:26915) from the real metro counties dump."""
    path = counties_dump_path(shared)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = parse_counties_dump(f.read())
    if ANOKA_CO_CODE not in rows:
        raise ValueError(f"{path}: no county with co_code {ANOKA_CO_CODE!r}")
    return rows[ANOKA_CO_CODE][1]


def plan_area_geometry() -> Polygon:
    """The plan area in EPSG:26915."""
    return to_world(box(0.0, 0.0, *PLAN_SIZE))


def check_inside_county(county: BaseGeometry, margin_m: float = COUNTY_MARGIN_M) -> float:
    """Distance (m) from the plan area to the county line; raise unless well inside."""
    plan = plan_area_geometry()
    if not county.contains(plan):
        raise ValueError("the demo plan area is not inside Anoka County")
    distance = float(county.boundary.distance(plan))
    if distance < margin_m:
        raise ValueError(f"the demo plan area is only {distance:.0f} m inside Anoka County")
    return distance
