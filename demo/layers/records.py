"""The permit records (permit_record): the documents each permit's work needs under
docs/rule-m.md, with their facts, and the District's requests.

Why its own module: which records a permit needs (``record_kinds``) is a reading of the rule,
kept beside the compliant facts (``RECORD_FACTS``) a permit built to fail a check changes.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

from demo.collector import Collector
from demo.sites import SITES, Site


def _days(on: str, n: int) -> str:
    return (date.fromisoformat(on) + timedelta(days=n)).isoformat()


def record_kinds(s: Site) -> tuple[str, ...]:
    """The permit records a site needs (docs/rule-m.md), before ``records_missing``: the Corps'
    approval of an impact (3(h)), an erosion control plan for any work on the land (4), for
    section 5's work a site design statement (5(a)) and a rate control analysis (5(b)(ii)),
    a groundwater analysis for that work or fill and excavation (5(f)), the marker design's
    written approval for a buffer of its own with markers (6(b)), the lots a subdivision
    with a buffer creates (6(b)), and a buffer disturbance record for grading in a buffer
    (6(e)); plus ``extra_records``."""
    section5 = s.subdivision or bool(s.impervious) or bool(s.grading or s.subwatershed)
    fills = any(kind in ("fill", "excavate") for kind, _ in s.impacts)
    disturbs = bool(s.impacts or s.impervious or s.grading or s.subwatershed
                    or s.replacements or s.bmps or s.structures)
    kinds = [k for k, need in (
        ("corps_approval", bool(s.impacts)),
        ("erosion_control_plan", disturbs),
        ("site_design", section5),
        ("rate_control", section5),
        ("groundwater", section5 or fills),
        ("marker_design", bool(s.buffer) and (bool(s.markers) or not s.buffer_public)),
        ("lot_monumentation", s.subdivision and bool(s.buffer)),
        ("buffer_disturbance", bool(s.buffer_grading)),
    ) if need]
    return tuple(k for k in (*kinds, *s.extra_records) if k not in s.records_missing)


# The compliant facts of each kind of permit record (docs/rule-m.md); a site changes them with
# ``facts``.
RECORD_FACTS: dict[str, dict[str, Any]] = {
    "site_design": {
        "minimize_impervious": "shared driveway, narrowest street section the city allows",
        "maximize_infiltration": "roof and lot runoff routed to the infiltration basin",
        "reduce_peak_flow": "disconnected impervious surface; outlet sized below existing rates",
        "reduce_pollutant_transport": "forebay ahead of the basin; vegetated swales",
    },
    "rate_control": {"existing_cfs": {"2": 1.2, "10": 2.9, "100": 6.1},
                     "proposed_cfs": {"2": 1.1, "10": 2.7, "100": 5.8}},
    "groundwater": {"existing_flow": 1200, "proposed_flow": 1200, "unit": "gpd"},
    "lot_monumentation": {"lots_created": 2, "lots_monumented": 2},
    "buffer_disturbance": {
        "erosion_control_plan": True, "canopy_trees_removed": 0, "slope_existing_hv": 6.0,
        "slope_proposed_hv": 6.5, "uncompacted_depth_in": 18, "permeability_ratio": 1.1,
        "organic_matter_pct": 8, "sheet_flow_improved": True, "habitat_maintained": True,
        "revegetation_plan": True, "stability_finding": True,
    },
}
RECORD_REFS: dict[str, str] = {  # the District's document numbers: permit/<code>
    "erosion_control_plan": "ECP", "site_design": "SDS", "rate_control": "RCA",
    "groundwater": "GWA", "marker_design": "MDA", "lot_monumentation": "LOT",
    "buffer_equivalence": "BEQ", "buffer_disturbance": "BDP", "species_assessment": "SPA",
    "requested_submittal": "SUB", "abandonment_petition": "PAP",
}
RECORD_TITLES: dict[str, str] = {
    "corps_approval": "U.S. Army Corps of Engineers Section 404 authorization",
    "erosion_control_plan": "Rule D erosion and sediment control plan",
    "site_design": "Site design statement (5(a))",
    "rate_control": "Rule C peak flow rate analysis",
    "groundwater": "Groundwater flow analysis",
    "marker_design": "Buffer marker design and text",
    "lot_monumentation": "Buffer monumentation of the new lots of record",
    "buffer_equivalence": "Finding of equivalence to a uniform 50 ft buffer",
    "buffer_disturbance": "Buffer disturbance plan under 6(e)",
}


def build_records(c: Collector) -> None:
    """The permit records of every site (``record_kinds``, RECORD_FACTS with the site's
    ``facts``) and the District's requests (``requests``), after every other feature (no
    other key shifts). Submitted with the application; District approvals with the decision
    (the erosion control plan and the equivalence finding by the board), the marker design by
    staff two weeks after it (10), the Corps' three weeks after it. A request is made two
    weeks into the review (a partial abandonment petition at the decision, as a condition of
    issuance, 9) and answered a month (45 days) later, a species assessment on the permit's
    species_assessment_on."""
    for s in SITES:
        overrides: dict[str, dict[str, Any]] = {}
        for kind, key, value in s.facts:
            overrides.setdefault(kind, {})[key] = value
        for kind in record_kinds(s):
            facts = {k: v for k, v in {**RECORD_FACTS.get(kind, {}),
                                       **overrides.get(kind, {})}.items() if v is not None}
            approved_on = approved_by = None
            if s.decided_on and kind in ("erosion_control_plan", "buffer_equivalence"):
                approved_on, approved_by = s.decided_on, "board"
            elif s.decided_on and kind == "marker_design":
                approved_on, approved_by = _days(s.decided_on, 14), "staff"
            elif s.decided_on and kind == "corps_approval":
                approved_on = _days(s.decided_on, 21)
            ref = (f"MVP-20{s.permit_no[:2]}-0{s.permit_no[3:]}-RCW"
                   if kind == "corps_approval" else f"{s.permit_no}/{RECORD_REFS[kind]}")
            c.add("permit_record", c.next_key("PR"), None, permit_key=s.permit_no, kind=kind,
                  title=RECORD_TITLES[kind], submitted_on=s.applied_on,
                  approved_on=approved_on, approved_by=approved_by, document_ref=ref,
                  facts=json.dumps(facts, sort_keys=True) if facts else None)
        for kind, title, answered in s.requests:
            if kind == "abandonment_petition":
                requested, answer = s.decided_on or s.applied_on, 45
            else:
                requested, answer = _days(s.applied_on, 14), 30
            done = (s.species_assessment_on if kind == "species_assessment"
                    and s.species_assessment_on else _days(requested, answer))
            c.add("permit_record", c.next_key("PR"), None, permit_key=s.permit_no, kind=kind,
                  title=title, requested_on=requested,
                  submitted_on=done if answered else None,
                  document_ref=f"{s.permit_no}/{RECORD_REFS[kind]}" if answered else None)
