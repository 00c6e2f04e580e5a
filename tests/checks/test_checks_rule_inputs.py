"""Checks that lack an input say so (not_evaluated), 5(c)(i) land cover coverage, 5(d) analysis
missing, the base of the 5(c)(ii)/(iii) 20 % shares, and 7(c)(i) for every disturbance of a ranked
wetland community.

Sites are the standard site of tests/support/checks_scenarios.py (parcel x 0..300 ft, y -200..50;
wetland x -50..350, y 0..100; a 10 x 10 ft fill at x 340..350, y 90..100, so 2(a)(i) makes
it a Rule M permit) and the stormwater site of tests/checks/test_checks_stormwater.py (subwatershed
x 0..100, y -200..-100: impervious west half, open space (good) east half; B soil south of
y -150, D soil north of it; four 2,500 ft2 pieces). Areas in ft2, 43,560 ft2 per acre.
"""

from __future__ import annotations

import ledger_scenarios as ls
import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    only,
    rect,
    site_fixture,
    sqft_to_acres,
)
from test_checks_incremental import _full, _plan, _results, _since
from test_checks_stormwater import q, stormwater_site

# TR-55, P = 2.8 in: Q(98) = 2.5692, Q(61) = 0.2924, Q(80) = 1.1021 in; each piece 2,500 ft2.
V_AB = (q(2.8, 98) + q(2.8, 61)) * 2500 / 12  # 596.2 ft3 (B half: impervious + lawn on B)
V_CD = (q(2.8, 98) + q(2.8, 80)) * 2500 / 12  # 764.8 ft3 (D half: impervious + lawn on D)
V = V_AB + V_CD  # 1,361.0 ft3: "the volume required by paragraph 5(c)(i)"


def acres(sqft: float) -> float:
    return round(sqft_to_acres(sqft), 4)


def run_permit(site: Site) -> int:
    """A check run of the site's permit (inside the test's transaction); its id."""
    return int(site.conn.execute(sa.text("SELECT checks.run_checks(1, :p)"),
                                 {"p": site.permit_id}).scalar_one())


def outcomes(site: Site, run_id: int) -> dict[str, tuple]:
    rows = site.conn.execute(sa.text(
        "SELECT check_code, outcome, evaluated_count, finding_count FROM checks.outcome "
        "WHERE run_id = :r AND permit_id = :p"), {"r": run_id, "p": site.permit_id})
    return {r.check_code: (r.outcome, r.evaluated_count, r.finding_count) for r in rows
            if r.check_code != "declaration_missing"}


def findings(site: Site, run_id: int, code: str) -> list[dict]:
    return [dict(r) for r in site.conn.execute(sa.text(
        "SELECT severity, measured_value, limit_value, message, ST_Area(geom) AS area_m2 "
        "FROM checks.finding WHERE run_id = :r AND check_code = :c ORDER BY finding_id"),
        {"r": run_id, "c": code}).mappings()]


def m2(sqft: float) -> float:
    return sqft * 0.09290304


# -- 16 + 12: 5(c)(i), land cover missing over part of a subwatershed --------------------------
def uncover_north_east(site: Site) -> None:
    """The open space of the east half shrinks to its south half: x 50..100, y -150..-100 has
    no land cover: 50 x 50 = 2,500 ft2 = 0.0574 acres (232.3 m2, far above 1 m2)."""
    site.conn.execute(sa.text(
        "UPDATE core.land_cover SET valid_to = now() WHERE valid_to IS NULL "
        "AND cover_class = 'open_space_good'"))
    site.add("land_cover", rect(50, -200, 100, -150), permit_id=site.permit_id,
             cover_class="open_space_good")


# Ample BMPs: with the land cover complete every volume check passes (infiltration 1,000 >=
# V_AB 596; biofiltration 1,000 >= 20 % of V = 272; biofiltration + wet pond 2,000 >= V_CD 765).
AMPLE = {"infiltration": 1000, "pretreatment": 100, "biofiltration": 1000, "wet_pond": 1000}


def test_complete_land_cover_evaluates_the_volumes(site: Site) -> None:
    stormwater_site(site, bmps=AMPLE)
    rows = site.evaluate("check_stormwater", site.permit_id)
    cover = only(rows, "land_cover_coverage")
    assert cover["passed"] and float(cover["measured_value"]) == 0
    for code in ("infiltration_volume", "biofiltration_share", "cd_volume"):
        assert only(rows, code)["passed"] is True, code


