"""The layout of the SQL-level tests (tests/sql/<band>/<name>.sql + .out), checked without a
database; tests/test_sql_files.py runs them.

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
