"""The checks of the paragraphs a permit meets with a document, not a map (docs/rule-m.md):
3(d), 3(g), 3(h), 4, 9 (sql/221), 5(a), 5(b)(ii), 5(f) (sql/236), 6's declaration content and
10's agreement executor (sql/246, and sql/240 refusing a staff-executed agreement), 6(b)'s
marker design and new lots, 6(e)(i)-(iv),(vi) (sql/247), 6(g) (sql/248) and 6(c)'s
equivalence (sql/250).

Each test starts from the standard site of checks_scenarios (one approved permit on a parcel
x 0..300 ft, y -200..50 ft, the central wetland north of y = 0, a 60 ft x 300 ft buffer along
the edge, a small fill of wetland; compliant, its records included) and changes one thing.
Figures by hand: 1 acre = 43,560 ft2.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    only,
    rect,
    site_fixture,
)


def rows_of(site: Site, function: str, code: str) -> list[dict]:
    return [r for r in site.evaluate(function) if r["check_code"] == code]


def retire_records(site: Site, kind: str) -> None:
    site.conn.execute(sa.text(
        "UPDATE core.permit_record SET valid_to = now() WHERE kind = :k AND valid_to IS NULL"),
        {"k": kind})


def grade(site: Site, geom: str | None = None) -> int:
    """Grading of the permit, by default 300 ft x 40 ft of upland south of the buffer: section
    5's work (and a 2(a)(iii) trigger)."""
    return site.add("grading", geom or rect(0, -150, 300, -110), permit_id=site.permit_id,
                    alters_runoff_to_wetland=True)


# -- 3(d), 3(g), 9: what the District asked for ------------------------------------------------
def test_a_request_without_its_submittal_fails(site: Site) -> None:
    site.standard()
    asked = site.record("species_assessment", requested_on="2024-04-01")
    site.record("requested_submittal", requested_on="2024-04-01", title="Soil borings",
                submitted_on="2024-05-01", document_ref="SB-1")
    site.record("abandonment_petition", requested_on="2024-06-01")
    site.record("requested_submittal", title="A voluntary report")  # no request: not judged
    rows = site.evaluate("check_requests")
    species = only(rows, "species_assessment")
    assert (species["paragraph"], species["passed"], species["measured_value"],
            species["feature_id"]) == ("3(d)", False, 1, asked)
    assert "requested an assessment of protected plant or animal species on 2024-04-01; " \
           "none is on record" in species["message"]
    borings = only(rows, "requested_submittal")
    assert borings["passed"] and borings["measured_value"] == 0
    assert borings["message"] == ('"Soil borings", requested by the District on 2024-04-01, '
                                  'submitted on 2024-05-01 (SB-1)')
    petition = only(rows, "abandonment_petition")
    assert petition["paragraph"] == "9" and not petition["passed"]


def test_the_permit_species_assessment_date_answers_the_request(site: Site) -> None:
    site.standard(species_assessment_on="2024-05-20")
    site.record("species_assessment", requested_on="2024-04-01")
    row = only(site.evaluate("check_requests"), "species_assessment")
    assert row["passed"] and "submitted on 2024-05-20" in row["message"]


def test_no_request_no_evaluation(site: Site) -> None:
    site.standard()
    assert site.evaluate("check_requests") == []


# -- 3(h), 4 -----------------------------------------------------------------------------------
def test_corps_approval_is_a_warning_and_needs_its_date(site: Site) -> None:
    site.standard()
    assert only(site.evaluate("check_documents"), "corps_approval")["passed"]
    retire_records(site, "corps_approval")
    site.record("corps_approval", submitted_on="2024-04-01")
    row = only(site.evaluate("check_documents"), "corps_approval")
    assert (row["paragraph"], row["severity"], row["passed"], row["measured_value"]) == (
        "3(h)", "warning", False, 1)
    assert "application to the U.S. Army Corps of Engineers of 2024-04-01 has no approval" \
        in row["message"]


def test_no_impact_no_corps_question(site: Site) -> None:
    site.standard()
    site.conn.execute(sa.text("UPDATE core.impact SET valid_to = now() WHERE valid_to IS NULL"))
    assert rows_of(site, "check_documents", "corps_approval") == []
    assert rows_of(site, "check_documents", "erosion_control") == []  # nothing disturbed


