"""The pre-application screen: a drawn or uploaded footprint (GeoJSON, EPSG:4326) through
pub.screen_footprint, Rule M 2(a)'s answer, with the wetland and buffers it meets.

Why the checks here: the footprint comes from anyone with a browser. It is refused in one
line (400) before the database sees it when it is not JSON, not a polygon, too big to be a
project (MAX_VERTICES, MAX_BYTES), or outside longitude/latitude; and by the database when
PostGIS finds it invalid or too far from the plan area for its working CRS.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import asyncpg

MAX_BYTES = 1_000_000
MAX_VERTICES = 10_000
MAX_DISTANCE_M = 100_000   # farther from the plan area than this: outside its CRS's domain
SQFT_PER_ACRE = 43_560

# What a District says beside the answer (docs/publishing.md, "The web map"): a screen is no
# decision, other rules and state wetland law (the Wetland Conservation Act) may still apply,
# and whom to ask.
# Defaults for the demo district; a district sets its own through RULEM_SCREEN_* variables
# (docs/publishing.md) until they are district parameters in the database.
NOTICE_DEFAULTS: dict[str, str] = {
    "disclaimer": "This screen is information, not a permit decision. It reads the District's "
                  "maps as they stand today; only a permit application reviewed by District "
                  "staff decides whether a permit is needed and on what conditions.",
    "other_rules": "Other District rules (stormwater, erosion control, floodplain, "
                   "drainage systems) may apply to the same work: ask the District before "
                   "you apply.",
    "wetland_law": "Work in or near a wetland may also need approval under Minnesota's "
                   "Wetland Conservation Act (WCA), administered by the local government "
                   "unit, and a federal Section 404 permit.",
    # no address or telephone number is guessed: the district sets its own
    "contact": "the District's permit staff, at the District office (ask before you apply).",
}


def notice() -> dict[str, str]:
    """The District's notice under every answer: the defaults, or RULEM_SCREEN_<KEY>."""
    import os

    return {k: os.environ.get(f"RULEM_SCREEN_{k.upper()}", v) for k, v in NOTICE_DEFAULTS.items()}


class ScreenInputError(ValueError):
    """The footprint cannot be screened; the message says why in one line."""


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _positions(coords: Any, depth: int = 0) -> list[list[float]]:
    """The positions of Polygon/MultiPolygon coordinates (nested at most 3 deep), each two
    or three finite numbers."""
    if isinstance(coords, list) and coords and not isinstance(coords[0], list):
        if 2 <= len(coords) <= 3 and all(_is_number(c) for c in coords):
            return [coords]
    elif isinstance(coords, list) and depth < 3:
        return [p for c in coords for p in _positions(c, depth + 1)]
    raise ScreenInputError("the footprint's coordinates are not GeoJSON positions")


