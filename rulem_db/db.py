"""Connections, the migration step, and which plan area a command works on.

`migrate()` is the one way the schema changes: Alembic revisions for tables, then the numbered
SQL files for functions, views and grants (see migrations/env.py). It is idempotent and runs
in one transaction, so a failed migration leaves the database as it was.

`plan_area()` answers "which plan area?" the same way for every command that takes
--plan-area: the one named, else the database's only one.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from rulem_db.catalogue import hardening
from rulem_db.paths import ALEMBIC_INI, MIGRATIONS_DIR

# Engines kept for the duration of a `reusing_connections` block, by URL.
_SHARED: contextvars.ContextVar[dict[str, sa.Engine] | None] = contextvars.ContextVar(
    "rulem_db_shared_engines", default=None)


def engine(url: str, **kw) -> sa.Engine:
    """An engine that identifies itself in pg_stat_activity."""
    return sa.create_engine(url, connect_args={"application_name": "rulem-db"},
                            pool_pre_ping=True, **kw)


def alembic_config(conn: sa.Connection | None = None, srid: int | None = None,
                   url: str | None = None) -> Config:
    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if conn is not None:
        cfg.attributes["connection"] = conn
    if url is not None:
        cfg.attributes["url"] = url
    if srid is not None:
        cfg.attributes["srid"] = srid
    return cfg


def ensure_extensions(conn: sa.Connection) -> None:
    """PostGIS and btree_gist must exist; creating PostGIS needs a superuser, so say so."""
    have = set(conn.execute(sa.text(
        "SELECT extname FROM pg_extension WHERE extname IN ('postgis', 'btree_gist')")).scalars())
    for ext in ("postgis", "btree_gist"):
        if ext in have:
            continue
        try:
            with conn.begin_nested():
                conn.execute(sa.text(f"CREATE EXTENSION IF NOT EXISTS {ext}"))
        except sa.exc.DBAPIError as exc:
            raise RuntimeError(
                f"extension {ext} is missing and {conn.engine.url.username} may not create it: "
                f"a superuser runs CREATE EXTENSION {ext}; in this database") from exc
    version = conn.execute(sa.text("SELECT postgis_lib_version()")).scalar()
    major, minor = (int(x) for x in version.split(".")[:2])
    if (major, minor) < (3, 3):
        raise RuntimeError(f"PostGIS {version} is too old: rulem-db needs PostGIS 3.3 or newer")


def migrate(url: str, srid: int | None = None, plan_area: tuple[str, str] | None = None) -> None:
    """Bring the database to the newest schema; optionally make sure a plan area exists."""
    eng = engine(url)
    try:
        with eng.begin() as conn:
            server = conn.execute(sa.text("SHOW server_version_num")).scalar()
            if int(server) < 150000:
                raise RuntimeError("rulem-db needs PostgreSQL 15 or newer")
            ensure_extensions(conn)
            command.upgrade(alembic_config(conn, srid), "head")
            _jit_off(conn)
            _no_temporary_objects_for_readers(conn)
            hardening.apply(conn)
            # QGIS finds default styles by database name, which a copy, a restore or a test
            # clone changes: re-point them on every migration (cheap, idempotent).
            if conn.execute(sa.text(
                    "SELECT to_regprocedure('ops.seed_layer_styles()')")).scalar():
                conn.execute(sa.text("SELECT ops.seed_layer_styles()"))
            if plan_area:
                conn.execute(sa.text("SELECT core.ensure_plan_area(:c, :n)"),
                             {"c": plan_area[0], "n": plan_area[1]})
    finally:
        eng.dispose()


def _no_temporary_objects_for_readers(conn: sa.Connection) -> None:
    """Only the writers may create temporary objects in this database (TEMPORARY is PUBLIC's
    by default). Why: a temporary table, view or function can shadow a name that other code
    resolves, which is how a login slips its own code under someone else's; the readers need
    none. A database's rights are not copied by CREATE DATABASE ... TEMPLATE nor by a
    restore, so this runs at every migration, like the jit setting. A role that may not
    change them (not the database owner) leaves them as they are: `db status` says so."""
    name = conn.execute(sa.text("SELECT current_database()")).scalar()
    quoted = '"' + name.replace('"', '""') + '"'
    try:
        with conn.begin_nested():
            conn.execute(sa.text(f"REVOKE TEMPORARY ON DATABASE {quoted} FROM PUBLIC"))
            conn.execute(sa.text(f"GRANT TEMPORARY ON DATABASE {quoted} TO rulem_etl"))
    except sa.exc.DBAPIError:
        pass


def _jit_off(conn: sa.Connection) -> None:
    """`jit = off` for the database. PostGIS functions carry large planner costs, so ordinary
    spatial queries cross the JIT threshold and compile for 0.3-0.5 s to save milliseconds
    (pub.parcel_balance over 100,000 parcels: 0.35 s of JIT for 0.37 s of work). The owner may
    set it; a role that may not is told nothing and the server's setting stays."""
    name = conn.execute(sa.text("SELECT current_database()")).scalar()
    try:
        with conn.begin_nested():
            conn.execute(sa.text('ALTER DATABASE "' + name.replace('"', '""') + '" SET jit = off'))
    except sa.exc.DBAPIError:
        pass


