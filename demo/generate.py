"""A synthetic CWMP plan area for demos and tests: every Rule M layer, seventeen permits, each one
built to exercise one case of the ledger and the checks; together they fail every check of the
catalogue (``checks.rule_check``) at least once, and three of them pass every check.

Why synthetic: the real ACD 53-62 permit files are not public, and a demo must hold every case the
checks distinguish (docs/checks.md) with numbers a person can work out by hand. So the geometry is
rectangles with straight edges on a round-metre grid, placed in EPSG:26915 inside the real Anoka
County outline (Lino Lakes area), and every figure in ``cases.toml`` (beside this module; read into
``DEMO_CASES`` and ``PLAN_FACTS``) follows from those rectangles (1 acre = 4046.8564224 m^2,
1 ft = 0.3048 m).

Determinism: the seed varies only attributes that no check reads (MnRAM ratings, recording and
document numbers, the delineation files' SHA-256). Geometry, dates and every number in
``cases.toml`` are the same for every seed, and the same seed gives identical files (the GPKG's
own metadata timestamps aside; compare features, not bytes) on the same day: the yearly
monitoring visits on record are those made by the day the files are generated (``build``'s
``today``), as they would be in a District's records, so a certified basin is never shown with a
monitoring year overdue that the demo did not build to be.

The plan area is 2,500 m x 2,000 m; local coordinates in this module are metres east and north
of ``ORIGIN`` (its south-west corner). Layout, south to north: parcel row R1 (y 0-340), Main
Street right of way (340-370, a gap), row R2 (370-1000), row R3 (1000-1650), row R4 (1650-2000,
split by the Lake Drive right of way at x 1235-1265). The central wetland complex is a band
W-001..W-004 at y 880-1120/1190 from x 200 to 2300 with ACD 53-62 along y = 990; the R2/R3 lot
line (y = 1000) runs through it, so every band polygon straddles two parcels. W-005 touches the
band; W-006 is central only through ACD 53-62 Lateral 1; W-010..W-019 are isolated.

Permits (approved but 24-009, under review; baseline_on is written only for 24-001, equal to
its decision date, and 24-016, an after-the-fact permit; the others rely on the default; impact
factor 1, drain_partial 0.5). "fails" in ``cases.toml`` names each check a permit is built to
fail, as "<paragraph> <check code>" exactly as the catalogue has them:

====== ==== ================================================ ========= ========= ==========
permit case what it exercises                                impact ac credit ac balance ac
====== ==== ================================================ ========= ========= ==========
24-001 1    clean reference: fill 100x100 m W-010, certified 2.4711    3.9537    +1.1826
            replacement 200x80 m (+ 50x80 m upland, no                   (-0.30
            credit), 16 m (52.49 ft) buffer incl. a 30x30 m              transferred)
            upland island, 11 markers 50 m (164.04 ft) apart,
            gives 0.15 ac to 24-002 and 0.15 ac to 24-008
24-002 2    impact on R2-03 (fill 100x50 m W-011), replaced   1.2355    1.1120    +0.0265
            on R1-04 (100x45 m, into C-ranked upland: allowed)          (+0.15 in)
24-003 3    drain_partial of W-012 (100x100 m x 0.5); public  1.2355    1.5815    +0.3460
            land: buffer agreement, flush markers, 8 ft trail
            (74.02 ft of the 82.02 ft buffer count)
24-004 4    narrow buffer: 100 m stretch 40 ft wide, mean     1.7297    2.2239    +0.4942
            47.50 ft < 50; 12 ft trail (> 10 ft) enclosed;
            its certified basin failed the 2025 vegetation
            standard (7(e)): credit counted, surety held
24-005 5    markers: none at the x=1500 lot line, gaps of     0.8303    1.4826    +0.6523
            328.08 ft and 492.13 ft (> 200 ft); forcemain
            trenched 3x120 m through W-003 under a variance
            with no impact polygon: fill all the same (7(b))
24-006 6    fill 40x80 m of B-ranked W-016 (7(c)(i)); 40x100  0.7907    1.9768    +1.1861
            m of the replacement dug into BC upland (7(c)(ii))
24-007 7    easement misses 40x46 m (0.4547 ac) of buffer     1.1861    2.2239    +1.0378
            and wetland; no fertilizer_snow declaration
24-008 8    5(c) C/D biofiltration 9.3% < 20%; 5(d) bounce    0.1186    0         +0.0314
            +0.8 ft > 0.5 (moderate); 52,313 ft^2 new                       (+0.15 in)
            impervious; road in W-017 without a variance
24-009 9    under review, incomplete: W-019 untyped and       0         0         0
            unassessed (3(e)), no ditch determination (3(f)),
            no subwatershed (5(c)); fertilizer declaration
            and easement (1.1861 ac) not yet recorded:
            warnings before the decision
24-010 10   no 2(a) trigger: 8,073 ft^2 pole barn, grading    0         0         0
            not altering runoff (a warning: no Rule M permit
            was needed)
24-011 11   banked basin 200x80 m, type 2: 30x80 m (0.5931    0         3.3606    +3.3606
            ac) outside the CWMP area, 80x80 m (1.5815 ac)
            outside Figure 5, 120x80 m (2.3722 ac) in an F5
            zone planned for type 3
24-012 12   infiltration 1,200 < V_AB 1,728 ft^3 with no      0         0         0
            pretreatment; inundation +4 days > 2 (moderate)
24-013 13   buffer 20 m but 6 m (19.69 ft < 25) along 50 m,   0         0         0
            mean 56.43 ft; a 10x6 m shed in it (0.0148 ac)
24-014 14   public land: buffer agreement executed by staff   0         0         0
            (10; so no declaration, 6), no vegetation plan
            (6(d)), re-graded 60x12 m without a 6(e) record
            (6(g)) or the 3-year declaration (6(e)(v))
24-015 15   roof rain garden 3 m (9.84 ft) from the wetland,  0         0         0
            on A/D muck (0.0297 ac); V_CD 8,895 ft^3 met by
            2,000 of biofiltration, no wet pond
24-016 16   baseline 2019-06-15, before D-2019-01's approval: 0         0         0
            all 21.8441 ac of R1-07 undelineated (3(e));
            a 20x20 m corner of its subwatershed without land
            cover (5(c)(i)): its volumes not evaluated
24-017 17   fill 50x50 m of W-018; its replacement basin      0.6178    0         -0.6178
            100x80 m lies on the District's older,
            certified Lateral 2 restoration: no credit
            (7(b) credit_overlap), so in deficit; the
            0.7 ac 24-005 gave it does not stand (7(b)
            transfer_unbacked: 24-005's forcemain)
25-001 18   W-010 filed again: 24-001 was charged for it     0         0         0
            (7(b) impact_charged_earlier, no 2(a)
            trigger); its cell, certified 2025-08-12, is
            upland in D-2025-03: 1.4826 ac of credit until
            2025-09-15, none from 2025-09-16 (7(c)(vii))
====== ==== ================================================ ========= ========= ==========

Also: a District project replacement (2.9653 ac certified, no permit), a re-delineation of
24-001's site approved 2025-09-16 (W-101, W-102: the filled W-010 is gone, the replacement
basin is wetland; 24-001's impact and credit must not change, being measured as of 2024-04-09;
25-001's cell, built before it and mapped as upland, loses its credit from its approval),
and a submitted, never approved delineation (W-201) that the ledger must ignore. Each decided
permit's records (``_build_permit_records``): impact dates, conditions of issuance, a surety per
wetland replacement feature posted at issuance and held until monitoring ends, and two
performance standards monitored each year of each certified replacement (the District's too)
whose visit has come; only 24-004's 2025 vegetation is not met. Every permit's permit records
(``_build_records``: the documents its work needs under docs/rule-m.md, and the District's
requests). None of them moves a ledger figure. Besides the figures in the table, the permits
built to fail the checks of replacement implementation and of the paragraphs without geometry:
24-004 (no equivalence finding for its varying buffer, 6(c); an abandonment petition required
and not filed, 9), 24-005 (no written marker design approval and one of two new lots not
monumented, 6(b)), 24-006 (TEP review 14 days after the decision, 7(f)), 24-007 (drain tile
before the surety was posted, 7(e); its fertilizer declaration condition open, 10), 24-008 (no
Corps approval, 3(h); 100-year peak +1.30 cfs, 5(b)(ii)), 24-009 (species assessment and soil
borings requested, 3(d), 3(g); no rate control or groundwater analysis), 24-011 (2025
monitoring visit missed, 7(e)), 24-012 (site design statement silent on impervious surface,
5(a)), 24-013 (declaration without the subdivision clause, 6), 24-015 (groundwater flow 0.80
of existing, 5(f)), 24-016 (no erosion control plan, 4), 24-017 (surety released on
certification, 7(e)).

Choices that keep each case independent of how a checker reads the rule: every impact is on
an isolated wetland (the CWMP's premise: develop upland, aggregate wetland), so the protected
edge is the same before and after impacts; replacement basins stay at least 24 m outside the
buffers, so transects never depend on whether replacement counts as wetland; easements cover
all baseline wetland on the permitted parcels including impact footprints and enclosed upland,
plus buffer and replacement areas (recorded at issuance: 24-009 has none yet); every permit
has an on-site ditch determination (3(f): the first eight a ditch feature credited to them,
the later ones the permit's ``ditch_determined_on``) but 24-009, and every wetland but W-019 a
type and a functional assessment (3(e)); buffers are 16 m, not exactly 50 ft, so float noise
cannot fail a passing permit. Buffers run lot line to lot line: a transect taken exactly on a
lot line runs along the buffer's side.

How the later permits (24-009 to 24-017) fail only what they were built to fail, and what was
decided where the checks allowed a choice:

* They impact no wetland (only the first eight and 24-017 do), so their ledger figures are zero
  but for 24-011's banked credit and 24-017's deficit. Each stands on parcels no other permit
  uses (R1-01, R1-02, R4-10, R1-05, R2-08, R3-01, R2-09, R1-07, R4-08); the
  first eight permits' features, keys and figures are unchanged (``build`` makes the later
  permits after the plan records, so no key shifts). Shared layers grew by one Figure 5 zone
  (F5-006, where no other replacement lies) and lost W-019's type and assessment (no other
  permit is on R1-01).
* Findings that depend on the permit's status (declarations, easement) are errors on approved
  permits; 24-009 shows them as the warnings the checks give before a decision. 24-009 records
  no declaration or easement: both are conditions of issuance.
* 3(e) ``delineation_approved`` cannot fail on a current permit here, since D-2019-01 covers the
  whole plan area and serves every permit (docs/checks.md, decision 9). 24-016 fails it the way
  a real file does: an after-the-fact permit measured as of the unpermitted work (baseline_on
  2019-06-15), before any delineation was approved. With no wetland as of that date its only
  2(a) trigger is its grading.
* 7(c) ``replacement_outside_plan_area`` needs geometry beyond the CWMP boundary: 24-011's basin
  crosses it by 30 m, the only feature outside the plan area (``CROSSES_PLAN``); ingest loads it
  with a warning and only the part inside earns credit. Outside the plan is outside every
  Figure 5 zone too, so the same basin fails ``replacement_outside_figure5``.
* 6(f)(iii) and 5(c)(ii) ``infiltration_soils`` fail together on 24-015: all land within 25 ft
  of the central wetland is mapped as muck with a high water table (S-001) or C/D soil, so an
  infiltration feature that close is on unsuitable soil as well.
* 24-013's buffer is 20 m deep where it meets 24-007's at x = 2000, so its markers are more
  than 10 ft from 24-007's upland edge and do not count for that permit (24-007's marker on the
  lot line counts for 24-013, and 24-013's at x = 2250 for 24-015, with no effect on a figure).

Files: ``demo.gpkg`` (one layer per spatial layer), CSV for the attribute-only layers, and
``manifest.json`` (load order). Field convention: ``feature_key`` is each feature's natural key
(parcel: the normalized PIN; permit: permit_no; delineation: delineation_no; cwmp_area: the
name); a ``ref:L`` column ``X_id`` is written as ``X_key`` holding the referenced feature's
``feature_key``; text[] as ';'-joined text; jsonb as JSON text; dates as ISO text; booleans as
true/false.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import hashlib
import json
import os
import random
import re
import sys
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
import shapely
from shapely import affinity
from shapely.geometry import LineString, MultiLineString, MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from rulem_db.catalogue.layers import BY_NAME, LAYERS, Col, Layer, load_order

SRID = 26915
CRS = f"EPSG:{SRID}"
ORIGIN = (490_000.0, 5_002_000.0)  # south-west corner of the plan area, Lino Lakes, Anoka County
PLAN_SIZE = (2500.0, 2000.0)
PLAN_NAME = "ACD 53-62 CWMP demo area (synthetic)"
ANOKA_CO_CODE = "003"
COUNTY_MARGIN_M = 1000.0  # the plan area must lie at least this far inside Anoka County
DEFAULT_SEED = 5362
ACRE_M2 = 4046.8564224
FT_M = 0.3048
SQFT_PER_M2 = 1 / FT_M**2
GPKG_NAME = "demo.gpkg"

# Load order: every layer after the layers it references, as the inbox ingests a night's files
# (the catalogue's load_order(); manifest.json repeats it).
LOAD_ORDER: tuple[str, ...] = load_order()

# TR-55 Table 2-2a rows the demo's land_cover uses; core.tr55_cover must hold these codes.
# Curve numbers for hydrologic soil groups A, B, C, D.
TR55_COVER: dict[str, tuple[str, tuple[int, int, int, int]]] = {
    "impervious": ("Impervious areas: paved parking lots, roofs, driveways", (98, 98, 98, 98)),
    "open_space_good": ("Open space, good condition (grass cover > 75%)", (39, 61, 74, 80)),
}
BMP_DESIGN_STORM_IN = 2.8

Rect = tuple[float, float, float, float]  # (min x, min y, max x, max y), local metres
XY = tuple[float, float]

# --------------------------------------------------------------------------------------------
# The hand-checkable numbers live in cases.toml, beside this module: every permit's figures with
# the arithmetic behind them, as comments next to the values. Data, not code: nothing below
# reads them to draw a feature (tests/test_demo.py recomputes each from the written files).
# --------------------------------------------------------------------------------------------
CASES_FILE = Path(__file__).with_name("cases.toml")
OPTIONAL_CASE_KEYS = ("buffer", "markers")  # absent from a case in cases.toml: it has none


def _tuples(value: Any) -> Any:
    """TOML arrays as tuples, all the way down.

    Why: the cases were tuple literals before they became a data file, and their users rely on
    it (``case["fails"]`` compared with ``()``, members hashed into sets).
    """
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def read_cases(path: Path = CASES_FILE) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """(DEMO_CASES, PLAN_FACTS) from cases.toml: arrays as tuples, a missing buffer or markers as
    None (TOML has no null)."""
    with path.open("rb") as f:
        data = tomllib.load(f)
    cases: dict[str, dict[str, Any]] = _tuples(data["cases"])
    for case in cases.values():
        for key in OPTIONAL_CASE_KEYS:
            case.setdefault(key, None)
    return cases, _tuples(data["plan_facts"])


DEMO_CASES: dict[str, dict[str, Any]]
PLAN_FACTS: dict[str, Any]
DEMO_CASES, PLAN_FACTS = read_cases()

# --------------------------------------------------------------------------------------------
# Layout tables (local metres).
# --------------------------------------------------------------------------------------------
Ring = tuple[XY, ...]


def _r(x0: float, y0: float, x1: float, y1: float) -> Ring:
    """A rectangle as a ring; the parcel table reads better with corners than with boxes."""
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _row_r2_r3() -> list[tuple[str, Ring]]:
    """R2 (y 370-1000) and R3 (y 1000-1650): ten 250 m columns each, quarter-quarter style."""
    out: list[tuple[str, Ring]] = []
    for row, (y0, y1) in (("R2", (370.0, 1000.0)), ("R3", (1000.0, 1650.0))):
        out += [(f"{row}-{i:02d}", _r(250.0 * i, y0, 250.0 * (i + 1), y1)) for i in range(10)]
    return out


PARCEL_LAYOUT: tuple[tuple[str, Ring], ...] = (
    ("R1-01", _r(0, 0, 180, 340)),
    ("R1-02", _r(180, 0, 430, 340)),
    ("R1-03", ((430, 0), (640, 0), (700, 340), (430, 340))),  # slanted lot line
    ("R1-04", ((640, 0), (1000, 0), (1000, 340), (700, 340))),
    ("R1-05", _r(1000, 0, 1250, 340)),
    ("R1-06", _r(1250, 0, 1500, 340)),
    ("R1-07", _r(1500, 0, 1760, 340)),
    ("R1-08", ((1760, 0), (2000, 0), (2000, 240), (1900, 240), (1900, 340), (1760, 340))),
    ("R1-09", _r(1900, 240, 2000, 340)),  # homestead cut out of R1-08
    ("R1-10", _r(2000, 0, 2260, 340)),
    ("R1-11", _r(2260, 0, 2500, 340)),
    *_row_r2_r3(),
    ("R4-01", _r(0, 1650, 220, 2000)),
    ("R4-02", _r(220, 1650, 480, 2000)),
    ("R4-03", ((480, 1650), (740, 1650), (700, 2000), (480, 2000))),
    ("R4-04", ((740, 1650), (1000, 1650), (1000, 2000), (700, 2000))),
    ("R4-05", _r(1000, 1650, 1235, 2000)),
    ("R4-06", _r(1265, 1650, 1520, 2000)),
    ("R4-07", _r(1520, 1650, 1780, 2000)),
    ("R4-08", _r(1780, 1650, 2040, 2000)),
    ("R4-09", _r(2040, 1650, 2280, 2000)),
    ("R4-10", _r(2280, 1650, 2500, 2000)),
)
SPACED_PIN = "R1-09"  # delivered with spaces instead of dashes, to exercise normalization
# Site addresses: the street each row fronts, the house number from the lot's position (even
# on the south side of Main Street, odd on the north); owners are invented, several owning
# more than one lot (the map's search finds a parcel by either).
STREET_BY_ROW = {"R1": "Main Street", "R2": "Main Street", "R3": "Marsh View Lane",
                 "R4": "County Road 14"}
OWNERS = ("Anderson Family Trust", "Carlson, Erik & Maria", "Lindqvist Farms LLC",
          "Nguyen, Thanh", "Olson, Karen", "Rice Creek Holdings LLC", "Johnson, Peter & Ruth",
          "Schmidt Dairy Inc", "Peterson, Ole", "Hmong American Farmers Coop",
          "Bergstrom, Linnea", "Lino Lakes Land Co", "Kowalski, Anna", "Dahl, Marcus")

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

# Soils: key -> (rect, hole or None, mukey, musym, group, high groundwater, contaminated).
SoilRow = tuple[Rect, Rect | None, str, str, str, bool, bool]
SOILS: dict[str, SoilRow] = {
    "S-001": ((0, 860, 2500, 1140), None, "2427101", "1030", "A/D", True, False),  # muck
    "S-002": ((0, 0, 875, 860), None, "2427102", "NeB", "B", False, False),
    "S-003": ((875, 0, 1000, 860), None, "2427103", "KcA", "C", False, False),
    "S-004": ((1000, 0, 1750, 860), None, "2427104", "ZmB", "A", False, False),
    "S-005": ((1750, 0, 2500, 860), None, "2427102", "NeB", "B", False, False),
    "S-006": ((0, 1140, 1250, 2000), (100, 1800, 200, 1900), "2427103", "KcA", "C", False,
              False),
    "S-007": ((100, 1800, 200, 1900), None, "2427103", "KcA", "C", False, True),  # old dump
    "S-008": ((1250, 1140, 2000, 2000), None, "2427105", "GcA", "D", False, False),
    "S-009": ((2000, 1140, 2500, 2000), None, "2427106", "DuA", "A", True, False),
}

# Heritage: key -> (rect, rank, community kind, community name).
HERITAGE: dict[str, tuple[Rect, str, str, str]] = {
    "HA-001": ((1380, 60, 1500, 300), "BC", "upland", "Oak Savanna (Southern)"),
    "HA-002": ((780, 60, 960, 200), "C", "upland", "Oak Woodland-Brushland"),
    "HA-003": ((1270, 20, 1370, 100), "B", "wetland", "Tamarack Swamp (Southern)"),
    "HA-004": ((1300, 1050, 1500, 1180), "A", "wetland", "Sedge Meadow"),
}

FIGURE5: dict[str, tuple[Rect, str, str]] = {
    "F5-001": ((250, 690, 2000, 850), "South fringe restoration", "3"),
    "F5-002": ((700, 40, 1000, 300), "Main Street basin", "2"),
    "F5-003": ((1280, 130, 1440, 270), "Tamarack upland basin", "3"),
    "F5-004": ((2100, 1450, 2250, 1640), "North park basin", "3"),
    "F5-005": ((1050, 1250, 1350, 1450), "Lateral 2 restoration", "3"),
    "F5-006": ((2300, 1680, 2450, 1800), "East pasture basin", "3"),  # 24-011 digs type 2
}

CENTRAL_SEED: Rect = (220, 895, 2280, 1105)

# Ditches: key -> (line vertices, system id, permit or None, status).
MAIN_DITCH_PERMITS = (None, "24-001", "24-001", "24-002", "24-004", "24-005", "24-005",
                      "24-007", None, None)  # by R2 column: the site that determined it
EXTRA_DITCHES: dict[str, tuple[tuple[XY, ...], str | None, str | None, str]] = {
    "DT-011": (((660, 1100), (660, 1430)), "ACD 53-62 Lateral 1", None, "active"),
    "DT-012": (((900, 1150), (900, 1350)), "ACD 53-62 Lateral 2", None, "abandoned"),
    "DT-013": (((2200, 1100), (2200, 1300)), "ACD 53-62 Lateral 3", "24-003",
               "partially_abandoned"),
    "DT-014": (((1260, 330), (1490, 330)), None, "24-006", "active"),  # private field ditch
    "DT-015": (((1270, 1655), (1270, 1995)), None, "24-008", "active"),  # Lake Drive ditch
}

DISTRICT_PROJECT: tuple[str, Rect, str] = ("RCWD Lateral 2 wetland restoration",
                                           (1100, 1300, 1250, 1380), "2022-10-01")
SPECIES: tuple[str, Rect, str, str] = ("Emydoidea blandingii (Blanding's turtle)",
                                       (2040, 1340, 2160, 1460), "2023-06-12", "threatened")

MNRAM_FUNCTIONS = (
    "vegetative_diversity", "hydrologic_regime", "flood_attenuation", "downstream_water_quality",
    "wetland_water_quality", "shoreline_protection", "wildlife_habitat", "fish_habitat",
    "amphibian_habitat", "aesthetics_recreation_education", "groundwater_interaction",
)


@dataclass(frozen=True)
class Site:
    """One demo permit and everything it consists of, in local metres.

    A table of these, not a function per permit, so that each permit's numbers sit side by side
    and one builder makes every permit's features the same way. The defaults are the compliant
    choice; a case built to fail a check says so with the field that breaks it.
    """

    permit_no: str
    applicant: str
    description: str
    consultant: str
    parcels: tuple[str, ...]
    applied_on: str
    tep_on: str | None
    decided_on: str | None
    impacts: tuple[tuple[str, Rect], ...]  # (kind, rect)
    # (component, status, rect, status_on) or (..., planned Circular 39 type)
    replacements: tuple[tuple[str, str, Rect, str] | tuple[str, str, Rect, str, str], ...]
    subwatershed: Rect | None  # None: no stormwater plan submitted (5(c))
    receiving: str | None  # wetland key
    impervious: tuple[tuple[str, Rect], ...]  # (condition, rect)
    bmps: tuple[tuple[str, Rect, int, bool], ...]  # (kind, rect, volume ft^3, roof only)
    # bounce ft and inundation days, existing/proposed; None: no hydroperiod modelled
    hydro: tuple[float, float, float, float] | None
    buffer: tuple[Rect, ...] = ()
    buffer_public: bool = False
    markers: tuple[XY, ...] = ()
    marker_type: str = "free_standing"
    trails: tuple[tuple[Rect, float], ...] = ()  # (rect, width ft)
    structures: tuple[tuple[str, Rect, str | None, str], ...] = ()  # kind, rect, variance, exc.
    easement_gap: Rect | None = None
    declarations: tuple[str, ...] = ("buffer", "fertilizer_snow")
    buffer_grading: tuple[Rect, ...] = ()
    subdivision: bool = False
    species_assessment_on: str | None = None
    baseline_on: str | None = None
    status: str = "approved"
    grading: Rect | None = None  # the grading footprint; None: the subwatershed
    grading_alters_runoff: bool = True  # 2(a)(iii)
    buffer_declared: bool = True  # the buffer's declaration is recorded (6)
    vegetation_plan: bool = True  # a buffer's vegetation management plan is approved (6(d))
    # The on-site ditch determination (3(f)): "ditch" for the first eight permits (a ditch
    # feature credited to the permit), "permit" (the permit's ditch_determined_on), or None.
    ditch_determination: str | None = "ditch"
    easement: bool = True  # recorded (a condition of issuance: none while under review)
    land_cover_gap: Rect | None = None  # part of the subwatershed the land cover leaves blank
    # Performance standards (keys of PERFORMANCE_STANDARDS) its certified replacement did not
    # meet in its first monitoring year (7(e) replacement_certification).
    monitoring_not_met: tuple[str, ...] = ()
    # Monitoring years of its certified replacement with no visit (7(e) monitoring_due).
    monitoring_skipped: tuple[int, ...] = ()
    # The surety posted on this date rather than at issuance (7(e) impact_surety), and
    # released when the replacement was certified (7(e) surety_held).
    surety_posted_on: str | None = None
    surety_released_on_certification: bool = False
    # Declarations whose condition of issuance stays open past its due date (10).
    open_conditions: tuple[str, ...] = ()
    # The buffer declaration states the 6(b) subdivision clause (6); who executed a
    # public-land agreement for the District (10: the board, never staff).
    subdivision_clause: bool = True
    agreement_executed_by: str = "board"
    # Permit records (_build_records): the kinds left out of what the permit needs, the
    # District's requests as (kind, title, answered), and facts that differ from the
    # compliant ones as (kind, key, value).
    records_missing: tuple[str, ...] = ()
    extra_records: tuple[str, ...] = ()
    requests: tuple[tuple[str, str, bool], ...] = ()
    facts: tuple[tuple[str, str, Any], ...] = ()


def _along(y: float, xs: Iterable[float]) -> tuple[XY, ...]:
    """Markers on a straight upland edge at height y."""
    return tuple((float(x), y) for x in xs)


SITES: tuple[Site, ...] = (
    Site(
        "24-001", "Rice Creek Meadows LLC",
        "Two-lot rural subdivision: fill of a farmed seasonal basin, on-site replacement basin",
        "Sandplain Ecological Services", ("R2-01", "R2-02"),
        "2024-01-15", "2024-03-12", "2024-04-09",
        impacts=(("fill", (300, 500, 400, 600)),),
        replacements=(("wetland", "certified", (450, 760, 650, 840), "2025-06-30"),
                      ("upland", "certified", (650, 760, 700, 840), "2025-06-30")),
        subwatershed=(280, 480, 420, 620), receiving="W-001",
        impervious=(("proposed", (330, 540, 360, 570)),),
        bmps=(("infiltration", (370, 600, 410, 615), 6400, False),
              ("pretreatment", (362, 600, 368, 615), 1200, False)),
        hydro=(1.0, 1.3, 4.0, 5.0),
        buffer=((250, 864, 750, 880), (600, 930, 630, 960)),
        markers=_along(864, range(250, 751, 50)),
        subdivision=True, baseline_on="2024-04-09",
        requests=(("requested_submittal", "Geotechnical report on the fill of W-010", True),),
    ),
    Site(
        "24-002", "Hodgson Road Partners",
        "Farmstead addition: fill of a wet meadow on R2-03, replacement on the owner's parcel "
        "south of Main Street, topped up with 0.15 ac of credit from 24-001",
        "Sandplain Ecological Services", ("R2-03", "R1-04"),
        "2024-02-05", "2024-03-12", "2024-05-14",
        impacts=(("fill", (800, 450, 900, 500)),),
        replacements=(("wetland", "certified", (800, 100, 900, 145), "2025-07-01"),),
        subwatershed=(800, 420, 950, 520), receiving="W-002",
        impervious=(("proposed", (810, 490, 840, 515)), ("existing", (920, 430, 940, 450))),
        bmps=(("infiltration", (820, 425, 860, 440), 3200, False),
              ("pretreatment", (845, 445, 860, 455), 500, False),
              ("biofiltration", (890, 490, 910, 510), 1900, False),
              ("wet_pond", (885, 425, 915, 470), 4700, False)),
        hydro=(0.8, 1.1, 3.0, 4.0),
        buffer=((750, 864, 1000, 880),),
        markers=_along(864, range(750, 1001, 50)),
        declarations=("buffer", "fertilizer_snow", "buffer_restoration_3yr"),
        buffer_grading=((900, 866, 960, 878),),
    ),
    Site(
        "24-003", "City of Lino Lakes",
        "Park improvements: parking lot, boardwalk, a lowered outlet that partially drains a "
        "shallow marsh",
        "Rice Creek Wetland Consulting", ("R3-08",),
        "2024-02-20", "2024-04-09", "2024-06-11",
        impacts=(("drain_partial", (2050, 1350, 2150, 1450)),),
        replacements=(("wetland", "certified", (2160, 1500, 2240, 1580), "2025-06-15"),),
        subwatershed=(2020, 1200, 2120, 1300), receiving="W-004",
        impervious=(("proposed", (2030, 1210, 2060, 1235)),),
        bmps=(("biofiltration", (2070, 1210, 2090, 1230), 400, False),
              ("wet_pond", (2070, 1250, 2110, 1290), 1500, False)),
        hydro=(0.6, 0.6, 2.0, 2.0),
        buffer=((2000, 1120, 2250, 1145),), buffer_public=True,
        markers=_along(1145, range(2000, 2251, 50)), marker_type="flush",
        trails=(((2000, 1136, 2250, 1136 + 8 * FT_M), 8.0),),
        # the boardwalk, suspended over the buffer (6(f)(i)), ends at the marsh edge: a
        # structure in wetland fills it, suspended or not (docs/ledger.md decision 18)
        structures=(("passive_recreation", (2120, 1120, 2124, 1160), None, "suspended_6fi"),),
        species_assessment_on="2024-05-20",
        requests=(("species_assessment", "Blanding's turtle survey", True),
                  ("abandonment_petition", "Partial abandonment of ACD 53-62 Lateral 3", True)),
    ),
    Site(
        "24-004", "Lakeview Builders Inc.",
        "Single-family lot: fill of a seasonal basin, a 12 ft trail in the buffer",
        "Sandplain Ecological Services", ("R2-04",),
        "2024-03-04", "2024-04-09", "2024-06-11",
        impacts=(("fill", (1050, 550, 1150, 620)),),
        replacements=(("wetland", "certified", (1050, 720, 1200, 780), "2025-07-15"),),
        subwatershed=(1030, 520, 1170, 650), receiving="W-002",
        impervious=(("proposed", (1060, 560, 1090, 585)),),
        bmps=(("infiltration", (1100, 630, 1140, 645), 1700, False),
              ("pretreatment", (1090, 630, 1098, 645), 300, False)),
        hydro=(0.8, 1.0, 3.0, 4.0),
        buffer=((1000, 880 - 16 - 12 * FT_M, 1150, 880), (1150, 880 - 40 * FT_M, 1250, 880)),
        markers=(*_along(880 - 16 - 12 * FT_M, range(1000, 1151, 50)),
                 *_along(880 - 40 * FT_M, range(1150, 1251, 50))),
        trails=(((1000, 880 - 16 - 12 * FT_M, 1150, 864), 12.0),),
        monitoring_not_met=("vegetation",),
        requests=(("abandonment_petition",
                   "Partial abandonment of ACD 53-62 where it crosses R2-04", False),),
    ),
    Site(
        "24-005", "North Metro Homes Inc.",
        "Two-lot subdivision: pond excavated in a shallow open water basin, sanitary forcemain "
        "trenched across the marsh under a variance, with no impact polygon drawn for it",
        "Rice Creek Wetland Consulting", ("R2-05", "R2-06"),
        "2024-03-18", "2024-05-14", "2024-07-09",
        impacts=(("excavate", (1300, 500, 1360, 550)),),
        replacements=(("wetland", "certified", (1400, 740, 1500, 800), "2025-07-15"),
                      ("wetland", "constructed", (1550, 740, 1650, 800), "2025-09-30")),
        subwatershed=(1380, 420, 1480, 520), receiving="W-003",
        impervious=(("proposed", (1390, 430, 1420, 455)),),
        bmps=(("infiltration", (1430, 480, 1470, 510), 1700, False),
              ("pretreatment", (1430, 465, 1470, 475), 300, False)),
        hydro=(1.1, 1.6, 5.0, 10.0),
        buffer=((1250, 864, 1750, 880),),
        markers=_along(864, (1250, 1300, 1350, 1400, 1450, 1550, 1700, 1750)),
        structures=(("utility", (1599, 820, 1602, 1000), "V-24-03", "public_utility_6fii"),),
        subdivision=True,
        records_missing=("marker_design",),
        facts=(("lot_monumentation", "lots_monumented", 1),),
    ),
    Site(
        "24-006", "Tamarack Ridge LLC",
        "Pole barn pad on the margin of a tamarack swamp; replacement basin dug into oak savanna",
        "Anoka Sand Plain Surveys", ("R1-06",),
        "2024-04-01", "2024-07-23", "2024-07-09",
        impacts=(("fill", (1270, 20, 1310, 100)),),
        replacements=(("wetland", "certified", (1300, 150, 1420, 250), "2025-08-01"),),
        subwatershed=(1255, 260, 1375, 320), receiving="W-016",
        impervious=(("proposed", (1260, 270, 1290, 295)),),
        bmps=(("infiltration", (1310, 300, 1360, 315), 1700, False),
              ("pretreatment", (1300, 300, 1308, 315), 300, False)),
        hydro=(0.3, 0.3, 1.0, 1.0),
        declarations=("fertilizer_snow",),
    ),
    Site(
        "24-007", "Peltier Lake Properties LLC",
        "Single-family lot: drain tile that fully drains a wet meadow",
        "Anoka Sand Plain Surveys", ("R2-07",),
        "2024-05-06", "2024-06-11", "2024-08-13",
        impacts=(("drain_full", (1800, 500, 1880, 560)),),
        replacements=(("wetland", "certified", (1800, 740, 1950, 800), "2025-08-01"),
                      ("wetland", "proposed", (1955, 700, 1995, 800), "2024-08-13")),
        subwatershed=(1900, 420, 1990, 520), receiving="W-004",
        impervious=(("proposed", (1910, 430, 1940, 455)),),
        bmps=(("infiltration", (1945, 430, 1960, 445), 300, True),
              ("infiltration", (1950, 480, 1985, 510), 3300, False),
              ("pretreatment", (1940, 480, 1948, 510), 600, False)),
        hydro=(0.6, 0.6, 2.0, 2.0),
        buffer=((1750, 864, 2000, 880),),
        markers=_along(864, range(1750, 2001, 50)),
        easement_gap=(1900, 864, 1940, 910),
        declarations=("buffer",),
        open_conditions=("fertilizer_snow",), surety_posted_on="2024-10-15",
    ),
    Site(
        "24-008", "Centerville Road Commercial LLC",
        "Commercial building with an access road across a shallow marsh",
        "Rice Creek Wetland Consulting", ("R4-06",),
        "2024-11-04", "2025-01-14", "2025-03-18",
        impacts=(("fill", (1320, 1724, 1360, 1736)),),
        replacements=(),
        subwatershed=(1360, 1680, 1500, 1800), receiving="W-017",
        impervious=(("proposed", (1420, 1700, 1480, 1750)),
                    ("proposed", (1265, 1724, 1420, 1736))),
        bmps=(("biofiltration", (1380, 1760, 1400, 1775), 2000, False),
              ("wet_pond", (1420, 1760, 1490, 1795), 20500, False)),
        hydro=(1.2, 2.0, 5.0, 6.0),
        structures=(("road", (1265, 1724, 1420, 1736), None, "none"),),
        declarations=("fertilizer_snow",),
        records_missing=("corps_approval",),
        facts=(("rate_control", "existing_cfs", {"2": 3.4, "10": 8.1, "100": 16.9}),
               ("rate_control", "proposed_cfs", {"2": 3.2, "10": 7.9, "100": 18.2})),
    ),
    # ---- added to fail every remaining check; each on parcels no other permit works ----
    Site(
        "24-009", "Golden Lake Estates LLC",
        "House and driveway next to a seasonal basin: an incomplete application under review "
        "(no type determination or functional assessment of the basin, no ditch "
        "determination, no stormwater plan)",
        "Golden Lake Land Surveying", ("R1-01",),
        "2024-11-12", None, None,
        impacts=(), replacements=(),
        subwatershed=None, receiving=None,
        impervious=(("proposed", (20, 250, 50, 275)),),
        bmps=(), hydro=None,
        grading=(10, 230, 80, 300),
        declarations=(), status="under_review", ditch_determination=None, easement=False,
        records_missing=("rate_control", "groundwater"),
        requests=(("species_assessment", "Protected species assessment of the basin margin",
                   False),
                  ("requested_submittal", "Soil borings at the house pad", False)),
    ),
    Site(
        "24-010", "Birch Street Storage LLC",
        "Pole barn on upland far from any wetland; its grading does not change runoff into a "
        "wetland: no 2(a) trigger, a Rule M permit was not needed",
        "Anoka Sand Plain Surveys", ("R1-02",),
        "2024-11-18", "2025-02-11", "2025-03-11",
        impacts=(), replacements=(),
        subwatershed=(190, 170, 290, 250), receiving=None,
        impervious=(("proposed", (200, 200, 230, 225)),),
        bmps=(("infiltration", (250, 180, 280, 195), 3300, False),
              ("pretreatment", (240, 180, 248, 195), 600, False)),
        hydro=None, grading_alters_runoff=False,
        declarations=("fertilizer_snow",), ditch_determination="permit",
    ),
    Site(
        "24-011", "Rehbein Hobby Farm",
        "Machine shed and a wetland restoration basin banked as credit; the basin reaches "
        "30 m past the CWMP boundary and digs a wet meadow where Figure 5 plans a shallow marsh",
        "Rice Creek Wetland Consulting", ("R4-10",),
        "2024-11-25", "2025-02-11", "2025-03-18",
        impacts=(),
        replacements=(("wetland", "certified", (2330, 1700, 2530, 1780), "2025-10-15", "2"),),
        subwatershed=(2300, 1850, 2420, 1960), receiving="W-004",
        impervious=(("proposed", (2320, 1870, 2350, 1895)),),
        bmps=(("biofiltration", (2370, 1870, 2390, 1890), 400, False),
              ("wet_pond", (2360, 1910, 2400, 1950), 1500, False)),
        hydro=(0.6, 0.6, 2.0, 2.0),
        declarations=("fertilizer_snow",), ditch_determination="permit",
        monitoring_skipped=(2025,),
    ),
    Site(
        "24-012", "Sunrise Ridge Townhomes LLC",
        "Townhome building on sand: the infiltration basin is smaller than the design storm's "
        "runoff and has no forebay; the receiving meadow stays flooded 4 days longer",
        "Sandplain Ecological Services", ("R1-05",),
        "2024-12-02", "2025-03-11", "2025-04-08",
        impacts=(), replacements=(),
        subwatershed=(1020, 230, 1160, 330), receiving="W-002",
        impervious=(("proposed", (1030, 250, 1060, 275)),),
        bmps=(("infiltration", (1100, 240, 1140, 255), 1200, False),),
        hydro=(0.8, 1.2, 3.0, 7.0),
        declarations=("fertilizer_snow",), ditch_determination="permit",
        facts=(("site_design", "minimize_impervious", None),),
    ),
    Site(
        "24-013", "Peltier Lake Properties LLC",
        "Single-family lot on the marsh: the buffer pinches to 6 m behind the house, and a "
        "garden shed stands in it",
        "Anoka Sand Plain Surveys", ("R2-08",),
        "2024-12-09", "2025-03-11", "2025-04-08",
        impacts=(), replacements=(),
        subwatershed=(2080, 500, 2220, 620), receiving="W-004",
        impervious=(("proposed", (2100, 560, 2130, 585)),),
        bmps=(("infiltration", (2150, 520, 2190, 540), 5200, False),
              ("pretreatment", (2140, 520, 2148, 540), 900, False)),
        hydro=(0.6, 0.6, 2.0, 2.0),
        buffer=((2000, 860, 2200, 880), (2200, 874, 2250, 880)),
        markers=(*_along(860, range(2000, 2201, 50)), *_along(874, (2225, 2250))),
        structures=(("other", (2100, 864, 2110, 870), None, "none"),),
        ditch_determination="permit",
        subdivision_clause=False, extra_records=("buffer_equivalence",),
    ),
    Site(
        "24-014", "City of Lino Lakes",
        "Public works yard north of the marsh: the buffer is drawn and marked, but the "
        "agreement in place of its declaration was signed by District staff, its vegetation "
        "plan never approved, and it was re-graded without any 6(e) plan or the three-year "
        "restoration declaration",
        "Golden Lake Land Surveying", ("R3-01",),
        "2024-12-16", "2025-04-08", "2025-05-13",
        impacts=(), replacements=(),
        subwatershed=(280, 1260, 400, 1360), receiving="W-001",
        impervious=(("proposed", (300, 1300, 330, 1325)),),
        bmps=(("biofiltration", (340, 1300, 370, 1320), 2000, False),
              ("wet_pond", (340, 1270, 390, 1295), 8000, False)),
        hydro=(0.9, 1.1, 3.0, 4.0),
        buffer=((250, 1120, 500, 1136),),
        markers=_along(1136, range(250, 501, 50)),
        buffer_grading=((300, 1122, 360, 1134),),
        declarations=("fertilizer_snow", "buffer"), vegetation_plan=False,
        ditch_determination="permit", buffer_public=True, agreement_executed_by="staff",
        records_missing=("buffer_disturbance",), open_conditions=("buffer_restoration_3yr",),
    ),
    Site(
        "24-015", "Clearwater Creek Homes Inc.",
        "House at the corner of the swamp: a roof rain garden dug in the buffer 3 m from the "
        "wetland, on muck with a high water table, and no wet pond for the rest of the runoff",
        "Rice Creek Wetland Consulting", ("R2-09",),
        "2024-12-20", "2025-04-08", "2025-05-13",
        impacts=(), replacements=(),
        subwatershed=(2300, 900, 2400, 980), receiving="W-004",
        impervious=(("proposed", (2340, 920, 2370, 945)),),
        bmps=(("infiltration", (2303, 920, 2309, 940), 300, True),
              ("biofiltration", (2330, 960, 2350, 975), 2000, False)),
        hydro=(0.6, 0.6, 2.0, 2.0),
        grading=(2330, 910, 2380, 955),
        buffer=((2250, 864, 2316, 880), (2300, 880, 2316, 1000)),
        markers=((2250, 864), (2300, 864), (2316, 900), (2316, 950), (2316, 1000)),
        ditch_determination="permit",
        facts=(("groundwater", "existing_flow", 850),
               ("groundwater", "proposed_flow", 680)),
    ),
    Site(
        "24-016", "Marshan Farms Inc.",
        "After-the-fact permit for a machine shed and yard grading done in June 2019 without "
        "a permit, measured as of the work: no approved delineation covered the site then",
        "Anoka Sand Plain Surveys", ("R1-07",),
        "2024-12-30", "2025-04-08", "2025-05-13",
        impacts=(), replacements=(),
        subwatershed=(1520, 230, 1660, 330), receiving="W-003",
        impervious=(("proposed", (1530, 250, 1560, 275)),),
        bmps=(("infiltration", (1600, 240, 1640, 255), 1700, False),
              ("pretreatment", (1590, 240, 1598, 255), 300, False)),
        hydro=(1.1, 1.6, 5.0, 10.0),
        declarations=("fertilizer_snow",), ditch_determination="permit",
        baseline_on="2019-06-15", records_missing=("erosion_control_plan",),
        land_cover_gap=(1640, 310, 1660, 330),
    ),
    Site(
        "24-017", "Birch Street Builders LLC",
        "Lot fill in a seasonal basin; the replacement it claims is ground of the District's "
        "Lateral 2 restoration, already counted as the District's credit",
        "Sandplain Ecological Services", ("R4-08",),
        "2025-01-13", "2025-03-11", "2025-04-08",
        impacts=(("fill", (1800, 1750, 1850, 1800)),),
        replacements=(("wetland", "certified", (1150, 1300, 1250, 1380), "2025-09-15"),),
        subwatershed=None, receiving=None, impervious=(), bmps=(), hydro=None,
        declarations=(), ditch_determination="permit",
        surety_released_on_certification=True,
    ),
    Site(
        "25-001", "Rice Creek Meadows LLC",
        "Phase 2 of 24-001's subdivision: the W-010 fill filed again (24-001 was charged for "
        "it), and a replacement cell south of 24-001's basin that the as-built delineation "
        "of the site (D-2025-03) maps as upland",
        "Sandplain Ecological Services", ("R1-03",),
        "2025-02-03", "2025-05-13", "2025-06-10",
        impacts=(("fill", (300, 500, 400, 600)),),
        replacements=(("wetland", "certified", (520, 690, 620, 750), "2025-08-12"),),
        subwatershed=None, receiving=None, impervious=(), bmps=(), hydro=None,
        declarations=(), ditch_determination="permit", easement=False,
    ),
)
FIRST_EDITION = 8  # SITES[:8] are the demo's first eight permits (see build)
CROSSES_PLAN: tuple[str, ...] = ("24-011",)  # permits whose replacement crosses the boundary
OUTSIDE_PLAN_MAX_M = 50.0
SITE_BY_PERMIT: dict[str, Site] = {s.permit_no: s for s in SITES}

# Replacement records (_build_permit_records): monitoring standards judged each year, the
# surety per acre of replacement, and the dates that follow from a replacement's status date.
PERFORMANCE_STANDARDS: dict[str, str] = {
    "hydrology": "hydrology: saturated within 12 in of the surface for 14 consecutive days of "
                 "the growing season",
    "vegetation": "vegetation: native hydrophytes cover at least 50 %, invasive species less "
                  "than 10 %",
}
MONITORING_DAY = "09-20"  # the yearly monitoring visit, late growing season
MONITORING_FAILURE_NOTE = ("reed canary grass covers about 35 % of the basin; the District asks "
                           "for control and reseeding before the surety is released")
MONITORING_YEARS = 5  # the parameter monitoring_years (sql/030): years from certification
CONSTRUCTION_TO_CERTIFIED = 60  # days between construction and certification
IMPACT_DAYS = 30  # days from the start of a permit's impact to its completion
SURETY_USD_PER_ACRE = 10_000.0

TRANSFERS: tuple[tuple[str, str, float, str], ...] = (
    ("24-001", "24-002", 0.15, "2025-07-10"),
    ("24-001", "24-008", 0.15, "2025-07-10"),
    # within 24-005's surplus when recorded (1.4826 - 0.7413 = 0.7413), before its forcemain
    # (a structure, loaded later) was found to fill 0.0890 ac of W-003: 0.6523 left, so the
    # transfer does not stand and 24-017 gets 7(b) transfer_unbacked
    ("24-005", "24-017", 0.7, "2025-08-01"),
)
# Transfers recorded within their giver's surplus that no longer stand (docs/ledger.md
# decision 9): (giver, receiver).
UNBACKED_TRANSFERS: frozenset[tuple[str, str]] = frozenset({("24-005", "24-017")})

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


# --------------------------------------------------------------------------------------------
# Reading the real county outline.
# --------------------------------------------------------------------------------------------
def shared_dir() -> Path:
    """The team's read-only shared folder, found from the repository (override:
    RULEM_SHARED_DIR), so the demo never needs a copy of the real data in the project."""
    env = os.environ.get("RULEM_SHARED_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared"


def counties_dump_path(shared: Path | None = None) -> Path:
    """Where the metro counties shp2pgsql dump lives in the shared folder."""
    return (shared or shared_dir()) / "data" / "real" / "mn_metro_counties" / "counties.sql.gz"


_INSERT = re.compile(
    r'^INSERT INTO "public"\."counties" \((?P<cols>[^)]*)\) VALUES \((?P<vals>.*)\);$')
_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def parse_counties_dump(text: str) -> dict[str, tuple[dict[str, str], BaseGeometry]]:
    """County rows of a shp2pgsql dump by co_code: attributes and geometry (hex EWKB).

    Parsed in Python so that neither the demo nor its tests need a database.
    """
    out: dict[str, tuple[dict[str, str], BaseGeometry]] = {}
    for line in text.splitlines():
        m = _INSERT.match(line.strip())
        if not m:
            continue
        cols = [c.strip().strip('"') for c in m.group("cols").split(",")]
        vals = [v.replace("''", "'") for v in _QUOTED.findall(m.group("vals"))]
        if len(cols) != len(vals):
            raise ValueError(f"cannot parse counties row: {line[:120]}...")
        row = dict(zip(cols, vals, strict=True))
        geom = shapely.from_wkb(row.pop("geom"))
        out[row["co_code"]] = (row, geom)
    return out


def anoka_outline(shared: Path | None = None) -> BaseGeometry:
    """Anoka County's outline (EPSG:26915) from the real metro counties dump."""
    path = counties_dump_path(shared)
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = parse_counties_dump(f.read())
    if ANOKA_CO_CODE not in rows:
        raise ValueError(f"{path}: no county with co_code {ANOKA_CO_CODE!r}")
    return rows[ANOKA_CO_CODE][1]


