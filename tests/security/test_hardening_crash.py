"""Crash safety: an ingest killed during its COPY into staging or during its
merge, and a recompute killed mid-way, leave every table consistent; the same command then
succeeds with the right result.

How the kill lands where it should, without sleeping and hoping: the child is stopped at a known
point and the test watches its database backend in pg_stat_activity until it is there.
* during the COPY: the child (tests/support/hardening_driver.py) sends half of the COPY's data
  and waits, so its backend sits in the COPY (wait event ClientRead);
* during the merge: the test holds SHARE on core.parcel, which the merge's first write into the
  layer waits for (wait event type Lock, blocked by the test);
* during a recompute: the test holds one owner's ledger lock (ledger.owner_lock), which posting
  that owner waits for, after the chunks before it were committed.
Each kill comes in two kinds: SIGKILL of the client process (the server sees its connection go
and rolls the transaction back) and pg_terminate_backend of the child's backend (the client sees
its connection die and exits non-zero).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import (
    DRIVER,
    NEW_PIN,
    DemoTemplate,
    admin_engine,
    backends,
    child_env,
    database_of,
    fingerprint,
    gone,
    parcels_changed,
    published,
    wait_for,
)
from sqlalchemy.engine import URL

from etl.ingest import ingest
from rulem_db import db, ledger

KILLS = ("sigkill", "terminate")


@pytest.fixture
def demo_url(admin_url: URL, demo_template: DemoTemplate) -> Iterator[str]:  # noqa: F811
    """A fresh copy of the demo plan area (loaded, not yet recomputed)."""
    with cloned(admin_url, demo_template.name) as url:
        yield url


def _cli(url: str, *args: str, stall: tuple[Path, Path] | None = None) -> subprocess.Popen:
    driver = [sys.executable, str(DRIVER), "cli"]
    if stall:
        driver += ["--stall-copy", str(stall[0]), str(stall[1])]
    return subprocess.Popen([*driver, "--", "--db", url, *args], env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _kill(proc: subprocess.Popen, how: str, watcher: sa.Engine, backend_pid: int) -> None:
    """Kill the child (SIGKILL) or its backend (pg_terminate_backend)."""
    if how == "sigkill":
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
    else:
        with watcher.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"),
                                {"p": backend_pid}).scalar_one()


def _finished(proc: subprocess.Popen, how: str) -> None:
    """After pg_terminate_backend the client must fail loudly, not report success."""
    if how == "terminate":
        _, err = proc.communicate(timeout=60)
        assert proc.returncode != 0, err
        assert err.strip(), "the client failed without saying why"


def _check_reingest(url: str, file: Path, expected_area: float) -> None:
    """The same ingest, run again (in this process: the CLI is a thin wrapper around it, and a
    second interpreter costs seconds), loads the file with the right result."""
    result = ingest(url, "parcel", file)
    assert (result.status, result.inserted, result.changed, result.closed) == \
        ("loaded", 1, 1, 1), result.message
    eng = db.engine(url)
    try:
        with eng.connect() as conn:
            area, running = conn.execute(sa.text(
                "SELECT (SELECT ST_Area(geom) FROM core.parcel WHERE pin_normalized = :pin "
                "AND valid_to IS NULL), (SELECT count(*) FROM ops.batch "
                "WHERE status = 'running')"), {"pin": NEW_PIN}).one()
    finally:
        eng.dispose()
    assert area == pytest.approx(expected_area, abs=1e-6)
    assert running == 0


def _new_parcel_area(file: Path) -> float:
    import geopandas as gpd

    gdf = gpd.read_file(file, engine="pyogrio")
    return float(gdf.loc[gdf["pin"] == NEW_PIN].geometry.area.iloc[0])


@pytest.mark.parametrize("how", KILLS)
def test_ingest_killed_during_copy_leaves_no_trace_and_runs_again(
        demo_url: str, demo_template: DemoTemplate, tmp_path: Path,  # noqa: F811
        how: str) -> None:
    file = parcels_changed(demo_template.directory, tmp_path / "parcels.gpkg")
    watcher = admin_engine(demo_url)
    engine = db.engine(demo_url)
    marker, release = tmp_path / "stalled", tmp_path / "release"
    try:
        before = fingerprint(engine)
        proc = _cli(demo_url, "ingest", "parcel", str(file), stall=(marker, release))
        wait_for("the child to stall in its COPY", marker.exists)
        copying = wait_for("the child's backend inside COPY", lambda: [
            b for b in backends(watcher, database_of(demo_url))
            if b.query.lstrip().upper().startswith("COPY") and b.state == "active"
            and b.wait_event == "ClientRead"])
        assert len(copying) == 1, copying
        _kill(proc, how, watcher, copying[0].pid)
        release.touch()
        wait_for("the killed backend to end", lambda: gone(watcher, copying[0].pid))
        _finished(proc, how)
        assert fingerprint(engine) == before
        _check_reingest(demo_url, file, _new_parcel_area(file))
    finally:
        release.touch()
        engine.dispose()
        watcher.dispose()


@pytest.mark.parametrize("how", KILLS)
def test_ingest_killed_during_merge_leaves_no_trace_and_runs_again(
        demo_url: str, demo_template: DemoTemplate, tmp_path: Path,  # noqa: F811
        how: str) -> None:
    file = parcels_changed(demo_template.directory, tmp_path / "parcels.gpkg")
    watcher = admin_engine(demo_url)
    engine = db.engine(demo_url)
    try:
        before = fingerprint(engine)
        with watcher.connect() as holder:
            holder.execute(sa.text("BEGIN"))
            holder.execute(sa.text("LOCK TABLE core.parcel IN SHARE MODE"))
            me = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
            proc = _cli(demo_url, "ingest", "parcel", str(file))
            merging = wait_for("the child's merge to wait for the test's lock", lambda: [
                b for b in backends(watcher, database_of(demo_url))
                if b.wait_event_type == "Lock" and me in b.blocked_by])
            assert len(merging) == 1, merging
            assert "ingest_apply" in merging[0].query, merging[0].query
            _kill(proc, how, watcher, merging[0].pid)
            holder.execute(sa.text("ROLLBACK"))
        wait_for("the killed backend to end", lambda: gone(watcher, merging[0].pid))
        _finished(proc, how)
        assert fingerprint(engine) == before
        _check_reingest(demo_url, file, _new_parcel_area(file))
    finally:
        engine.dispose()
        watcher.dispose()


def _last_owner(engine: sa.Engine) -> int:
    """The permit whose first waiting queue row comes last: with a small chunk, every other
    owner is posted (and committed) before the drain reaches it."""
    with engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT permit_id FROM ledger.change_queue WHERE processed_at IS NULL "
            "AND permit_id IS NOT NULL GROUP BY permit_id ORDER BY min(queue_id) DESC "
            "LIMIT 1")).scalar_one()


def _owner_state(engine: sa.Engine, permit_id: int) -> tuple[int, int]:
    with engine.connect() as conn:
        return tuple(conn.execute(sa.text(
            "SELECT (SELECT count(*) FROM ledger.change_queue WHERE permit_id = :p "
            "AND processed_at IS NULL), (SELECT count(*) FROM ledger.entry "
            "WHERE permit_id = :p)"), {"p": permit_id}).one())


def _half_posted(engine: sa.Engine) -> tuple[int, int]:
    """(owners posted, owners still waiting); every owner is wholly one or the other."""
    with engine.connect() as conn:
        torn = conn.execute(sa.text(
            "SELECT count(*) FROM (SELECT permit_id FROM ledger.change_queue "
            "WHERE permit_id IS NOT NULL GROUP BY permit_id HAVING "
            "bool_or(processed_at IS NULL) AND (bool_or(processed_at IS NOT NULL) "
            "OR EXISTS (SELECT 1 FROM ledger.entry e WHERE e.permit_id = "
            "ledger.change_queue.permit_id))) x")).scalar_one()
        assert torn == 0, "an owner is partly posted"
        return tuple(conn.execute(sa.text(
            "SELECT count(DISTINCT permit_id) FILTER (WHERE processed_at IS NOT NULL), "
            "count(DISTINCT permit_id) FILTER (WHERE processed_at IS NULL) "
            "FROM ledger.change_queue")).one())


@pytest.mark.parametrize("how", KILLS)
def test_recompute_killed_midway_keeps_whole_chunks_and_finishes_when_run_again(
        demo_url: str, admin_url: URL, how: str) -> None:
    watcher = admin_engine(demo_url)
    engine = db.engine(demo_url)
    try:
        with cloned(admin_url, database_of(demo_url)) as reference:
            ledger.recompute(reference, all=True)
            expected = published(reference)
        last = _last_owner(engine)
        with watcher.connect() as holder:
            holder.execute(sa.text("BEGIN"))
            holder.execute(sa.text("SELECT ledger.owner_lock(:p, NULL)"), {"p": last})
            me = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
            proc = subprocess.Popen([sys.executable, str(DRIVER), "recompute", demo_url, "2"],
                                    env=child_env(), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            posting = wait_for("the recompute to wait for the last owner's lock", lambda: [
                b for b in backends(watcher, database_of(demo_url))
                if b.wait_event_type == "Lock" and me in b.blocked_by])
            assert len(posting) == 1, posting
            assert "ledger.drain" in posting[0].query, posting[0].query
            _kill(proc, how, watcher, posting[0].pid)
            holder.execute(sa.text("ROLLBACK"))
        wait_for("the killed backend to end", lambda: gone(watcher, posting[0].pid))
        _finished(proc, how)
        posted, waiting = _half_posted(engine)
        assert posted > 0 and waiting > 0, (posted, waiting)  # it was killed mid-way
        assert _owner_state(engine, last)[1] == 0  # nothing of the killed chunk is visible
        ledger.recompute(demo_url, all=True)  # what `rulem-db recompute --all` runs
        assert _half_posted(engine)[1] == 0
        assert published(demo_url) == expected
    finally:
        engine.dispose()
        watcher.dispose()


def test_a_recompute_killed_midway_is_not_left_running(demo_url: str) -> None:
    """The next recompute marks the run of a killed process abandoned (ledger.start_run)."""
    watcher = admin_engine(demo_url)
    engine = db.engine(demo_url)
    try:
        last = _last_owner(engine)
        with watcher.connect() as holder:
            holder.execute(sa.text("BEGIN"))
            holder.execute(sa.text("SELECT ledger.owner_lock(:p, NULL)"), {"p": last})
            proc = subprocess.Popen([sys.executable, str(DRIVER), "recompute", demo_url, "2"],
                                    env=child_env(), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            posting = wait_for("the recompute to block", lambda: [
                b for b in backends(watcher, database_of(demo_url))
                if b.wait_event_type == "Lock"])
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            holder.execute(sa.text("ROLLBACK"))
        wait_for("the killed backend to end", lambda: gone(watcher, posting[0].pid))
        ledger.recompute(demo_url)
        with engine.connect() as conn:
            stale = conn.execute(sa.text(
                "SELECT count(*) FROM ledger.run WHERE status = 'running'")).scalar_one()
            abandoned = conn.execute(sa.text(
                "SELECT message FROM ledger.run WHERE status = 'abandoned'")).scalars().all()
        assert stale == 0
        assert len(abandoned) == 1 and "had gone" in abandoned[0]
    finally:
        engine.dispose()
        watcher.dispose()
