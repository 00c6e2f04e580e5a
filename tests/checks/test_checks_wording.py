"""What a clerk reads (docs/checks.md, "Figures and words"): a figure printed as it is
measured and compared, the rule's own words for ranks, and no message that stops being true when
the record around it changes. On the standard site of checks_scenarios (edge y = 0, x 0..300
ft: 60 transects 5 ft apart)."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    only,
    polygon,
    rect,
    site_fixture,
)


def test_the_mean_width_is_rounded_once(site: Site) -> None:
    """30 transects 40.006 ft wide and 30 of 60 ft: 50.003 ft, published 50.00. The mean of the
    widths rounded to 0.01 ft (40.01) would be 50.005, published 50.01."""
    site.standard(buffer=polygon([(0, -40.006), (150, -40.006), (150, -60), (300, -60),
                                  (300, 0), (0, 0)]))
    rows = site.evaluate("check_buffer_width")
    mean = only(rows, "buffer_avg_width")
    assert float(mean["measured_value"]) == 50.00
    assert mean["message"] == "mean buffer width 50.00 ft (at least 50 ft) over 60 transects"
    least = only(rows, "buffer_min_width")
    assert float(least["measured_value"]) == 40.01  # the minimum: as measured, 0.01 ft
    assert least["message"].startswith("minimum buffer width 40.01 ft (at least 25 ft)")


def test_ranks_read_as_the_rule_writes_them(site: Site) -> None:
    site.standard()
    site.add("heritage_area", rect(330, 80, 360, 110), rank="B", community_kind="wetland")
    bad = [r for r in site.evaluate("check_replacement")
           if r["check_code"] == "heritage_wetland_impact" and not r["passed"]][0]
    assert bad["message"].endswith("in a wetland community ranked B/C or higher")
    assert site.conn.execute(sa.text(
        "SELECT array_agg(checks.heritage_rank_label(r) ORDER BY r) FROM unnest("
        "ARRAY['A', 'AB', 'BC', 'CD', 'unranked']) r")).scalar_one() == [
        "A", "A/B", "B/C", "C/D", "unranked"]


def test_a_road_in_wetland_says_what_its_record_holds(site: Site) -> None:
    """The finding stays true when staff waive it under a variance (the waiver reference is
    shown beside it): it names the structure's missing variance_ref, not the absence of any
    variance."""
    site.standard()
    site.add("structure", rect(200, -50, 210, 50), permit_id=site.permit_id, kind="road")
    row = only(site.evaluate("check_structures"), "structure_in_wetland")
    assert "without a variance" not in row["message"]
    assert row["message"].endswith("acres of CWMP wetland, and no variance is recorded on the "
                                   "structure (variance_ref): 7(g) allows it only under a "
                                   "variance")


def test_a_certified_basin_without_monitoring_does_not_claim_it_met_standards(
        site: Site) -> None:
    site.standard()
    rid = site.add("replacement", rect(0, -190, 200, -90), permit_id=site.permit_id,
                   component="wetland", status="certified", status_on="2025-06-30",
                   certified_on="2025-06-30")
    row = only(site.evaluate("check_certification"), "replacement_certification")
    assert row["passed"] and "standard" not in row["message"]
    assert row["message"].endswith("certified on 2025-06-30; no monitoring record yet (7(e) "
                                   "monitoring_due says when one is due)")
    site.add("replacement_monitoring", None, replacement_id=rid, monitoring_year=2025,
             performance_standard="vegetation", outcome="met", observed_on="2025-09-20")
    row = only(site.evaluate("check_certification"), "replacement_certification")
    assert row["message"].endswith("1 monitoring record over 1 year, every standard met")


def test_pretreatment_missing_shows_the_limit_it_fails(site: Site) -> None:
    """A failing pretreatment reads "0 ft3 against 1 ft3", never "measured 0, limit 0"."""
    site.standard()
    sw = site.add("subwatershed", rect(0, -200, 300, -100), permit_id=site.permit_id,
                  name="SW-1")
    site.add("land_cover", rect(0, -200, 300, -100), permit_id=site.permit_id,
             cover_class="impervious")
    site.add("soil", rect(-100, -300, 400, 0), hydrologic_soil_group="A",
             high_groundwater=False, contaminated=False)
    site.add("bmp", rect(0, -190, 50, -170), permit_id=site.permit_id, subwatershed_id=sw,
             kind="infiltration", volume_cuft=100, roof_runoff_only=False)
    row = only(site.evaluate("check_stormwater"), "pretreatment")
    assert (row["passed"], row["measured_value"], row["limit_value"]) == (False, 0, 1)
    assert row["message"].startswith("SW-1: no pretreatment (0 ft3) ahead of infiltration")


def test_the_incremental_run_rechecks_a_condition_that_fell_due(site: Site) -> None:
    """sql/285 with sql/263: a day passing is a change for the checks that read the date."""
    site.standard()
    today = dt.date.today()
    site.add("permit_condition", None, permit_id=site.permit_id, condition="Record it",
             kind="easement", state="open", due_on=(today - dt.timedelta(days=1)).isoformat())
    rows = site.conn.execute(sa.text(
        "SELECT scope, permit_id, why FROM checks.changes_since(1, now() + interval '1 hour', "
        ":after, :today)"), {"after": today - dt.timedelta(days=2), "today": today}).all()
    assert ("permit", site.permit_id,
            f"as of today ({today}): a condition of issuance fell due") in [tuple(r) for r in rows]
