"""Shared pieces of the hardening tests (crash safety, concurrency): the demo plan area loaded
once per session into a template database, clones of it, a fingerprint of every table, and
ways to find what a child's database backend is doing.

Why a template: loading the demo through ingest takes seconds; cloning it takes a fraction of
one, so each test starts from the same real data without paying for the load again.
"""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import pytest
import shapely
import sqlalchemy as sa
from ingest_helpers import fingerprint

from rulem_db import db

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "hardening_driver.py"
_counter = itertools.count()
NEW_PIN = "223122999999"

__all__ = ["fingerprint"]


@dataclass(frozen=True)
class DemoTemplate:
    """A database holding the demo plan area (loaded, not recomputed) and its files."""

    name: str
    directory: Path


def parcels_changed(directory: Path, out: Path) -> Path:
    """The demo's parcels re-delivered with the first parcel grown 10 m east into the second,
    the second gone and a new one where the rest of the second was: an ingest of it reports
    1 new, 1 changed, 1 closed and the rest unchanged."""
    gdf = gpd.read_file(directory / "demo.gpkg", layer="parcel", engine="pyogrio")
    gdf = gdf.sort_values("feature_key").reset_index(drop=True)
    x0, y0, x1, y1 = gdf.geometry.iloc[0].bounds
    gdf.loc[0, "geometry"] = shapely.MultiPolygon([shapely.box(x0, y0, x1 + 10.0, y1)])
    _, sy0, sx1, sy1 = gdf.geometry.iloc[1].bounds
    new = gdf.iloc[[1]].copy()
    new["feature_key"] = new["pin"] = new["pin_normalized"] = NEW_PIN
    new["geometry"] = [shapely.MultiPolygon([shapely.box(x1 + 20.0, sy0, sx1, sy1)])]
    gdf = gpd.GeoDataFrame(pd.concat([gdf.drop(index=1), new], ignore_index=True),
                           geometry="geometry", crs=gdf.crs)
    gdf.to_file(out, layer="parcel", driver="GPKG", engine="pyogrio")
    return out


def impact_grown(directory: Path, out: Path, permit: str = "24-001") -> Path:
    """One permit's impacts re-delivered with each grown 5 m east (ingest with --permit)."""
    gdf = gpd.read_file(directory / "demo.gpkg", layer="impact", engine="pyogrio")
    gdf = gdf[gdf["permit_key"] == permit].reset_index(drop=True)
    gdf["geometry"] = [shapely.MultiPolygon([shapely.box(g.bounds[0], g.bounds[1],
                                                         g.bounds[2] + 5.0, g.bounds[3])])
                       for g in gdf.geometry]
    gdf.to_file(out, layer="impact", driver="GPKG", engine="pyogrio")
    return out


def wait_for(what: str, probe: Callable[[], Any], timeout: float = 60.0,
             interval: float = 0.02) -> Any:
    """Poll probe until it returns something truthy; fail naming what was awaited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def backends(admin: sa.Engine, database: str) -> list[sa.Row]:
    """Client backends of database other than the caller's, with what each is doing."""
    with admin.connect() as conn:
        return conn.execute(sa.text(
            "SELECT pid, state, wait_event_type, wait_event, query, "
            "pg_blocking_pids(pid) AS blocked_by FROM pg_stat_activity "
            "WHERE datname = :d AND backend_type = 'client backend' "
            "AND pid <> pg_backend_pid()"), {"d": database}).all()


def gone(admin: sa.Engine, pid: int) -> bool:
    """Whether the backend pid has ended (its transaction rolled back or committed)."""
    with admin.connect() as conn:
        return not conn.execute(sa.text(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = :p)"),
            {"p": pid}).scalar_one()


def database_of(url: str) -> str:
    return sa.engine.make_url(url).database or ""


def admin_engine(url: str) -> sa.Engine:
    """An engine for watching and locking (application name 'hardening-test')."""
    return sa.create_engine(url, connect_args={"application_name": "hardening-test"},
                            isolation_level="AUTOCOMMIT")


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


# A row's content without its ids (assigned in the order of arrival, so two databases that got
# the same data in another order number it differently) and its bookkeeping times and roles.
CONTENT = ("md5((SELECT jsonb_object_agg(k, v)::text FROM jsonb_each(to_jsonb(t)) e(k, v) "
           "WHERE k NOT LIKE '%\\_id' AND k NOT IN ('valid_from', 'valid_to', 'created_by', "
           "'closed_by')))")


def published(url: str) -> dict[str, list[tuple]]:
    """What staff see: every balance row and every current feature of every layer (without
    version ids, batch ids or timestamps, which differ between two databases by design)."""
    eng = db.engine(url)
    out: dict[str, list[tuple]] = {}
    try:
        with eng.connect() as conn:
            for view in ("plan_balance", "permit_balance", "parcel_balance"):
                out[view] = [tuple(r) for r in conn.execute(sa.text(
                    f"SELECT {CONTENT.replace('(t)', '(b)')} AS c FROM pub.{view} b "
                    f"ORDER BY c"))]
            for (table,) in conn.execute(sa.text(
                    "SELECT table_name FROM information_schema.columns WHERE table_schema = "
                    "'core' AND column_name = 'valid_to' AND table_name <> 'parameter' "
                    "ORDER BY 1")).all():
                out[table] = [tuple(r) for r in conn.execute(sa.text(
                    f"SELECT count(*) FILTER (WHERE valid_to IS NULL), count(*), "
                    f"md5(string_agg({CONTENT}, '' ORDER BY {CONTENT}) "
                    f"FILTER (WHERE valid_to IS NULL)) FROM core.{table} t"))]
    finally:
        eng.dispose()
    return out