def plan_area_geometry() -> Polygon:
    """The plan area in EPSG:26915."""
    return to_world(box(0.0, 0.0, *PLAN_SIZE))


def check_inside_county(county: BaseGeometry, margin_m: float = COUNTY_MARGIN_M) -> float:
    """Distance (m) from the plan area to the county line; raise unless well inside."""
    plan = plan_area_geometry()
    if not county.contains(plan):
        raise ValueError("the demo plan area is not inside Anoka County")
    distance = float(county.boundary.distance(plan))
    if distance < margin_m:
        raise ValueError(f"the demo plan area is only {distance:.0f} m inside Anoka County")
    return distance


# --------------------------------------------------------------------------------------------
# Geometry helpers.
# --------------------------------------------------------------------------------------------
def to_world(geom: BaseGeometry) -> BaseGeometry:
    """Local plan metres to EPSG:26915."""
    return affinity.translate(geom, xoff=ORIGIN[0], yoff=ORIGIN[1])


def to_local(geom: BaseGeometry) -> BaseGeometry:
    """EPSG:26915 to local plan metres (for tests and for reading the numbers by hand)."""
    return affinity.translate(geom, xoff=-ORIGIN[0], yoff=-ORIGIN[1])


def rect(r: Rect, hole: Rect | None = None) -> Polygon:
    """A rectangle, optionally with a rectangular hole."""
    if hole is None:
        return box(*r)
    return Polygon(box(*r).exterior.coords, [box(*hole).exterior.coords])


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if isinstance(geom, Polygon):
        return [geom] if geom.area > 0 else []
    return [p for g in getattr(geom, "geoms", ()) for p in _polygons(g)]


