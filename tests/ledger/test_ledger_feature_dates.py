"""Credit is dated per feature (docs/ledger.md section 4a): each replacement feature's credit
takes effect on the date it reached the counted status, so certifying a permit's second basin
never moves the first basin's credit in time, and "as of" a date, or a year's closing balance,
does not change after the fact.

24-001, decided 2024-04-01 on P-1 (0,0)-(1000,1000), fills a 100 m square of W1: 2.4711 ac
required. Basins are 100 m squares (2.4711 ac) on its upland.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ledger_review_helpers import (
    HALF,
    SQUARE,
    editor_engine,
    impact,
    ingest_features,
    layout,
    open_lines,
    permit_as_of,
    plan_as_of,
    rect,
)
from publish_fixture import Login, _login
from sqlalchemy.engine import URL

from rulem_db import ledger

ZERO = Decimal("0.0000")


@pytest.fixture
def editor(admin_url: URL):
    yield from _login(admin_url, "rulem_editor")


@pytest.fixture
def permit_24_001(engine: sa.Engine) -> int:
    with engine.begin() as conn:
        layout(conn, {"W1": (0, 0, 300, 300)}, {"P-1": (0, 0, 1000, 1000)})
        p = s.permit(conn, "24-001", decided_on="2024-04-01", pins=["P-1"])
        impact(conn, p, "fill", (0, 0, 100, 100), "fill-1")
    return p


def certified(conn: sa.Connection, permit_id: int, r: s.Rect, key: str, on: str) -> None:
    conn.execute(sa.text(
        "INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on, "
        "constructed_on, certified_on, source_fid, geom) VALUES (1, :p, 'wetland', "
        f"'certified', :on, :on, :on, :k, {rect(r)})"), {"p": permit_id, "on": on, "k": key})


def test_a_second_basin_certified_later_leaves_the_first_basins_date(
        engine: sa.Engine, db_url: str, permit_24_001: int, editor: Login) -> None:
    """Basin A certified 2024-07-01: as of 2024-08-01 24-001 is balanced (2.4711 - 2.4711).
    Basin B certified 2024-11-01 through the edit view. Before: the credit line moved to
    2024-11-01 and 24-001 turned into a 2.4711 ac deficit as of 2024-08-01, after the fact.
    Now: balanced as of 2024-08-01 still, surplus 2.4711 as of 2024-12-01; two credit lines."""
    with engine.begin() as conn:
        certified(conn, permit_24_001, (400, 0, 500, 100), "basin-A", "2024-07-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        august = permit_as_of(conn, "24-001", "2024-08-01")
    assert (august["credit_acres"], august["balance_acres"], august["status"]) == (
        SQUARE, ZERO, "balanced")
    eng = editor_engine(db_url, editor)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO edit.replacement (permit_no, component, status, status_on, "
                "constructed_on, certified_on, geom) VALUES ('24-001', 'wetland', 'certified', "
                f"'2024-11-01', '2024-10-01', '2024-11-01', {rect((400, 200, 500, 300))})"))
    finally:
        eng.dispose()
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert permit_as_of(conn, "24-001", "2024-08-01") == august
        december = permit_as_of(conn, "24-001", "2024-12-01")
        assert (december["credit_acres"], december["balance_acres"]) == (
            Decimal("4.9421"), Decimal("2.4710"))
        assert [(d, round(a, 6)) for d, a in open_lines(conn, "24-001", "credit")] == [
            (dt.date(2024, 7, 1), Decimal("2.471054")),
            (dt.date(2024, 11, 1), Decimal("2.471054"))]
        assert [d for d, _ in open_lines(conn, "24-001", "credit_hosted")] == [
            dt.date(2024, 7, 1), dt.date(2024, 11, 1)]
    assert ledger.recompute(db_url, all=True).entries == 0


def test_the_years_closing_balance_keeps_credit_certified_that_year(
        engine: sa.Engine, db_url: str, permit_24_001: int, tmp_path: Path) -> None:
    """Basin A certified 2024-07-01; basin B, filed through `rulem-db ingest replacement` with
    A, certified 2025-03-01. Before: the plan's credit as of 2024-12-31 was 0 (both moved to
    2025) and 2024 closed in deficit. Now: 2.4711 ac as of 2024-12-31, balanced; 4.9421 ac as
    of 2025-12-31."""
    ingest_features(db_url, "replacement", tmp_path, [
        {"feature_key": "A", "permit_no": "24-001", "component": "wetland",
         "status": "certified", "status_on": "2024-07-01", "certified_on": "2024-07-01",
         "geometry": (400, 0, 500, 100)},
        {"feature_key": "B", "permit_no": "24-001", "component": "wetland",
         "status": "certified", "status_on": "2025-03-01", "certified_on": "2025-03-01",
         "geometry": (400, 200, 500, 300)}])
    ledger.recompute(db_url)
    with engine.connect() as conn:
        end_2024 = plan_as_of(conn, "2024-12-31")
        assert (end_2024["credit_acres"], end_2024["balance_acres"]) == (SQUARE, ZERO)
        end_2025 = plan_as_of(conn, "2025-12-31")
        assert end_2025["credit_acres"] == Decimal("4.9421")


def test_overlapping_basins_date_their_shared_ground_by_the_first(
        engine: sa.Engine, db_url: str, permit_24_001: int) -> None:
    """Basin A (400,0)-(500,100) certified 2024-07-01 and basin B (450,0)-(550,100) certified
    2025-01-15 share 50 x 100 m: that ground counted from 2024-07-01, so B adds only its other
    half, 1.2355 ac, on 2025-01-15."""
    with engine.begin() as conn:
        certified(conn, permit_24_001, (400, 0, 500, 100), "basin-A", "2024-07-01")
        certified(conn, permit_24_001, (450, 0, 550, 100), "basin-B", "2025-01-15")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert plan_as_of(conn, "2024-12-31")["credit_acres"] == SQUARE
        assert plan_as_of(conn, "2025-01-15")["credit_acres"] == SQUARE + HALF
        assert [(d, round(a, 4)) for d, a in open_lines(conn, "24-001", "credit")] == [
            (dt.date(2024, 7, 1), SQUARE), (dt.date(2025, 1, 15), HALF)]
