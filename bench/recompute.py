"""Benchmark: the ledger's recompute on a synthetic county-sized plan area, against a plain
geopandas overlay of the same layers.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/recompute.py [--keep] [--seed N]
        [--repeat N]

Builds a scratch database on the embedded cluster (`rulem_bench_ledger`, dropped at the end
unless --keep; the generated county is kept as the template `rulem_bench_ledger_src`, so the
next run clones it in seconds: --fresh regenerates, --clean drops it): the real Anoka County
outline as the plan area, 100,320 parcels, 30,000 wetlands with realistic outlines (most a few
dozen vertices, 300 complexes of 1,000-4,000) in 110 delineations plus 20 later
re-delineations that supersede parts of them, 2,000 permits (impacts, replacements of every
status, upland components, buffers), 500 heritage areas, 10 District projects and credit
transfers, all generated in SQL with generate_series. Then it prints:

  * the full recompute (rulem-db recompute --all, two workers) on an empty ledger and the
    geopandas overlay below, --repeat times each (default 3), alternating, from a fresh copy
    of the county each time; the medians are compared. Then the recompute again when nothing
    changed;
  * the recompute after one wetland changed, with the entries and parcels it touched: by the
    resident service (`rulem-db watch`: commit to posted, median of five after five changes),
    and from a new connection (`rulem-db recompute`, a nightly run);
  * the same acres (impact and credit per permit, required per parcel) from geopandas:
    read the layers, overlay, dissolve, allocate; timed with and without reading;
  * both sets of figures side by side, with the largest difference.

Targets (issue 4): full recompute at least 5x faster than the geopandas overlay; one-change
recompute under 1% of the full one. Every permit's baseline date is after every approval, so
one wetland layer serves all permits and geopandas computes the same thing.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import hashlib
import math
import os
import queue
import re
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from demo import DEMO_PLAN_AREA
from rulem_db import db, ledger
from rulem_db.ledger.watch import LedgerWatch, WatchEvent
from rulem_db.local import cluster
from rulem_db.paths import MIGRATIONS_DIR, shared_dir

DBNAME = "rulem_bench_ledger"
SOURCE = "rulem_bench_ledger_src"  # the generated county, kept as a template between runs
ACRE_M2 = 4046.8564224
PARTIAL_DRAIN_FACTOR = 0.5  # the seeded parameter (spec section 6)
COUNTED_STATUS = "certified"  # the seeded counted_credit_status (docs/ledger.md section 1)
STATUS_RANK = {"proposed": 1, "constructed": 2, "certified": 3}  # ledger.status_rank

# Sizes: the real Anoka County outline (1,098 vertices, 1,153 km^2, from the team's shared
# data) is the plan area; a 380 x 264 grid of parcels (102 m x 159 m) covers its box.
COLS, ROWS = 380, 264           # 100,320 parcels
PARCEL_W, PARCEL_H = 102.2, 159.4
X0, Y0 = 459_800.0, 4_986_920.0
WETLANDS, COMPLEXES, PERMITS, HERITAGE, PROJECTS, TRANSFERS = 30_000, 300, 2_000, 500, 10, 100
COUNTIES = "data/real/mn_metro_counties/counties.sql.gz"  # under the shared folder

GENERATE = """
SELECT setseed(:seed);
INSERT INTO core.cwmp_area (plan_area_id, name, geom)
VALUES (1, :plan_name, ST_Multi(ST_GeomFromEWKB(decode(:county, 'hex'))));

INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom)
SELECT 1, format('%s%s-%s', :tag, c, r),
       format('P%s%s%s', :tag, lpad(c::text, 3, '0'), lpad(r::text, 3, '0')),
       ST_Multi(ST_MakeEnvelope(:x0 + c * :pw, :y0 + r * :ph,
                                :x0 + (c + 1) * :pw, :y0 + (r + 1) * :ph, 26915))
FROM generate_series(0, :cols - 1) c, generate_series(0, :rows - 1) r;

-- 110 delineations tiling the county's box (4 km squares), approved 2005-2014, and 20 later
-- re-delineations (2 km squares) approved 2016-2019 that supersede what they cover.
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
SELECT 1, format('%sD-%s', :tag, i), 'approved', DATE '2005-01-01' + (i * 33),
       ST_Multi(ST_MakeEnvelope(:x0 + (i % 10) * 4000, :y0 + (i / 10) * 4000,
                                :x0 + (i % 10 + 1) * 4000, :y0 + (i / 10 + 1) * 4000, 26915))
FROM generate_series(0, 109) i;
INSERT INTO core.delineation (plan_area_id, delineation_no, status, approved_on, geom)
SELECT 1, format('%sR-%s', :tag, i), 'approved', DATE '2016-01-01' + (i * 50),
       ST_Multi(ST_MakeEnvelope(x, y, x + 2000, y + 2000, 26915))
FROM (SELECT i, :x0 + floor(random() * 36000) AS x, :y0 + floor(random() * 40000) AS y
      FROM generate_series(1, 20) i) s;

-- Wetlands: star-shaped outlines with the vertex counts of real inventories (NWI: median
-- about 40, a long tail to thousands): 29,700 basins 10-45 m across the centre, and 300
-- complexes 300-1,500 m with 1,000-4,000 vertices, all centred inside the county. Each
-- belongs to the delineation whose study area holds its centre (the latest approved).
CREATE TEMP TABLE county AS SELECT geom FROM core.cwmp_area;
CREATE TEMP TABLE w_src AS
SELECT row_number() OVER () AS i, c.pt AS c,
       CASE WHEN row_number() OVER () <= :complexes THEN 300 + random() * 1200
            ELSE 10 + random() * 35 END AS r,
       CASE WHEN row_number() OVER () <= :complexes THEN 1000 + floor(random() * 3000)::int
            ELSE 8 + floor(exp(power(random(), 1.6) * ln(700)))::int END AS n,
       0.1 + random() * 0.25 AS a1, random() * 0.15 AS a2,
       random() * 2 * pi() AS p1, random() * 2 * pi() AS p2
FROM (SELECT ST_SetSRID(ST_MakePoint(:x0 + random() * :cols * :pw,
                                     :y0 + random() * :rows * :ph), 26915) AS pt
      FROM generate_series(1, :wetlands * 2)) c, county