def polygonal(geom: BaseGeometry) -> MultiPolygon:
    """The polygon parts of geom, merged, as a MultiPolygon: overlays of touching rectangles
    leave line and point debris that no polygon layer may hold."""
    merged = unary_union(_polygons(geom))
    return MultiPolygon(_polygons(merged))


def fill_holes(geom: BaseGeometry) -> MultiPolygon:
    """geom with its interior rings filled: the upland a wetland encloses belongs in the
    easement (8)."""
    return MultiPolygon([Polygon(p.exterior.coords) for p in polygonal(geom).geoms])


def acres(area_m2: float) -> float:
    """Square metres to acres, the unit of the ledger."""
    return area_m2 / ACRE_M2


def runoff_in(cn: int, p_in: float = BMP_DESIGN_STORM_IN) -> float:
    """TR-55 runoff depth (in) for a curve number, the spec's 5(c) equation."""
    s = 1000.0 / cn - 10.0
    if p_in <= 0.2 * s:
        return 0.0
    return (p_in - 0.2 * s) ** 2 / (p_in + 0.8 * s)


def curve_number(cover_class: str, group: str) -> int:
    """CN of a cover class on a soil group; a dual group counts as its undrained D class."""
    letter = "D" if "/" in group else group
    return TR55_COVER[cover_class][1]["ABCD".index(letter)]


