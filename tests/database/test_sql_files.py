"""SQL-level tests per band: plain SQL files run through psql, their output diffed against the
expected output beside them (tests/sql/<band>/<name>.sql and <name>.out; tests/sql/README.md).

Why: staff call the ledger and check functions of schema pub directly (psql, DBeaver, QGIS),
not through Python; these tests call them the same way, as the role staff use, so what a
person types and reads is what is tested. Each file sets up its own few features with INSERTs
of hand-worked geometry, and the expected output was written by hand from that geometry.

Each file runs in a fresh clone of the session's template database (migrated, plan area
acd-53-62 registered), through psql with fixed settings so the output is stable: echo of the
input (-a), unaligned rows (-A), NULL shown as (null), errors without their PL/pgSQL context
(which names line numbers of function bodies), messages in English, time zone
America/Chicago. An error does not stop the file (ON_ERROR_STOP=0): refusals are expected
output too.

RULEM_SQL_TESTS_ACCEPT=1 writes the actual output over the expected file (the test then shows
as skipped, naming the file): for a new test or a deliberate change; read the diff before
committing it.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

SQL_TESTS = Path(__file__).resolve().parents[1] / "sql"
CASES = sorted(SQL_TESTS.glob("*/*.sql"))
ACCEPT = os.environ.get("RULEM_SQL_TESTS_ACCEPT") == "1"
PSQL_OPTIONS = ["-X", "-a", "-A", "-q", "-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=default",
                "-v", "SHOW_CONTEXT=never", "-P", "null=(null)", "-P", "pager=off"]
SERVER_OPTIONS = ("-c lc_messages=C -c client_min_messages=warning -c timezone=America/Chicago "
                  "-c datestyle=ISO,YMD -c intervalstyle=postgres")


def _psql() -> str:
    """psql of the newest PostgreSQL installed under /usr/lib/postgresql (Debian), else PATH."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit()
                   else 0)
    if found:
        return str(found[-1])
    on_path = shutil.which("psql")
    if on_path is None:
        pytest.fail("psql not found: install postgresql-client", pytrace=False)
    return on_path


def _libpq_env(url: str) -> dict[str, str]:
    """The environment that points psql at url: the password stays out of the command line,
    and no PG* variable of the caller's leaks in."""
    u = make_url(url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    host = u.host or u.query.get("host")
    port = u.port or u.query.get("port")
    for name, value in (("PGHOST", host), ("PGPORT", port), ("PGUSER", u.username),
                        ("PGPASSWORD", u.password), ("PGDATABASE", u.database)):
        if isinstance(value, tuple):
            value = value[0]
        if value is not None:
            env[name] = str(value)
    env.update(PGOPTIONS=SERVER_OPTIONS, PGAPPNAME="rulem-db sql test",
               PGCLIENTENCODING="UTF8", LC_ALL="C.UTF-8")
    return env


def run_sql_file(url: str, path: Path) -> str:
    """psql's output (stdout and stderr, interleaved as printed) for the file at path."""
    with path.open("rb") as sql:
        done = subprocess.run([_psql(), *PSQL_OPTIONS], stdin=sql, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=_libpq_env(url), cwd=path.parent,
                              timeout=300, check=False)
    out = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0:  # not a failing statement (those go on): psql itself failed
        pytest.fail(f"psql exited {done.returncode} on {path.name}:\n{out}", pytrace=False)
    return out


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_sql_file_gives_its_expected_output(db_url: str, path: Path) -> None:
    expected_path = path.with_suffix(".out")
    actual = run_sql_file(db_url, path)
    if ACCEPT:
        if not expected_path.exists() or expected_path.read_text(encoding="utf-8") != actual:
            expected_path.write_text(actual, encoding="utf-8")
            pytest.skip(f"wrote {expected_path.relative_to(SQL_TESTS.parent.parent)}: read "
                        f"its diff before committing it")
        return
    if not expected_path.exists():
        pytest.fail(f"{expected_path.name} is missing: write the expected output by hand, or "
                    f"run with RULEM_SQL_TESTS_ACCEPT=1 and check what it wrote", pytrace=False)
    expected = expected_path.read_text(encoding="utf-8")
    if actual != expected:
        rel = expected_path.relative_to(SQL_TESTS.parent.parent)
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"{rel} (expected)", tofile=f"{path.name} (actual)"))
        pytest.fail(f"output of {path.name} differs from {rel}:\n{diff}", pytrace=False)

