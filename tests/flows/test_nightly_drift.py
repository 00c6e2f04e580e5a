"""The nightly refuses to check and report on ledger totals that differ from the entries.

The kept totals (ledger.plan_total, sql/165) are what the balance views and the report read. A
total changed behind the posting trigger's back (here: an UPDATE by the superuser) must stop
the night after the ledger step, with one line that names the cure, before the checks run and
before a report is written."""

from __future__ import annotations

from decimal import Decimal

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from flows import nightly

at = fx.at
LINE = ("ledger totals differ from the entries in 1 figures (ledger.totals_drift()); "
        "run rulem-db recompute --all")


def _site(engine: sa.Engine) -> None:
    """One wetland, one parcel, permit 25-001 filling 100 m x 100 m (2.4711 ac required)."""
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        d = s.delineation(conn, "D-1", at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", at(0, 0, 300, 300))
        s.parcel(conn, "P-1", at(0, 0, 500, 500))
        permit = s.permit(conn, "25-001", pins=["P-1"])
        s.impact(conn, permit, "fill", at(0, 0, 100, 100), "i1")


def _state(conn: sa.Connection) -> dict[str, object]:
    return {
        "entries": conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar_one(),
        "check_runs": conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar_one(),
        "findings": conn.execute(sa.text("SELECT count(*) FROM checks.finding")).scalar_one(),
        "plan_total": conn.execute(sa.text(
            "SELECT required, entries FROM ledger.plan_total")).all(),
        "done_runs": conn.execute(sa.text(
            "SELECT count(*) FROM ops.run WHERE status <> 'failed'")).scalar_one(),
    }


def test_a_corrupted_total_fails_the_night_before_the_checks(db_url, engine, tmp_path):
    _site(engine)
    with nightly.database(db_url):
        first = nightly.nightly_reconciliation.fn(reports=str(tmp_path / "first"),
                                                  started_via="command")
    assert round(first.plan_required_acres, 4) == 2.4711
    with engine.begin() as conn:  # superuser, straight at the table: no trigger adds to it
        conn.execute(sa.text("UPDATE ledger.plan_total SET required = required + 1"))
        assert conn.execute(sa.text(
            "SELECT measure, stored - from_entries FROM ledger.totals_drift()")).all() == [
            ("required", Decimal("1"))]
        before = _state(conn)

    reports = tmp_path / "second"
    with nightly.database(db_url), pytest.raises(Exception) as failed:
        nightly.nightly_reconciliation.fn(reports=str(reports), started_via="command")
    assert str(failed.value) == LINE
    assert not reports.exists()  # no report
    with engine.connect() as conn:
        assert _state(conn) == before  # nothing posted, checked or reported
        status, message = conn.execute(sa.text(
            "SELECT status, message FROM ops.run ORDER BY run_id DESC LIMIT 1")).one()
    assert (status, message) == ("failed", LINE)


def test_after_a_posting_night_every_level_is_checked(db_url, engine, tmp_path):
    """A parcel's total is not a plan-wide figure: it is checked on nights that post."""
    _site(engine)
    with nightly.database(db_url):
        nightly.nightly_reconciliation.fn(reports=str(tmp_path / "first"), started_via="command")
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE ledger.parcel_total SET required = required + 1"))
        permit = conn.execute(sa.text("SELECT permit_id FROM core.permit")).scalar_one()
        s.impact(conn, permit, "fill", at(100, 0, 200, 100), "i2")  # 2.4711 ac more
    with nightly.database(db_url), pytest.raises(Exception) as failed:
        nightly.nightly_reconciliation.fn(reports=str(tmp_path / "second"),
                                          started_via="command")
    assert str(failed.value) == LINE
