"""The benchmark harness: one command runs a size and prints every figure beside what users
would pick instead, measured in the same run, with the ratio and the target, and writes the
same table as markdown to its own file, bench/results/<YYYY-MM-DD>-<size>.md (the run's UTC
date; a later run of the same size that day: <YYYY-MM-DD>-<size>-<HHMM>.md), with the size,
the seed, the machine and its load average at the start and the end, the server's PostgreSQL,
PostGIS and GEOS versions and the git commit. The docs quote the latest county and state
files: `bench/run.py --latest` prints their tables. (The files named <YYYY-MM-DD>.md, one
section per run, are the history from before.)

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/run.py --size county
        [--only ingest,recompute,nightly,latency,web,standby] [--standby URL] [--fresh]
        [--keep] [--seed 0.42] [--repeat 3] [--nightly-budget 600]
        [--results DIR | --no-results] [--latest]

Sizes: `plan` (50 parcels: a smoke test of the harness, seconds), `county` (100,320 parcels,
30,000 wetlands, 2,000 permits; a 100,000-polygon ingest file), `state` (1,000,000 parcels,
300,000 wetlands, 20,000 permits; only on request: hours, and tens of GB of disk).

Figures:
1. ingest of an N-polygon parcel GeoPackage (etl.ingest.ingest: validation, repair and
   versioning included), first load, vs the DBA's route to the same result (ogr2ogr COPY into
   staging, then SQL repairing with ST_MakeValid within the 0.1 % area rule, checking the plan
   boundary and inserting into a table with core.parcel's constraints and indexes:
   bench/ingest.py DBA_SQL), each into a fresh migrated database (target ours <= 1.2 x); the
   bare `ogr2ogr -f PostgreSQL --config PG_USE_COPY YES` printed beside it as a reference;
2. a re-delivery of the same layer (1 % of the parcels changed, 0.2 % removed, 0.2 % new,
   made from the first file) ingested over the first load, vs ogr2ogr's bare full reload of
   the same file (-overwrite; target ours <= 0.5 x), and what it wrote against what was made
   (new versions, retired features, untouched first versions: equal);
3. full ledger recompute (empty ledger) vs geopandas computing the same acres, reading the
   layers from PostGIS included (read_postgis, then bench/recompute.py's overlay; target >= 8 x
   faster), and without the reading (no target), --repeat times each, alternating, medians
   compared (this shared machine moves by 20-30 % from minute to minute), with the largest
   difference between the two sets of acres;
4. recompute after one changed wetland vs the full recompute (target < 1 %): from a new
   connection, and in a session that made five such recomputes before (the steady state of a
   program that keeps its connection; median of the next five);
5. the nightly reconciliation end to end (flows.nightly.reconcile_now, use_prefect=False,
   report written) with nothing new, and after 1 % of the parcels, wetlands, impacts and
   replacements changed, each vs the full recompute (targets: nothing new < 10 %, --full <= 4x,
   1 % changed <= 3x); each run in
   a child process stopped after --nightly-budget seconds (then the checks of one permit are
   timed, to tell how long the plan-wide check run would take); then a --full night on the
   1 % night's data, whose findings and outcomes the 1 % night's must equal row for row, the
   share of the 1 % night its comparison and report take (target < 10 %), and a full check
   run on 1 session vs 2 (`--workers`: what more cores give);
6. pub.parcel_balance looked up by PIN and pub.plan_balance, p50 and p95 with 8 concurrent
   clients (threads, one connection each) vs 1 client (target: lookup p95 < 10 ms);
7. peak RSS of the ingest process for a file 10 x larger vs the N-polygon one (target: flat,
   at most 1.2 x); the larger file is capped at what one delivery may hold (etl.limits: 5
   million features, 2 GB), which ingest would refuse before reading: at `state` it holds
   5,000,000 polygons, not 10,000,000 (said in the results' notes);
8. `web`: bench/web.py, `rulem-db serve` under 8 concurrent HTTP clients (a z14 tile and a
   balance by PIN) beside the same SQL (targets: tile p95 < 50 ms, balance p95 < 20 ms);
9. `standby` (only with --standby URL, a hot standby made by `rulem-db db standby create`):
   bench/load.py --standby, readers on the standby during a full recompute on the primary.

The generated plan area (bench/recompute.py's generator at the size's parameters, in SQL) is
kept as the template database rulem_bench_run_<size>_src and cloned for each run; --fresh
generates it again. Every scratch database is named rulem_bench_run_* and dropped at the end
(unless --keep). The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench import common  # noqa: E402
from bench.common import Row, Size, timed  # noqa: E402
from rulem_db import db, ledger  # noqa: E402

SECTIONS = ("ingest", "recompute", "nightly", "latency", "web", "standby")
DEFAULT_SECTIONS = ("ingest", "recompute", "nightly", "latency", "web")  # standby: --standby
RESULTS = ROOT / "bench" / "results"
FLAT_MEMORY = 1.2   # "memory must not grow with file size": at most 20 % more for 10 x the file
GEOPANDAS_TARGET = 8.0  # full recompute vs geopandas, reading from PostGIS included (issue 21)

# 1 % of each input layer changed through the versioning triggers, exactly as an ingest's merge
# changes them (UPDATE of the current version: the trigger closes it, opens a new one and the
# ledger's statement triggers queue the owners the change can move).
ONE_PERCENT = """
UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 0.5, 0.0))
 WHERE valid_to IS NULL AND parcel_id % 100 = 7;
UPDATE core.wetland SET geom = ST_Multi(ST_Buffer(geom, -1.0))
 WHERE valid_to IS NULL AND wetland_id % 100 = 7;
UPDATE core.impact SET geom = ST_Multi(ST_Translate(geom, 1.0, 1.0))
 WHERE valid_to IS NULL AND impact_id % 100 = 7;
UPDATE core.replacement SET geom = ST_Multi(ST_Translate(geom, 1.0, 1.0))
 WHERE valid_to IS NULL AND replacement_id % 100 = 7