def test_uncovered_land_is_an_error_and_the_volumes_are_not_evaluated(site: Site) -> None:
    stormwater_site(site, bmps=AMPLE)
    uncover_north_east(site)
    rows = site.evaluate("check_stormwater", site.permit_id)
    cover = only(rows, "land_cover_coverage")
    assert cover["passed"] is False and cover["severity"] == "error"
    assert float(cover["measured_value"]) == acres(2500) == 0.0574
    assert cover["area_m2"] == pytest.approx(m2(2500), abs=0.01)  # the polygon
    assert "0.0574 acres" in cover["message"] and "no land cover" in cover["message"]
    for code in ("infiltration_volume", "biofiltration_share", "cd_volume"):
        ev = only(rows, code)
        # ample BMPs, yet never a pass: V is unknown (the uncovered quarter's runoff is missing)
        assert ev["passed"] is None, code
        assert ev["severity"] == "error" and ev["limit_value"] is None
        assert ev["message"].startswith("not evaluated") and "land cover missing" in ev["message"]
        assert "0.0574 acres of SW-1" in ev["message"]
    # pretreatment needs no volume: still evaluated (100 ft3 ahead of pavement runoff)
    assert only(rows, "pretreatment")["passed"] is True

    run = run_permit(site)
    got = outcomes(site, run)
    assert got["land_cover_coverage"] == ("fail", 1, 1)
    for code in ("infiltration_volume", "biofiltration_share", "cd_volume"):
        assert got[code] == ("not_evaluated", 1, 1), code  # a finding, counted as one
    assert got["pretreatment"] == ("pass", 1, 0)
    found = findings(site, run, "infiltration_volume")
    assert [f["severity"] for f in found] == ["error"]
    assert found[0]["message"].startswith("not evaluated")
    sw = site.conn.execute(sa.text(
        "SELECT outcome, uncovered_acres FROM pub.stormwater_volume WHERE permit_id = :p"),
        {"p": site.permit_id}).one()
    assert (sw.outcome, float(sw.uncovered_acres)) == ("not_evaluated", 0.0574)


def test_a_sliver_without_land_cover_does_not_count(site: Site) -> None:
    # the open space stops 0.1 ft short of the north edge: 50 x 0.1 = 5 ft2 = 0.46 m2 < 1 m2
    stormwater_site(site, bmps=AMPLE)
    site.conn.execute(sa.text(
        "UPDATE core.land_cover SET valid_to = now() WHERE valid_to IS NULL "
        "AND cover_class = 'open_space_good'"))
    site.add("land_cover", rect(50, -200, 100, -100.1), permit_id=site.permit_id,
             cover_class="open_space_good")
    rows = site.evaluate("check_stormwater", site.permit_id)
    assert only(rows, "land_cover_coverage")["passed"] is True
    assert only(rows, "infiltration_volume")["passed"] is True


# -- 14: the base of the 20 % shares ---------------------------------------------------------
def set_share_base(site: Site, value: str, effective_on: str) -> None:
    site.add("parameter", None, name="stormwater_share_base", value_text=value,
             rule_ref="5(c)(ii)-(iii)", effective_on=effective_on)