# --------------------------------------------------------------------------------------------
# Feature collection.
# --------------------------------------------------------------------------------------------
def file_field(col: Col) -> str:
    """The file's field name for a catalogue column: a reference X_id travels as X_key."""
    if col.ref_layer:
        return col.name[: -len("_id")] + "_key" if col.name.endswith("_id") else col.name + "_key"
    return col.name


@dataclass
class Feature:
    """One feature of a demo layer: natural key, local geometry, attributes by file field."""

    key: str
    geom: BaseGeometry | None
    attrs: dict[str, Any]


class Collector:
    """Features by layer, in the order made (which is the order written: determinism)."""

    def __init__(self) -> None:
        self.layers: dict[str, list[Feature]] = {layer.name: [] for layer in LAYERS}
        self._fields = {layer.name: {file_field(c) for c in layer.columns} for layer in LAYERS}
        self._counters: dict[str, int] = {}

    def next_key(self, prefix: str, start: int = 1) -> str:
        """The next sequential key with prefix, e.g. 'I-003'."""
        n = self._counters.get(prefix, start - 1) + 1
        self._counters[prefix] = n
        return f"{prefix}-{n:03d}"

    def add(self, layer: str, key: str, geom: BaseGeometry | None = None, **attrs: Any) -> str:
        """Add a feature; unknown field names are an error so a typo cannot pass silently."""
        unknown = set(attrs) - self._fields[layer]
        if unknown:
            raise KeyError(f"layer {layer} has no fields {sorted(unknown)}")
        if any(f.key == key for f in self.layers[layer]):
            raise KeyError(f"duplicate feature_key {key!r} in layer {layer}")
        self.layers[layer].append(Feature(key, geom, attrs))
        return key

    def geoms(self, layer: str, **match: Any) -> list[BaseGeometry]:
        """Geometries of a layer's features whose attributes equal match."""
        return [f.geom for f in self.layers[layer]
                if f.geom is not None and all(f.attrs.get(k) == v for k, v in match.items())]