WHERE ST_Contains(county.geom, c.pt)
LIMIT :wetlands;
CREATE TEMP TABLE w_geom AS
SELECT w.i, w.n, ST_MakePolygon(ST_AddPoint(ring.line, ST_StartPoint(ring.line))) AS geom
FROM w_src w
CROSS JOIN LATERAL (
  SELECT ST_SetSRID(ST_MakeLine(ARRAY(
    SELECT ST_MakePoint(ST_X(w.c) + rr * cos(t), ST_Y(w.c) + rr * sin(t))
    FROM generate_series(0, w.n - 1) k,
         LATERAL (SELECT 2 * pi() * k / w.n AS t) tt,
         LATERAL (SELECT w.r * (1 + w.a1 * sin(3 * t + w.p1) + w.a2 * sin(7 * t + w.p2)
                               + 0.03 * random()) AS rr) r
    ORDER BY k)), 26915) AS line
) ring;
INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, circular39_type, geom)
SELECT 1, d.delineation_id, :tag || 'W' || w.i, (1 + (w.i % 8))::text, ST_Multi(w.geom)
FROM w_geom w
JOIN w_src s ON s.i = w.i
CROSS JOIN LATERAL (SELECT dl.delineation_id FROM core.delineation dl
                    WHERE dl.geom && s.c AND ST_Contains(dl.geom, s.c)
                    ORDER BY dl.approved_on DESC LIMIT 1) d;

-- Permits decided 2020-2025 (5% still under review). Seven in ten fill, excavate or drain
-- 1-3 patches of a basin; three in ten work at the edge of a complex. Each replaces on
-- ground 100-600 m away (certified 60%, constructed 20%, proposed 20%), some with an upland
-- component, most with a declared buffer.
INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on)
SELECT 1, format('%s-%s', 20 + (:permit_offset + i) % 6,  -- YY-NNNN (the schema's shape),
                 lpad(((:permit_offset + i) % 10000)::text, 4, '0')),  -- numbered across
                                     -- tiles: n, n + 10,000, n + 20,000 differ in the year
       CASE WHEN i % 20 = 0 THEN 'under_review' ELSE 'approved' END,
       CASE WHEN i % 20 = 0 THEN NULL ELSE DATE '2020-01-01' + (i % 2000) END
FROM generate_series(1, :permits) i;
-- (a site on a complex's outline that lies outside the county moves to the basin: the
-- database refuses an impact or replacement wholly outside the plan area, sql/014)
CREATE TEMP TABLE p_site AS
SELECT p.permit_id, p.rn,
       CASE WHEN p.rn % 10 < 3 AND ST_Intersects(county.geom, ST_PointN(ST_ExteriorRing(
                 big.geom), (1 + (p.rn * 7919) % (big.n - 1))::int))
            THEN ST_PointN(ST_ExteriorRing(big.geom), (1 + (p.rn * 7919) % (big.n - 1))::int)
            ELSE ST_Centroid(small.geom) END AS c
FROM county, (SELECT permit_id, row_number() OVER (ORDER BY permit_id) AS rn
      FROM core.permit WHERE valid_to IS NULL
        AND permit_no IN (                        -- this tile's permits, numbered as above
          SELECT format('%s-%s', 20 + (:permit_offset + i) % 6,
                        lpad(((:permit_offset + i) % 10000)::text, 4, '0'))
          FROM generate_series(1, :permits) i)) p
JOIN w_geom big ON big.i = 1 + p.rn % :complexes
JOIN w_geom small ON small.i = :complexes + p.rn * 13;
INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom)
SELECT 1, s.permit_id,
       (ARRAY['fill', 'fill', 'fill', 'fill', 'fill', 'fill', 'fill', 'excavate',
              'drain_full', 'drain_partial'])[1 + floor(random() * 10)::int],
       format('I%s-%s', s.permit_id, k),
       ST_Multi(ST_MakeEnvelope(ST_X(s.c) - 40 + 25 * k, ST_Y(s.c) - 30 + 10 * k,
                                ST_X(s.c) + 25 * k + random() * 30,
                                ST_Y(s.c) + 10 * k + random() * 30, 26915))
FROM p_site s CROSS JOIN LATERAL generate_series(0, (s.rn % 3)::int) k;
CREATE TEMP TABLE r_site AS
SELECT r.* FROM (
  SELECT s.permit_id, s.rn,
         ST_X(s.c) + (100 + random() * 500) * cos(a) AS x,
         ST_Y(s.c) + (100 + random() * 500) * sin(a) AS y,
         40 + random() * 80 AS w, 40 + random() * 80 AS h
  FROM p_site s, LATERAL (SELECT random() * 2 * pi() AS a) ang) r, county
WHERE ST_Intersects(county.geom, ST_MakeEnvelope(r.x, r.y, r.x + r.w, r.y + r.h, 26915));
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, r.permit_id, 'wetland',
       CASE WHEN r.rn % 5 < 3 THEN 'certified' WHEN r.rn % 5 = 3 THEN 'constructed'
            ELSE 'proposed' END, DATE '2021-01-01', format('R%s', r.permit_id),
       ST_Multi(ST_MakeEnvelope(r.x, r.y, r.x + r.w, r.y + r.h, 26915))
FROM r_site r;
INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on,
                              source_fid, geom)
SELECT 1, r.permit_id, 'upland', 'certified', DATE '2021-01-01', format('U%s', r.permit_id),
       ST_Multi(ST_MakeEnvelope(r.x + 5, r.y + 5, r.x + 20, r.y + 20, 26915))
FROM r_site r, county   -- its wetland component may only touch the county: this corner too
WHERE r.rn % 4 = 0
  AND ST_Intersects(county.geom, ST_MakeEnvelope(r.x + 5, r.y + 5, r.x + 20, r.y + 20, 26915));
INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom)
SELECT 1, r.permit_id, format('B%s', r.permit_id),
       ST_Multi(ST_MakeEnvelope(r.x - 15, r.y - 15, r.x + r.w + 15, r.y + 8, 26915))
FROM r_site r WHERE r.rn % 10 <> 0;
-- Heritage areas: Natural Heritage communities 100-400 m across, 128-vertex outlines.
INSERT INTO core.heritage_area (plan_area_id, rank, community_kind, source_fid, geom)
SELECT 1, (ARRAY['A', 'AB', 'B', 'BC', 'C', 'CD', 'D', 'unranked'])[1 + i % 8],
       CASE WHEN i % 3 = 0 THEN 'wetland' ELSE 'upland' END, :tag || 'H' || i,
       ST_Multi(ST_Buffer(ST_SetSRID(ST_MakePoint(:x0 + random() * :cols * :pw,
                                                  :y0 + random() * :rows * :ph), 26915),
                          100 + random() * 300, 32))
FROM generate_series(1, :heritage) i;
INSERT INTO core.replacement (plan_area_id, district_project, component, status, status_on,
                              source_fid, geom)
SELECT 1, format('District project %s%s', :tag, i), 'wetland', 'certified', DATE '2019-06-01',
       :tag || 'DP' || i,
       ST_Multi(ST_MakeEnvelope(x, y, x + 300, y + 200, 26915))
