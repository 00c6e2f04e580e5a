"""Checks register themselves (docs/checks.md): each check file puts its own rows in the catalogue,
naming the function that evaluates them; the runner runs what the catalogue names and nothing
else; a check that is no longer registered is retired, never deleted; and the table of checks
in docs/checks.md is what the catalogue gives."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    rect,
    site_fixture,
)

from rulem_db.catalogue import checks_doc, sqlfiles
from rulem_db.paths import SQL_DIR

# A check made up for the test: one failing case per permit and, with district cases, one
# without a permit. Nothing in the runner names it.
PROBE = """
CREATE FUNCTION checks.check_zz_probe(p_plan_area_id integer, p_permit_id bigint DEFAULT NULL)
RETURNS SETOF checks.evaluation LANGUAGE sql STABLE AS $$
  SELECT 'T', 'probe', 'warning', ps.permit_id, NULL::bigint, NULL::bigint, false, 3::numeric,
         1::numeric, 'probes', 'probe found 3 where 1 is allowed', NULL::geometry
  FROM checks.permit_site ps
  WHERE ps.plan_area_id = p_plan_area_id
    AND (p_permit_id IS NULL OR ps.permit_id = p_permit_id)
  UNION ALL
  SELECT 'T', 'probe', 'warning', NULL, NULL, NULL, false, 2, 1, 'probes',
         'probe found 2 in the District projects', NULL
  WHERE p_permit_id IS NULL
$$
"""


def register_probe(conn: sa.Connection, district: bool = False,
                   function: str = "checks.check_zz_probe") -> None:
    conn.execute(sa.text(PROBE))
    conn.execute(sa.text(
        "INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, "
        "severity, worse, unit, sort_order, district_cases, title, measure, "
        "not_applicable_when) VALUES ('T', 'probe', :f, 'test', 'warning', 'higher', "
        "'probes', 999, :d, 'A probe.', 'Probes found.', 'Never.')"),
        {"f": function, "d": district})


def run(site: Site) -> int:
    return site.conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()


def apply_file(conn: sa.Connection, name: str) -> None:
    """Apply one SQL file in the test's transaction, as the migration step does."""
    with conn.connection.dbapi_connection.cursor() as cur:
        cur.execute((SQL_DIR / name).read_text())


def test_every_check_is_registered_beside_its_function(site: Site) -> None:
    rows = site.conn.execute(sa.text(
        "SELECT paragraph, check_code, evaluated_by, defined_in, retired_at, "
        "checks.evaluator(evaluated_by) IS NOT NULL AS callable FROM checks.rule_check")).all()
    assert rows  # the demo's acceptance test holds the set of checks (test_checks_demo.py)
    for r in rows:
        assert r.retired_at is None and r.callable, r
        source = (SQL_DIR / r.defined_in).read_text()
        assert re.search(rf"CREATE OR REPLACE FUNCTION {re.escape(r.evaluated_by)}\(", source), r
        assert f"'{r.paragraph}', '{r.check_code}'" in source, r
    # sql/200 keeps the row type and the registration helpers, no check of its own
    assert "'applicability'" not in (SQL_DIR / "200_check_catalogue.sql").read_text()
    query = site.conn.execute(sa.text("SELECT checks.evaluation_query()")).scalar_one()
    assert {r.evaluated_by for r in rows} == set(re.findall(r"FROM (checks\.\w+)\(", query))


