"""Vector tiles: a (z, x, y) -> MVT function for every map layer, that pg_tileserv or Martin can
serve as it is; tiles hold the features where they are, nothing far away, the geometry in the
right place, and the spatial index of the working CRS does the filtering."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa
from publish_fixture import EXTENT, SRID, published_url  # noqa: F401  (fixture)

HALF = 20037508.342789244  # half the Web Mercator world, metres


@pytest.fixture
def conn(published_url: str):  # noqa: F811
    eng = sa.create_engine(published_url)
    with eng.connect() as c:
        yield c
    eng.dispose()


def _map_layers(conn: sa.Connection) -> list[tuple[str, str]]:
    return [tuple(r) for r in conn.execute(sa.text(
        "SELECT g.f_table_schema, g.f_table_name FROM geometry_columns g "
        "JOIN pg_class c ON c.relname = g.f_table_name "
        "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = g.f_table_schema "
        "WHERE g.f_table_schema IN ('pub', 'restricted') AND c.relkind IN ('v', 'm') "
        "AND NOT (g.f_table_name LIKE '%\\_history' AND to_regclass(format('%I.%I', "
        "g.f_table_schema, left(g.f_table_name, -8))) IS NOT NULL) ORDER BY 1, 2")).all()]


def _tile_of(conn: sa.Connection, x: float, y: float, z: int, srid: int = SRID) -> tuple[int, int]:
    """The XYZ tile holding a point of the working CRS."""
    size = 2 * HALF / 2 ** z
    mx, my = conn.execute(sa.text(
        "SELECT ST_X(p), ST_Y(p) FROM ST_Transform(ST_SetSRID(ST_MakePoint(:x, :y), :s), 3857) p"
    ), {"x": x, "y": y, "s": srid}).one()
    return int((mx + HALF) // size), int((HALF - my) // size)


def _decode(tile: bytes, z: int, x: int, y: int, path: Path) -> str:
    """GDAL's MVT driver's reading of one tile (layers, features, extent in EPSG:3857)."""
    path.write_bytes(tile)
    proc = subprocess.run(["ogrinfo", "-ro", "-al", "-oo", f"X={x}", "-oo", f"Y={y}",
                           "-oo", f"Z={z}", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_every_map_layer_has_a_tile_function_a_tile_server_can_serve(conn: sa.Connection) -> None:
    layers = _map_layers(conn)
    assert {("pub", "parcel"), ("pub", "ditch"), ("restricted", "species_record")} <= set(layers)
    functions = {(r.nspname, r.proname): r for r in conn.execute(sa.text(
        "SELECT n.nspname, p.proname, pg_get_function_identity_arguments(p.oid) AS args, "
        "pg_get_function_result(p.oid) AS result, p.provolatile, p.proparallel "
        "FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname IN ('pub', 'restricted') AND p.proname LIKE '%\\_tile'"))}
    for schema, view in layers:
        f = functions[(schema, f"{view}_tile")]
        assert (f.args, f.result) == ("z integer, x integer, y integer", "bytea"), view
        assert f.provolatile in ("s", "i") and f.proparallel == "s", view
    assert len(functions) == len(layers)  # and no tile function without its layer


def test_a_tile_over_each_layer_holds_its_features_and_one_far_away_is_empty(
        conn: sa.Connection, tmp_path: Path) -> None:
    empty_layers = []
    for schema, view in _map_layers(conn):
        where = conn.execute(sa.text(
            f'SELECT ST_X(p), ST_Y(p) FROM (SELECT ST_PointOnSurface(geom) p '
            f'FROM {schema}."{view}" WHERE geom IS NOT NULL LIMIT 1) x')).first()
        far = conn.execute(sa.text(f"SELECT {schema}.{view}_tile(16, 32768, 32768)")).scalar()
        world = conn.execute(sa.text(f"SELECT {schema}.{view}_tile(0, 0, 0)")).scalar()
        assert far == b"" and world is not None, view
        if where is None:
            empty_layers.append(view)
            continue
        x, y = _tile_of(conn, where[0], where[1], 16)
        tile = conn.execute(sa.text(f"SELECT {schema}.{view}_tile(16, :x, :y)"),
                            {"x": x, "y": y}).scalar()
        assert len(tile) > 0, view
        decoded = _decode(tile, 16, x, y, tmp_path / f"{view}.mvt")
        assert f"Layer name: {view}\n" in decoded, view
        assert int(re.search(r"Feature Count: (\d+)", decoded).group(1)) >= 1, view
    assert set(empty_layers) <= {"finding", "buffer_transect", "stormwater_volume",
                                 "permit_compliance"}  # checks not run on the fixture


@pytest.mark.skipif(shutil.which("ogrinfo") is None, reason="GDAL not installed")
def test_tile_geometry_lands_where_the_plan_area_is(conn: sa.Connection, tmp_path: Path) -> None:
    xmin, ymin, xmax, ymax = EXTENT
    z = 14
    while z > 8 and _tile_of(conn, xmin, ymin, z) != _tile_of(conn, xmax, ymax, z):
        z -= 1
    x, y = _tile_of(conn, xmin, ymin, z)
    tile = conn.execute(sa.text("SELECT pub.cwmp_area_tile(:z, :x, :y)"),
                        {"z": z, "x": x, "y": y}).scalar()
    decoded = _decode(tile, z, x, y, tmp_path / "cwmp.mvt")
    got = [float(v) for v in re.search(
        r"Extent: \(([-\d.]+), ([-\d.]+)\) - \(([-\d.]+), ([-\d.]+)\)", decoded).groups()]
    want = conn.execute(sa.text(
        "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM ("
        "SELECT ST_Transform(ST_MakeEnvelope(:a, :b, :c, :d, :s), 3857) AS e) t"),
        {"a": xmin, "b": ymin, "c": xmax, "d": ymax, "s": SRID}).one()
    pixel = 2 * HALF / 2 ** z / 4096
    # The UTM rectangle is a slightly turned quadrilateral in Web Mercator; its bounding box
    # and the tile's agree to within a pixel of the tile grid.
    assert all(abs(g - w) <= 1.5 * pixel for g, w in zip(got, want, strict=True)), (got, want)
    assert "name (String) = ACD 53-62 CWMP" in decoded


def test_the_tile_filter_uses_the_spatial_index_of_the_working_crs(published_url: str) -> None:  # noqa: F811
    eng = sa.create_engine(published_url, isolation_level="AUTOCOMMIT")
    count = sa.text("SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
                    "WHERE schemaname = 'core' AND indexrelname = 'ix_parcel_geom'")
    try:
        with eng.connect() as conn:
            x, y = _tile_of(conn, EXTENT[0] + 10, EXTENT[1] + 10, 16)
            conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
            before = conn.execute(count).scalar()
            # With sequential scans priced out, only an index-capable filter reads the parcels
            # through ix_parcel_geom; a filter on ST_Transform(geom, 3857) could not.
            conn.execute(sa.text("SET enable_seqscan = off"))
            tile = conn.execute(sa.text("SELECT pub.parcel_tile(16, :x, :y)"),
                                {"x": x, "y": y}).scalar()
            conn.execute(sa.text("SELECT pg_stat_force_next_flush()"))
        with eng.connect() as conn:
            conn.execute(sa.text("SELECT pg_stat_clear_snapshot()"))
            after = conn.execute(count).scalar()
    finally:
        eng.dispose()
    assert len(tile) > 0
    assert after > before
