"""The check runner and what it publishes: a run records the failures as findings and an
outcome for every permit and check; the published views show the current run; staff read
them and nothing else; the Python API and `rulem-db check` print them."""

from __future__ import annotations

import json

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    rect,
    site_fixture,
)

from rulem_cli import main as cli
from rulem_db import checks


def run(site: Site, permit_id: int | None = None) -> int:
    return site.conn.execute(sa.text("SELECT checks.run_checks(1, :p)"),
                             {"p": permit_id}).scalar_one()


def compliance(site: Site) -> dict[tuple[str, str], dict]:
    rows = site.conn.execute(sa.text(
        "SELECT * FROM pub.permit_compliance WHERE permit_id = :p"),
        {"p": site.permit_id}).mappings()
    return {(r["paragraph"], r["check_code"]): dict(r) for r in rows}


def failing_site(site: Site) -> Site:
    """The standard site with a 40 ft buffer (mean fails) and no markers (lot lines fail)."""
    return site.standard(buffer=rect(0, -40, 300, 0))


# The standard site's fill, 10 ft x 10 ft of wetland with no replacement: 100 ft2 / 43,560 =
# 0.0023 acres short (7(b)), for the permit and for the plan area (a finding without a
# permit). Every run brings the ledger up to date first (docs/checks.md, "A fresh ledger"),
# so the run judges it.
FILL_ACRES = 0.0023
DEFICITS = 2


def test_a_run_records_findings_and_an_outcome_per_check(site: Site) -> None:
    failing_site(site)
    run_id = run(site)
    counts = site.conn.execute(sa.text(
        "SELECT permit_count, finding_count, error_count, warning_count, finished_at "
        "FROM checks.run WHERE run_id = :r"), {"r": run_id}).one()
    assert counts.permit_count == 1 and counts.finished_at is not None
    found = {(r.paragraph, r.check_code): r for r in site.conn.execute(sa.text(
        "SELECT * FROM pub.finding WHERE run_id = :r"), {"r": run_id})}
    assert set(found) == {("6(c)", "buffer_avg_width"), ("6(b)", "marker_lot_line"),
                          ("6(b)", "marker_gap"), ("7(b)", "replacement_deficit")}
    # mean width, two bare crossings, one long gap, the permit's and the plan's deficit
    assert counts.finding_count == 1 + 2 + 1 + DEFICITS
    deficits = site.conn.execute(sa.text(
        "SELECT permit_id, measured_value FROM pub.finding WHERE run_id = :r "
        "AND check_code = 'replacement_deficit' ORDER BY permit_id"), {"r": run_id}).all()
    assert [(p, float(v)) for p, v in deficits] == [(site.permit_id, FILL_ACRES),
                                                    (None, FILL_ACRES)]
    assert float(found["6(c)", "buffer_avg_width"].measured_value) == pytest.approx(40.0)
    assert found["6(c)", "buffer_avg_width"].geom is not None
    out = compliance(site)
    n_checks = site.conn.execute(sa.text("SELECT count(*) FROM checks.rule_check")).scalar()
    assert len(out) == n_checks
    assert out["6(c)", "buffer_avg_width"]["outcome"] == "fail"
    assert out["6(c)", "buffer_min_width"]["outcome"] == "pass"
    assert float(out["6(c)", "buffer_min_width"]["measured_value"]) == pytest.approx(40.0)
    assert out["7(g)", "structure_in_wetland"]["outcome"] == "not_applicable"
    assert out["6(b)", "marker_lot_line"]["finding_count"] == 2


def test_compliance_reports_the_worst_case(site: Site) -> None:
    site.standard()
    site.markers([(0, -60), (100, -60), (300, -60)])  # gaps 100 and 200 ft: both pass
    run(site)
    gap = compliance(site)["6(b)", "marker_gap"]
    assert gap["outcome"] == "pass" and float(gap["measured_value"]) == pytest.approx(200.0)


def test_the_latest_run_of_a_permit_is_the_current_one(site: Site) -> None:
    failing_site(site)
    first = run(site)
    site.markers([(0, -40), (150, -40), (300, -40)])
    second = run(site, site.permit_id)
    current = site.conn.execute(sa.text(
        "SELECT DISTINCT run_id FROM pub.finding WHERE permit_id IS NOT NULL")).scalars()
    assert list(current) == [second] and second > first
    codes = set(site.conn.execute(sa.text(
        "SELECT check_code FROM pub.finding WHERE permit_id IS NOT NULL")).scalars())
    assert codes == {"buffer_avg_width", "replacement_deficit"}
    # the plan area's finding is the latest plan-wide run's
    assert site.conn.execute(sa.text(
        "SELECT run_id FROM pub.finding WHERE permit_id IS NULL")).scalar_one() == first
    # the first run is kept
    assert site.conn.execute(sa.text("SELECT count(*) FROM checks.finding WHERE run_id = :r"),
                             {"r": first}).scalar() == 4 + DEFICITS