def test_a_check_in_the_catalogue_is_run_and_its_findings_published(site: Site) -> None:
    site.standard(buffer=rect(0, -40, 300, 0))
    register_probe(site.conn)
    run_id = run(site)
    found = site.conn.execute(sa.text(
        "SELECT permit_id, severity, title, measured_value, message FROM pub.finding "
        "WHERE run_id = :r AND check_code = 'probe' ORDER BY permit_id NULLS FIRST"),
        {"r": run_id}).all()
    # a plan-wide run calls it for every permit (permit NULL): the case without one comes too
    assert [(f.permit_id, f.severity, f.title, float(f.measured_value)) for f in found] == [
        (None, "warning", "A probe.", 2.0), (site.permit_id, "warning", "A probe.", 3.0)]
    out = site.conn.execute(sa.text(
        "SELECT outcome, finding_count, message FROM pub.permit_compliance "
        "WHERE permit_id = :p AND check_code = 'probe'"), {"p": site.permit_id}).one()
    assert out.outcome == "fail" and out.finding_count == 1
    assert out.message == "probe found 3 where 1 is allowed"
    single = site.conn.execute(sa.text("SELECT checks.run_checks(1, :p)"),
                               {"p": site.permit_id}).scalar_one()
    assert site.conn.execute(sa.text(
        "SELECT count(*) FROM checks.finding WHERE run_id = :r AND check_code = 'probe'"),
        {"r": single}).scalar() == 1  # one permit: its case alone


def test_district_cases_are_run_for_the_checks_registered_with_them(site: Site) -> None:
    site.standard()
    for district, expected in ((False, []), (True, ["probe found 2 in the District projects"])):
        site.conn.execute(sa.text("SAVEPOINT probe"))
        register_probe(site.conn, district=district)
        site.conn.execute(sa.text("SELECT checks.evaluate(1, ARRAY[]::bigint[], true)"))
        got = site.conn.execute(sa.text(
            "SELECT message FROM pg_temp.check_evaluation WHERE check_code = 'probe'")).scalars()
        assert list(got) == expected
        site.conn.execute(sa.text("ROLLBACK TO SAVEPOINT probe"))


def test_a_retired_check_is_not_run_and_its_past_stays(site: Site) -> None:
    site.standard()
    register_probe(site.conn)
    first = run(site)
    site.conn.execute(sa.text(
        "UPDATE checks.rule_check SET retired_at = now() WHERE check_code = 'probe'"))
    second = run(site)
    counts = dict(site.conn.execute(sa.text(
        "SELECT run_id, count(*) FROM checks.outcome WHERE check_code = 'probe' "
        "AND run_id IN (:a, :b) GROUP BY run_id"), {"a": first, "b": second}).all())
    assert counts == {first: 1}
    assert site.conn.execute(sa.text(
        "SELECT count(*) FROM checks.finding WHERE check_code = 'probe'")).scalar() == 2
    checks = set(site.conn.execute(sa.text(
        "SELECT check_code FROM checks.outcome WHERE run_id = :r"), {"r": second}).scalars())
    assert "probe" not in checks and "buffer_min_width" in checks  # the others still run


def test_a_row_naming_no_function_is_refused_at_registration(site: Site) -> None:
    site.conn.execute(sa.text(
        "INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, "
        "severity, worse, sort_order, title, measure) VALUES ('T', 'typo', "
        "'checks.check_no_such', '999_test.sql', 'error', 'higher', 999, 'x', 'x')"))
    with pytest.raises(sa.exc.DBAPIError, match="check_no_such"), site.conn.begin_nested():
        site.conn.execute(sa.text("SELECT checks.finish_registration('999_test.sql')"))
    # and the runner skips it rather than fail
    assert "check_no_such" not in site.conn.execute(sa.text(
        "SELECT checks.evaluation_query()")).scalar_one()


def test_a_check_removed_from_its_file_is_retired_when_the_file_is_applied(site: Site) -> None:
    # a check the file registered once, not any more: its row is older than this transaction
    site.conn.execute(sa.text(
        "INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, "
        "severity, worse, sort_order, title, measure, registered_at) VALUES ('6(c)', "
        "'buffer_old_width', 'checks.check_buffer_width', '250_check_buffer_width.sql', "
        "'error', 'lower', 53, 'x', 'x', now() - interval '1 day')"))
    apply_file(site.conn, "250_check_buffer_width.sql")
    rows = dict(site.conn.execute(sa.text(
        "SELECT check_code, retired_at IS NOT NULL FROM checks.rule_check "
        "WHERE defined_in = '250_check_buffer_width.sql'")).all())
    assert rows == {"buffer_min_width": False, "buffer_avg_width": False,
                    "buffer_equivalence": False, "buffer_old_width": True}


