"""Published figures add up (docs/ledger.md section 4).

Every published balance is a sum of the entries' published acres (`ledger.entry
.acres_published`, 4 decimals), which posting allocates by largest remainder within each
owner's lines of a measure: each line rounded down to 4 decimals, and the 0.0001-acre units
still missing from the owner's total rounded to 4 decimals go one each to the lines with the
largest remainders. So parcel rows (+ unallocated) add up to the plan row and a permit's parcels
to the permit row, to the last digit, while the exact figures stay in `acres_exact` and
`ledger.*_measures`.

Figures by hand (1 acre = 4046.8564224 m^2; a 100 m x h m strip is 100h / 4046.8564224 acres).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database

from rulem_db import ledger

COLUMNS = ("impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
           "credit_constructed_acres", "credit_hosted_acres", "balance_acres")


def d(x: str) -> Decimal:
    return Decimal(x)


def column(rows: dict[str, dict], col: str, keys=None) -> list[Decimal]:
    return sorted(r[col] for k, r in rows.items() if keys is None or k in keys)


MEASURES = {"impact_acres": ("impact",), "required_acres": ("required",),
            "credit_acres": ("credit", "transfer_in", "-transfer_out"),
            "credit_proposed_acres": ("credit_proposed",),
            "credit_constructed_acres": ("credit_constructed",),
            "credit_hosted_acres": ("credit_hosted",),
            "balance_acres": ("credit", "transfer_in", "-transfer_out", "-required")}


def _published(conn: sa.Connection, where: str, at) -> dict[str, Decimal]:
    """Published acres by column of the entries matching `where`, posted up to `at`."""
    sums = dict(conn.execute(sa.text(
        f"SELECT measure, sum(acres) FROM pub.ledger_entry WHERE {where} "
        "AND posted_at <= coalesce(CAST(:at AS timestamptz), 'infinity') GROUP BY measure"),
        {"at": at}).all())
    return {col: sum((-sums.get(m[1:], 0) if m.startswith("-") else sums.get(m, 0)
                      for m in measures), Decimal(0))
            for col, measures in MEASURES.items()}


def assert_rows_add_up(conn: sa.Connection, at: dt.datetime | None = None) -> None:
    """Parcel rows + the entries on no parcel = plan row, permit rows + District projects =
    plan row, and balance = credit - required on every row, every column, to the last digit."""
    parcels = s.parcel_rows(conn, at)
    permits = s.permit_rows(conn, at)
    plan = s.plan_row(conn, at)
    unallocated = _published(conn, "parcel_id IS NULL", at)
    projects = _published(conn, "district_project IS NOT NULL", at)
    assert unallocated["balance_acres"] == plan["unallocated_balance_acres"]
    for col in COLUMNS:
        by_parcel = sum((r[col] for r in parcels.values()), Decimal(0)) + unallocated[col]
        by_permit = sum((r[col] for r in permits.values()), Decimal(0)) + projects[col]
        assert by_parcel == plan[col], (col, by_parcel, plan[col])
        assert by_permit == plan[col], (col, by_permit, plan[col])
    for r in (*parcels.values(), *permits.values(), plan):
        assert r["balance_acres"] == r["credit_acres"] - r["required_acres"], r
    for r in permits.values():   # credit_acres is counted credit net of transfers
        own = _published(conn, f"permit_id = {r['permit_id']} AND measure = 'credit'", at)
        assert r["credit_acres"] - r["transfer_in_acres"] + r["transfer_out_acres"] \
            == own["credit_acres"], r


def assert_owner_lines_add_up(conn: sa.Connection) -> None:
    """Each owner's open lines of a measure: published acres sum to the exact sum rounded,
    and each line is its acres rounded down or up to 4 decimals."""
    rows = conn.execute(sa.text(
        "SELECT e.permit_id, e.district_project, e.measure, sum(e.acres) AS exact, "
        "       sum(e.acres_published) AS published, "
        "       bool_and(e.acres_published IN (floor(e.acres * 10000) / 10000, "
        "                                      ceil(e.acres * 10000) / 10000)) AS near "
        "FROM ledger.entry e WHERE e.reverses_entry_id IS NULL AND NOT EXISTS ("
        "  SELECT 1 FROM ledger.entry r WHERE r.reverses_entry_id = e.entry_id) "
        "GROUP BY 1, 2, 3")).mappings().all()
    assert rows
    for r in rows:
        assert r["published"] == round(r["exact"], 4), dict(r)
        assert r["near"], dict(r)


def strips(conn: sa.Connection, prefix: str, y0: float, y1: float) -> dict[str, int]:
    """Three parcels side by side, 100 m wide: prefix-1 (0-100), -2 (100-200), -3 (200-300)."""
    return {f"{prefix}-{i + 1}": s.parcel(conn, f"{prefix}-{i + 1}",
                                          (100 * i, y0, 100 * (i + 1), y1))
            for i in range(3)}


def test_thirds_rounded_down_get_the_missing_unit(engine: sa.Engine, db_url: str) -> None:
    """A 300 m x 23 m fill (6,900 m^2 = 1.70502713 ac) over three 100 m parcels: 2,300 m^2 =
    0.56834238 ac each, 0.5683 rounded on its own, and 3 x 0.5683 = 1.7049, not 1.7050. The
    remainders are equal (0.42 of a unit each), 17,050 - 3 x 5,683 = 1 unit is missing: one
    line gets 0.5684. The certified replacement, 100 m x 50 m on P-4 (5,000 m^2 = 1.23552691
    ac), falls on the three parcels in proportion to the impact: 0.41184230 each, 3 x 0.4118 =
    1.2354, not 1.2355: one line gets 0.4119. Every row then adds up:
    required 0.5684 + 0.5683 + 0.5683 = 1.7050, credit 0.4119 + 0.4118 + 0.4118 = 1.2355,
    balance 1.2355 - 1.7050 = -0.4695 (parcels: -0.1565 x 3, or -0.1566 - 0.1564 - 0.1565 when
    the two units land on different parcels)."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        strips(conn, "P", 0, 500)
        s.parcel(conn, "P-4", (400, 0, 500, 500))
        permit = s.permit(conn, "25-001")
        s.impact(conn, permit, "fill", (0, 0, 300, 23), "i1")
        s.replacement(conn, permit, (400, 0, 500, 50), "r1")
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        parcels = s.parcel_rows(conn)
        permit_row = s.permit_rows(conn)["25-001"]
        plan = s.plan_row(conn)
        exact = conn.execute(sa.text(
            "SELECT pin, acres_exact FROM pub.ledger_entry WHERE measure = 'required' "
            "ORDER BY parcel_id")).all()
        assert_rows_add_up(conn)
        assert_owner_lines_add_up(conn)
    thirds = ("P-1", "P-2", "P-3")
    # Naive rounding of each line would not add up (this is why the test exists).
    assert sum(round(a, 4) for _, a in exact) == d("1.7049")
    assert round(sum(a for _, a in exact), 4) == d("1.7050")
    assert Counter(column(parcels, "required_acres", thirds)) \
        == Counter({d("0.5683"): 2, d("0.5684"): 1})
    assert Counter(column(parcels, "impact_acres", thirds)) \
        == Counter({d("0.5683"): 2, d("0.5684"): 1})
    assert Counter(column(parcels, "credit_acres", thirds)) \
        == Counter({d("0.4118"): 2, d("0.4119"): 1})
    # The unit goes to the line with the largest remainder (here equal to 1e-12: the largest
    # share took the 12-decimal remainder, sql/150), ties to the lowest parcel id.
    winner = max(exact, key=lambda x: (x[1] * 10000 - (x[1] * 10000).to_integral_value(
        rounding="ROUND_FLOOR"), -thirds.index(x[0])))[0]
    assert parcels[winner]["required_acres"] == d("0.5684")
    assert parcels["P-4"]["credit_hosted_acres"] == d("1.2355")
    assert (permit_row["required_acres"], permit_row["credit_acres"],
            permit_row["balance_acres"], permit_row["status"]) \
        == (d("1.7050"), d("1.2355"), d("-0.4695"), "deficit")
    assert (plan["required_acres"], plan["credit_acres"], plan["balance_acres"]) \
        == (d("1.7050"), d("1.2355"), d("-0.4695"))
    assert sum(r["balance_acres"] for r in parcels.values()) == d("-0.4695")
    assert ledger.recompute(db_url, all=True).entries == 0