"""

LOOKUP_BY_PIN = "SELECT * FROM pub.parcel_balance WHERE pin = %(pin)s"
LOOKUP_BY_KEY = ("SELECT * FROM pub.parcel_balance b WHERE b.parcel_id IN (SELECT f.feature_id "
                 "FROM core.feature f WHERE f.layer = 'parcel' AND f.plan_area_id = 1 "
                 "AND f.feature_key = %(key)s)")
PLAN_SUMMARY = "SELECT * FROM pub.plan_balance"


@dataclass
class Run:
    """One run of the harness: its size, scratch names, and what it measured."""

    size: Size
    work: Path
    keep: bool
    seed: float
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    full_recompute_s: float | None = None
    databases: list[str] = field(default_factory=list)
    server: str | None = None  # PostgreSQL, PostGIS, GEOS and settings, from the first database
    repeat: int = 3  # --repeat

    def database(self, suffix: str) -> str:
        name = f"{common.PREFIX}_{self.size.name}_{suffix}"
        self.databases.append(name)
        return name


def _s(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


# -- 1 and 6: ingest and its memory --------------------------------------------------------------

def big_file_features(size: Size, file_bytes: int) -> tuple[int, str | None]:
    """Polygons of the memory figure's larger file: memory_factor x the ingest file, capped at
    what one delivery may be (etl.limits: max_features, and max_file_bytes at the n-polygon
    file's bytes per polygon, with 5 % to spare), since ingest refuses a larger file before
    reading it. Returns the count and, when capped, a sentence saying so."""
    from etl.limits import Limits, size_words

    limits = Limits.from_env()
    n = size.ingest_features
    wanted = n * size.memory_factor
    by_bytes = int(limits.max_file_bytes * 0.95 / max(file_bytes / n, 1.0))
    big_n = min(wanted, limits.max_features, by_bytes)
    if big_n == wanted:
        return wanted, None
    return big_n, (f"the memory figure's larger file holds {big_n:,} polygons, not "
                   f"{wanted:,} ({size.memory_factor} x {n:,}): one delivery may hold at most "
                   f"{limits.max_features:,} features and {size_words(limits.max_file_bytes)} "
                   f"(etl.limits; {wanted:,} polygons would be about "
                   f"{size_words(file_bytes / n * wanted)}), and ingest refuses a larger file "
                   "before reading it")


def bench_ingest(run: Run) -> None:
    from bench import ingest as ingest_bench

    n = run.size.ingest_features
    print(f"\ningest: a GeoPackage of {n:,} parcel polygons (bench/ingest.py's generator: 5 to "
          "9 vertices, 1 in 1,000 a bow-tie to repair), its re-delivery, and a larger file")
    gpkg, again = run.work / "parcels.gpkg", run.work / "parcels_redelivered.gpkg"
    big = run.work / "parcels_big.gpkg"
    timed(f"write the {n:,}-polygon GeoPackage", lambda: ingest_bench.write_parcels(gpkg, n))

    def redelivery() -> dict[str, int]:
        frame, made = ingest_bench.make_redelivery(ingest_bench.parcels_as_written(n))
        frame.to_file(again, layer="parcel", driver="GPKG", engine="pyogrio")
        return made

    _, made = timed("write its re-delivery (1 % changed, 0.2 % removed, 0.2 % new)",
                    redelivery)
    big_n, capped = big_file_features(run.size, gpkg.stat().st_size)
    if capped:
        print(f"    {capped}")
        run.notes.append(capped)
    timed(f"write the {big_n:,}-polygon GeoPackage",
          lambda: ingest_bench.write_parcels(big, big_n))

    # each side into its own fresh database holding the plan boundary, as a district's does
    ogr_url = common.empty_database(run.database("ogr2ogr"))
    ingest_bench.add_plan_boundary(ogr_url)
    t_ogr, _ = timed("ogr2ogr -f PostgreSQL, PG_USE_COPY YES (bare: a plain table)",
                     lambda: ingest_bench.run_ogr2ogr(ogr_url, gpkg))
    dba_url = common.empty_database(run.database("dba"))
    ingest_bench.add_plan_boundary(dba_url)
    t_dba, (_, t_dba_copy, dba_counts) = timed(
        "the DBA's route: ogr2ogr COPY to staging, SQL repair, boundary, insert",
        lambda: ingest_bench.run_dba(dba_url, gpkg))
    print(f"    ogr2ogr to staging {t_dba_copy:.2f} s, SQL {t_dba - t_dba_copy:.2f} s; "
          + ", ".join(f"{v:,} {k}" for k, v in dba_counts.items()))
    ours_url = common.empty_database(run.database("ingest"))
    ingest_bench.add_plan_boundary(ours_url)
    run.server = run.server or _server(ours_url)
    _, child = timed("rulem-db ingest parcel (child process)",
                     lambda: common.ingest_in_child(ours_url, "parcel", gpkg))
    print(f"    the ingest itself {child.seconds:.2f} s (the line above includes the "
          f"child's start-up); {child.message}")
    print("    stages: " + ", ".join(f"{s} {t:.2f} s" for s, t in child.stages))
    run.notes.append(f"ingest stages, {n:,} polygons: "
                     + ", ".join(f"{s} {t:.2f} s" for s, t in child.stages))
    run.notes.append(f"the DBA's route (bench/ingest.py DBA_SQL): ogr2ogr to staging "
                     f"{t_dba_copy:.2f} s, SQL {t_dba - t_dba_copy:.2f} s; "
                     + ", ".join(f"{v:,} {k}" for k, v in dba_counts.items()))

    t_reload, _ = timed("ogr2ogr -overwrite: the re-delivered file reloaded in full",
                        lambda: ingest_bench.run_ogr2ogr_reload(ogr_url, again))
    _, re_child = timed("rulem-db ingest parcel, the re-delivered file (child process)",
                        lambda: common.ingest_in_child(ours_url, "parcel", again))
    print(f"    the ingest itself {re_child.seconds:.2f} s (the line above includes the "
          f"child's start-up); {re_child.message}")
    print("    stages: " + ", ".join(f"{s} {t:.2f} s" for s, t in re_child.stages))
    run.notes.append("re-delivery stages: "
                     + ", ".join(f"{s} {t:.2f} s" for s, t in re_child.stages))
    diff = _redelivery_counts(ours_url)

    big_url = common.empty_database(run.database("ingest_big"))
    ingest_bench.add_plan_boundary(big_url)
    _, big_child = timed(f"rulem-db ingest parcel, {big_n:,} polygons (child process)",
                         lambda: common.ingest_in_child(big_url, "parcel", big))
    print(f"    the ingest itself {big_child.seconds:.2f} s (the line above includes the "
          f"child's start-up); {big_child.message}")
    print("    stages: " + ", ".join(f"{s} {t:.2f} s" for s, t in big_child.stages))
    run.notes.append(f"ingest stages, {big_n:,} polygons: "
                     + ", ".join(f"{s} {t:.2f} s" for s, t in big_child.stages))
    for name in run.databases[-4:]:
        if not run.keep:
            common.drop_database(name)

    ratio = child.seconds / t_dba
    run.rows.append(Row(
        f"ingest {n:,} polygons (GeoPackage), first load", _s(child.seconds),
        f"DBA's route: ogr2ogr + SQL repair, boundary, indexed insert {_s(t_dba)}",
        f"{ratio:.2f}x", "<= 1.2x", ratio <= 1.2))
    run.rows.append(Row(
        "  the same against a bare ogr2ogr COPY (reference)", _s(child.seconds),
        f"ogr2ogr COPY {_s(t_ogr)}", f"{child.seconds / t_ogr:.2f}x"))
    ratio = re_child.seconds / t_reload
    run.rows.append(Row(
        f"re-delivery of {n:,} polygons ({made['changed']:,} changed, {made['removed']:,} "
        f"removed, {made['new']:,} new)", _s(re_child.seconds),
        f"ogr2ogr full reload {_s(t_reload)}", f"{ratio:.2f}x", "<= 0.5x", ratio <= 0.5))
    expected = {"new versions": made["changed"] + made["new"], "retired": made["removed"],
                "untouched": n - made["changed"] - made["removed"]}
    run.rows.append(Row(
        "  what it wrote", ", ".join(f"{v:,} {k}" for k, v in diff.items()),
        "as made: " + ", ".join(f"{v:,} {k}" for k, v in expected.items()), "", "equal",
        diff == expected))
    mem_ratio = big_child.peak_rss_mb / child.peak_rss_mb
    run.rows.append(Row(
        f"ingest peak RSS, {big_n:,} polygons", f"{big_child.peak_rss_mb:,.0f} MB",
        f"{n:,} polygons {child.peak_rss_mb:,.0f} MB", f"{mem_ratio:.2f}x",
        f"<= {FLAT_MEMORY}x (flat)", mem_ratio <= FLAT_MEMORY))
    run.rows.append(Row(
        f"ingest {big_n:,} polygons, time", _s(big_child.seconds),
        f"{n:,} polygons {_s(child.seconds)}", f"{big_child.seconds / child.seconds:.1f}x",
        f"(linear: {big_n / n:g}x)"))
    run.notes.append(f"ingest child processes: {child.baseline_rss_mb:,.0f} MB after imports, "
                     f"before reading")


def _redelivery_counts(url: str) -> dict[str, int]:
    """What the re-delivery (the second batch) wrote to core.parcel: versions it opened, current
    versions it closed without a successor (retired), and first-load versions still current
    (untouched: same version, same id)."""
    with db.connect(url) as conn:
        r = conn.execute(sa.text(
            "WITH b AS (SELECT max(batch_id) AS second, min(batch_id) AS first FROM ops.batch "
            "           WHERE layer = 'parcel' AND status = 'loaded') "
            "SELECT count(*) FILTER (WHERE p.batch_id = b.second), "
            "       count(*) FILTER (WHERE p.closed_batch_id = b.second AND NOT EXISTS ("
            "         SELECT 1 FROM core.parcel q WHERE q.parcel_id = p.parcel_id "
            "         AND q.valid_to IS NULL)), "
            "       count(*) FILTER (WHERE p.batch_id = b.first AND p.valid_to IS NULL) "
            "FROM core.parcel p, b")).one()
    return {"new versions": int(r[0]), "retired": int(r[1]), "untouched": int(r[2])}


# -- 2 and 3: recompute ----------------------------------------------------------------------

def _largest_difference(sql: dict[str, pd.Series], gp: dict[str, pd.Series]) -> tuple[float,
                                                                                      float]:
    """The largest per-row difference in acres over every measure compared (impact, credit by
    status, required, credit hosted), and the total acres compared (both sets of figures,
    aligned on permit or parcel)."""
    from bench import recompute as ledger_bench

    worst, total = 0.0, 0.0
    for key, _ in ledger_bench.COMPARED:
        both = pd.concat([sql[key].rename("sql"), gp[key].rename("gp")], axis=1).fillna(0.0)
        worst = max(worst, float((both.sql - both.gp).abs().max()))
        total += float(both.sql.sum())
    return worst, total


def bench_recompute(run: Run, url: str, repeat: int) -> None:
    from bench import recompute as ledger_bench

    print("\nrecompute: the ledger on the generated plan area")
    read_s, read_cpu, layers = ledger_bench.timed_read_layers(url)
    print(f"  {'geopandas: read the layers from PostGIS (read_postgis)':<64} {read_s:9.2f} s "
          f"(its CPU {read_cpu:.2f} s)", flush=True)
    run.notes.append(f"geopandas' reading of the layers from PostGIS: {read_s:.2f} s wall, "
                     f"{read_cpu:.2f} s of the Python process's CPU")
    name = make_url(url).database
    pristine = run.database("plan_area_pristine")  # an empty ledger for each repetition
    common.create_database(pristine, name)
    fulls, gps, summary, gp = ledger_bench.full_against_geopandas(
        url, layers, repeat, ledger.DEFAULT_WORKERS,
        lambda: common.create_database(name, pristine), common.checkpoint)
    layers.clear()  # free the GeoDataFrames before the next steps
    common.drop_database(pristine)
    full, gp_s = statistics.median(fulls), statistics.median(gps)
    print(f"    {summary}")
    run.full_recompute_s = full
    worst, total = _largest_difference(ledger_bench.sql_figures(url), gp)
    print(f"    same acres: {total:,.4f} acres compared, largest difference {worst:.2e} acres")
    one, one_summary = ledger_bench.one_wetland_change(url, False)
    print(f"    {one_summary}")
    try:
        big, big_summary = ledger_bench.one_wetland_change(url, True)
        print(f"    {big_summary}")
    except sa.exc.NoResultFound:  # no complex under an impact at this size
        big = None
    watch, watch_run, _ = ledger_bench.watch_changes(url)  # the resident service

    # A geopandas user starts from the same database: reading the layers from PostGIS counts
    # on that side as our recompute's own reading counts on ours (issue 21).
    with_reading = (gp_s + read_s) / full
    medians = "" if repeat == 1 else f" (median of {repeat})"
    run.rows.append(Row(
        f"full recompute (empty ledger){medians}", _s(full),
        f"geopandas: read_postgis {_s(read_s)} + overlay {_s(gp_s)}",
        f"{with_reading:.1f}x faster", f">= {GEOPANDAS_TARGET:g}x faster",
        with_reading >= GEOPANDAS_TARGET))
    run.rows.append(Row(
        "  the same without geopandas' reading", _s(full), f"geopandas overlay {_s(gp_s)}",
        f"{gp_s / full:.1f}x faster"))
    if repeat > 1:
        pairs = zip(fulls, gps, strict=True)
        run.notes.append("full recompute / geopandas overlay, alternating runs: "
                         + ", ".join(f"{a:.2f} / {b:.2f} s" for a, b in pairs))
    run.rows.append(Row(
        "  same acres as geopandas", f"max diff {worst:.1e} ac", f"of {total:,.1f} ac", "",
        "<= 1e-4 ac", worst <= 1e-4))
    run.rows.append(Row(
        f"one changed wetland (basin), rulem-db watch: commit to posted (median of "
        f"{ledger_bench.WARM_RUNS} after {ledger_bench.WARM_UP})", _s(watch),
        f"full recompute {_s(full)}", f"{100 * watch / full:.2f} %", "< 1 %",
        watch / full < 0.01))
    run.notes.append(f"rulem-db watch: the recompute alone took {_s(watch_run)} of the "
                     f"{_s(watch)} from commit to posted (median)")
    run.rows.append(Row(
        "  the same from a new connection (rulem-db recompute, a nightly run)", _s(one),
        f"full recompute {_s(full)}", f"{100 * one / full:.2f} %", "(< 1 %)"))
    if big is not None:
        run.rows.append(Row(
            "  the same, a complex (1,000+ vertices)", _s(big), f"full recompute {_s(full)}",
            f"{100 * big / full:.2f} %", "(< 1 %)"))


# -- 4: the nightly reconciliation ------------------------------------------------------------

def _step_times(url: str, run_id: int) -> str:
    """How a nightly run's time splits: the ledger run, the check run, the rest."""
    with db.connect(url) as conn:
        r = conn.execute(sa.text(
            "SELECT extract(epoch FROM o.finished_at - o.started_at) AS total, "
            "       extract(epoch FROM l.finished_at - l.started_at) AS ledger, "
            # a check run older than the run: nothing to recheck, the earlier run stood
            "       CASE WHEN c.started_at >= o.started_at "
            "            THEN extract(epoch FROM c.finished_at - c.started_at) ELSE 0 END "
            "         AS checks "
            "FROM ops.run o LEFT JOIN ledger.run l ON l.run_id = o.ledger_run_id "
            "LEFT JOIN checks.run c ON c.run_id = o.check_run_id WHERE o.run_id = :r"),
            {"r": run_id}).one()
    total, led, chk = (float(x or 0) for x in r)
    return (f"ledger {led:.1f} s, checks {chk:.1f} s, comparison and report "
            f"{total - led - chk:.1f} s (run {run_id})")


def bench_nightly(run: Run, url: str, budget_s: float) -> None:
    print("\nnightly: flows.nightly.reconcile_now (use_prefect=False), report included; "
          f"each run in a child process with a budget of {budget_s:.0f} s")
    reports = run.work / "reports"
    full = run.full_recompute_s
    if full is None:
        full, _ = timed("full recompute (the comparison)", lambda: ledger.recompute(url, all=True))
        run.notes.append("nightly compared with a full recompute on an empty ledger made in the "
                         "nightly section (the recompute section was not run)")

    def nightly(label: str, full: bool = False) -> common.ChildNightly:
        got = common.nightly_in_child(url, reports, full, budget_s)
        if got.finished:
            print(f"  {label:<64} {got.seconds:9.2f} s", flush=True)
            steps = (f"{_step_times(url, got.run_id)}; {got.findings} findings, "
                     f"{got.entries_posted} entries posted, {got.parcels_changed} parcels "
                     "changed")
            print(f"    {steps}")
            run.notes.append(f"{label}: {got.seconds:.2f} s: {steps}")
        elif got.error:
            print(f"  {label:<64} FAILED after {got.seconds:.0f} s: {got.error}", flush=True)
            run.notes.append(f"nightly run failed: {got.error}")
        else:
            print(f"  {label:<64} stopped after {got.seconds:.0f} s (budget)", flush=True)
        return got

    first = nightly("first run (establishes the previous run)")
    if first.error:
        run.rows.append(Row("nightly, nothing new (as shipped)", "not measured: failed",
                            f"full recompute {_s(full)}", "", "< 10 %", False))
        return
    if not first.finished:
        per_permit = _checks_one_permit(url)
        permits = run.size.permits
        run.rows.append(Row(
            "nightly, nothing new (as shipped)", f"not measured: > {budget_s:.0f} s",
            f"full recompute {_s(full)}", f"> {100 * budget_s / full:.0f} %", "< 10 %", False))
        run.notes.append(
            f"the first nightly run did not finish within {budget_s:.0f} s; the rule checks "
            f"for one permit take {per_permit:.2f} s, so the plan-wide check run needs about "
            f"{per_permit * permits / 60:.0f} min for {permits:,} permits (see docs/scaling.md)")
        return
    quiet = nightly("nightly run, nothing new")
    quiet_full = nightly("nightly run, nothing new, --full (every owner, every permit)",
                         full=True)

    def change() -> dict[str, int]:
        counts = {}
        with db.connect(url) as conn:
            for statement in ONE_PERCENT.split(";\n"):
                counts[statement.split()[1]] = conn.execute(sa.text(statement)).rowcount
        return counts

    _, changed = timed("1 % of parcels, wetlands, impacts, replacements changed", change)
    print("    " + ", ".join(f"{v:,} {k}" for k, v in changed.items()))
    busy = nightly("nightly run, 1 % changed")
    # the same data checked in full: the 1 % night's findings must be the --full night's
    busy_full = nightly("nightly run after the 1 % change, --full", full=True)

    def cell(got: common.ChildNightly) -> tuple[str, str, bool]:
        if got.error:
            return "failed", "", False
        if not got.finished:
            return f"> {budget_s:.0f} s", f"> {100 * budget_s / full:.0f} %", False
        return _s(got.seconds), f"{100 * got.seconds / full:.0f} %", got.seconds / full < 0.10

    ours, ratio, ok = cell(quiet)
    run.rows.append(Row("nightly, nothing new (as shipped)", ours, f"full recompute {_s(full)}",
                        ratio, "< 10 %", ok))
    # issue 21, point 1: --full at most 4x a full recompute, a 1 % night at most 3x
    for label, got, limit in (("nightly, nothing new, --full", quiet_full, 4.0),
                              ("nightly, 1 % of features changed", busy, 3.0)):
        ours, _, _ = cell(got)
        done = got.finished and not got.error
        times = f"{got.seconds / full:.1f}x" if done else ""
        run.rows.append(Row(label, ours, f"full recompute {_s(full)}", times,
                            f"<= {limit:.0f}x", done and got.seconds / full <= limit))
    both = all(g.finished and not g.error for g in (busy, busy_full))
    if both:
        diff, rows = _check_run_difference(url, busy.run_id, busy_full.run_id)
        rechecked = _rechecked(url, busy.run_id)
        run.rows.append(Row(
            "1 % night's findings and outcomes vs a --full night on the same data",
            f"{diff:,} rows differ ({rechecked})", f"{rows:,} rows", "", "identical",
            diff == 0))
        steps = _steps(url, busy.run_id)
        report = steps["total"] - steps["ledger"] - steps["checks"]
        run.rows.append(Row(
            "comparison and report of the 1 % night", _s(report),
            f"the night {_s(steps['total'])}", f"{100 * report / steps['total']:.0f} %",
            "< 10 %", report / steps["total"] < 0.10))
    bench_check_workers(run, url)


def _steps(url: str, run_id: int) -> dict[str, float]:
    """A nightly run's total, ledger and check seconds (see _step_times)."""
    with db.connect(url) as conn:
        r = conn.execute(sa.text(
            "SELECT extract(epoch FROM o.finished_at - o.started_at) AS total, "
            "       extract(epoch FROM l.finished_at - l.started_at) AS ledger, "
            "       CASE WHEN c.started_at >= o.started_at "
            "            THEN extract(epoch FROM c.finished_at - c.started_at) ELSE 0 END "
            "         AS checks "
            "FROM ops.run o LEFT JOIN ledger.run l ON l.run_id = o.ledger_run_id "
            "LEFT JOIN checks.run c ON c.run_id = o.check_run_id WHERE o.run_id = :r"),
            {"r": run_id}).mappings().one()
    return {k: float(v or 0) for k, v in r.items()}


def _rechecked(url: str, run_id: int) -> str:
    """How many permits a nightly run's check run evaluated again, in words."""
    with db.connect(url) as conn:
        r = conn.execute(sa.text(
            "SELECT c.rechecked_count, c.permit_count, c.base_run_id FROM ops.run o "
            "JOIN checks.run c ON c.run_id = o.check_run_id WHERE o.run_id = :r"),
            {"r": run_id}).one()
    if r.base_run_id is None:
        return f"every one of {r.permit_count:,} permits evaluated"
    return f"{r.rechecked_count:,} of {r.permit_count:,} permits evaluated again"


# What is compared of two check runs: everything but the ids the runs gave their rows.
_RUN_ROWS = (
    "SELECT 'f', f.paragraph, f.check_code, f.severity, f.permit_id, f.parcel_id, "
    "f.feature_id, f.measured_value, f.limit_value, f.unit, f.message, "
    "md5(ST_AsEWKB(f.geom)) FROM checks.finding f WHERE f.run_id = {c} "
    "UNION ALL SELECT 'o', o.paragraph, o.check_code, o.outcome, o.permit_id, NULL, NULL, "
    "o.measured_value, o.limit_value, o.unit, o.message, "
    "o.evaluated_count || '/' || o.finding_count FROM checks.run_outcome({c}) o")


def _check_run_difference(url: str, run_a: int, run_b: int) -> tuple[int, int]:
    """(rows that differ, rows of b) between the check runs of two nightly runs."""
    with db.connect(url) as conn:
        a, b = conn.execute(sa.text(
            "SELECT (SELECT check_run_id FROM ops.run WHERE run_id = :a), "
            "(SELECT check_run_id FROM ops.run WHERE run_id = :b)"),
            {"a": run_a, "b": run_b}).one()
        x, y = _RUN_ROWS.format(c=int(a)), _RUN_ROWS.format(c=int(b))
        return tuple(conn.execute(sa.text(
            f"SELECT (SELECT count(*) FROM (({x}) EXCEPT ALL ({y})) d) "
            f"+ (SELECT count(*) FROM (({y}) EXCEPT ALL ({x})) e), "
            f"(SELECT count(*) FROM ({y}) n)")).one())  # type: ignore[return-value]


def bench_check_workers(run: Run, url: str) -> None:
    """A full check run on 1 session and on 2 (checks.run_checks(workers=...)): what more
    cores give. Median of --repeat (at most 3) alternating runs each."""
    from rulem_db import checks

    seconds: dict[int, list[float]] = {1: [], 2: []}
    for _ in range(max(1, min(run.repeat, 3))):
        for workers in (1, 2):
            t, _ = timed(f"checks of every permit, {workers} session(s)",
                         lambda w=workers: checks.run_checks(url, workers=w))
            seconds[workers].append(t)
    one, two = (statistics.median(seconds[w]) for w in (1, 2))
    run.rows.append(Row("checks of every permit on 2 sessions (--workers 2)", _s(two),
                        f"1 session {_s(one)}", f"{one / two:.2f}x faster", "(more cores: "
                        "faster)", None))
    run.notes.append("checks of every permit, alternating runs, 1 / 2 sessions: " + ", ".join(
        f"{a:.2f} / {b:.2f} s" for a, b in zip(seconds[1], seconds[2], strict=True)))


def _checks_one_permit(url: str) -> float:
    """Seconds of the rule checks for one permit (checks.run_checks with a permit number),
    to tell how long the plan-wide check run of a nightly would take."""
    from rulem_db import checks

    with db.connect(url) as conn:
        permit_no = conn.execute(sa.text(
            "SELECT permit_no FROM core.permit WHERE valid_to IS NULL AND status = 'approved' "
            "ORDER BY permit_id LIMIT 1")).scalar_one()
    seconds, _ = timed(f"rule checks for one permit ({permit_no})",
                       lambda: checks.run_checks(url, permit_no=permit_no))
    return seconds


# -- 5: latency ------------------------------------------------------------------------------

def bench_latency(run: Run, url: str) -> None:
    print("\nlatency: 8 concurrent clients (threads, one connection each) vs 1 client")
    pins = common.sample_pins(url)
    with db.connect(url) as conn:
        keys = dict(conn.execute(sa.text(
            "SELECT pin, pin_normalized FROM core.parcel WHERE valid_to IS NULL "
            "AND pin = ANY(:p)"), {"p": pins}).all())
    by_pin = ("pub.parcel_balance by PIN", LOOKUP_BY_PIN,
              lambda rng: {"pin": rng.choice(pins)})
    by_key = ("pub.parcel_balance by PIN, via feature key", LOOKUP_BY_KEY,
              lambda rng: {"key": keys[rng.choice(pins)]})
    plan = ("pub.plan_balance (plan-wide summary)", PLAN_SUMMARY, lambda rng: {})
    measured: dict[tuple[str, int], common.Latency] = {}
    for query, rounds in ((by_pin, 250), (by_key, 250), (plan, 25)):
        for clients in (1, 8):
            got = common.concurrent_latency(url, [query], clients=clients,
                                            per_client=rounds * 8 // clients)
            measured[(query[0], clients)] = got[query[0]]
            print(f"  {clients} client(s): {got[query[0]].line()}")
    for label, target in ((by_pin[0], 10.0), (by_key[0], None), (plan[0], None)):
        eight, one = measured[(label, 8)], measured[(label, 1)]
        errors = len(eight.errors) + len(one.errors)
        run.rows.append(Row(
            f"{label}, 8 clients", f"p50 {eight.p50:.2f} / p95 {eight.p95:.2f} ms",
            f"1 client p50 {one.p50:.2f} / p95 {one.p95:.2f} ms",
            f"{eight.p95 / one.p95:.1f}x p95", f"p95 < {target:g} ms" if target else "",
            (eight.p95 < target and not errors) if target else None))
        if errors:
            run.notes.append(f"{label}: {errors} queries failed, e.g. "
                             f"{(eight.errors + one.errors)[0]}")


# -- 8 and 9: the web service and a hot standby (the web-server and standby helpers' scripts) --

def bench_web(run: Run, url: str) -> None:
    """bench/web.py: `rulem-db serve` under 8 concurrent HTTP clients (a z14 tile of
    pub.parcel_balance and a balance by PIN), beside the same SQL; its own lines printed,
    one PASS/MISS row for both of its p95 targets."""
    from bench import web as web_bench

    print("\nweb: rulem-db serve, 8 concurrent HTTP clients beside the same SQL (bench/web.py)")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ok = web_bench.run(url, clients=8, requests=400)
    print(printed.getvalue().rstrip())
    measured = [" ".join(ln.split()) for ln in printed.getvalue().splitlines()
                if " queries " in ln or "target" in ln]
    run.notes.append("bench/web.py: " + "; ".join(measured))
    run.rows.append(Row(
        "web: z14 tile and balance by PIN through HTTP, 8 clients (bench/web.py)",
        "in the notes", "the same SQL, 8 clients",
        "", f"tile p95 < {web_bench.TILE_TARGET_MS:g} ms, balance p95 < "
        f"{web_bench.BALANCE_TARGET_MS:g} ms", ok))


def bench_standby(run: Run, standby_url: str) -> None:
    """bench/load.py --standby URL in a child process: read latency on a hot standby of the
    cluster during a full recompute on the primary, beside the primary's (it clones the kept
    plan area itself); its table printed, its exit status the row's verdict."""
    print("\nstandby: bench/load.py --standby (readers on a hot standby during a full "
          "recompute on the primary)")
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "load.py"), "--size",
                          run.size.name, "--standby", standby_url], capture_output=True,
                         text=True, env=env)
    seconds = time.perf_counter() - started
    print(out.stdout.rstrip())
    if out.returncode not in (0, 1):
        print(out.stderr.strip()[-2000:])
    tail = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()][-6:]
    run.notes.append("bench/load.py --standby: " + " | ".join(tail))
    run.rows.append(Row(
        "readers on a hot standby during a full recompute (bench/load.py --standby)",
        "see notes", "the same readers on the primary", "", "kept answering",
        out.returncode == 0))
    print(f"  bench/load.py --standby {seconds:.0f} s, exit status {out.returncode}")