def test_a_check_whose_function_is_gone_is_retired_by_the_runner_file(site: Site) -> None:
    register_probe(site.conn)
    site.conn.execute(sa.text("DROP FUNCTION checks.check_zz_probe(integer, bigint)"))
    apply_file(site.conn, "280_check_runner.sql")
    retired = site.conn.execute(sa.text(
        "SELECT retired_at IS NOT NULL FROM checks.rule_check WHERE check_code = 'probe'"))
    assert retired.scalar_one()
    assert site.conn.execute(sa.text(
        "SELECT count(*) FROM checks.rule_check WHERE retired_at IS NOT NULL")).scalar() == 1


def test_the_table_of_checks_in_docs_is_current(site: Site) -> None:
    text = checks_doc.DEFAULT_PATH.read_text()
    start, end = checks_doc.region(text)
    assert text[start:end] == checks_doc.generate(site.conn), (
        "the table of checks in docs/checks.md is not current: run `rulem-db docs` against a "
        "freshly migrated database and commit the table")


def test_only_the_region_between_the_markers_is_rewritten(site: Site, tmp_path: Path) -> None:
    doc = tmp_path / "checks.md"
    doc.write_text(f"# Prose\n\nby hand\n\n{checks_doc.BEGIN}\nstale\n{checks_doc.END}\n\nmore\n")
    assert checks_doc.write(site.conn, doc)
    text = doc.read_text()
    assert text.startswith("# Prose\n\nby hand\n\n") and text.endswith("\n\nmore\n")
    assert "| 6(c) | `buffer_min_width` | error |" in text and "stale" not in text
    assert checks_doc.is_current(site.conn, doc) and not checks_doc.write(site.conn, doc)
    doc.write_text("# no markers\n")
    with pytest.raises(ValueError, match="markers"):
        checks_doc.write(site.conn, doc)


def test_a_check_file_removed_from_sql_is_retired_at_the_next_migration(
        site: Site, tmp_path: Path) -> None:
    """A check is its file alone: deleting the file retires the check (the migration applies
    every file again when one on record is gone, and forgets the gone one)."""
    sql = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql)
    probe_file = sql / "255_check_zz_probe.sql"
    probe_file.write_text(
        PROBE.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION") + ";\n"
        "INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, "
        "severity, worse, unit, sort_order, title, measure) VALUES ('T', 'probe', "
        "'checks.check_zz_probe', '255_check_zz_probe.sql', 'warning', 'higher', 'probes', 999, "
        "'A probe.', 'Probes found.') ON CONFLICT (paragraph, check_code) DO UPDATE SET "
        "retired_at = NULL, registered_at = now();\n"
        "SELECT checks.finish_registration('255_check_zz_probe.sql');\n")
    sqlfiles.apply_changed(site.conn, sql)
    probe = ("SELECT retired_at IS NULL FROM checks.rule_check "
             "WHERE paragraph = 'T' AND check_code = 'probe'")
    assert site.conn.execute(sa.text(probe)).scalar() is True

    probe_file.unlink()
    applied = sqlfiles.apply_changed(site.conn, sql)
    assert applied == [p.name for p in sqlfiles.sql_files(sql)]  # every file, again
    assert site.conn.execute(sa.text(probe)).scalar() is False  # retired, its row kept
    assert site.conn.execute(sa.text(
        "SELECT count(*) FROM ops.sql_applied WHERE file_name = '255_check_zz_probe.sql'"
    )).scalar() == 0
    assert site.conn.execute(sa.text(
        "SELECT to_regprocedure('checks.check_zz_probe(integer, bigint)')")).scalar() is None
    assert sqlfiles.apply_changed(site.conn, sql) == []  # and then nothing is left to do
