"""Every acre of wetland lost is charged once, whoever loses it (docs/ledger.md section 1,
decisions 18 and 25): ground already charged to an earlier-decided permit is not charged
again; another owner's constructed or certified replacement basin is wetland (whoever fills it
is charged, its owner keeps its credit); stormwater BMPs and grading in wetland are impact
like structures; a structure suspended above the ground (6(f)(i)) still fills wetland; and
2(a)(i) reports exactly the impact the ledger counts.

Layout (tests/ledger/test_ledger.py): parcels A-1 (0,0)-(300,600), B-1, C-1 (600,0)-(900,600);
delineation D-1 approved 2020-01-01, wetland W1 (0,0)-(200,100) on A-1 (20,000 m^2).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ledger_review_helpers import (
    HALF,
    QUARTER,
    SQUARE,
    at,
    editor_engine,
    impact,
    ingest_features,
    layout,
    rect,
    run_findings,
)
from publish_fixture import Login, _login
from sqlalchemy.engine import URL
from test_ledger import check_invariants

from rulem_db import ledger

BASIN = (650, 200, 750, 300)


@pytest.fixture
def editor(admin_url: URL):
    yield from _login(admin_url, "rulem_editor")


def impacts(conn: sa.Connection) -> dict[str, tuple[Decimal, Decimal]]:
    return {no: (r["impact_acres"], r["required_acres"]) for no, r in s.permit_rows(conn).items()
            if r["impact_acres"] or r["required_acres"]}


def subwatershed(conn: sa.Connection, permit_id: int, r: s.Rect, key: str) -> int:
    return conn.execute(sa.text(
        "INSERT INTO core.subwatershed (plan_area_id, permit_id, name, source_fid, geom) "
        f"VALUES (1, :p, :k, :k, {rect(r)}) RETURNING subwatershed_id"),
        {"p": permit_id, "k": key}).scalar_one()


def bmp(conn: sa.Connection, permit_id: int, sub: int, kind: str, r: s.Rect, key: str) -> None:
    conn.execute(sa.text(
        "INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft, "
        f"roof_runoff_only, source_fid, geom) VALUES (1, :p, :s, :k, 5000, false, :key, "
        f"{rect(r)})"), {"p": permit_id, "s": sub, "k": kind, "key": key})


# -- (a) the same fill filed again ------------------------------------------------------------


def test_a_fill_filed_again_by_a_later_permit_is_charged_once(engine: sa.Engine,
                                                              db_url: str) -> None:
    """24-001 (decided 2024-04-01) fills (0,0)-(100,100) of W1: 2.4711 ac. 24-002 (decided
    2024-06-01) files (50,0)-(150,100): half of it is 24-001's ground, so only (100,0)-(150,100)
    = 5,000 m^2 = 1.2355 ac is new. Before: 24-002 was charged 2.4711 and the plan 4.9421.
    Plan required: 15,000 m^2 = 3.7066 ac; a warning on 24-002 names 24-001 and 1.2355 ac."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-06-01")
        impact(conn, p1, "fill", (0, 0, 100, 100), "fill-1")
        impact(conn, p2, "fill", (50, 0, 150, 100), "fill-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (SQUARE, SQUARE), "24-002": (HALF, HALF)}
        assert s.plan_row(conn)["required_acres"] == Decimal("3.7066")
    found = run_findings(engine, "impact_charged_earlier")
    assert [f[:3] for f in found] == [("24-002", "warning", HALF)]
    assert "24-001" in found[0][3]
    check_invariants(engine, db_url)


def test_the_earlier_decision_is_charged_whoever_was_entered_first(engine: sa.Engine,
                                                                  db_url: str) -> None:
    """Entered first but decided later, 24-009 loses to 24-001's earlier decision; when
    24-001 is withdrawn, 24-009 owes the whole 2.4711 ac again (the withdrawal queues it)."""
    with engine.begin() as conn:
        layout(conn)
        p9 = s.permit(conn, "24-009", decided_on="2024-08-01")
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        impact(conn, p9, "fill", (0, 0, 100, 100), "fill-9")
        impact(conn, p1, "fill", (0, 0, 100, 100), "fill-1")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (SQUARE, SQUARE)}
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.permit SET status = 'withdrawn' "
                             "WHERE permit_no = '24-001' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-009": (SQUARE, SQUARE)}


