"""Replacement implementation (7(e)), the TEP's date (7(f)) and conditions of issuance (10):
sql/263_check_implementation.sql, and the incremental run's date-driven recheck.

Each test builds the standard site's permit (approved 2024-06-01) with one 200 ft x 100 ft
wetland replacement basin and its records, in a rolled-back transaction. The checks read the
date (a monitoring year falls due at the end of its year), so the years are counted back from
today: Y is this year, and every year before it has ended.
"""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    only,
    rect,
    site_fixture,
)

TODAY = dt.date.today()
Y = TODAY.year
FN = "check_implementation"


def database_today(site: Site) -> dt.date:
    """The date the checks count days to (the database's current_date, read after they ran):
    TODAY is read when the module is imported, which a run that crosses midnight leaves a day
    behind."""
    return site.conn.execute(sa.text("SELECT current_date")).scalar_one()


def basin(site: Site, status: str = "certified", certified_on: str | None = None,
          constructed_on: str | None = "2025-05-01", district: bool = False,
          **cols: object) -> int:
    """The basin; a certified one built 60 days before its certification."""
    if certified_on:
        constructed_on = (dt.date.fromisoformat(certified_on)
                          - dt.timedelta(days=60)).isoformat()
    return site.add("replacement", rect(0, -190, 200, -90),
                    permit_id=None if district else site.permit_id,
                    component="wetland", status=status,
                    status_on=certified_on or constructed_on, certified_on=certified_on,
                    constructed_on=constructed_on, **cols)


def visit(site: Site, rid: int, year: int, outcome: str = "met") -> None:
    for standard in ("hydrology", "vegetation"):
        site.add("replacement_monitoring", None, replacement_id=rid, monitoring_year=year,
                 performance_standard=standard, outcome=outcome,
                 observed_on=f"{year}-09-20")


def surety(site: Site, rid: int | None, posted_on: str = "2024-06-01",
           released_on: str | None = None) -> int:
    return site.add("financial_assurance", None, permit_id=site.permit_id, replacement_id=rid,
                    amount=10000, instrument="letter_of_credit", posted_on=posted_on,
                    released_on=released_on)


def grace(site: Site, days: int) -> None:
    """monitoring_grace_days from the day after the rule's adoption (a new dated row)."""
    site.conn.execute(sa.text(
        "INSERT INTO core.parameter (plan_area_id, name, value_num, unit, rule_ref, "
        "effective_on, note) VALUES (1, 'monitoring_grace_days', :d, 'days', '7(e)', "
        "'2004-01-29', 'test')"), {"d": days})


@pytest.fixture
def permit(site: Site) -> Site:
    return site.standard()


# -- 7(e) monitoring_due -----------------------------------------------------------------------
def test_a_year_past_due_without_a_record_is_an_error_once_past_the_grace(permit: Site) -> None:
    rid = basin(permit, certified_on=f"{Y - 3}-07-01")
    visit(permit, rid, Y - 3)
    visit(permit, rid, Y - 1)  # Y - 2 never visited; Y is not due before December 31
    row = only(permit.evaluate(FN), "monitoring_due")
    overdue = (database_today(permit) - dt.date(Y - 2, 12, 31)).days  # past 90 days
    assert (row["paragraph"], row["severity"], row["passed"], row["measured_value"],
            row["feature_id"]) == ("7(e)", "error", False, 1, rid)
    assert row["message"].endswith(f"no monitoring record for {Y - 2} (due by {Y - 2}-12-31, "
                                   f"{overdue} days overdue: an error after 90 days)")


def test_within_the_grace_it_is_a_warning(permit: Site) -> None:
    grace(permit, 400)  # longer than any time since last December 31
    rid = basin(permit, certified_on=f"{Y - 2}-07-01")
    visit(permit, rid, Y - 2)
    row = only(permit.evaluate(FN), "monitoring_due")
    assert (row["severity"], row["passed"], row["measured_value"]) == ("warning", False, 1)
    assert f"no monitoring record for {Y - 1}" in row["message"]