def test_share_base_both_readings_on_one_case(site: Site) -> None:
    # infiltration 400, pretreatment 200, biofiltration 200, wet pond 600.
    # whole_5ci_volume (default): pretreatment counts up to 20 % of V = 272.2, so all 200:
    #   400 + 200 = 600 >= V_AB 596: pass; biofiltration 200 < round(0.2 x 1,361) = 272: fail.
    # group_volume: pretreatment counts up to 20 % of V_AB = 119.2: 400 + 119.2 = 519 < 596:
    #   fail; biofiltration 200 >= round(0.2 x 765) = 153: pass.
    # cd_volume is the same either way: 200 + 600 = 800 >= V_CD 765.
    stormwater_site(site, bmps={"infiltration": 400, "pretreatment": 200, "biofiltration": 200,
                                "wet_pond": 600})
    rows = site.evaluate("check_stormwater", site.permit_id)
    inf, bio = only(rows, "infiltration_volume"), only(rows, "biofiltration_share")
    assert inf["passed"] and float(inf["measured_value"]) == 600
    assert not bio["passed"] and float(bio["limit_value"]) == round(0.2 * round(V)) == 272
    assert "the 5(c)(i) volume V 1361 ft3" in bio["message"]

    # a change dated after the permit's baseline date (decided 2024-06-01) does not apply
    set_share_base(site, "group_volume", "2024-07-01")
    rows = site.evaluate("check_stormwater", site.permit_id)
    assert only(rows, "infiltration_volume")["passed"]

    set_share_base(site, "group_volume", "2024-01-01")  # in force on the baseline date
    rows = site.evaluate("check_stormwater", site.permit_id)
    inf, bio = only(rows, "infiltration_volume"), only(rows, "biofiltration_share")
    assert not inf["passed"] and float(inf["measured_value"]) == round(400 + 0.2 * V_AB) == 519
    assert bio["passed"] and float(bio["limit_value"]) == round(0.2 * round(V_CD)) == 153
    assert only(rows, "cd_volume")["passed"]


def test_an_unknown_share_base_is_refused(site: Site) -> None:
    stormwater_site(site, bmps={})
    set_share_base(site, "V_AB", "2024-01-01")
    with pytest.raises(sa.exc.DBAPIError, match="stormwater_share_base"):
        site.evaluate("check_stormwater", site.permit_id)


# -- 16 + 13: 5(d), the analysis a permit needs and does not have ----------------------------
def test_grading_subject_to_the_rule_without_hydroperiod_is_not_evaluated(site: Site) -> None:
    # the standard permit fills wetland (2(a)(i): subject to the Rule) and grades upland
    # (section 5 activity), with no hydroperiod record: both 5(d) checks are not evaluated
    site.standard()
    site.add("grading", rect(0, -200, 100, -100), permit_id=site.permit_id,
             alters_runoff_to_wetland=False)
    rows = site.evaluate("check_hydroperiod", site.permit_id)
    assert sorted(r["check_code"] for r in rows) == ["bounce", "inundation"]
    for r in rows:
        assert r["passed"] is None and r["severity"] == "error"
        assert r["message"].startswith("not evaluated: analysis missing")
        assert "grades" in r["message"] and "2(a)(i)" in r["message"]
    run = run_permit(site)
    got = outcomes(site, run)
    assert got["bounce"] == got["inundation"] == ("not_evaluated", 1, 1)
    assert [f["severity"] for f in findings(site, run, "bounce")] == ["error"]

    # the analysis on record: evaluated as usual (moderate class: +0.3 ft <= 0.5, +1 <= 2 days)
    site.add("hydroperiod", None, permit_id=site.permit_id, wetland_id=site.wetland_id,
             existing_bounce_ft=1.0, proposed_bounce_ft=1.3, existing_inundation_days=3,
             proposed_inundation_days=4)
    rows = site.evaluate("check_hydroperiod", site.permit_id)
    assert [r["passed"] for r in rows] == [True, True]


def test_fill_alone_needs_no_hydroperiod_analysis(site: Site) -> None:
    # fill, excavation or drainage alone is section 7's: 5(d) does not apply
    site.standard()
    assert site.evaluate("check_hydroperiod", site.permit_id) == []
    assert outcomes(site, run_permit(site))["bounce"] == ("not_applicable", 0, 0)


def test_work_not_subject_to_the_rule_needs_no_hydroperiod_analysis(site: Site) -> None:
    # grading (not altering runoff into a wetland) and 4,000 ft2 of impervious, no wetland
    # impact: no 2(a) trigger, so not "subject to this Rule" and 5(d) does not apply
    site.plan()
    site.parcel("P9", rect(500, 500, 700, 700))
    pid = site.permit("24-009", ["P9"])
    site.add("impervious", rect(500, 500, 600, 540), permit_id=pid, condition="proposed")
    site.add("grading", rect(500, 500, 600, 600), permit_id=pid, alters_runoff_to_wetland=False)
    assert site.evaluate("check_hydroperiod", pid) == []