def test_erosion_control_plan_approved_and_without_a_rule_d_exception(site: Site) -> None:
    site.standard()
    assert only(site.evaluate("check_documents"), "erosion_control")["passed"]
    retire_records(site, "erosion_control_plan")
    site.record("erosion_control_plan", submitted_on="2024-03-01",
                facts={"rule_d_exception": "Rule D 5(a): less than one acre disturbed"})
    row = only(site.evaluate("check_documents"), "erosion_control")
    # decided: never approved (1) and an exception that 4 says does not apply (1)
    assert (row["paragraph"], row["passed"], row["measured_value"]) == ("4", False, 2)
    assert "was never approved" in row["message"]
    assert "claims a Rule D section 5 exception (Rule D 5(a): less than one acre disturbed)" \
        in row["message"]


def test_before_the_decision_a_submitted_plan_is_enough(site: Site) -> None:
    site.standard(status="under_review", decided_on=None)
    retire_records(site, "erosion_control_plan")
    site.record("erosion_control_plan", submitted_on="2024-03-01")
    row = only(site.evaluate("check_documents"), "erosion_control")
    assert row["passed"] and "to be approved with the decision" in row["message"]
    retire_records(site, "erosion_control_plan")
    row = only(site.evaluate("check_documents"), "erosion_control")
    assert not row["passed"] and row["measured_value"] == 1


# -- 5(a), 5(b)(ii), 5(f) ----------------------------------------------------------------------
AIMS = {"minimize_impervious": "shared drive", "maximize_infiltration": "rain gardens",
        "reduce_peak_flow": "outlet control", "reduce_pollutant_transport": "forebay"}
RATES = {"existing_cfs": {"2": 1.5, "10": 3.25, "100": 7.0},
         "proposed_cfs": {"2": 1.4, "10": 3.5, "100": 7.0}}


def test_site_design_counts_the_aims_not_addressed(site: Site) -> None:
    site.standard()
    grade(site)
    site.record("rate_control", facts={"existing_cfs": {"2": 1, "10": 2, "100": 3},
                                        "proposed_cfs": {"2": 1, "10": 2, "100": 3}})
    row = only(site.evaluate("check_stormwater_records"), "site_design")
    assert (row["paragraph"], row["passed"], row["measured_value"]) == ("5(a)", False, 4)
    site.record("site_design", facts={**AIMS, "reduce_peak_flow": " ", "minimize_impervious":
                                      None}, document_ref="SDS-1")
    row = only(site.evaluate("check_stormwater_records"), "site_design")
    assert row["measured_value"] == 2
    assert row["message"] == ("the site design statement (SDS-1) does not say how the site "
                              "would minimize impervious surface; reduce peak runoff flow rates")


def test_peak_flow_per_storm_event(site: Site) -> None:
    site.standard()
    grade(site)
    rid = site.record("rate_control", facts=RATES)
    rows = rows_of(site, "check_stormwater_records", "peak_flow")
    assert sorted((float(r["measured_value"]), r["passed"]) for r in rows) == [
        (-0.1, True), (0.0, True), (0.25, False)]  # 2-, 100-, 10-year
    bad = [r for r in rows if not r["passed"]][0]
    assert (bad["paragraph"], bad["unit"], bad["feature_id"]) == ("5(b)(ii)", "cfs", rid)
    assert bad["message"] == ("10-year, 24-hour peak flow 3.50 cfs proposed > 3.25 cfs "
                              "existing (+0.25 cfs): Rule C 3(b) allows no increase")


def test_peak_flow_events_are_a_dated_parameter(site: Site) -> None:
    site.standard()
    grade(site)
    site.record("rate_control", facts={"existing_cfs": {"10": 3.0},
                                        "proposed_cfs": {"10": 3.0, "100": 9.0}})
    rows = rows_of(site, "check_stormwater_records", "peak_flow")
    assert sorted((r["passed"], r["message"][:40]) for r in rows if r["passed"] is not True) \
        == [(None, "not evaluated: the rate control analysis"),
            (None, "not evaluated: the rate control analysis")]  # 2 and 100 without figures
    site.conn.execute(sa.text(
        "INSERT INTO core.parameter (plan_area_id, name, value_text, unit, rule_ref, "
        "effective_on, note) VALUES (1, 'rate_control_events', '10', 'years', '5(b)(ii)', "
        "'2024-01-01', 'test')"))
    rows = rows_of(site, "check_stormwater_records", "peak_flow")
    assert [(r["passed"], float(r["measured_value"])) for r in rows] == [(True, 0.0)]


