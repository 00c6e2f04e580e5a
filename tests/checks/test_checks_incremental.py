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
            "evaluated_count, finding_count, message FROM checks.run_outcome(:r)"),
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
            "SELECT outcome FROM checks.run_outcome(:r) WHERE permit_id = :p "
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


def _compliance(engine: sa.Engine) -> set[tuple]:
    with engine.connect() as conn:
        return set(conn.execute(sa.text(
            "SELECT run_id, permit_id, paragraph, check_code, outcome, measured_value, "
            "limit_value, evaluated_count, finding_count, message, open_errors "
            "FROM pub.permit_compliance")).all())


def test_carried_over_outcomes_are_referred_to_not_copied(engine) -> None:
    """A run covers the permits it carries over with the outcomes of the run that last
    evaluated them (checks.run_permit), through any number of incremental runs; it writes
    outcomes only for the permits it evaluates, and pub.permit_compliance shows the same rows
    as when every run copied them: the latest run's id, the outcomes as evaluated."""
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        s.impact(conn, ids["p1"], "fill", (100, 0, 150, 50), "i4")
    first = _since(engine, base)
    with engine.begin() as conn:
        s.impact(conn, ids["p1"], "fill", (150, 0, 200, 50), "i5")
    second = _since(engine, first)
    with engine.connect() as conn:
        written = dict(conn.execute(sa.text(
            "SELECT run_id, array_agg(DISTINCT permit_id) FROM checks.outcome "
            "GROUP BY run_id")).all())
        covered = conn.execute(sa.text(
            "SELECT permit_id, outcome_run_id FROM checks.run_permit WHERE run_id = :r "
            "ORDER BY permit_id"), {"r": second}).all()
        counts = conn.execute(sa.text(
            "SELECT permit_count, rechecked_count FROM checks.run WHERE run_id = :r"),
            {"r": second}).one()
    assert written == {base: sorted([ids["p1"], ids["p2"]]), first: [ids["p1"]],
                       second: [ids["p1"]]}
    assert covered == [(ids["p1"], second), (ids["p2"], base)]  # 25-002: still the base's
    assert tuple(counts) == (2, 1)
    shown = _compliance(engine)
    assert {r.run_id for r in shown} == {second}
    assert _results(engine, second)[0] == _results(engine, _full(engine))[0]
    # the full run just made shows the same rows under its own id
    assert {r[1:] for r in _compliance(engine)} == {r[1:] for r in shown}


def test_a_wetland_change_rechecks_the_permits_near_it_only(engine) -> None:
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:  # W1 grows, under 25-001's fill and beside its parcels
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((0, 0, 350, 300))} "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": ids["w1"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base  # 25-002 is 5 km away: carried over
    assert set(row.rechecked_why) == {str(ids["p1"])}
    assert "wetland changed within reach of its" in row.rechecked_why[str(ids["p1"])]
    assert _results(engine, inc) == _results(engine, _full(engine))


def _far_wetland(engine: sa.Engine, ids: dict[str, int], seeded: bool) -> int:
    """A chain of wetlands from x = 2,000 m (beyond reach of 25-001's site, which ends at
    x = 1,000 m + 305 m) back to x = 1,100 m, within reach; with a central wetland seed at its
    far end or not. Returns the far wetland."""
    with engine.begin() as conn:
        d = s.delineation(conn, "D-2", (1000, 0, 2500, 1000), "2020-01-01")
        for k in range(9):
            s.wetland(conn, d, f"C{k}", (1100 + 100 * k, 100, 1200 + 100 * k, 150))
        far = s.wetland(conn, d, "C9", (2000, 100, 2100, 150))
        if seeded:
            conn.execute(sa.text(
                f"INSERT INTO core.central_wetland_seed (plan_area_id, name, geom) "
                f"VALUES (1, 'seed', {s.rect((2100, 100, 2200, 150))})"))
    return far


@pytest.mark.parametrize("seeded", [False, True])
def test_a_far_wetland_rechecks_a_permit_only_when_its_network_reaches_a_seed(
        engine, seeded: bool) -> None:
    """6(a): cutting the far end off the chain changes which wetland is central, near 25-001,
    only when the chain holds a seed; otherwise nothing near any permit can become central or
    stop being so, and no permit is evaluated again."""
    ids = _plan(engine)
    far = _far_wetland(engine, ids, seeded)
    base = _full(engine)
    with engine.begin() as conn:  # the far wetland shrinks away from its neighbour
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((2010, 100, 2100, 150))} "
                             "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": far})
    inc = _since(engine, base)
    if not seeded:
        assert inc == base  # nothing of any permit's checks changed
        return
    row = _run(engine, inc)
    assert row.base_run_id == base and set(row.rechecked_why) == {str(ids["p1"])}
    assert "connectivity to the central wetland" in row.rechecked_why[str(ids["p1"])]
    assert _results(engine, inc) == _results(engine, _full(engine))