def test_years_not_due_yet_pass_and_say_when(permit: Site) -> None:
    rid = basin(permit, certified_on=TODAY.isoformat())
    row = only(permit.evaluate(FN), "monitoring_due")
    assert row["passed"] and row["measured_value"] == 0
    assert row["message"].endswith(f"its first monitoring year, {Y}, is due by {Y}-12-31")
    visit(permit, rid, Y)  # a visit of this year (its date may be ahead: not counted yet)
    assert only(permit.evaluate(FN), "monitoring_due")["passed"]


def test_every_monitoring_year_on_record(permit: Site) -> None:
    rid = basin(permit, certified_on=f"{Y - 6}-07-01")
    for year in range(Y - 6, Y - 1):  # five years
        visit(permit, rid, year)
    row = only(permit.evaluate(FN), "monitoring_due")
    assert row["passed"] and row["message"].endswith(
        f"all 5 monitoring years ({Y - 6}-{Y - 2}) on record")


def test_district_projects_are_monitored_too(permit: Site) -> None:
    basin(permit, certified_on=f"{Y - 3}-07-01", district=True,
          district_project="Lateral 2 restoration")
    rows = [r for r in permit.evaluate(FN) if r["check_code"] == "monitoring_due"]
    assert [(r["permit_id"], r["measured_value"]) for r in rows] == [(None, 3)]
    assert [r for r in permit.evaluate(FN, permit.permit_id) if r["permit_id"] is None] == []
    assert not [r for r in permit.evaluate(FN)  # the District posts no surety to itself
                if r["check_code"] == "surety_held" and r["permit_id"] is None]


# -- 7(e) surety_held --------------------------------------------------------------------------
def test_a_surety_released_on_certification_leaves_the_basin_unsecured(permit: Site) -> None:
    rid = basin(permit, certified_on=f"{Y - 1}-07-01")
    sid = surety(permit, rid, released_on=f"{Y - 1}-07-01")
    row = only(permit.evaluate(FN), "surety_held")
    assert (row["paragraph"], row["passed"], row["measured_value"]) == ("7(e)", False, 1)
    key = permit.conn.execute(sa.text("SELECT feature_key FROM core.feature "
                                      "WHERE feature_id = :f"), {"f": sid}).scalar_one()
    assert row["message"].endswith(f"has no surety held: {key} was released on {Y - 1}-07-01")
    assert f"monitoring years {Y - 1}-{Y + 3} not all met yet" in row["message"]


def test_a_surety_of_the_whole_permit_secures_each_basin(permit: Site) -> None:
    basin(permit, status="constructed")
    surety(permit, None)
    row = only(permit.evaluate(FN), "surety_held")
    assert row["passed"] and "(constructed 2025-05-01, not certified yet): surety" \
        in row["message"]


def test_released_after_the_monitoring_years_are_met(permit: Site) -> None:
    rid = basin(permit, certified_on=f"{Y - 6}-07-01")
    for year in range(Y - 6, Y - 1):
        visit(permit, rid, year)
    surety(permit, rid, released_on=f"{Y - 1}-01-15")
    row = only(permit.evaluate(FN), "surety_held")
    assert row["passed"] and row["message"].endswith(
        f"met (the last observed {Y - 2}-09-20): no surety needs to be held")
    # a year that did not meet its standard: not through monitoring, the release too early
    permit.conn.execute(sa.text(
        "UPDATE core.replacement_monitoring SET outcome = 'not_met' "
        "WHERE monitoring_year = :y AND valid_to IS NULL"), {"y": Y - 4})
    assert not only(permit.evaluate(FN), "surety_held")["passed"]


def test_undecided_permits_post_no_surety_yet(site: Site) -> None:
    site.standard(status="under_review", decided_on=None)
    basin(site, status="proposed", constructed_on=None)
    assert [r for r in site.evaluate(FN) if r["check_code"] == "surety_held"] == []


# -- 7(e) impact_surety ------------------------------------------------------------------------
@pytest.mark.parametrize(("posted_on", "released_on", "ok"), [
    ("2024-06-15", None, True), ("2024-08-01", None, False), ("2024-06-15", "2024-06-20", False)])