def test_thirds_rounded_up_lose_the_extra_unit(engine: sa.Engine, db_url: str) -> None:
    """A 300 m x 24 m fill (7,200 m^2 = 1.77915875 ac): 2,400 m^2 = 0.59305292 ac a parcel,
    0.5931 on its own, 3 x 0.5931 = 1.7793, one unit more than 1.7792. Largest remainder:
    each line 0.5930 rounded down, 17,792 - 3 x 5,930 = 2 units go to the two largest
    remainders: 0.5931 + 0.5931 + 0.5930 = 1.7792."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        strips(conn, "Q", 0, 500)
        permit = s.permit(conn, "25-002")
        s.impact(conn, permit, "fill", (0, 0, 300, 24), "i1")
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        parcels = s.parcel_rows(conn)
        plan = s.plan_row(conn)
        exact = conn.execute(sa.text(
            "SELECT acres_exact FROM pub.ledger_entry WHERE measure = 'impact'")).scalars().all()
        assert_rows_add_up(conn)
        assert_owner_lines_add_up(conn)
        permit_row = s.permit_rows(conn)["25-002"]
    assert sum(round(a, 4) for a in exact) == d("1.7793")
    assert Counter(column(parcels, "impact_acres")) \
        == Counter({d("0.5931"): 2, d("0.5930"): 1})
    assert Counter(column(parcels, "balance_acres")) \
        == Counter({d("-0.5931"): 2, d("-0.5930"): 1})
    assert plan["impact_acres"] == plan["required_acres"] == d("1.7792")
    assert plan["balance_acres"] == d("-1.7792")
    assert permit_row["balance_acres"] == d("-1.7792")


def test_a_unit_that_moves_reposts_a_line_whose_acres_did_not_change(
        engine: sa.Engine, db_url: str) -> None:
    """Permit 25-003 has no impact: its credit stays where it lies. 100 m x 71 m on H-1
    (7,100 m^2 = 1.75444821 ac, remainder 0.48 of a unit) and 100 m x 99 m on H-2 (9,900 m^2
    = 2.44634328 ac, 0.43): together 4.20079149 = 4.2008, one unit more than 1.7544 + 2.4463,
    and it goes to H-1's larger remainder: H-1 1.7545, H-2 2.4463. Then H-2's replacement
    shrinks to 100 m x 38 m (3,800 m^2 = 0.93900045 ac, remainder 0.004): 1.75444821 +
    0.93900045 = 2.69344866 = 2.6934 = 1.7544 + 0.9390, no unit to give, so H-1 falls back to
    1.7544 although its acres did not change: its line is re-posted, same acres_exact,
    published 1.7545 -> 1.7544, and the reason says why."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (600, 600, 700, 700)})
        s.parcel(conn, "H-1", (0, 0, 100, 500))
        s.parcel(conn, "H-2", (100, 0, 200, 500))
        permit = s.permit(conn, "25-003")
        s.replacement(conn, permit, (0, 0, 100, 71), "r1")
        r2 = s.replacement(conn, permit, (100, 0, 200, 99), "r2")
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        before = s.parcel_rows(conn)
        t1 = s.clock(conn)
        assert_rows_add_up(conn)
        assert s.plan_row(conn)["credit_acres"] == d("4.2008")
    assert (before["H-1"]["credit_hosted_acres"], before["H-2"]["credit_hosted_acres"]) \
        == (d("1.7545"), d("2.4463"))
    assert (before["H-1"]["credit_acres"], before["H-2"]["credit_acres"]) \
        == (d("1.7545"), d("2.4463"))
    with engine.begin() as conn:
        conn.execute(sa.text(f"UPDATE core.replacement SET geom = {s.rect((100, 0, 200, 38))} "
                             "WHERE replacement_id = :r AND valid_to IS NULL"), {"r": r2})
    ledger.recompute(db_url)
    with engine.connect() as conn:
        after = s.parcel_rows(conn)
        assert_rows_add_up(conn)
        assert_owner_lines_add_up(conn)
        hosted = conn.execute(sa.text(
            "SELECT acres, acres_exact, reason, reverses_entry_id FROM pub.ledger_entry "
            "WHERE pin = 'H-1' AND measure = 'credit_hosted' ORDER BY entry_id")).mappings().all()
        # As of the instant before the change, the earlier rows, which added up too.
        assert s.parcel_rows(conn, at=t1) == before
        assert_rows_add_up(conn, at=t1)
    assert (after["H-1"]["credit_hosted_acres"], after["H-2"]["credit_hosted_acres"]) \
        == (d("1.7544"), d("0.9390"))
    assert [h["acres"] for h in hosted] == [d("1.7545"), d("-1.7545"), d("1.7544")]
    assert hosted[0]["acres_exact"] == -hosted[1]["acres_exact"] == hosted[2]["acres_exact"]
    assert "4-decimal rounding moved" in hosted[2]["reason"]
    assert "4-decimal rounding moved" not in hosted[0]["reason"]
    assert ledger.recompute(db_url, all=True).entries == 0


