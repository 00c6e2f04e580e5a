"""The ledger's hand-worked scenarios (docs/ledger.md).

Layout shared by the scenarios (metres, EPSG:26915): parcels A-1 (0,0)-(300,600),
B-1 (300,0)-(600,600) and C-1 (600,0)-(900,600); one delineation D-1 over (0,0)-(1000,1000)
approved 2020-01-01; permits decided 2024-04-01 unless said otherwise. Every expected figure is
written out with the square metres it comes from (1 acre = 4046.8564224 m^2).

Each scenario then goes through the same invariants: the parcel balances add up exactly to the
plan balance, a second recompute posts nothing, and after a change (every permit withdrawn)
the balance asked as of the instant before it, or as of yesterday, returns the earlier figure.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_db import ledger

A, B, C = (0, 0, 300, 600), (300, 0, 600, 600), (600, 0, 900, 600)
W1 = (0, 0, 200, 100)  # 20,000 m^2 of wetland on A-1


def d(x: str) -> Decimal:
    return Decimal(x)


def layout(conn: sa.Connection, wetlands: dict[str, s.Rect] | None = None) -> dict[str, int]:
    ids = s.base_site(conn, wetlands or {"W1": W1})
    for pin, r in (("A-1", A), ("B-1", B), ("C-1", C)):
        ids[pin] = s.parcel(conn, pin, r)
    return ids


def figures(rows: dict[str, dict], *cols: str) -> dict[str, tuple]:
    """The chosen columns of the rows that owe or hold something (status other than none)."""
    return {k: tuple(r[c] for c in cols) for k, r in rows.items()
            if r["status"] != "none" or any(r[c] for c in cols if c.endswith("_acres"))}


BAL = ("required_acres", "credit_acres", "balance_acres", "status")


def check_invariants(engine: sa.Engine, db_url: str) -> None:
    """Identity, idempotence, and "as of" before a change (every permit withdrawn)."""
    with engine.connect() as conn:
        parcels_sum, plan = s.exact_identity(conn)
        assert parcels_sum == plan
        before_parcels = s.parcel_rows(conn)
        before_permits = s.permit_rows(conn)
        before_plan = s.plan_row(conn)
    again = ledger.recompute(db_url)
    assert again.entries == 0
    assert ledger.recompute(db_url, all=True).entries == 0
    with engine.connect() as conn:
        t1 = s.clock(conn)        # before the change's transaction starts
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.permit SET status = 'withdrawn' "
                             "WHERE valid_to IS NULL AND status <> 'withdrawn'"))
    after = ledger.recompute(db_url)
    with engine.connect() as conn:
        parcels_sum, plan = s.exact_identity(conn)
        assert parcels_sum == plan
        if before_permits:
            assert after.reversals > 0
            assert all(r["status"] == "none" for r in s.permit_rows(conn).values())
        assert s.parcel_rows(conn, at=t1) == before_parcels
        assert s.permit_rows(conn, at=t1) == before_permits
        assert s.plan_row(conn, at=t1) == before_plan
        # "As of" a date goes by the effective date (docs/ledger.md 4a). As recorded before
        # the change, today's figures are what they were; as recorded now, the withdrawal's
        # reversals carry the dates of the entries they reverse, so the corrected history
        # holds no permit's figures on any date, and what is left as of yesterday is the
        # District projects' lines dated by then (until revision 0019 "as of yesterday" was 0
        # only because nothing had been posted before today).
        recorded_before = conn.execute(sa.text(
            "SELECT * FROM pub.plan_balance_as_of(current_date, :t)"), {"t": t1}
        ).mappings().one()
        assert dict(recorded_before) == before_plan
        parcels_before = {r["pin"]: dict(r) for r in conn.execute(sa.text(
            "SELECT * FROM pub.parcel_balance_as_of(current_date, :t)"), {"t": t1}
        ).mappings()}
        assert parcels_before == before_parcels
        yesterday = dt.date.today() - dt.timedelta(days=1)
        old = conn.execute(sa.text("SELECT * FROM pub.plan_balance_as_of(:d)"),
                           {"d": yesterday}).mappings().one()
        assert all(r["status"] == "none" for r in conn.execute(sa.text(
            "SELECT status FROM pub.permit_balance_as_of(:d)"), {"d": yesterday}).mappings())
        projects = conn.execute(sa.text(
            "SELECT coalesce(sum(CASE entry_kind WHEN 'credit' THEN 1 WHEN 'debit' THEN -1 "
            "ELSE 0 END * coalesce(acres_published, round(acres, 4))), 0) FROM ledger.entry "
            "WHERE district_project IS NOT NULL AND effective_on <= :d"), {"d": yesterday}
        ).scalar_one()
        assert old["balance_acres"] == projects
        if projects == 0 and old["credit_acres"] == 0:
            assert old["status"] == "none"
        today = conn.execute(sa.text("SELECT * FROM pub.plan_balance_as_of(current_date)")
                             ).mappings().one()
        assert dict(today) == s.plan_row(conn)


def test_fill_fully_inside_wetland(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")  # 10,000 m^2 in W1
    posted = ledger.recompute(db_url)
    assert (posted.owners, posted.reversals) == (1, 0)
    with engine.connect() as conn:
        assert figures(s.parcel_rows(conn), "impact_acres", *BAL) == {
            "A-1": (d("2.4711"), d("2.4711"), d("0.0000"), d("-2.4711"), "deficit")}
        plan = s.plan_row(conn)
        assert (plan["required_acres"], plan["balance_acres"], plan["status"],
                plan["parcels_in_deficit"], plan["permits_in_deficit"]) == (
            d("2.4711"), d("-2.4711"), "deficit", 1, 1)
    check_invariants(engine, db_url)


def test_fill_half_outside_wetland(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (150, 0, 250, 100), "fill-1")  # 50 x 100 = 5,000 m^2 in W1
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.parcel_rows(conn), "impact_acres", *BAL) == {
            "A-1": (d("1.2355"), d("1.2355"), d("0.0000"), d("-1.2355"), "deficit")}
    check_invariants(engine, db_url)


def test_partial_drain(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "drain_partial", (50, 0, 150, 100), "drain-1")  # 10,000 m^2 x 0.5
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.permit_rows(conn), "impact_acres", *BAL) == {
            "24-001": (d("1.2355"), d("1.2355"), d("0.0000"), d("-1.2355"), "deficit")}
    check_invariants(engine, db_url)


def test_partial_drain_under_a_fill_counts_once_at_factor_one(engine: sa.Engine,
                                                               db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "drain_partial", (50, 0, 150, 100), "drain-1")
        s.impact(conn, p, "fill", (100, 0, 150, 100), "fill-1")
        s.impact(conn, p, "fill", (120, 0, 150, 100), "fill-2")  # overlaps fill-1: once
    ledger.recompute(db_url)
    with engine.connect() as conn:
        # fill 50 x 100 = 5,000 m^2 x 1 + drain (the other 5,000 m^2) x 0.5 = 7,500 m^2
        assert s.permit_rows(conn)["24-001"]["impact_acres"] == d("1.8533")
    check_invariants(engine, db_url)


def test_replacement_with_upland_and_buffer_inside(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")          # 10,000 m^2 on A-1
        s.replacement(conn, p, (300, 400, 500, 500), "basin")            # 20,000 m^2 on B-1
        s.replacement(conn, p, (300, 400, 350, 500), "island", component="upland")  # 5,000
        s.buffer(conn, p, (480, 400, 500, 500), "buffer-1")              # 2,000 m^2
    ledger.recompute(db_url)
    with engine.connect() as conn:
        # credit = 20,000 - 5,000 - 2,000 = 13,000 m^2 = 3.2124 ac; balance 3,000 m^2
        assert figures(s.parcel_rows(conn), "credit_hosted_acres", *BAL) == {
            "A-1": (d("0.0000"), d("2.4711"), d("3.2124"), d("0.7413"), "surplus"),
            "B-1": (d("3.2124"), d("0.0000"), d("0.0000"), d("0.0000"), "none")}
        assert s.plan_row(conn)["balance_acres"] == d("0.7413")
    check_invariants(engine, db_url)


def test_replacement_on_heritage_upland_bc_earns_nothing_c_earns_credit(
        engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        s.heritage(conn, "BC", "upland", (300, 400, 400, 500), "oak savanna")
        s.heritage(conn, "C", "upland", (400, 400, 500, 500), "old field")
        s.heritage(conn, "A", "wetland", (400, 400, 500, 500), "not upland: no exclusion")
        bc = s.permit(conn, "24-001")
        s.replacement(conn, bc, (300, 400, 400, 500), "dug into BC")     # 10,000 m^2, no credit
        c = s.permit(conn, "24-002")
        s.replacement(conn, c, (400, 400, 500, 500), "dug into C")       # 10,000 m^2 = 2.4711
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.permit_rows(conn), *BAL) == {
            "24-002": (d("0.0000"), d("2.4711"), d("2.4711"), "surplus")}
        assert s.permit_rows(conn)["24-001"]["status"] == "none"
        assert figures(s.parcel_rows(conn), *BAL) == {
            "B-1": (d("0.0000"), d("2.4711"), d("2.4711"), "surplus")}
    check_invariants(engine, db_url)


def test_replacement_on_another_parcel(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")           # on A-1
        s.replacement(conn, p, (350, 0, 450, 100), "basin")              # on B-1, 2.4711
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.parcel_rows(conn), "credit_hosted_acres", *BAL) == {
            "A-1": (d("0.0000"), d("2.4711"), d("2.4711"), d("0.0000"), "balanced"),
            "B-1": (d("2.4711"), d("0.0000"), d("0.0000"), d("0.0000"), "none")}
        assert s.plan_row(conn)["status"] == "balanced"
    check_invariants(engine, db_url)


def _transfer_site(conn: sa.Connection) -> tuple[int, int]:
    layout(conn, {"W1": W1, "W2": (700, 0, 800, 50)})
    giver = s.permit(conn, "24-001")
    s.impact(conn, giver, "fill", (50, 0, 150, 100), "fill-1")           # 10,000 m^2 on A-1
    s.replacement(conn, giver, (300, 400, 500, 500), "basin")            # 20,000 m^2 on B-1
    taker = s.permit(conn, "24-002")
    s.impact(conn, taker, "fill", (700, 0, 800, 100), "fill-2")          # 5,000 m^2 of W2, C-1
    return giver, taker


def test_credit_transfer(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        giver, taker = _transfer_site(conn)
        s.transfer(conn, giver, taker, "1.0", "T-1")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        permits = s.permit_rows(conn)
        assert figures(permits, "transfer_in_acres", "transfer_out_acres", *BAL) == {
            # 20,000 m^2 = 4.9421 ac of credit, 1 ac given: 3.9421; owes 10,000 m^2
            # published: 3.9421 - 2.4711 = 1.4710 (the exact 1.47105 would round up)
            "24-001": (d("0.0000"), d("1.0000"), d("2.4711"), d("3.9421"), d("1.4710"),
                       "surplus"),
            # owes 5,000 m^2 = 1.2355 ac, holds the 1 ac received
            "24-002": (d("1.0000"), d("0.0000"), d("1.2355"), d("1.0000"), d("-0.2355"),
                       "deficit")}
        assert figures(s.parcel_rows(conn), *BAL) == {
            "A-1": (d("2.4711"), d("3.9421"), d("1.4710"), "surplus"),
            "C-1": (d("1.2355"), d("1.0000"), d("-0.2355"), "deficit")}
        plan = s.plan_row(conn)   # 20,000 - 15,000 m^2: transfers cancel out plan-wide
        assert (plan["required_acres"], plan["credit_acres"], plan["balance_acres"]) == (
            d("3.7066"), d("4.9421"), d("1.2355"))
    check_invariants(engine, db_url)


def test_transfer_beyond_the_givers_surplus_is_refused(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        giver, taker = _transfer_site(conn)
        s.transfer(conn, giver, taker, "1.0", "T-1")
    with pytest.raises(sa.exc.DBAPIError, match=r"credit transfer of 1\.5000 acres from permit "
                       r"24-001 to permit 24-002 exceeds the giving permit's surplus of "
                       r"1\.4710 acres"), engine.begin() as conn:
        s.transfer(conn, giver, taker, "1.5", "T-2")
    with engine.begin() as conn:          # exactly the surplus, as published, is allowed
        s.transfer(conn, giver, taker, "1.4710", "T-3")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert s.permit_rows(conn)["24-001"]["balance_acres"] == d("0.0000")


def test_permit_with_replacement_and_no_impact(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        p = s.permit(conn, "24-001")
        s.replacement(conn, p, (240, 400, 340, 500), "basin")   # 6,000 m^2 on A-1, 4,000 on B-1
        s.replacement(conn, p, (400, 450, 450, 500), "cell", status="proposed")  # 2,500 on B-1
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.parcel_rows(conn), "credit_proposed_acres", *BAL) == {
            # 6,000 m^2 (1.48263) and 4,000 m^2 (0.98842) of one 2.4711 ac basin: the
            # largest remainder takes the last 0.0001, so the parcels add up to 2.4711
            "A-1": (d("0.0000"), d("0.0000"), d("1.4827"), d("1.4827"), "surplus"),
            "B-1": (d("0.6178"), d("0.0000"), d("0.9884"), d("0.9884"), "surplus")}
        plan = s.plan_row(conn)
        assert (plan["credit_acres"], plan["credit_proposed_acres"], plan["status"]) == (
            d("2.4711"), d("0.6178"), "surplus")
    check_invariants(engine, db_url)


def test_wetland_crossing_two_parcels(engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn, {"W3": (230, 100, 330, 200)})              # 7,000 m^2 on A-1, 3,000 on B-1
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (230, 100, 330, 200), "fill-1")
        s.replacement(conn, p, (700, 400, 800, 500), "basin")   # 10,000 m^2 on C-1
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert figures(s.parcel_rows(conn), "credit_hosted_acres", *BAL) == {
            # 7,000 m^2 (1.72974) and 3,000 m^2 (0.74132): the last 0.0001 of 2.4711 goes to
            # the larger remainder, so A-1 and B-1 add up to the permit's 2.4711
            "A-1": (d("0.0000"), d("1.7298"), d("1.7298"), d("0.0000"), "balanced"),
            "B-1": (d("0.0000"), d("0.7413"), d("0.7413"), d("0.0000"), "balanced"),
            "C-1": (d("2.4711"), d("0.0000"), d("0.0000"), d("0.0000"), "none")}
    check_invariants(engine, db_url)


def test_redelineation_after_a_fill_does_not_change_the_recorded_impact(
        engine: sa.Engine, db_url: str) -> None:
    with engine.begin() as conn:
        layout(conn)
        done = s.permit(conn, "21-001", decided_on="2021-06-01")
        s.impact(conn, done, "fill", (100, 0, 200, 100), "fill-1")       # 10,000 m^2 of W1
        pending = s.permit(conn, "24-002", decided_on=None, status="under_review")
        s.impact(conn, pending, "fill", (0, 0, 100, 100), "fill-2")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert s.permit_rows(conn)["24-002"]["impact_acres"] == d("2.4711")
    with engine.begin() as conn:          # the site re-delineated: the filled ground is upland
        d2 = s.delineation(conn, "D-2", (0, 0, 300, 300), "2022-01-01")
        s.wetland(conn, d2, "W1-after", (0, 0, 50, 100))
    posted = ledger.recompute(db_url, with_posted=True)
    with engine.connect() as conn:
        permits = s.permit_rows(conn)
        # decided in 2021: measured on the 2020 layer, unchanged; pending: today's layer,
        # 50 x 100 = 5,000 m^2 of wetland left under its fill
        assert permits["21-001"]["impact_acres"] == d("2.4711")
        assert permits["24-002"]["impact_acres"] == d("1.2355")
    assert {r["owner"] for r in posted.posted} == {"24-002"}
    check_invariants(engine, db_url)