# --------------------------------------------------------------------------------------------
# Builders: one per theme, each small.
# --------------------------------------------------------------------------------------------
def pin_for(layout_id: str) -> str:
    """The raw Anoka-style PIN (section-township-range-quarter-parcel) of a layout parcel.

    The four plan quadrants stand for sections 15, 14 (north) and 22, 23 (south) of T31N
    R22W; the quarter and quarter-quarter digits (1 NE, 2 NW, 3 SW, 4 SE) follow from the
    parcel's centroid, and the last four digits count parcels within that quarter-quarter.
    """
    return _PINS[layout_id]


def _quarter(u: float, v: float) -> int:
    return (2 if u < 0.5 else 1) if v >= 0.5 else (3 if u < 0.5 else 4)


def _compute_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    seq: dict[tuple[int, str], int] = {}
    for layout_id, ring in PARCEL_LAYOUT:
        c = Polygon(ring).centroid
        west, north = c.x < 1250.0, c.y >= 1000.0
        section = {(True, True): 15, (False, True): 14, (True, False): 22,
                   (False, False): 23}[(west, north)]
        u = (c.x - (0.0 if west else 1250.0)) / 1250.0
        v = (c.y - (1000.0 if north else 0.0)) / 1000.0
        qq = f"{_quarter(u, v)}{_quarter((u * 2) % 1, (v * 2) % 1)}"
        n = seq[(section, qq)] = seq.get((section, qq), 0) + 1
        sep = " " if layout_id == SPACED_PIN else "-"
        pins[layout_id] = sep.join((f"{section:02d}", "31", "22", qq, f"{n:04d}"))
    return pins


