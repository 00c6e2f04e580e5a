"""Effective dates beside posting times (revision 0019, docs/ledger.md 4a).

Every entry carries the date its fact took effect (`effective_on`) and the moment it was
posted (`posted_at`). `pub.*_balance_as_of(date, recorded_at)` go by the first, optionally as
recorded at a past moment; the annual statement goes by effective year. Figures by hand on the
metre grid: a 100 m square = 10,000 m^2 = 2.4711 ac; 100 m x 50 m = 1.2355 ac.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_cli import main as cli
from rulem_db import ledger

SQUARE = Decimal("2.4711")
HALF = Decimal("1.2355")


def plan_as_of(conn: sa.Connection, on: str, recorded_at: dt.datetime | None = None) -> dict:
    return dict(conn.execute(sa.text(
        "SELECT * FROM pub.plan_balance_as_of(CAST(:on AS date), "
        "coalesce(CAST(:at AS timestamptz), 'infinity'))"),
        {"on": on, "at": recorded_at}).mappings().one())


def entries(conn: sa.Connection, measure: str) -> list[dict]:
    return [dict(r) for r in conn.execute(sa.text(
        "SELECT entry_id, acres, effective_on, reverses_entry_id, reason "
        "FROM pub.ledger_entry WHERE measure = :m ORDER BY entry_id"), {"m": measure}).mappings()]


@pytest.fixture
def decided_2024(engine: sa.Engine) -> int:
    """24-001 decided 2024-03-01, filling a 100 m square of W1 on P-1: loaded today."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        p = s.permit(conn, "24-001", decided_on="2024-03-01", pins=["P-1"])
        s.impact(conn, p, "fill", (0, 0, 100, 100), "fill-1")
    return p


def test_a_permit_decided_in_2024_and_loaded_today_is_in_2024(engine, db_url, decided_2024,
                                                               tmp_path, capsys):
    with engine.connect() as conn:
        before_load = s.clock(conn)
    ledger.recompute(db_url)
    with engine.connect() as conn:
        required = entries(conn, "required")
        assert [(e["acres"], e["effective_on"]) for e in required] == [
            (SQUARE, dt.date(2024, 3, 1))]
        assert entries(conn, "impact")[0]["effective_on"] == dt.date(2024, 3, 1)
        end_2024 = plan_as_of(conn, "2024-12-31")
        assert (end_2024["required_acres"], end_2024["balance_acres"], end_2024["status"]) == (
            SQUARE, -SQUARE, "deficit")
        assert plan_as_of(conn, "2024-02-29")["status"] == "none"   # not yet decided
        # As recorded before it was loaded, the end of 2024 showed nothing.
        recorded_before = plan_as_of(conn, "2024-12-31", before_load)
        assert (recorded_before["required_acres"], recorded_before["status"]) == (0, "none")
        permit = conn.execute(sa.text(
            "SELECT required_acres, balance_acres FROM pub.permit_balance_as_of('2024-12-31') "
            "WHERE permit_no = '24-001'")).one()
        assert tuple(permit) == (SQUARE, -SQUARE)
        parcel = conn.execute(sa.text(
            "SELECT required_acres FROM pub.parcel_balance_as_of('2024-12-31') "
            "WHERE pin = 'P-1'")).scalar_one()
        assert parcel == SQUARE
        # the posting-time view is unchanged: nothing was posted before the load
        assert s.plan_row(conn, at=before_load)["status"] == "none"
    # The 2024 statement shows it, as a prior-period adjustment (posted after 2024 ended).
    code = cli.main(["--db", db_url, "statement", "--year", "2024", "--out", str(tmp_path),
                     "--format", "csv"])
    assert code == 0
    printed = {r["line"]: r for r in csv.DictReader(capsys.readouterr().out.splitlines())}
    closing = next(r for k, r in printed.items() if k.startswith("Closing"))
    assert Decimal(closing["balance_acres"]) == -SQUARE
    with (tmp_path / "statement-acd-53-62-2024.csv").open() as f:
        lines = {r["line_code"]: r for r in csv.DictReader(f)}
    assert Decimal(lines["adjustment"]["debit_acres"]) == SQUARE
    assert Decimal(lines["adjustment"]["memo_acres"]) == SQUARE     # the impact, memo
    assert Decimal(lines["required"]["debit_acres"]) == 0
    assert Decimal(lines["opening_balance"]["balance_acres"]) == 0
    with engine.connect() as conn:
        year_2026 = {r["line_code"]: r for r in conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement('acd-53-62', 2026)")).mappings()}
    assert year_2026["opening_balance"]["balance_acres"] == -SQUARE
    assert year_2026["required"]["entry_count"] == 0


def test_a_correction_keeps_the_date_and_the_record_keeps_what_was_known(engine, db_url,
                                                                          decided_2024):
    """docs/ledger.md 4a's worked example: loaded (2.4711 ac), then the fill corrected to
    100 m x 50 m (1.2355 ac). As of 2024-12-31: before the load nothing, after it 2.4711, now
    1.2355; the reversal carries the date of the entry it reverses."""
    with engine.connect() as conn:
        before_load = s.clock(conn)
    ledger.recompute(db_url)
    with engine.connect() as conn:
        after_load = s.clock(conn)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "UPDATE core.impact SET geom = ST_Multi(ST_MakeEnvelope(0, 0, 100, 50, 26915)) "
            "WHERE valid_to IS NULL"))
    assert ledger.recompute(db_url).reversals > 0
    with engine.connect() as conn:
        assert plan_as_of(conn, "2024-12-31", before_load)["required_acres"] == 0
        assert plan_as_of(conn, "2024-12-31", after_load)["required_acres"] == SQUARE
        assert plan_as_of(conn, "2024-12-31")["required_acres"] == HALF
        assert plan_as_of(conn, "2024-02-29")["required_acres"] == 0
        required = entries(conn, "required")
        assert [(e["acres"], e["effective_on"], e["reverses_entry_id"]) for e in required] == [
            (SQUARE, dt.date(2024, 3, 1), None),
            (-SQUARE, dt.date(2024, 3, 1), required[0]["entry_id"]),
            (HALF, dt.date(2024, 3, 1), None)]
    assert ledger.recompute(db_url, all=True).entries == 0


