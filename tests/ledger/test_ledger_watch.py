"""The resident recompute service (`rulem-db watch`, rulem_db/ledger/watch.py): it recomputes each
committed change within seconds on its kept session, ignores a rolled-back edit, survives its
session being killed and a failing recompute (recorded as a failed run, the queue kept), hands
a big queue to the workers, recomputes when the date changes, shows in the next nightly's
comparison, and stops cleanly on SIGTERM.

Site: A-1 (0,0)-(300,600), B-1 (300,0)-(600,600); wetland W1 (50,0)-(150,100) in a delineation
approved 2020-01-01. Permit 24-001 fills all of W1 (10,000 m^2 = 2.4711 ac, required 2.4711 ac)
and replaces it with 20,000 m^2 on B-1 (4.9421 ac of credit).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from hardening_helpers import child_env
from ledger_watching import WAIT, next_event, watching

from rulem_db import ledger
from rulem_db.ledger.watch import LedgerWatch


def site(conn: sa.Connection, fill: s.Rect = (50, 0, 150, 100)) -> dict[str, int]:
    ids = s.base_site(conn, {"W1": (50, 0, 150, 100)})
    ids["A-1"] = s.parcel(conn, "A-1", (0, 0, 300, 600))
    ids["B-1"] = s.parcel(conn, "B-1", (300, 0, 600, 600))
    ids["24-001"] = p = s.permit(conn, "24-001")
    ids["fill"] = s.impact(conn, p, "fill", fill, "fill-1")
    s.replacement(conn, p, (350, 400, 550, 500), "basin")
    return ids


def test_each_committed_change_is_recomputed_on_the_kept_session(
        engine: sa.Engine, db_url: str) -> None:
    with watching(db_url) as (watch, events):
        start = next_event(events)
        assert start.why == "start" and start.summary and start.summary.entries == 0
        with engine.begin() as conn:
            ids = site(conn)
        change = next_event(events)
        assert change.why == "change" and change.error is None
        assert change.summary.owners == 1 and change.summary.entries == 4
        with engine.connect() as conn:
            permit = s.permit_rows(conn)["24-001"]
            assert [round(float(permit[m]), 4) for m in ("impact_acres", "required_acres",
                                                         "credit_acres")] == [2.4711, 2.4711,
                                                                              4.9421]
            # the run was made by the watcher's own session, not a new one
            assert conn.execute(sa.text(
                "SELECT backend_pid FROM ledger.run WHERE run_id = :r"),
                {"r": change.summary.run_id}).scalar_one() == watch.backend_pid

        # a rolled-back edit wakes nobody; the next committed one is recomputed alone
        with engine.connect() as conn, conn.begin() as tx:
            conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect((50, 0, 100, 100))} "
                                 "WHERE impact_id = :i AND valid_to IS NULL"),
                         {"i": ids["fill"]})
            tx.rollback()
        with engine.begin() as conn:
            conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect((50, 0, 100, 50))} "
                                 "WHERE impact_id = :i AND valid_to IS NULL"),
                         {"i": ids["fill"]})
        change = next_event(events)
        assert change.why == "change" and change.summary.entries > 0
        assert events.empty()
        with engine.connect() as conn:
            impact = s.permit_rows(conn)["24-001"]["impact_acres"]
            assert round(float(impact), 4) == round(s.acres(50 * 50), 4) == 0.6178
    assert ledger.recompute(db_url).entries == 0  # nothing was left for anyone else


def test_a_big_queue_goes_to_the_workers(engine: sa.Engine, db_url: str) -> None:
    with watching(db_url, big_queue=1) as (_, events):
        next_event(events)
        with engine.begin() as conn:
            site(conn)
            waiting = conn.execute(sa.text(ledger.WAITING)).scalar_one()
        assert waiting > 1
        change = next_event(events)
        assert change.summary.workers == ledger.DEFAULT_WORKERS
        assert change.summary.entries == 4


def test_a_killed_session_is_reopened_and_drains_what_waited(
        engine: sa.Engine, db_url: str) -> None:
    with watching(db_url) as (watch, events):
        next_event(events)
        with engine.begin() as conn:
            assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"),
                                {"p": watch.backend_pid}).scalar_one()
            site(conn)  # committed while the watcher has no session
        lost = next_event(events)
        assert lost.why == "connection lost" and "reconnecting in 0.2 s" in lost.error
        again = next_event(events)
        assert again.why == "start"
        if again.summary.entries == 0:  # reconnected before the edit's commit: heard it
            again = next_event(events)
            assert again.why == "change"
        assert again.summary.entries == 4


def test_a_failing_recompute_is_recorded_and_the_queue_kept(
        engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(
            "ALTER FUNCTION ledger.drain_all(bigint, integer) RENAME TO drain_all_saved"))
        conn.execute(sa.text(
            "CREATE FUNCTION ledger.drain_all(bigint, integer) RETURNS integer "
            "LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'drain broke'; END $$"))
    with watching(db_url, retry_seconds=0.01) as (_, events):
        failed = next_event(events)
        assert failed.why == "start" and "drain broke" in failed.error
        with engine.begin() as conn:
            site(conn)
        failed = next_event(events)
        assert failed.why == "change" and "drain broke" in failed.error
        with engine.begin() as conn:
            run = conn.execute(sa.text(
                "SELECT status, message FROM ledger.run ORDER BY run_id DESC LIMIT 1")).one()
            assert run.status == "failed" and "drain broke" in run.message
            assert conn.execute(sa.text(ledger.WAITING)).scalar_one() > 0
            assert conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar_one() == 0
            conn.execute(sa.text("DROP FUNCTION ledger.drain_all(bigint, integer)"))
            conn.execute(sa.text("ALTER FUNCTION ledger.drain_all_saved(bigint, integer) "
                                 "RENAME TO drain_all"))
    assert ledger.recompute(db_url).entries == 4


def test_a_new_day_is_a_recompute_of_its_own(db_url: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Dated facts take effect by the database's date with no row written (sql/175): when it
    changes, the watcher recomputes although nobody notified it."""
    import datetime as dt

    from rulem_db.ledger import watch as watch_module

    days = iter([dt.date(2026, 12, 1)] + [dt.date(2026, 12, 2)] * 1000)
    monkeypatch.setattr(watch_module, "DATE_SECONDS", 0.0)
    monkeypatch.setattr(LedgerWatch, "_today", staticmethod(lambda conn: next(days)))
    with watching(db_url) as (_, events):
        assert next_event(events).why == "start"
        day = next_event(events)
        assert day.why == "new day" and day.summary.entries == 0
        assert day.summary.mode == "queue"


