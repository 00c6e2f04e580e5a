"""Publishing benchmarks: vector tiles and the GeoPackage export on a parcel fabric.

    .venv/bin/python bench/publish.py [--parcels 100000] [--keep]

Makes a scratch database on the embedded cluster (or on RULEM_TEST_ADMIN_URL), loads a grid of
N square parcels (50 m, in EPSG:26915, Anoka County) through the versioning triggers, and
prints:
- tiles: milliseconds per pub.parcel_tile call at zoom 16, 14 and 12 over the parcels and far
  away, against the same query filtering on ST_Transform(geom, 3857) (what the tile function
  avoids: the index on the working CRS is then useless);
- export: seconds for all of pub.parcel to a GeoPackage with ogr2ogr (what rulem-db export
  does) and with geopandas.read_postgis + pyogrio (the Python alternative; pyogrio's own GDAL
  has no PostgreSQL driver), and the SRS each GeoPackage declares.
"""

from __future__ import annotations

import argparse
import math
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from demo import DEMO_PLAN_AREA  # noqa: E402
from rulem_db import db  # noqa: E402
from rulem_db.reports.export import _run_ogr2ogr  # noqa: E402

X0, Y0, SIZE = 480000.0, 4990000.0, 50.0
HALF = 20037508.342789244


def _admin_url() -> sa.engine.URL:
    url = os.environ.get("RULEM_TEST_ADMIN_URL")
    if not url:
        from rulem_db.local import cluster

        url = cluster.ensure_embedded().admin_url
    return make_url(url).set(drivername="postgresql+psycopg2")


def _tile(conn: sa.Connection, x: float, y: float, z: int) -> tuple[int, int]:
    mx, my = conn.execute(sa.text(
        "SELECT ST_X(p), ST_Y(p) FROM ST_Transform(ST_SetSRID(ST_MakePoint(:x, :y), 26915), "
        "3857) p"), {"x": x, "y": y}).one()
    size = 2 * HALF / 2 ** z
    return int((mx + HALF) // size), int((HALF - my) // size)


NAIVE = """
WITH t AS (SELECT ST_TileEnvelope(:z, :x, :y) AS b)
SELECT ST_AsMVT(f.*, 'parcel', 4096, 'g') FROM (
  SELECT ST_AsMVTGeom(ST_Transform(v.geom, 3857), t.b, 4096, 64, true) AS g, v.parcel_id, v.pin
  FROM pub.parcel v, t WHERE ST_Transform(v.geom, 3857) && t.b) f
"""


def _time(conn: sa.Connection, sql: str, params: dict, repeat: int) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        size = len(conn.execute(sa.text(sql), params).scalar() or b"")
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parcels", type=int, default=100_000)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    admin = _admin_url()
    name = f"rulem_bench_publish_{os.getpid()}"
    root = sa.create_engine(admin.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with root.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    url = admin.set(database=name).render_as_string(hide_password=False)
    try:
        db.migrate(url, srid=26915, plan_area=DEMO_PLAN_AREA)
        side = math.ceil(math.sqrt(args.parcels))
        eng = db.engine(url)
        start = time.perf_counter()
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
                "SELECT 1, 'P' || i, 'P' || i, ST_Multi(ST_MakeEnvelope(:x0 + (i % :s) * :d, "
                ":y0 + (i / :s) * :d, :x0 + (i % :s + 1) * :d, :y0 + (i / :s + 1) * :d, 26915)) "
                "FROM generate_series(0, :n - 1) i"),
                {"x0": X0, "y0": Y0, "s": side, "d": SIZE, "n": args.parcels})
            conn.execute(sa.text("ANALYZE core.parcel"))
        print(f"{args.parcels} parcels of {SIZE:g} m loaded in {time.perf_counter() - start:.1f} s "
              f"({side} x {side} grid, {side * SIZE / 1000:.1f} km wide)")
        with eng.connect() as conn:
            centre = (X0 + side * SIZE / 2, Y0 + side * SIZE / 2)
            print("tiles (median of 5 calls):  zoom  features-area  tile bytes  "
                  "pub.parcel_tile ms  transform-then-filter ms")
            for z in (16, 14, 12):
                x, y = _tile(conn, *centre, z)
                fast, size = _time(conn, "SELECT pub.parcel_tile(:z, :x, :y)",
                                   {"z": z, "x": x, "y": y}, 5)
                naive, _ = _time(conn, NAIVE, {"z": z, "x": x, "y": y}, 5)
                print(f"{'':28}{z:4}  {'over data':>13}  {size:10}  {fast:18.1f}  {naive:24.1f}")
            far, size = _time(conn, "SELECT pub.parcel_tile(14, 8192, 8192)", {}, 5)
            print(f"{'':28}{14:4}  {'far away':>13}  {size:10}  {far:18.1f}")
        eng.dispose()
        with tempfile.TemporaryDirectory() as d:
            start = time.perf_counter()
            _run_ogr2ogr(url, Path(d) / "ogr.gpkg", ["parcel"])
            ogr_s = time.perf_counter() - start
            import geopandas as gpd
            import pyogrio

            start = time.perf_counter()
            eng = db.engine(url)
            frame = gpd.read_postgis("SELECT * FROM pub.parcel", eng, geom_col="geom")
            pyogrio.write_dataframe(frame, Path(d) / "py.gpkg", layer="parcel",
                                    use_arrow=True)
            py_s = time.perf_counter() - start
            eng.dispose()
            for label, path, secs in (("ogr2ogr", "ogr.gpkg", ogr_s),
                                      ("read_postgis + pyogrio", "py.gpkg", py_s)):
                with sqlite3.connect(Path(d) / path) as lite:
                    srs = lite.execute(
                        "SELECT s.organization || ':' || s.organization_coordsys_id "
                        "FROM gpkg_contents c JOIN gpkg_spatial_ref_sys s USING (srs_id) "
                        "WHERE c.table_name = 'parcel'").fetchone()[0]
                    n = lite.execute("SELECT count(*) FROM parcel").fetchone()[0]
                print(f"export {label:24} {secs:6.1f} s  {n} features  SRS {srs}")
    finally:
        if not args.keep:
            with root.connect() as conn:
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        root.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
