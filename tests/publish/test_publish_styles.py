"""QGIS's layer_styles table: QGIS's own definition, a default style for every published map
layer that QGIS will pick (catalog, schema, table, geometry column, type), styles people saved
from QGIS left alone, and a database that already had the table keeps it."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command
from publish_fixture import published_url  # noqa: F401  (fixture)

from rulem_db import db
from rulem_db.catalogue.tables_publish import LAYER_STYLES_COLUMNS

PG_TYPES = {"serial": "integer", "varchar": "character varying", "text": "text", "xml": "xml",
            "boolean": "boolean", "varchar(63)": "character varying(63)",
            "timestamp": "timestamp without time zone"}

QGIS_322_DDL = (  # what QGIS 3.22 runs when it saves the first style of a database
    "CREATE TABLE layer_styles(id SERIAL PRIMARY KEY,f_table_catalog varchar,"
    "f_table_schema varchar,f_table_name varchar,f_geometry_column varchar,styleName text,"
    "styleQML xml,styleSLD xml,useAsDefault boolean,description text,"
    "owner varchar(63) DEFAULT CURRENT_USER,ui xml,"
    "update_time timestamp DEFAULT CURRENT_TIMESTAMP,type varchar)")


def _columns(conn: sa.Connection) -> list[tuple[str, str, str | None]]:
    return [tuple(r) for r in conn.execute(sa.text(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), pg_get_expr(d.adbin, d.adrelid) "
        "FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid "
        "AND d.adnum = a.attnum WHERE a.attrelid = 'public.layer_styles'::regclass "
        "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"))]


def test_layer_styles_is_qgis_own_table(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        ours = _columns(conn)
        conn.execute(sa.text("CREATE SCHEMA qgis_made"))
        conn.execute(sa.text("SET LOCAL search_path = qgis_made"))
        conn.execute(sa.text(QGIS_322_DDL))
        qgis = [tuple(r) for r in conn.execute(sa.text(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
            "WHERE a.attrelid = 'qgis_made.layer_styles'::regclass AND a.attnum > 0 "
            "ORDER BY a.attnum"))]
        conn.rollback()
    assert [(n, t) for n, t, _ in ours] == qgis
    assert [(n, t) for n, t, _ in ours] == [(n, PG_TYPES[t]) for n, t, _ in LAYER_STYLES_COLUMNS]
    defaults = {n: d for n, _, d in ours if d}
    assert defaults["owner"] == "CURRENT_USER" and defaults["update_time"] == "CURRENT_TIMESTAMP"
    assert defaults["id"].startswith("nextval(")


def test_every_map_layer_has_a_default_style_qgis_will_pick(published_url: str) -> None:  # noqa: F811
    eng = sa.create_engine(published_url)
    try:
        with eng.connect() as conn:
            missing = conn.execute(sa.text(
                "SELECT g.f_table_schema || '.' || g.f_table_name FROM geometry_columns g "
                "JOIN pg_class c ON c.relname = g.f_table_name "
                "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = g.f_table_schema "
                "WHERE g.f_table_schema IN ('pub', 'restricted') AND NOT EXISTS ("
                "  SELECT 1 FROM public.layer_styles s WHERE s.useasdefault "
                "  AND s.f_table_catalog = current_database() "
                "  AND s.f_table_schema = g.f_table_schema AND s.f_table_name = g.f_table_name "
                "  AND s.f_geometry_column = g.f_geometry_column "
                "  AND (s.type IS NULL) = (upper(g.type) NOT IN ('GEOMETRY', "
                "       'GEOMETRYCOLLECTION')))")).scalars().all()
            typed = dict(conn.execute(sa.text(
                "SELECT f_table_name, array_agg(type ORDER BY type)::text FROM public.layer_styles "
                "WHERE type IS NOT NULL GROUP BY 1")).all())
            finding = conn.execute(sa.text(
                "SELECT (xpath('//rule/@label', styleqml))::text[], "
                "(xpath('//symbol[@name=\"0\"]/layer/prop[@k=\"color\"]/@v', styleqml))::text[] "
                "FROM public.layer_styles WHERE f_table_name = 'finding' AND type = 'Polygon'"
            )).first()
            balance = conn.execute(sa.text(
                "SELECT (xpath('//rule/@label', styleqml))::text[] FROM public.layer_styles "
                "WHERE f_table_name = 'parcel_balance' LIMIT 1")).scalar()
    finally:
        eng.dispose()
    assert missing == []
    assert typed.get("finding") == "{Line,Point,Polygon}"
    if finding is not None:  # the checks publish pub.finding
        assert finding[0] == ["Error", "Warning", "Info"]
        assert finding[1] == ["215,25,28,255"]  # error red, #d7191c
    if balance is not None:  # the ledger publishes pub.parcel_balance
        assert balance[:3] == ["Deficit (credit below required)", "Balanced", "Surplus"]


def test_reseeding_keeps_what_people_saved_and_follows_a_new_database_name(
        engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO public.layer_styles (f_table_catalog, f_table_schema, f_table_name, "
            "f_geometry_column, stylename, styleqml, useasdefault) VALUES (current_database(), "
            "'pub', 'parcel', 'geom', 'Planning team', XMLPARSE(DOCUMENT '<qgis/>'), true)"))
        conn.execute(sa.text("UPDATE public.layer_styles SET f_table_catalog = 'old_name' "
                             "WHERE stylename = 'rulem-db default'"))
        written = conn.execute(sa.text("SELECT ops.seed_layer_styles()")).scalar()
        rows = conn.execute(sa.text(
            "SELECT stylename, useasdefault FROM public.layer_styles "
            "WHERE f_table_name = 'parcel' ORDER BY stylename")).all()
        stale = conn.execute(sa.text(
            "SELECT count(*) FROM public.layer_styles WHERE f_table_catalog = 'old_name'")).scalar()
    assert written > 40
    assert [tuple(r) for r in rows] == [("Planning team", True), ("rulem-db default", False)]
    assert stale == 0


def test_a_database_with_qgis_styles_keeps_them_through_upgrade_and_downgrade(
        empty_db_url: str) -> None:
    eng = sa.create_engine(empty_db_url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS postgis"))
            conn.execute(sa.text(QGIS_322_DDL.replace(",type varchar)", ")")))  # before 3.x
            conn.execute(sa.text(
                "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, "
                "stylename) VALUES (current_database(), 'gis', 'roads', 'mine')"))
        db.migrate(empty_db_url, srid=26915)
        with eng.begin() as conn:
            after_up = conn.execute(sa.text(
                "SELECT count(*) FILTER (WHERE stylename = 'mine'), "
                "count(*) FILTER (WHERE stylename = 'rulem-db default') > 40 FROM layer_styles"
            )).one()
            has_type = conn.execute(sa.text(
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'public' "
                "AND table_name = 'layer_styles' AND column_name = 'type'")).scalar()
            command.downgrade(db.alembic_config(conn), "0005")
            after_down = conn.execute(sa.text(
                "SELECT array_agg(stylename)::text FROM layer_styles")).scalar()
    finally:
        eng.dispose()
    assert tuple(after_up) == (1, True) and has_type == 1
    assert after_down == "{mine}"
