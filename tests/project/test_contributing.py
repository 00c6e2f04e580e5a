"""docs/contributing.md's recipe for a check, followed on a copy of the database, so that the
recipe cannot drift from what the code and the tests demand.

The recipe's own SQL block (the smallest complete check file) is written into a copy of sql/
and applied as the migration step applies files; then: the runner evaluates the new check with
nothing else touched (step 1 is enough for the runner), and each test that holds a finished
check names exactly one of the recipe's remaining steps: the generated table of checks
(docs/checks.md, step 3), the check's line in docs/rule-m.md (step 2), a demo permit built to
fail it (demo/cases.toml and demo/sites.py, step 4). What the recipe says is not touched
stays untouched: the data dictionary is the same before and after.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    site_fixture,
)
from rule_doc import named_lines, sections

from demo.cases import DEMO_CASES
from rulem_db.catalogue import checks_doc, datadict, sqlfiles
from rulem_db.paths import ROOT, SQL_DIR

RECIPES = ROOT / "docs" / "contributing.md"


def _section(title: str) -> str:
    """The body of '## <title>' in docs/contributing.md."""
    text = RECIPES.read_text()
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    assert m, f"docs/contributing.md has no section '## {title}'"
    return m.group(1)


def _recipe_sql() -> tuple[str, str]:
    """The check recipe's SQL block, dedented, and the file name it registers."""
    m = re.search(r"```sql\n(.*?)```", _section("Adding a check"), flags=re.S)
    assert m, "the check recipe shows the smallest complete check file as a ```sql block"
    sql = "\n".join(line[3:] if line.startswith("   ") else line
                    for line in m.group(1).splitlines()) + "\n"
    name = re.search(r"finish_registration\('([0-9]{3}_check_\w+\.sql)'\)", sql)
    assert name, "the recipe's file ends with checks.finish_registration('<its file>')"
    return sql, name.group(1)


def _steps(title: str) -> list[str]:
    """The files a recipe's numbered steps name in bold (**`file`**), in order."""
    return re.findall(r"\*\*`([^`]+)`\*\*", _section(title))


def test_the_check_recipe_names_its_file_in_the_checks_band() -> None:
    sql, name = _recipe_sql()
    assert 210 <= int(name[:3]) <= 279, "sql/README.md: checks are numbered 210 to 279"
    assert not (SQL_DIR / name).exists(), f"the recipe's example {name} must not be a real file"
    assert sql.startswith(f"-- {name.removesuffix('.sql')}: ")
    steps = _steps("Adding a check")
    assert steps == ["sql/2NN_check_<what>.sql", "docs/rule-m.md", "docs/checks.md",
                     "demo/sites.py", "demo/cases.toml", "tests/checks/test_checks_<area>.py",
                     "tests/sql/checks/<name>.sql", "rulem_db/catalogue/layers.py",
                     "sql/285_check_incremental.sql", "README.md", "CHANGELOG.md"]
    for step in steps:  # every file named (placeholders aside) is a file of the repository
        if "<" not in step and "NN" not in step:
            assert (ROOT / step).exists(), step


def test_a_check_added_by_the_recipe_is_run_and_the_tests_name_the_other_steps(
        site: Site, tmp_path: Path) -> None:
    sql, name = _recipe_sql()
    conn = site.conn
    dictionary_before = datadict.generate(conn)
    table_before = checks_doc.generate(conn)

    # Step 1: the file, applied as `rulem-db db migrate` applies sql/.
    copy = tmp_path / "sql"
    shutil.copytree(SQL_DIR, copy)
    (copy / name).write_text(sql)
    applied = sqlfiles.apply_changed(conn, copy)
    assert applied[0] == name  # the first file not on record, and every file after it
    check = conn.execute(sa.text(
        "SELECT paragraph, check_code, evaluated_by, defined_in, retired_at IS NULL AS current "
        "FROM checks.rule_check WHERE defined_in = :f"), {"f": name}).one()
    assert check.current and check.evaluated_by == "checks.check_zz_recipe"

    # The runner picks it up: nothing in the runner or in Python names it.
    site.standard()
    run_id = conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()
    outcome = conn.execute(sa.text(
        "SELECT outcome, finding_count FROM checks.outcome WHERE run_id = :r "
        "AND paragraph = :p AND check_code = :c AND permit_id = :pm"),
        {"r": run_id, "p": check.paragraph, "c": check.check_code,
         "pm": site.permit_id}).one()
    assert tuple(outcome) == ("fail", 1)

    # Step 3: the generated table of checks now has the check's row, and nothing else changed.
    table_after = checks_doc.generate(conn)
    added = set(table_after.splitlines()) - set(table_before.splitlines())
    assert [line.split(" | ")[1] for line in added] == [f"`{check.check_code}`"]
    assert set(table_before.splitlines()) <= set(table_after.splitlines())
    doc = tmp_path / "checks.md"
    shutil.copy(checks_doc.DEFAULT_PATH, doc)
    assert not checks_doc.is_current(conn, doc)  # the committed table must be regenerated
    checks_doc.write(conn, doc)                  # (`rulem-db docs`)
    assert checks_doc.is_current(conn, doc)

    # Step 2: docs/rule-m.md names every current check under its paragraph; not this one yet.
    rule_doc = sections((ROOT / "docs" / "rule-m.md").read_text())
    listed = named_lines(rule_doc.get(check.paragraph, ""), "Checks") or ""
    assert f"`{check.check_code}`" not in listed

    # Step 4: every check has a demo permit built to fail it (test_checks_demo.py); not this one.
    catalogue = set(conn.execute(sa.text(
        "SELECT paragraph, check_code FROM checks.rule_check WHERE retired_at IS NULL")).all())
    designed = {tuple(e.split(" ")) for case in DEMO_CASES.values() for e in case["fails"]}
    assert catalogue - designed == {(check.paragraph, check.check_code)}

    # Not touched: a check function is not published, so the data dictionary stays as it was.
    assert datadict.generate(conn) == dictionary_before