FROM (SELECT i, :x0 + 3000 + random() * 33000 AS x, :y0 + 3000 + random() * 36000 AS y
      FROM generate_series(1, :projects) i) s, county
WHERE ST_Intersects(county.geom, ST_MakeEnvelope(x, y, x + 300, y + 200, 26915));
"""

COUNTS_SQL = """
SELECT 'parcels', count(*) FROM core.parcel UNION ALL
SELECT 'wetlands', count(*) FROM core.wetland UNION ALL
SELECT 'delineations', count(*) FROM core.delineation UNION ALL
SELECT 'permits', count(*) FROM core.permit UNION ALL
SELECT 'impacts', count(*) FROM core.impact UNION ALL
SELECT 'replacements', count(*) FROM core.replacement UNION ALL
SELECT 'buffers', count(*) FROM core.buffer UNION ALL
SELECT 'heritage areas', count(*) FROM core.heritage_area UNION ALL
SELECT 'credit transfers', count(*) FROM core.credit_transfer
"""

# The givers' positions in one plan-wide ledger.owner_measures call (the recompute's own set
# form), on tables analysed first: on the freshly generated tables, without
# statistics, the planner's guesses made the ledger's lookups scans, and one
# ledger.permit_totals call per permit took minutes at county size. A transfer stands on the
# giver's position on its date (docs/ledger.md): givers are permits decided by then.
TRANSFERS_ON = dt.date(2024, 6, 1)
TRANSFERS_SQL = """
WITH givers AS (
  SELECT m.permit_id
  FROM ledger.owner_measures(1, ARRAY(SELECT permit_id FROM core.permit
                                      WHERE valid_to IS NULL AND decided_on <= :on)) m
  WHERE m.permit_id IS NOT NULL
    AND m.credit_acres + m.transfer_in_acres - m.transfer_out_acres - m.required_acres > 0.5
  ORDER BY m.permit_id
  LIMIT :n
), takers AS (
  SELECT permit_id, row_number() OVER (ORDER BY permit_id DESC) AS rn
  FROM core.permit WHERE valid_to IS NULL
)
INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres,
                                  transferred_on, source_fid)
SELECT 1, g.permit_id, t.permit_id, 0.25, :on, 'T' || g.permit_id
FROM (SELECT g.*, row_number() OVER (ORDER BY g.permit_id) AS rn FROM givers g) g
JOIN takers t ON t.rn = g.rn AND t.permit_id <> g.permit_id
"""


def timed(label: str, fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    print(f"  {label:<58} {seconds:8.2f} s", flush=True)
    return seconds, result


def full_against_geopandas(url: str, layers: dict[str, gpd.GeoDataFrame], repeat: int,
                           workers: int, reset: Callable[[], None],
                           settle: Callable[[], None]
                           ) -> tuple[list[float], list[float], Any, dict[str, pd.Series]]:
    """The full recompute on an empty ledger and the geopandas overlay, `repeat` times each,
    alternating (ours, geopandas, ours, ...). Why: on this shared machine the same run moves
    by 20-30 % from one minute to the next; alternating puts a slow minute on both sides, and
    the medians of several runs say more than one run each. `reset` brings the database back
    to an empty ledger between our runs; `settle` (a CHECKPOINT) writes out what the harness
    wrote before each of them. Returns both lists of seconds, our first run's summary and
    geopandas' figures."""
    ours: list[float] = []
    theirs: list[float] = []
    summary: Any = None
    figures: dict[str, pd.Series] = {}
    for i in range(repeat):
        if i:
            reset()
        settle()
        of = f" ({i + 1} of {repeat})" if repeat > 1 else ""
        seconds, result = timed(f"full recompute, empty ledger, {workers} workers{of}",
                                lambda: ledger.recompute(url, all=True, workers=workers))
        ours.append(seconds)
        summary = summary or result
        seconds, figures = timed(f"geopandas: overlay, dissolve, allocate{of}",
                                 lambda: geopandas_figures(layers))
        theirs.append(seconds)
    return ours, theirs, summary, figures