def _object(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ScreenInputError(f"the footprint's {what} is not a JSON object")
    return value


def parse(body: bytes) -> dict[str, Any]:
    """The footprint of a request: {"geometry": GeoJSON text, "impervious": bool,
    "alters_runoff": bool | None}."""
    if len(body) > MAX_BYTES:
        raise ScreenInputError(f"the footprint is larger than {MAX_BYTES // 1000} kB")
    try:
        doc = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        reason = " ".join(str(exc).split())[:120] or "too deeply nested"
        raise ScreenInputError(f"the body is not JSON: {reason}") from None
    if not isinstance(doc, dict):
        raise ScreenInputError("the body is not a GeoJSON Feature or Geometry")
    props: dict[str, Any] = {}
    if doc.get("type") == "FeatureCollection":
        feats = doc.get("features") or []
        if not isinstance(feats, list) or len(feats) != 1:
            count = len(feats) if isinstance(feats, list) else "no list"
            raise ScreenInputError("send one footprint (a Feature or a Geometry), not a "
                                   f"FeatureCollection of {count}")
        doc = _object(feats[0], "feature")
    if doc.get("type") == "Feature":
        props = _object(doc.get("properties"), "properties")
        doc = _object(doc.get("geometry"), "geometry")
    kind = doc.get("type")
    if kind not in ("Polygon", "MultiPolygon"):
        shown = kind if isinstance(kind, str) else type(kind).__name__
        raise ScreenInputError(f"the footprint must be a Polygon or MultiPolygon, not "
                               f"{shown[:40]}")
    points = _positions(doc.get("coordinates"))
    if len(points) < 4:
        raise ScreenInputError("the footprint has fewer than 4 positions")
    if len(points) > MAX_VERTICES:
        raise ScreenInputError(f"the footprint has {len(points)} vertices (at most "
                               f"{MAX_VERTICES})")
    for p in points:
        if len(p) < 2 or not (-180 <= p[0] <= 180 and -90 <= p[1] <= 90):
            raise ScreenInputError(f"position {p} is not longitude, latitude (EPSG:4326)")
    alters = props.get("alters_runoff")
    if alters is not None and not isinstance(alters, bool):
        raise ScreenInputError("property alters_runoff must be true, false or absent")
    return {"geometry": json.dumps({"type": kind, "coordinates": doc["coordinates"]}),
            "impervious": bool(props.get("impervious")), "alters_runoff": alters}


SCREEN_SQL = """
WITH f AS (SELECT ST_SetSRID(ST_GeomFromGeoJSON($1), 4326) AS g)
SELECT s.paragraph, s.required, s.measured_value, s.limit_value, s.unit, s.reason
FROM f, pub.screen_footprint($2, f.g, CASE WHEN $3 THEN f.g END, $4::boolean) s"""

CHECK_SQL = """
WITH f AS (SELECT ST_SetSRID(ST_GeomFromGeoJSON($1), 4326) AS g)
SELECT ST_IsValid(g) AS valid, ST_IsValidReason(g) AS reason,
       (SELECT min(ST_Distance(geography(ST_Transform(p.geom, 4326)), geography(f.g)))
        FROM pub.cwmp_area p) AS distance
FROM f"""

TOUCHED_SQL = """
WITH f AS (SELECT ST_Transform(ST_SetSRID(ST_GeomFromGeoJSON($1), 4326), $2::int) AS g)
SELECT json_build_object('type', 'FeatureCollection', 'features', coalesce(json_agg(
  json_build_object('type', 'Feature', 'id', t.id,
    'geometry', ST_AsGeoJSON(ST_Transform(t.geom, 4326), 7)::json, 'properties', t.props)),
  '[]'::json))
FROM ({inner}) t"""

WETLANDS = """
SELECT w.wetland_id AS id, w.geom, json_build_object('wetland_id', w.wetland_id,
  'delineation_no', w.delineation_no, 'delineation_status', w.delineation_status,
  'circular39_type', w.circular39_type, 'area_acres', round(w.area_acres, 4),
  'touched_acres', round((ST_Area(ST_Intersection(w.geom, f.g)) / 4046.8564224)::numeric, 4)
  ) AS props
FROM pub.wetland w, f WHERE ST_Intersects(w.geom, f.g)"""

BUFFERS = """
SELECT b.buffer_id AS id, b.geom, json_build_object('buffer_id', b.buffer_id,
  'permit_no', b.permit_no, 'declaration_no', b.declaration_no,
  'area_acres', round(b.area_acres, 4)) AS props
FROM pub.buffer b, f WHERE ST_Intersects(b.geom, f.g)"""


def _num(v: Decimal | float | None) -> float | None:
    return None if v is None else float(round(v, 4))


async def screen(conn: asyncpg.Connection, plan_area: str, footprint: dict[str, Any]
                 ) -> dict[str, Any]:
    """2(a)'s answer as JSON (see docs/publishing.md for the fields)."""
    geometry = footprint["geometry"]
    try:
        check = await conn.fetchrow(CHECK_SQL, geometry)
    except asyncpg.PostgresError:
        raise ScreenInputError("the footprint is not a geometry PostGIS reads") from None
    if not check["valid"]:
        raise ScreenInputError(f"the footprint is not a valid polygon: {check['reason']}")
    if check["distance"] is not None and check["distance"] > MAX_DISTANCE_M:
        raise ScreenInputError(
            f"this footprint is {check['distance'] / 1000:,.0f} km from the District's plan "
            "area, so Rule M does not apply to it: check that the file marks the right place "
            "(longitude and latitude), or contact the District")
    rows = await conn.fetch(SCREEN_SQL, geometry, plan_area, footprint["impervious"],
                            footprint["alters_runoff"])
    by = {r["paragraph"]: r for r in rows}
    answer, wet, imp, grading = by["2(a)"], by["2(a)(i)"], by["2(a)(ii)"], by["2(a)(iii)"]
    srid = await conn.fetchval("SELECT ST_SRID(geom) FROM pub.cwmp_area LIMIT 1")
    wetlands = await conn.fetchval(TOUCHED_SQL.format(inner=WETLANDS), geometry, srid)
    buffers = await conn.fetchval(TOUCHED_SQL.format(inner=BUFFERS), geometry, srid)
    reasons = [answer["reason"]] + [r["reason"] for r in rows
                                    if r["paragraph"] != "2(a)" and r["required"] is not False]
    sqft = imp["measured_value"]
    return {
        "permit_needed": answer["required"],
        "reasons": reasons,
        "wetland_acres": _num(wet["measured_value"]),
        "impervious_sqft": _num(sqft),
        "impervious_trigger_sqft": _num(imp["limit_value"]),
        "impervious_acres": None if sqft is None else round(float(sqft) / SQFT_PER_ACRE, 4),
        "grading_toward_wetland": grading["required"],
        "triggers": [{"paragraph": r["paragraph"], "required": r["required"],
                      "measured_value": _num(r["measured_value"]),
                      "limit_value": _num(r["limit_value"]), "unit": r["unit"],
                      "reason": r["reason"]} for r in rows],
        "wetlands": wetlands,
        "buffers": buffers,
        "notice": notice(),
    }