@contextmanager
def reusing_connections() -> Iterator[None]:
    """Inside this block `connect` reuses pooled connections per URL instead of opening one
    per call. Why: a nightly run makes a dozen small steps, and a new authenticated session
    costs 20-40 ms each, most of a quiet night's work. Outside the block nothing is pooled, so
    a database can be dropped or restored once a command is done."""
    if _SHARED.get() is not None:  # nested: the outer block owns the engines
        yield
        return
    engines: dict[str, sa.Engine] = {}
    token = _SHARED.set(engines)
    try:
        yield
    finally:
        _SHARED.reset(token)
        for eng in engines.values():
            eng.dispose()


@contextmanager
def engine_for(url: str, connections: int = 1) -> Iterator[sa.Engine]:
    """An engine for up to `connections` connections at once: the block's shared one inside
    `reusing_connections` (kept), else a new one (disposed at the end)."""
    shared = _SHARED.get()
    if shared is None:
        eng = engine(url, pool_size=max(connections, 1))
        try:
            yield eng
        finally:
            eng.dispose()
        return
    eng = shared.get(url)
    if eng is None:
        eng = shared[url] = engine(url, pool_size=2, max_overflow=8)
    yield eng


@contextmanager
def connect(url: str) -> Iterator[sa.Connection]:
    """A connection in a transaction that commits on success and rolls back on error."""
    with engine_for(url) as eng, eng.begin() as conn:
        yield conn


class ReadOnlyStandby(RuntimeError):
    """The database is a hot standby (in recovery), which takes no writes."""


def refuse_standby(url: str, doing: str) -> None:
    """Raise ReadOnlyStandby when `url` is a read-only standby; `doing` names the command.

    Why: a standby refuses writes by itself, but only at the first writing statement, after a
    command has read its files or opened its run, and with "cannot execute INSERT in a
    read-only transaction". Asked first, the user learns in one line what the database is and
    where the command belongs (rulem_cli/read_only.py asks it for every writing command)."""
    with connect(url) as conn:
        if not conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar():
            return
    u = sa.engine.make_url(url)
    raise ReadOnlyStandby(f"database {u.database} on {u.host or 'localhost'}:{u.port or 5432} "
                          f"is a read-only standby (pg_is_in_recovery): run {doing} on the "
                          "primary")


class PlanAreaUnclear(ValueError):
    """No plan area was named and the database does not hold exactly one, or the one named is
    not in it. A ValueError, so the command line prints it as one line."""


def plan_area(conn: sa.Connection, asked: str | None) -> sa.Row:
    """The plan area (plan_area_id, code, name) a command works on: the one asked for, else the
    database's only one; raises PlanAreaUnclear naming the plan areas present.

    Why no default code: a database holds the plan areas it was given, and a code baked in here
    (the demo's, say) would send a delivery to a plan area that is not the user's, or fail with
    a message about a plan area they never heard of. With one plan area there is nothing to
    choose; with several, guessing could load a file into the wrong plan.
    """
    rows = conn.execute(sa.text(
        "SELECT plan_area_id, code, name FROM core.plan_area ORDER BY code")).all()
    known = ", ".join(r.code for r in rows)
    if asked is not None:
        for r in rows:
            if r.code == asked:
                return r
        raise PlanAreaUnclear(f"no plan area {asked!r} in this database (known: "
                              f"{known or 'none'})")
    if len(rows) == 1:
        return rows[0]
    if not rows:
        raise PlanAreaUnclear("the database holds no plan area yet: create one with "
                              "rulem-db db init --plan-area CODE --plan-name NAME")
    raise PlanAreaUnclear(f"the database holds several plan areas ({known}): name one with "
                          "--plan-area CODE")


def plan_area_code(conn: sa.Connection, asked: str | None) -> str:
    """The code of `plan_area(conn, asked)`, for callers that go by code."""
    return plan_area(conn, asked).code
