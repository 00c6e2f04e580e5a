"""Publishing: QGIS's layer_styles table and the vector tile domain of the working CRS.

public.layer_styles is QGIS's own table (columns as QGIS 3.22 creates it; see
rulem_db/catalogue/tables_publish.py for why it is outside the compared metadata). A database where
someone already saved a style from QGIS has it: it is then kept, and only QGIS's own later
column (type) is added when missing. Downgrade drops it only when this revision created it.

ops.setting 'tile_domain_lonlat' holds where tiles can be asked of the working CRS (its area of
use, widened by 15 degrees, as 'west south east north' in degrees): a web map asks for tiles of
the whole world, and a tile envelope far outside a projected CRS's domain cannot be transformed
into it (sql/930_tiles.sql clips tiles to this domain first).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa
from alembic import context, op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OURS = "QGIS layer styles (QGIS's own table definition), created by rulem-db revision 0006."


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _tile_domain(srid: int) -> str:
    """The CRS's area of use widened by 15 degrees, clamped to Web Mercator's latitudes."""
    west, south, east, north = -180.0, -85.06, 180.0, 85.06
    try:
        import pyproj

        area = pyproj.CRS.from_epsg(srid).area_of_use
    except Exception:  # an SRID pyproj does not know: no clipping beyond Web Mercator's own
        area = None
    if area is not None and area.west <= area.east:
        west, east = max(west, area.west - 15), min(east, area.east + 15)
        south, north = max(south, area.south - 15), min(north, area.north + 15)
    return f"{west:g} {south:g} {east:g} {north:g}"


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS
    conn = op.get_bind()
    exists = conn.execute(sa.text("SELECT to_regclass('public.layer_styles')")).scalar()
    if exists is None:
        op.execute(
            "CREATE TABLE public.layer_styles (id serial PRIMARY KEY, f_table_catalog varchar, "
            "f_table_schema varchar, f_table_name varchar, f_geometry_column varchar, "
            "stylename text, styleqml xml, stylesld xml, useasdefault boolean, "
            "description text, owner varchar(63) DEFAULT CURRENT_USER, ui xml, "
            "update_time timestamp DEFAULT CURRENT_TIMESTAMP, type varchar)")
        conn.execute(sa.text("COMMENT ON TABLE public.layer_styles IS " + _quote(OURS)))
    else:
        op.execute("ALTER TABLE public.layer_styles ADD COLUMN IF NOT EXISTS type varchar")
    conn.execute(
        sa.text("INSERT INTO ops.setting (key, value) VALUES ('tile_domain_lonlat', :v) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"),
        {"v": _tile_domain(SRID)})
    # The style seed (sql/940) and tile functions (sql/930) read what this revision made: have
    # them applied again even when their text did not change (e.g. after a downgrade).
    conn.execute(sa.text("DELETE FROM ops.sql_applied WHERE file_name >= '930'"))


def downgrade() -> None:
    conn = op.get_bind()
    ours = conn.execute(sa.text(
        "SELECT coalesce(obj_description('public.layer_styles'::regclass) = :c, false) "
        "WHERE to_regclass('public.layer_styles') IS NOT NULL"), {"c": OURS}).scalar()
    if ours:
        op.execute("DROP TABLE public.layer_styles")
    elif ours is not None:  # QGIS's table with people's styles: keep it, remove our rows
        op.execute("DELETE FROM public.layer_styles WHERE stylename = 'rulem-db default'")
    op.execute("DELETE FROM ops.setting WHERE key = 'tile_domain_lonlat'")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name >= '930'")
