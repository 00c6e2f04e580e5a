"""Tables of publishing: QGIS's `public.layer_styles`, created by revision 0006.

Why it is not in the metadata that Alembic compares (`define()` adds nothing): the table must
be QGIS's own, in schema `public` under that exact name, because QGIS looks for it there
(unqualified, on the search path) and nowhere else; and Alembic's comparison covers only the
project's schemas (ops, core, staging, ledger, checks, pub; migrations/env.py), so a table in
`public` in the metadata would be reported as missing on every `alembic check`. The definition
below is kept as data instead: revision 0006 creates the table with these columns (its DDL is
frozen there, as revisions are), and the tests compare the database with this list.

The columns are those QGIS 3.22 creates itself (QgsPostgresProvider, `CREATE TABLE
layer_styles(...)`), so QGIS reads our rows and can add its own beside them. QGIS applies a row
as a layer's default style only where f_table_catalog is the database's name, f_table_schema
and f_table_name name the layer, f_geometry_column is its geometry column (NULL for a table
without geometry), and type is NULL or the layer's geometry type (Point, Line or Polygon).
"""

from __future__ import annotations

import sqlalchemy as sa

# (name, SQL type, default) exactly as QGIS 3.22 creates them, in QGIS's order.
LAYER_STYLES_COLUMNS: tuple[tuple[str, str, str | None], ...] = (
    ("id", "serial", None),  # PRIMARY KEY
    ("f_table_catalog", "varchar", None),
    ("f_table_schema", "varchar", None),
    ("f_table_name", "varchar", None),
    ("f_geometry_column", "varchar", None),
    ("stylename", "text", None),
    ("styleqml", "xml", None),
    ("stylesld", "xml", None),
    ("useasdefault", "boolean", None),
    ("description", "text", None),
    ("owner", "varchar(63)", "CURRENT_USER"),
    ("ui", "xml", None),
    ("update_time", "timestamp", "CURRENT_TIMESTAMP"),
    ("type", "varchar", None),
)

# Marks rows seeded by rulem-db (stylename prefix), so that re-seeding replaces ours and never
# touches styles that people saved from QGIS.
STYLE_NAME_PREFIX = "rulem-db default"


def define(md: sa.MetaData, srid: int) -> None:
    """Nothing for the compared metadata: see the module docstring for why layer_styles is
    created by revision 0006 from LAYER_STYLES_COLUMNS instead."""