def _sizes(url: str) -> str:
    """The plan area database's size and its largest tables, for docs/scaling.md."""
    with db.connect(url) as conn:
        total = conn.execute(sa.text(
            "SELECT pg_size_pretty(pg_database_size(current_database()))")).scalar()
        rows = conn.execute(sa.text(
            "SELECT c.oid::regclass::text, pg_size_pretty(pg_total_relation_size(c.oid)) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname IN ('core', 'ledger', 'checks', 'ops') "
            "ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 6")).all()
    return f"database size {total}; largest: " + ", ".join(f"{t} {s}" for t, s in rows)


# -- the result table and the results file --------------------------------------------------

TABLE_HEADS = ("figure", "ours", "comparison (same run)", "ratio", "target", "")


def table_lines(rows: Sequence[Row], markdown: bool = False) -> list[str]:
    """The result table, for the terminal (aligned columns) or for the results file (a
    markdown table: an indented row, a detail of the row above, keeps its place but not its
    indent)."""
    cells = [TABLE_HEADS] + [(r.figure, r.ours, r.comparison, r.ratio, r.target, r.verdict)
                             for r in rows]
    if markdown:
        def line(c: Sequence[str]) -> str:
            return "| " + " | ".join(v.strip().replace("|", "\\|") for v in c) + " |"
        return [line(cells[0]), "|" + "---|" * len(TABLE_HEADS)] + [line(c) for c in cells[1:]]
    widths = [max(len(c[i]) for c in cells) for i in range(len(TABLE_HEADS))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(c, widths, strict=True)).rstrip()
             for c in cells]
    return lines[:1] + ["  ".join("-" * w for w in widths)] + lines[1:]


