"""Rule M 2(a), 3, the declarations (5(e), 6, 6(e)(v)), the easement (8), replacement and
heritage (7(c)) and structures in wetland (7(g)) on hand-built sites.

The standard site (tests/support/checks_scenarios.py): parcel x 0..300 ft, y -200..50 ft; wetland
x -50..350 ft, y 0..100 ft; buffer 60 ft x 300 ft south of the edge; plan area x, y within
+-2,000 ft. Areas are worked out in ft2 and converted with 43,560 ft2 per acre.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    line,
    only,
    rect,
    site_fixture,
    sqft_to_acres,
)


def acres(sqft: float) -> float:
    return round(sqft_to_acres(sqft), 4)


# -- 2(a) --------------------------------------------------------------------------------------
def test_wetland_impact_makes_a_rule_m_permit(site: Site) -> None:
    site.standard()  # fills 10 x 10 ft of wetland
    ok = only(site.evaluate("check_applicability"), "applicability")
    assert ok["passed"] and float(ok["measured_value"]) == 1
    assert f"(i) {acres(100)} acres" in ok["message"]


def test_no_trigger_means_no_rule_m_permit(site: Site) -> None:
    site.plan()
    site.parcel("P9", rect(500, 500, 700, 700))
    pid = site.permit("24-009", ["P9"])
    site.add("impervious", rect(500, 500, 600, 540), permit_id=pid, condition="proposed")
    site.add("grading", rect(500, 500, 600, 600), permit_id=pid, alters_runoff_to_wetland=False)
    bad = only(site.evaluate("check_applicability"), "applicability")
    assert not bad["passed"] and float(bad["measured_value"]) == 0
    assert bad["severity"] == "warning"
    assert "4000 ft2" in bad["message"]


def test_more_than_10000_ft2_of_new_impervious_triggers(site: Site) -> None:
    site.plan()
    site.parcel("P9", rect(500, 500, 700, 700))
    pid = site.permit("24-009", ["P9"])
    site.add("impervious", rect(500, 500, 600, 601), permit_id=pid, condition="proposed")
    site.add("impervious", rect(600, 500, 700, 600), permit_id=pid, condition="existing")
    ok = only(site.evaluate("check_applicability"), "applicability")
    assert ok["passed"] and "10100 ft2" in ok["message"]


def screen(site: Site, footprint: str | None, impervious: str | None = None,
           alters: bool | None = None) -> dict[str, dict]:
    rows = site.conn.execute(sa.text(
        "SELECT * FROM pub.screen_footprint('acd-53-62', ST_GeomFromEWKT(:f), "
        "ST_GeomFromEWKT(:i), :a)"), {"f": footprint, "i": impervious, "a": alters}).mappings()
    return {r["paragraph"]: dict(r) for r in rows}


def test_screening_a_footprint_in_wetland(site: Site) -> None:
    site.standard()
    r = screen(site, rect(0, 10, 100, 60))  # 100 x 50 ft of wetland
    assert r["2(a)"]["required"] is True
    assert r["2(a)(i)"]["required"] and float(r["2(a)(i)"]["measured_value"]) == acres(5000)


def test_screening_upland_depends_on_impervious_and_grading(site: Site) -> None:
    site.standard()
    upland = rect(0, -200, 100, -100)
    r = screen(site, upland)
    assert r["2(a)"]["required"] is None  # say whether the grading alters runoff
    assert screen(site, upland, alters=False)["2(a)"]["required"] is False
    assert screen(site, upland, alters=True)["2(a)"]["required"] is True
    big = screen(site, upland, impervious=rect(0, -200, 120, -100), alters=False)
    assert big["2(a)"]["required"] and float(big["2(a)(ii)"]["measured_value"]) == 12000


def test_screening_outside_the_plan_area(site: Site) -> None:
    site.standard()
    r = screen(site, rect(5000, 5000, 5100, 5100), alters=True)
    assert r["2(a)"]["required"] is False and "outside the CWMP area" in r["2(a)"]["reason"]


def test_screening_refuses_geometry_without_crs(site: Site) -> None:
    site.standard()
    with pytest.raises(sa.exc.DBAPIError, match="no CRS"):
        site.conn.execute(sa.text("SELECT * FROM pub.screen_footprint('acd-53-62', "
                                  "ST_MakeEnvelope(0, 0, 1, 1))"))


# -- 3 -----------------------------------------------------------------------------------------
def test_submittals_complete(site: Site) -> None:
    site.standard()
    for fn, code in (("check_delineation", "delineation_approved"),
                     ("check_wetland_records", "type_determination"),
                     ("check_wetland_records", "functional_assessment"),
                     ("check_ditch_determination", "ditch_determination"),
                     ("check_vegetation_plan", "vegetation_plan")):
        row = only(site.evaluate(fn), code)
        assert row["passed"] and float(row["measured_value"]) == 0, code


def test_parcel_half_outside_the_approved_delineation(site: Site) -> None:
    site.standard()
    site.delineation(rect(150, -300, 400, 200), no="D-2", status="submitted", approved_on=None)
    site.conn.execute(sa.text(
        "UPDATE core.delineation SET geom = ST_GeomFromEWKT(:g) WHERE delineation_id = :d "
        "AND valid_to IS NULL"), {"g": rect(-100, -300, 150, 200), "d": site.delineation_id})
    bad = only(site.evaluate("check_delineation"), "delineation_approved")
    assert not bad["passed"]
    assert float(bad["measured_value"]) == acres(150 * 250)  # x 150..300, y -200..50


def test_approved_without_tep_review_does_not_count(site: Site) -> None:
    site.standard()
    site.update("delineation", site.delineation_id, tep_reviewed_on=None)
    bad = only(site.evaluate("check_delineation"), "delineation_approved")
    assert not bad["passed"] and float(bad["measured_value"]) == acres(300 * 250)


def test_wetland_without_type_or_assessment(site: Site) -> None:
    site.standard()
    site.wetland(rect(100, -180, 140, -140), site.delineation_id, circular39_type=None,
                 assess=False)
    rows = site.evaluate("check_wetland_records")
    assert float(only(rows, "type_determination")["measured_value"]) == 1
    assert float(only(rows, "functional_assessment")["measured_value"]) == 1
    assert not only(rows, "functional_assessment")["passed"]


def test_ditch_determination_missing(site: Site) -> None:
    site.standard(ditch_determined_on=None)
    site.add("ditch", line((0, -40), (300, -40)), status="active")
    bad = only(site.evaluate("check_ditch_determination"), "ditch_determination")
    assert not bad["passed"] and float(bad["measured_value"]) == 2  # none on record, 1 ditch
    assert bad["geom_type"] in ("ST_LineString", "ST_MultiLineString")


def test_vegetation_plan_missing(site: Site) -> None:
    site.standard(vegetation_plan_on=None)
    bad = only(site.evaluate("check_vegetation_plan"), "vegetation_plan")
    assert not bad["passed"] and float(bad["measured_value"]) == 1


# -- declarations ------------------------------------------------------------------------------
def test_fertilizer_snow_declaration_needed_when_grading(site: Site) -> None:
    site.standard()
    site.add("grading", rect(0, -200, 100, -100), permit_id=site.permit_id,
             alters_runoff_to_wetland=True)
    bad = only(site.evaluate("check_declarations"), "declaration_missing", paragraph="5(e)")
    assert not bad["passed"] and float(bad["measured_value"]) == 0
    assert bad["severity"] == "error"
    site.declare("fertilizer_snow")
    assert only(site.evaluate("check_declarations"), "declaration_missing",
                paragraph="5(e)")["passed"]


def test_missing_declaration_is_a_warning_before_the_decision(site: Site) -> None:
    site.standard(declarations=False, status="under_review", decided_on=None)
    bad = only(site.evaluate("check_declarations"), "declaration_missing", paragraph="6")
    assert not bad["passed"] and bad["severity"] == "warning"


def test_buffer_declaration_or_public_land_agreement(site: Site) -> None:
    # on public land (6); on private land an agreement is no declaration
    # (tests/checks/test_checks_buffer_rule.py)
    site.standard(declarations=False, public_land=True)
    assert not only(site.evaluate("check_declarations"), "declaration_missing",
                    paragraph="6")["passed"]
    site.declare("buffer", recorded=False, public_land_agreement=True)
    assert only(site.evaluate("check_declarations"), "declaration_missing",
                paragraph="6")["passed"]


def test_grading_in_the_buffer_needs_the_3_year_declaration(site: Site) -> None:
    site.standard()
    site.add("grading", rect(100, -50, 120, -30), permit_id=site.permit_id,
             alters_runoff_to_wetland=False)
    rows = site.evaluate("check_declarations")
    assert not only(rows, "declaration_missing", paragraph="6(e)(v)")["passed"]
    site.declare("buffer_restoration_3yr")
    assert only(site.evaluate("check_declarations"), "declaration_missing",
                paragraph="6(e)(v)")["passed"]


# -- 8 -----------------------------------------------------------------------------------------
def test_easement_covers_wetland_and_buffer(site: Site) -> None:
    site.standard()
    ok = only(site.evaluate("check_easement"), "easement_coverage")
    assert ok["passed"] and float(ok["measured_value"]) == 0
    assert ok["parcel_id"] == site.parcel_id


def test_no_easement_leaves_wetland_and_buffer_uncovered(site: Site) -> None:
    site.standard(easement=False)
    bad = only(site.evaluate("check_easement"), "easement_coverage")
    # wetland on the parcel 300 x 50 ft + buffer 300 x 60 ft
    assert float(bad["measured_value"]) == acres(300 * 50 + 300 * 60)
    assert not bad["passed"]


def test_enclosed_upland_belongs_in_the_easement(site: Site) -> None:
    site.standard()
    # the wetland gets a 20 x 20 ft upland island inside the parcel, outside the easement
    site.conn.execute(sa.text(
        "UPDATE core.wetland SET geom = ST_GeomFromEWKT(:g) WHERE wetland_id = :w "
        "AND valid_to IS NULL"),
        {"g": rect(-50, 0, 350, 200, hole=(100, 60, 120, 80)), "w": site.wetland_id})
    site.retire("parcel", site.parcel_id)
    site.parcel("P1", rect(0, -200, 300, 150))
    bad = only(site.evaluate("check_easement"), "easement_coverage")
    # easement reaches y = 60: uncovered is the wetland from 60 to 150 less nothing (the
    # island is enclosed upland and counts too): 300 x 90 ft
    assert float(bad["measured_value"]) == acres(300 * 90)


# -- 7(c) --------------------------------------------------------------------------------------
def heritage(site: Site, geom: str, rank: str, kind: str) -> int:
    return site.add("heritage_area", geom, rank=rank, community_kind=kind)


def test_impact_on_heritage_wetland_ranked_b(site: Site) -> None:
    site.standard()
    heritage(site, rect(300, 50, 400, 150), "B", "wetland")
    bad = only(site.evaluate("check_replacement"), "heritage_wetland_impact")
    assert not bad["passed"] and float(bad["measured_value"]) == acres(100)


def test_impact_on_heritage_wetland_ranked_c_is_allowed(site: Site) -> None:
    site.standard()
    heritage(site, rect(300, 50, 400, 150), "C", "wetland")
    assert only(site.evaluate("check_replacement"), "heritage_wetland_impact")["passed"]


def replacement(site: Site, geom: str, **cols: object) -> int:
    return site.add("replacement", geom, permit_id=site.permit_id, component="wetland",
                    status="proposed", **cols)


def test_replacement_excavating_bc_upland(site: Site) -> None:
    site.standard()
    site.add("figure5_area", rect(0, -200, 300, -100), zone_name="Z")
    heritage(site, rect(0, -200, 50, -100), "BC", "upland")
    replacement(site, rect(0, -200, 100, -100))
    rows = site.evaluate("check_replacement")
    bad = only(rows, "heritage_upland_excavation")
    assert not bad["passed"] and float(bad["measured_value"]) == acres(50 * 100)
    assert only(rows, "replacement_outside_figure5")["passed"]
    assert only(rows, "replacement_outside_plan_area")["passed"]


def test_replacement_outside_plan_area_and_figure5(site: Site) -> None:
    site.standard()
    site.add("figure5_area", rect(1900, 0, 2000, 100), zone_name="Z", planned_type="2")
    replacement(site, rect(1950, 0, 2050, 100), planned_type="3")
    rows = site.evaluate("check_replacement")
    outside = only(rows, "replacement_outside_plan_area")
    assert not outside["passed"] and float(outside["measured_value"]) == acres(50 * 100)
    f5 = only(rows, "replacement_outside_figure5")
    assert not f5["passed"] and f5["severity"] == "warning"
    assert float(f5["measured_value"]) == acres(50 * 100)
    other = only(rows, "replacement_type_figure5")
    assert not other["passed"] and float(other["measured_value"]) == acres(50 * 100)


def test_district_project_is_checked_in_plan_wide_runs(site: Site) -> None:
    site.standard()
    site.add("replacement", rect(1950, -100, 2050, 0), district_project="RCWD restoration",
             component="wetland", status="certified")
    rows = [r for r in site.evaluate("check_replacement")
            if r["check_code"] == "replacement_outside_plan_area" and r["permit_id"] is None]
    assert len(rows) == 1 and not rows[0]["passed"]
    assert not [r for r in site.evaluate("check_replacement", site.permit_id)
                if r["permit_id"] is None]


# -- 7(g) --------------------------------------------------------------------------------------
def test_road_in_wetland_without_variance(site: Site) -> None:
    site.standard()
    site.add("structure", rect(200, -50, 210, 50), permit_id=site.permit_id, kind="road")
    bad = only(site.evaluate("check_structures"), "structure_in_wetland")
    assert not bad["passed"] and float(bad["measured_value"]) == acres(10 * 50)


def test_road_in_wetland_with_variance_and_boardwalk(site: Site) -> None:
    site.standard()
    site.add("structure", rect(200, -50, 210, 50), permit_id=site.permit_id, kind="utility",
             variance_ref="V-24-01")
    site.add("structure", rect(100, -50, 104, 50), permit_id=site.permit_id,
             kind="passive_recreation")
    rows = site.evaluate("check_structures")
    assert len(rows) == 1 and rows[0]["passed"] and "V-24-01" in rows[0]["message"]
