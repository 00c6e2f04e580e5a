"""7(e) replacement_certification (sql/262_check_certification.sql): credit the ledger counts as
certified stands on a certification date and on monitoring that met its standards.

Each test builds one permit with one 200 ft x 100 ft wetland replacement basin (20,000 ft^2 =
1,858.0608 m^2) and its records, inside a rolled-back transaction of one database per module.
The measured value is the count of problems: 1 for a missing certification date, plus one per
not-met standard-year observed by the check date.
"""

from __future__ import annotations

from datetime import date, timedelta

import ledger_scenarios as ls
import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    FT,
    Site,
    checks_engine_fixture,
    only,
    rect,
    site_fixture,
)

CODE = "replacement_certification"
BASIN_M2 = 200 * 100 * FT * FT  # 1,858.0608 m^2


def _basin(site: Site, status: str = "certified", component: str = "wetland",
           permit_id: int | None = None, **cols) -> int:
    return site.add("replacement", rect(0, 0, 200, 100), permit_id=permit_id or site.permit_id,
                    component=component, status=status, **cols)


def _monitor(site: Site, replacement_id: int, standard: str, outcome: str,
             observed_on: str | None = "2025-09-20", year: int = 2025) -> int:
    return site.add("replacement_monitoring", None, replacement_id=replacement_id,
                    monitoring_year=year, performance_standard=standard, outcome=outcome,
                    observed_on=observed_on)


@pytest.fixture
def permit(site: Site) -> Site:
    site.permit_id = site.permit("24-001", ["P1"])
    return site


def test_certified_with_a_date_and_met_monitoring_passes(permit: Site) -> None:
    rid = _basin(permit, status_on="2025-06-30", constructed_on="2025-05-01",
                 certified_on="2025-06-30")
    _monitor(permit, rid, "hydrology", "met")
    _monitor(permit, rid, "vegetation", "met")
    row = only(permit.evaluate("check_certification"), CODE)
    assert (row["paragraph"], row["severity"], row["permit_id"], row["feature_id"]) == (
        "7(e)", "error", permit.permit_id, rid)
    assert row["passed"] and row["measured_value"] == 0 and row["limit_value"] == 0
    assert "certified on 2025-06-30" in row["message"]
    assert row["area_m2"] == pytest.approx(BASIN_M2)


def test_status_date_of_a_certified_feature_is_its_certification_date(permit: Site) -> None:
    _basin(permit, status_on="2025-06-30")  # no certified_on: status_on says when
    row = only(permit.evaluate("check_certification"), CODE)
    assert row["passed"] and "certified on 2025-06-30" in row["message"]


def test_certified_without_any_date_fails(permit: Site) -> None:
    rid = _basin(permit, status_on=None, certified_on=None)
    row = only(permit.evaluate("check_certification"), CODE)
    assert not row["passed"] and row["measured_value"] == 1 and row["feature_id"] == rid
    assert "counted as certified credit but has no certification date" in row["message"]


def test_every_not_met_standard_year_observed_by_today_counts(permit: Site) -> None:
    rid = _basin(permit, status_on="2025-06-30", certified_on="2025-06-30")
    _monitor(permit, rid, "hydrology", "met")
    _monitor(permit, rid, "vegetation", "not_met")
    _monitor(permit, rid, "hydrology", "not_met", "2024-09-20", year=2024)
    _monitor(permit, rid, "vegetation", "not_met", None, year=2024)  # no date: counts
    later = (date.today() + timedelta(days=30)).isoformat()
    _monitor(permit, rid, "invasives", "not_met", later, year=date.today().year)  # not yet
    row = only(permit.evaluate("check_certification"), CODE)
    assert not row["passed"] and row["measured_value"] == 3
    assert ("monitoring found 3 standard-year(s) not met (2024 hydrology; 2024 vegetation; "
            "2025 vegetation)") in row["message"]


def test_a_corrected_outcome_clears_the_failure_and_both_problems_add(permit: Site) -> None:
    rid = _basin(permit, status_on=None)
    mid = _monitor(permit, rid, "vegetation", "not_met")
    assert only(permit.evaluate("check_certification"), CODE)["measured_value"] == 2
    permit.update("replacement_monitoring", mid, outcome="met")  # a new version
    permit.update("replacement", rid, certified_on="2025-07-01")
    row = only(permit.evaluate("check_certification"), CODE)
    assert row["passed"] and row["measured_value"] == 0


def test_pending_upland_and_denied_replacement_is_not_looked_at(permit: Site) -> None:
    constructed = _basin(permit, status="constructed", status_on="2025-06-30")
    _monitor(permit, constructed, "vegetation", "not_met")  # not counted credit (yet)
    _basin(permit, status="certified", component="upland", status_on=None)  # earns nothing
    denied = permit.permit("24-002", ["P1"], status="denied")
    _basin(permit, permit_id=denied, status_on=None)
    assert permit.evaluate("check_certification") == []


def test_district_projects_are_checked_in_plan_wide_runs(permit: Site) -> None:
    rid = permit.add("replacement", rect(300, 0, 400, 100), permit_id=None,
                     district_project="Lateral 2 restoration", component="wetland",
                     status="certified", status_on=None)
    row = only(permit.evaluate("check_certification"), CODE)
    assert (row["permit_id"], row["feature_id"], row["passed"]) == (None, rid, False)
    assert permit.evaluate("check_certification", permit.permit_id) == []


def test_a_monitoring_record_rechecks_its_replacements_permit(engine: sa.Engine) -> None:
    """An incremental run (sql/285) evaluates again the permit whose replacement a new
    monitoring record is about, and finds what a full run finds; the other permit, 5 km away,
    is carried over."""
    with engine.begin() as conn:
        ls.plan_boundary(conn, (-1000, -1000, 7000, 2000))
        p1 = ls.permit(conn, "25-001", pins=[])
        p2 = ls.permit(conn, "25-002", pins=[])
        r1 = ls.replacement(conn, p1, (0, 0, 100, 100), "r1", status_on="2025-06-30")
        ls.replacement(conn, p2, (5000, 0, 5100, 100), "r2", status_on="2025-06-30")
    with engine.begin() as conn:  # each step commits on its own, as the nightly's do
        base = conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.replacement_monitoring (plan_area_id, replacement_id, "
            "monitoring_year, performance_standard, outcome, source_fid) "
            "VALUES (1, :r, 2025, 'vegetation', 'not_met', 'm1')"), {"r": r1})
    with engine.begin() as conn:
        inc = conn.execute(sa.text("SELECT checks.run_checks_since(1, :b)"),
                           {"b": base}).scalar_one()
        why = conn.execute(sa.text("SELECT rechecked_why FROM checks.run WHERE run_id = :r"),
                           {"r": inc}).scalar_one()
        found = conn.execute(sa.text(
            "SELECT permit_id, measured_value FROM checks.finding WHERE run_id = :r "
            "AND check_code = :c"), {"r": inc, "c": CODE}).all()
    assert inc != base
    assert why == {str(p1): "monitoring of a replacement of the permit changed"}
    assert [tuple(f) for f in found] == [(p1, 1)]
