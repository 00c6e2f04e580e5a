"""The recompute's drain (sql/170 ledger.drain) takes whole owners, each claimed by its ledger
lock taken without waiting: an owner another session holds is skipped, not waited for, so one
worker never sits idle behind another's chunk (docs/ledger.md); only when every waiting owner is
held does a drain take the rows and wait, so the queue still empties.

Layout: three permits, each filling a 100 m x 100 m square of its own wetland (10,000 m^2 =
2.4711 acres) on its own parcel, replacing on C-1.
"""

from __future__ import annotations

from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ledger_review_helpers import HALF, impact, layout, replacement
from test_ledger import check_invariants

from rulem_db import ledger

A, B, C = (0, 0, 300, 600), (300, 0, 600, 600), (600, 0, 900, 600)


def three_permits(conn: sa.Connection) -> list[int]:
    s.base_site(conn, {"W1": (50, 0, 150, 100), "W2": (350, 0, 450, 100),
                       "W3": (650, 0, 750, 100)})
    for pin, r in (("A-1", A), ("B-1", B), ("C-1", C)):
        s.parcel(conn, pin, r)
    permits = []
    for i, (x, rx) in enumerate(((50, 300), (350, 500), (650, 700)), start=1):
        p = s.permit(conn, f"24-00{i}")
        s.impact(conn, p, "fill", (x, 0, x + 100, 100), f"fill-{i}")
        s.replacement(conn, p, (rx + 300, 400, rx + 400, 500), f"basin-{i}")
        permits.append(p)
    return sorted(permits)


def test_a_drain_skips_an_owner_another_session_holds(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        permits = three_permits(conn)
    held, others = permits[0], permits[1:]   # the first owner in the drain's order
    with engine.connect() as holder, engine.connect() as worker:
        holder.execute(sa.text("SELECT ledger.owner_lock(:p, NULL)"), {"p": held})
        worker.execute(sa.text("SET lock_timeout = '3s'"))
        run = worker.execute(sa.text("SELECT ledger.start_run('queue', 2)")).scalar_one()
        # the old drain took the first rows in owner order (the held owner's) and waited for
        # its lock in ledger.post: here a lock timeout
        taken = worker.execute(sa.text("SELECT ledger.drain(:r, 1000)"), {"r": run}).scalar_one()
        assert taken > 0
        waiting = set(worker.execute(sa.text(
            "SELECT DISTINCT permit_id FROM ledger.change_queue WHERE processed_at IS NULL"
        )).scalars())
        assert waiting == {held}
        impact = dict(worker.execute(sa.text(
            "SELECT permit_id, round(sum(acres), 4) FROM ledger.entry "
            "WHERE run_id = :r AND measure = 'impact' GROUP BY permit_id"), {"r": run}).all())
        assert impact == {p: Decimal("2.4711") for p in others}
        # Only the held owner waits: the drain takes its rows and waits for its lock, so the
        # queue empties once the holder is done.
        with pytest.raises(sa.exc.OperationalError, match="lock timeout"):
            worker.execute(sa.text("SELECT ledger.drain(:r, 1000)"), {"r": run})
        worker.rollback()
        holder.rollback()


def test_a_transfer_side_another_session_holds_is_queued_again(engine: sa.Engine,
                                                               db_url: str) -> None:
    """A drain recomputes the owners credit transfers connect to the ones it takes, in the
    same transaction (sql/170). One whose lock another session holds is not waited for but
    queued again, since that session may have read the inputs before the change: here
    24-001 (giving 1.0 ac of its certified basin, 2.4711 ac, to 24-002 on 2024-10-01) falls
    back to constructed, so the transfer stops counting; 24-002 is held while the drain
    recomputes 24-001. Without the new row 24-002 kept its 1.0 ac transfer in (balance
    1.0 - 1.2355 = -0.2355) once the holder let go; with it, the next recompute posts
    -1.2355 for 24-002."""
    with engine.begin() as conn:
        layout(conn)
        giver = s.permit(conn, "24-001", decided_on="2024-04-01")
        taker = s.permit(conn, "24-002", decided_on="2024-05-01")
        replacement(conn, giver, (650, 200, 750, 300), "basin-1", status_on="2024-09-01")
        impact(conn, taker, "fill", (100, 0, 150, 100), "fill-2")
        s.transfer(conn, giver, taker, "1.0", "T-1", on="2024-10-01")
    ledger.recompute(db_url)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.replacement SET status = 'constructed' "
                             "WHERE source_fid = 'basin-1' AND valid_to IS NULL"))
    with engine.connect() as holder, engine.connect() as worker:
        holder.execute(sa.text("SELECT ledger.owner_lock(:p, NULL)"), {"p": taker})
        with worker.begin():
            run = worker.execute(sa.text("SELECT ledger.start_run('queue', 1)")).scalar_one()
            worker.execute(sa.text("SELECT ledger.drain(:r, 1000)"), {"r": run})
            worker.execute(sa.text("SELECT ledger.finish_run(:r, 'done', NULL)"), {"r": run})
        holder.rollback()
        waiting = set(worker.execute(sa.text(
            "SELECT DISTINCT permit_id FROM ledger.change_queue WHERE processed_at IS NULL"
        )).scalars())
        worker.rollback()
    assert waiting == {taker}
    ledger.recompute(db_url)
    with engine.connect() as conn:
        rows = s.permit_rows(conn)
        assert (rows["24-002"]["transfer_in_acres"], rows["24-002"]["balance_acres"]) == (
            Decimal("0.0000"), -HALF)
        assert rows["24-001"]["transfer_out_acres"] == Decimal("0.0000")
    check_invariants(engine, db_url)