def test_credit_takes_effect_on_each_features_status_date(engine, db_url, decided_2024):
    """Two certified 100 m x 50 m basins of 24-001 (status dates 2025-05-01 and 2025-08-01)
    make a credit line each, 1.2355 ac from 2025-05-01 and as much again from 2025-08-01
    (published 1.2356: the owner's figure by each date rounded, 1.2355 then 2.4711); a
    proposed 100 m basin (2024-06-01) its own line dated then (docs/ledger.md section 4a)."""
    with engine.begin() as conn:
        s.replacement(conn, decided_2024, (400, 0, 500, 50), "r1", status_on="2025-05-01")
        s.replacement(conn, decided_2024, (400, 100, 500, 150), "r2", status_on="2025-08-01")
        s.replacement(conn, decided_2024, (400, 200, 500, 300), "r3", status="proposed",
                      status_on="2024-06-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert [(e["acres"], e["effective_on"]) for e in entries(conn, "credit")] == [
            (HALF, dt.date(2025, 5, 1)), (SQUARE - HALF, dt.date(2025, 8, 1))]
        assert [(e["acres"], e["effective_on"]) for e in entries(conn, "credit_hosted")] == [
            (HALF, dt.date(2025, 5, 1)), (SQUARE - HALF, dt.date(2025, 8, 1))]
        assert [(e["acres"], e["effective_on"]) for e in entries(conn, "credit_proposed")] == [
            (SQUARE, dt.date(2024, 6, 1))]
        end_2024 = plan_as_of(conn, "2024-12-31")
        assert (end_2024["required_acres"], end_2024["credit_acres"],
                end_2024["credit_proposed_acres"], end_2024["balance_acres"]) == (
            SQUARE, 0, SQUARE, -SQUARE)
        assert plan_as_of(conn, "2025-07-31")["credit_acres"] == HALF
        mid_2025 = plan_as_of(conn, "2025-08-01")
        assert (mid_2025["credit_acres"], mid_2025["balance_acres"]) == (SQUARE, 0)


def test_a_status_date_moving_re_dates_the_line_and_a_missing_one_falls_back(engine, db_url,
                                                                            decided_2024):
    with engine.begin() as conn:
        s.replacement(conn, decided_2024, (400, 0, 500, 100), "r1")   # certified, no date
    ledger.recompute(db_url)
    with engine.connect() as conn:
        # no status date on record: the permit's decision date
        assert entries(conn, "credit")[0]["effective_on"] == dt.date(2024, 3, 1)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.replacement SET status_on = '2025-02-01' "
                             "WHERE valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        credit = entries(conn, "credit")
        assert [(e["acres"], e["effective_on"]) for e in credit] == [
            (SQUARE, dt.date(2024, 3, 1)), (-SQUARE, dt.date(2024, 3, 1)),
            (SQUARE, dt.date(2025, 2, 1))]
        assert "effective date 2024-03-01 -> 2025-02-01" in credit[2]["reason"]
        assert plan_as_of(conn, "2024-12-31")["credit_acres"] == 0
        assert plan_as_of(conn, "2025-02-01")["credit_acres"] == SQUARE
    assert ledger.recompute(db_url, all=True).entries == 0