def clone_database(name: str, template: str) -> None:
    """(Re)create database `name` as a copy of `template` (nobody may be connected to it),
    by files (bench/common.py create_database says why)."""
    eng = _admin_engine()
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(sa.text(
                f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY'))
    finally:
        eng.dispose()


def checkpoint() -> None:
    """CHECKPOINT: what the harness wrote (a copy, a migration) is on disk before a timed run
    instead of being written by the server during it."""
    eng = _admin_engine()
    try:
        with eng.connect() as conn:
            conn.execute(sa.text("CHECKPOINT"))
    finally:
        eng.dispose()


def _admin_engine() -> sa.Engine:
    admin = make_url(cluster.ensure_embedded().admin_url)
    return sa.create_engine(admin.set(database="postgres"), isolation_level="AUTOCOMMIT")


def _url(name: str) -> str:
    admin = make_url(cluster.ensure_embedded().admin_url)
    return admin.set(database=name).render_as_string(hide_password=False)


def _key(seed: float) -> str:
    """What the generated county depends on: a changed generator or a changed migration (the
    tables) makes a new source; changed SQL files are applied to the clone."""
    revisions = "".join(p.read_text() for p in sorted((MIGRATIONS_DIR / "versions").glob("*.py")))
    text = (f"{GENERATE}{TRANSFERS_SQL}{COLS}{ROWS}{WETLANDS}{COMPLEXES}{PERMITS}{HERITAGE}"
            f"{PROJECTS}{seed}{revisions}")
    return "rulem-db bench county " + hashlib.sha256(text.encode()).hexdigest()[:16]


def prepare(seed: float, fresh: bool) -> dict[str, int] | None:
    """The scratch database with the county and an empty ledger: cloned from the source
    database when one made by the same generator exists (seconds), else generated (minutes)
    and kept as the source for the next run. Returns the counts when it generated."""
    eng = _admin_engine()
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{DBNAME}" WITH (FORCE)'))
            have = conn.execute(sa.text(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database "
                "WHERE datname = :n"), {"n": SOURCE}).scalar()
            if have == _key(seed) and not fresh:
                conn.execute(sa.text(
                    f'CREATE DATABASE "{DBNAME}" TEMPLATE "{SOURCE}" STRATEGY FILE_COPY'))
                db.migrate(_url(DBNAME))           # brings in the newest SQL files
                return None
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{SOURCE}" WITH (FORCE)'))
            conn.execute(sa.text(f'CREATE DATABASE "{DBNAME}"'))
        db.migrate(_url(DBNAME), srid=26915, plan_area=DEMO_PLAN_AREA)
        counts = generate(_url(DBNAME), seed)
        with eng.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{SOURCE}" TEMPLATE "{DBNAME}"'))
            conn.execute(sa.text(f"COMMENT ON DATABASE \"{SOURCE}\" IS '{_key(seed)}'"))
        return counts
    finally:
        eng.dispose()


def drop_databases(names: tuple[str, ...]) -> None:
    eng = _admin_engine()
    try:
        with eng.connect() as conn:
            for name in names:
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        eng.dispose()


def anoka_outline() -> str:
    """Anoka County (co_code 003) as hex EWKB in EPSG:26915, read from the shared data."""
    with gzip.open(shared_dir() / COUNTIES, "rt") as f:
        text = f.read()
    found = re.search(r"VALUES \('003',.*?'([0-9A-F]+)'\);", text)
    if not found:
        raise SystemExit(f"Anoka County not found in {shared_dir() / COUNTIES}")
    return found.group(1)


PLAN_AREA_STATEMENT = "INSERT INTO core.cwmp_area"  # GENERATE's first insert: once per plan area

# Tiles: a larger size is the county's pattern repeated side by side (each tile its own copy of
# Anoka's outline, parcel grid, delineations, wetlands, permits: the county's density), not more
# features packed into one county's box. Why: at ten times the density the state's wetland
# complexes overlapped each other seven deep and every impact met seven times the wetland
# pieces, so each owner cost several times what it costs in real data (NWI polygons do not
# overlap) and the recompute grew 40-70x for 10x the data. Tile t sits TILE_DX x TILE_DY metres
# from tile 0 (room for the 40 km x 44 km of delineations), tiles in rows of ceil(sqrt(n)).
TILE_DX, TILE_DY = 41_000.0, 45_000.0
MAX_PERMITS = 30_000  # permit k is YY-NNNN with YY 20 + k % 6, NNNN k % 10,000: unique to 30,000


def tile_params(base: dict[str, Any], tile: int, tiles: int, seed: float
                ) -> dict[str, Any]:
    """GENERATE's parameters for one tile: its corner, a tag that keeps its keys unique (none for
    tile 0, so tile 0 of any size is the county itself for the same seed), the numbers of its
    permits, and a seed of its own."""
    per_row = math.ceil(math.sqrt(tiles))
    col, row = tile % per_row, tile // per_row
    return {**base, "x0": base["x0"] + col * TILE_DX, "y0": base["y0"] + row * TILE_DY,
            "tag": f"T{tile}-" if tile else "", "permit_offset": tile * base["permits"],
            "seed": ((seed + 1 + tile * 0.137) % 2) - 1 if tile else seed}


def tiled_outline(county_hex: str, tiles: int) -> str:
    """The plan boundary of `tiles` tiles: the county's outline translated to each tile's
    corner, as one multipolygon (hex EWKB, the SRID kept)."""
    outline = shapely.from_wkb(bytes.fromhex(county_hex))
    srid = shapely.get_srid(outline)
    per_row = math.ceil(math.sqrt(tiles))
    parts = [shapely.transform(outline, lambda xy, t=t: xy + np.array(
        [(t % per_row) * TILE_DX, (t // per_row) * TILE_DY])) for t in range(tiles)]
    multi = shapely.set_srid(shapely.MultiPolygon(
        [p for g in parts for p in shapely.get_parts(g)]), srid)
    return shapely.to_wkb(multi, hex=True, include_srid=True)


def run_generator(conn: sa.Connection, params: dict[str, Any], transfers: int | None,
                  log: Callable[[str], None] | None = None, plan_area: bool = True,
                  label: str = "") -> list[tuple[str, float]]:
    """Run GENERATE (without its plan area insert unless `plan_area`) and, unless `transfers`
    is None, TRANSFERS_SQL statement by statement on `conn` (one transaction: the caller
    commits); return each statement's label and seconds; `log` gets a line per statement as
    it finishes. Why the timings: generation is the slow part of a new size (the state took
    28 minutes), and which statement is slow says what to make faster."""
    params = {"tag": "", "permit_offset": 0, "plan_name": "Anoka County (bench)", **params}
    statements = [x for x in GENERATE.split(";\n") if x.strip()
                  and (plan_area or not x.strip().startswith(PLAN_AREA_STATEMENT))]
    steps: list[tuple[str, float]] = []
    for statement in statements + (["ANALYZE", TRANSFERS_SQL] if transfers is not None else []):
        code = [ln for ln in statement.strip().splitlines() if not ln.startswith("--")]
        what = " ".join(code[0].split()[:4])[:44] if code else "?"
        started = time.perf_counter()
        conn.execute(sa.text(statement),
                     {"n": transfers, "on": TRANSFERS_ON} if statement is TRANSFERS_SQL
                     else params)
        steps.append((what, time.perf_counter() - started))
        if log:
            log(f"    generate{label}: {what:<44} {steps[-1][1]:8.2f} s")
    return steps


def generate_tiles(url: str, params: dict[str, Any], tiles: int, transfers: int, seed: float,
                   parallel: int = 2, log: Callable[[str], None] | None = None) -> None:
    """Fill a migrated database with `tiles` tiles of GENERATE at `params` (one tile's
    figures): the plan area first (committed: each tile reads it), then the tiles, `parallel`
    at a time, each on its own connection and in its own transaction (they share no keys and
    no ground), then the credit transfers over the whole plan area. One tile: exactly what
    `generate` makes. Why parallel: one session generating the state took 28 minutes with
    one core busy."""
    if tiles * params["permits"] > MAX_PERMITS:
        raise ValueError(f"at most {MAX_PERMITS:,} permits: their numbers are YY-NNNN")
    if tiles == 1:
        with db.connect(url) as conn:
            run_generator(conn, params, transfers, log)
        return
    plan = {**params, "county": tiled_outline(params["county"], tiles),
            "plan_name": f"Anoka County x {tiles} (bench)"}
    with db.connect(url) as conn:
        conn.execute(sa.text([x for x in GENERATE.split(";\n")
                              if x.strip().startswith(PLAN_AREA_STATEMENT)][0]), plan)

    def one(tile: int) -> None:
        with db.connect(url) as conn:
            run_generator(conn, tile_params(params, tile, tiles, seed), None, log,
                          plan_area=False, label=f" tile {tile}")

    with ThreadPoolExecutor(max(1, parallel)) as pool:
        list(pool.map(one, range(tiles)))
    with db.connect(url) as conn:
        started = time.perf_counter()
        conn.execute(sa.text("ANALYZE"))
        conn.execute(sa.text(TRANSFERS_SQL), {"n": transfers, "on": TRANSFERS_ON})
        if log:
            log(f"    generate: credit transfers {time.perf_counter() - started:8.2f} s")


def generate(url: str, seed: float) -> dict[str, int]:
    params = {"seed": seed, "x0": X0, "y0": Y0, "cols": COLS, "rows": ROWS, "pw": PARCEL_W,
              "ph": PARCEL_H, "wetlands": WETLANDS, "complexes": COMPLEXES,
              "permits": PERMITS, "heritage": HERITAGE, "projects": PROJECTS,
              "county": anoka_outline()}
    with db.connect(url) as conn:
        run_generator(conn, params, TRANSFERS)
        conn.execute(sa.text("ANALYZE"))
        counts = dict(conn.execute(sa.text(COUNTS_SQL)).all())
    return counts


# -- geopandas: the same figures from a plain overlay -----------------------------------------

def read_layers(url: str) -> dict[str, gpd.GeoDataFrame]:
    """The current layers, as a geopandas user would read them (the permits' record has no
    geometry: read as a plain table)."""
    queries = {
        "parcel": "SELECT parcel_id, geom FROM core.parcel WHERE valid_to IS NULL",
        "wetland": "SELECT wetland_id, delineation_id, geom FROM core.wetland "
                   "WHERE valid_to IS NULL",
        "delineation": "SELECT delineation_id, approved_on, geom FROM core.delineation "
                       "WHERE valid_to IS NULL AND status = 'approved'",
        "impact": "SELECT permit_id, kind, geom FROM core.impact WHERE valid_to IS NULL",
        # every owner's replacement features (permits' and District projects'), with their
        # status dates and when the feature was first recorded (the claims, decision 19)
        "replacement": "SELECT r.replacement_id, r.permit_id, r.district_project, r.component, "
                       "r.status, r.status_on, r.constructed_on, r.certified_on, "
                       "f.created_at AS recorded, r.geom FROM core.replacement r "
                       "JOIN core.feature f ON f.feature_id = r.replacement_id "
                       "WHERE r.valid_to IS NULL",
        "buffer": "SELECT geom FROM core.buffer WHERE valid_to IS NULL",
        "heritage": "SELECT h.geom FROM core.heritage_area h JOIN core.heritage_rank r "
                    "USING (rank) WHERE h.valid_to IS NULL AND h.community_kind = 'upland' "
                    "AND r.ordinal <= 4",
        "cwmp": "SELECT geom FROM core.cwmp_area WHERE valid_to IS NULL",
    }
    tables = {"permit": "SELECT permit_id, status, decided_on, baseline_on FROM core.permit "
                        "WHERE valid_to IS NULL"}
    eng = db.engine(url)
    try:
        with eng.connect() as conn:
            layers = {k: gpd.read_postgis(sa.text(q), conn, geom_col="geom").rename_geometry(
                          "geometry") for k, q in queries.items()}
            layers.update({k: gpd.GeoDataFrame(pd.read_sql(sa.text(q), conn))
                           for k, q in tables.items()})
            return layers
    finally:
        eng.dispose()


def timed_read_layers(url: str) -> tuple[float, float, dict[str, gpd.GeoDataFrame]]:
    """read_layers, timed: (wall seconds, this process's CPU seconds, the layers). Why both:
    issue 21 counts geopandas' reading from PostGIS as our recompute counts ours, and on the
    shared 2-core machine the wall time moves with other jobs while the CPU time says what
    the reading itself costs (the server's part of it is in the wall time only)."""
    wall, cpu = time.perf_counter(), time.process_time()
    layers = read_layers(url)
    return time.perf_counter() - wall, time.process_time() - cpu, layers


def _minus(a: gpd.GeoSeries, b: gpd.GeoSeries) -> gpd.GeoSeries:
    """a - b row by row on a's index, where b may lack rows (then a stays)."""
    other = b.reindex(a.index)
    out = shapely.difference(a.values, other.values)
    return gpd.GeoSeries(np.where(other.isna().values, a.values, out), index=a.index,
                         crs=a.crs)


def _or(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Union row by row of two geometry arrays where either may be missing (None)."""
    return np.where(shapely.is_missing(a), b,
                    np.where(shapely.is_missing(b), a, shapely.union(a, b)))


def _but(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a - b row by row; a missing b takes nothing away (ledger.minus)."""
    return np.where(shapely.is_missing(b), a, shapely.difference(a, b))


def _dissolve(geoms: np.ndarray, keys: np.ndarray, crs: Any) -> gpd.GeoSeries:
    """The union of the geometries of each key, indexed by key."""
    frame = gpd.GeoDataFrame({"key": keys}, geometry=geoms, crs=crs)
    return frame[~shapely.is_missing(frame.geometry.values)].dissolve(by="key").geometry


def _on(frame: pd.DataFrame, column: str) -> pd.Series:
    """A date column as datetime64 (NULL: NaT)."""
    return pd.to_datetime(frame[column])


def _impact_ground(L: dict[str, gpd.GeoDataFrame], base: gpd.GeoDataFrame,
                   on: pd.Series) -> tuple[gpd.GeoSeries, gpd.GeoSeries]:
    """What each permit's impact polygons meet of the wetland as of its baseline date `on`
    (indexed by permit): the full-factor ground and the partial-drain ground outside it. The
    wetland: baseline wetland and any owner's wetland replacement built (constructed or
    certified) by then, dated constructed_on, else certified_on, else status_on, else today."""
    imp = L["impact"][L["impact"].permit_id.isin(on.index)]
    full = imp[imp.kind != "drain_partial"].dissolve(by="permit_id").geometry
    part = _minus(imp[imp.kind == "drain_partial"].dissolve(by="permit_id").geometry, full)
    pieces = gpd.GeoDataFrame(
        {"permit_id": np.r_[full.index, part.index],
         "factor": np.r_[np.ones(len(full)), np.full(len(part), PARTIAL_DRAIN_FACTOR)]},
        geometry=np.r_[full.values, part.values], crs=imp.crs)
    on_base = gpd.overlay(pieces, base[["geometry"]], how="intersection", keep_geom_type=True)
    rep = L["replacement"]
    built = rep[(rep.component == "wetland") & rep.status.isin(["constructed", "certified"])]
    built = built.assign(built_on=_on(built, "constructed_on").fillna(_on(built, "certified_on"))
                         .fillna(_on(built, "status_on")).fillna(pd.Timestamp(dt.date.today())))
    pairs = gpd.sjoin(pieces, built[["built_on", "geometry"]], predicate="intersects")
    pairs = pairs[pairs.built_on.values <= on.reindex(pairs.permit_id).values]
    on_built = gpd.GeoDataFrame(
        {"permit_id": pairs.permit_id.values, "factor": pairs.factor.values},
        geometry=shapely.intersection(pieces.geometry.values[pairs.index],
                                      built.geometry.loc[pairs.index_right].values),
        crs=imp.crs)
    ground = pd.concat([on_base[["permit_id", "factor", "geometry"]], on_built],
                       ignore_index=True).dissolve(by=["permit_id", "factor"]).geometry
    factor = ground.index.get_level_values("factor")
    return tuple(gpd.GeoSeries(ground[factor == f].droplevel("factor"), crs=imp.crs)
                 .reindex(on.index) for f in (1.0, PARTIAL_DRAIN_FACTOR))


def _impact(L: dict[str, gpd.GeoDataFrame], base: gpd.GeoDataFrame, permits: pd.DataFrame,
            cw: Any) -> tuple[pd.Series, gpd.GeoDataFrame]:
    """Each permit's impact acres (decision 25: every acre lost charged once) and the ground
    charged, as rows of (permit_id, weight per acre, geometry) for the allocation to parcels:
    the ground inside the plan area, less the ground a permit decided earlier (decision date,
    then permit id; undecided last) was charged, at factor 1 or partial_drain_factor; ground an
    earlier permit drained partially is charged 1 - partial_drain_factor when filled,
    excavated or drained fully here, nothing when drained partially again."""
    on = _on(permits, "baseline_on").fillna(_on(permits, "decided_on")).fillna(
        pd.Timestamp(dt.date.today())).set_axis(permits.permit_id.values)
    full, part = _impact_ground(L, base, on)
    ids = full.index.values
    ground = gpd.GeoDataFrame({"permit_id": ids}, geometry=_or(full.values, part.values),
                              crs=full.crs)
    ground = ground[~shapely.is_missing(ground.geometry.values)]
    order = pd.Series(np.arange(len(permits)), index=permits.sort_values(
        ["decided_on", "permit_id"], na_position="last").permit_id.values)
    pairs = gpd.sjoin(ground, ground, predicate="intersects")  # left: the permit, right: others
    pairs = pairs[order.reindex(pairs.permit_id_right).values
                  < order.reindex(pairs.permit_id_left).values]
    e_full = _dissolve(full.reindex(pairs.permit_id_right).values, pairs.permit_id_left.values,
                       full.crs).reindex(ids).values
    e_part = _dissolve(part.reindex(pairs.permit_id_right).values, pairs.permit_id_left.values,
                       full.crs).reindex(ids).values
    f_in, p_in = ((x.values if cw is None else shapely.intersection(x.values, cw))
                  for x in (full, part))
    e_any = _or(e_full, e_part)
    charged = [(1.0, _but(f_in, e_any)), (PARTIAL_DRAIN_FACTOR, _but(p_in, e_any)),
               (1 - PARTIAL_DRAIN_FACTOR, shapely.intersection(f_in, _but(e_part, e_full)))]
    acres = sum(w * np.nan_to_num(shapely.area(g)) for w, g in charged) / ACRE_M2
    rows = gpd.GeoDataFrame(
        {"permit_id": np.tile(ids, len(charged)),
         "w": np.repeat([w for w, _ in charged], len(ids))},
        geometry=np.concatenate([g for _, g in charged]), crs=full.crs)
    rows = rows[~shapely.is_missing(rows.geometry.values)].explode(ignore_index=True)
    rows = rows[rows.geom_type == "Polygon"]  # no lines where ground only touches
    return pd.Series(acres, index=ids), rows


def _claim_order(rep: gpd.GeoDataFrame, permits: pd.DataFrame) -> pd.Series:
    """The claims of the wetland replacement features (decision 19), as a rank by feature
    (lower: stronger), for the features that claim at all (not of a denied, withdrawn or
    missing permit). Counted ground (COUNTED_STATUS or later) before pending; counted claims
    by the date the feature reached COUNTED_STATUS (certified_on, else status_on; else its
    owner's date: a permit's decision or baseline date, a District project's earliest
    status_on; else never); then when the feature was first recorded; then its id."""
    pm = permits.set_index("permit_id")
    claims = rep.permit_id.isna() | rep.permit_id.map(
        ~pm.status.isin(["denied", "withdrawn"])).fillna(False).astype(bool)
    wet = rep[(rep.component == "wetland") & claims]
    project_on = _on(rep, "status_on").groupby(rep.district_project).min()
    own_on = pd.Series(np.where(  # (reindex, not map: pandas cannot map by an empty Series)
        wet.permit_id.notna(),
        _on(pm, "decided_on").fillna(_on(pm, "baseline_on")).reindex(wet.permit_id).values,
        project_on.reindex(wet.district_project).values), index=wet.index)
    counted = wet.status.map(STATUS_RANK) >= STATUS_RANK[COUNTED_STATUS]
    reached = _on(wet, "certified_on").fillna(_on(wet, "status_on")).fillna(own_on)
    day = reached.values.astype("datetime64[D]").astype("int64")
    never = 10 ** 9
    claim_on = np.where(~counted, -never, np.where(reached.isna(), never, day))
    keys = pd.DataFrame({"pending": ~counted, "claim_on": claim_on,
                         "recorded": pd.to_datetime(wet.recorded, utc=True),
                         "id": wet.replacement_id}, index=wet.index)
    ranked = keys.sort_values(["pending", "claim_on", "recorded", "id"]).index
    return pd.Series(np.arange(len(ranked)), index=ranked)


def geopandas_figures(L: dict[str, gpd.GeoDataFrame]) -> dict[str, pd.Series]:
    """Every measure the ledger posts per permit (impact, credit, credit_constructed,
    credit_proposed) and per parcel (required, credit_hosted), by overlay: the rules of
    docs/ledger.md section 1 with geopandas, as the ledger applies them since its rules on
    claims and charges (decisions 19 and 25). Modelled:

      * baseline wetland (sql/050): each delineation's wetlands clipped to its study area
        minus the study areas approved after it (one layer for every permit here: every
        baseline date is after every approval);
      * impact (decision 25): impact polygons (the generated county has no structures, BMPs
        or grading) of every permit neither denied nor withdrawn, full-factor kinds unioned,
        partial drains outside them at partial_drain_factor, on the baseline wetland plus any
        owner's wetland replacement built by the permit's baseline date, inside the plan
        area; ground a permit decided earlier was charged is not charged again (the rest of
        an earlier partial drain is, at 1 - partial_drain_factor);
      * required = impact (replacement_ratio 1), on parcels in proportion to the charged
        acres on each (section 2);
      * credit by status (decisions 6 and 19): each wetland feature less the ground of other
        owners' features with a stronger claim (_claim_order), then per permit the counted
        status, constructed less it, proposed less both; each minus the permit's upland
        components, baseline wetland, declared buffers and heritage upland ranked BC or
        better, inside the plan area; credit_hosted = the counted credit on each parcel.

    Not modelled (the generated county has none of it): structures, BMPs and grading as fill
    (decision 18); delineations approved after a replacement was built (decision 26); the
    parameters as of each baseline date (one seeded set here); the dates of the lines
    (section 4a: the comparison sums every date); transfers (not compared)."""
    # Baseline wetland (sql/050's rule): a delineation's wetlands, clipped to its study area
    # minus the study areas approved after it where any such area meets it.
    dl = L["delineation"]
    wet = L["wetland"]
    parts = []
    for d in dl.itertuples():
        mine = wet[wet.delineation_id == d.delineation_id]
        later = dl[((dl.approved_on > d.approved_on)
                    | ((dl.approved_on == d.approved_on)
                       & (dl.delineation_id > d.delineation_id)))
                   & dl.intersects(d.geometry)]
        if len(later):
            area = d.geometry.difference(later.union_all())
            mine = mine.set_geometry(mine.intersection(area))
        parts.append(mine[~mine.is_empty])
    base = gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), crs=wet.crs)
    cw = L["cwmp"].union_all() if len(L["cwmp"]) else None
    permits = L["permit"][~L["permit"].status.isin(["denied", "withdrawn"])]

    impact, charged = _impact(L, base, permits, cw)

    # Required per parcel: each permit's required acres in proportion to its charged acres
    # (weighted by factor) on each parcel.
    on_parcel = gpd.overlay(charged, L["parcel"], how="intersection", keep_geom_type=True)
    on_parcel["w"] = on_parcel.area / ACRE_M2 * on_parcel.w
    w = on_parcel.groupby(["permit_id", "parcel_id"]).w.sum()
    share = w / w.groupby(level="permit_id").transform("sum")
    required = (share * impact.reindex(share.index.get_level_values("permit_id")).values
                ).groupby(level="parcel_id").sum()

    # Credit by status: each own wetland feature less the ground of other owners' features
    # with a stronger claim, then by status per permit (the most advanced status covering
    # ground keeps it), less what earns nothing, inside the plan area.
    rep = L["replacement"]
    rank = _claim_order(rep, L["permit"])
    owner = np.where(rep.permit_id.isna(), "project " + rep.district_project.astype(str),
                     "permit " + rep.permit_id.astype("Int64").astype(str))
    rep = rep.assign(owner=owner)
    rivals = rep.loc[rank.index]
    mine = rep[(rep.component == "wetland") & rep.permit_id.isin(permits.permit_id)]
    pairs = gpd.sjoin(mine, rivals[["owner", "geometry"]], predicate="intersects",
                      lsuffix="m", rsuffix="o")
    pairs = pairs[(pairs.owner_m != pairs.owner_o)
                  & (rank.reindex(pairs.index_o).values < rank.reindex(pairs.index).values)]
    taken = _dissolve(rivals.geometry.loc[pairs.index_o].values, pairs.index.values, rep.crs)
    g = _minus(mine.geometry, taken)
    pid = mine.permit_id.astype("int64").values
    upland = rep[(rep.component == "upland") & rep.permit_id.notna()]
    upland = _dissolve(upland.geometry.values, upland.permit_id.astype("int64").values, rep.crs)

    def status(*names: str) -> gpd.GeoSeries:
        pick = mine.status.isin(names).values
        return _dissolve(g.values[pick], pid[pick], rep.crs)

    cert = status(COUNTED_STATUS)
    measures = {"credit": cert,
                "credit_constructed": _minus(status("constructed"), cert),
                "credit_proposed": _minus(status("proposed"), status(COUNTED_STATUS,
                                                                     "constructed"))}
    out = {"impact": impact, "required": required}
    for measure, geom in measures.items():
        geom = _minus(geom, upland)
        credit = gpd.GeoDataFrame({"permit_id": geom.index}, geometry=geom.values, crs=rep.crs)
        for layer in (base, L["buffer"], L["heritage"]):
            credit = gpd.overlay(credit, layer[["geometry"]], how="difference",
                                 keep_geom_type=True)
        credit = gpd.overlay(credit, L["cwmp"], how="intersection", keep_geom_type=True)
        out[measure] = (credit.area / ACRE_M2).groupby(credit.permit_id).sum()
        if measure == "credit":  # the counted credit on each parcel that hosts it
            hosted = gpd.overlay(credit[["permit_id", "geometry"]], L["parcel"],
                                 how="intersection", keep_geom_type=True)
            out["credit_hosted"] = (hosted.area / ACRE_M2).groupby(hosted.parcel_id).sum()
    return out


# What the comparison reads back from the ledger: per permit (owner) or per parcel.
SQL_MEASURES = {"impact": "permit_id", "credit": "permit_id", "credit_constructed": "permit_id",
                "credit_proposed": "permit_id", "required": "parcel_id",
                "credit_hosted": "parcel_id"}


def sql_figures(url: str) -> dict[str, pd.Series]:
    """The ledger's posted acres for every measure of SQL_MEASURES (permits only: the
    geopandas side reads no District project)."""
    eng = db.engine(url)
    try:
        with eng.connect() as conn:
            rows = pd.read_sql(sa.text(
                "SELECT measure, permit_id, parcel_id, acres FROM ledger.entry "
                "WHERE permit_id IS NOT NULL AND measure = ANY(:m)"), conn,
                params={"m": list(SQL_MEASURES)})
    finally:
        eng.dispose()
    rows["acres"] = rows.acres.astype(float)
    out = {}
    for measure, key in SQL_MEASURES.items():
        mine = rows[(rows.measure == measure) & rows[key].notna()]
        out[measure] = mine.groupby(mine[key].astype("int64")).acres.sum()
    return out


COMPARED = (("impact", "impact acres, per permit"),
            ("credit", "credit acres (certified), per permit"),
            ("credit_constructed", "credit constructed, per permit"),
            ("credit_proposed", "credit proposed, per permit"),
            ("required", "required acres, per parcel"),
            ("credit_hosted", "credit hosted, per parcel"))


def compare(sql: dict[str, pd.Series], gp: dict[str, pd.Series]) -> None:
    print("\n  figure                                  rulem-db (SQL)      geopandas   max |diff| "
          "per row   rows")
    for key, label in COMPARED:
        a, b = sql[key], gp[key]
        both = pd.concat([a.rename("sql"), b.rename("gp")], axis=1).fillna(0.0)
        diff = (both.sql - both.gp).abs().max()
        print(f"  {label:<38} {a.sum():14.4f} {b.sum():14.4f}   {diff:18.2e}   {len(both):6d}")


WETLAND_TOUCHED = """
SELECT w.wetland_id FROM core.wetland w
JOIN core.impact i ON i.geom && w.geom AND ST_Intersects(i.geom, w.geom) AND i.valid_to IS NULL
WHERE w.valid_to IS NULL AND ST_NPoints(w.geom) {} 1000
ORDER BY w.wetland_id LIMIT 1
"""


def edit_one_wetland(url: str, large: bool, grow: bool = False) -> float:
    """Shrink (or grow) one wetland an impact touches by 3 m, committed, as an editor would;
    returns the perf_counter() of the commit (a listener may start before the editor's
    connection is closed)."""
    eng = db.engine(url)
    try:
        with eng.connect() as c:
            wid = c.execute(sa.text(WETLAND_TOUCHED.format(">=" if large else "<"))
                            ).scalar_one()
            c.execute(sa.text(
                "UPDATE core.wetland SET geom = ST_Multi(ST_Buffer(geom, :d)) "
                "WHERE wetland_id = :w AND valid_to IS NULL"),
                {"w": wid, "d": 3 if grow else -3})
            c.commit()
            return time.perf_counter()
    finally:
        eng.dispose()


def one_wetland_change(url: str, large: bool) -> tuple[float, ledger.RecomputeSummary]:
    """Change one wetland, then recompute what that queued from a new process's connection
    (as `rulem-db recompute` and each nightly run do)."""
    edit_one_wetland(url, large)
    what = ("a complex (1,000+ vertices)" if large else "a basin") + ", new connection"
    return timed(f"recompute after one changed wetland: {what}",
                 lambda: ledger.recompute(url, with_posted=True))


WARM_RUNS = 5  # one-change recomputes by the resident service; their median is reported
WARM_UP = 5     # changes it recomputes first (PL/pgSQL plans a statement anew for its first
                # five executions, then keeps a generic plan: the steady state)


def watch_changes(url: str) -> tuple[float, float, ledger.RecomputeSummary]:
    """One change at a time through the resident service (`rulem-db watch`, debounce 0), as
    it runs in production: WARM_UP changes, then WARM_RUNS measured. Returns the medians of
    the time from the edit's commit to the posted run being reported (notification, queue,
    recompute, commit) and of the recompute alone, and the last run's summary. The wetland
    shrinks and grows by turns, so that it lasts."""
    events: queue.Queue[WatchEvent] = queue.Queue()
    watch = LedgerWatch(url, debounce=0, on_event=events.put)
    thread = threading.Thread(target=watch.run, name="ledger-watch", daemon=True)
    thread.start()
    latencies, runs = [], []
    try:
        if not watch.listening.wait(120):
            raise RuntimeError("rulem-db watch did not start")
        events.get(timeout=120)  # its start run: nothing waits
        for i in range(WARM_UP + WARM_RUNS):
            committed = edit_one_wetland(url, False, grow=bool(i % 2))
            event = events.get(timeout=120)
            if event.summary is None:
                raise RuntimeError(f"rulem-db watch: {event}")
            latency = time.perf_counter() - committed
            if i >= WARM_UP:
                latencies.append(latency)
                runs.append(event.summary)
                print(f"  {'one changed basin, rulem-db watch: commit to posted':<58} "
                      f"{latency:8.3f} s (recompute {event.summary.seconds:.3f} s)", flush=True)
    finally:
        watch.stop.set()
        thread.join(60)
    return (statistics.median(latencies), statistics.median(r.seconds for r in runs), runs[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--fresh", action="store_true",
                        help="generate the county again even if the source database exists")
    parser.add_argument("--clean", action="store_true",
                        help="drop the source database too at the end")
    parser.add_argument("--seed", type=float, default=0.42, help="setseed() value")
    parser.add_argument("--workers", type=int, default=ledger.DEFAULT_WORKERS)
    parser.add_argument("--repeat", type=int, default=3,
                        help="full recompute and geopandas overlay, each this many times, "
                             "alternating (medians are compared)")
    args = parser.parse_args()

    print(f"scratch database {DBNAME} on the embedded cluster (source: {SOURCE}); "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    _, counts = timed("prepare the county (generated in SQL, or cloned)",
                      lambda: prepare(args.seed, args.fresh))
    url = _url(DBNAME)
    if counts is None:
        with db.connect(url) as conn:
            counts = dict(conn.execute(sa.text(COUNTS_SQL)).all())
    print("  " + ", ".join(f"{v:,} {k}" for k, v in counts.items()))
    pristine = f"{DBNAME}_pristine"     # the county with an empty ledger, for --repeat
    try:
        read_s, layers = timed("geopandas: read the layers from PostGIS",
                               lambda: read_layers(url))
        clone_database(pristine, DBNAME)
        fulls, gps, first, gp = full_against_geopandas(
            url, layers, args.repeat, args.workers, lambda: clone_database(DBNAME, pristine),
            checkpoint)
        layers.clear()
        full, gp_s = statistics.median(fulls), statistics.median(gps)
        print(f"    {first}")
        compare(sql_figures(url), gp)  # before any change: the layers geopandas read
        again, second = timed("full recompute again, nothing changed",
                              lambda: ledger.recompute(url, all=True, workers=args.workers))
        print(f"    {second}")
        changes = []
        for large in (False, True):
            one, summary = one_wetland_change(url, large)
            changes.append(one)
            pins = sorted({r["pin"] for r in summary.posted if r["pin"]})
            print(f"    {summary}; parcels with entries: {', '.join(pins) or 'none'}")
        one_watch, one_watch_run, summary = watch_changes(url)
        print(f"    {summary}")

        print(f"\n  summary (load average {os.getloadavg()[0]:.1f} at the end: other jobs share "
              "the CPUs)")
        runs = "" if args.repeat == 1 else f", median of {args.repeat} alternating runs"
        print(f"    full recompute (SQL, empty ledger)      {full:8.2f} s{runs}: "
              + " / ".join(f"{x:.2f}" for x in fulls))
        print(f"    geopandas overlay (compute only)        {gp_s:8.2f} s{runs}: "
              + " / ".join(f"{x:.2f}" for x in gps))
        print(f"      -> SQL is {gp_s / full:5.1f}x faster (target >= 5x); best run against "
              f"best run {min(gps) / min(fulls):.1f}x")
        print(f"    geopandas overlay (read + compute)      {read_s + gp_s:8.2f} s   "
              f"-> SQL is {(read_s + gp_s) / full:5.1f}x faster")
        for label, secs in (
                (f"one changed basin, rulem-db watch ({WARM_RUNS} after {WARM_UP})", one_watch),
                ("  its recompute alone", one_watch_run),
                ("one changed basin, new connection", changes[0]),
                ("one changed complex, new connection", changes[1])):
            print(f"    {label:<40}{secs:8.3f} s   = {100 * secs / full:5.2f}% of the full "
                  "recompute (target < 1%)")
    finally:
        drop_databases((pristine,) + ((DBNAME,) if not args.keep else ())
                       + ((SOURCE,) if args.clean else ()))


if __name__ == "__main__":
    main()
