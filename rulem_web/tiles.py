"""Vector tiles of the published layers from their own tile functions, at tipg's tile paths.

Why: every view of pub with a geometry (history views excepted) already has
pub.<view>_tile(z, x, y) (sql/930), made for this database: features chosen through the core
table's spatial index in the working CRS, jsonb provenance left out, numerics as doubles (so a
style can compare numbers), the feature id the view's key, and tiles outside the CRS's domain
answered empty without touching the data (docs/publishing.md, "Vector tiles"). tipg's generic
tile SQL writes numerics as text and jsonb columns into every tile. So a WebMercatorQuad tile
of such a view is the function's answer; tipg keeps the paths, TileJSON, the tile matrix sets,
and the tiles of everything else (history views, other matrix sets), and the OGC API Tiles
conformance. Query parameters tipg would honour on a tile (properties, limit, filters) do not
apply to these tiles.

One exception, for the web map's date control (docs/publishing.md, "The web map"): a tile of
pub.parcel_balance with `?as_of=YYYY-MM-DD` draws the parcels by their balance as of that
date (pub.parcel_balance_as_of), so the map recolours with the date, not only the panel.

The web map reads one tile per z/x/y for all its layers, `/tiles/{z}/{x}/{y}.mvt`: the
concatenated answers of the map's views' tile functions, each its own MVT layer (a tile is a
list of layers, so tiles concatenate). One request per tile instead of one per layer and tile
(74 requests in the first view for seven layers). The views are those the login may read,
fixed at start: a view the login cannot read is left out of the tile, never an error. It
takes `?as_of=` like the parcel tile above.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Receive, Scope, Send

_TILE = re.compile(
    r"^/collections/pub\.(?P<view>\w+)/tiles/WebMercatorQuad/(?P<z>\d+)/(?P<x>\d+)/(?P<y>\d+)"
    r"/?$")
MAP_TILE_PATH = "/tiles"  # the web map's tile of all its layers: /tiles/{z}/{x}/{y}.mvt
_MAP_TILE = re.compile(r"^/tiles/(?P<z>\d+)/(?P<x>\d+)/(?P<y>\d+)\.mvt$")
_VIEW_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
MVT = "application/vnd.mapbox-vector-tile"

TILE_FUNCTIONS_SQL = """
SELECT regexp_replace(p.proname, '_tile$', '') AS view_name
FROM pg_proc p
WHERE p.pronamespace = 'pub'::regnamespace AND p.proname LIKE '%\\_tile'
  AND array_to_string(p.proargtypes::regtype[], ',') = 'integer,integer,integer'
  AND p.prorettype = 'bytea'::regtype
  AND has_function_privilege(p.oid, 'EXECUTE')"""


# The parcels by their balance as of a date, as a tile like pub.parcel_balance_tile's: the
# MVT layer named after the view, the feature id parcel_id, numbers as doubles, the pick's and
# the labels' properties (pin, status) and the figures.
AS_OF_SQL = """
WITH env AS (SELECT ST_TileEnvelope($1, $2, $3) AS e),
src AS (SELECT ST_Transform(env.e, (SELECT ST_SRID(geom) FROM pub.cwmp_area LIMIT 1)) AS w,
               env.e FROM env)
SELECT ST_AsMVT(t, 'parcel_balance', 4096, 'geom', 'parcel_id') FROM (
  SELECT p.parcel_id, p.pin, p.status, p.impact_acres::float8 AS impact_acres,
         p.required_acres::float8 AS required_acres, p.credit_acres::float8 AS credit_acres,
         p.balance_acres::float8 AS balance_acres,
         ST_AsMVTGeom(ST_Transform(p.geom, 3857), src.e, 4096, 64, true) AS geom
  FROM pub.parcel_balance_as_of($4::date) p, src
  WHERE p.geom && src.w) t WHERE t.geom IS NOT NULL"""
AS_OF_VIEWS = frozenset({"parcel_balance"})


def map_tile_sql(views: list[str], on_date: bool) -> tuple[str, bool]:
    """One statement making the web map's tile: the views' tile functions' answers
    concatenated in the map's drawing order, the parcels as of $4 when on_date; and whether
    the statement takes that date."""
    parts = []
    dated = False
    for view in views:
        if not _VIEW_NAME.match(view):
            raise ValueError(f"not a view name: {view!r}")
        if on_date and view in AS_OF_VIEWS:
            parts.append(f"coalesce(({AS_OF_SQL}), ''::bytea)")
            dated = True
        else:
            parts.append(f"coalesce(pub.{view}_tile($1, $2, $3), ''::bytea)")
    return "SELECT " + (" || ".join(parts) if parts else "''::bytea"), dated


def as_of(query_string: bytes) -> dt.date | None:
    """The tile's as_of date, or None (today); a value that is no date is ignored."""
    raw = parse_qs(query_string.decode("latin-1")).get("as_of", [""])[0]
    try:
        return dt.date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


class TileFunctions:
    """Answers GET tiles of views that have a tile function, and the web map's tile of all
    its layers; passes everything else on."""

    def __init__(self, app: ASGIApp, views: Callable[[], set[str]],
                 map_views: Callable[[], list[str]] = list) -> None:
        self.app = app
        self.views = views          # () -> {"parcel_balance", ...}, filled at start
        self.map_views = map_views  # () -> the map tile's views, in drawing order

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        http_get = scope["type"] == "http" and scope["method"] in ("GET", "HEAD")
        one = _TILE.match(scope["path"]) if http_get else None
        if one is not None and one.group("view") not in self.views():
            one = None
        whole = _MAP_TILE.match(scope["path"]) if http_get and one is None else None
        found = one or whole
        if found is None:
            await self.app(scope, receive, send)
            return
        z, x, y = (int(found.group(k)) for k in "zxy")
        if z > 30 or x >= 2 ** z or y >= 2 ** z:
            body, status = b'{"detail":"tile outside the tile matrix"}', 404
            ctype = "application/json"
        else:
            on = as_of(scope.get("query_string", b""))
            async with scope["app"].state.pool.acquire() as conn:
                if one is None:
                    sql, dated = map_tile_sql(self.map_views(), on is not None)
                    body = await conn.fetchval(sql, z, x, y, *([on] if dated else [])) or b""
                elif on is not None and one.group("view") in AS_OF_VIEWS:
                    body = await conn.fetchval(AS_OF_SQL, z, x, y, on) or b""
                else:
                    body = await conn.fetchval(f"SELECT pub.{one.group('view')}_tile($1, $2, $3)",
                                               z, x, y) or b""
            status, ctype = 200, MVT
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype.encode()),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})
