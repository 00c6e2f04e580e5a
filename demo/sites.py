"""The demo's permits: one ``Site`` each, eighteen (24-001 to 24-017 and 25-001), each built to
exercise one case of the ledger and the checks; together they fail every check of the
catalogue (``checks.rule_check``) at least once, and three of them pass every check.

Why a table: each permit's rectangles, dates and choices sit side by side, and the layer modules
(demo/layers/) make every permit's features from it the same way; the figures they give are in
``cases.toml``.

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
permit's records (demo/layers/monitoring.py): impact dates, conditions of issuance, a surety per
wetland replacement feature posted at issuance and held until monitoring ends, and two
performance standards monitored each year of each certified replacement (the District's too)
whose visit has come; only 24-004's 2025 vegetation is not met. Every permit's permit records
(demo/layers/records.py: the documents its work needs under docs/rule-m.md, and the District's
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
  uses (R1-01, R1-02, R4-10, R1-05, R2-08, R3-01, R2-09, R1-07, R4-08); the first eight
  permits' features, keys and figures are unchanged (demo/generate.py's ``build`` makes the
  later permits after the plan records, so no key shifts). Shared layers grew by one Figure 5
  zone (F5-006, where no other replacement lies) and lost W-019's type and assessment (no
  other permit is on R1-01).
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
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from demo.geometry import FT_M, XY, Rect


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
    # Performance standards (keys of PERFORMANCE_STANDARDS, demo/layers/monitoring.py) its
    # certified replacement did not meet in its first monitoring year (7(e)
    # replacement_certification).
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
    # Permit records (demo/layers/records.py): the kinds left out of what the permit needs, the
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
FIRST_EDITION = 8  # SITES[:8] are the demo's first eight permits (see demo.generate.build)
CROSSES_PLAN: tuple[str, ...] = ("24-011",)  # permits whose replacement crosses the boundary
OUTSIDE_PLAN_MAX_M = 50.0
SITE_BY_PERMIT: dict[str, Site] = {s.permit_no: s for s in SITES}


def recorded_on(s: Site) -> str:
    """Declarations and easements are recorded a month after the decision (a fixed rule, so
    every permit's records postdate its decision)."""
    year, month, day = (int(p) for p in s.decided_on.split("-"))
    return f"{year + month // 12}-{month % 12 + 1:02d}-{min(day, 28):02d}"
