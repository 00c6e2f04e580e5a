"""What only a superuser can do to keep readers inside their boundary (sql/superuser/harden.sql).

Why a step of its own: advisory locks, PostGIS's statistics readers and PostgreSQL's per-table
statistics belong to the superuser who installed them, and every login may call them by
default. A reader could take the writers' locks, or read a restricted layer's extent and row
count from the planner's statistics. Taking those rights from PUBLIC needs the functions'
owner, which rulem-db's own roles are not; the migration applies the file when it runs as a
superuser (the test suite, a DBA's `db init`), the embedded cluster's set-up applies it as its
admin, and `rulem-db db status` names a database where it is missing.
"""

from __future__ import annotations

import sqlalchemy as sa

from rulem_db.paths import HARDEN_SQL, ROOT

# One function of each kind that harden.sql takes from PUBLIC: if any of them is still open to
# PUBLIC, the database was not hardened.
PROBES = (
    "pg_catalog.pg_advisory_lock(bigint)",
    "pg_catalog.pg_stat_get_live_tuples(oid)",
    "pg_catalog.pg_relation_size(regclass)",
    "st_estimatedextent(text, text, text)",
)


def is_superuser(conn: sa.Connection) -> bool:
    """Whether this session's role may change the rights on PostgreSQL's own functions."""
    return bool(conn.execute(sa.text(
        "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).scalar())


def apply(conn: sa.Connection) -> bool:
    """Run harden.sql when this session is a superuser; returns whether it ran."""
    if not is_superuser(conn):
        return False
    conn.connection.dbapi_connection.cursor().execute(HARDEN_SQL.read_text())
    return True


def gaps(conn: sa.Connection) -> list[str]:
    """The probe functions every login may still call (empty: hardened)."""
    open_ = []
    for sig in PROBES:
        oid = conn.execute(sa.text("SELECT to_regprocedure(:s)"), {"s": sig}).scalar()
        if oid is not None and conn.execute(sa.text(
                "SELECT has_function_privilege('public', to_regprocedure(:s), 'EXECUTE')"),
                {"s": sig}).scalar():
            open_.append(sig)
    return open_


def advice(gap_list: list[str]) -> str:
    """One line for a database that is not hardened."""
    return (f"not hardened: every login may still call {', '.join(gap_list)}; a superuser "
            f"runs {HARDEN_SQL.relative_to(ROOT)} in this database once "
            "(docs/operations.md)")