def test_an_impact_begun_before_construction_needs_a_held_surety(
        site: Site, posted_on: str, released_on: str | None, ok: bool) -> None:
    site.standard(impact_started_on="2024-07-01")
    rid = basin(site, status="constructed", constructed_on="2025-05-01")
    surety(site, rid, posted_on=posted_on, released_on=released_on)
    row = only(site.evaluate(FN), "impact_surety")
    assert (row["passed"], row["measured_value"], row["feature_id"]) == (ok, int(not ok), rid)
    assert row["message"].startswith("the impact began 2024-07-01, before replacement ")


def test_a_basin_built_before_the_impact_needs_no_surety_for_it(site: Site) -> None:
    site.standard(impact_started_on="2025-07-01")
    basin(site, status="constructed", constructed_on="2025-05-01")
    row = only(site.evaluate(FN), "impact_surety")
    assert row["passed"] and row["message"].endswith(
        "was constructed 2025-05-01, before the impact began (2025-07-01)")


# -- 7(f) tep_before_decision ------------------------------------------------------------------
@pytest.mark.parametrize(("tep_on", "passed", "days"), [
    ("2024-05-01", True, 0), ("2024-06-15", False, 14), (None, False, None)])
def test_the_tep_reviews_before_the_district_acts(site: Site, tep_on: str | None,
                                                  passed: bool, days: int | None) -> None:
    site.standard(tep_on=tep_on)
    row = only(site.evaluate(FN), "tep_before_decision")
    assert (row["paragraph"], row["passed"], row["measured_value"]) == ("7(f)", passed, days)
    if days:
        assert row["message"] == ("the TEP review is dated 2024-06-15, 14 days after the "
                                  "District's decision of 2024-06-01: 7(f) asks for it before "
                                  "the District acts")


def test_tep_date_is_section_7s_question_for_decided_permits(site: Site) -> None:
    site.standard(status="under_review", decided_on=None, tep_on=None)
    assert [r for r in site.evaluate(FN) if r["check_code"] == "tep_before_decision"] == []


# -- 10 condition_overdue ----------------------------------------------------------------------
def test_an_open_condition_past_its_due_date_is_a_warning(permit: Site) -> None:
    late = permit.add("permit_condition", None, permit_id=permit.permit_id,
                      condition="Record the easement", kind="easement", state="open",
                      due_on="2024-07-01")
    permit.add("permit_condition", None, permit_id=permit.permit_id,
               condition="Post the surety", kind="surety", state="open",
               due_on=(TODAY + dt.timedelta(days=30)).isoformat())
    permit.add("permit_condition", None, permit_id=permit.permit_id,
               condition="Record the declaration", kind="declaration", state="met",
               due_on="2024-07-01", met_on="2024-08-01")
    rows = [r for r in permit.evaluate(FN) if r["check_code"] == "condition_overdue"]
    assert sorted((r["passed"], r["severity"], r["measured_value"]) for r in rows) == [
        (False, "warning", 1), (True, "warning", 0), (True, "warning", 0)]
    bad = only(rows, "condition_overdue", passed=False)
    days = (database_today(permit) - dt.date(2024, 7, 1)).days
    assert bad["feature_id"] == late and bad["message"].endswith(
        f'"Record the easement" was due 2024-07-01 and is still open, {days} days later')


# -- the nightly: findings that change with the date -------------------------------------------
def test_dated_check_changes_names_the_permits_a_day_can_change(permit: Site) -> None:
    yesterday = TODAY - dt.timedelta(days=1)
    permit.add("permit_condition", None, permit_id=permit.permit_id, condition="Record it",
               kind="easement", state="open", due_on=yesterday.isoformat())

    def changed(after: dt.date) -> list:
        return permit.conn.execute(sa.text(
            "SELECT permit_id, why FROM checks.dated_check_changes(1, :a, :t)"),
            {"a": after, "t": TODAY}).all()

    assert changed(yesterday - dt.timedelta(days=1)) == [
        (permit.permit_id, "a condition of issuance fell due")]
    assert changed(TODAY) == []
    rid = basin(permit, certified_on=f"{Y - 1}-07-01")
    year_end = dt.date(Y - 1, 12, 31)
    assert (permit.permit_id, "a monitoring year fell due") in changed(year_end)
    assert rid  # the basin is the permit's
