"""What the ledger debits and credits: a permit's impacts (impact) and its replacement features
(replacement), with the construction and certification dates a replacement's status implies.

Why together: the two ledger inputs of a permit, made from its ``impacts`` and ``replacements``
in one pass so their keys follow each other as they always have.
"""

from __future__ import annotations

from datetime import date, timedelta

from demo.collector import Collector
from demo.geometry import rect
from demo.sites import Site

CONSTRUCTION_TO_CERTIFIED = 60  # days between construction and certification


def build_impacts(c: Collector, s: Site) -> None:
    """A permit's impacts, then its replacement features with their milestones."""
    for kind, r in s.impacts:
        c.add("impact", c.next_key("I"), rect(r), permit_key=s.permit_no, kind=kind)
    for component, status, r, status_on, *planned in s.replacements:
        c.add("replacement", c.next_key("R"), rect(r), permit_key=s.permit_no,
              component=component, status=status, status_on=status_on,
              planned_type=planned[0] if planned else None,
              **milestones(status, status_on))


def milestones(status: str, status_on: str) -> dict[str, str | None]:
    """A replacement's construction and certification dates: built CONSTRUCTION_TO_CERTIFIED
    days before it was certified, certified on its status date."""
    if status == "proposed":
        return {"constructed_on": None, "certified_on": None}
    if status == "constructed":
        return {"constructed_on": status_on, "certified_on": None}
    built = date.fromisoformat(status_on) - timedelta(days=CONSTRUCTION_TO_CERTIFIED)
    return {"constructed_on": built.isoformat(), "certified_on": status_on}