def test_a_parcel_no_permit_names_or_buffers_rechecks_nothing(engine) -> None:
    ids = _plan(engine)
    with engine.begin() as conn:
        other = s.parcel(conn, "P-4", (1000, 0, 1100, 100))  # next to P-2, named by none
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.parcel SET geom = {s.rect((1000, 0, 1110, 100))} "
                             "WHERE parcel_id = :p AND valid_to IS NULL"), {"p": other})
    assert _since(engine, base) == base
    with engine.begin() as conn:  # 25-001's own buffer reaches over it: its lot lines (6(b))
        s.buffer(conn, ids["p1"], (900, 0, 1050, 50), "b1")
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.parcel SET geom = {s.rect((1000, 0, 1100, 100))} "
                             "WHERE parcel_id = :p AND valid_to IS NULL"), {"p": other})
    row = _run(engine, _since(engine, base))
    assert set(row.rechecked_why) == {str(ids["p1"])}
    assert row.rechecked_why[str(ids["p1"])] == "parcel changed within reach of its buffer"


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


def test_a_check_run_is_dated_from_deciding_what_to_evaluate(db_url, engine,
                                                             monkeypatch) -> None:
    """The run's record covers its whole work: deciding which permits a change reaches
    (sql/285, most of a second at state size) comes before the run is opened, in the same
    transaction, and the run's start is the time that began."""
    from rulem_db.checks import parallel

    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        s.impact(conn, ids["p2"], "fill", (FAR + 30, 30, FAR + 40, 40), "i5")
    decided: list[dt.datetime] = []
    todo = parallel._todo

    def timed_todo(conn: sa.Connection, plan_area_id: int, b: int | None) -> parallel.Todo:
        got = todo(conn, plan_area_id, b)
        decided.append(conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one())
        return got

    monkeypatch.setattr(parallel, "_todo", timed_todo)
    busy = checks.run_checks(db_url, since_last=True, workers=2)  # as the nightly runs it
    assert busy.run_id != base and len(decided) == 1
    assert _run(engine, busy.run_id).started_at < decided[0]


@pytest.mark.parametrize("at", ["transaction_timestamp() - interval '1 second'",
                                "clock_timestamp() + interval '1 hour'"])
def test_a_check_run_cannot_be_dated_outside_its_transaction(engine, at) -> None:
    _plan(engine)
    with engine.begin() as conn:
        runs = conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar_one()
    with pytest.raises(sa.exc.DataError, match="must lie within the transaction"), \
            engine.begin() as conn:
        conn.execute(sa.text(f"SELECT checks.start_run(1, NULL, NULL, NULL, {at})"))
    with engine.begin() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar_one() == runs


@pytest.mark.parametrize("layer", ["soil", "heritage_area"])
@pytest.mark.parametrize("under", [True, False])
def test_a_local_layer_rechecks_only_the_permits_whose_features_it_meets(
        engine, layer: str, under: bool) -> None:
    """Soils (5(c)) and heritage areas (7(c)) are read where they meet a permit's own
    features: one over 25-002's fill rechecks it, one 100 m beside it rechecks nothing."""
    ids = _plan(engine)
    base = _full(engine)
    box = (FAR + 5, 5, FAR + 25, 25) if under else (FAR + 100, 100, FAR + 200, 200)
    with engine.begin() as conn:
        if layer == "soil":
            conn.execute(sa.text(
                f"INSERT INTO core.soil (plan_area_id, source_fid, hydrologic_soil_group, "
                f"high_groundwater, contaminated, geom) VALUES (1, 's1', 'A', false, false, "
                f"{s.rect(box)})"))
        else:
            s.heritage(conn, "C", "upland", box, "h1")
    inc = _since(engine, base)
    if not under:
        assert inc == base
        return
    row = _run(engine, inc)
    assert set(row.rechecked_why) == {str(ids["p2"])}
    assert row.rechecked_why[str(ids["p2"])] == f"{layer} changed within reach of its impact"


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


def _far_fills(conn: sa.Connection) -> None:
    """Four permits with fills on upland far away: they keep a run that evaluates three
    permits again incremental (more than half of the permits makes a full run)."""
    for i in range(4):
        far = s.permit(conn, f"25-11{i}")
        s.impact(conn, far, "fill", (FAR + 100 + 20 * i, 100, FAR + 110 + 20 * i, 110),
                 f"far{i}")


