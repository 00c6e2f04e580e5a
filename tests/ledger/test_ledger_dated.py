"""Days passing (sql/175): an undecided permit is measured as of today, so a delineation
approved with a later date changes its figures on that date with no row written. A recompute
of the queue asks ledger.enqueue_dated to queue those owners, and only when such a date fell
since the last completed recompute: that is what lets the nightly skip the full recompute."""

from __future__ import annotations

import datetime as dt

import ledger_scenarios as s
import sqlalchemy as sa

from rulem_db import ledger


def _today(engine: sa.Engine) -> dt.date:
    """The database's date, which the recomputes date their runs by: read when a test starts
    (a date read when the module is imported is a day behind in a run that crosses
    midnight)."""
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT current_date")).scalar_one()


def _site(engine: sa.Engine, today: dt.date) -> dict[str, int]:
    """Undecided 25-001 fills 100 m x 100 m on P-1 where D-2 (approved in 10 days) maps
    wetland W2; decided 25-002 fills the same kind of place; a District project without a
    status date replaces on P-2."""
    with engine.begin() as conn:
        s.plan_boundary(conn)
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        s.parcel(conn, "P-2", (500, 0, 1000, 500))
        d2 = s.delineation(conn, "D-2", (0, 0, 500, 500),
                           (today + dt.timedelta(days=10)).isoformat())
        s.wetland(conn, d2, "W2", (0, 0, 200, 200))
        undecided = s.permit(conn, "25-001", decided_on=None, status="under_review")
        decided = s.permit(conn, "25-002")
        s.impact(conn, undecided, "fill", (0, 0, 100, 100), "i1")
        s.impact(conn, decided, "fill", (100, 100, 200, 200), "i2")
        s.replacement(conn, None, (600, 0, 700, 100), "dp1", district_project="DP-1",
                      status="proposed")
    return {"undecided": undecided, "decided": decided}


def _queued(engine: sa.Engine, on: dt.date) -> list[sa.Row]:
    """What a recompute starting on `on` would queue for the date (rolled back)."""
    with engine.connect() as conn, conn.begin() as tx:
        run = conn.execute(sa.text("SELECT ledger.start_run('queue')")).scalar_one()
        n = conn.execute(sa.text("SELECT ledger.enqueue_dated(:r, :on)"),
                         {"r": run, "on": on}).scalar_one()
        rows = conn.execute(sa.text(
            "SELECT permit_id, district_project, layer, reason FROM ledger.change_queue "
            "WHERE layer = 'date' ORDER BY permit_id NULLS LAST")).all()
        tx.rollback()
    assert n == len(rows)
    return rows


def test_a_later_approval_queues_the_owners_measured_as_of_today(db_url, engine) -> None:
    today = _today(engine)
    ids = _site(engine, today)
    ledger.recompute(db_url, all=True)  # the last completed recompute: today
    assert _queued(engine, today) == []  # nothing dated between the last run and today
    assert _queued(engine, today + dt.timedelta(days=9)) == []  # D-2 not yet in effect
    rows = _queued(engine, today + dt.timedelta(days=10))
    assert [(r.permit_id, r.district_project) for r in rows] == [(ids["undecided"], None),
                                                                 (None, "DP-1")]
    day = (today + dt.timedelta(days=10)).isoformat()
    assert rows[0].reason == f"measured as of today ({day}): 1 delineation(s) approved as of {day}"


def test_a_parameter_taking_effect_queues_them_too(db_url, engine) -> None:
    today = _today(engine)
    ids = _site(engine, today)
    ledger.recompute(db_url, all=True)
    on = today + dt.timedelta(days=3)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.parameter (plan_area_id, name, value_num, unit, rule_ref, "
            "effective_on, note) SELECT plan_area_id, name, value_num, unit, rule_ref, :on, "
            "'test: the same value again' FROM core.parameter "
            "WHERE name = 'replacement_ratio' ORDER BY effective_on DESC LIMIT 1"), {"on": on})
    ledger.recompute(db_url)  # the trigger queued every owner for the new row: drain it
    rows = _queued(engine, on)
    assert {r.permit_id for r in rows} == {ids["undecided"], None}
    assert "1 parameter(s) effective" in rows[0].reason


def test_the_queue_recompute_catches_up_with_the_date(db_url, engine) -> None:
    """End to end with today's date: a recompute whose last completed run was before a
    dated fact took effect recomputes the undecided permit, and its figure moves."""
    today = _today(engine)
    ids = _site(engine, today)
    with engine.begin() as conn:  # D-2 in effect since yesterday
        conn.execute(sa.text("UPDATE core.delineation SET approved_on = :d WHERE "
                             "delineation_no = 'D-2' AND valid_to IS NULL"),
                     {"d": today - dt.timedelta(days=1)})
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        required = s.permit_rows(conn)["25-001"]["required_acres"]
    assert round(float(required), 4) == 2.4711  # the fill lies on W2
    with engine.begin() as conn:  # as if the last completed recompute were 3 days ago
        conn.execute(sa.text("UPDATE ledger.run SET started_at = started_at - interval '3 days'"))
    summary = ledger.recompute(db_url)
    assert summary.owners == 2 and summary.entries == 0  # queued again; nothing moved
    with engine.connect() as conn:
        reasons = conn.execute(sa.text(
            "SELECT permit_id FROM ledger.change_queue WHERE layer = 'date' "
            "AND processed_run_id = :r"), {"r": summary.run_id}).scalars().all()
    assert ids["undecided"] in reasons and ids["decided"] not in reasons
