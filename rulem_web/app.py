"""The ASGI application of `rulem-db serve`: tipg's OGC API Features and Tiles over schema
pub, the service's JSON API (rulem_web.api), the web map's static files, ETags on tiles and
items, CORS and a reverse proxy's base path.

Why tipg's factory and not its ready-made app: its app reads settings from the environment
and connects in a way that needs TEMPORARY (rulem_web.database); here the pool, the catalog
settings (pub only, no functions, no extents computed by scanning every view at start) and
the middleware are ours. The OGC endpoints are tipg's, with what reaches SQL or HTML
replaced: the filter, bbox and datetime parameters are parsed by rulem_web.filters (an
allow-list of CQL2 functions), the HTML pages are our escaped templates (rulem_web.pages),
errors never carry internal text and requests are bounded (rulem_web.guard). Collection
titles and descriptions are the views' COMMENTs; the history views (pub.*_history) are
listed apart, under /history/collections, and stay readable at their usual paths.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    ORJSONResponse,
    Response,
)
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from tipg import collections as tipg_collections
from tipg.collections import CollectionList, register_collection_catalog
from tipg.dependencies import (
    CollectionsParams,
    OutputType,
    TileParams,
    accept_media_type,
    bbox_query,
    datetime_query,
    filter_query,
    s_intersects,
    sortby_query,
    t_intersects,
)
from tipg.factory import Endpoints, create_html_response
from tipg.resources.enums import MediaType
from tipg.settings import DatabaseSettings

from rulem_web import api, document, filters, guard, pages, style
from rulem_web.basemap import BASEMAP_PATH, Basemap
from rulem_web.database import PoolSettings, create_pool
from rulem_web.etag import ETagMiddleware, Sources
from rulem_web.tiles import MAP_TILE_PATH, TILE_FUNCTIONS_SQL, TileFunctions

log = logging.getLogger("rulem_web")

PACKAGE = Path(__file__).resolve().parent
STATIC_DIR = PACKAGE / "static"
MAPLIBRE_DIST = PACKAGE / "web" / "node_modules" / "maplibre-gl" / "dist"
PMTILES_DIST = PACKAGE / "web" / "node_modules" / "pmtiles" / "dist"
TITLE = "rulem-db: Rule M layers (OGC API Features and Tiles)"
HISTORY_TITLE = "rulem-db: every version of the Rule M layers (OGC API Features)"
HISTORY_PREFIX = "/history"
TITLE_CHARS = 100


@dataclass(frozen=True)
class ServeSettings:
    """What `rulem-db serve` passes to the application."""

    pool: PoolSettings
    plan_area: str | None = None            # the plan area the screen answers for
    cors_origins: tuple[str, ...] = ()      # browsers' origins allowed to read (GET, POST)
    trusted_proxies: tuple[str, ...] = ("127.0.0.1", "::1")  # may set X-Forwarded-Prefix
    root_path: str = ""                     # a fixed base path behind a proxy
    basemap: Basemap | None = None          # the district's basemap (rulem_web.basemap)


@dataclass
class _State:
    sources: dict[str, Sources] = field(default_factory=dict)
    tile_views: set[str] = field(default_factory=set)
    map_views: list[str] = field(default_factory=list)   # the map tile's, in drawing order


def catalog_settings() -> DatabaseSettings:
    """tipg's catalog: the relations of pub the login may read (tables and views, with or
    without geometry), none of its functions (they take arguments the OGC API cannot pass
    well; the API serves the as-of balances), no extents scanned at start."""
    return DatabaseSettings(schemas=["pub"], application_schema="web", functions=[],
                            only_spatial_tables=False, spatial_extent=False,
                            datetime_extent=False)


# The column that identifies a feature of each view of pub (docs/publishing.md, "The layer
# views", Keys): its row_key where it has one (the views whose rows no single id names), a
# history view's version_id (one row per version), else its first column when that is an id
# (`<layer>_id` first in every layer view: docs/publishing.md, "The layer views").
# tests/web/test_web_clients.py pages every served view and finds a key that repeats.
KEYS_SQL = """
SELECT c.relname::text AS relname,
       coalesce((SELECT attname FROM pg_attribute WHERE attrelid = c.oid
                 AND attname = 'row_key' AND NOT attisdropped),
                (SELECT attname FROM pg_attribute WHERE attrelid = c.oid
                 AND attname = 'version_id' AND c.relname LIKE '%\\_history'),
                (SELECT attname FROM pg_attribute WHERE attrelid = c.oid AND attnum = 1
                 AND attname LIKE '%\\_id'))::text AS key