def test_analyses_missing_are_not_evaluated(site: Site) -> None:
    site.standard(records=False)
    grade(site)
    rows = site.evaluate("check_stormwater_records")
    for code, paragraph in (("peak_flow", "5(b)(ii)"), ("groundwater_flow", "5(f)")):
        row = only(rows, code)
        assert (row["paragraph"], row["passed"], row["measured_value"]) == (
            paragraph, None, None)
        assert row["message"].startswith("not evaluated: analysis missing: the permit grades, "
                                         "fills or excavates wetland and needs a Rule M permit "
                                         "(2(a)(i), (iii))")


def test_not_subject_to_the_rule_needs_no_analysis(site: Site) -> None:
    site.standard(records=False)
    site.conn.execute(sa.text("UPDATE core.impact SET valid_to = now() WHERE valid_to IS NULL"))
    grade(site)
    site.conn.execute(sa.text("UPDATE core.grading SET alters_runoff_to_wetland = false "
                              "WHERE valid_to IS NULL"))
    rows = site.evaluate("check_stormwater_records")
    assert [r["check_code"] for r in rows] == ["site_design"]  # 5(a) is section 5's alone


def test_groundwater_flow_impeded(site: Site) -> None:
    site.standard(records=False)
    site.record("groundwater", facts={"existing_flow": 850, "proposed_flow": 680,
                                       "unit": "gpd"})
    row = only(site.evaluate("check_stormwater_records"), "groundwater_flow")
    assert (row["passed"], float(row["measured_value"]), float(row["limit_value"])) == (
        False, 0.8, 1.0)
    assert row["message"] == ("groundwater flow through the site 680 gpd proposed, 850 gpd "
                              "existing: 0.80 of it < 1.0: the excavation or fill impedes it "
                              "(5(f))")


def test_groundwater_without_a_positive_existing_flow_is_not_evaluated(site: Site) -> None:
    site.standard(records=False)
    site.record("groundwater", facts={"existing_flow": 0, "proposed_flow": "a lot"})
    row = only(site.evaluate("check_stormwater_records"), "groundwater_flow")
    assert row["passed"] is None and row["message"].startswith("not evaluated")


# -- 6 declaration content, 10 agreement executor ----------------------------------------------
def test_the_buffer_declaration_states_the_subdivision_clause(site: Site) -> None:
    site.standard(declarations=False)
    did = site.declare("buffer")  # clause not recorded
    row = only(site.evaluate("check_declaration_content"), "declaration_content")
    assert (row["paragraph"], row["severity"], row["passed"], row["measured_value"],
            row["feature_id"]) == ("6", "error", False, 1, did)
    assert row["message"] == ("buffer declaration DOC-buffer does not state that on further "
                              "subdivision each lot of record meets the monumentation of 6(b) "
                              "(subdivision_clause)")
    site.update("declaration", did, subdivision_clause=True)
    assert only(site.evaluate("check_declaration_content"), "declaration_content")["passed"]


def test_undecided_the_missing_clause_is_a_warning(site: Site) -> None:
    site.standard(declarations=False, status="under_review", decided_on=None)
    site.declare("buffer", subdivision_clause=False)
    row = only(site.evaluate("check_declaration_content"), "declaration_content")
    assert row["severity"] == "warning" and not row["passed"]


@pytest.mark.parametrize(("executed_by", "conveyance", "executor_ok", "content_ok"), [
    ("board", True, True, True), ("staff", True, False, True), (None, False, False, False)])
def test_public_land_agreement(site: Site, executed_by: str | None, conveyance: bool,
                               executor_ok: bool, content_ok: bool) -> None:
    site.standard(declarations=False, public_land=True)
    site.declare("buffer", recorded=False, public_land_agreement=True,
                 conveyance_clause=conveyance, executed_by=executed_by)
    rows = site.evaluate("check_declaration_content")
    executor = only(rows, "agreement_executor")
    assert (executor["paragraph"], executor["passed"], executor["measured_value"]) == (
        "10", executor_ok, int(not executor_ok))
    assert only(rows, "declaration_content")["passed"] is content_ok
    # sql/240: an agreement District staff executed stands in for no declaration
    declared = only([r for r in site.evaluate("check_declarations") if r["paragraph"] == "6"],
                    "declaration_missing")
    assert declared["passed"] is (executed_by != "staff")
    if executed_by == "staff":
        assert declared["message"].endswith("was executed by District staff, who may not "
                                            "execute one (10)")
        assert "10 does not delegate the execution" in executor["message"]


