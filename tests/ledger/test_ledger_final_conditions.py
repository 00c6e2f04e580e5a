"""Final conditions follow approved delineations (7(c)(vi)-(vii), docs/ledger.md decision 26):
a delineation approved after a replacement was built that covers it measures the basin's
credit on that delineation's wetland from its approval date; earlier dates keep the earlier
figure, and a fall of credit is a 7(c)(vii) finding.

24-001 (decided 2024-04-01, parcel P-1 (0,0)-(1000,1000)) fills a 100 m square of W1
(0,0)-(300,300), D-1 approved 2020-01-01: 2.4711 ac required. Its basin (400,0)-(500,100),
built 2024-06-01 and certified 2024-08-01, earns 2.4711 ac.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import ledger_scenarios as s
import sqlalchemy as sa
from ingest_helpers import write_csv, write_gpkg
from ledger_review_helpers import (
    HALF,
    SQUARE,
    box,
    impact,
    layout,
    open_lines,
    permit_as_of,
    rect,
    run_findings,
)

from etl.ingest import ingest
from rulem_db import ledger

BASIN = (400, 0, 500, 100)


def site(engine: sa.Engine, db_url: str) -> int:
    with engine.begin() as conn:
        layout(conn, {"W1": (0, 0, 300, 300)}, {"P-1": (0, 0, 1000, 1000)})
        p = s.permit(conn, "24-001", decided_on="2024-04-01", pins=["P-1"])
        impact(conn, p, "fill", (0, 0, 100, 100), "fill-1")
        conn.execute(sa.text(
            "INSERT INTO core.replacement (plan_area_id, permit_id, component, status, "
            "status_on, constructed_on, certified_on, source_fid, geom) VALUES (1, :p, "
            "'wetland', 'certified', '2024-08-01', '2024-06-01', '2024-08-01', 'basin-1', "
            f"{rect(BASIN)})"), {"p": p})
    ledger.recompute(db_url)
    return p


def delineate(db_url: str, tmp_path: Path, wetlands: dict[str, s.Rect], study: s.Rect,
              approved_on: str) -> str:
    """`rulem-db ingest delineation FILE --study-area S`, then its approval by status CSV."""
    path = write_gpkg(tmp_path / "asbuilt.gpkg", [
        {"feature_key": k, "geometry": box(r)} for k, r in wetlands.items()])
    study_path = write_gpkg(tmp_path / "study.gpkg", [{"geometry": box(study)}])
    number = ingest(db_url, "delineation", path, study_area=study_path).delineation_no
    write_csv(tmp_path / "approve.csv",
              ["delineation_no", "status", "tep_reviewed_on", "tep_findings", "approved_on"],
              [[number, "approved", approved_on, "As built.", approved_on]])
    ingest(db_url, "delineation", tmp_path / "approve.csv")
    return number


def test_an_as_built_delineation_mapping_half_the_basin_halves_its_credit_from_then(
        engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """An as-built delineation over (350,-50)-(550,150), approved 2025-05-01, maps only
    (400,0)-(500,50) as wetland: the basin's credit is 5,000 m^2 = 1.2355 ac from 2025-05-01;
    as of 2025-04-30 it is still 2.4711 (before: the delineation changed nothing at all). A
    7(c)(vii) warning names the delineation and the 1.2355 ac fall."""
    site(engine, db_url)
    number = delineate(db_url, tmp_path, {"AB-1": (400, 0, 500, 50)}, (350, -50, 550, 150),
                       "2025-05-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert permit_as_of(conn, "24-001", "2025-04-30")["credit_acres"] == SQUARE
        assert permit_as_of(conn, "24-001", "2025-05-01")["credit_acres"] == HALF
        assert s.permit_rows(conn)["24-001"]["credit_acres"] == HALF
        lines = [(d, round(a, 4)) for d, a in open_lines(conn, "24-001", "credit")]
        assert lines == [(dt.date(2024, 8, 1), SQUARE), (dt.date(2025, 5, 1), -HALF)]
    found = run_findings(engine, "final_conditions")
    assert [f[:3] for f in found] == [("24-001", "warning", HALF)]
    assert number in found[0][3]
    assert ledger.recompute(db_url, all=True).entries == 0


def test_an_as_built_delineation_mapping_the_whole_basin_changes_nothing(
        engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """The whole basin mapped as wetland: the same 2.4711 ac, nothing posted, no finding."""
    site(engine, db_url)
    delineate(db_url, tmp_path, {"AB-1": BASIN}, (350, -50, 550, 150), "2025-05-01")
    assert ledger.recompute(db_url).entries == 0
    assert run_findings(engine, "final_conditions") == []
    with engine.connect() as conn:
        assert s.permit_rows(conn)["24-001"]["credit_acres"] == SQUARE


def test_a_delineation_approved_before_construction_is_the_baseline_not_the_final_condition(
        engine: sa.Engine, db_url: str, tmp_path: Path) -> None:
    """Approved 2024-05-01, before the basin was built (2024-06-01) and after the decision:
    it does not measure the built basin; the credit stays 2.4711 ac."""
    site(engine, db_url)
    delineate(db_url, tmp_path, {"AB-1": (400, 0, 500, 50)}, (350, -50, 550, 150),
              "2024-05-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert s.permit_rows(conn)["24-001"]["credit_acres"] == SQUARE