# -- 15: 7(c)(i), every disturbance of a ranked wetland community ----------------------------
def test_structures_grading_and_replacement_disturb_a_ranked_community(site: Site) -> None:
    site.standard()
    # wetland community ranked B (better than the BC threshold): x 100..200, y 20..100
    site.add("heritage_area", rect(100, 20, 200, 100), rank="B", community_kind="wetland")
    # ranked C (below the threshold): x 0..50, y 60..100
    site.add("heritage_area", rect(0, 60, 50, 100), rank="C", community_kind="wetland")
    boardwalk = site.add("structure", rect(100, 40, 120, 60), permit_id=site.permit_id,
                         kind="passive_recreation")  # 20 x 20 = 400 ft2 inside B
    shed = site.add("structure", rect(10, 70, 20, 80), permit_id=site.permit_id,
                    kind="passive_recreation")  # inside the C community only: allowed
    grading = site.add("grading", rect(150, -20, 170, 30), permit_id=site.permit_id,
                       alters_runoff_to_wetland=False)  # x 150..170, y 20..30: 200 ft2 in B
    basin = site.add("replacement", rect(180, 0, 230, 50), permit_id=site.permit_id,
                     component="wetland", status="proposed")  # x 180..200, y 20..50: 600 ft2
    rows = [r for r in site.evaluate("check_replacement", site.permit_id)
            if r["check_code"] == "heritage_wetland_impact"]
    by_feature = {r["feature_id"]: r for r in rows}
    assert len(rows) == 5  # the standard fill, two structures, the grading, the basin
    assert by_feature[boardwalk]["passed"] is False
    assert float(by_feature[boardwalk]["measured_value"]) == acres(400) == 0.0092
    assert "passive_recreation structure" in by_feature[boardwalk]["message"]
    assert by_feature[grading]["passed"] is False
    assert float(by_feature[grading]["measured_value"]) == acres(200) == 0.0046
    assert by_feature[basin]["passed"] is False
    assert float(by_feature[basin]["measured_value"]) == acres(600) == 0.0138
    assert by_feature[basin]["area_m2"] == pytest.approx(m2(600), abs=0.01)
    assert by_feature[shed]["passed"] is True
    assert sum(1 for r in rows if r["passed"]) == 2  # the shed and the fill at x 340..350
    run = run_permit(site)
    assert outcomes(site, run)["heritage_wetland_impact"] == ("fail", 5, 3)
    assert len(findings(site, run, "heritage_wetland_impact")) == 3  # one per feature


# -- incremental runs (sql/285): the new inputs recheck their permit -------------------------
def test_a_withdrawn_hydroperiod_record_is_seen_by_the_incremental_run(engine) -> None:
    # 25-001 of tests/checks/test_checks_incremental.py fills W1 (2(a)(i)); here it also grades, so
    # it needs the 5(d) analysis; its record says +0.1 ft / +0 days. The record is withdrawn
    # (a hydroperiod row belongs to the permit: the permit is evaluated again) and the
    # incremental run must say what a full run says: bounce and inundation not evaluated.
    ids = _plan(engine)
    with engine.begin() as conn:
        conn.execute(sa.text(
            f"INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, "
            f"source_fid, geom) VALUES (1, :p, false, 'g1', {ls.rect((300, 300, 400, 400))})"),
            {"p": ids["p1"]})
        conn.execute(sa.text(
            "INSERT INTO core.hydroperiod (plan_area_id, permit_id, wetland_id, source_fid, "
            "existing_bounce_ft, proposed_bounce_ft, existing_inundation_days, "
            "proposed_inundation_days) VALUES (1, :p, :w, 'h1', 1.0, 1.1, 3, 3)"),
            {"p": ids["p1"], "w": ids["w1"]})
    base = _full(engine)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.hydroperiod SET valid_to = now() "
                             "WHERE valid_to IS NULL AND permit_id = :p"), {"p": ids["p1"]})
    inc = _since(engine, base)
    assert inc != base
    full = _full(engine)
    assert _results(engine, inc) == _results(engine, full)
    with engine.connect() as conn:
        got = dict(conn.execute(sa.text(
            "SELECT check_code, outcome FROM checks.outcome WHERE run_id = :r "
            "AND permit_id = :p AND paragraph = '5(d)'"), {"r": inc, "p": ids["p1"]}).all())
    assert got == {"bounce": "not_evaluated", "inundation": "not_evaluated"}
