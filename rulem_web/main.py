"""uvicorn's entry point: `rulem_web.main:app` (a factory), configured by `rulem-db serve`
through RULEM_WEB_* environment variables (and the district's RULEM_BASEMAP_*), so that every
worker process builds the same application."""

from __future__ import annotations

import os

from fastapi import FastAPI

from rulem_web import basemap
from rulem_web.app import ServeSettings, create_app
from rulem_web.database import PoolSettings


def _list(name: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in os.environ.get(name, "").split(",") if v.strip())


def app() -> FastAPI:
    """The application from the environment `rulem-db serve` set."""
    dsn = os.environ.get("RULEM_WEB_DSN")
    if not dsn:
        raise RuntimeError("RULEM_WEB_DSN is not set: start the service with rulem-db serve")
    pool = PoolSettings(dsn=dsn, set_role=os.environ.get("RULEM_WEB_SET_ROLE") or None,
                        max_size=int(os.environ.get("RULEM_WEB_CONNECTIONS") or 10))
    return create_app(ServeSettings(
        pool=pool, plan_area=os.environ.get("RULEM_WEB_PLAN_AREA") or None,
        cors_origins=_list("RULEM_WEB_CORS"),
        trusted_proxies=_list("RULEM_WEB_PROXIES") or ("127.0.0.1", "::1"),
        root_path=os.environ.get("RULEM_WEB_ROOT_PATH", ""),
        basemap=basemap.from_environment()))