def test_denied_permits_are_not_checked_and_lose_their_findings(site: Site) -> None:
    failing_site(site)
    run(site)
    assert site.conn.execute(sa.text("SELECT count(*) FROM pub.finding")).scalar() == \
        4 + DEFICITS
    site.update("permit", site.permit_id, status="denied")
    run(site)
    # a denied permit's fill is no impact: nothing is short, plan-wide either
    assert site.conn.execute(sa.text("SELECT count(*) FROM pub.finding")).scalar() == 0
    assert compliance(site) == {}


def test_a_plan_area_without_boundary_is_refused(site: Site) -> None:
    with pytest.raises(sa.exc.DBAPIError, match="no CWMP area boundary"):
        run(site)


def test_live_views_show_transects_and_volumes(site: Site) -> None:
    failing_site(site)
    sw = site.add("subwatershed", rect(0, -200, 100, -100), permit_id=site.permit_id, name="S")
    site.add("land_cover", rect(0, -200, 100, -100), permit_id=site.permit_id,
             cover_class="impervious")
    site.add("bmp", rect(0, -200, 10, -190), permit_id=site.permit_id, subwatershed_id=sw,
             kind="wet_pond", volume_cuft=100, roof_runoff_only=False)
    t = site.conn.execute(sa.text(
        "SELECT count(*), min(width_ft), bool_and(outcome = 'pass') FROM pub.buffer_transect "
        "WHERE permit_id = :p"), {"p": site.permit_id}).one()
    assert tuple(t) == (60, 40, True)
    v = site.conn.execute(sa.text("SELECT * FROM pub.stormwater_volume")).mappings().one()
    assert v["name"] == "S" and v["outcome"] == "fail"  # no soil mapped: all of it C/D
    assert float(v["v_cd_cuft"]) > 0 and float(v["wet_pond_cuft"]) == 100


def test_staff_read_the_published_checks_and_cannot_run_them(site: Site) -> None:
    failing_site(site)
    run(site)
    site.conn.execute(sa.text("SET LOCAL ROLE rulem_staff"))
    for view in ("finding", "permit_compliance", "buffer_transect", "stormwater_volume"):
        site.conn.execute(sa.text(f"SELECT * FROM pub.{view}")).all()
    r = site.conn.execute(sa.text(
        "SELECT required FROM pub.screen_footprint('acd-53-62', ST_GeomFromEWKT(:g), NULL, "
        "false) LIMIT 1"), {"g": rect(0, 10, 100, 60)}).scalar()
    assert r is True
    with pytest.raises(sa.exc.ProgrammingError, match="permission denied"), \
            site.conn.begin_nested():
        site.conn.execute(sa.text("SELECT checks.run_checks(1)"))


def test_the_etl_role_runs_the_checks(site: Site) -> None:
    failing_site(site)
    site.conn.execute(sa.text("SET LOCAL ROLE rulem_etl"))
    run_id = run(site)
    assert site.conn.execute(sa.text("SELECT finding_count FROM checks.run WHERE run_id = :r"),
                             {"r": run_id}).scalar() == 4 + DEFICITS


def test_every_published_column_is_documented(site: Site) -> None:
    missing = site.conn.execute(sa.text(
        "SELECT c.table_name || '.' || c.column_name FROM information_schema.columns c "
        "WHERE c.table_schema = 'pub' AND c.table_name IN ('finding', 'permit_compliance', "
        "'buffer_transect', 'stormwater_volume') AND col_description("
        "format('pub.%I', c.table_name)::regclass, c.ordinal_position) IS NULL")).scalars()
    assert list(missing) == []