def _charged_earlier_plan(engine: sa.Engine) -> dict[str, int]:
    """Three permits whose fills overlap on wetland W2, 2.5 km from the others: E (25-101)
    decided 2021 fills x 2550-2650, F (25-102) decided 2022 fills x 2520-2600, P (25-103)
    decided 2023 fills x 2500-2600 (all y 0-100). Ground is charged to the permit decided
    first (7(b)): 2,000 m^2 of P's 10,000 are its own; its findings name the ground of each
    earlier permit it meets (E's 5,000 m^2 of it, F's 8,000, as each was charged). Four
    permits with fills on upland far away keep any run of three permits incremental (more
    than half makes a full run)."""
    ids = _plan(engine)
    with engine.begin() as conn:
        d = s.delineation(conn, "D-2", (2000, 0, 3000, 1000), "2020-01-01")
        s.wetland(conn, d, "W2", (2000, 0, 3000, 1000))
        for key, no, decided, box in (("E", "25-101", "2021-06-01", (2550, 0, 2650, 100)),
                                      ("F", "25-102", "2022-06-01", (2520, 0, 2600, 100)),
                                      ("P", "25-103", "2023-06-01", (2500, 0, 2600, 100))):
            ids[key] = s.permit(conn, no, decided_on=decided)
            ids["i" + key] = s.impact(conn, ids[key], "fill", box, "i" + no)
        _far_fills(conn)
    return ids


def _charged_to(engine: sa.Engine, run_id: int, permit_id: int) -> dict[str, str]:
    """A run's 7(b) charged-earlier findings of a permit: acres by the message's words."""
    with engine.connect() as conn:
        return dict(conn.execute(sa.text(
            "SELECT substring(message FROM 'charged to permit (.*)$'), measured_value::text "
            "FROM checks.finding WHERE run_id = :r AND permit_id = :p "
            "AND check_code = 'impact_charged_earlier'"), {"r": run_id, "p": permit_id}).all())