# -- 6(b): marker design, new lots -------------------------------------------------------------
def test_marker_design_approved_in_writing(site: Site) -> None:
    site.standard()
    row = only(site.evaluate("check_marker_records"), "marker_design")
    assert row["passed"] and row["message"].startswith(
        "marker design and text approved in writing by the District's staff on 2024-06-01")
    retire_records(site, "marker_design")
    row = only(site.evaluate("check_marker_records"), "marker_design")
    assert (row["paragraph"], row["severity"], row["passed"]) == ("6(b)", "error", False)


def test_public_land_vegetation_plan_without_markers_needs_no_design(site: Site) -> None:
    site.standard(records=False, public_land=True)
    assert rows_of(site, "check_marker_records", "marker_design") == []  # plan stands in
    site.markers([(0, -60)], marker_type="flush")
    assert not only(site.evaluate("check_marker_records"), "marker_design")["passed"]


def test_each_new_lot_of_a_subdivision_is_monumented(site: Site) -> None:
    site.standard(involves_subdivision=True)
    row = only(site.evaluate("check_marker_records"), "lot_monumentation")
    assert row["passed"] is None and row["message"].startswith("not evaluated")
    site.record("lot_monumentation", facts={"lots_created": 3, "lots_monumented": 2})
    row = only(site.evaluate("check_marker_records"), "lot_monumentation")
    assert (row["passed"], row["measured_value"], row["unit"]) == (False, 1, "lots")
    assert row["message"].startswith("1 of the 3 lots of record the subdivision creates along "
                                     "the buffer is not monumented")


# -- 6(e): disturbing an established buffer ----------------------------------------------------
STRIP = rect(0, -50, 300, -30)  # 300 ft x 20 ft of the buffer: 6,000 ft2
GOOD = {"erosion_control_plan": True, "canopy_trees_removed": 0, "slope_existing_hv": 4.0,
        "slope_proposed_hv": 4.5, "uncompacted_depth_in": 18, "permeability_ratio": 1.0,
        "organic_matter_pct": 5, "sheet_flow_improved": True, "habitat_maintained": True,
        "revegetation_plan": True, "stability_finding": True}
DISTURBANCE_CODES = {"disturbance_erosion_plan": "6(e)(i)", "canopy_intact": "6(e)(ii)",
                     "restored_buffer": "6(e)(iii)", "revegetation_plan": "6(e)(iv)",
                     "disturbance_stability": "6(e)(vi)"}


def test_buffer_grading_without_a_record_is_not_evaluated(site: Site) -> None:
    site.standard()
    grade(site, STRIP)
    rows = site.evaluate("check_buffer_disturbance")
    assert {(r["check_code"], r["paragraph"]) for r in rows} == set(DISTURBANCE_CODES.items())
    assert all(r["passed"] is None and r["message"].startswith(
        "not evaluated: record missing: the permit grades 6000 ft2 of buffer (6(e))")
        for r in rows)


def test_buffer_disturbance_meeting_every_criterion(site: Site) -> None:
    site.standard()
    grade(site, STRIP)
    site.record("buffer_disturbance", facts=GOOD, document_ref="BDP-1")
    rows = site.evaluate("check_buffer_disturbance")
    assert rows and all(r["passed"] for r in rows)
    # one case per criterion of (iii): slope, depth, permeability, organic matter, two
    # statements
    assert len([r for r in rows if r["check_code"] == "restored_buffer"]) == 6
    slope = only(rows, "restored_buffer", unit="H:V")
    # "no steeper than preexisting average slope or 5:1, whichever steeper": 4:1 was steeper
    assert (float(slope["measured_value"]), float(slope["limit_value"])) == (4.5, 4.0)


