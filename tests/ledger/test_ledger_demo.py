"""The ledger on the demo plan area: every permit's figures as demo/cases.toml states them
(worked out by hand from the rectangles of demo/sites.py and demo/layers/), the District
project's credit, credit by parcel, the parcel balances adding up exactly to the plan balance, a
second recompute posting nothing, and the balance asked before a change returning the earlier
figure.

The demo is loaded the ordinary way, through ingest in its manifest's load order
(demo/load.py), into one database for the module.
"""

from __future__ import annotations

from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL

from demo.cases import DEMO_CASES, PLAN_FACTS
from demo.layers.frame import pin_for
from rulem_db import ledger

CLOSE = Decimal("0.0001")  # the demo states acres to 4 decimals, rounded from exact areas


@pytest.fixture(scope="module")
def demo_ledger(admin_url: URL, demo_template: DemoTemplate):
    """The demo (a clone of the session's loaded demo) recomputed once: (engine, url, first
    run summary)."""
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        first = ledger.recompute(url, all=True)
        yield engine, url, first


def _near(got: Decimal, want: float) -> bool:
    return abs(got - Decimal(str(want))) <= CLOSE


@pytest.mark.slow
@pytest.mark.parametrize("permit", sorted(DEMO_CASES))
def test_each_permit_carries_the_demo_figures(demo_ledger, permit: str) -> None:
    engine, _, _ = demo_ledger
    case = DEMO_CASES[permit]
    with engine.connect() as conn:
        row = s.permit_rows(conn)[permit]
        hosted = dict(conn.execute(sa.text(
            "SELECT pin, sum(acres_exact) FROM pub.ledger_entry WHERE permit_no = :p "
            "AND measure = 'credit_hosted' GROUP BY pin HAVING round(sum(acres_exact), 9) <> 0"),
            {"p": permit}).all())
    own_credit = row["credit_acres"] - row["transfer_in_acres"] + row["transfer_out_acres"]
    assert _near(row["impact_acres"], case["impact_acres"]), row
    assert _near(own_credit, case["credit_acres"]), row
    assert _near(row["transfer_in_acres"], case["transfers_in_acres"]), row
    assert _near(row["transfer_out_acres"], case["transfers_out_acres"]), row
    assert _near(row["balance_acres"], case["balance_acres"]), row
    assert _near(row["credit_proposed_acres"], case.get("proposed_acres", 0.0)), row
    assert _near(row["credit_constructed_acres"], case.get("constructed_acres", 0.0)), row
    expected = {pin_for(layout_id): acres
                for layout_id, acres in case["credit_by_parcel_acres"].items()}
    assert set(hosted) == set(expected), (hosted, expected)
    assert all(_near(hosted[pin], acres) for pin, acres in expected.items())


@pytest.mark.slow
def test_plan_balance_district_project_identity_idempotence_and_as_of(demo_ledger) -> None:
    engine, url, first = demo_ledger
    assert first.entries > 0 and first.reversals == 0
    with engine.connect() as conn:
        plan = s.plan_row(conn)
        parcels_sum, plan_exact = s.exact_identity(conn)
        t1 = s.clock(conn)
    assert parcels_sum == plan_exact
    assert _near(plan["district_project_credit_acres"],
                 PLAN_FACTS["district_project_credit_acres"])
    assert ledger.recompute(url).entries == 0
    assert ledger.recompute(url, all=True).entries == 0
    with engine.begin() as conn:          # the re-delineation is rejected after all
        conn.execute(sa.text(
            "UPDATE core.delineation SET status = 'rejected', rejected_on = DATE '2025-10-01' "
            "WHERE delineation_no = :d AND valid_to IS NULL"),
            {"d": PLAN_FACTS["redelineation"]})
    # 24-001 is measured on its 2024 baseline: rejecting a 2025 delineation moves nothing of
    # it; 25-001's cell, which D-2025-03 mapped as upland after it was built, counts again
    rejected = ledger.recompute(url, with_posted=True)
    assert {r["owner"] for r in rejected.posted} == {"25-001"}
    with engine.begin() as conn:          # 24-008 is withdrawn: its entries are reversed
        conn.execute(sa.text("UPDATE core.permit SET status = 'withdrawn' "
                             "WHERE permit_no = '24-008' AND valid_to IS NULL"))
    changed = ledger.recompute(url)
    with engine.connect() as conn:
        # and the 0.15 ac 24-001 gave it no longer stands: 24-001 is recomputed too, and so
        # is 24-002, 24-001's other receiver (a giver whose figures move queues them; its
        # transfer still stands, nothing is posted for it)
        assert changed.owners == 3 and changed.reversals > 0
        assert {r.permit_no for r in conn.execute(sa.text(
            "SELECT DISTINCT permit_no FROM pub.ledger_entry WHERE run_id = :r"),
            {"r": changed.run_id})} == {"24-001", "24-008"}
        now = s.plan_row(conn)
        assert now["required_acres"] == plan["required_acres"] - Decimal("0.1186")
        assert s.plan_row(conn, at=t1) == plan
        parcels_sum, plan_exact = s.exact_identity(conn)
        assert parcels_sum == plan_exact
