"""Readers write nothing, even outside the tables: the functions every login may call by default.

PostgreSQL and PostGIS let every login (PUBLIC) call functions that write large objects, write
to the WAL, sleep, signal other sessions, notify listeners or take transaction ids, with no
right on any object asked, and in a read-only transaction too. sql/superuser/harden.sql takes
them from PUBLIC; the writers keep what their triggers use. Tried here as real logins of every
group (and a web-service-like login that reads in read-only transactions), function by
function, and the classification of every function PUBLIC may still call
(rulem_db.catalogue.hardening.FUNCTION_CLASSES) is held to a hardened database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from role_logins import as_login, role_logins
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from rulem_db import db
from rulem_db.catalogue import hardening

# The logins tried: one per group role, and one like the web service's (rulem_gis, read-only
# transactions by default).
ROLES = ("rulem_staff", "rulem_gis", "web", "rulem_editor", "rulem_restricted", "rulem_etl")
READERS = ("rulem_staff", "rulem_gis", "web", "rulem_restricted")

# (what, call): one call per function of each kind that harden.sql takes from PUBLIC. The
# arguments name nothing that exists: the right to execute is checked before anything else.
CALLS = (
    ("large objects", "SELECT lo_from_bytea(0, '\\x00'::bytea)"),
    ("large objects", "SELECT lo_create(0)"),
    ("large objects", "SELECT lo_creat(-1)"),
    ("large objects", "SELECT lo_put(424242, 0, '\\x00'::bytea)"),
    ("large objects", "SELECT lo_get(424242)"),
    ("large objects", "SELECT lo_open(424242, 131072)"),
    ("large objects", "SELECT lowrite(0, '\\x00'::bytea)"),
    ("large objects", "SELECT loread(0, 1)"),
    ("large objects", "SELECT lo_truncate(0, 0)"),
    ("large objects", "SELECT lo_unlink(424242)"),
    ("large objects", "SELECT lo_import('/etc/hostname')"),
    ("large objects", "SELECT lo_export(424242, '/tmp/rulem-lo')"),
    ("WAL messages", "SELECT pg_logical_emit_message(false, 'rulem', 'x')"),
    ("WAL messages", "SELECT pg_logical_emit_message(true, 'rulem', '\\x00'::bytea)"),
    ("sleeps", "SELECT pg_sleep(0)"),
    ("sleeps", "SELECT pg_sleep_for('0 seconds')"),
    ("sleeps", "SELECT pg_sleep_until(now())"),
    ("notifications", "SELECT pg_notify('rulem_ledger_queue', '')"),
    ("signals", "SELECT pg_cancel_backend(0)"),
    ("signals", "SELECT pg_terminate_backend(0)"),
    ("transaction ids", "SELECT txid_current()"),
    ("transaction ids", "SELECT pg_current_xact_id()"),
    ("transaction ids", "SELECT gettransactionid()"),
    ("advisory locks", "SELECT pg_advisory_xact_lock(1)"),
    ("advisory locks", "SELECT pg_try_advisory_lock_shared(1, 2)"),
)

# Who may call each kind (everyone else is refused, in read-only transactions too).
ALLOWED = {
    "large objects": (),
    "WAL messages": (),
    "sleeps": (),
    "notifications": ("rulem_editor", "rulem_etl"),
    "signals": (),
    "transaction ids": ("rulem_editor", "rulem_etl"),
    "advisory locks": ("rulem_etl",),
}


@pytest.fixture(scope="module")
def hardened(admin_url: URL, template_db: str) -> Iterator[str]:
    """A migrated copy of the session template (migrated again: TEMPORARY is the database's
    right, not copied), hardened as the migration hardens it."""
    from clones import cloned

    with cloned(admin_url, template_db, "rulem_fn") as url:
        db.migrate(url)
        yield url


@pytest.fixture(scope="module")
def logins(admin_url: URL) -> Iterator[dict[str, URL]]:
    with role_logins(admin_url, ROLES, "fn") as made:
        yield made


def _engine(url: str, login: URL) -> sa.Engine:
    return as_login(url, login)


def _outcome(conn: sa.Connection, sql: str, read_only: bool) -> str:
    """'refused' (no right to execute), or 'ran' (any other outcome: a result, or an error
    of the call itself, such as a large object that does not exist)."""
    try:
        with conn.begin():
            if read_only:
                conn.execute(sa.text("SET TRANSACTION READ ONLY"))
            conn.execute(sa.text(sql)).all()
            conn.rollback()
    except sa.exc.DBAPIError as exc:
        if "permission denied for function" in str(exc.orig):
            return "refused"
    return "ran"


@pytest.mark.parametrize("role", ROLES)
def test_each_login_calls_only_what_its_role_needs(hardened: str, logins: dict[str, URL],
                                                   role: str) -> None:
    """Table-driven: every call of CALLS as this login, in a read-only transaction and (for
    the writers) in an ordinary one; refused unless ALLOWED names the role."""
    eng = _engine(hardened, logins[role])
    wrong = []
    try:
        with eng.connect() as conn:
            for kind, sql in CALLS:
                want = "ran" if role in ALLOWED[kind] else "refused"
                for read_only in (True, False) if role not in READERS else (True,):
                    got = _outcome(conn, sql, read_only)
                    if got != want:
                        wrong.append(f"{sql} (read_only={read_only}): {got}, want {want}")
    finally:
        eng.dispose()
    assert wrong == []


def test_a_reader_writes_no_large_object_even_by_the_web_logins_read_only_default(
        hardened: str, logins: dict[str, URL]) -> None:
    """The attack as found: lo_from_bytea from a read-only session wrote into the database."""
    admin = sa.create_engine(hardened, poolclass=NullPool)
    with admin.connect() as conn:
        before = conn.execute(sa.text("SELECT count(*) FROM pg_largeobject_metadata")).scalar()
    for role in READERS:
        eng = _engine(hardened, logins[role])
        with pytest.raises(sa.exc.DBAPIError, match="permission denied for function lo_from"), \
                eng.begin() as conn:
            conn.execute(sa.text("SELECT lo_from_bytea(0, decode(repeat('ab', 1000), 'hex'))"))
        eng.dispose()
    with admin.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM pg_largeobject_metadata")).scalar() == before
    admin.dispose()


def _public_functions(conn: sa.Connection) -> list[sa.Row]:
    """Every function of PostgreSQL and PostGIS that PUBLIC may execute and that may have an
    effect: not declared STABLE or IMMUTABLE, or one of the two STABLE ones that take a
    transaction id."""
    return conn.execute(sa.text(
        "SELECT p.proname AS name, p.oid::regprocedure::text AS sig, "
        "  ('internal'::regtype = ANY (p.proargtypes::regtype[]) "
        "   OR p.prorettype IN ('trigger'::regtype, 'event_trigger'::regtype, "
        "     'language_handler'::regtype, 'index_am_handler'::regtype, "
        "     'table_am_handler'::regtype, 'tsm_handler'::regtype, "
        "     'fdw_handler'::regtype)) AS internal "
        "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE (n.nspname = 'pg_catalog' OR n.nspname = (SELECT e.extnamespace::regnamespace::name "
        "        FROM pg_extension e WHERE e.extname = 'postgis')) "
        "  AND p.prokind IN ('f', 'p') "
        "  AND (p.provolatile = 'v' OR p.proname IN ('txid_current', 'pg_current_xact_id')) "
        "  AND has_function_privilege('public', p.oid, 'EXECUTE') ORDER BY 2")).all()


def test_every_function_every_login_may_still_call_is_classified_and_kept(
        hardened: str) -> None:
    """The classification (docs/operations.md) covers what PostgreSQL and PostGIS leave to
    PUBLIC after hardening: each function in exactly one class, and that class one that
    PUBLIC keeps."""
    eng = sa.create_engine(hardened, poolclass=NullPool)
    with eng.connect() as conn:
        rows = _public_functions(conn)
    eng.dispose()
    assert len(rows) > 100  # the audit sees them
    problems = []
    for r in rows:
        classes = hardening.classify(r.name, r.internal)
        if len(classes) != 1:
            problems.append(f"{r.sig}: in {[c.kind for c in classes] or 'no class'}")
        elif classes[0].taken:
            problems.append(f"{r.sig}: class {classes[0].kind} is taken from PUBLIC, yet "
                            "PUBLIC may call it")
    assert problems == []


def test_every_class_taken_from_public_is_taken_whole(hardened: str) -> None:
    """No function of a class harden.sql takes from PUBLIC is left to PUBLIC, whatever its
    volatility, and every probe of rulem-db db status is such a function."""
    eng = sa.create_engine(hardened, poolclass=NullPool)
    with eng.connect() as conn:
        left = [r.sig for r in conn.execute(sa.text(
            "SELECT p.proname AS name, p.oid::regprocedure::text AS sig "
            "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname IN ('pg_catalog', 'public') "
            "AND has_function_privilege('public', p.oid, 'EXECUTE')"))
            if any(c.taken for c in hardening.classify(r.name))]
    eng.dispose()
    assert left == []
    for probe in hardening.PROBES:
        name = probe.split("(")[0].split(".")[-1]
        if name in ("pg_stat_get_live_tuples", "pg_relation_size", "st_estimatedextent"):
            continue  # statistics and sizes: harden.sql's first block
        assert any(c.taken for c in hardening.classify(name)), probe


def test_large_objects_written_before_hardening_are_taken_from_their_writer(
        hardened: str, logins: dict[str, URL]) -> None:
    """A large object a reader wrote before the database was hardened (or one anybody may
    read) becomes the owner's, with no right left to PUBLIC or its writer; db status counts
    it; lo_compat_privileges (which would switch the objects' rights off) is off."""
    reader = logins["rulem_gis"].username
    admin = sa.create_engine(hardened, poolclass=NullPool)
    try:
        with admin.begin() as conn:
            oid = conn.execute(sa.text("SELECT lo_from_bytea(0, 'secret'::bytea)")).scalar()
            conn.execute(sa.text(f"ALTER LARGE OBJECT {oid} OWNER TO {reader}"))
            conn.execute(sa.text(f"GRANT SELECT, UPDATE ON LARGE OBJECT {oid} TO PUBLIC"))
        with admin.begin() as conn:
            assert hardening.apply(conn)
        with admin.connect() as conn:
            owner, acl = conn.execute(sa.text(
                "SELECT pg_get_userbyid(lomowner), lomacl::text FROM pg_largeobject_metadata "
                "WHERE oid = :o"), {"o": oid}).one()
            assert owner == conn.execute(sa.text(
                "SELECT pg_get_userbyid(datdba) FROM pg_database "
                "WHERE datname = current_database()")).scalar()
            assert acl == f"{{{owner}=rw/{owner}}}"  # nothing for PUBLIC or its writer
            assert conn.execute(sa.text("SHOW lo_compat_privileges")).scalar() == "off"
            gaps = hardening.gaps(conn)
            assert gaps == ["1 large object in the database, which rulem-db never writes; "
                            "the owner reads pg_largeobject_metadata and removes them with "
                            "lo_unlink"]
        with admin.begin() as conn:
            conn.execute(sa.text("SELECT lo_unlink(:o)"), {"o": oid})
        with admin.connect() as conn:
            assert hardening.gaps(conn) == []
    finally:
        admin.dispose()


def test_a_database_setting_keeps_large_object_rights_on(hardened: str) -> None:
    """harden.sql sets lo_compat_privileges off for the database (a server that has it on
    would let every login read and write every large object)."""
    eng = sa.create_engine(hardened, poolclass=NullPool)
    with eng.connect() as conn:
        settings = conn.execute(sa.text(
            "SELECT unnest(s.setconfig) FROM pg_db_role_setting s "
            "JOIN pg_database d ON d.oid = s.setdatabase "
            "WHERE d.datname = current_database() AND s.setrole = 0")).scalars().all()
    eng.dispose()
    assert "lo_compat_privileges=off" in settings


embedded_only = pytest.mark.skipif(bool(os.environ.get("RULEM_TEST_ADMIN_URL")),
                                   reason="the embedded cluster's own logins")


@embedded_only
def test_the_logins_rulem_db_makes_have_connection_limits() -> None:
    """The embedded cluster's owner and writer, and the web service's login, each get the
    documented limit (docs/operations.md) where they are made, so that no one login takes
    every connection of the server."""
    from rulem_db.local import cluster
    from rulem_web import login

    embedded = cluster.ensure_embedded()
    login._provision(embedded.admin_url, login._derived_password(embedded.owner_url))
    eng = sa.create_engine(embedded.admin_url, poolclass=NullPool)
    with eng.connect() as conn:
        limits = dict(conn.execute(sa.text(
            "SELECT rolname, rolconnlimit FROM pg_roles WHERE rolname = ANY(:r)"),
            {"r": list(hardening.CONNECTION_LIMITS)}).all())
    eng.dispose()
    assert limits == hardening.CONNECTION_LIMITS


def test_a_copy_that_lost_the_temporary_revoke_says_so_in_db_status(db_url: str) -> None:
    """TEMPORARY on a database is the database's own right: CREATE DATABASE ... TEMPLATE (as
    this test's database was made from the migrated template) and a restore give it back to
    PUBLIC. `rulem-db db status` says so in its one hardening line, with the cure; after
    `db migrate` the line reads `applied`."""
    import subprocess
    import sys

    def status() -> str:
        out = subprocess.run([sys.executable, "-m", "rulem_cli.main", "--db", db_url, "db",
                              "status"], capture_output=True, text=True, check=True).stdout
        return next(line for line in out.splitlines() if line.startswith("hardening"))

    eng = sa.create_engine(db_url, poolclass=NullPool)
    with eng.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT has_database_privilege('public', current_database(), 'TEMPORARY')")).scalar()
        assert hardening.gaps(conn) == [
            "every login may create temporary objects (TEMPORARY on the database is PUBLIC's "
            "again, as after CREATE DATABASE ... TEMPLATE or a restore); run rulem-db db "
            "migrate as the owner"]
    line = status()
    assert "not hardened: every login may create temporary objects" in line
    assert "run rulem-db db migrate as the owner" in line
    db.migrate(db_url)
    with eng.connect() as conn:
        assert hardening.gaps(conn) == []
    eng.dispose()
    assert status().split() == ["hardening", "applied"]
