"""No claim-jumping (docs/ledger.md decision 19): replacement ground that counts belongs to the
owner for whom it was counted first; a pending claim never displaces it; between pending
claims the one recorded first keeps the ground. The claim that does not get the ground earns
nothing there and carries the 7(b) credit_overlap finding; the owner who keeps it gets none.

Layout (tests/ledger/test_ledger.py): parcels A-1 (0,0)-(300,600), B-1 (300,0)-(600,600), C-1
(600,0)-(900,600); delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01 with wetland W1
(0,0)-(200,100). BASIN (650,200)-(750,300) on C-1's upland: 10,000 m^2 = 2.4711 ac.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ledger_review_helpers import (
    HALF,
    SQUARE,
    editor_engine,
    ingest_features,
    layout,
    rect,
    replacement,
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


def credit(conn: sa.Connection) -> dict[str, tuple[Decimal, Decimal]]:
    """Per permit: (counted credit of its own, proposed credit)."""
    return {no: (r["credit_acres"] - r["transfer_in_acres"] + r["transfer_out_acres"],
                 r["credit_proposed_acres"]) for no, r in s.permit_rows(conn).items()}


def certified_basin_of_24_002(engine: sa.Engine, db_url: str) -> tuple[int, int]:
    """24-001 decided 2024-04-01 (first), 24-002 decided 2024-05-01 with BASIN certified
    2024-09-01 and counted since; recomputed. Returns the two permit ids."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-05-01")
        replacement(conn, p2, BASIN, "basin-2", status_on="2024-09-01")
    ledger.recompute(db_url)
    return p1, p2


def test_an_older_permit_filing_a_proposed_basin_later_takes_nothing(engine: sa.Engine,
                                                                    db_url: str) -> None:
    """Years later 24-001 (decided before 24-002) files a proposed basin over 24-002's
    certified BASIN. Before: 24-001's older decision took the ground, 24-002 fell to 0 and
    plan credit with it. Now: 24-002 keeps its 2.4711 ac, 24-001 earns nothing there (proposed
    0), plan credit stays 2.4711; one error on 24-001 naming 24-002 and 2.4711 ac."""
    p1, _ = certified_basin_of_24_002(engine, db_url)
    with engine.begin() as conn:
        replacement(conn, p1, BASIN, "basin-1-late", status="proposed",
                      status_on="2027-03-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn) == {"24-001": (Decimal("0.0000"), Decimal("0.0000")),
                                "24-002": (SQUARE, Decimal("0.0000"))}
        assert s.plan_row(conn)["credit_acres"] == SQUARE
    found = run_findings(engine, "credit_overlap")
    assert [f[:3] for f in found] == [("24-001", "error", SQUARE)]
    assert "24-002" in found[0][3] and "certified" in found[0][3]
    check_invariants(engine, db_url)


def test_the_same_claim_jump_through_rulem_db_ingest(engine: sa.Engine, db_url: str,
                                                     tmp_path: Path) -> None:
    """The reviewer's file: `rulem-db ingest replacement` of 24-001's proposed half-basin
    (700,200)-(750,300) over BASIN: 5,000 m^2 = 1.2355 ac of overlap, no credit for 24-001,
    24-002's 2.4711 ac untouched, the plan's too."""
    certified_basin_of_24_002(engine, db_url)
    ingest_features(db_url, "replacement", tmp_path, [{
        "feature_key": "R-late", "permit_no": "24-001", "component": "wetland",
        "status": "proposed", "status_on": "2027-03-01", "geometry": (700, 200, 750, 300)}])
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn)["24-002"] == (SQUARE, Decimal("0.0000"))
        assert credit(conn)["24-001"] == (Decimal("0.0000"), Decimal("0.0000"))
        assert s.plan_row(conn)["credit_acres"] == SQUARE
    assert [f[:3] for f in run_findings(engine, "credit_overlap")] == [
        ("24-001", "error", HALF)]


