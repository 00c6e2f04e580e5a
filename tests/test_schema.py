"""The foundation's promises, each checked against a real PostGIS: migrations round-trip, the
database itself refuses bad data, history is kept, roles are least-privilege."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from alembic import command

from rulem_db import db
from rulem_db.catalogue.layers import LAYERS, layer
from rulem_db.catalogue.schema import VERSION_COLUMNS

SQUARE = "ST_Multi(ST_MakeEnvelope(0, 0, 100, 100, 26915))"  # 100 m square = 2.4711 acres
BOWTIE = "ST_Multi(ST_GeomFromText('POLYGON((0 0, 10 10, 10 0, 0 10, 0 0))', 26915))"


def _insert_parcel(conn: sa.Connection, pin: str = "013123110001", geom: str = SQUARE) -> int:
    return conn.execute(sa.text(
        f"INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
        f"VALUES (1, :pin, :pin, {geom}) RETURNING parcel_id"), {"pin": pin}).scalar_one()


def _refused(engine: sa.Engine, sql: str, match: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match=match), engine.begin() as conn:
        conn.execute(sa.text(sql))


def test_migrations_up_check_down_up(empty_db_url: str) -> None:
    db.migrate(empty_db_url, srid=26915)
    eng = db.engine(empty_db_url)
    try:
        with eng.begin() as conn:
            cfg = db.alembic_config(conn)
            command.check(cfg)  # raises when the models and the database differ
            version = sa.text("SELECT version_num FROM ops.alembic_version")
            head = conn.execute(version).scalar()
            command.downgrade(cfg, "-1")
            assert conn.execute(version).scalar() != head
            command.downgrade(cfg, "base")  # every revision's downgrade runs
            assert conn.execute(sa.text("SELECT to_regclass('core.parcel')")).scalar() is None
            command.upgrade(cfg, "head")
            assert conn.execute(version).scalar() == head
            command.check(cfg)
            assert conn.execute(sa.text("SELECT to_regclass('pub.parcel')")).scalar() is not None
    finally:
        eng.dispose()
    db.migrate(empty_db_url)  # idempotent: a second run changes nothing and succeeds


def test_working_srid_is_chosen_at_init_and_kept(empty_db_url: str) -> None:
    db.migrate(empty_db_url, srid=5070)
    eng = db.engine(empty_db_url)
    try:
        with eng.connect() as conn:
            srids = set(conn.execute(sa.text(
                "SELECT DISTINCT srid FROM geometry_columns WHERE f_table_schema = 'core'"
            )).scalars())
            assert srids == {5070}
            assert conn.execute(sa.text("SELECT ops.working_srid()")).scalar() == 5070
    finally:
        eng.dispose()
    with pytest.raises(SystemExit, match="EPSG:5070"):
        db.migrate(empty_db_url, srid=26915)


def test_every_layer_has_its_table_with_typmod_geometry_and_spatial_index(
        engine: sa.Engine) -> None:
    with engine.connect() as conn:
        geoms = {r.f_table_name: (r.type, r.srid) for r in conn.execute(sa.text(
            "SELECT f_table_name, type, srid FROM geometry_columns "
            "WHERE f_table_schema = 'core'"))}
        gist = set(conn.execute(sa.text(
            "SELECT tablename FROM pg_indexes WHERE schemaname = 'core' "
            "AND indexdef LIKE '%USING gist (geom)%'")).scalars())
        for layer in LAYERS:
            assert conn.execute(sa.text(f"SELECT to_regclass('core.{layer.name}')")).scalar()
            if layer.geometry:
                assert geoms[layer.name] == (layer.geometry, 26915), layer.name
                assert layer.name in gist, layer.name
            else:
                assert layer.name not in geoms


def test_invalid_polygon_is_refused(engine: sa.Engine) -> None:
    with pytest.raises(sa.exc.IntegrityError, match="ck_parcel_geom_valid"), \
            engine.begin() as conn:
        _insert_parcel(conn, geom=BOWTIE)


def test_empty_geometry_is_refused(engine: sa.Engine) -> None:
    _refused(engine, "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) VALUES "
             "(1, 'x', 'x', 'SRID=26915;MULTIPOLYGON EMPTY')", "ck_parcel_geom_valid")


def test_geometry_in_another_srid_is_refused(engine: sa.Engine) -> None:
    _refused(engine, "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) VALUES "
             "(1, 'x', 'x', ST_Multi(ST_MakeEnvelope(0, 0, 1, 1, 4326)))",
             "SRID .4326. does not match column SRID .26915.")


def test_wrong_geometry_type_is_refused(engine: sa.Engine) -> None:
    _refused(engine, "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) VALUES "
             "(1, 'x', 'x', ST_MakeEnvelope(0, 0, 1, 1, 26915))",
             "Geometry type .Polygon. does not match column type .MultiPolygon.")


@pytest.mark.parametrize(("table", "column", "value"), [
    ("impact", "kind", "bulldoze"),
    ("soil", "hydrologic_soil_group", "E"),
    ("heritage_area", "rank", "Z"),
    ("wetland", "susceptibility_class", "extreme"),
])
def test_unknown_coded_value_is_refused(engine: sa.Engine, table: str, column: str,
                                        value: str) -> None:
    values = {"plan_area_id": "1", "geom": SQUARE}
    for col in layer(table).columns:
        if col.required:
            values[col.name] = ("'" + col.codes[0] + "'" if col.codes else
                                {"bool": "false", "numeric": "1", "text": "'x'"}.get(
                                    col.kind, "1"))
    values[column] = f"'{value}'"
    sql = (f"INSERT INTO core.{table} ({', '.join(values)}) "
           f"VALUES ({', '.join(values.values())})")
    # the catalogue's CHECK, or before it, for the layers whose write rules hold in the
    # database (sql/014_write_rules.sql), the same rule in ingest's words
    _refused(engine, sql, f"ck_{table}_{column}_code|'{value}' is not a {column}")


def test_delete_and_truncate_are_refused_and_nothing_is_lost(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        _insert_parcel(conn)
    _refused(engine, "DELETE FROM core.parcel", "DELETE is not allowed")
    _refused(engine, "TRUNCATE core.parcel CASCADE", "TRUNCATE is not allowed")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM core.parcel")).scalar() == 1


def test_update_keeps_the_old_version_readable_as_of_its_date(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = _insert_parcel(conn)
        before = conn.execute(sa.text("SELECT clock_timestamp()")).scalar()
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET pin = '01-31-23-11-0001', "
                             "geom = ST_Multi(ST_MakeEnvelope(0, 0, 100, 50, 26915)) "
                             "WHERE parcel_id = :p AND valid_to IS NULL"), {"p": pid})
    with engine.connect() as conn:
        then = conn.execute(sa.text(
            "SELECT pin, round(core.acres(geom), 4) FROM core.parcel_as_of(:t) "
            "WHERE parcel_id = :p"), {"t": before, "p": pid}).one()
        now = conn.execute(sa.text(
            "SELECT pin, area_acres FROM pub.parcel WHERE parcel_id = :p"), {"p": pid}).one()
        versions = conn.execute(sa.text(
            "SELECT count(*) FROM core.parcel WHERE parcel_id = :p"), {"p": pid}).scalar()
    assert (then[0], float(then[1])) == ("013123110001", 2.4711)
    assert (now[0], float(now[1])) == ("01-31-23-11-0001", 1.2355)
    assert versions == 2


def test_history_cannot_be_edited(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = _insert_parcel(conn)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET pin = 'new' WHERE parcel_id = :p"),
                     {"p": pid})
    _refused(engine, "UPDATE core.parcel SET pin = 'forged' WHERE valid_to IS NOT NULL",
             "is history")


def test_an_update_that_changes_nothing_writes_no_version(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = _insert_parcel(conn)
        conn.execute(sa.text("UPDATE core.parcel SET pin = pin WHERE parcel_id = :p"), {"p": pid})
        assert conn.execute(sa.text("SELECT count(*) FROM core.parcel")).scalar() == 1


def test_retiring_a_feature_closes_it_and_records_who(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = _insert_parcel(conn)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() WHERE parcel_id = :p"),
                     {"p": pid})
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT valid_to IS NOT NULL, closed_by, current_user "
                                   "FROM core.parcel WHERE parcel_id = :p"), {"p": pid}).one()
        assert row[0] and row[1] == row[2]
        assert conn.execute(sa.text("SELECT count(*) FROM pub.parcel")).scalar() == 0


def test_same_natural_key_keeps_its_feature_id(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        first = _insert_parcel(conn)
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() WHERE parcel_id = :p"),
                     {"p": first})
    with engine.begin() as conn:
        again = _insert_parcel(conn)
    assert again == first
    _refused(engine, f"INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
             f"VALUES (1, 'x', '013123110001', {SQUARE})", "already exists")


def test_staff_role_cannot_write_anything(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        _insert_parcel(conn)
    with engine.connect() as conn:
        conn.execute(sa.text("SET ROLE rulem_staff"))
        assert conn.execute(sa.text("SELECT count(*) FROM pub.parcel")).scalar() == 1
        writable = conn.execute(sa.text(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') "
            "AND c.relkind IN ('r', 'v', 'm', 'p', 'f') "
            "AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE') "
            "  OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))"
        )).scalars().all()
        assert writable == []
        can_create = conn.execute(sa.text(
            "SELECT n.nspname FROM pg_namespace n WHERE has_schema_privilege(n.oid, 'CREATE')"
        )).scalars().all()
        assert can_create == []
    for sql, match in [
        ("INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
         f"VALUES (1, 'x', 'x', {SQUARE})", "permission denied"),
        ("UPDATE pub.parcel SET pin = 'x'", "permission denied"),
        ("DELETE FROM pub.parcel", "permission denied"),
    ]:
        with pytest.raises(sa.exc.ProgrammingError, match=match), engine.begin() as conn:
            conn.execute(sa.text("SET ROLE rulem_staff"))
            conn.execute(sa.text(sql))


def test_staff_and_gis_read_only_pub(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        for role in ("rulem_staff", "rulem_gis"):
            conn.execute(sa.text(f"SET ROLE {role}"))
            schemas = conn.execute(sa.text(
                "SELECT nspname FROM pg_namespace WHERE has_schema_privilege(oid, 'USAGE') "
                "AND nspname NOT LIKE 'pg_%' AND nspname <> 'information_schema'"
            )).scalars().all()
            assert "core" not in schemas and "restricted" not in schemas
            assert "pub" in schemas
            conn.execute(sa.text("RESET ROLE"))


def test_parameters_are_seeded_with_unit_paragraph_and_date(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        rows = {r.name: r for r in conn.execute(sa.text(
            "SELECT name, value_num, value_text, unit, rule_ref, effective_on "
            "FROM core.parameter WHERE plan_area_id = 1"))}
        assert rows["buffer_min_width_ft"].value_num == 25
        assert rows["buffer_min_width_ft"].rule_ref == "6(c)"
        assert rows["counted_credit_status"].value_text == "certified"
        assert rows["stormwater_share_base"].value_text == "whole_5ci_volume"  # 5(c)(ii)-(iii)
        # the district's own words on its documents (sql/032): text, no unit
        district_text = {"district_name", "district_address", "district_contact",
                         "decision_signatory", "decision_appeal_text"}
        assert district_text <= rows.keys()
        assert all(rows[n].value_text and rows[n].unit is None for n in district_text)
        assert len(rows) == 26 + len(district_text)
        assert all(r.effective_on.isoformat() == "2004-01-28" for r in rows.values())
        assert conn.execute(sa.text(
            "SELECT core.param_num(1, 'marker_max_spacing_ft', '2020-01-01')")).scalar() == 200
    _refused(engine, "UPDATE core.parameter SET value_num = 10", "append-only")
    _refused(engine, "DELETE FROM core.parameter", "append-only")


def test_parameter_change_takes_effect_from_its_date(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.parameter (plan_area_id, name, value_num, unit, rule_ref, "
            "effective_on) VALUES (1, 'partial_drain_factor', 0.75, 'ratio', '7(c)(vi)', "
            "'2026-01-01')"))
        before = conn.execute(sa.text(
            "SELECT core.param_num(1, 'partial_drain_factor', '2025-12-31')")).scalar()
        after = conn.execute(sa.text(
            "SELECT core.param_num(1, 'partial_drain_factor', '2026-06-01')")).scalar()
    assert (before, after) == (0.5, 0.75)


def test_every_pub_view_and_column_is_documented(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        undocumented = conn.execute(sa.text(
            "SELECT c.relname || coalesce('.' || a.attname, '') FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 "
            "  AND NOT a.attisdropped "
            "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') AND ("
            "  obj_description(c.oid) IS NULL "
            "  OR (a.attname IS NOT NULL AND col_description(c.oid, a.attnum) IS NULL))"
        )).scalars().all()
    assert undocumented == []


def test_every_fact_table_carries_its_plan_area(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        missing = conn.execute(sa.text(
            "SELECT table_name FROM information_schema.tables t WHERE table_schema = 'core' "
            "AND table_type = 'BASE TABLE' AND table_name NOT IN "
            "('plan_area', 'heritage_rank', 'tr55_cover') AND NOT EXISTS ("
            "  SELECT 1 FROM information_schema.columns c WHERE c.table_schema = 'core' "
            "  AND c.table_name = t.table_name AND c.column_name = 'plan_area_id')"
        )).scalars().all()
    assert missing == []


def test_version_columns_are_the_same_on_every_layer(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        for layer in LAYERS:
            cols = set(conn.execute(sa.text(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = 'core' AND table_name = :t"), {"t": layer.name}).scalars())
            assert set(VERSION_COLUMNS) <= cols, layer.name


def test_a_feature_never_has_two_current_versions(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = _insert_parcel(conn)
    _refused(engine, f"INSERT INTO core.parcel (parcel_id, plan_area_id, pin, pin_normalized, "
             f"geom) VALUES ({pid}, 1, 'twin', 'twin', {SQUARE})", "uq_parcel_version")
