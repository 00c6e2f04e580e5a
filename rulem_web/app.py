"""The ASGI application of `rulem-db serve`: tipg's OGC API Features and Tiles over schema
pub, the service's JSON API (rulem_web.api), the web map's static files, ETags on tiles and
items, CORS and a reverse proxy's base path.

Why tipg's factory and not its ready-made app: its app reads settings from the environment
and connects in a way that needs TEMPORARY (rulem_web.database); here the pool, the catalog
settings (pub only, no functions, no extents computed by scanning every view at start) and
the middleware are ours, and the OGC endpoints are tipg's unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, ORJSONResponse, Response
from starlette.middleware.cors import CORSMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from tipg import collections as tipg_collections
from tipg.collections import register_collection_catalog
from tipg.dependencies import accept_media_type
from tipg.errors import DEFAULT_STATUS_CODES, add_exception_handlers
from tipg.factory import Endpoints
from tipg.resources.enums import MediaType
from tipg.settings import DatabaseSettings

from rulem_web import api
from rulem_web.database import PoolSettings, create_pool
from rulem_web.etag import ETagMiddleware, ViewKind
from rulem_web.tiles import TILE_FUNCTIONS_SQL, TileFunctions

PACKAGE = Path(__file__).resolve().parent
STATIC_DIR = PACKAGE / "static"
MAPLIBRE_DIST = PACKAGE / "web" / "node_modules" / "maplibre-gl" / "dist"
TITLE = "rulem-db: Rule M layers (OGC API Features and Tiles)"


@dataclass(frozen=True)
class ServeSettings:
    """What `rulem-db serve` passes to the application."""

    pool: PoolSettings
    plan_area: str | None = None            # the plan area the screen answers for
    cors_origins: tuple[str, ...] = ()      # browsers' origins allowed to read (GET, POST)
    trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")  # may set X-Forwarded-Prefix
    root_path: str = ""                     # a fixed base path behind a proxy


@dataclass
class _State:
    kinds: dict[str, ViewKind] = field(default_factory=dict)
    tile_views: set[str] = field(default_factory=set)


def catalog_settings() -> DatabaseSettings:
    """tipg's catalog: the relations of pub the login may read (tables and views, with or
    without geometry), none of its functions (they take arguments the OGC API cannot pass
    well; the API serves the as-of balances), no extents scanned at start."""
    return DatabaseSettings(schemas=["pub"], application_schema="web", functions=[],
                            only_spatial_tables=False, spatial_extent=False,
                            datetime_extent=False)


# The column that identifies a feature of each view of pub: a history view's version_id (one
# row per version), else the view's first column (spec section 8: `<layer>_id` first).
KEYS_SQL = """
SELECT c.relname::text AS relname,
       coalesce((SELECT attname FROM pg_attribute WHERE attrelid = c.oid
                 AND attname = 'version_id' AND c.relname LIKE '%\\_history'),
                (SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = 1
                 AND attname LIKE '%\\_id'))::text AS key
