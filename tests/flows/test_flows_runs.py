"""The reconciliation lock, the run record and the inbox ingest flow, against a real database
(flow logic called with .fn(), no Prefect engine)."""

from __future__ import annotations

import os
import socket

import flows_fixtures as fx
import pytest
import sqlalchemy as sa

from flows import nightly, runs


@pytest.fixture
def plan(db_url: str) -> runs.PlanArea:
    return runs.plan_area(db_url, None)


def test_plan_area_by_code_or_the_only_one(db_url, plan):
    assert plan.code == "acd-53-62"
    assert runs.plan_area(db_url, "acd-53-62") == plan
    with pytest.raises(ValueError, match="no plan area 'nowhere'.*known: acd-53-62"):
        runs.plan_area(db_url, "nowhere")


def test_second_lock_is_refused_at_once_naming_the_running_run(db_url, plan):
    with runs.ReconcileLock(db_url, plan) as lock:
        run_id = lock.start_run("nightly_reconciliation", "command")
        with pytest.raises(runs.ReconcileLocked) as refused:
            runs.ReconcileLock(db_url, plan).__enter__()
        message = str(refused.value)
        assert f"run {run_id}" in message
        assert f"host {socket.gethostname()}, pid {os.getpid()}" in message
        assert "via command" in message and "acd-53-62" in message
        assert refused.value.exit_code == runs.EXIT_LOCKED
    # Released: the next one gets it.
    with runs.ReconcileLock(db_url, plan) as again:
        assert again.start_run("nightly_reconciliation", "command") > run_id


def test_lock_held_without_a_run_record_names_the_session(db_url, plan, engine):
    with engine.connect() as conn:
        conn.execute(sa.text("SELECT ops.try_reconcile_lock(:p)"), {"p": plan.plan_area_id})
        pid = conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
        with pytest.raises(runs.ReconcileLocked, match=f"database session {pid}"):
            runs.ReconcileLock(db_url, plan).__enter__()


def test_start_run_needs_the_lock(engine, plan):
    with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="does not hold"):
        conn.execute(sa.text("SELECT ops.start_run(:p, 'nightly_reconciliation', 'api', 'h', 1)"),
                     {"p": plan.plan_area_id})


def test_a_run_left_running_by_a_dead_process_is_abandoned(db_url, plan, engine):
    lock = runs.ReconcileLock(db_url, plan).__enter__()
    dead = lock.start_run("nightly_reconciliation", "schedule")
    lock._close()  # the process dies: its session ends, the database drops the lock
    with runs.ReconcileLock(db_url, plan) as lock2:
        new = lock2.start_run("nightly_reconciliation", "schedule")
    with engine.connect() as conn:
        rows = dict(conn.execute(sa.text(
            "SELECT run_id, status FROM ops.run WHERE run_id IN (:a, :b)"),
            {"a": dead, "b": new}).all())
        message = conn.execute(sa.text("SELECT message FROM ops.run WHERE run_id = :a"),
                               {"a": dead}).scalar_one()
    assert rows == {dead: "abandoned", new: "running"}
    assert f"found still running by run {new}" in message


def test_ingest_inbox_loads_the_good_files_and_quarantines_the_bad_one(db_url, tmp_path,
                                                                       engine):
    box = fx.inbox_two_good_one_bad(tmp_path)
    with nightly.database(db_url):
        summary = nightly.ingest_inbox.fn(str(box), started_via="api")
    outcomes = {f.rel: f.outcome for f in summary.files}
    assert outcomes == {"cwmp_area/boundary.geojson": "loaded",
                        "parcel/parcels_2026.gpkg": "loaded",
                        "parcel/parcels_no_pin.geojson": "quarantined"}
    assert (summary.status, summary.files_loaded, summary.files_quarantined) == ("partial", 2, 1)
    # Loaded files are archived, the bad one is quarantined with its report; the inbox keeps
    # its layer folders and its README.
    day = runs.local_day().isoformat()
    run_dir = f"run-{summary.run_id}"
    assert (tmp_path / "archive" / day / run_dir / "parcel" / "parcels_2026.gpkg").is_file()
    assert (tmp_path / "archive" / day / run_dir / "cwmp_area" / "boundary.geojson").is_file()
    bad = tmp_path / "quarantine" / day / run_dir / "parcel" / "parcels_no_pin.geojson"
    assert bad.is_file()
    report = bad.with_name(bad.name + ".error.txt").read_text()
    assert "pin" in report and "Nothing from this file was loaded" in report
    assert sorted(p.name for p in box.rglob("*")) == ["README.txt", "cwmp_area", "parcel"]
    with engine.connect() as conn:
        pins = conn.execute(sa.text("SELECT pin FROM core.parcel ORDER BY pin")).scalars().all()
        files = conn.execute(sa.text(
            "SELECT file_name, outcome, batch_id IS NOT NULL FROM pub.reconciliation_file "
            "WHERE run_id = :r ORDER BY file_name"), {"r": summary.run_id}).all()
        run = conn.execute(sa.text("SELECT * FROM pub.reconciliation_run WHERE run_id = :r"),
                           {"r": summary.run_id}).mappings().one()
    assert pins == ["P-1", "P-2"]
    assert [tuple(f) for f in files] == [("cwmp_area/boundary.geojson", "loaded", True),
                                         ("parcel/parcels_2026.gpkg", "loaded", True),
                                         ("parcel/parcels_no_pin.geojson", "quarantined", False)]
    assert (run["flow"], run["status"], run["files_loaded"]) == ("ingest_inbox", "partial", 2)


def test_the_same_file_again_counts_as_done(db_url, tmp_path):
    box = tmp_path / "inbox"
    delivered = fx.parcels_gpkg(box / "parcel" / "p.gpkg", {"P-1": (0, 0, 100, 100)})
    same_bytes = delivered.read_bytes()
    with nightly.database(db_url):
        first = nightly.ingest_inbox.fn(str(box))
        delivered.write_bytes(same_bytes)  # delivered again, byte for byte
        second = nightly.ingest_inbox.fn(str(box))
    assert [f.outcome for f in first.files] == ["loaded"]
    assert [f.outcome for f in second.files] == ["duplicate"]
    assert second.status == "done" and not list((box / "parcel").iterdir())