def _server(url: str) -> str:
    """The server the figures were measured on: PostgreSQL, PostGIS, GEOS, PROJ, and the
    settings that move them."""
    import shapely

    with db.connect(url) as conn:
        r = conn.execute(sa.text(
            "SELECT current_setting('server_version'), postgis_lib_version(), "
            "postgis_geos_version(), postgis_proj_version(), current_setting('jit'), "
            "current_setting('shared_buffers'), current_setting('work_mem'), "
            "current_setting('shared_preload_libraries')")).one()
    return (f"PostgreSQL {r[0]}, PostGIS {r[1]}, GEOS {r[2]}, PROJ {r[3]}; jit {r[4]}, "
            f"shared_buffers {r[5]}, work_mem {r[6]}, shared_preload_libraries "
            f"'{r[7]}'; the geopandas side on shapely {shapely.__version__} with GEOS "
            f"{shapely.geos_version_string}")


def _commit() -> str:
    """The git commit of the code measured, and whether the working tree differed from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True,
                              check=True).stdout.strip()

    try:
        head = git("log", "-1", "--format=%h %s")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head}" + (" (with uncommitted changes in the working tree)" if dirty else "")


def results_path(directory: Path, size: str, started: dt.datetime) -> Path:
    """The file of one run: <date>-<size>.md for the date's first run of the size, then
    <date>-<size>-<HHMM>.md (UTC), so every run keeps its own file and none is overwritten."""
    path = directory / f"{started:%Y-%m-%d}-{size}.md"
    if path.exists():
        path = directory / f"{started:%Y-%m-%d}-{size}-{started:%H%M}.md"
    return path


RESULT_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})-([a-z]+)(?:-(\d{4}))?\.md$")


def latest_results(directory: Path, size: str) -> Path | None:
    """The newest results file of a size (by the date and time in its name; a date's first
    run, without a time, is older than that date's later ones), or None. The files of earlier
    days named <date>.md (one section per run, every size) are history and never the latest."""
    found = []
    for path in directory.glob(f"*-{size}*.md"):
        m = RESULT_NAME.match(path.name)
        if m and m.group(2) == size:
            found.append((m.group(1), m.group(3) or "", path))
    return max(found)[2] if found else None


def write_results(run: Run, directory: Path, started: dt.datetime, facts: list[str],
                  status: int) -> Path:
    """Write the run to its own file (results_path) and return the file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    size = run.size
    path = results_path(directory, size.name, started)
    state = ("every target met (exit status 0)" if status == 0 else
             "targets missed (exit status 1): "
             + "; ".join(r.figure.strip() for r in run.rows if r.passed is False))
    text = "\n".join([
        f"# Benchmark results, `--size {size.name}`, {started:%Y-%m-%d %H:%M} UTC",
        "",
        "Written by `bench/run.py`, one file per run. What each figure measures and its "
        "target: docs/scaling.md.",
        "",
        *(f"- {fact}" for fact in facts),
        f"- {state}",
        "",
        *table_lines(run.rows, markdown=True),
        "",
        "Notes:",
        "",
        *(f"- {note}" for note in run.notes),
    ]).rstrip() + "\n"
    path.write_text(text)
    return path


def quote_latest(directory: Path, sizes: Sequence[str] = ("county", "state")) -> str:
    """The latest county and state results (their facts and tables), as markdown to quote in
    README.md and docs/scaling.md: `bench/run.py --latest`."""
    out = []
    for size in sizes:
        path = latest_results(directory, size)
        if path is None:
            out += [f"`--size {size}`: no results file in {directory}", ""]
            continue
        lines = path.read_text().splitlines()
        body = lines[:lines.index("Notes:")] if "Notes:" in lines else lines
        out += [f"From [{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}]"
                f"({path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}):", "",
                *body[2:], ""]
    return "\n".join(out).rstrip() + "\n"


# -- main ------------------------------------------------------------------------------------

def main(argv: list[str] | None = None, results: Path | None = None) -> int:
    """Run the harness; write the results file into `results` (the command line: bench/results)
    or the folder --results names. A call from Python (the tests) writes none by default, so it
    leaves bench/results to the runs people make on purpose."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(common.SIZES), default="plan")
    parser.add_argument("--only", default=None,
                        help=f"comma-separated sections: {', '.join(SECTIONS)} (default: "
                             f"{', '.join(DEFAULT_SECTIONS)}, and standby with --standby)")
    parser.add_argument("--standby", metavar="URL",
                        help="a hot standby of the cluster (rulem-db db standby create): "
                             "run the standby section (bench/load.py --standby URL)")
    parser.add_argument("--fresh", action="store_true",
                        help="generate the plan area again even if its template exists")
    parser.add_argument("--keep", action="store_true", help="keep the scratch databases")
    parser.add_argument("--seed", type=float, default=0.42, help="setseed() of the generator")
    parser.add_argument("--repeat", type=int, default=3,
                        help="recompute: the full recompute and the geopandas overlay, each "
                             "this many times, alternating (medians compared)")
    parser.add_argument("--nightly-budget", type=float, default=600.0,
                        help="seconds a nightly run may take before it is stopped "
                             "(default %(default)s)")
    parser.add_argument("--results", type=Path, default=results,
                        help="folder of the markdown results, one file per run "
                             "(default bench/results)")
    parser.add_argument("--no-results", action="store_true",
                        help="print the figures only, write no results file")
    parser.add_argument("--latest", action="store_true",
                        help="print the latest county and state results files' tables (what "
                             "the README and docs/scaling.md quote) and run nothing")
    args = parser.parse_args(argv)
    if args.latest:
        print(quote_latest(args.results or RESULTS), end="")
        return 0
    only = args.only or ",".join(DEFAULT_SECTIONS + (("standby",) if args.standby else ()))
    sections = [s.strip() for s in only.split(",") if s.strip()]
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown section(s) {', '.join(sorted(unknown))}: choose from "
                     f"{', '.join(SECTIONS)}")
    if "standby" in sections and not args.standby:
        parser.error("the standby section needs --standby URL (a hot standby of the cluster: "
                     "rulem-db db standby create)")
    size = common.SIZES[args.size]
    run = Run(size, Path(tempfile.mkdtemp(prefix="rulem-bench-run-")), args.keep, args.seed,
              repeat=args.repeat)
    started = time.perf_counter()
    started_at = dt.datetime.now(dt.UTC)
    machine_start = common.machine()
    print(f"rulem-db benchmark, size {size.name}: {size.parcels:,} parcels, "
          f"{size.wetlands:,} wetlands, {size.permits:,} permits")
    print(f"machine: {machine_start}")
    try:
        if "ingest" in sections:
            bench_ingest(run)
        if {"recompute", "nightly", "latency", "web"} & set(sections):
            print(f"\nplan area: {common.PREFIX}_{size.name}_src as the template")
            gen, (url, generated) = timed(
                "clone the generated plan area (or generate it in SQL)",
                lambda: common.plan_area_database(run.database("plan_area"), size, args.seed,
                                                  args.fresh))
            if generated is not None:
                run.notes.append(f"plan area generated in {generated:.0f} s (kept as template)")
            print("    " + ", ".join(f"{v:,} {k}" for k, v in common.counts(url).items()))
            run.server = run.server or _server(url)
            if "recompute" in sections:
                bench_recompute(run, url, args.repeat)
            if "nightly" in sections:
                bench_nightly(run, url, args.nightly_budget)
            if "latency" in sections or "nightly" in sections:
                run.notes.append(_sizes(url))
            if {"latency", "web"} & set(sections) and not {"nightly", "recompute"} & set(
                    sections):
                timed("full recompute (fills the ledger)",
                      lambda: ledger.recompute(url, all=True))
            if "latency" in sections:
                bench_latency(run, url)
            if "web" in sections:
                bench_web(run, url)
        if "standby" in sections:
            bench_standby(run, args.standby)
    finally:
        if not run.keep:
            for name in run.databases:
                common.drop_database(name)
            shutil.rmtree(run.work, ignore_errors=True)
    print(f"\nrulem-db benchmark, size {size.name} ({size.parcels:,} parcels, "
          f"{size.wetlands:,} wetlands, {size.permits:,} permits)")
    print("\n".join(table_lines(run.rows)))
    for note in run.notes:
        print(f"note: {note}")
    machine_end = common.machine()
    total = time.perf_counter() - started
    print(f"machine at the end: {machine_end}; total {total:.0f} s")
    status = 0 if all(r.passed is not False for r in run.rows) else 1
    if args.results is not None and not args.no_results:
        command = " ".join(sys.argv[1:] if argv is None else argv)
        facts = [
            f"command: `bench/run.py {command}` (sections: {', '.join(sections)})",
            f"commit: {_commit()}",
            f"size: {size.parcels:,} parcels, {size.wetlands:,} wetlands "
            f"({size.complexes:,} of them complexes of 1,000-4,000 vertices), "
            f"{size.permits:,} permits; "
            f"ingest file {size.ingest_features:,} polygons (memory: "
            f"{size.ingest_features * size.memory_factor:,}); seed {args.seed}"
            + (f"; recompute medians of {args.repeat} alternating runs each side"
               if "recompute" in sections else ""),
            f"machine at the start: {machine_start}",
            f"machine at the end: {machine_end}; {total:.0f} s in all",
            f"server: {run.server or 'not measured (no database was created)'}",
        ]
        if size.name == "plan":
            facts.append("size `plan` is a smoke test of the harness: its figures are too "
                         "small to judge the targets, which are set for `county`")
        path = write_results(run, args.results, started_at, facts, status)
        print(f"results: {path}")
    return status


if __name__ == "__main__":
    raise SystemExit(main(results=RESULTS))
