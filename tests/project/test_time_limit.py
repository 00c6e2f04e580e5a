"""The time limit of a test (tests/support/time_limit.py): a test stuck in a SQL statement fails
with its stack after the limit, and the tests after it still run.

Run as a pytest of its own in a subprocess, with a limit of a few seconds, on a database named
the way the suite names its databases (with the process id). Without tests/support/time_limit.py
the stuck test waits the whole 10 minutes of pg_sleep (or, with pytest-timeout's thread method, ends
the process and the second test never runs): the subprocess's own limit then fails this test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from sqlalchemy.engine import URL

TESTS = Path(__file__).resolve().parents[1]

STUCK = textwrap.dedent('''
    import os

    import pytest
    import sqlalchemy as sa
    from pytest_postgresql.janitor import DatabaseJanitor


    @pytest.fixture
    def database():
        # made outside the timed call (timeout_func_only): a CREATE DATABASE waiting on a
        # checkpoint of a busy cluster must not be what runs past the limit
        admin = sa.make_url(os.environ["RULEM_TEST_ADMIN_URL"])
        name = f"rulem_wd_{os.getpid()}"
        janitor = DatabaseJanitor(user=admin.username, password=admin.password,
                                  host=admin.host or "", port=admin.port or 5432, dbname=name,
                                  template_dbname="template0")
        janitor.init()
        engine = sa.create_engine(admin.set(database=name), poolclass=sa.pool.NullPool)
        try:
            yield engine
        finally:
            engine.dispose()
            janitor.drop()


    def test_stuck_in_sql(database):
        with database.connect() as conn:
            conn.execute(sa.text("SELECT pg_sleep(600)"))


    def test_the_next_test_runs():
        assert True
''')


def test_a_test_stuck_in_sql_fails_at_its_limit_and_the_run_goes_on(
        admin_url: URL, tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(
        "from time_limit import pytest_timeout_cancel_timer, pytest_timeout_set_timer  # noqa\n")
    (tmp_path / "test_stuck.py").write_text(STUCK)
    env = {**os.environ,
           "RULEM_TEST_ADMIN_URL": admin_url.render_as_string(hide_password=False),
           "PYTHONPATH": os.pathsep.join([str(TESTS / "support"), str(TESTS.parent)])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-o", "timeout=5", "-o", "timeout_func_only=true", "-o", "addopts=",
         "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "1 failed, 1 passed" in out, out
    assert "the test ran past 5 s" in out, out
    assert "cancelled 1 running statement(s)" in out, out
    assert "test_stuck_in_sql" in out and "pg_sleep" in out, out
