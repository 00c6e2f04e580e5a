"""Connections and the migration step.

`migrate()` is the one way the schema changes: Alembic revisions for tables, then the numbered
SQL files for functions, views and grants (see migrations/env.py). It is idempotent and runs
in one transaction, so a failed migration leaves the database as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from alembic import command
from alembic.config import Config

from rulem_db.paths import ALEMBIC_INI, MIGRATIONS_DIR

DEMO_PLAN_AREA = ("acd-53-62", "Anoka County Ditch 53-62 CWMP")


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


@contextmanager
def connect(url: str) -> Iterator[sa.Connection]:
    """A connection in a transaction that commits on success and rolls back on error."""
    eng = engine(url)
    try:
        with eng.begin() as conn:
            yield conn
    finally:
        eng.dispose()
