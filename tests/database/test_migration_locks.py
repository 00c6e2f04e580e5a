"""A migration and a concurrent ANALYZE do not deadlock (rulem_db.catalogue.sqlfiles,
hold_off_maintenance).

The case autovacuum makes at random on a busy server: a migration GRANTs on a table
(sql/950 on ops.layer_write, which rewrites its pg_class row), an ANALYZE of that table
starts and waits for the migration's transaction to write its statistics, and the migration
then creates the table's change trigger (sql/961). Here the ANALYZE is started by hand at
that very moment: a copy of sql/ with one file between the two that waits on an advisory
lock the test holds.
"""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from rulem_db.catalogue import sqlfiles
from rulem_db.paths import SQL_DIR

PAUSE_KEY = 29_961


def _wait_until(conn: sa.Connection, sql: str, params: dict, what: str,
                outcome: dict[str, object]) -> None:
    """Poll sql until it answers true (at most 120 s), or one side has failed."""
    for _ in range(1200):
        errors = {k: v for k, v in outcome.items() if k.endswith("_error")}
        assert not errors, f"waiting until {what}: {errors}"
        if conn.execute(sa.text(sql), params).scalar():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting until {what}")


def test_an_analyze_started_mid_migration_waits_for_it_instead_of_deadlocking(
        db_url: str, tmp_path: Path) -> None:
    sql = tmp_path / "sql"
    shutil.copytree(SQL_DIR, sql)
    assert "GRANT INSERT ON ledger.change_queue, ops.layer_write" in (
        sql / "950_edit_layers.sql").read_text()
    # between sql/955 and sql/960: after the GRANT, before the trigger
    assert not list(sql.glob("957_*.sql"))
    (sql / "957_pause.sql").write_text(f"SELECT pg_advisory_xact_lock({PAUSE_KEY});\n")

    eng = sa.create_engine(db_url, poolclass=sa.pool.NullPool)
    outcome: dict[str, object] = {}

    def migrate() -> None:
        try:
            with eng.begin() as conn:
                outcome["applied"] = sqlfiles.apply_changed(conn, sql, force=True)
        except Exception as exc:  # the deadlock, if it happens, is the failure reported below
            outcome["migration_error"] = exc

    def analyze() -> None:
        try:
            with eng.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(sa.text("ANALYZE ops.layer_write"))
        except Exception as exc:
            outcome["analyze_error"] = exc

    try:
        with eng.connect().execution_options(isolation_level="AUTOCOMMIT") as watcher:
            watcher.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": PAUSE_KEY})
            migration = threading.Thread(target=migrate)
            migration.start()
            _wait_until(watcher, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = "
                        "'advisory' AND objid = :k AND NOT granted)", {"k": PAUSE_KEY},
                        "the migration reached the pause", outcome)
            analysis = threading.Thread(target=analyze)
            analysis.start()
            _wait_until(watcher, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE "
                        "query = 'ANALYZE ops.layer_write' AND wait_event_type = 'Lock')", {},
                        "the ANALYZE waits", outcome)
            watcher.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": PAUSE_KEY})
            migration.join(120)
            analysis.join(120)
            assert not migration.is_alive() and not analysis.is_alive()
    finally:
        eng.dispose()

    assert "migration_error" not in outcome, outcome["migration_error"]
    assert "analyze_error" not in outcome, outcome["analyze_error"]
    assert "961_web_change_log.sql" in outcome["applied"]  # type: ignore[operator]
