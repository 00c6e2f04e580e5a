"""Helpers for the ingest tests: small files written on the spot, and a fingerprint of every
table so a test can prove that a refused file changed nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import geopandas as gpd
import shapely
import sqlalchemy as sa

# The working CRS of the test databases (conftest: SRID 26915), near Lino Lakes, MN.
X0, Y0 = 490_000.0, 5_002_000.0
ACRE_M2 = 4046.8564224
SQUARE_ACRES = 10_000 / ACRE_M2  # a 100 m square: 2.4711 acres


def square(i: int, size: float = 100.0, dx: float = 0.0) -> shapely.Polygon:
    """The i-th 100 m square of a row, west to east, 10 m apart."""
    x = X0 + i * (size + 10.0) + dx
    return shapely.box(x, Y0, x + size, Y0 + size)


def bowtie(i: int) -> shapely.Polygon:
    """A self-crossing ring whose repair changes the area a lot (refused)."""
    x = X0 + i * 110.0
    return shapely.Polygon([(x, Y0), (x + 100, Y0 + 100), (x + 100, Y0), (x, Y0 + 100),
                            (x, Y0)])


def spike(i: int) -> shapely.Polygon:
    """A 100 m square whose ring touches itself in a zero-area spike: invalid, and
    ST_MakeValid keeps its area exactly (repaired)."""
    x = X0 + i * 110.0
    return shapely.Polygon([(x, Y0), (x + 50, Y0), (x + 50, Y0 - 20), (x + 50, Y0),
                            (x + 100, Y0), (x + 100, Y0 + 100), (x, Y0 + 100), (x, Y0)])


def write_gpkg(path: Path, rows: list[dict[str, Any]], crs: str | None = "EPSG:26915",
               layer: str = "features") -> Path:
    """A GeoPackage of rows (each a dict of attributes and 'geometry')."""
    gdf = gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)
    gdf.to_file(path, layer=layer, driver="GPKG", engine="pyogrio")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[Any]]) -> Path:
    import csv

    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return path


def fingerprint(engine: sa.Engine) -> dict[str, tuple[int, str | None]]:
    """Row count and content checksum of every table in core, ops, ledger, checks and staging
    (staging must hold nothing between ingests)."""
    with engine.connect() as conn:
        tables = conn.execute(sa.text(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables "
            "WHERE table_schema IN ('core', 'ops', 'ledger', 'checks', 'staging') "
            "AND table_type = 'BASE TABLE' ORDER BY 1")).scalars().all()
        out = {}
        for t in tables:
            out[t] = tuple(conn.execute(sa.text(
                f"SELECT count(*), md5(string_agg(md5(x::text), '' ORDER BY md5(x::text))) "
                f"FROM {t} x")).one())
    return out


def scalar(engine: sa.Engine, sql: str, **params: Any) -> Any:
    with engine.connect() as conn:
        return conn.execute(sa.text(sql), params).scalar()


def rows(engine: sa.Engine, sql: str, **params: Any) -> list[sa.Row]:
    with engine.connect() as conn:
        return conn.execute(sa.text(sql), params).all()