def test_the_nightly_reports_what_the_watcher_posted_between_runs(
        engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """The nightly stays the run of record: what the service posted since the previous night
    shows in its comparison, its headline and its summary, though the night posts nothing.
    A-1 balance: credit 4.9421 - required 2.4711 = +2.4710 as published; after the fill shrinks to
    (50,0)-(100,100), 5,000 m^2 = 1.2355 ac: 4.9421 - 1.2355 = +3.7066."""
    from decimal import Decimal

    from flows import nightly

    def night() -> nightly.RunSummary:
        with nightly.database(db_url):
            return nightly.nightly_reconciliation.fn(reports=str(tmp_path / "reports"),
                                                     started_via="command")

    with engine.begin() as conn:
        ids = site(conn)
    first = night()
    with watching(db_url) as (_, events):
        assert next_event(events).summary.entries == 0  # the night drained the queue
        with engine.begin() as conn:
            conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect((50, 0, 100, 100))} "
                                 "WHERE impact_id = :i AND valid_to IS NULL"),
                         {"i": ids["fill"]})
        posted = next_event(events).summary.entries
    assert posted > 0
    second = night()
    assert (second.changed, second.entries_posted, second.entries_posted_between,
            second.previous_run_id) == (True, 0, posted, first.run_id)
    with engine.connect() as conn:
        (a1,) = conn.execute(sa.text("SELECT * FROM ops.run_parcel_change(:r)"),
                             {"r": second.run_id}).mappings().all()
    assert (a1["pin"], a1["balance_before"], a1["balance_after"]) == (
        "A-1", Decimal("2.4710"), Decimal("3.7066"))  # 4.9421 - 2.4711, as published
    assert f"ledger: 0 entries posted (and {posted} since run {first.run_id} by other " in (
        "\n".join(second.lines()))
    assert (f"0 ledger entries posted (and {posted} by other recomputes in between"
            in second.report_path.read_text())


def test_an_unmigrated_database_is_refused_in_one_line(db_url: str) -> None:
    with sa.create_engine(db_url).begin() as conn:
        conn.execute(sa.text("DROP TRIGGER ledger_queue_notify ON ledger.change_queue"))
    with pytest.raises(RuntimeError, match="run rulem-db db migrate first"):
        LedgerWatch(db_url, retry_seconds=0.01).run()


def test_the_command_recomputes_and_stops_on_sigterm(engine: sa.Engine, db_url: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulem_cli.main", "--db", db_url, "watch", "--debounce", "0"],
        env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout],
                         daemon=True).start()

        def line() -> str:
            try:
                return lines.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"rulem-db watch said nothing in {WAIT:g} s: "
                                     f"{proc.poll()=}") from None

        assert line().startswith("rulem-db watch: recomputing the ledger on each change")
        assert " start: run " in line()
        with engine.begin() as conn:
            site(conn)
        assert "change: run" in (said := line()) and "4 entries posted (4 new" in said
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(WAIT) == 0, proc.stderr.read()
        assert line() == "rulem-db watch: stopped\n"
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