_PINS = _compute_pins()


def normalize_pin(pin: str) -> str:
    """The matching key of a PIN: punctuation and spaces removed, upper case."""
    return re.sub(r"[^0-9A-Za-z]", "", pin).upper()


def parcel_key(layout_id: str) -> str:
    """A layout parcel's feature_key, its normalized PIN."""
    return normalize_pin(pin_for(layout_id))


def parcel_geometry(layout_id: str) -> Polygon:
    """A layout parcel's polygon, local metres."""
    return Polygon(dict(PARCEL_LAYOUT)[layout_id])


def _add_pins_to_cases() -> None:
    """cases.toml names parcels by layout id (readable); tests elsewhere match on PINs."""
    for case in DEMO_CASES.values():
        case["pins"] = tuple(parcel_key(p) for p in case["parcels"])
        case["credit_by_pin_acres"] = {parcel_key(p): a
                                       for p, a in case["credit_by_parcel_acres"].items()}


_add_pins_to_cases()


def _build_frame(c: Collector) -> None:
    """Plan area, central seed and parcels: the frame everything else sits in."""
    c.add("cwmp_area", PLAN_NAME, box(0.0, 0.0, *PLAN_SIZE), name=PLAN_NAME,
          adopted_on="2004-01-28")
    c.add("central_wetland_seed", "CWS-001", rect(CENTRAL_SEED),
          name="ACD 53-62 central wetland complex (CWMP Map 2)")
    for i, (layout_id, ring) in enumerate(PARCEL_LAYOUT):
        pin = pin_for(layout_id)
        c.add("parcel", normalize_pin(pin), Polygon(ring), pin=pin,
              pin_normalized=normalize_pin(pin), site_address=site_address(layout_id, ring),
              owner_name=OWNERS[i * 5 % len(OWNERS)])