def test_an_undecided_permit_is_dated_when_posted_then_when_decided(engine, db_url):
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        p = s.permit(conn, "26-001", decided_on=None, status="applied", pins=["P-1"])
        s.impact(conn, p, "fill", (0, 0, 100, 100), "fill-1")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        today = conn.execute(sa.text("SELECT current_date")).scalar_one()
        assert entries(conn, "required")[0]["effective_on"] == today
        assert plan_as_of(conn, today.isoformat())["required_acres"] == SQUARE
        assert plan_as_of(conn, "2024-12-31")["required_acres"] == 0
        before_decision = s.clock(conn)
    # a pending permit's date floats with no row written: nothing re-posted for it
    assert ledger.recompute(db_url, all=True).entries == 0
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.permit SET status = 'approved', "
                             "decided_on = '2024-09-01' WHERE valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        required = entries(conn, "required")
        assert [(e["acres"], e["effective_on"]) for e in required] == [
            (SQUARE, today), (-SQUARE, today), (SQUARE, dt.date(2024, 9, 1))]
        assert plan_as_of(conn, "2024-12-31")["required_acres"] == SQUARE
        assert plan_as_of(conn, "2024-12-31", before_decision)["required_acres"] == 0
        assert plan_as_of(conn, "2024-08-31")["required_acres"] == 0


def test_transfers_and_district_projects_take_their_own_dates(engine, db_url):
    """A District basin certified 2023-05-01 (100 m square, 2.4711 ac) gives 1.0 ac to 24-001
    on 2024-06-01."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        p = s.permit(conn, "24-001", decided_on="2024-03-01", pins=["P-1"])
        s.replacement(conn, None, (400, 0, 500, 100), "d1", district_project="Pond",
                      status_on="2023-05-01")
        conn.execute(sa.text(
            "INSERT INTO core.credit_transfer (plan_area_id, from_district_project, "
            "to_permit_id, acres, transferred_on, source_fid) "
            "VALUES (1, 'Pond', :p, 1.0, '2024-06-01', 't1')"), {"p": p})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        dates = {(r.measure, r.owner): r.effective_on for r in conn.execute(sa.text(
            "SELECT measure, coalesce(permit_no, district_project) AS owner, effective_on "
            "FROM pub.ledger_entry"))}
        assert dates == {("credit", "Pond"): dt.date(2023, 5, 1),
                         ("credit_hosted", "Pond"): dt.date(2023, 5, 1),
                         ("transfer_out", "Pond"): dt.date(2024, 6, 1),
                         ("transfer_in", "24-001"): dt.date(2024, 6, 1)}
        end_2023 = plan_as_of(conn, "2023-12-31")
        assert (end_2023["credit_acres"], end_2023["district_project_credit_acres"]) == (
            SQUARE, SQUARE)
        assert plan_as_of(conn, "2024-05-31")["credit_acres"] == SQUARE
        permit_mid_2024 = conn.execute(sa.text(
            "SELECT credit_acres, transfer_in_acres FROM pub.permit_balance_as_of(:d) "
            "WHERE permit_no = '24-001'"), {"d": "2024-06-01"}).one()
        assert tuple(permit_mid_2024) == (Decimal("1.0000"), Decimal("1.0000"))


def test_an_entry_inserted_without_a_date_gets_its_reversed_entry_s(engine):
    with engine.begin() as conn:
        run = conn.execute(sa.text("INSERT INTO ledger.run (mode, status) "
                                   "VALUES ('all', 'done') RETURNING run_id")).scalar_one()
        first = conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, district_project, measure, "
            "entry_kind, acres, reason, inputs, effective_on) VALUES (:r, 1, 'Pond', 'credit', "
            "'credit', 1, 'test', '{}', '2022-02-02') RETURNING entry_id"), {"r": run}
        ).scalar_one()
        rows = conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, district_project, measure, "
            "entry_kind, acres, reason, inputs, reverses_entry_id) VALUES "
            "(:r, 1, 'Pond', 'credit', 'credit', -1, 'test', '{}', :f), "
            "(:r, 1, 'Pond', 'credit', 'credit', 2, 'test', '{}', NULL) "
            "RETURNING effective_on, current_date AS today"), {"r": run, "f": first}).all()
    assert rows[0].effective_on == dt.date(2022, 2, 2)
    assert rows[1].effective_on == rows[1].today
