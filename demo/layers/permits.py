"""The permit records (permit, attribute-only): one per ``Site``, with its parcels' PINs, its
dates and the impact dates that follow from its decision.

Why its own module: the permit is the layer every other permit layer references by
``permit_key``; it is made before them, from the same table.
"""

from __future__ import annotations

from datetime import date, timedelta

from demo.collector import Collector
from demo.layers.frame import parcel_key
from demo.sites import SITES, Site, recorded_on

IMPACT_DAYS = 30  # days from the start of a permit's impact to its completion


def _expires(decided_on: str) -> str:
    return f"{int(decided_on[:4]) + 3}{decided_on[4:]}"


def build_permits(c: Collector) -> None:
    """The permit records (attribute-only)."""
    for s in SITES:
        pins = ";".join(parcel_key(p) for p in s.parcels)
        c.add("permit", s.permit_no, None, permit_no=s.permit_no, applicant=s.applicant,
              parcel_pins=pins, status=s.status, applied_on=s.applied_on, tep_on=s.tep_on,
              decided_on=s.decided_on,
              expires_on=_expires(s.decided_on) if s.decided_on else None,
              baseline_on=s.baseline_on, description=s.description,
              involves_subdivision=s.subdivision,
              vegetation_plan_on=s.tep_on if s.buffer and s.vegetation_plan else None,
              public_land=s.buffer_public,
              species_assessment_on=s.species_assessment_on,
              ditch_determined_on=s.applied_on if s.ditch_determination == "permit" else None,
              **_impact_dates(s))


def _impact_dates(s: Site) -> dict[str, str | None]:
    """A decided permit's impact began the day its conditions were due (``recorded_on``) and
    was completed IMPACT_DAYS later; no impact, or undecided: none."""
    if not s.impacts or s.decided_on is None:
        return {"impact_started_on": None, "impact_completed_on": None}
    started = date.fromisoformat(recorded_on(s))
    return {"impact_started_on": started.isoformat(),
            "impact_completed_on": (started + timedelta(days=IMPACT_DAYS)).isoformat()}