def site_address(layout_id: str, ring: Ring) -> str:
    """A lot's invented address: its row's street, a number from its centre's position."""
    row = layout_id[:2]
    number = 100 + 2 * int(Polygon(ring).centroid.x // 10) + (row in ("R2", "R4"))
    return f"{number} {STREET_BY_ROW[row]}"


def _build_context(c: Collector) -> None:
    """Soils, Natural Heritage communities and Figure 5 zones (CWMP maps)."""
    for key, (r, hole, mukey, musym, group, high_gw, contaminated) in SOILS.items():
        c.add("soil", key, rect(r, hole), mukey=mukey, musym=musym, hydrologic_soil_group=group,
              high_groundwater=high_gw, contaminated=contaminated)
    for key, (r, rank, kind, name) in HERITAGE.items():
        c.add("heritage_area", key, rect(r), rank=rank, community_kind=kind,
              community_name=name, source_map="CWMP Map 1")
    for key, (r, zone, planned) in FIGURE5.items():
        c.add("figure5_area", key, rect(r), zone_name=zone, planned_type=planned)


def _expires(decided_on: str) -> str:
    return f"{int(decided_on[:4]) + 3}{decided_on[4:]}"


def _build_permits(c: Collector) -> None:
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
    """A decided permit's impact began the day its conditions were due (``_recorded_on``) and
    was completed IMPACT_DAYS later; no impact, or undecided: none."""
    if not s.impacts or s.decided_on is None:
        return {"impact_started_on": None, "impact_completed_on": None}
    started = date.fromisoformat(_recorded_on(s))
    return {"impact_started_on": started.isoformat(),
            "impact_completed_on": (started + timedelta(days=IMPACT_DAYS)).isoformat()}


def _study_area(key: str) -> BaseGeometry:
    if key == "D-2019-01":
        return box(0.0, 0.0, *PLAN_SIZE)
    if key == "D-2025-03":
        return unary_union([parcel_geometry(p) for p in SITE_BY_PERMIT["24-001"].parcels])
    return parcel_geometry("R4-08")


def _build_delineations(c: Collector, seed: int) -> None:
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


def _build_assessments(c: Collector, rng: random.Random) -> None:
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


def _build_ditches(c: Collector) -> None:
    """ACD 53-62 in segments (one per R2 column, each credited to the on-site determination
    that found it, 3(f)) and the laterals and private ditches."""
    for i, permit in enumerate(MAIN_DITCH_PERMITS):
        line = LineString([(250.0 * i, 990.0), (250.0 * (i + 1), 990.0)])
        _add_ditch(c, f"DT-{i + 1:03d}", line, "ACD 53-62", permit, "active")
    for key, (coords, system, permit, status) in EXTRA_DITCHES.items():
        _add_ditch(c, key, LineString(coords), system, permit, status)


def _add_ditch(c: Collector, key: str, line: LineString, system: str | None,
               permit: str | None, status: str) -> None:
    site = SITE_BY_PERMIT.get(permit) if permit else None
    c.add("ditch", key, MultiLineString([line]), system_id=system, permit_key=permit,
          determined_on=site.applied_on if site else "2003-06-30",
          determined_by=site.consultant if site else "CWMP field survey (2003)", status=status)


def _recording_numbers(rng: random.Random, n: int) -> list[str]:
    """Anoka County Recorder-style document numbers, unique, seeded."""
    return [f"{d}.001" for d in rng.sample(range(2_090_000, 2_100_000), n)]


def _recorded_on(s: Site) -> str:
    """Declarations and easements are recorded a month after the decision (a fixed rule, so
    every permit's records postdate its decision)."""
    year, month, day = (int(p) for p in s.decided_on.split("-"))
    return f"{year + month // 12}-{month % 12 + 1:02d}-{min(day, 28):02d}"


def _build_site(c: Collector, s: Site, docs: Iterable[str]) -> None:
    """Every feature of one permit."""
    docs = iter(docs)
    _site_ledger(c, s)
    buffer_doc = _site_buffer(c, s, docs)
    _site_structures(c, s)
    _site_declarations(c, s, docs, buffer_doc)
    _site_easement(c, s, next(docs))
    _site_stormwater(c, s)


def _site_ledger(c: Collector, s: Site) -> None:
    for kind, r in s.impacts:
        c.add("impact", c.next_key("I"), rect(r), permit_key=s.permit_no, kind=kind)
    for component, status, r, status_on, *planned in s.replacements:
        c.add("replacement", c.next_key("R"), rect(r), permit_key=s.permit_no,
              component=component, status=status, status_on=status_on,
              planned_type=planned[0] if planned else None,
              **_milestones(status, status_on))


def _milestones(status: str, status_on: str) -> dict[str, str | None]:
    """A replacement's construction and certification dates: built CONSTRUCTION_TO_CERTIFIED
    days before it was certified, certified on its status date."""
    if status == "proposed":
        return {"constructed_on": None, "certified_on": None}
    if status == "constructed":
        return {"constructed_on": status_on, "certified_on": None}
    built = date.fromisoformat(status_on) - timedelta(days=CONSTRUCTION_TO_CERTIFIED)
    return {"constructed_on": built.isoformat(), "certified_on": status_on}


def _site_buffer(c: Collector, s: Site, docs: Iterable[str]) -> str | None:
    """Buffer, trails and markers; returns the buffer declaration's recording number."""
    if not s.buffer:
        return None
    doc = None if s.buffer_public or not s.buffer_declared else next(iter(docs))
    c.add("buffer", c.next_key("B"), polygonal(unary_union([rect(r) for r in s.buffer])),
          permit_key=s.permit_no, declaration_no=doc, public_land_agreement=s.buffer_public)
    for r, width_ft in s.trails:
        c.add("trail", c.next_key("T"), rect(r), permit_key=s.permit_no, width_ft=width_ft)
    for xy in s.markers:
        c.add("buffer_marker", c.next_key("M"), Point(xy), permit_key=s.permit_no,
              marker_type=s.marker_type)
    return doc


def _site_structures(c: Collector, s: Site) -> None:
    for kind, r, variance, exception in s.structures:
        c.add("structure", c.next_key("ST"), rect(r), permit_key=s.permit_no, kind=kind,
              variance_ref=variance, buffer_exception=exception)


def _site_declarations(c: Collector, s: Site, docs: Iterable[str],
                       buffer_doc: str | None) -> None:
    docs = iter(docs)
    for kind in s.declarations:
        public = kind == "buffer" and s.buffer_public
        number = buffer_doc if kind == "buffer" else next(docs)
        c.add("declaration", c.next_key("DC"), None, permit_key=s.permit_no, kind=kind,
              recording_no=None if public else number,
              recorded_on=None if public else _recorded_on(s), public_land_agreement=public,
              subdivision_clause=s.subdivision_clause if kind == "buffer" and not public
              else None,
              conveyance_clause=True if public else None,
              executed_by=s.agreement_executed_by if public else None)


def site_parcels(s: Site) -> BaseGeometry:
    """Union of a site's parcels, local metres."""
    return unary_union([parcel_geometry(p) for p in s.parcels])


def _site_easement(c: Collector, s: Site, doc: str) -> None:
    """Easement over, per permitted parcel, all baseline wetland (holes filled, impact
    footprints included so the 8 check passes whether or not it subtracts impacts), the buffer
    and the replacement areas; minus the designed gap of case 7. None where the parcels hold
    none of these, or for a site that records none (24-009: an easement is recorded at
    issuance, and it is undecided)."""
    parcels = site_parcels(s)
    wet = unary_union([fill_holes(rect(r, h)) for r, h, *_ in BASELINE_WETLANDS.values()])
    parts = [wet.intersection(parcels)]
    parts += [rect(r) for r in s.buffer] + [rect(r[2]) for r in s.replacements]
    need = unary_union(parts).intersection(parcels)
    if s.easement_gap:
        need = need.difference(rect(s.easement_gap))
    if not s.easement or need.area == 0:
        return
    c.add("easement", c.next_key("E"), polygonal(need), permit_key=s.permit_no,
          grantor=s.applicant, recording_no=doc, recorded_on=_recorded_on(s))


def _site_stormwater(c: Collector, s: Site) -> None:
    """Impervious, grading, land cover, subwatershed, BMPs and the hydroperiod row."""
    for condition, r in s.impervious:
        c.add("impervious", c.next_key("IS"), rect(r), permit_key=s.permit_no,
              condition=condition)
    graded = s.grading or s.subwatershed
    if graded:
        c.add("grading", c.next_key("G"), rect(graded), permit_key=s.permit_no,
              alters_runoff_to_wetland=s.grading_alters_runoff)
    for r in s.buffer_grading:
        c.add("grading", c.next_key("G"), rect(r), permit_key=s.permit_no,
              alters_runoff_to_wetland=False)
    if s.subwatershed is None:
        return
    sw = rect(s.subwatershed)
    hard = polygonal(unary_union([rect(r) for _, r in s.impervious]).intersection(sw))
    c.add("land_cover", c.next_key("LC"), hard, permit_key=s.permit_no,
          cover_class="impervious")
    open_space = sw.difference(hard)
    if s.land_cover_gap:
        open_space = open_space.difference(rect(s.land_cover_gap))
    c.add("land_cover", c.next_key("LC"), polygonal(open_space),
          permit_key=s.permit_no, cover_class="open_space_good")
    sw_key = c.add("subwatershed", f"SW-{s.permit_no[-3:]}", sw, permit_key=s.permit_no,
                   name=f"{s.permit_no} site", receiving_wetland_key=s.receiving)
    for kind, r, volume, roof in s.bmps:
        c.add("bmp", c.next_key("BMP"), rect(r), permit_key=s.permit_no,
              subwatershed_key=sw_key, kind=kind, volume_cuft=float(volume),
              roof_runoff_only=roof)
    if s.hydro is None:
        return
    b0, b1, d0, d1 = s.hydro
    c.add("hydroperiod", c.next_key("H"), None, permit_key=s.permit_no,
          wetland_key=s.receiving, existing_bounce_ft=b0, proposed_bounce_ft=b1,
          existing_inundation_days=d0, proposed_inundation_days=d1)


def _build_plan_records(c: Collector) -> None:
    """Credit transfers, the District's own replacement project and a species record."""
    for giver, taker, amount, on in TRANSFERS:
        c.add("credit_transfer", c.next_key("CT"), None, from_permit_key=giver,
              to_permit_key=taker, acres=amount, transferred_on=on)
    name, r, on = DISTRICT_PROJECT
    c.add("replacement", c.next_key("R"), rect(r), permit_key=None, district_project=name,
          component="wetland", status="certified", status_on=on,
          **_milestones("certified", on))
    species, r, observed, status = SPECIES
    c.add("species_record", c.next_key("SR"), rect(r), permit_key="24-003", species=species,
          observed_on=observed, status=status)


def _build_permit_records(c: Collector, today: date) -> None:
    """Monitoring years, sureties and conditions of issuance, after every other feature (no
    other key shifts). For each decided permit: a surety per wetland replacement feature at
    SURETY_USD_PER_ACRE (letter of credit; a bond on public land), posted at issuance and held
    until the replacement is certified and its monitoring years met (so all are held: none is
    through MONITORING_YEARS yet), but where the site says otherwise (``surety_posted_on``,
    ``surety_released_on_certification``); conditions of issuance for its declarations,
    easement and sureties, met when recorded or posted, open where the site says
    (``open_conditions``); and the impact dates of a permit with impacts (on the permit
    records, see _build_permits). Every certified wetland replacement, the District's too, is
    monitored (``_monitoring``)."""
    replacements = {f.key: f for f in c.layers["replacement"]}
    for s in SITES:
        if s.decided_on is None:
            continue
        mine = [f for f in replacements.values()
                if f.attrs.get("permit_key") == s.permit_no
                and f.attrs["component"] == "wetland"]
        posted = s.surety_posted_on or s.decided_on
        for f in mine:
            certified_on = f.attrs["certified_on"]
            c.add("financial_assurance", c.next_key("SU"), None, permit_key=s.permit_no,
                  replacement_key=f.key,
                  amount=surety_usd(f.geom.area),
                  instrument="bond" if s.buffer_public else "letter_of_credit",
                  posted_on=posted,
                  released_on=certified_on if s.surety_released_on_certification else None)
            _monitoring(c, f, s.monitoring_not_met, s.monitoring_skipped, today)
        recorded = _recorded_on(s)
        conditions = [("declaration", f"Record the {kind} declaration",
                       kind != "buffer" or s.buffer_declared) for kind in s.declarations]
        conditions += [("declaration", f"Record the {kind} declaration", False)
                       for kind in s.open_conditions]
        if s.easement:
            conditions.append(("easement", "Convey and record the easement of section 8", True))
        if mine:
            conditions.append(("surety", "Post the replacement surety", True))
        for kind, words, met in conditions:
            c.add("permit_condition", c.next_key("PC"), None, permit_key=s.permit_no,
                  condition=words, kind=kind, state="met" if met else "open",
                  due_on=recorded,
                  met_on=(posted if kind == "surety" else recorded) if met else None)
    for f in replacements.values():  # the District monitors its own projects too
        if f.attrs.get("permit_key") is None and f.attrs["component"] == "wetland":
            _monitoring(c, f, (), (), today)


def _monitoring(c: Collector, f: Feature, not_met: tuple[str, ...],
                skipped: tuple[int, ...], today: date) -> None:
    """The yearly visits of a certified wetland replacement feature: each of
    PERFORMANCE_STANDARDS observed on MONITORING_DAY (in the year of certification, on the
    certification date when that is later) of each of its MONITORING_YEARS years, as far as
    ``today`` reaches (a visit not made yet is not on record), but the ``skipped`` years;
    ``not_met`` standards fail in the first year."""
    certified_on = f.attrs.get("certified_on")
    if certified_on is None:
        return
    first = int(certified_on[:4])
    for year in range(first, first + MONITORING_YEARS):
        visit = max(f"{year}-{MONITORING_DAY}", certified_on if year == first else "")
        if year in skipped or date.fromisoformat(visit) > today:
            continue
        for standard, words in PERFORMANCE_STANDARDS.items():
            failed = year == first and standard in not_met
            c.add("replacement_monitoring", c.next_key("RM"), None,
                  replacement_key=f.key, monitoring_year=year,
                  performance_standard=words, outcome="not_met" if failed else "met",
                  observed_on=visit, notes=MONITORING_FAILURE_NOTE if failed else None)


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


def _build_records(c: Collector) -> None:
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


def surety_usd(area_m2: float) -> float:
    """A replacement's surety: SURETY_USD_PER_ACRE per acre, to the next 100 dollars."""
    return float(-(-round(acres(area_m2) * SURETY_USD_PER_ACRE) // 100) * 100)


def build(seed: int = DEFAULT_SEED, today: date | None = None) -> dict[str, list[Feature]]:
    """Every demo feature by layer, geometry in local metres (see ``to_world``); the
    monitoring visits made by ``today`` (default: the date it runs) are on record."""
    rng = random.Random(seed)
    c = Collector()
    _build_frame(c)
    _build_context(c)
    _build_permits(c)
    _build_delineations(c, seed)
    _build_assessments(c, rng)
    _build_ditches(c)
    docs = _recording_numbers(rng, 4 * len(SITES))
    # The first edition's permits, its plan records, then the permits added later: every
    # feature keeps the key it had before the additions, so a demo database loaded from the
    # first edition takes the new files as additions and one retired assessment.
    for i, s in enumerate(SITES[:FIRST_EDITION]):
        _build_site(c, s, docs[4 * i: 4 * i + 4])
    _build_plan_records(c)
    for i, s in enumerate(SITES[FIRST_EDITION:], start=FIRST_EDITION):
        _build_site(c, s, docs[4 * i: 4 * i + 4])
    _build_permit_records(c, today or date.today())
    _build_records(c)
    return c.layers


# --------------------------------------------------------------------------------------------
# Writing.
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DemoFiles:
    """What ``generate`` wrote."""

    out_dir: Path
    gpkg: Path
    csv: dict[str, Path]
    manifest: Path
    gpkg_layers: tuple[str, ...]
    plan_name: str = PLAN_NAME

    @property
    def files(self) -> list[Path]:
        """Every written file."""
        return [self.gpkg, *self.csv.values(), self.manifest]


def _fields(layer: Layer) -> list[tuple[str, Col]]:
    return [(file_field(col), col) for col in layer.columns]


def _file_value(value: Any, col: Col) -> Any:
    """A value as the file convention wants it (the GPKG keeps booleans and numbers typed)."""
    if value is None:
        return None
    if col.kind == "numeric":
        return float(value)
    return value


def _shape(geom: BaseGeometry, geometry_type: str) -> BaseGeometry:
    """The catalogue's geometry type, in EPSG:26915."""
    world = to_world(geom)
    if geometry_type == "MULTIPOLYGON":
        return polygonal(world)
    if geometry_type == "MULTILINESTRING" and isinstance(world, LineString):
        return MultiLineString([world])
    return world


def _frame(layer: Layer, features: Sequence[Feature]) -> gpd.GeoDataFrame:
    data: dict[str, Any] = {"feature_key": [f.key for f in features]}
    for name, col in _fields(layer):
        values = [_file_value(f.attrs.get(name), col) for f in features]
        if col.kind == "bool" and all(v is not None for v in values):
            data[name] = pd.Series(values, dtype=bool)
        elif col.kind in ("numeric", "int"):
            data[name] = pd.Series(values, dtype="float64")
        else:
            data[name] = pd.Series(values, dtype=object)
    geoms = [_shape(f.geom, layer.geometry or "") for f in features]
    return gpd.GeoDataFrame(data, geometry=geoms, crs=CRS)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _write_csv(path: Path, layer: Layer, features: Sequence[Feature]) -> None:
    names = ["feature_key"] + [name for name, _ in _fields(layer)]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        for feat in features:
            w.writerow([feat.key] + [_csv_text(feat.attrs.get(n)) for n in names[1:]])


def _manifest(seed: int, layers: dict[str, list[Feature]], county_m: float | None) -> dict:
    order = []
    for name in LOAD_ORDER:
        layer = BY_NAME[name]
        order.append({
            "layer": name,
            "file": GPKG_NAME if layer.geometry else f"{name}.csv",
            "layer_name": name if layer.geometry else None,
            "format": "gpkg" if layer.geometry else "csv",
            "geometry": layer.geometry,
            "features": len(layers[name]),
            "key_field": "feature_key",
            "restricted": layer.restricted,
        })
    return {
        "plan_area": PLAN_NAME,
        "crs": CRS,
        "seed": seed,
        "generator": "demo.generate",
        "origin": list(ORIGIN),
        "inside_anoka_county_by_m": None if county_m is None else round(county_m, 1),
        "field_convention": {
            "key": "feature_key", "reference": "X_id -> X_key (referenced feature_key)",
            "text[]": "';'-joined", "jsonb": "JSON text", "date": "ISO 8601 text",
            "bool": "true/false",
        },
        "tr55_cover": {k: {"description": d, "cn": dict(zip("ABCD", cn, strict=True))}
                       for k, (d, cn) in TR55_COVER.items()},
        "load_order": order,
    }


def _validate(layers: dict[str, list[Feature]]) -> None:
    """Refuse to write anything invalid: every geometry valid, non-empty, inside the plan;
    only a replacement built to fail 7(c) may cross the plan boundary, and by no more than
    OUTSIDE_PLAN_MAX_M (ingest takes the part inside and warns)."""
    plan = box(0.0, 0.0, *PLAN_SIZE)
    for name, feats in layers.items():
        for f in feats:
            if f.geom is None:
                continue
            if f.geom.is_empty or not f.geom.is_valid:
                raise ValueError(f"{name} {f.key}: geometry empty or invalid")
            if plan.covers(f.geom):
                continue
            crossing = (name == "replacement" and f.attrs.get("permit_key") in CROSSES_PLAN
                        and plan.intersects(f.geom)
                        and plan.buffer(OUTSIDE_PLAN_MAX_M, join_style=2).covers(f.geom))
            if not crossing:
                raise ValueError(f"{name} {f.key}: geometry outside the plan")


def generate(out_dir: Path, seed: int = DEFAULT_SEED, today: date | None = None) -> DemoFiles:
    """Write the demo plan area to out_dir: demo.gpkg, the attribute CSVs and manifest.json.

    The Anoka County containment is checked when the shared data is present (it is not part of
    an installed package); the manifest records the margin found, or null.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    layers = build(seed, today)
    _validate(layers)
    county_m = None
    if counties_dump_path().exists():
        county_m = check_inside_county(anoka_outline())
    gpkg = out_dir / GPKG_NAME
    gpkg.unlink(missing_ok=True)
    csvs: dict[str, Path] = {}
    written: list[str] = []
    for name in LOAD_ORDER:
        layer = BY_NAME[name]
        if layer.geometry:
            _frame(layer, layers[name]).to_file(gpkg, layer=name, driver="GPKG",
                                                engine="pyogrio")
            written.append(name)
        else:
            csvs[name] = out_dir / f"{name}.csv"
            _write_csv(csvs[name], layer, layers[name])
    manifest = out_dir / "manifest.json"
    manifest.write_text(json.dumps(_manifest(seed, layers, county_m), indent=2) + "\n",
                        encoding="utf-8")
    return DemoFiles(out_dir, gpkg, csvs, manifest, tuple(written))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m demo.generate OUT_DIR [--seed N]``."""
    parser = argparse.ArgumentParser(prog="python -m demo.generate",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("out_dir", type=Path, help="directory to write the demo files into")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default 5362)")
    args = parser.parse_args(argv)
    try:
        files = generate(args.out_dir, args.seed)
    except (OSError, ValueError) as exc:
        print(f"demo.generate: {exc}", file=sys.stderr)
        return 1
    for path in files.files:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