def test_a_fill_over_a_partial_drain_is_charged_the_rest(engine: sa.Engine,
                                                          db_url: str) -> None:
    """24-001 partially drains (0,0)-(100,100): 10,000 m^2 x 0.5 = 1.2355 ac. 24-002 then
    fills it: the half not yet charged, 1.2355 ac. The acre lost is charged once in all:
    10,000 m^2 = 2.4711 ac exactly plan-wide (before: 1.2355 + 2.4711 = 3.7066); published,
    the plan row is its owners' rounded figures, 1.2355 + 1.2355 = 2.4710."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-06-01")
        impact(conn, p1, "drain_partial", (0, 0, 100, 100), "drain-1")
        impact(conn, p2, "fill", (0, 0, 100, 100), "fill-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (HALF, HALF), "24-002": (HALF, HALF)}
        assert s.plan_row(conn)["required_acres"] == HALF + HALF
        exact = conn.execute(sa.text(
            "SELECT required FROM ledger.plan_measures(1, 'infinity')")).scalar_one()
        assert round(exact, 4) == SQUARE
    check_invariants(engine, db_url)


# -- (b) another owner's basin is wetland -----------------------------------------------------


def test_filling_another_permits_certified_basin_is_charged_and_the_basin_keeps_its_credit(
        engine: sa.Engine, db_url: str, editor: Login) -> None:
    """24-001's BASIN was built 2024-06-01 and certified 2024-08-01 (2.4711 ac of credit).
    24-002, decided 2025-03-01, draws a fill over half of it, (650,200)-(700,300), in the edit
    view: 5,000 m^2 = 1.2355 ac of impact for 24-002 (before: none, an upland fill); 24-001
    keeps its 2.4711 ac."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        s.permit(conn, "24-002", decided_on="2025-03-01")
        conn.execute(sa.text(
            "INSERT INTO core.replacement (plan_area_id, permit_id, component, status, "
            "status_on, constructed_on, certified_on, source_fid, geom) VALUES (1, :p, "
            "'wetland', 'certified', '2024-08-01', '2024-06-01', '2024-08-01', 'basin-1', "
            f"{rect(BASIN)})"), {"p": p1})
    ledger.recompute(db_url)
    eng = editor_engine(db_url, editor)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('24-002', 'fill', "
                f"{rect((650, 200, 700, 300))})"))
    finally:
        eng.dispose()
    ledger.recompute(db_url)
    with engine.connect() as conn:
        rows = s.permit_rows(conn)
        assert (rows["24-002"]["impact_acres"], rows["24-002"]["required_acres"]) == (HALF, HALF)
        assert rows["24-001"]["credit_acres"] == SQUARE
    check_invariants(engine, db_url)


def test_a_basin_built_after_the_fill_was_decided_is_not_charged_to_it(engine: sa.Engine,
                                                                       db_url: str) -> None:
    """The fill of 24-002 was decided 2024-03-01, before 24-001's basin was built
    (2024-06-01): it was not wetland then, so the fill owes nothing for it."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-03-01")
        conn.execute(sa.text(
            "INSERT INTO core.replacement (plan_area_id, permit_id, component, status, "
            "status_on, constructed_on, source_fid, geom) VALUES (1, :p, 'wetland', "
            f"'constructed', '2024-06-01', '2024-06-01', 'basin-1', {rect(BASIN)})"),
            {"p": p1})
        impact(conn, p2, "fill", (650, 200, 700, 300), "fill-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {}


# -- (c) stormwater BMPs, grading, suspended structures ---------------------------------------


def test_a_pond_dug_in_wetland_is_impact_and_disturbs_a_ranked_community(
        engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """24-001's wet pond (100,0)-(150,50) dug in W1, delivered by `rulem-db ingest bmp` (with
    its subwatershed):
    2,500 m^2 = 0.6178 ac of excavation, charged as impact although no impact polygon was
    drawn (7(b) impact_not_drawn, an error). W1's part (100,0)-(200,100) is a sedge meadow of
    rank B: 7(c)(i) fails for the pond, 0.6178 ac."""
    with engine.begin() as conn:
        layout(conn)
        s.permit(conn, "24-001", decided_on="2024-04-01")
        s.heritage(conn, "B", "wetland", at((100, 0, 200, 100)), "HA-1")
    ingest_features(db_url, "subwatershed", tmp_path, [{
        "feature_key": "SW-1", "permit_no": "24-001", "name": "SW-1",
        "geometry": (0, 0, 300, 300)}])
    ingest_features(db_url, "bmp", tmp_path, [{
        "feature_key": "POND-1", "permit_no": "24-001", "subwatershed_key": "SW-1",
        "kind": "wet_pond", "volume_cuft": 20000, "roof_runoff_only": False,
        "geometry": (100, 0, 150, 50)}])
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (QUARTER, QUARTER)}
    assert [f[:3] for f in run_findings(engine, "impact_not_drawn")] == [
        ("24-001", "error", QUARTER)]
    heritage = run_findings(engine, "heritage_wetland_impact")
    assert [f[:3] for f in heritage] == [("24-001", "error", QUARTER)]
    assert "wet_pond" in heritage[0][3]


def test_an_infiltration_basin_and_grading_in_wetland_are_impact(engine: sa.Engine,
                                                                 db_url: str) -> None:
    """An infiltration basin (0,0)-(50,50) in W1 (2,500 m^2) and grading (0,50)-(100,100)
    (5,000 m^2): 7,500 m^2 = 1.8533 ac of impact; drawing an impact polygon over both leaves
    the figure alone and passes impact_not_drawn."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        sub = subwatershed(conn, p1, (0, 0, 300, 300), "SW-1")
        bmp(conn, p1, sub, "infiltration", (0, 0, 50, 50), "INF-1")
        conn.execute(sa.text(
            "INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, "
            f"source_fid, geom) VALUES (1, :p, true, 'G-1', {rect((0, 50, 100, 100))})"),
            {"p": p1})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (Decimal("1.8533"), Decimal("1.8533"))}
    assert sorted(f[2] for f in run_findings(engine, "impact_not_drawn")) == [
        QUARTER, HALF]
    with engine.begin() as conn:
        impact(conn, p1, "fill", (0, 0, 100, 100), "drawn")
    ledger.recompute(db_url)
    with engine.connect() as conn:      # the drawn polygon is larger: 10,000 m^2 now
        assert impacts(conn) == {"24-001": (SQUARE, SQUARE)}
    assert run_findings(engine, "impact_not_drawn") == []


