"""Benchmark: the rule checks on a synthetic plan area of many permits.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/checks.py [--permits N]
        [--wetlands N] [--keep]

Builds a scratch database on the embedded cluster (`rulem_bench_checks`, dropped at the end
unless --keep): a central wetland band with N permits side by side along it (each a 150 m x
350 m parcel with a 20 m buffer and markers, a ditch into the band, a fill of an isolated
wetland, a subwatershed on two soils with land cover and BMPs, a hydroperiod row,
declarations and an easement), plus --wetlands isolated wetlands scattered beyond the band
(the central-wetland connectivity looks at all of them), all generated in SQL. Then it
prints the time of each check function over the whole plan area, of checks.run_checks (what
the nightly run and `rulem-db check` do), of one permit's run, and of reading the live views
pub.buffer_transect and pub.stormwater_volume.
"""

from __future__ import annotations

import argparse
import time

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from demo import DEMO_PLAN_AREA
from rulem_db import db
from rulem_db.local import cluster

DBNAME = "rulem_bench_checks"
X0, Y0 = 480_000.0, 4_990_000.0
W = 150.0  # parcel width along the band, m

GENERATE = """
INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, 'bench', ST_Multi(ST_MakeEnvelope(:x0 - 1000, :y0 - 1000,
                                             :x0 + :n * :w + 1000, :y0 + 3000, 26915)));
INSERT INTO core.central_wetland_seed (plan_area_id, name, geom)
VALUES (1, 'band', ST_Multi(ST_MakeEnvelope(:x0 - 100, :y0, :x0 + :n * :w + 100, :y0 + 100,
                                           26915)));
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on,
                              tep_reviewed_on, geom)
VALUES (1, 'D-1', 'approved', '2020-01-01', '2019-12-01',
        ST_Multi(ST_MakeEnvelope(:x0 - 1000, :y0 - 1000, :x0 + :n * :w + 1000, :y0 + 3000,
                                 26915)));

-- the central band, one wetland per parcel width, touching its neighbours, running on 100 m
-- beyond the first and the last parcel
INSERT INTO core.wetland (plan_area_id, delineation_id, circular39_type, susceptibility_class,
                          source_fid, geom)
SELECT 1, (SELECT delineation_id FROM core.delineation WHERE delineation_no = 'D-1'), '3',
       'moderate', 'band-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w - CASE WHEN i = 0 THEN 100 ELSE 0 END, :y0,
                                :x0 + (i + 1) * :w + CASE WHEN i = :n - 1 THEN 100 ELSE 0 END,
                                :y0 + 100, 26915))
FROM generate_series(0, :n - 1) i;
-- isolated wetlands, one per permit parcel (to be filled) and --wetlands scattered north
INSERT INTO core.wetland (plan_area_id, delineation_id, circular39_type, susceptibility_class,
                          source_fid, geom)
SELECT 1, (SELECT delineation_id FROM core.delineation WHERE delineation_no = 'D-1'), '1',
       'least', 'iso-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w + 20, :y0 - 250, :x0 + i * :w + 60, :y0 - 210,
                                26915))
FROM generate_series(0, :n - 1) i;
INSERT INTO core.wetland (plan_area_id, delineation_id, circular39_type, source_fid, geom)
SELECT 1, (SELECT delineation_id FROM core.delineation WHERE delineation_no = 'D-1'), '2',
       'far-' || j,
       ST_Multi(ST_MakeEnvelope(x, y, x + 30, y + 30, 26915))
FROM (SELECT j, :x0 + (j % 200) * (:n * :w / 200.0) AS x,
             :y0 + 300 + (j / 200) * 60 AS y
      FROM generate_series(0, :wetlands - 1) j) s;
INSERT INTO core.functional_assessment (plan_area_id, wetland_id, method)
SELECT 1, wetland_id, 'MnRAM 3.4' FROM core.wetland;

INSERT INTO core.soil (plan_area_id, hydrologic_soil_group, high_groundwater, contaminated,
                       source_fid, geom)
VALUES (1, 'B', false, false, 'B', ST_Multi(ST_MakeEnvelope(:x0, :y0 - 350, :x0 + :n * :w,
                                                           :y0 - 200, 26915))),
       (1, 'D', false, false, 'D', ST_Multi(ST_MakeEnvelope(:x0, :y0 - 200, :x0 + :n * :w,
                                                           :y0 - 20, 26915)));

INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
SELECT 1, 'P' || i, 'P' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w, :y0 - 350, :x0 + (i + 1) * :w, :y0 + 50, 26915))
FROM generate_series(0, :n - 1) i;
INSERT INTO core.permit (plan_area_id, permit_no, parcel_pins, status, decided_on,
                         vegetation_plan_on, ditch_determined_on)
SELECT 1, format('24-%s', lpad(i::text, 4, '0')), ARRAY['P' || i], 'approved', '2024-06-01',
       '2024-05-01', '2024-03-01'
FROM generate_series(0, :n - 1) i;
CREATE TEMP TABLE bp AS
SELECT (regexp_match(permit_no, '24-(\\d+)'))[1]::int AS i, permit_id FROM core.permit;

INSERT INTO core.buffer (plan_area_id, permit_id, declaration_no, geom)
SELECT 1, permit_id, 'B' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w, :y0 - 20, :x0 + (i + 1) * :w, :y0, 26915))
FROM bp;
INSERT INTO core.buffer_marker (plan_area_id, permit_id, marker_type, source_fid, geom)
SELECT 1, permit_id, 'free_standing', format('m-%s-%s', i, k),
       ST_SetSRID(ST_MakePoint(:x0 + i * :w + k * 50, :y0 - 20), 26915)
FROM bp, generate_series(0, 3) k;
INSERT INTO core.ditch (plan_area_id, permit_id, status, determined_on, source_fid, geom)
SELECT 1, permit_id, 'active', '2024-03-01', 'dt-' || i,
       ST_Multi(ST_SetSRID(ST_MakeLine(ST_MakePoint(:x0 + i * :w + 75, :y0 - 300),
                                       ST_MakePoint(:x0 + i * :w + 75, :y0 + 50)), 26915))
FROM bp;
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, permit_id, 'fill', 'i-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w + 20, :y0 - 250, :x0 + i * :w + 60, :y0 - 210,
                                26915))
FROM bp;
INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom)
SELECT 1, permit_id, 'proposed', 'is-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w + 80, :y0 - 340, :x0 + i * :w + 140, :y0 - 150,
                                26915))
FROM bp;
INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, geom)
SELECT 1, permit_id, true, 'g-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w, :y0 - 350, :x0 + (i + 1) * :w, :y0 - 100, 26915))
FROM bp;
INSERT INTO core.subwatershed (plan_area_id, permit_id, name, source_fid, geom)
SELECT 1, permit_id, 'SW-' || i, 'sw-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w, :y0 - 350, :x0 + (i + 1) * :w, :y0 - 100, 26915))
FROM bp;
INSERT INTO core.land_cover (plan_area_id, permit_id, cover_class, source_fid, geom)
SELECT 1, permit_id, c.cls, format('lc-%s-%s', i, c.cls),
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w + c.x0, :y0 - 350, :x0 + i * :w + c.x1, :y0 - 100,
                                26915))
FROM bp, (VALUES ('open_space_good', 0, 80), ('impervious', 80, 150)) c(cls, x0, x1);
INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft,
                      roof_runoff_only, source_fid, geom)
SELECT 1, bp.permit_id, s.subwatershed_id, b.kind, b.v, false, format('bmp-%s-%s', i, b.kind),
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w + b.x0, :y0 - 345, :x0 + i * :w + b.x0 + 10,
                                :y0 - 335, 26915))
FROM bp JOIN core.subwatershed s USING (permit_id),
     (VALUES ('infiltration', 30000, 5), ('pretreatment', 3000, 20),
             ('biofiltration', 20000, 35), ('wet_pond', 80000, 50)) b(kind, v, x0);
INSERT INTO core.hydroperiod (plan_area_id, permit_id, wetland_id, existing_bounce_ft,
                              proposed_bounce_ft, existing_inundation_days,
                              proposed_inundation_days)
SELECT 1, bp.permit_id, w.wetland_id, 1.0, 1.3, 4, 5
FROM bp JOIN core.wetland w ON w.source_fid = 'band-' || bp.i;
INSERT INTO core.declaration (plan_area_id, permit_id, kind, recording_no)
SELECT 1, permit_id, k, k || '-' || i FROM bp, unnest(ARRAY['buffer', 'fertilizer_snow']) k;
INSERT INTO core.easement (plan_area_id, permit_id, recording_no, source_fid, geom)
SELECT 1, permit_id, 'E-' || i, 'e-' || i,
       ST_Multi(ST_MakeEnvelope(:x0 + i * :w, :y0 - 350, :x0 + (i + 1) * :w, :y0 + 50, 26915))
FROM bp;
"""

