"""The nightly reconciliation against a real database: flow logic called directly (.fn()), the
comparison with the previous run worked out by hand, the report, idempotence, and two
`rulem-db reconcile` processes started together."""

from __future__ import annotations

import csv
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import flows_fixtures as fx
import ledger_scenarios as s
import pandas as pd
import pyogrio
import pytest
import sqlalchemy as sa

from flows import nightly, runs

at = fx.at
P1 = (0, 0, 500, 500)
P2 = (500, 0, 1000, 500)


def _site(engine: sa.Engine) -> int:
    """One wetland, two parcels, permit 25-001: fill 100 m x 100 m of wetland on P-1
    (2.4711 ac required), certified replacement 100 m x 50 m on P-2 (1.2355 ac credit, all of it
    allocated to P-1, where the impact is): P-1 balance 1.2355 - 2.4711 = -1.2356 as published
    (deficit)."""
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        d = s.delineation(conn, "D-1", at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", at(0, 0, 300, 300))
        s.parcel(conn, "P-1", at(*P1))
        s.parcel(conn, "P-2", at(*P2))
        permit = s.permit(conn, "25-001", pins=["P-1", "P-2"])
        s.impact(conn, permit, "fill", at(0, 0, 100, 100), "i1")
        s.replacement(conn, permit, at(600, 0, 700, 50), "r1")
    return permit


def _reconcile(db_url: str, reports: Path, **kw) -> nightly.RunSummary:
    with nightly.database(db_url):
        return nightly.nightly_reconciliation.fn(reports=str(reports), started_via="command",
                                                 **kw)


def test_first_run_then_nothing_then_one_change(db_url, engine, tmp_path):
    permit = _site(engine)
    reports = tmp_path / "reports"
    first = _reconcile(db_url, reports)
    assert (first.status, first.changed, first.previous_run_id) == ("done", True, None)
    assert first.entries_posted > 0
    assert round(first.plan_required_acres, 4) == 2.4711
    assert round(first.plan_balance_acres, 4) == -1.2356
    with engine.connect() as conn:
        check_run, ledger_run = conn.execute(sa.text(
            "SELECT check_run_id, ledger_run_id FROM ops.run WHERE run_id = :r"),
            {"r": first.run_id}).one()
        n_findings = conn.execute(sa.text("SELECT count(*) FROM checks.finding WHERE run_id = :c"),
                                  {"c": check_run}).scalar_one()
        n_entries = conn.execute(sa.text("SELECT count(*) FROM ledger.entry WHERE run_id = :l"),
                                 {"l": ledger_run}).scalar_one()
        changes = conn.execute(sa.text("SELECT * FROM ops.run_parcel_change(:r)"),
                               {"r": first.run_id}).mappings().all()
    assert (first.findings, first.findings_new, first.findings_resolved) == (n_findings,
                                                                             n_findings, 0)
    assert first.entries_posted == n_entries
    p1 = next(c for c in changes if c["pin"] == "P-1")
    assert (p1["status_before"], p1["status_after"]) == ("none", "deficit")
    assert p1["balance_after"] == Decimal("-1.2356")

    # The same night again: nothing posted, nothing new, a run record that says so.
    second = _reconcile(db_url, reports)
    assert (second.status, second.changed, second.previous_run_id) == ("done", False,
                                                                       first.run_id)
    assert (second.entries_posted, second.findings_new, second.findings_resolved,
            second.parcels_changed) == (0, 0, 0, 0)
    assert second.findings == first.findings
    page = second.report_path.read_text()
    assert "Nothing changed since run" in page
    # ... a short page that links the full report of run 1, and no copy of what it saw
    assert f"../{first.report_path.parent.name}/index.html" in page
    assert not (second.report_path.parent / "balance_map.png").exists()
    with engine.connect() as conn:
        seen = conn.execute(sa.text(
            "SELECT parcels_seen_in_run_id, findings_seen_in_run_id, "
            "(SELECT count(*) FROM ops.run_parcel_balance b WHERE b.run_id = r.run_id) + "
            "(SELECT count(*) FROM ops.run_finding f WHERE f.run_id = r.run_id) AS copies, "
            "check_run_id FROM ops.run r WHERE run_id = :r"), {"r": second.run_id}).one()
    assert (seen.parcels_seen_in_run_id, seen.findings_seen_in_run_id, seen.copies,
            seen.check_run_id) == (first.run_id, first.run_id, 0, check_run)
    index = (reports / "index.html").read_text()  # newest first, each run with its outcome
    assert index.index(f"run {second.run_id}<") < index.index(f"run {first.run_id}<")
    assert "nothing changed since the previous run" in index

    # A second fill of 100 m x 100 m on P-1: required 4.9421, P-1 balance -3.7066.
    with engine.begin() as conn:
        s.impact(conn, permit, "fill", at(100, 0, 200, 100), "i2")
    third = _reconcile(db_url, reports)
    assert third.changed and third.parcels_changed == 1 and third.entries_posted > 0
    with engine.connect() as conn:
        (p1,) = conn.execute(sa.text("SELECT * FROM ops.run_parcel_change(:r)"),
                             {"r": third.run_id}).mappings().all()
        new_rows = conn.execute(sa.text(
            "SELECT count(*) FROM ops.run_finding_change(:r) WHERE change = 'new'"),
            {"r": third.run_id}).scalar_one()
    assert (p1["pin"], p1["balance_before"], p1["balance_after"]) == (
        "P-1", Decimal("-1.2356"), Decimal("-3.7066"))
    assert p1["balance_change"] == Decimal("-2.4710")  # -3.7066 - (-1.2356), as published
    assert third.findings_new == new_rows
    assert round(third.plan_required_acres, 4) == 4.9421
    assert (third.report_path.parent / "balance_map.png").is_file()  # a full report again


def test_report_folder_has_page_csv_gpkg_and_maps(db_url, engine, tmp_path):
    _site(engine)
    summary = _reconcile(db_url, tmp_path / "reports")
    folder = summary.report_path.parent
    assert folder.parent == tmp_path / "reports"
    assert folder.name.endswith(f"-run-{summary.run_id}")
    page = summary.report_path.read_text()
    assert page.count('src="data:image/png;base64,') == 2  # balance map and changes map
    assert "<script" not in page and "http" not in page  # self-contained
    for text in ("Plan totals", "What changed since the previous run", "25-001", "P-1",
                 "s-deficit"):
        assert text in page
    with (folder / "parcel_balance.csv").open() as f:
        rows = {r["pin"]: r for r in csv.DictReader(f)}
    assert set(rows) == {"P-1", "P-2"}
    assert (rows["P-1"]["balance_acres"], rows["P-1"]["status"]) == ("-1.2356", "deficit")
    assert rows["P-1"]["changed_since_previous_run"] == "true"
    assert rows["P-2"]["credit_hosted_acres"] == "1.2355"
    layers = dict(pyogrio.list_layers(folder / "findings.gpkg"))
    with engine.connect() as conn:
        by_kind = dict(conn.execute(sa.text(
            "SELECT coalesce(replace(GeometryType(f.geom), 'MULTI', ''), 'NONE'), count(*) "
            "FROM checks.finding f JOIN ops.run r ON r.check_run_id = f.run_id "
            "WHERE r.run_id = :r GROUP BY 1"), {"r": summary.run_id}).all())
    wanted = {"POLYGON": "finding_area", "LINESTRING": "finding_line", "POINT": "finding_point",
              "NONE": "finding_list"}
    for kind, n in by_kind.items():
        assert pyogrio.read_info(folder / "findings.gpkg", layer=wanted[kind])["features"] == n
    assert set(layers) == {wanted[k] for k in by_kind}
    # a finding about a parcel (8: no easement over W1 on P-1) names its PIN in the run's
    # snapshot and the GeoPackage; a finding about no parcel names none
    with engine.connect() as conn:
        snapshot = conn.execute(sa.text(
            "SELECT rf.check_code, rf.pin, f.parcel_id IS NOT NULL FROM ops.run_finding rf "
            "JOIN checks.finding f USING (finding_id) WHERE rf.run_id = :r"),
            {"r": summary.run_id}).all()
    assert ("easement_coverage", "P-1", True) in snapshot
    assert all((pin is None) != about_parcel for _, pin, about_parcel in snapshot)
    written = pd.concat([pyogrio.read_dataframe(folder / "findings.gpkg", layer=layer)
                         for layer in layers])
    about_parcels = sorted(pin for _, pin, about_parcel in snapshot if about_parcel)
    assert sorted(written.pin.dropna()) == about_parcels
    assert len(written) == len(snapshot)
    assert (folder / "balance_map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with (folder / "permit_balance.csv").open() as f:
        permits = {r["permit_no"]: r for r in csv.DictReader(f)}
    assert set(permits) == {"25-001"}  # 2.4711 ac required, 1.2355 ac credit
    assert (permits["25-001"]["required_acres"], permits["25-001"]["credit_acres"],
            permits["25-001"]["status"]) == ("2.4711", "1.2355", "deficit")


def test_long_lists_in_the_page_stop_at_max_rows(db_url, engine, tmp_path, monkeypatch):
    """A plan area of 20,000 permits and 240,000 findings gets a page people read: the
    findings by check in full (counted by the server), the longer lists cut at MAX_ROWS with
    a note of how many there are and where they all are."""
    from rulem_db.reports import run as report

    _site(engine)
    with engine.begin() as conn:  # a second permit, with findings of its own
        s.parcel(conn, "P-3", at(2000, 0, 2500, 500))
        other = s.permit(conn, "25-002", pins=["P-3"])
        s.impact(conn, other, "fill", at(2010, 10, 2020, 20), "i2")
    monkeypatch.setattr(report, "MAX_ROWS", 1)
    summary = _reconcile(db_url, tmp_path / "reports")
    page = summary.report_path.read_text()
    with engine.connect() as conn:
        findings = conn.execute(sa.text(
            "SELECT count(*) FROM ops.run_finding WHERE run_id = :r"),
            {"r": summary.run_id}).scalar_one()
        by_check = conn.execute(sa.text(
            "SELECT check_code, count(*) FROM ops.run_finding WHERE run_id = :r "
            "GROUP BY check_code"), {"r": summary.run_id}).all()
    assert findings > 1 and len(by_check) > 1
    assert f"<h3>Every finding ({findings})</h3>" in page
    assert f"First 1 of {findings} findings" in page
    # a first run: every finding is new, the section counted by the server and cut
    assert f"<h3>New findings ({findings})</h3>" in page
    assert page.count(f"First 1 of {findings} findings") == 2
    assert "First 1 of 2 permits" in page and "<h3>Permits (2)</h3>" in page
    assert all(code in page for code, _ in by_check)  # every check, not cut
    with (summary.report_path.parent / "permit_balance.csv").open() as f:
        assert [r["permit_no"] for r in csv.DictReader(f)] == ["25-001", "25-002"]


def test_finding_changes_by_hand(db_url, engine):
    """ops.run_finding_change compares two runs' findings by key: new, resolved, and changed
    (the same key measured otherwise: this run's row, with what it was); a key measured the
    same is no change."""
    plan = runs.plan_area(db_url, None)
    ids = []
    runs_keys = ((("a", 5, "P-1"), ("b", 5, "P-2"), ("d", 3, "P-4")),
                 (("b", 5, "P-2"), ("c", 7, "P-3"), ("d", 4, "P-4")))
    for keys in runs_keys:
        with runs.ReconcileLock(db_url, plan) as lock:
            run_id = lock.start_run("nightly_reconciliation", "api")
        with engine.begin() as conn:
            for k, measured, permit in keys:
                conn.execute(sa.text(
                    "INSERT INTO ops.run_finding (run_id, finding_key, paragraph, check_code, "
                    "severity, permit_no, measured_value, limit_value, unit, message) "
                    "VALUES (:r, :k, '6(c)', 'buffer_min_width', 'error', :p, :m, 8, 'ft', "
                    ":k)"), {"r": run_id, "k": k, "m": measured, "p": permit})
            conn.execute(sa.text("UPDATE ops.run SET status = 'done' WHERE run_id = :r"),
                         {"r": run_id})
        ids.append(run_id)
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT change, finding_key, permit_no, measured_value, message "
            "FROM ops.run_finding_change(:r)"), {"r": ids[1]}).all()
        previous = conn.execute(sa.text("SELECT previous_run_id FROM ops.run WHERE run_id = :r"),
                                {"r": ids[1]}).scalar_one()
    assert previous == ids[0]
    assert [tuple(r) for r in rows] == [  # in the function's order: change, permit
        ("changed", "d", "P-4", 4, "d (was: 3 ft, limit 8)"),
        ("new", "c", "P-3", 7, "c"),
        ("resolved", "a", "P-1", 5, "a")]