def test_a_suspended_boardwalk_still_fills_wetland(engine: sa.Engine, db_url: str) -> None:
    """suspended_6fi is a buffer exception (6(f)(i)); it never takes a structure's wetland
    fill away: a boardwalk (0,0)-(100,10) in W1 is 1,000 m^2 = 0.2471 ac of impact."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        conn.execute(sa.text(
            "INSERT INTO core.structure (plan_area_id, permit_id, kind, buffer_exception, "
            "source_fid, geom) VALUES (1, :p, 'passive_recreation', 'suspended_6fi', 'bw-1', "
            f"{rect((0, 0, 100, 10))})"), {"p": p1})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert impacts(conn) == {"24-001": (Decimal("0.2471"), Decimal("0.2471"))}


# -- 2(a)(i) counts what the ledger counts ----------------------------------------------------


def test_2ai_reports_the_ledgers_impact_for_a_road_under_variance(engine: sa.Engine,
                                                                  db_url: str) -> None:
    """A road (0,0)-(100,50) in W1 under variance V-24-1, no impact polygon: the ledger owes
    1.2355 ac; 2(a)(i) said '0.0000 acres ... a Rule M permit is not required' beside the 7(b)
    deficit. Now it says 1.2355 acres and that a permit is required."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        conn.execute(sa.text(
            "INSERT INTO core.structure (plan_area_id, permit_id, kind, variance_ref, "
            "source_fid, geom) VALUES (1, :p, 'road', 'V-24-1', 'road-1', "
            f"{rect((0, 0, 100, 50))})"), {"p": p1})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        got = conn.execute(sa.text(
            "SELECT wetland_acres, i, required FROM checks.applicability(1, ARRAY[:p]::bigint[])"),
            {"p": p1}).one()
    assert (round(got.wetland_acres, 4), got.i, got.required) == (HALF, 1, True)
    assert run_findings(engine, "applicability") == []
    [deficit] = run_findings(engine, "replacement_deficit")[:1]
    assert deficit[:3] == ("24-001", "error", HALF)


def test_2ai_reports_a_refiled_fill_as_the_ledger_does(engine: sa.Engine,
                                                        db_url: str) -> None:
    """A fill refiled whole by a later permit is charged to the earlier one; 2(a)(i) of the
    later permit reports the ledger's 0 acres (its other triggers decide), not 2.4711."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-06-01")
        impact(conn, p1, "fill", (0, 0, 100, 100), "fill-1")
        impact(conn, p2, "fill", (0, 0, 100, 100), "fill-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        got = dict(conn.execute(sa.text(
            "SELECT permit_id, round(wetland_acres, 4) FROM checks.applicability(1)")).all())
    assert got == {p1: SQUARE, p2: Decimal("0.0000")}


def test_a_join_with_the_disturbance_view_reaches_each_layers_indexes(
        engine: sa.Engine) -> None:
    """7(b) impact_charged_earlier asks, per permit, whether another permit's disturbance
    meets its own: a join of ledger.disturbance with itself. A UNION ALL whose branches carry
    their own WHERE is not flattened by PostgreSQL, so that join read every impact of the plan
    area once per permit (83 s for 2,000 permits on the state benchmark). The view must stay
    one append relation: the per-permit side through the permit index, the other side through
    each layer's spatial index, and no layer read whole per row."""
    with engine.begin() as conn:
        layout(conn)
        a = s.permit(conn, "24-001", decided_on="2024-04-01")
        b = s.permit(conn, "24-002", decided_on="2024-06-01")
        impact(conn, a, "fill", (0, 0, 100, 100), "fill-1")
        impact(conn, b, "fill", (50, 0, 150, 100), "fill-2")
        conn.execute(sa.text("ANALYZE core.impact, core.structure, core.bmp, core.grading"))
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        plan = "\n".join(conn.exec_driver_sql(
            "EXPLAIN (COSTS OFF) SELECT d.permit_id FROM ledger.disturbance d "
            "JOIN ledger.disturbance x ON x.geom && d.geom AND x.permit_id <> d.permit_id "
            f"WHERE d.permit_id = {a}").scalars())
        near = conn.execute(sa.text(
            "SELECT count(*) FROM ledger.disturbance d JOIN ledger.disturbance x "
            "ON x.geom && d.geom AND x.permit_id <> d.permit_id WHERE d.permit_id = :a"),
            {"a": a}).scalar_one()
    assert "Subquery Scan" not in plan, plan
    assert "ix_impact_geom" in plan and "ix_impact_permit_id" in plan, plan
    assert near == 1   # B's fill meets A's, found through the index