FROM pg_class c WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('v', 'm', 'r')
"""


def set_feature_ids(collections: Mapping[str, Any], keys: Mapping[str, str | None]) -> None:
    """Give each collection its key column as the feature id (tipg only guesses ogc_fid, id,
    gid...; without one a feature's id is its row number, which changes between requests
    and so breaks QGIS's and GDAL's feature ids and /items/{id})."""
    for cid, coll in collections.items():
        key = keys.get(cid)
        column = next((c for c in coll.properties if c.name == key), None)
        if column is not None:
            coll.id_column = column


async def _stamps(app: Any) -> Mapping[str, int | None]:
    async with app.state.pool.acquire() as conn:
        row = await conn.fetchrow("SELECT * FROM web.change_stamps()")
    return dict(row)


class ForwardedPrefix:
    """Honours X-Forwarded-Prefix from a trusted proxy: links, TileJSON and style URLs then
    carry the base path the browser sees (the proxy strips it before forwarding)."""

    def __init__(self, app: ASGIApp, trusted: tuple[str, ...]) -> None:
        self.app = app
        self.trusted = set(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (scope.get("client") or ("",))[0] in self.trusted:
            for name, value in scope.get("headers", []):
                if name == b"x-forwarded-prefix":
                    prefix = "/" + value.decode("latin-1").strip().strip("/")
                    scope = dict(scope, root_path=prefix.rstrip("/"))
                    break
        await self.app(scope, receive, send)


def wants_html(request: Request) -> bool:
    """A browser asking for a page (not f=json, and text/html preferred in Accept)."""
    f = request.query_params.get("f")
    if f:
        return f == "html"
    chosen = accept_media_type(request.headers.get("accept", ""),
                               [MediaType.html, MediaType.json])
    return chosen == MediaType.html


def create_app(settings: ServeSettings) -> FastAPI:
    """The whole service; the database is reached at start-up (lifespan)."""
    tipg_collections.mvt_settings.set_mvt_layername = True  # MVT layer = the view's name
    state = _State()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.pool)
        try:
            await register_collection_catalog(app, db_settings=catalog_settings())
            async with app.state.pool.acquire() as conn:
                ids = set(app.state.collection_catalog["collections"])
                for r in await conn.fetch("SELECT * FROM web.pub_view_kind()"):
                    if f"pub.{r['view_name']}" in ids:
                        state.kinds[f"pub.{r['view_name']}"] = ViewKind(
                            r["reads_ledger"], r["reads_checks"])
                state.tile_views.update(
                    r["view_name"] for r in await conn.fetch(TILE_FUNCTIONS_SQL)
                    if f"pub.{r['view_name']}" in ids)
                keys = {f"pub.{r['relname']}": r["key"] for r in await conn.fetch(KEYS_SQL)}
                set_feature_ids(app.state.collection_catalog["collections"], keys)
                app.state.style_rules = [dict(r) for r in
                                         await conn.fetch("SELECT * FROM web.style_rule()")]
                plan = await conn.fetchrow(
                    "SELECT code, ARRAY[ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e)] AS b "
                    "FROM (SELECT code, ST_Transform(ST_Envelope(geom), 4326) AS e "
                    "FROM pub.plan_balance WHERE $1::text IS NULL OR code = $1 "
                    "ORDER BY plan_area_id LIMIT 1) p", settings.plan_area)
            if plan is None:
                raise RuntimeError(f"no plan area {settings.plan_area or ''} in pub.plan_balance"
                                   .replace("  ", " "))
            app.state.plan_area = plan["code"]
            app.state.plan_bounds = ([round(float(x), 6) for x in plan["b"]]
                                     if plan["b"] and None not in plan["b"] else None)
            yield
        finally:
            await app.state.pool.close()

    app = FastAPI(title=TITLE, openapi_url="/api", docs_url="/api.html", lifespan=lifespan,
                  root_path=settings.root_path, default_response_class=ORJSONResponse)
    ogc = Endpoints(title=TITLE, with_tiles_viewer=False)

    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        """The web map for a browser; tipg's OGC landing page (JSON) for GIS clients."""
        if wants_html(request):
            return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})
        route = next(r for r in ogc.router.routes if getattr(r, "name", "") == "landing")
        data = route.endpoint(request=request, output_type=MediaType.json)
        return ORJSONResponse(data.model_dump(exclude_none=True, mode="json"))

    app.include_router(api.router)
    app.include_router(ogc.router)
    if MAPLIBRE_DIST.is_dir():
        app.mount("/static/vendor/maplibre-gl", StaticFiles(directory=MAPLIBRE_DIST),
                  name="maplibre")
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    add_exception_handlers(app, DEFAULT_STATUS_CODES)

    app.add_middleware(TileFunctions, views=lambda: state.tile_views)
    app.add_middleware(ETagMiddleware, stamps=_stamps, kinds=lambda: state.kinds)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST", "HEAD", "OPTIONS"],
                           allow_headers=["*"], expose_headers=["ETag"])
    app.add_middleware(ForwardedPrefix, trusted=settings.trusted_proxies)
    return app
