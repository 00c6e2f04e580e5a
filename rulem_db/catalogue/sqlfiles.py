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