FROM pg_class c WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('v', 'm', 'r')
"""


def set_feature_ids(collections: Mapping[str, Any], keys: Mapping[str, str | None]) -> None:
    """Give each collection its key column as the feature id (tipg only guesses ogc_fid, id,
    gid...; without one a feature's id is its row number, which changes between requests
    and so breaks QGIS's and GDAL's feature ids and /items/{id}). A view without a key
    column keeps the row number; its pages follow every column (filters.checked_sortby)."""
    for cid, coll in collections.items():
        key = keys.get(cid)
        column = next((c for c in coll.properties if c.name == key), None)
        if column is not None:
            coll.id_column = column


COMMENTS_SQL = """
SELECT c.relname::text AS relname, obj_description(c.oid, 'pg_class') AS comment
FROM pg_class c WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('v', 'm', 'r')
"""


def is_history(collection_id: str) -> bool:
    """A history view: every version of a layer (pub.<layer>_history), listed apart."""
    return collection_id.endswith("_history")


def title_of(comment: str | None, collection_id: str) -> str | None:
    """A collection's title: the first sentence of its view's COMMENT (docs/data-dictionary.md
    has them whole), marked for a history view."""
    if not comment:
        return None
    first = re.split(r"(?<=[a-z0-9)])\. ", comment.strip(), maxsplit=1)[0].rstrip(".")
    if len(first) > TITLE_CHARS:
        first = first[:TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f"{first} (every version)" if is_history(collection_id) else first


def set_titles(collections: Mapping[str, Any], comments: Mapping[str, str | None]) -> None:
    """Titles and descriptions from the database's COMMENT ON VIEW (tipg leaves them empty)."""
    for cid, coll in collections.items():
        comment = comments.get(cid)
        if comment:
            coll.title = title_of(comment, cid)
            coll.description = comment


def view_sources(rows: list[Any], ids: set[str]) -> dict[str, Sources]:
    """Each collection's source tables (web.pub_view_sources()); a collection with a source
    that has no change trigger is left out, so it never gets an ETag (always fresh)."""
    found: dict[str, set[str]] = {}
    untracked: set[str] = set()
    for r in rows:
        cid = f"pub.{r['view_name']}"
        if cid not in ids:
            continue
        found.setdefault(cid, set()).add(r["source"])
        if not r["tracked"]:
            untracked.add(cid)
            log.warning("%s reads %s, which has no change trigger (sql/961): no ETag",
                        cid, r["source"])
    return {cid: frozenset(s) for cid, s in found.items() if cid not in untracked}


def map_tile_sources(sources: Mapping[str, Sources], views: list[str]) -> Sources | None:
    """The sources of the web map's tile: those of all its views, or None (no ETag) when one
    of them has none tracked."""
    each = [sources.get(f"pub.{v}") for v in views]
    if not each or any(s is None for s in each):
        return None
    return frozenset().union(*each)


async def _stamps(app: Any) -> Mapping[str, str]:
    async with app.state.pool.acquire() as conn:
        rows = await conn.fetch("SELECT source, stamp FROM web.source_stamps()")
    return {r["source"]: r["stamp"] for r in rows}


class ForwardedPrefix:
    """Honours X-Forwarded-Prefix from a trusted proxy: links, TileJSON and style URLs then
    carry the base path the browser sees (the proxy strips it before forwarding). A prefix
    that is not a path of safe characters (guard.valid_prefix) is refused (400): it would
    be written into every link."""

    def __init__(self, app: ASGIApp, trusted: tuple[str, ...]) -> None:
        self.app = app
        self.trusted = set(trusted)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and (scope.get("client") or ("",))[0] in self.trusted:
            for name, value in scope.get("headers", []):
                if name == b"x-forwarded-prefix":
                    raw = value.decode("latin-1").strip()
                    if not guard.valid_prefix(raw or "/"):
                        await guard._answer(send, 400, "X-Forwarded-Prefix is not a path of "
                                                       "letters, digits and . _ ~ -")
                        return
                    prefix = "/" + raw.strip("/")
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


