"""The layout of the SQL-level tests (tests/sql/<band>/<name>.sql + .out), checked without a
database; tests/database/test_sql_files.py runs them.

Why: the runner finds its cases by file name, so a misnamed file, or an expected output whose
SQL was renamed or removed, would silently test nothing.
"""

from __future__ import annotations

from pathlib import Path

SQL_TESTS = Path(__file__).resolve().parents[1] / "sql"


def test_every_band_has_sql_tests_and_every_expected_output_its_sql() -> None:
    cases = sorted(SQL_TESTS.glob("*/*.sql"))
    assert {p.parent.name for p in cases} >= {"ledger", "checks"}
    assert [p for p in SQL_TESTS.glob("*/*.out") if not p.with_suffix(".sql").exists()] == []
    assert [p for p in cases if not p.with_suffix(".out").exists()] == []
    strays = [p.relative_to(SQL_TESTS) for p in SQL_TESTS.rglob("*") if p.is_file()]
    strays = [p for p in strays if p != Path("README.md")
              and not (len(p.parts) == 2 and p.suffix in (".sql", ".out"))]
    assert strays == [], "tests/sql holds only <band>/<name>.sql and .out, and README.md"


def test_every_check_function_has_a_golden_test() -> None:
    """Each check function the SQL files register (checks.registration, sql/2NN_check_*.sql)
    is called, or its check code read, by a file of tests/sql/checks: one golden test per
    check function, with input and output worked by hand (docs/contributing.md, "Adding a
    check")."""
    import re

    sql_dir = SQL_TESTS.parents[1] / "sql"
    registered: dict[str, set[str]] = {}
    for path in sorted(sql_dir.glob("2[0-9][0-9]_*.sql")):
        for code, function in re.findall(
                r"\('[^']+', '([a-z0-9_]+)', 'checks\.(check_[a-z0-9_]+)'", path.read_text()):
            registered.setdefault(function, set()).add(code)
    assert len(registered) > 30, "the registrations were not found: sql/200's form changed?"
    golden = " ".join(p.read_text() for p in sorted((SQL_TESTS / "checks").glob("*.sql")))
    missing = sorted(f for f, codes in registered.items()
                     if f"checks.{f}(" not in golden
                     and not any(f"'{c}'" in golden for c in codes))
    assert missing == [], f"add a golden test to tests/sql/checks for: {missing}"