def test_a_moved_fill_rechecks_the_permits_whose_fills_it_meets(engine) -> None:
    """E's fill moves 10 m east, inside F's: P keeps its own 2,000 m^2 (its figures stay), but
    1,000 m^2 less of it lie in E's ground. Only its 7(b) findings say so, and the
    incremental run must say what a full run says."""
    ids = _charged_earlier_plan(engine)
    base = _full(engine)
    assert _charged_to(engine, base, ids["P"]) == {
        "25-101, decided earlier (2021-06-01): not charged again": "1.2355",
        "25-102, decided earlier (2022-06-01): not charged again": "1.9768"}
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.impact SET geom = {s.rect((2560, 0, 2660, 100))} "
                             "WHERE impact_id = :i AND valid_to IS NULL"), {"i": ids["iE"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base
    assert set(row.rechecked_why) - {"district"} == {str(ids[k]) for k in "EFP"}, row
    assert row.rechecked_why[str(ids["P"])] == "impact changed within reach of its impact"
    assert _charged_to(engine, inc, ids["P"]) == {
        "25-101, decided earlier (2021-06-01): not charged again": "0.9884",
        "25-102, decided earlier (2022-06-01): not charged again": "1.9768"}
    assert _results(engine, inc) == _results(engine, _full(engine))


def test_a_permit_decided_on_another_day_rechecks_the_permits_whose_fills_meet_its(
        engine) -> None:
    """E's decision moves a month, still first: no ground changes hands, but P's and F's
    findings name E with its date."""
    ids = _charged_earlier_plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.permit SET decided_on = '2021-07-01' "
                             "WHERE permit_id = :p AND valid_to IS NULL"), {"p": ids["E"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base
    assert set(row.rechecked_why) - {"district"} == {str(ids[k]) for k in "EFP"}, row
    assert row.rechecked_why[str(ids["P"])] == (
        "a permit whose disturbance meets its own changed (7(b))")
    assert "25-101, decided earlier (2021-07-01): not charged again" in _charged_to(
        engine, inc, ids["P"])
    assert _results(engine, inc) == _results(engine, _full(engine))


def test_a_moved_replacement_rechecks_the_permits_whose_fills_it_meets(engine) -> None:
    """A built wetland replacement is wetland to the permits decided after it (sql/110), so
    their ground, and what of it an earlier permit was charged, follows it. Replacement R
    (a far permit's, certified 2020) lies under E's fill (decided 2021) and P's (2023) on
    upland, x 2550-2600, y 0-50: 2,500 m^2 of P's ground were charged to E (0.6178 acres).
    R moves 10 m north: still 2,500 m^2 under both fills, so no owner's figures change and
    the ledger posts nothing for E or P, but P's finding now has another polygon. The
    incremental run must evaluate P again (its fill meets R, old and new) and say what a
    full run says."""
    ids = _plan(engine)
    with engine.begin() as conn:
        for key, no, decided, box in (("E", "25-101", "2021-06-01", (2550, 0, 2650, 100)),
                                      ("P", "25-103", "2023-06-01", (2500, 0, 2600, 100))):
            ids[key] = s.permit(conn, no, decided_on=decided)
            s.impact(conn, ids[key], "fill", box, "i" + no)
        owner = s.permit(conn, "25-120", decided_on="2019-06-01")
        ids["R"] = s.replacement(conn, owner, (2550, 0, 2600, 50), "r120",
                                 status_on="2020-01-01")
        _far_fills(conn)
    base = _full(engine)
    charged = "25-101, decided earlier (2021-06-01): not charged again"
    assert _charged_to(engine, base, ids["P"]) == {charged: "0.6178"}  # 2,500 m^2
    with engine.begin() as conn:
        conn.execute(sa.text(
            f"UPDATE core.replacement SET geom = {s.rect((2550, 10, 2600, 60))} "
            "WHERE replacement_id = :r AND valid_to IS NULL"), {"r": ids["R"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base
    assert str(ids["P"]) in row.rechecked_why, row
    assert _charged_to(engine, inc, ids["P"]) == {charged: "0.6178"}
    with engine.connect() as conn:
        moved = conn.execute(sa.text(
            f"SELECT ST_Equals(geom, {s.rect((2550, 10, 2600, 60))}) FROM checks.finding "
            "WHERE run_id = :r AND permit_id = :p AND check_code = 'impact_charged_earlier'"),
            {"r": inc, "p": ids["P"]}).scalar_one()
    assert moved  # the ground charged to E where R now is
    assert _results(engine, inc) == _results(engine, _full(engine))


def test_a_wetland_change_under_grading_rechecks_its_permit(engine) -> None:
    """Grading in wetland is disturbance, charged like fill (sql/110). P (decided 2023, no
    PINs: no site to reach) grades x 3500-3600, y 0-100 where E (decided 2021, no PINs) filled
    first, on wetland W3 (x 3400-3700): all 10,000 m^2 were charged to E (2.4711 acres) and P
    keeps none. W3 shrinks to x 3550-3700: E's figures change, P's stay 0, but only 5,000
    m^2 of its ground lie in E's now (1.2355 acres). The incremental run must evaluate P
    again (its grading meets the wetland, old and new) and say what a full run says."""
    ids = _plan(engine)
    with engine.begin() as conn:
        d = s.delineation(conn, "D-3", (3400, 0, 3700, 200), "2020-01-01")
        ids["W3"] = s.wetland(conn, d, "W3", (3400, 0, 3700, 200))
        ids["E"] = s.permit(conn, "25-131", decided_on="2021-06-01")
        s.impact(conn, ids["E"], "fill", (3500, 0, 3600, 100), "i131")
        ids["P"] = s.permit(conn, "25-132", decided_on="2023-06-01")
        conn.execute(sa.text(
            "INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, "
            f"source_fid, geom) VALUES (1, :p, true, 'g132', {s.rect((3500, 0, 3600, 100))})"),
            {"p": ids["P"]})
        _far_fills(conn)
    base = _full(engine)
    charged = "25-131, decided earlier (2021-06-01): not charged again"
    assert _charged_to(engine, base, ids["P"]) == {charged: "2.4711"}
    with engine.begin() as conn:
        conn.execute(sa.text(
            f"UPDATE core.wetland SET geom = {s.rect((3550, 0, 3700, 200))} "
            "WHERE wetland_id = :w AND valid_to IS NULL"), {"w": ids["W3"]})
    inc = _since(engine, base)
    row = _run(engine, inc)
    assert row.base_run_id == base
    assert str(ids["P"]) in row.rechecked_why, row
    assert _charged_to(engine, inc, ids["P"]) == {charged: "1.2355"}
    assert _results(engine, inc) == _results(engine, _full(engine))


def _identities(engine: sa.Engine, run_id: int) -> list[sa.Row]:
    """Each finding row of a run with its source, the identity it was linked to, that
    identity's key and last run, and the key the row's own columns give."""
    with engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT f.finding_id, f.permit_id, f.carried_from_id, o.finding_case_id, "
            "c.finding_key, c.last_run_id, k.finding_key AS own_key, "
            "(SELECT so.finding_case_id FROM checks.finding_occurrence so "
            " WHERE so.finding_id = f.carried_from_id) AS source_case_id "
            "FROM checks.finding f "
            "JOIN checks.finding_occurrence o ON o.finding_id = f.finding_id "
            "JOIN checks.finding_case c ON c.finding_case_id = o.finding_case_id "
            "JOIN checks.finding_keys(:r) k ON k.finding_id = f.finding_id "
            "WHERE f.run_id = :r ORDER BY f.finding_id"), {"r": run_id}).all()


def test_a_carried_over_finding_keeps_its_source_identity(engine) -> None:
    """The review links a copy to its source's identity (sql/287) and leaves the identity's
    last run as the run that evaluated it; the findings evaluated again are keyed."""
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        s.impact(conn, ids["p1"], "fill", (100, 0, 150, 50), "i4")
    inc = _since(engine, base)
    rows = _identities(engine, inc)
    carried = [r for r in rows if r.permit_id == ids["p2"]]
    evaluated = [r for r in rows if r.permit_id == ids["p1"]]
    assert carried and evaluated
    assert all(r.carried_from_id is not None and r.finding_case_id == r.source_case_id
               and r.last_run_id == base for r in carried)
    assert all(r.carried_from_id is None and r.last_run_id == inc for r in evaluated)
    assert all(r.finding_key == r.own_key for r in rows)  # the identity its key names
    with engine.connect() as conn:  # every row of the run linked once, no identity twice
        linked, cases = conn.execute(sa.text(
            "SELECT count(*), count(DISTINCT finding_case_id) FROM checks.finding_occurrence "
            "WHERE run_id = :r"), {"r": inc}).one()
        total = conn.execute(sa.text("SELECT count(*) FROM checks.finding WHERE run_id = :r"),
                             {"r": inc}).scalar_one()
    assert linked == cases == total == len(rows)


def test_a_copy_that_is_not_its_source_is_keyed_like_any_finding(engine) -> None:
    """A writer that names the wrong source (a carried-over copy of 25-002's warning said to
    copy 25-001's finding) gets no identity from it: the review keys the run's rows."""
    ids = _plan(engine)
    base = _full(engine)
    with engine.begin() as conn:
        s.impact(conn, ids["p1"], "fill", (100, 0, 150, 50), "i4")
    with engine.begin() as conn:  # run_checks_since's steps, a wrong source before the end
        todo = conn.execute(sa.text("SELECT * FROM checks.plan_checks_since(1, :b)"),
                            {"b": base}).one()
        assert todo.plan == "some" and todo.permit_ids == [ids["p1"]]
        inc = conn.execute(sa.text("SELECT checks.start_run(1, NULL, :b, NULL)"),
                           {"b": base}).scalar_one()
        conn.execute(sa.text("SELECT checks.evaluate(1, :ids, false)"), {"ids": [ids["p1"]]})
        conn.execute(sa.text("SELECT checks.record_evaluations(:r, 1, :ids, false)"),
                     {"r": inc, "ids": [ids["p1"]]})
        conn.execute(sa.text("DROP TABLE pg_temp.check_evaluation"))
        conn.execute(sa.text("SELECT checks.carry_over(:r, 1, :b, :ids, false)"),
                     {"r": inc, "b": base, "ids": [ids["p1"]]})
        wrong = conn.execute(sa.text(
            "SELECT min(finding_id) FROM checks.finding WHERE run_id = :b AND permit_id = :p"),
            {"b": base, "p": ids["p1"]}).scalar_one()
        assert wrong is not None
        assert conn.execute(sa.text(
            "UPDATE checks.finding SET carried_from_id = :w WHERE run_id = :r "
            "AND permit_id = :p"), {"w": wrong, "r": inc, "p": ids["p2"]}).rowcount >= 1
        conn.execute(sa.text("SELECT checks.finish_run(:r)"), {"r": inc})
    rows = _identities(engine, inc)
    assert rows and all(r.finding_key == r.own_key for r in rows)
    carried = [r for r in rows if r.permit_id == ids["p2"]]
    with engine.connect() as conn:  # 25-002's warning is still the identity it was
        before = set(conn.execute(sa.text(
            "SELECT o.finding_case_id FROM checks.finding_occurrence o "
            "JOIN checks.finding f ON f.finding_id = o.finding_id "
            "WHERE o.run_id = :b AND f.permit_id = :p"), {"b": base, "p": ids["p2"]}).scalars())
    assert carried and {r.finding_case_id for r in carried} == before
