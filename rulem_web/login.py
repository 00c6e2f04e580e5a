"""Which login `rulem-db serve` reads with, and the checks that it is only a reader.

Why here: the service must read as `rulem_gis` (schema pub, nothing else) and refuse to run
with a login that can write, because a web process is the most exposed thing we run. On the
embedded default there is no reader login to hand, so one is made: `rulem_gis_web`, a member
of rulem_gis and of nothing else, with default_transaction_read_only on. Its password is
derived (HMAC) from the owner's, kept in the embedded state file, so it is never stored
anywhere new, is the same for every `serve` process (several may run) and changes when the
owner's does. With --db/RULEM_DATABASE_URL the URL's login is used as it is, or with
--set-role the connection switches to rulem_gis first (SET ROLE) and is checked as that.
"""

from __future__ import annotations

import hashlib
import hmac
from importlib import metadata

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from rulem_db.catalogue.hardening import connection_limit_sql
from rulem_db.config import normalize_url, redact

WEB_LOGIN = "rulem_gis_web"
READER_GROUP = "rulem_gis"
WEB_SCHEMA = "web"
STATEMENT_TIMEOUT = "30s"   # as rulem_web.database.STATEMENT_TIMEOUT_MS

# Schemas whose tables only the writers may change: a service login with any write right on
# them (or membership of a writing group, or ownership) is refused.
WRITTEN_SCHEMAS = ("core", "ops", "staging", "ledger", "checks", "restricted", "pub", "web")

_CAN_WRITE = sa.text("""
SELECT concat_ws('; ',
  CASE WHEN r.rolsuper THEN 'it is a superuser' END,
  CASE WHEN r.rolcreaterole OR r.rolcreatedb THEN 'it may create roles or databases' END,
  (SELECT 'it is a member of ' || string_agg(g, ', ') FROM unnest(
     ARRAY['rulem_etl', 'rulem_editor', 'rulem_restricted']) g
   WHERE EXISTS (SELECT 1 FROM pg_roles WHERE rolname = g) AND pg_has_role(current_user, g,
     'USAGE')),
  (SELECT 'it owns schema ' || string_agg(nspname, ', ') FROM pg_namespace
   WHERE nspname = ANY(:schemas) AND pg_has_role(current_user, nspowner, 'USAGE')),
  (SELECT 'it may write ' || string_agg(c.oid::regclass::text, ', ' ORDER BY 1)
   FROM (SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ANY(:schemas) AND c.relkind IN ('r', 'p', 'v')
           AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
         ORDER BY 1 LIMIT 3) c))
FROM pg_roles r WHERE r.rolname = current_user
""")


class ReaderError(RuntimeError):
    """The login cannot serve: it may write, is no reader, or the database lacks the web
    schema; the message says which in one line."""


def sync_url(url: str) -> str:
    """The URL for SQLAlchemy/psycopg2 (the checks before start)."""
    return normalize_url(url)


def asyncpg_dsn(url: str) -> str:
    """The same URL as asyncpg wants it (plain postgresql://)."""
    return make_url(normalize_url(url)).set(drivername="postgresql").render_as_string(
        hide_password=False)


def check_reader(url: str, set_role: str | None = None) -> str:
    """Refuse (ReaderError) unless the login, after SET ROLE set_role, reads pub as a member
    of rulem_gis and can write nothing; also that the web schema matches this tipg. Returns
    the role the service will read as."""
    eng = sa.create_engine(sync_url(url), poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as conn:
            if set_role:
                check_login_no_wider(conn, set_role)
                conn.execute(sa.text(f'SET ROLE "{set_role}"'))
            role = conn.execute(sa.text("SELECT current_user")).scalar()
            member = conn.execute(sa.text(
                "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :g) "
                "AND pg_has_role(current_user, :g, 'USAGE')"), {"g": READER_GROUP}).scalar()
            if not member:
                raise ReaderError(f"role {role} is not a member of {READER_GROUP}: serve "
                                  f"reads as a {READER_GROUP} login (docs/publishing.md)")
            why = conn.execute(_CAN_WRITE, {"schemas": list(WRITTEN_SCHEMAS)}).scalar()
            if why:
                raise ReaderError(f"role {role} can write or reach more than pub ({why}): "
                                  f"serve reads as a {READER_GROUP} login only: make a login "
                                  f"in {READER_GROUP} for it (docs/publishing.md)")
            check_web_schema(conn)
            conn.rollback()
            return role
    except sa.exc.OperationalError as exc:
        first = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc)
        raise ReaderError(f"cannot connect to {redact(sync_url(url))}: {first}") from None
    finally:
        eng.dispose()


# Roles the login could become (SET ROLE, or set_config('role', ...)) that are wider than the
# role it is told to switch to: anything it is a member of that the set role is not.
_WIDER_ROLES = sa.text("""
SELECT string_agg(r.rolname, ', ' ORDER BY r.rolname)
FROM pg_roles r
WHERE pg_has_role(session_user, r.oid, 'MEMBER') AND r.rolname <> session_user
  AND NOT pg_has_role(:set_role, r.oid, 'MEMBER')
""")