def collections_listed(
    request: Request,
    bbox_filter: Annotated[list[float] | None, Depends(filters.checked_bbox)],
    datetime_filter: Annotated[list[str] | None, Depends(filters.checked_datetime)],
    type_filter: Annotated[Literal["Function", "Table"] | None, Query(
        alias="type", description="Filter based on Collection type.")] = None,
    limit: Annotated[int | None, Query(ge=0, le=1000, description="Limits the number of "
                                       "collections in the response.")] = None,
    offset: Annotated[int | None, Query(ge=0, description="Starts the response at an "
                                        "offset.")] = None,
) -> CollectionList:
    """tipg's CollectionsParams, listing the history views under /history/collections only
    (the current views everywhere else), so a user scrolls the layers, not their versions."""
    limit, offset = limit or 0, offset or 0
    path = request.url.path.removeprefix(request.scope.get("root_path", "") or "")
    history = path.startswith(HISTORY_PREFIX + "/")
    listed = [c for c in request.app.state.collection_catalog["collections"].values()
              if is_history(c.id) == history]
    if type_filter is not None:
        listed = [c for c in listed if c.type == type_filter]
    if bbox_filter is not None:
        listed = [c for c in listed if c.bounds is not None
                  and s_intersects(bbox_filter, c.bounds)]
    if datetime_filter is not None:
        listed = [c for c in listed if c.dt_bounds is not None
                  and t_intersects(datetime_filter, c.dt_bounds)]
    matched = len(listed)
    listed = listed[offset:offset + limit] if limit else listed[offset:]
    returned = len(listed)
    return CollectionList(collections=listed, matched=matched,
                          next=offset + returned if matched - returned > offset else None,
                          prev=max(offset - limit, 0) if offset else None)


def titled_collections(endpoints: Endpoints) -> Callable[..., Response]:
    """tipg's /collections of these endpoints, with each collection's own title: tipg writes
    the collection's id as its title in that list (its /collections/{id} has the title), so
    QGIS's and OWSLib's layer lists showed `pub.parcel_balance` where the view's COMMENT
    says what the layer is (set_titles). Registered ahead of tipg's route, same path."""
    listing = next(r.endpoint for r in endpoints.ogc_features.router.routes
                   if getattr(r, "name", "") == "collections")

    def collections(
        request: Request,
        collection_list: Annotated[CollectionList, Depends(collections_listed)],
        output_type: Annotated[MediaType | None, Depends(OutputType)] = None,
    ) -> Response:
        data = json.loads(listing(request=request, collection_list=collection_list,
                                  output_type=MediaType.json).body)
        titles = {c.id: c.title for c in collection_list["collections"]}
        for listed in data["collections"]:
            listed["title"] = titles.get(listed["id"]) or listed["id"]
        if output_type == MediaType.html:
            return create_html_response(request, data, endpoints.templates, "collections",
                                        title="Collections list",
                                        router_prefix=endpoints.router_prefix)
        return ORJSONResponse(data)

    return collections


