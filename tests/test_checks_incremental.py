"""Incremental check runs (sql/285): the nightly evaluates only the permits whose inputs changed
and carries the others over, and its results are exactly those of a full run.

Each step commits on its own, as the nightly's steps do: a change is found by the time its
transaction wrote it, so a change and a run in one transaction would prove nothing."""

from __future__ import annotations

import datetime as dt

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_db import checks

FAR = 5_000.0  # metres between the two sites: far beyond checks.recheck_reach_m()


def _plan(engine: sa.Engine) -> dict[str, int]:
    """Two permits far apart. 25-001 fills 100 m x 100 m of wetland W1 on P-1 (a Rule M
    permit is required: 2(a) passes) and names parcels P-1 and P-2; 25-002 has a small fill
    on upland of P-3, 5 km away (2(a) fails: no trigger)."""
    with engine.begin() as conn:
        s.plan_boundary(conn, (-1000, -1000, FAR + 2000, 2000))
        d = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        w1 = s.wetland(conn, d, "W1", (0, 0, 300, 300))
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        s.parcel(conn, "P-2", (500, 0, 1000, 500))
        s.parcel(conn, "P-3", (FAR, 0, FAR + 500, 500))
        p1 = s.permit(conn, "25-001", pins=["P-1", "P-2"])
        p2 = s.permit(conn, "25-002", pins=["P-3"])
        s.impact(conn, p1, "fill", (0, 0, 100, 100), "i1")
        s.impact(conn, p2, "fill", (FAR + 10, 10, FAR + 20, 20), "i2")
    return {"p1": p1, "p2": p2, "w1": w1, "d": d}


def _full(engine: sa.Engine) -> int:
    with engine.begin() as conn:
        return conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()


def _since(engine: sa.Engine, base: int) -> int:
    with engine.begin() as conn:
        return conn.execute(sa.text("SELECT checks.run_checks_since(1, :b)"),
                            {"b": base}).scalar_one()


def _run(engine: sa.Engine, run_id: int) -> sa.Row:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT * FROM checks.run WHERE run_id = :r"),
                            {"r": run_id}).one()


def _results(engine: sa.Engine, run_id: int) -> tuple[set, set]:
    """What a run says, without its ids: outcomes and findings (geometry as text)."""
    with engine.connect() as conn:
        outcomes = set(conn.execute(sa.text(
            "SELECT permit_id, paragraph, check_code, outcome, measured_value, limit_value, "
            "evaluated_count, finding_count, message FROM checks.outcome WHERE run_id = :r"),
            {"r": run_id}).all())
        findings = set(conn.execute(sa.text(
            "SELECT permit_id, paragraph, check_code, severity, parcel_id, feature_id, "
            "measured_value, message, ST_AsText(geom) FROM checks.finding WHERE run_id = :r"),
            {"r": run_id}).all())
    return outcomes, findings


def test_nothing_changed_keeps_the_run_and_records_none(engine) -> None:
    _plan(engine)
    base = _full(engine)
    assert _since(engine, base) == base
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar_one() == 1


