"""The demo's figures the README states are the demo's: read from the demo database the suite
builds, so the README cannot go stale.

Why: the README's sentence "On a first run the demo posts N ledger entries and records M
findings; the plan-wide balance is required R ac, credit C ac, surplus S ac, and the published
parcel balances add up to it exactly" is what a newcomer checks first; a new check or demo case
changes those figures, and only a test notices. The demo is loaded through ingest (the
session's demo template), recomputed and checked once, as `rulem-db demo`'s first run does.
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL

from rulem_db import checks, ledger
from rulem_db.paths import ROOT

README = ROOT / "README.md"
FIGURES = re.compile(
    r"On a first run the demo posts (?P<entries>\d+) ledger entries and records "
    r"(?P<findings>\d+) findings; the plan-wide balance is required (?P<required>[\d.]+) ac, "
    r"credit (?P<credit>[\d.]+) ac, (?P<word>surplus|deficit) (?P<balance>[\d.]+) ac, and the "
    r"published parcel balances add up to it exactly")


def readme_figures() -> dict[str, str]:
    """The figures of the README's demo sentence (its line breaks read as spaces)."""
    text = " ".join(README.read_text().split())
    m = FIGURES.search(text)
    assert m, ("README.md: the sentence 'On a first run the demo posts N ledger entries and "
               "records M findings; the plan-wide balance is required R ac, credit C ac, "
               "surplus S ac, and the published parcel balances add up to it exactly' is gone "
               "or reworded: update tests/project/test_readme_demo.py with it")
    return m.groupdict()


def test_the_readme_states_the_demo_figures_in_one_sentence() -> None:
    figures = readme_figures()
    assert all(Decimal(figures[k]) >= 0 for k in ("required", "credit", "balance"))


@pytest.mark.slow
def test_the_readme_demo_figures_are_the_demos(admin_url: URL,
                                               demo_template: DemoTemplate) -> None:
    stated = readme_figures()
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url)
        checks.run_checks(url)
        with engine.connect() as conn:
            entries = conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar_one()
            findings = conn.execute(sa.text("SELECT count(*) FROM pub.finding")).scalar_one()
            plan = conn.execute(sa.text(
                "SELECT required_acres, credit_acres, balance_acres FROM pub.plan_balance"
            )).one()
            parcels = conn.execute(sa.text(
                "SELECT sum(required_acres), sum(credit_acres), sum(balance_acres) "
                "FROM pub.parcel_balance")).one()
    word = "surplus" if plan.balance_acres >= 0 else "deficit"
    found = {"entries": str(entries), "findings": str(findings),
             "required": f"{plan.required_acres:.4f}", "credit": f"{plan.credit_acres:.4f}",
             "word": word, "balance": f"{abs(plan.balance_acres):.4f}"}
    assert found == stated, (
        f"README.md's demo sentence says {stated}, the demo gives {found}: update the README")
    assert tuple(parcels) == tuple(plan)  # "the published parcel balances add up to it exactly"
