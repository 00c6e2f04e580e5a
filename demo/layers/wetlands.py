"""The delineations (delineation), the wetlands each one mapped (wetland) and their functional
assessments (functional_assessment): the 2019 baseline, 24-001's re-delineation approved in
2025 and a submitted, never approved delineation the ledger must ignore.

Why together: a wetland is keyed by its delineation, and each assessment by its wetland; the
seed's MnRAM ratings are drawn here, in wetland order.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from shapely.geometry import box
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from demo.collector import Collector
from demo.geometry import PLAN_SIZE, Rect, rect
from demo.layers.frame import parcel_geometry
from demo.sites import SITE_BY_PERMIT

# Wetlands of the 2019 baseline delineation: key -> (rect, hole or None, Circular 39 type,
# Cowardin, Eggers & Reed community, invasive-dominated, post-CWMP type, susceptibility).
WetlandRow = tuple[Rect, Rect | None, str | None, str, str, bool, str, str]
BASELINE_WETLANDS: dict[str, WetlandRow] = {
    "W-001": ((200, 880, 750, 1120), (600, 930, 630, 960), "3", "PEM1C", "Shallow Marsh",
              False, "3", "moderate"),
    "W-002": ((750, 880, 1250, 1160), None, "2", "PEM1B", "Fresh (Wet) Meadow", True, "3",
              "moderate"),
    "W-003": ((1250, 880, 1750, 1190), None, "6", "PSS1C", "Shrub-Carr", False, "6", "slight"),
    "W-004": ((1750, 880, 2300, 1120), None, "7", "PFO1C", "Hardwood Swamp", False, "7", "high"),
    "W-005": ((1400, 1190, 1600, 1300), None, "2", "PEM1B", "Sedge Meadow", False, "2", "high"),
    "W-006": ((600, 1400, 720, 1480), None, "4", "PEM1F", "Deep Marsh", False, "4", "moderate"),
    "W-010": ((300, 500, 400, 600), None, "1", "PEM1Af", "Seasonally Flooded Basin", False, "1",
              "least"),
    "W-011": ((800, 450, 900, 500), None, "2", "PEM1B", "Fresh (Wet) Meadow", True, "2",
              "slight"),
    "W-012": ((2050, 1350, 2150, 1450), None, "3", "PEM1C", "Shallow Marsh", False, "3",
              "moderate"),
    "W-013": ((1050, 550, 1150, 620), None, "1", "PEM1A", "Seasonally Flooded Basin", False,
              "1", "least"),
    "W-014": ((1300, 500, 1360, 550), None, "5", "PUBH", "Shallow Open Water", False, "5",
              "slight"),
    "W-015": ((1800, 500, 1880, 560), None, "2", "PEM1B", "Fresh (Wet) Meadow", True, "2",
              "slight"),
    "W-016": ((1270, 20, 1370, 100), None, "8", "PFO2B", "Coniferous Swamp", False, "8", "high"),
    "W-017": ((1320, 1680, 1360, 1960), None, "3", "PEM1C", "Shallow Marsh", False, "3",
              "moderate"),
    "W-018": ((1800, 1750, 1900, 1850), None, "1", "PEM1A", "Seasonally Flooded Basin", False,
              "1", "least"),
    # no type determination and no functional assessment: 24-009's incomplete application
    "W-019": ((100, 100, 160, 180), None, None, "PEM1Af", "Seasonally Flooded Basin", False,
              "1", "least"),
}
UNASSESSED_WETLANDS: frozenset[str] = frozenset({"W-019"})
# 24-001's site re-delineated after construction: the band as before, the replacement basin
# now wetland, the filled W-010 gone.
REDELINEATION_WETLANDS: dict[str, WetlandRow] = {
    "W-101": ((250, 880, 750, 1000), (600, 930, 630, 960), "3", "PEM1C", "Shallow Marsh", False,
              "3", "moderate"),
    "W-102": ((450, 760, 650, 840), None, "3", "PEM1C", "Shallow Marsh", False, "3",
              "moderate"),
}
SUBMITTED_WETLANDS: dict[str, WetlandRow] = {
    "W-201": ((1790, 1740, 1920, 1860), None, "2", "PEM1B", "Fresh (Wet) Meadow", False, "2",
              "slight"),
}

MNRAM_FUNCTIONS = (
    "vegetative_diversity", "hydrologic_regime", "flood_attenuation", "downstream_water_quality",
    "wetland_water_quality", "shoreline_protection", "wildlife_habitat", "fish_habitat",
    "amphibian_habitat", "aesthetics_recreation_education", "groundwater_interaction",
)

# Delineations: key -> attributes (geometry is built from the layout).
DELINEATIONS: dict[str, dict[str, Any]] = {
    "D-2019-01": {
        "permit_key": None, "consultant": "Sandplain Ecological Services",
        "field_on": "2019-05-20",
        "method": "1987 Corps Manual with the Northcentral and Northeast Regional Supplement "
                  "(v2.0)",
        "file_name": "acd5362_cwmp_delineation_2019.gpkg", "status": "approved",
        "submitted_on": "2019-06-10", "tep_reviewed_on": "2019-07-16",
        "tep_findings": "Boundaries, Circular 39 types and MnRAM assessments concur with the "
                        "CWMP; W-016 confirmed as a ranked tamarack swamp.",
        "approved_on": "2019-08-06", "rejected_on": None,
    },
    "D-2025-03": {
        "permit_key": "24-001", "consultant": "Rice Creek Wetland Consulting",
        "field_on": "2025-07-15",
        "method": "Northcentral and Northeast Regional Supplement (v2.0)",
        "file_name": "24-001_post_construction_delineation.shp", "status": "approved",
        "submitted_on": "2025-08-01", "tep_reviewed_on": "2025-08-19",
        "tep_findings": "W-010 filled as permitted; replacement basin W-102 meets wetland "
                        "criteria; band edge unchanged.",
        "approved_on": "2025-09-16", "rejected_on": None,
    },
    "D-2025-07": {
        "permit_key": None, "consultant": "Anoka Sand Plain Surveys", "field_on": "2025-09-22",
        "method": "Northcentral and Northeast Regional Supplement (v2.0)",
        "file_name": "R4-08_pre_application_delineation.geojson", "status": "submitted",
        "submitted_on": "2025-10-06", "tep_reviewed_on": None, "tep_findings": None,
        "approved_on": None, "rejected_on": None,
    },
}


def _study_area(key: str) -> BaseGeometry:
    if key == "D-2019-01":
        return box(0.0, 0.0, *PLAN_SIZE)
    if key == "D-2025-03":
        return unary_union([parcel_geometry(p) for p in SITE_BY_PERMIT["24-001"].parcels])
    return parcel_geometry("R4-08")


def build_delineations(c: Collector, seed: int) -> None:
    """Delineations with their study areas, and the wetlands each one mapped."""
    wetlands = {"D-2019-01": BASELINE_WETLANDS, "D-2025-03": REDELINEATION_WETLANDS,
                "D-2025-07": SUBMITTED_WETLANDS}
    for key, attrs in DELINEATIONS.items():
        sha = hashlib.sha256(f"{attrs['file_name']}:{seed}".encode()).hexdigest()
        c.add("delineation", key, _study_area(key), delineation_no=key, file_sha256=sha, **attrs)
    for dkey, rows in wetlands.items():
        for wkey, (r, hole, c39, cowardin, community, invasive, post, cls) in rows.items():
            c.add("wetland", wkey, rect(r, hole), delineation_key=dkey, circular39_type=c39,
                  cowardin_code=cowardin, eggers_reed_community=community,
                  invasive_dominated=invasive, post_cwmp_type=post, susceptibility_class=cls)


def _ratings(rng: random.Random, c39: str) -> str:
    """MnRAM-style ratings: plausible, seeded, read by no check (3(e) asks that they exist)."""
    levels = ("exceptional", "high", "medium", "low")
    out = {}
    for fn in MNRAM_FUNCTIONS:
        if fn == "fish_habitat" and c39 in ("1", "2", "6", "7", "8"):
            out[fn] = "not_applicable"
        else:
            out[fn] = rng.choices(levels, weights=(1, 3, 4, 2))[0]
    return json.dumps(out, sort_keys=True)


def build_assessments(c: Collector, rng: random.Random) -> None:
    """A functional assessment for every delineated wetland (3(e)) but the UNASSESSED ones.

    A skipped wetland still uses up its key and its random draws, so every other assessment
    is the same as in a demo without the gap (a demo database loaded earlier sees one
    assessment retired, nothing else changed).
    """
    for w in c.layers["wetland"]:
        assessed = DELINEATIONS[w.attrs["delineation_key"]]["submitted_on"]
        key = c.next_key("FA")
        # drawn even when unused, and for an untyped wetland as for the type it had (1), so
        # the seed gives every other assessment the ratings it gave before
        ratings = _ratings(rng, w.attrs["circular39_type"] or "1")
        if w.key in UNASSESSED_WETLANDS:
            continue
        c.add("functional_assessment", key, None, wetland_key=w.key, method="MnRAM 3.4",
              assessed_on=assessed, ratings=ratings)