def test_many_owners_add_up_now_as_of_and_at(engine: sa.Engine, db_url: str) -> None:
    """Permits overlapping shared parcels, a transfer, a District project, credit of every
    status and a permit whose impact lies on no parcel (unallocated): parcel rows +
    unallocated = plan row and permit rows + the District project = plan row, for every
    column, now, at an instant before a change, and as of today."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 700, 300)})
        strips(conn, "M", 0, 500)
        s.parcel(conn, "M-4", (300, 0, 333, 500))
        a = s.permit(conn, "25-010")
        s.impact(conn, a, "fill", (0, 0, 317, 13), "a1")
        s.impact(conn, a, "drain_partial", (0, 13, 211, 29), "a2")
        s.replacement(conn, a, (0, 400, 333, 419), "a-r1")
        s.replacement(conn, a, (0, 430, 127, 441), "a-r2", status="proposed")
        b = s.permit(conn, "25-011")
        s.impact(conn, b, "excavate", (33, 50, 298, 57), "b1")
        s.replacement(conn, b, (150, 300, 331, 377), "b-r1")
        s.replacement(conn, b, (20, 450, 290, 457), "b-r2", status="constructed")
        c = s.permit(conn, "25-012")              # no parcel under it, no PINs: unallocated
        s.impact(conn, c, "fill", (400, 100, 423, 141), "c1")
        s.replacement(conn, None, (0, 470, 301, 479), "dp-1",
                      district_project="District pond", status_on="2024-01-01")
        s.transfer(conn, b, a, "0.1234", "t1")
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM ledger.entry WHERE parcel_id IS NULL")).scalar_one() > 0
        assert_rows_add_up(conn)
        assert_owner_lines_add_up(conn)
        before_plan = s.plan_row(conn)
        t1 = s.clock(conn)
        today = conn.execute(sa.text("SELECT current_date")).scalar_one()
        as_of = dict(conn.execute(sa.text(
            "SELECT * FROM pub.plan_balance_as_of(:d)"), {"d": today}).mappings().one())
        assert as_of == before_plan
        parcels_as_of = {r["pin"]: dict(r) for r in conn.execute(sa.text(
            "SELECT * FROM pub.parcel_balance_as_of(:d)"), {"d": today}).mappings()}
        assert parcels_as_of == s.parcel_rows(conn)
    with engine.begin() as conn:                 # the fill of 25-010 grows on M-3
        s.impact(conn, a, "fill", (200, 29, 300, 61), "a3")
    ledger.recompute(db_url)
    with engine.connect() as conn:
        assert_rows_add_up(conn)
        assert_owner_lines_add_up(conn)
        assert_rows_add_up(conn, at=t1)
        assert s.plan_row(conn, at=t1) == before_plan
        assert s.plan_row(conn)["required_acres"] != before_plan["required_acres"]


@pytest.mark.slow
def test_demo_parcel_rows_add_up_to_the_plan(admin_url, demo_template) -> None:
    """The demo plan area: its parcel rows, rounded each on its own, summed to 11.2827 acres
    against a plan balance of 11.2828; published by largest remainder they add up."""
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url, all=True)
        with engine.connect() as conn:
            assert_rows_add_up(conn)
            assert_owner_lines_add_up(conn)
            parcels = s.parcel_rows(conn)
            plan = s.plan_row(conn)
        assert sum(r["balance_acres"] for r in parcels.values()) \
            + plan["unallocated_balance_acres"] == plan["balance_acres"]
