"""Alembic environment: compares the database with rulem_db.catalogue.schema and, after
every upgrade, applies the numbered SQL files under sql/ that changed (functions, views, grants).

The working SRID is a property of the database: read from ops.setting when the database has
been initialised, else taken from `-x srid=N` or the caller's config attributes, else 26915.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import context
from geoalchemy2 import Geometry, alembic_helpers

from rulem_db.catalogue import register, sqlfiles
from rulem_db.catalogue.schema import DEFAULT_SRID, SCHEMAS, build_metadata
from rulem_db.paths import SQL_DIR

config = context.config


def _database_url() -> str:
    url = context.get_x_argument(as_dictionary=True).get("url") or config.attributes.get("url")
    url = url or os.environ.get("RULEM_DATABASE_URL")
    if not url:
        raise SystemExit("alembic: set RULEM_DATABASE_URL or pass -x url=postgresql://...")
    return url


def _stored_srid(conn: sa.Connection) -> int | None:
    if conn.execute(sa.text("SELECT to_regclass('ops.setting')")).scalar() is None:
        return None
    value = conn.execute(sa.text("SELECT value FROM ops.setting WHERE key = 'srid'")).scalar()
    return int(value) if value is not None else None


def _resolve_srid(conn: sa.Connection) -> int:
    stored = _stored_srid(conn)
    asked = context.get_x_argument(as_dictionary=True).get("srid") or config.attributes.get("srid")
    if stored is not None and asked is not None and int(asked) != stored:
        raise SystemExit(
            f"alembic: this database's working CRS is EPSG:{stored}; it cannot change to "
            f"EPSG:{asked} (create a new database instead)")
    return stored or int(asked or DEFAULT_SRID)


def _include_name(name: str | None, type_: str, parent_names: dict) -> bool:
    if type_ == "schema":
        return name in SCHEMAS
    return True


def _include_object(obj, name, type_, reflected, compare_to) -> bool:
    # Staging tables are created on the fly by ingest; views live in sql/ files.
    if type_ == "table" and getattr(obj, "schema", None) == "staging":
        return False
    return alembic_helpers.include_object(obj, name, type_, reflected, compare_to)


def _render_item(type_: str, obj, autogen_context) -> str | bool:
    """Render geometry columns with the revision's SRID variable (the working CRS resolved at
    upgrade time), not the SRID of the database the revision was generated against."""
    rendered = alembic_helpers.render_item(type_, obj, autogen_context)
    if rendered and isinstance(obj, Geometry):
        rendered = rendered.replace(f"srid={obj.srid},", "srid=SRID,")
    return rendered


def run_migrations_online() -> None:
    connectable = config.attributes.get("connection")
    if connectable is None:
        engine = sa.create_engine(_database_url(), poolclass=sa.pool.NullPool)
        with engine.begin() as conn:  # one transaction: a failed upgrade changes nothing
            _run(conn)
    else:
        _run(connectable)


def _run(conn: sa.Connection) -> None:
    srid = _resolve_srid(conn)
    config.attributes["srid"] = srid
    context.configure(
        connection=conn,
        target_metadata=build_metadata(srid),
        include_schemas=True,
        include_name=_include_name,
        include_object=_include_object,
        process_revision_directives=alembic_helpers.writer,
        render_item=_render_item,
        version_table_schema="ops",
        compare_type=True,
        transaction_per_migration=False,
    )
    with context.begin_transaction():
        # before any revision or file changes a table (the reason: sqlfiles.hold_off_maintenance)
        sqlfiles.hold_off_maintenance(conn)
        _group_roles(conn)
        for schema in SCHEMAS:
            conn.execute(sa.text(f"CREATE SCHEMA IF NOT EXISTS {schema}"))
        before = set(context.get_context().get_current_heads())
        context.run_migrations()
        if _at_head() and not _generating_revision():
            # The layer catalogue first: the SQL files build each layer's objects from it.
            changed = register.write_layer_catalogue(conn)
            # A revision that ran may have changed what the files build on (a layer's new
            # column belongs in its pub view, which sql/900 generates from the table), though
            # no file and no catalogue row changed: every file is applied again then too.
            ran = set(context.get_context().get_current_heads()) != before
            sqlfiles.apply_changed(conn, force=changed or ran)


def _group_roles(conn: sa.Connection) -> None:
    """The group roles before the first revision: revisions grant to them (0026 to the
    readers), and on a server that never held rulem-db they do not exist yet (roles are
    cluster-wide). sql/001_roles.sql creates the missing ones, or, without CREATEROLE, refuses
    naming the statements a DBA runs (docs/operations.md, "A district's own server"). It is
    applied again with the other SQL files at head; it is idempotent."""
    raw = conn.connection.dbapi_connection
    with raw.cursor() as cur:
        try:
            cur.execute((SQL_DIR / "001_roles.sql").read_text())
        except Exception as exc:  # psycopg2.Error: its message and hint, in one line
            diag = getattr(exc, "diag", None)
            primary = getattr(diag, "message_primary", None)
            if not primary:
                raise
            hint = getattr(diag, "message_hint", None)
            raise RuntimeError(f"{primary}: {hint}" if hint else primary) from exc


def _generating_revision() -> bool:
    """`alembic revision --autogenerate` runs this file to compare, and changes nothing."""
    return "revision_context" in context.get_context().opts


def _at_head() -> bool:
    """SQL files follow the tables: apply them once the schema is at the newest revision."""
    heads = set(context.script.get_heads())
    return bool(heads) and set(context.get_context().get_current_heads()) == heads


if context.is_offline_mode():
    raise SystemExit("rulem-db migrations run online only")
run_migrations_online()
