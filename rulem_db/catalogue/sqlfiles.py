"""Applies the numbered SQL files under sql/ (functions, views, grants) to a database.

Why hashes: each file is idempotent (CREATE OR REPLACE), so applying one again is always safe,
but a changed view may have to be dropped and re-created with what depends on it. So when a
file changed, it and every file after it are applied again, in order, in the caller's
transaction; unchanged databases cost one small query.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import sqlalchemy as sa

from rulem_db.paths import SQL_DIR


def sql_files(directory: Path = SQL_DIR) -> list[Path]:
    """The numbered SQL files in the order they apply."""
    return sorted(p for p in directory.glob("[0-9][0-9][0-9]_*.sql"))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# Every table, partitioned table and materialized view the migrating role owns, outside the
# system's schemas, locked at once.
_HOLD_TABLES = """
DO $$
DECLARE
  names text;
BEGIN
  SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY c.oid) INTO names
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'm')
    AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
    AND n.nspname NOT LIKE 'pg_temp%' AND n.nspname NOT LIKE 'pg_toast_temp%'
    AND pg_has_role(current_user, c.relowner, 'USAGE');
  IF names IS NOT NULL THEN
    EXECUTE 'LOCK TABLE ' || names || ' IN SHARE UPDATE EXCLUSIVE MODE';
  END IF;
END
$$
"""


def hold_off_maintenance(conn: sa.Connection) -> None:
    """Lock the migrating role's tables against VACUUM and ANALYZE until the migration ends.

    Why: a migration GRANTs on tables (which rewrites their pg_class rows) and later creates
    triggers on the same tables (sql/961). An autovacuum ANALYZE that starts in between holds
    its SHARE UPDATE EXCLUSIVE lock and, to write its statistics into the pg_class row this
    transaction changed, waits for the transaction to end (PostgreSQL 15.9 and later); the
    trigger's SHARE ROW EXCLUSIVE lock then waits for the ANALYZE: a deadlock, and the
    migration fails. Taken first, before anything is changed, the lock at worst waits for an
    autovacuum already running, which the server cancels after deadlock_timeout; from then on
    autovacuum skips these tables. The mode blocks no reader and no writer (only VACUUM,
    ANALYZE, CREATE INDEX and ALTER TABLE), and the migration holds stronger locks on most
    tables anyway. Calling it again in the same transaction costs one catalogue query."""
    conn.execute(sa.text(_HOLD_TABLES))


def apply_changed(conn: sa.Connection, directory: Path = SQL_DIR, force: bool = False) -> list[str]:
    """Apply the first changed file and all after it; returns the names applied.

    A file on record that is gone from sql/ (a check removed, say) makes every file apply
    again: what it created is only undone by the files before it that drop and re-create
    (sql/200 drops every check function), and its record is forgotten."""
    applied = dict(conn.execute(sa.text("SELECT file_name, sha256 FROM ops.sql_applied")).all())
    files = sql_files(directory)
    gone = sorted(set(applied) - {p.name for p in files})
    if gone:
        conn.execute(sa.text("DELETE FROM ops.sql_applied WHERE file_name = ANY(:gone)"),
                     {"gone": gone})
        force = True
    first = next((i for i, p in enumerate(files) if force or applied.get(p.name) != _digest(p)),
                 None)
    if first is None:
        return []
    hold_off_maintenance(conn)
    done = []
    raw = conn.connection.dbapi_connection
    for path in files[first:]:
        with raw.cursor() as cur:  # the file as one batch: DO blocks and $$ bodies intact
            try:
                cur.execute(path.read_text())
            except Exception as exc:
                raise RuntimeError(f"sql/{path.name}: {exc}".strip()) from exc
        conn.execute(
            sa.text("INSERT INTO ops.sql_applied (file_name, sha256) VALUES (:f, :h) "
                    "ON CONFLICT (file_name) DO UPDATE SET sha256 = EXCLUDED.sha256, "
                    "applied_at = now()"),
            {"f": path.name, "h": _digest(path)})
        done.append(path.name)
    return done
