"""What only a superuser can do to keep readers inside their boundary (sql/superuser/harden.sql),
what a database must still hold after it is copied, and the logins' connection limits.

Why a step of its own: advisory locks, large objects, PostGIS's statistics readers and
PostgreSQL's per-table statistics belong to the superuser who installed them, and every login
may call them by default. A reader could take the writers' locks, write megabytes of large
objects from a read-only transaction, or read a restricted layer's extent and row count from
the planner's statistics. Taking those rights from PUBLIC needs the functions' owner, which
rulem-db's own roles are not; the migration applies the file when it runs as a superuser (the
test suite, a DBA's `db init`), the embedded cluster's set-up applies it as its admin, and
`rulem-db db status` names a database where it is missing, or where what a copy loses (the
TEMPORARY revoke, a database-level right that CREATE DATABASE ... TEMPLATE and a restore do not
copy) is lost.

FUNCTION_CLASSES is the classification of every function PUBLIC may execute that is not
declared STABLE or IMMUTABLE (and of the two STABLE ones that take a transaction id): what each
kind does and whether harden.sql takes it from PUBLIC. tests/security/test_hardening_functions.py
holds a hardened database to it: every such function falls in exactly one class, and no function of
a class that is taken is left to PUBLIC. docs/operations.md ("Functions every login may call") is
the same table in words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlalchemy as sa

from rulem_db.paths import HARDEN_SQL, ROOT

# One function of each kind that harden.sql takes from PUBLIC: if any of them is still open to
# PUBLIC, the database was not hardened (or was hardened by an older harden.sql).
PROBES = (
    "pg_catalog.pg_advisory_lock(bigint)",
    "pg_catalog.pg_stat_get_live_tuples(oid)",
    "pg_catalog.pg_relation_size(regclass)",
    "st_estimatedextent(text, text, text)",
    "pg_catalog.lo_from_bytea(oid, bytea)",
    "pg_catalog.pg_logical_emit_message(boolean, text, text)",
    "pg_catalog.pg_sleep(double precision)",
    "pg_catalog.pg_notify(text, text)",
    "pg_catalog.pg_terminate_backend(integer, bigint)",
    "pg_catalog.txid_current()",
)

# Connection limits of the logins rulem-db makes (set where they are made: the embedded
# cluster's owner and writer, rulem_db/local/cluster.py; the web login, rulem_web/login.py),
# so that no one login can take every connection the server has (100 by default, 3 kept for
# superusers). A limit an operator has set is kept (only an unlimited login gets one).
CONNECTION_LIMITS = {
    "rulem_owner": 20,    # migrations, backups, `db status`
    "rulem_writer": 40,   # ingest, recompute and its workers, checks, the nightly, watch
    "rulem_gis_web": 30,  # the web service's pool (RULEM_WEB_CONNECTIONS, 10 by default)
}


@dataclass(frozen=True)
class FunctionClass:
    """A kind of function PUBLIC may execute by default: which (a pattern over its name), what
    it does, and whether harden.sql takes it from PUBLIC (and who keeps it)."""

    kind: str
    names: str  # regular expression matched against the whole function name
    taken: bool
    kept_by: str
    why: str
    # True: the class is recognised by its signature (an `internal` argument, or a trigger or
    # handler result), whatever the name: such a function cannot be called from SQL
    by_signature: bool = False

    def matches(self, name: str) -> bool:
        return re.fullmatch(self.names, name) is not None


FUNCTION_CLASSES: tuple[FunctionClass, ...] = (
    # taken from PUBLIC
    FunctionClass(
        "large objects", r"lo_.*|loread|lowrite", True, "the owner",
        "write (or read) large objects outside every table's rights, in a read-only "
        "transaction too; rulem-db stores none"),
    FunctionClass(
        "WAL messages", r"pg_logical_emit_message", True, "the owner",
        "write to the write-ahead log from a read-only transaction"),
    FunctionClass(
        "sleeps", r"pg_sleep(_for|_until)?", True, "the owner",
        "hold a connection, and what its transaction holds, for as long as asked"),
    FunctionClass(
        "notifications", r"pg_notify", True, "rulem_etl, rulem_editor",
        "wake every listener of a channel (rulem-db watch); the writers' edits notify it "
        "(sql/172)"),
    FunctionClass(
        "signals", r"pg_cancel_backend|pg_terminate_backend", True, "the owner",
        "end the other sessions of the same login (the web service's pooled connections)"),
    FunctionClass(
        "transaction ids", r"txid_current|pg_current_xact_id|gettransactionid", True,
        "rulem_etl, rulem_editor",
        "take a transaction id (a finite resource) from a read-only transaction; the writers' "
        "batches record theirs (sql/012)"),
    FunctionClass(
        "advisory locks", r"pg_(try_)?advisory_.*", True, "rulem_etl",
        "take the ingest, ledger and reconciliation locks and make every writer wait"),
    # kept by PUBLIC
    FunctionClass(
        "not callable from SQL", r".*", False, "PUBLIC",
        "trigger functions, index, sampling and language handlers, planner support: they "
        "take an `internal` argument or run only as a trigger or handler",
        by_signature=True),
    FunctionClass(
        "refused inside unless superuser, replication or upgrade",
        r"binary_upgrade_.*|pg_(create|copy)_(logical|physical)_replication_slot"
        r"|pg_drop_replication_slot|pg_replication_slot_advance|pg_logical_slot_.*"
        r"|pg_import_system_collations|pg_nextoid|pg_stop_making_pinned_objects"
        r"|pg_read_file_old|pg_rotate_logfile_old",
        False, "PUBLIC",
        "the function itself refuses every login that is not a superuser, a replication role "
        "or pg_upgrade"),
    FunctionClass(
        "checked against the object's own rights",
        r"nextval|setval|currval|lastval|pg_sequence_last_value|currtid2"
        r"|brin_(de)?summarize_.*|gin_clean_pending_list|pg_extension_config_dump"
        r"|addgeometrycolumn|dropgeometrycolumn|dropgeometrytable|updategeometrysrid"
        r"|populate_geometry_columns|postgis_extensions_upgrade|enablelongtransactions"
        r"|disablelongtransactions|longtransactionsenabled|lockrow|unlockrows|addauth"
        r"|checkauth|plpgsql_validator",
        False, "PUBLIC",
        "they write only what the caller may write anyway (a sequence, an index or table it "
        "owns, a table or schema it may create in), or check a function the caller may "
        "use"),
    FunctionClass(
        "queries with the caller's rights",
        r"query_to_xml.*|query_to_xmlschema|cursor_to_xml.*|ts_stat|ts_rewrite",
        False, "PUBLIC",
        "run a query text as the caller: nothing a login could not run itself"),
    FunctionClass(
        "the session's own state",
        r"clock_timestamp|timeofday|random|setseed|gen_random_uuid|current_query|set_config"
        r"|pg_stat_clear_snapshot|pg_stat_force_next_flush|pg_export_snapshot"
        r"|pg_stat_get_xact_function_.*|amvalidate|pg_(database_)?collation_actual_version"
        r"|pg_jit_available|pg_partition_(tree|ancestors)|st_clusterkmeans|st_generatepoints"
        r"|st_symmetricdifference",
        False, "PUBLIC",
        "read the clock or randomness, or set the caller's own session (set_config is what "
        "SET does, which no right governs; the web service pins its settings per connection)"),
    FunctionClass(
        "server state without table data",
        r"pg_blocking_pids|pg_safe_snapshot_blocking_pids|pg_isolation_test_session_is_blocked"
        r"|pg_lock_status|pg_control_.*|pg_current_wal_(flush_|insert_)?lsn"
        r"|pg_last_wal_(receive|replay)_lsn|pg_last_xact_replay_timestamp|pg_is_in_recovery"
        r"|pg_is_wal_replay_paused|pg_get_wal_replay_pause_state|pg_get_wal_resource_managers"
        r"|pg_stat_get_recovery_prefetch|pg_get_multixact_members|pg_prepared_xact"
        r"|pg_last_committed_xact|pg_xact_commit_timestamp(_origin)?|pg_xact_status"
        r"|txid_status|pg_database_size|pg_tablespace_size|pg_notification_queue_usage",
        False, "PUBLIC",
        "read the server's state (locks held, WAL positions, a database's total size), no "
        "row and no table's size; accepted"),
)


def classify(name: str, internal: bool = False) -> list[FunctionClass]:
    """The classes a function falls in by its name (internal: it takes an `internal` argument
    or returns a trigger or handler, so it cannot be called from SQL)."""
    return [c for c in FUNCTION_CLASSES
            if (c.by_signature and internal) or (not c.by_signature and c.matches(name))]


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


def _open_probes(conn: sa.Connection) -> list[str]:
    open_ = []
    for sig in PROBES:
        oid = conn.execute(sa.text("SELECT to_regprocedure(:s)"), {"s": sig}).scalar()
        if oid is not None and conn.execute(sa.text(
                "SELECT has_function_privilege('public', to_regprocedure(:s), 'EXECUTE')"),
                {"s": sig}).scalar():
            open_.append(sig)
    return open_


def gaps(conn: sa.Connection) -> list[str]:
    """What this database does not hold that it should, one phrase each with its cure (empty:
    hardened): functions every login may still call (harden.sql), temporary objects open to
    every login again (a copy or a restore: `db migrate`), large objects present or their
    rights switched off."""
    out = []
    open_ = _open_probes(conn)
    if open_:
        out.append(f"every login may still call {', '.join(open_)}; a superuser runs "
                   f"{HARDEN_SQL.relative_to(ROOT)} in this database once (docs/operations.md)")
    if conn.execute(sa.text(
            "SELECT has_database_privilege('public', current_database(), 'TEMPORARY')")).scalar():
        out.append("every login may create temporary objects (TEMPORARY on the database is "
                   "PUBLIC's again, as after CREATE DATABASE ... TEMPLATE or a restore); run "
                   "rulem-db db migrate as the owner")
    if conn.execute(sa.text("SELECT current_setting('lo_compat_privileges')")).scalar() != "off":
        out.append("lo_compat_privileges is on, so large objects have no rights; a superuser "
                   "sets it off")
    n = conn.execute(sa.text("SELECT count(*) FROM pg_largeobject_metadata")).scalar()
    if n:
        out.append(f"{n} large object{'s' * (n > 1)} in the database, which rulem-db never "
                   "writes; the owner reads pg_largeobject_metadata and removes them with "
                   "lo_unlink")
    return out


def advice(gap_list: list[str]) -> str:
    """One line for a database that is not hardened."""
    return "not hardened: " + "; and ".join(gap_list)


def connection_limit_sql(role: str) -> str | None:
    """The ALTER ROLE that gives a login rulem-db makes its connection limit, unless an
    operator has set one (only a login without a limit gets it); None for other roles."""
    limit = CONNECTION_LIMITS.get(role)
    if limit is None:
        return None
    return (f"DO $$ BEGIN IF (SELECT rolconnlimit FROM pg_roles WHERE rolname = '{role}') = -1 "
            f"THEN ALTER ROLE {role} CONNECTION LIMIT {int(limit)}; END IF; END $$")
