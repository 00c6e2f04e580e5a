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
"""

from __future__ import annotations

import re
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

_TILE = re.compile(
    r"^/collections/pub\.(?P<view>\w+)/tiles/WebMercatorQuad/(?P<z>\d+)/(?P<x>\d+)/(?P<y>\d+)"
    r"/?$")
MVT = "application/vnd.mapbox-vector-tile"

TILE_FUNCTIONS_SQL = """
SELECT regexp_replace(p.proname, '_tile$', '') AS view_name
FROM pg_proc p
WHERE p.pronamespace = 'pub'::regnamespace AND p.proname LIKE '%\\_tile'
  AND array_to_string(p.proargtypes::regtype[], ',') = 'integer,integer,integer'
  AND p.prorettype = 'bytea'::regtype
  AND has_function_privilege(p.oid, 'EXECUTE')"""


class TileFunctions:
    """Answers GET tiles of views that have a tile function; passes everything else on."""

    def __init__(self, app: ASGIApp, views: Callable[[], set[str]]) -> None:
        self.app = app
        self.views = views  # () -> {"parcel_balance", ...}, filled at start

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        m = (_TILE.match(scope["path"])
             if scope["type"] == "http" and scope["method"] in ("GET", "HEAD") else None)
        if m is None or m.group("view") not in self.views():
            await self.app(scope, receive, send)
            return
        z, x, y = (int(m.group(k)) for k in "zxy")
        if z > 30 or x >= 2 ** z or y >= 2 ** z:
            body, status = b'{"detail":"tile outside the tile matrix"}', 404
            ctype = "application/json"
        else:
            async with scope["app"].state.pool.acquire() as conn:
                body = await conn.fetchval(f"SELECT pub.{m.group('view')}_tile($1, $2, $3)",
                                           z, x, y) or b""
            status, ctype = 200, MVT
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", ctype.encode()),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})