def create_app(settings: ServeSettings) -> FastAPI:
    """The whole service; the database is reached at start-up (lifespan)."""
    if not guard.valid_prefix(settings.root_path or "/"):
        raise ValueError(f"root path {settings.root_path[:60]!r} is not a path of letters, "
                         "digits and . _ ~ -")
    tipg_collections.mvt_settings.set_mvt_layername = True  # MVT layer = the view's name
    state = _State()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.pool = await create_pool(settings.pool)
        try:
            await register_collection_catalog(app, db_settings=catalog_settings())
            async with app.state.pool.acquire() as conn:
                ids = set(app.state.collection_catalog["collections"])
                state.sources.update(view_sources(
                    await conn.fetch("SELECT * FROM web.pub_view_sources()"), ids))
                set_titles(app.state.collection_catalog["collections"],
                           {f"pub.{r['relname']}": r["comment"]
                            for r in await conn.fetch(COMMENTS_SQL)})
                state.tile_views.update(
                    r["view_name"] for r in await conn.fetch(TILE_FUNCTIONS_SQL)
                    if f"pub.{r['view_name']}" in ids)
                keys = {f"pub.{r['relname']}": r["key"] for r in await conn.fetch(KEYS_SQL)}
                set_feature_ids(app.state.collection_catalog["collections"], keys)
                app.state.style_rules = [dict(r) for r in
                                         await conn.fetch("SELECT * FROM web.style_rule()")]
                state.map_views[:] = style.map_views(app.state.style_rules, state.tile_views)
                whole = map_tile_sources(state.sources, state.map_views)
                if whole is not None:
                    state.sources[MAP_TILE_PATH] = whole
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

    app = FastAPI(title=TITLE, openapi_url="/api", docs_url=None, redoc_url=None,
                  lifespan=lifespan, root_path=settings.root_path,
                  default_response_class=ORJSONResponse)
    templates = pages.templates()
    ogc = Endpoints(title=TITLE, with_tiles_viewer=False, templates=templates)
    history = Endpoints(title=HISTORY_TITLE, with_tiles_viewer=False, templates=templates,
                        router_prefix=HISTORY_PREFIX)
    # what reaches SQL from a request: parsed here (rulem_web.filters), not by tipg
    app.dependency_overrides[filter_query] = filters.checked_filter
    app.dependency_overrides[bbox_query] = filters.checked_bbox
    app.dependency_overrides[datetime_query] = filters.checked_datetime
    app.dependency_overrides[sortby_query] = filters.checked_sortby
    app.dependency_overrides[CollectionsParams] = collections_listed
    app.dependency_overrides[TileParams] = filters.checked_tile

    @app.get("/api.html", name="swagger_ui_html", include_in_schema=False)
    async def api_page(request: Request) -> HTMLResponse:
        """The API's description as a plain page (the OpenAPI JSON is at /api)."""
        return create_html_response(request, app.openapi(), templates, "api",
                                    title="rulem-db API")

    @app.get("/", include_in_schema=False)
    async def root(request: Request) -> Response:
        """The web map for a browser; tipg's OGC landing page (JSON) for GIS clients."""
        if wants_html(request):
            return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})
        route = next(r for r in ogc.router.routes if getattr(r, "name", "") == "landing")
        data = route.endpoint(request=request, output_type=MediaType.json)
        return ORJSONResponse(data.model_dump(exclude_none=True, mode="json"))

    @app.get("/api/style.json", tags=["rulem-db"])
    async def map_style(request: Request) -> JSONResponse:
        """The web map's MapLibre style: this service's tiles in the QGIS palette, only the
        layers the login may read, and the district's basemap (here, not in rulem_web.api:
        both need the serve settings and what the login may read)."""
        return JSONResponse(style.style(str(request.base_url), request.app.state.style_rules,
                                        request.app.state.plan_bounds,
                                        readable=state.map_views, basemap=settings.basemap),
                            headers={"Cache-Control": "no-cache"})

    @app.get("/api/legend", tags=["rulem-db"])
    async def map_legend(request: Request) -> JSONResponse:
        """The web map's legend entries, from the same rules as the style: the layers the
        map draws."""
        return JSONResponse(style.legend(request.app.state.style_rules, state.map_views),
                            headers={"Cache-Control": "no-cache"})

    basemap_file = settings.basemap.file if settings.basemap else None
    if basemap_file is not None:
        @app.api_route(BASEMAP_PATH, methods=["GET", "HEAD"], include_in_schema=False)
        async def basemap_tiles() -> FileResponse:
            """The district's PMTiles basemap; the map reads it by HTTP Range requests."""
            return FileResponse(basemap_file, media_type="application/vnd.pmtiles",
                                headers={"Cache-Control": "no-cache"})

    app.include_router(api.router)
    document.register(app, settings.pool)   # /permits/{permit_no}/document.pdf
    for prefix, endpoints in (("", ogc), (HISTORY_PREFIX, history)):
        app.add_api_route(prefix + "/collections", titled_collections(endpoints),
                          methods=["GET"], name="collections", include_in_schema=False)
    app.include_router(ogc.router)
    app.include_router(history.router, prefix=HISTORY_PREFIX)
    if MAPLIBRE_DIST.is_dir():
        app.mount("/static/vendor/maplibre-gl", StaticFiles(directory=MAPLIBRE_DIST),
                  name="maplibre")
    if PMTILES_DIST.is_dir():
        app.mount("/static/vendor/pmtiles", StaticFiles(directory=PMTILES_DIST), name="pmtiles")
    app.mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static")
    guard.install_error_handlers(app)

    app.add_middleware(TileFunctions, views=lambda: state.tile_views,
                       map_views=lambda: state.map_views)
    app.add_middleware(ETagMiddleware, stamps=_stamps, sources=lambda: state.sources)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST", "HEAD", "OPTIONS"],
                           allow_headers=["*"], expose_headers=["ETag"])
    # compressed answers: MapLibre is 1.06 MB raw, about 290 kB gzipped
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    app.add_middleware(ForwardedPrefix, trusted=settings.trusted_proxies)
    origin = settings.basemap.origin if settings.basemap else None
    # outermost: before anything reads the request
    app.add_middleware(guard.RequestGuard, image_origins=(origin,) if origin else ())
    return app