CHECKS = ("check_applicability", "check_delineation", "check_wetland_records",
          "check_ditch_determination", "check_stormwater", "check_infiltration_soils",
          "check_hydroperiod", "check_declarations", "check_easement", "check_marker_lot_line",
          "check_marker_gap", "check_buffer_width", "check_vegetation_plan",
          "check_buffer_encroachment", "check_infiltration_in_buffer", "check_trail_width",
          "check_replacement", "check_structures")


def _timed(conn: sa.Connection, sql: str, **params: object) -> tuple[float, object]:
    started = time.perf_counter()
    value = conn.execute(sa.text(sql), params).scalar()
    return time.perf_counter() - started, value


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--permits", type=int, default=100)
    parser.add_argument("--wetlands", type=int, default=2000)
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards")
    args = parser.parse_args()

    admin = make_url(cluster.ensure_embedded().admin_url).set(drivername="postgresql+psycopg2")
    root = sa.create_engine(admin.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with root.connect() as c:
        c.execute(sa.text(f"DROP DATABASE IF EXISTS {DBNAME}"))
        c.execute(sa.text(f"CREATE DATABASE {DBNAME}"))
    url = admin.set(database=DBNAME).render_as_string(hide_password=False)
    try:
        db.migrate(url, srid=26915, plan_area=DEMO_PLAN_AREA)
        eng = db.engine(url)
        started = time.perf_counter()
        with eng.begin() as conn:
            conn.exec_driver_sql("SET LOCAL jit = off")
            raw = conn.connection.dbapi_connection
            with raw.cursor() as cur:
                cur.execute(GENERATE.replace(":wetlands", str(args.wetlands))
                            .replace(":x0", str(X0)).replace(":y0", str(Y0))
                            .replace(":n", str(args.permits)).replace(":w", str(W)))
            conn.exec_driver_sql("ANALYZE")
        print(f"generated {args.permits} permits, {2 * args.permits + args.wetlands} "
              f"wetlands in {time.perf_counter() - started:.1f} s")
        with eng.connect() as conn:
            print(f"{'check function (whole plan area)':40} {'s':>8} {'rows':>8}")
            total = 0.0
            for fn in CHECKS:
                seconds, rows = _timed(conn, f"SELECT count(*) FROM checks.{fn}(1)")
                total += seconds
                print(f"{fn:40} {seconds:8.2f} {rows:8}")
            print(f"{'sum of the check functions':40} {total:8.2f}")
        with eng.begin() as conn:
            seconds, run_id = _timed(conn, "SELECT checks.run_checks(1)")
            n = conn.execute(sa.text("SELECT finding_count FROM checks.run WHERE run_id = :r"),
                             {"r": run_id}).scalar()
            print(f"{'checks.run_checks (plan area)':40} {seconds:8.2f} "
                  f"{n:8} findings")
            pid = conn.execute(sa.text("SELECT min(permit_id) FROM core.permit")).scalar()
            seconds, _ = _timed(conn, "SELECT checks.run_checks(1, :p)", p=pid)
            print(f"{'checks.run_checks (one permit)':40} {seconds:8.2f}")
            per = seconds
        with eng.connect() as conn:
            for view in ("buffer_transect", "stormwater_volume"):
                seconds, rows = _timed(conn, f"SELECT count(*) FROM pub.{view}")
                print(f"{'pub.' + view:40} {seconds:8.2f} {rows:8}")
        print(f"one permit: {per:.2f} s; per permit in the plan-wide run: "
              f"{_timed_per_permit(url, args.permits):.3f} s")
        eng.dispose()
    finally:
        if not args.keep:
            with root.connect() as c:
                c.execute(sa.text(f"DROP DATABASE IF EXISTS {DBNAME} WITH (FORCE)"))
        root.dispose()


def _timed_per_permit(url: str, permits: int) -> float:
    eng = db.engine(url)
    try:
        with eng.connect() as conn:
            seconds = conn.execute(sa.text(
                "SELECT extract(epoch FROM max(finished_at - started_at)) FROM checks.run "
                "WHERE permit_id IS NULL")).scalar()
        return float(seconds or 0) / max(permits, 1)
    finally:
        eng.dispose()


if __name__ == "__main__":
    main()
