"""Schema web: tipg's catalog functions, installed once, so `rulem-db serve` reads
the database without creating anything at connection start.

Why: tipg (the OGC API Features and Tiles library of `rulem-db serve`) creates its catalog
functions in pg_temp on every new connection, which needs the TEMPORARY privilege; readers
have none here (rulem_db.db._no_temporary_objects_for_readers: a temporary object can shadow
a name resolved inside SECURITY DEFINER code). So the migrating role installs the same
functions, read from the installed tipg package (not copied into this repository), into a
schema of its own, `web` (which also holds the service's own functions, sql/960); the
readers may use and execute them and create nothing. The functions are SECURITY INVOKER:
they read the catalogue with the reader's own rights. The schema's comment records the tipg version; `rulem-db serve` refuses to start when the running tipg
differs (a tipg upgrade in uv.lock comes with a revision that installs its catalog again:
call install_tipg_catalog() from it).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-02
"""
from collections.abc import Sequence
from importlib import metadata, resources

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = "web"
READERS = "rulem_staff, rulem_gis, rulem_restricted"


def install_tipg_catalog() -> None:
    """(Re)create tipg's catalog functions in schema web, with the tipg version on record."""
    version = metadata.version("tipg")
    text = resources.files("tipg").joinpath("sql/dbcatalog.sql").read_text()
    op.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
    op.execute(f"REVOKE ALL ON SCHEMA {SCHEMA} FROM PUBLIC")
    # tipg qualifies every one of its own names with pg_temp; those become web's
    op.execute(text.replace("pg_temp.", f"{SCHEMA}."))
    op.execute(f"REVOKE ALL ON ALL FUNCTIONS IN SCHEMA {SCHEMA} FROM PUBLIC")
    op.execute(f"GRANT USAGE ON SCHEMA {SCHEMA} TO {READERS}")
    op.execute(f"GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA {SCHEMA} TO {READERS}")
    op.execute(f"COMMENT ON SCHEMA {SCHEMA} IS 'tipg {version}: the catalog functions of "
               "rulem-db serve (OGC API Features and Tiles), installed by revision 0026 so "
               "that readers need no temporary objects'")


def upgrade() -> None:
    install_tipg_catalog()


def downgrade() -> None:
    # sql/960 puts the service's own functions in this schema: forget that it was applied, so
    # the next upgrade applies it again (the migration step applies only changed files)
    op.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
    op.execute("DO $$ BEGIN IF to_regclass('ops.sql_applied') IS NOT NULL THEN "
               "DELETE FROM ops.sql_applied WHERE file_name LIKE '96%'; END IF; END $$")