def test_a_failing_step_marks_the_run_failed(db_url, engine, tmp_path):
    """No plan boundary: the checks refuse to run; the run record says why."""
    with pytest.raises(Exception, match="no CWMP area boundary"):
        _reconcile(db_url, tmp_path / "reports")
    with engine.connect() as conn:
        status, message = conn.execute(sa.text(
            "SELECT status, message FROM ops.run ORDER BY run_id DESC LIMIT 1")).one()
    assert status == "failed" and "no CWMP area boundary" in message


def test_reconcile_with_an_inbox_from_the_command_line(db_url, engine, tmp_path, capsys):
    from rulem_cli import main as cli

    _site(engine)
    box = fx.inbox_two_good_one_bad(tmp_path)
    code = cli.main(["--db", db_url, "reconcile", "--inbox", str(box), "--reports",
                     str(tmp_path / "reports"), "--no-prefect"])
    out = capsys.readouterr().out
    assert code == 0
    assert "inbox: 2 loaded, 0 already loaded, 1 quarantined" in out
    assert "quarantined: parcel/parcels_no_pin.geojson" in out
    assert f"report: {tmp_path / 'reports'}" in out and "index.html" in out


def _reconcile_process(db_url: str, reports: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rulem_cli.main", "--db", db_url, "reconcile", "--no-prefect",
         "--reports", str(reports)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_reconciles_started_together_one_runs_the_other_exits(db_url, engine, tmp_path):
    """Both start at once; whichever takes the lock first is held up (this test locks the
    table its comparison step writes) long enough for the other to find the lock taken."""
    _site(engine)
    with engine.connect() as blocker:
        blocker.begin()
        blocker.execute(sa.text("LOCK TABLE ops.run_parcel_balance IN ACCESS EXCLUSIVE MODE"))
        procs = [_reconcile_process(db_url, tmp_path / f"r{i}") for i in range(2)]
        deadline = time.monotonic() + 120
        while all(p.poll() is None for p in procs):
            assert time.monotonic() < deadline, "neither reconcile finished nor gave way"
            time.sleep(0.2)
        loser = next(p for p in procs if p.poll() is not None)
        winner = next(p for p in procs if p is not loser)
        _, err = loser.communicate()
        with engine.connect() as conn:
            running = conn.execute(sa.text(
                "SELECT run_id, host, pid FROM ops.run WHERE status = 'running'")).one()
        assert winner.poll() is None  # still held up by this test
        blocker.rollback()
    out, werr = winner.communicate(timeout=120)
    assert loser.returncode == runs.EXIT_LOCKED, err
    assert err.startswith("rulem-db reconcile: plan area acd-53-62 is being reconciled by "
                          f"run {running.run_id} ")
    assert f"pid {winner.pid}" in err and running.pid == winner.pid
    assert winner.returncode == 0, werr
    assert f"run {running.run_id} (acd-53-62): done" in out


def test_report_lists_a_finding_without_a_permit(db_url, engine, tmp_path):
    """A District project (no permit) replacing partly outside the plan area gives a 7(c)
    finding with no permit number; the report sorted findings by permit and failed on it.
    (Wholly outside, the database refuses it: sql/014_write_rules.sql.)"""
    _site(engine)
    with engine.begin() as conn:  # plan boundary is at(-1000, -1000, 5000, 5000)
        s.replacement(conn, None, at(4950, 0, 5100, 100), "dp1", district_project="DP-1")
    summary = _reconcile(db_url, tmp_path / "reports")
    with engine.connect() as conn:
        n = conn.execute(sa.text(
            "SELECT count(*) FROM ops.run_finding WHERE run_id = :r AND permit_no IS NULL "
            "AND check_code = 'replacement_outside_plan_area'"), {"r": summary.run_id}).scalar()
    assert n >= 1
    page = summary.report_path.read_text()
    assert "(no permit)" in page and "replacement_outside_plan_area" in page