def test_an_editor_drawing_over_counted_ground_takes_nothing(engine: sa.Engine, db_url: str,
                                                             editor: Login) -> None:
    """The same jump drawn in the edit view by a rulem_editor login: a certified basin of
    24-001 dated 2026-05-01 (counted later than 24-002's 2024-09-01) over BASIN earns nothing;
    the error is 24-001's."""
    certified_basin_of_24_002(engine, db_url)
    eng = editor_engine(db_url, editor)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO edit.replacement (permit_no, component, status, status_on, geom) "
                f"VALUES ('24-001', 'wetland', 'certified', '2026-05-01', {rect(BASIN)})"))
    finally:
        eng.dispose()
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn)["24-002"] == (SQUARE, Decimal("0.0000"))
        assert credit(conn)["24-001"] == (Decimal("0.0000"), Decimal("0.0000"))
    assert [f[:3] for f in run_findings(engine, "credit_overlap")] == [
        ("24-001", "error", SQUARE)]


def test_between_counted_claims_the_first_counted_keeps_the_ground(engine: sa.Engine,
                                                                   db_url: str) -> None:
    """Both certified: 24-001 (decided first) certified (700,200)-(800,300) on 2025-06-01,
    24-002 its BASIN on 2024-09-01. 24-002 was counted first: it keeps all 2.4711; 24-001
    loses the 5,000 m^2 overlap and keeps 1.2355 ac. Plan: the union, 15,000 m^2 = 3.7066."""
    p1, _ = certified_basin_of_24_002(engine, db_url)
    with engine.begin() as conn:
        replacement(conn, p1, (700, 200, 800, 300), "basin-1", status_on="2025-06-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn) == {"24-001": (HALF, Decimal("0.0000")),
                                "24-002": (SQUARE, Decimal("0.0000"))}
        assert s.plan_row(conn)["credit_acres"] == Decimal("3.7066")
    assert [f[:3] for f in run_findings(engine, "credit_overlap")] == [
        ("24-001", "error", HALF)]


def test_between_pending_claims_the_first_recorded_keeps_the_ground(engine: sa.Engine,
                                                                    db_url: str) -> None:
    """Two proposed basins: 24-002's BASIN recorded first, 24-001's (decided earlier) over the
    same ground recorded later. 24-002 keeps 2.4711 ac proposed; 24-001 gets a warning (the
    ground is pending, not counted)."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-05-01")
        replacement(conn, p2, BASIN, "basin-2", status="proposed")
    with engine.begin() as conn:
        replacement(conn, p1, BASIN, "basin-1", status="proposed")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn) == {"24-001": (Decimal("0.0000"), Decimal("0.0000")),
                                "24-002": (Decimal("0.0000"), SQUARE)}
    assert [f[:3] for f in run_findings(engine, "credit_overlap")] == [
        ("24-001", "warning", SQUARE)]


def test_a_pending_claim_recorded_first_gives_way_once_the_other_is_counted(
        engine: sa.Engine, db_url: str) -> None:
    """24-001's proposed basin is recorded first; 24-002's basin over it is then certified:
    counted ground is 24-002's from then on, whatever the order of recording."""
    with engine.begin() as conn:
        layout(conn)
        p1 = s.permit(conn, "24-001", decided_on="2024-04-01")
        p2 = s.permit(conn, "24-002", decided_on="2024-05-01")
        replacement(conn, p1, BASIN, "basin-1", status="proposed")
    with engine.begin() as conn:
        replacement(conn, p2, BASIN, "basin-2", status="proposed")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn)["24-001"] == (Decimal("0.0000"), SQUARE)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.replacement SET status = 'certified', "
                             "status_on = '2025-05-01' WHERE source_fid = 'basin-2' "
                             "AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert credit(conn) == {"24-001": (Decimal("0.0000"), Decimal("0.0000")),
                                "24-002": (SQUARE, Decimal("0.0000"))}
    assert [f[:3] for f in run_findings(engine, "credit_overlap")] == [
        ("24-001", "error", SQUARE)]