def test_buffer_disturbance_figures_against_the_rule(site: Site) -> None:
    site.standard()
    grade(site, STRIP)
    site.record("buffer_disturbance", document_ref="BDP-1", facts={
        **GOOD, "canopy_trees_removed": 2, "slope_existing_hv": 8.0, "slope_proposed_hv": 4.0,
        "uncompacted_depth_in": 12, "permeability_ratio": 0.9, "organic_matter_pct": 20,
        "stability_finding": False, "revegetation_plan": None})
    rows = site.evaluate("check_buffer_disturbance")
    got = {(r["check_code"], r["unit"]): (r["passed"],
                                          None if r["measured_value"] is None
                                          else float(r["measured_value"]),
                                          None if r["limit_value"] is None
                                          else float(r["limit_value"])) for r in rows}
    assert got[("canopy_intact", "trees")] == (False, 2.0, 0.0)
    assert got[("restored_buffer", "H:V")] == (False, 4.0, 5.0)  # 8:1 before: 5:1 governs
    assert got[("restored_buffer", "in")] == (False, 12.0, 18.0)
    assert got[("restored_buffer", "ratio")] == (False, 0.9, 1.0)
    assert got[("restored_buffer", "%")] == (False, 20.0, 15.0)  # above the 15 % ceiling
    assert got[("disturbance_stability", "missing")] == (False, 1.0, 0.0)
    assert got[("revegetation_plan", "missing")][0] is None  # not said: not evaluated
    depth = only(rows, "restored_buffer", unit="in")
    assert depth["message"] == ("buffer disturbance record (BDP-1): uncompacted depth of the "
                                "top soil profile: 12 in, where 6(e)(iii) asks at least 18 in")


# -- 6(g): material in a buffer ----------------------------------------------------------------
def test_grading_in_a_buffer_places_material(site: Site) -> None:
    site.standard()
    gid = grade(site, STRIP)
    row = only(site.evaluate("check_buffer_material"), "buffer_material", feature_id=gid)
    # 6,000 ft2 / 43,560 = 0.1377 acres
    assert (row["paragraph"], row["passed"], float(row["measured_value"])) == (
        "6(g)", False, 0.1377)
    assert row["area_m2"] == pytest.approx(6000 * 0.3048 ** 2)
    assert "excavates or places material on 6000 ft2 (0.1377 acres) of buffer" in row["message"]


@pytest.mark.parametrize("kind", ["buffer_disturbance", "temporary_placement"])
def test_grading_under_6e_or_temporary_placement_is_excused(site: Site, kind: str) -> None:
    site.standard()
    gid = grade(site, STRIP)
    site.record(kind, approved_on="2024-06-15", approved_by="staff", facts=GOOD)
    row = only(site.evaluate("check_buffer_material"), "buffer_material", feature_id=gid)
    assert row["passed"] and row["measured_value"] == 0
    assert "works 0.1377 acres of buffer" in row["message"]


def test_excavated_bmps_count_infiltration_features_do_not(site: Site) -> None:
    site.standard()
    sw = site.add("subwatershed", rect(0, -200, 300, 0), permit_id=site.permit_id, name="SW")
    pond = site.add("bmp", rect(0, -40, 50, -20), permit_id=site.permit_id, subwatershed_id=sw,
                    kind="wet_pond", volume_cuft=1000, roof_runoff_only=False)
    site.add("bmp", rect(100, -40, 150, -20), permit_id=site.permit_id, subwatershed_id=sw,
             kind="infiltration", volume_cuft=1000, roof_runoff_only=False)
    rows = site.evaluate("check_buffer_material")
    assert [r["feature_id"] for r in rows if r["check_code"] == "buffer_material"
            and not r["passed"]] == [pond]
    assert float(only(rows, "buffer_material", feature_id=pond)["measured_value"]) == \
        round(1000 / 43560, 4)


# -- 6(c) equivalence --------------------------------------------------------------------------
def test_a_varying_buffer_needs_the_districts_finding_of_equivalence(site: Site) -> None:
    site.standard(buffer=rect(0, -40, 300, 0), records=False)  # 40 ft < 50 ft
    row = only(site.evaluate("check_buffer_width"), "buffer_equivalence")
    assert (row["paragraph"], row["passed"], row["measured_value"]) == ("6(c)", False, 1)
    assert row["message"].startswith("the buffer varies (narrowest 40.00 ft < 50 ft)")
    site.record("buffer_equivalence", approved_on="2024-06-01", approved_by="board",
                document_ref="BEQ-1")
    row = only(site.evaluate("check_buffer_width"), "buffer_equivalence")
    assert row["passed"] and "equivalent to a uniform 50 ft buffer on 2024-06-01 (BEQ-1)" \
        in row["message"]


def test_a_buffer_50_ft_wide_everywhere_is_the_uniform_buffer(site: Site) -> None:
    site.standard(records=False)  # 60 ft
    row = only(site.evaluate("check_buffer_width"), "buffer_equivalence")
    assert row["passed"] and row["message"].startswith(
        "the buffer is at least 50 ft wide everywhere (narrowest 60.00 ft)")