# -- Python API and CLI: committed data in a fresh database ----------------------------------
@pytest.fixture
def committed(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        s = Site(conn)
        s.standard(buffer=rect(0, -40, 300, 0))
        s.markers([(0, -40), (150, -40), (300, -40)])


def test_python_api_runs_and_reads_back(committed: None, db_url: str) -> None:
    summary = checks.run_checks(db_url)
    assert summary.plan_areas == ["acd-53-62"] and summary.permits == 1
    assert summary.findings == 1 + DEFICITS and summary.errors == 1 + DEFICITS
    assert f"{1 + DEFICITS} findings" in str(summary)
    again = checks.run_checks(db_url, permit_no="24-001")
    assert again.run_id == summary.run_id + 1
    f, deficit, plan = checks.findings(db_url)
    assert (f["permit_no"], f["paragraph"], f["check_code"]) == ("24-001", "6(c)",
                                                                  "buffer_avg_width")
    assert [(r["permit_no"], r["check_code"], float(r["measured_value"]))
            for r in (deficit, plan)] \
        == [("24-001", "replacement_deficit", FILL_ACRES),
            (None, "replacement_deficit", FILL_ACRES)]
    with pytest.raises(checks.CheckError, match="no current permit '99-999'"):
        checks.run_checks(db_url, permit_no="99-999")


def test_cli_prints_findings_grouped_by_permit(committed: None, db_url: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--db", db_url, "check"]) == 0
    out = capsys.readouterr().out
    assert "permit 24-001 (acd-53-62): 2 findings, 2 errors" in out
    assert "buffer_avg_width" in out and "checks: run" in out
    assert cli.main(["--db", db_url, "check", "--last", "--permit", "24-001",
                     "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["paragraph"], r["check_code"], r["measured_value"]) for r in rows] == [
        ("6(c)", "buffer_avg_width", 40.0), ("7(b)", "replacement_deficit", FILL_ACRES)]
    assert cli.main(["--db", db_url, "check", "--plan-area", "nowhere"]) == 1
    assert "unknown plan area 'nowhere'" in capsys.readouterr().err
    # on two sessions (rulem_db.checks.parallel): the same findings
    assert cli.main(["--db", db_url, "check", "--workers", "2"]) == 0
    assert "permit 24-001 (acd-53-62): 2 findings, 2 errors" in capsys.readouterr().out
    assert cli.main(["--db", db_url, "check", "--workers", "0"]) == 1
    assert "--workers must be 1 or more" in capsys.readouterr().err


# -- the two forms of a check function (docs/checks.md, "Performance") ----------------------
SET_PROBE = """
CREATE FUNCTION checks.check_zz_set(p_plan_area_id integer, p_permit_ids bigint[] DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE AS $$
  -- one case per permit, measured: how many permits this call was given (0: all)
  SELECT 'T', 'set_probe', 'warning', ps.permit_id, NULL::bigint, NULL::bigint, true,
         coalesce(cardinality(p_permit_ids), 0)::numeric, 0::numeric, 'permits', 'probe',
         NULL::geometry
  FROM checks.permit_site ps
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids)))
$$;
CREATE FUNCTION checks.check_zz_one(p_plan_area_id integer, p_permit_id bigint DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE AS $$
  -- one case per permit, measured: 1 when called for that permit alone, 0 for all
  SELECT 'T', 'one_probe', 'warning', ps.permit_id, NULL::bigint, NULL::bigint, true,
         (p_permit_id IS NOT NULL)::int::numeric, 0::numeric, 'permits', 'probe',
         NULL::geometry
  FROM checks.permit_site ps
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_id IS NULL OR ps.permit_id = p_permit_id)
$$;
INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, severity, worse,
                               unit, sort_order, title, measure, not_applicable_when)
VALUES ('T', 'set_probe', 'checks.check_zz_set', 'test', 'warning', 'higher', 'permits', 998,
        'A probe.', 'Permits per call.', 'Never.'),
       ('T', 'one_probe', 'checks.check_zz_one', 'test', 'warning', 'higher', 'permits', 999,
        'A probe.', 'One permit per call.', 'Never.');
"""


def test_a_set_form_check_is_called_once_for_all_permits_and_a_one_permit_form_per_permit(
        site: Site) -> None:
    site.standard()
    second = site.permit("24-002", ["P1"])
    third = site.permit("24-003", ["P1"])
    site.conn.execute(sa.text(SET_PROBE))
    site.conn.execute(sa.text("SELECT checks.evaluate(1, ARRAY[:a, :b]::bigint[])"),
                      {"a": site.permit_id, "b": second})
    got = {(r.check_code, r.permit_id): float(r.measured_value) for r in site.conn.execute(
        sa.text("SELECT check_code, permit_id, measured_value FROM pg_temp.check_evaluation "
                "WHERE paragraph = 'T'"))}
    assert got == {("set_probe", site.permit_id): 2.0, ("set_probe", second): 2.0,
                   ("one_probe", site.permit_id): 1.0, ("one_probe", second): 1.0}
    # a plan-wide run: each called once with NULL (every permit)
    run_id = run(site)
    measured = set(site.conn.execute(sa.text(
        "SELECT check_code, permit_id, measured_value FROM checks.outcome "
        "WHERE run_id = :r AND paragraph = 'T'"), {"r": run_id}).all())
    assert {(c, p, float(m)) for c, p, m in measured} == {
        (code, p, 0.0) for code in ("set_probe", "one_probe")
        for p in (site.permit_id, second, third)}
