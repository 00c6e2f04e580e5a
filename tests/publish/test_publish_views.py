"""The published names (docs/publishing.md): pub.<layer> per layer with its stable key first,
typmod geometry in the working CRS, area_acres, provenance, the labels people search by, and
history views that give any layer as of a past moment."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from publish_fixture import SRID, box, published_url  # noqa: F401  (fixture)

from rulem_db.catalogue.layers import LAYERS


@pytest.fixture
def conn(published_url: str):  # noqa: F811
    eng = sa.create_engine(published_url)
    with eng.connect() as c:
        yield c
    eng.dispose()


def _columns(conn: sa.Connection, schema: str, view: str) -> list[tuple[str, str]]:
    return [tuple(r) for r in conn.execute(sa.text(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "WHERE a.attrelid = format('%I.%I', CAST(:s AS text), CAST(:v AS text))::regclass "
        "AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"), {"s": schema, "v": view})]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_every_layer_has_its_view_with_the_published_columns(conn: sa.Connection,
                                                             layer) -> None:
    schema = "restricted" if layer.restricted else "pub"
    cols = _columns(conn, schema, layer.name)
    names = [c[0] for c in cols]
    assert cols[0] == (layer.id_column, "bigint")
    assert {"batch_id", "source_fid", "source_attributes", "version_id"} <= set(names)
    assert {c.name for c in layer.columns} <= set(names)
    if layer.geometry:
        assert names[-1] == "geom"
        expected = {"MULTIPOLYGON": "MultiPolygon", "MULTILINESTRING": "MultiLineString",
                    "POINT": "Point"}[layer.geometry]
        assert cols[-1][1] == f"geometry({expected},{SRID})"
    assert ("area_acres" in names) == (layer.geometry == "MULTIPOLYGON")
    assert ("length_ft" in names) == (layer.geometry == "MULTILINESTRING")
    history = [c[0] for c in _columns(conn, schema, f"{layer.name}_history")]
    assert history[:2] == ["version_id", layer.id_column]
    assert {"valid_from", "valid_to", "is_current", "closed_by"} <= set(history)


def test_every_pub_geometry_declares_its_type_and_the_working_srid(conn: sa.Connection) -> None:
    """QGIS, GDAL and tile servers read type and SRID from geometry_columns: a view whose
    geometry is computed must cast it (geometry(MultiPolygon, <srid>))."""
    undeclared = conn.execute(sa.text(
        "SELECT f_table_schema || '.' || f_table_name || ' ' || type || ' ' || srid "
        "FROM geometry_columns WHERE f_table_schema IN ('pub', 'restricted') "
        "AND (srid <> ops.working_srid() OR upper(type) = 'GEOMETRY' "
        "     AND f_table_name NOT IN ('finding')) "  # findings are areas, lines or points
        "ORDER BY 1")).scalars().all()
    assert undeclared == []


def test_labels_and_measures_are_those_worked_out_by_hand(conn: sa.Connection) -> None:
    parcel = conn.execute(sa.text(
        "SELECT area_acres, batch_id IS NOT NULL, source_attributes ->> 'PIN' FROM pub.parcel "
        "WHERE pin_normalized = '013123110001'")).one()
    assert (float(parcel[0]), parcel[1], parcel[2]) == (37.0658, True, "01-31-23-11-0001")
    impact = conn.execute(sa.text("SELECT permit_no, area_acres FROM pub.impact")).one()
    assert (impact[0], float(impact[1])) == ("24-101", 1.2355)
    transfer = conn.execute(sa.text(
        "SELECT from_permit_no, to_permit_no FROM pub.credit_transfer")).one()
    assert tuple(transfer) == ("24-101", "24-102")
    wetlands = dict(conn.execute(sa.text(
        "SELECT source_fid, delineation_no || ' ' || delineation_status FROM pub.wetland")).all())
    assert wetlands == {"W-1": "D-1 approved", "W-2": "D-2 submitted", "W-3": "D-1 approved"}
    ditch = conn.execute(sa.text("SELECT length_ft FROM pub.ditch")).scalar()
    assert ditch == round(900 / 0.3048)  # 900 m = 2953 ft
    bmp = conn.execute(sa.text("SELECT subwatershed_name FROM pub.bmp")).scalar()
    assert bmp == "SW-1"


def test_history_view_gives_the_layer_as_of_a_past_moment(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
            f"VALUES (1, 'A', 'A', {box(0, 0, 100, 100)})")
        before = conn.execute(sa.text("SELECT clock_timestamp()")).scalar()
    with engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE core.parcel SET geom = {box(0, 0, 100, 50)} "
                             "WHERE pin = 'A'")
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT is_current, area_acres FROM pub.parcel_history ORDER BY version_id")).all()
        then = conn.execute(sa.text(
            "SELECT area_acres FROM pub.parcel_history WHERE valid_from <= :t "
            "AND (valid_to IS NULL OR valid_to > :t)"), {"t": before}).scalar()
        now = conn.execute(sa.text("SELECT area_acres FROM pub.parcel")).scalar()
    assert [(r[0], float(r[1])) for r in rows] == [(False, 2.4711), (True, 1.2355)]
    assert (float(then), float(now)) == (2.4711, 1.2355)
