"""Reading query results into GeoDataFrames for the reports: the parcel layer with its balances,
and any query that selects its geometry as EWKB.

Why a module of its own: the run report (run.py) and the read ahead of its parcels while the
checks run (prefetch.py) both read the parcel frame; with the reader in run.py, prefetch had to
import run.py back inside a function (an import circle). Both now import it from here, and
neither imports the other's callers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:  # geopandas, pandas and shapely load only when a frame is read (1-2 s)
    import geopandas as gpd

# Up to this many parcels a plan area's maps draw every parcel from its polygon, with its edge
# (and its PIN at site scale); above it an edge is narrower than a pixel, and the maps draw the
# parcel raster kept between nights instead (reports/tiles.py).
MAX_EDGED_PARCELS = 20_000

PARCEL_COLUMNS = ("parcel_id", "pin", "impact_acres", "required_acres", "credit_acres",
                  "credit_proposed_acres", "credit_constructed_acres", "credit_hosted_acres",
                  "balance_acres", "status")


def read_geo(conn: sa.Connection, sql: str, params: dict[str, Any]) -> gpd.GeoDataFrame:
    """A query's rows as a GeoDataFrame, as geopandas.read_postgis makes them (the same
    columns, values, types and CRS), read faster: the query selects its geometry as binary
    EWKB in a column `geom`, the rows come as plain tuples and the geometries are decoded in
    one vectorised call (read_postgis parses hex text one Python call per row: about 2 s of a
    county's 100,000 parcels)."""
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import shapely

    result = conn.execute(sa.text(sql), params)
    columns = list(result.keys())
    rows = [tuple(r) for r in result.cursor.fetchall()] if result.cursor else []
    result.close()
    frame = pd.DataFrame.from_records(rows, columns=columns, coerce_float=True)
    wkb = np.array([None if g is None else bytes(g) for g in frame["geom"]], dtype=object)
    have = np.array([g is not None for g in wkb], dtype=bool)
    geoms = np.full(len(wkb), None, dtype=object)
    geoms[have] = shapely.from_wkb(wkb[have])
    crs = None
    if have.any():  # as read_postgis: the SRID of the first geometry
        srid = int(shapely.get_srid(geoms[have][0]))
        crs = f"EPSG:{srid}" if srid else None
    frame["geom"] = geoms
    return gpd.GeoDataFrame(frame, geometry="geom", crs=crs)


def read_parcel_frame(conn: sa.Connection, plan_area_id: int) -> gpd.GeoDataFrame:
    """Every current parcel of the plan area with its balance, by PIN (the CSV's rows and the
    maps' parcels)."""
    return read_geo(
        conn, f"SELECT {', '.join(PARCEL_COLUMNS)}, ST_AsEWKB(geom) AS geom "
        "FROM pub.parcel_balance WHERE plan_area_id = :p ORDER BY pin", {"p": plan_area_id})


def parcel_count(conn: sa.Connection, plan_area_id: int) -> int:
    """The plan area's current parcels."""
    return int(conn.execute(sa.text(
        "SELECT count(*) FROM core.parcel WHERE valid_to IS NULL AND plan_area_id = :p"),
        {"p": plan_area_id}).scalar_one())


def drawn_as_vectors(parcels: int) -> bool:
    """Whether a plan area's maps draw every parcel from its polygon, and its report reads
    them all: up to MAX_EDGED_PARCELS. Here and not in map.py because the nightly asks before
    its checks, and importing map.py (matplotlib) there cost 0.9 s in the night's own thread
    that the thread loading it beside the checks (flows.nightly) now takes."""
    return parcels <= MAX_EDGED_PARCELS