def check_login_no_wider(conn: sa.Connection, set_role: str) -> None:
    """Refuse --set-role for a login that could switch back to something wider than the
    set role: a superuser, a member of another role, or a login that can write itself."""
    login = conn.execute(sa.text("SELECT session_user")).scalar()
    exists = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"),
                          {"r": set_role}).scalar()
    if not exists:
        raise ReaderError(f"--set-role {set_role}: there is no such role")
    fix = (f"serve must read with a real {READER_GROUP} login: create one (CREATE ROLE ... "
           f"LOGIN IN ROLE {READER_GROUP}) and pass its URL (docs/publishing.md)")
    superuser = conn.execute(sa.text(
        "SELECT rolsuper FROM pg_roles WHERE rolname = session_user")).scalar()
    if superuser:
        raise ReaderError(f"--set-role {set_role}: login {login} is a superuser, and a "
                          f"session can always switch back to its login: {fix}")
    wider = conn.execute(_WIDER_ROLES, {"set_role": set_role}).scalar()
    if wider:
        raise ReaderError(f"--set-role {set_role}: login {login} can also switch to {wider}: "
                          f"{fix}")
    why = conn.execute(_CAN_WRITE, {"schemas": list(WRITTEN_SCHEMAS)}).scalar()
    if why:
        raise ReaderError(f"--set-role {set_role}: login {login} itself can write or reach "
                          f"more than pub ({why}), and a session can switch back to it: {fix}")


def check_web_schema(conn: sa.Connection) -> None:
    """The tipg catalog functions of revision 0026 are there and are this tipg's."""
    comment = conn.execute(sa.text(
        "SELECT obj_description(to_regnamespace(:s), 'pg_namespace')"),
        {"s": WEB_SCHEMA}).scalar()
    if comment is None:
        raise ReaderError("the database has no schema web (the web service's catalog) or "
                          "this login may not use it: run `rulem-db db migrate` as the owner")
    want = f"tipg {metadata.version('tipg')}:"
    if not comment.startswith(want):
        found = comment.split(":", 1)[0]
        raise ReaderError(f"schema web holds the catalog of {found}, this is {want[:-1]}: "
                          "a migration that installs it again is needed (docs/publishing.md)")


def _derived_password(owner_url: str) -> str:
    owner_pw = make_url(owner_url).password or ""
    return hmac.new(owner_pw.encode(), WEB_LOGIN.encode(), hashlib.sha256).hexdigest()


def embedded_reader_url() -> str:
    """The embedded cluster's web login (made or repaired here, as its admin), as a URL."""
    from rulem_db.local import cluster  # only when the embedded default is wanted

    emb = cluster.ensure_embedded()
    password = _derived_password(emb.owner_url)
    url = make_url(emb.owner_url).set(username=WEB_LOGIN, password=password)
    try:  # the usual case: it exists with this password and its settings
        eng = sa.create_engine(url, poolclass=sa.pool.NullPool)
        with eng.connect() as conn:
            current = conn.execute(sa.text("SELECT current_setting('statement_timeout')")
                                   ).scalar()
        eng.dispose()
        if current != STATEMENT_TIMEOUT:
            _provision(emb.admin_url, password)
    except sa.exc.OperationalError:
        _provision(emb.admin_url, password)
    return url.render_as_string(hide_password=False)


def _provision(admin_url: str, password: str) -> None:
    """Create or repair rulem_gis_web: login, member of rulem_gis only, read-only default,
    a statement timeout; the password as a SCRAM verifier (never in clear on the wire)."""
    from rulem_db.local.cluster import _scram_verifier  # the embedded cluster's own helper

    eng = sa.create_engine(normalize_url(admin_url), isolation_level="AUTOCOMMIT",
                           poolclass=sa.pool.NullPool)
    try:
        with eng.connect() as conn:
            exists = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"),
                                  {"r": WEB_LOGIN}).scalar()
            verb = "ALTER" if exists else "CREATE"
            conn.execute(sa.text(
                f"{verb} ROLE {WEB_LOGIN} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE INHERIT "
                "PASSWORD :p"), {"p": _scram_verifier(password)})
            conn.execute(sa.text(f"GRANT {READER_GROUP} TO {WEB_LOGIN}"))
            conn.execute(sa.text(
                f"ALTER ROLE {WEB_LOGIN} SET default_transaction_read_only = on"))
            limit = connection_limit_sql(WEB_LOGIN)  # unless an operator set one
            if limit:
                conn.execute(sa.text(limit))
            conn.execute(sa.text(
                f"ALTER ROLE {WEB_LOGIN} SET statement_timeout = '{STATEMENT_TIMEOUT}'"))
    finally:
        eng.dispose()