def test_a_changed_permit_is_evaluated_again_and_the_other_carried_over(engine) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:  # 25-002 adds 100 m x 100 m of new impervious surface
        # (107,639 ft2, more than the 10,000 ft2 of 2(a)(ii)): a Rule M permit is required
        conn.execute(sa.text(
            f"INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, "
            f"geom) VALUES (1, :p, 'proposed', 'roof', "
            f"{s.rect((FAR + 100, 100, FAR + 200, 200))})"), {"p": ids["p2"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert inc != base and row.base_run_id == base
    assert row.rechecked_count == 1  # 25-002 only: 25-001 is 5 km away and names no P-3
    assert set(row.rechecked_why) == {str(ids["p2"])}
    assert row.permit_count == 2
    full = _full(engine)  # the same inputs, every permit evaluated
    assert _results(engine, inc) == _results(engine, full)
    with engine.connect() as conn:  # 2(a) of 25-002 went from "not required" to "required"
        before, after = (conn.execute(sa.text(
            "SELECT outcome FROM checks.outcome WHERE run_id = :r AND permit_id = :p "
            "AND check_code = 'applicability'"), {"r": r, "p": ids["p2"]}).scalar_one()
            for r in (base, inc))
    assert (before, after) == ("fail", "pass")


def test_carried_over_findings_show_in_pub_finding(engine) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        s.impact(conn, ids["p1"], "fill", (100, 0, 150, 50), "i4")
    inc = _since(engine, base)
    with engine.connect() as conn:
        shown = conn.execute(sa.text(
            "SELECT DISTINCT run_id FROM pub.finding WHERE plan_area_id = 1")).scalars().all()
        carried = conn.execute(sa.text(
            "SELECT count(*) FROM pub.finding WHERE permit_id = :p"),
            {"p": ids["p2"]}).scalar_one()
        before = conn.execute(sa.text(
            "SELECT count(*) FROM checks.finding WHERE run_id = :r AND permit_id = :p"),
            {"r": base, "p": ids["p2"]}).scalar_one()
    assert shown == [inc]
    assert carried == before >= 1  # 25-002's "no 2(a) trigger" warning, carried over


def test_a_wetland_change_rechecks_every_permit_that_names_parcels(engine) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:  # W1 grows: connectivity to the central wetland may change
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((0, 0, 350, 300))} "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": ids["w1"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id is None  # both permits name parcels: more than half, a full run
    assert "2 of 2 permits changed" in row.rechecked_why["all"]


def test_a_plan_boundary_change_makes_a_full_run(engine) -> None:
    _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.cwmp_area SET geom = "
                             f"{s.rect((-1000, -1000, FAR + 3000, 2000))} "
                             "WHERE valid_to IS NULL"))
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id is None and row.rechecked_count == 2
    assert "core.cwmp_area" in row.rechecked_why["all"]


def test_a_permit_checked_on_its_own_since_is_evaluated_again(engine) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT checks.run_checks(1, :p)"), {"p": ids["p1"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base and set(row.rechecked_why) == {str(ids["p1"])}


def test_days_passing_recheck_the_permits_measured_as_of_today(engine) -> None:
    """An undecided permit is measured as of today: a delineation approved with a later date
    takes effect on that date with no row written, and then the permit must be checked
    again (and only then)."""
    ids = _plan(engine)
    today = dt.date.today()
    with engine.begin() as conn:
        undecided = s.permit(conn, "25-003", decided_on=None, status="under_review",
                             pins=["P-2"])
        s.delineation(conn, "D-3", (FAR, 600, FAR + 100, 700),
                      (today + dt.timedelta(days=10)).isoformat())
    _full(engine)

    def changes(on: dt.date) -> dict[int | None, str]:
        with engine.begin() as conn:
            rows = conn.execute(sa.text(
                "SELECT scope, permit_id, why FROM checks.changes_since(1, "
                "(SELECT changes_since FROM checks.run ORDER BY run_id DESC LIMIT 1) "
                "+ interval '1 second', :after, :on)"),
                {"after": today, "on": on}).all()
        return {r.permit_id: r.why for r in rows}

    assert changes(today + dt.timedelta(days=9)) == {}
    later = changes(today + dt.timedelta(days=10))
    assert set(later) == {undecided, None}  # the undecided permit, and the District projects
    assert "1 delineation(s) approved as of" in later[undecided]
    assert ids["p1"] not in later  # decided: its baseline date is fixed


def test_the_python_api_says_what_was_evaluated(db_url, engine) -> None:
    ids = _plan(engine)
    first = checks.run_checks(db_url, since_last=True)
    assert "every permit evaluated (no earlier run)" in str(first)
    quiet = checks.run_checks(db_url, since_last=True)
    assert quiet.run_id == first.run_id
    assert f"changed since run {first.run_id}: its results stand" in str(quiet)
    with engine.begin() as conn:
        s.impact(conn, ids["p2"], "fill", (FAR + 30, 30, FAR + 40, 40), "i5")
    busy = checks.run_checks(db_url, since_last=True)
    assert busy.run_id != first.run_id and busy.permits == 2
    assert f"1 permit(s) evaluated again, the others' results carried over from run " \
           f"{first.run_id}" in str(busy)


@pytest.mark.parametrize("layer", ["soil", "heritage_area"])
def test_a_local_layer_rechecks_only_the_permits_within_reach(engine, layer) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:  # next to 25-002 only
        if layer == "soil":
            conn.execute(sa.text(
                f"INSERT INTO core.soil (plan_area_id, source_fid, hydrologic_soil_group, "
                f"high_groundwater, contaminated, geom) VALUES (1, 's1', 'A', false, false, "
                f"{s.rect((FAR + 100, 100, FAR + 200, 200))})"))
        else:
            s.heritage(conn, "C", "upland", (FAR + 100, 100, FAR + 200, 200), "h1")
    row = _run(engine, _since(engine, base))
    assert set(row.rechecked_why) == {str(ids["p2"])}
    assert "changed within reach" in row.rechecked_why[str(ids["p2"])]


def test_statements_that_change_no_row_are_not_changes(db_url, engine) -> None:
    """`rulem-db db migrate` seeds the parameters with INSERT ... ON CONFLICT DO NOTHING on
    every run; such a statement writes nothing and must not force a full check run."""
    from demo import DEMO_PLAN_AREA
    from rulem_db import db

    _plan(engine)
    base = _full(engine)
    db.migrate(db_url, plan_area=DEMO_PLAN_AREA)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.soil SET contaminated = true WHERE false"))
    assert _since(engine, base) == base
