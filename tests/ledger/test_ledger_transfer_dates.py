"""Transfers stand on the giver's position on the transfer's date (docs/ledger.md decision 9):
a transfer dated before its giver was decided, or before the credit behind it counted, is
refused in one line (at ingest and for any direct writer); when a giver is withdrawn, denied
or loses the credit behind a transfer, the transfer stops counting (for the receiver and the
giver alike) and the receiver gets a 7(b) transfer_unbacked error naming the giver.

Parcels A-1 (0,0)-(300,600), C-1 (600,0)-(900,600); wetland W1 (0,0)-(200,100). 24-001
(decided 2024-04-01) has BASIN (650,200)-(750,300) certified 2024-09-01: 2.4711 ac, no impact.
24-002 (decided 2024-05-01) fills (100,0)-(150,100) of W1: 5,000 m^2 = 1.2355 ac.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ledger_review_helpers import (
    HALF,
    impact,
    ingest_transfers,
    layout,
    one_line,
    replacement,
    run_findings,
)
from test_ledger import check_invariants

from etl.problems import IngestError
from rulem_db import ledger

BASIN = (650, 200, 750, 300)
ZERO = Decimal("0.0000")


@pytest.fixture
def site(engine: sa.Engine, db_url: str) -> tuple[int, int]:
    with engine.begin() as conn:
        layout(conn)
        giver = s.permit(conn, "24-001", decided_on="2024-04-01")
        taker = s.permit(conn, "24-002", decided_on="2024-05-01")
        replacement(conn, giver, BASIN, "basin-1", status_on="2024-09-01")
        impact(conn, taker, "fill", (100, 0, 150, 100), "fill-2")
    ledger.recompute(db_url)
    return giver, taker


def balances(conn: sa.Connection) -> dict[str, tuple]:
    return {no: (r["transfer_in_acres"], r["transfer_out_acres"], r["balance_acres"])
            for no, r in s.permit_rows(conn).items()}


def test_a_transfer_dated_before_the_giver_was_decided_is_refused(
        engine: sa.Engine, site: tuple[int, int], tmp_path: Path) -> None:
    """Dated 2024-03-01, before 24-001's decision of 2024-04-01: refused in one line by
    `rulem-db ingest credit_transfer` and by a direct insert; nothing kept."""
    with pytest.raises(IngestError) as err:
        ingest_transfers(engine.url.render_as_string(hide_password=False), tmp_path,
                         [["T-early", "24-001", "24-002", "1.0", "2024-03-01"]])
    assert "dated 2024-03-01, before the giving permit 24-001 was decided (2024-04-01)" in (
        one_line(err.value))
    giver, taker = site
    with pytest.raises(sa.exc.DBAPIError) as err2, engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-early", on="2024-03-01")
    assert "before the giving permit 24-001 was decided (2024-04-01)" in one_line(err2.value)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM core.credit_transfer")).scalar() == 0


def test_a_transfer_dated_before_the_credit_behind_it_counted_is_refused(
        engine: sa.Engine, site: tuple[int, int]) -> None:
    """Dated 2024-06-01: 24-001 was decided, but its basin counted only from 2024-09-01, so
    its surplus that day was 0. Before: accepted (judged on today's surplus, 2.4711). The same
    transfer dated 2024-09-01 is accepted."""
    giver, taker = site
    with pytest.raises(sa.exc.DBAPIError) as err, engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-1", on="2024-06-01")
    assert ("exceeds the giving permit's surplus of 0.0000 acres on 2024-06-01"
            in one_line(err.value))
    with engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-1", on="2024-09-01")


def test_a_back_dated_transfer_that_would_empty_an_earlier_one_is_refused(
        engine: sa.Engine, site: tuple[int, int]) -> None:
    """24-001 gives 2.0 ac on 2024-10-01; a second transfer of 1.0 ac dated 2024-09-15 would
    leave 2.4711 - 1.0 = 1.4711 < 2.0 on 2024-10-01 for the first: refused, naming it."""
    giver, taker = site
    with engine.begin() as conn:
        s.transfer(conn, giver, taker, "2.0", "T-1", on="2024-10-01")
    with pytest.raises(sa.exc.DBAPIError) as err, engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-2", on="2024-09-15")
    assert "T-1" in one_line(err.value)


def test_withdrawing_the_giver_takes_the_transfer_away_with_a_finding(
        engine: sa.Engine, db_url: str, site: tuple[int, int]) -> None:
    """24-001 gives 1.0 ac on 2024-10-01; 24-002 then balances at 1.0 - 1.2355 = -0.2355.
    24-001 is withdrawn. Before: 24-002 kept its 1.0 ac with nothing behind it. Now: 24-002
    has no transfer in (-1.2355) and a 7(b) transfer_unbacked error naming 24-001; the plan
    has no credit at all."""
    giver, taker = site
    with engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-1", on="2024-10-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert balances(conn)["24-002"] == (Decimal("1.0000"), ZERO, Decimal("-0.2355"))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.permit SET status = 'withdrawn' "
                             "WHERE permit_no = '24-001' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert balances(conn)["24-002"] == (ZERO, ZERO, -HALF)
        assert s.plan_row(conn)["credit_acres"] == ZERO
    found = run_findings(engine, "transfer_unbacked")
    assert [f[:3] for f in found] == [("24-002", "error", Decimal("1.0000"))]
    assert "24-001" in found[0][3] and "withdrawn" in found[0][3]


def test_a_giver_losing_the_credit_behind_a_transfer_takes_it_away(
        engine: sa.Engine, db_url: str, site: tuple[int, int]) -> None:
    """24-001's basin falls back to constructed: nothing counted behind the 1.0 ac transfer.
    The transfer stops counting on both sides (plan balance = 0 - 1.2355) and 24-002 gets the
    error; certified again, it counts again and the finding clears."""
    giver, taker = site
    with engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.0", "T-1", on="2024-10-01")
    ledger.recompute(db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.replacement SET status = 'constructed' "
                             "WHERE source_fid = 'basin-1' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert balances(conn) == {"24-001": (ZERO, ZERO, ZERO),
                                  "24-002": (ZERO, ZERO, -HALF)}
        assert s.plan_row(conn)["balance_acres"] == -HALF
    assert [f[:3] for f in run_findings(engine, "transfer_unbacked")] == [
        ("24-002", "error", Decimal("1.0000"))]
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.replacement SET status = 'certified' "
                             "WHERE source_fid = 'basin-1' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert balances(conn) == {"24-001": (ZERO, Decimal("1.0000"), Decimal("1.4711")),
                                  "24-002": (Decimal("1.0000"), ZERO, Decimal("-0.2355"))}
    assert run_findings(engine, "transfer_unbacked") == []
    check_invariants(engine, db_url)


def test_each_transfer_is_dated_on_its_own_day(engine: sa.Engine, db_url: str,
                                               site: tuple[int, int]) -> None:
    """Two transfers of 0.5 ac (2024-10-01, 2025-02-01): 24-002's transfers in as of
    2024-12-31 are 0.5 ac, not 0 (before: both lines moved to 2025-02-01)."""
    giver, taker = site
    with engine.begin() as conn:
        s.transfer(conn, giver, taker, "0.5", "T-1", on="2024-10-01")
        s.transfer(conn, giver, taker, "0.5", "T-2", on="2025-02-01")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        got = conn.execute(sa.text(
            "SELECT transfer_in_acres FROM pub.permit_balance_as_of('2024-12-31') "
            "WHERE permit_no = '24-002'")).scalar_one()
        assert got == Decimal("0.5000")
        assert s.permit_rows(conn)["24-002"]["transfer_in_acres"] == Decimal("1.0000")
