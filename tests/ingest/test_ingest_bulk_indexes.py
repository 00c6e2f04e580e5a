"""A load that at least doubles a layer builds the layer's secondary indexes once, after its
INSERT (sql/064, ops.ingest_indexes_set_aside / ops.ingest_indexes_rebuild): the same indexes,
the same definitions and comments, rebuilt in the ingest's own transaction; a reader of the
layer keeps the row-by-row path; indexes set aside and not rebuilt refuse the commit.
10,000 squares of 20 m on a 25 m grid in EPSG:26915 (400 m2 each).
"""

from __future__ import annotations

import os
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import shapely
import sqlalchemy as sa
from ingest_helpers import X0, Y0, scalar

from etl.ingest import ingest

N = 10_000  # the smallest load that sets indexes aside (sql/064)
INDEXES = ("SELECT c.relname, c.oid::bigint AS oid, pg_get_indexdef(c.oid) AS definition, "
           "obj_description(c.oid, 'pg_class') AS description FROM pg_index i "
           "JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = 'core.parcel'::regclass "
           "ORDER BY c.relname")


def _grid(path: Path, n: int = N) -> Path:
    i = np.arange(n)
    x, y = X0 + (i % 100) * 25.0, Y0 + (i // 100) * 25.0
    gpd.GeoDataFrame({"PIN": [f"B{k:05d}" for k in i]},
                     geometry=shapely.box(x, y, x + 20.0, y + 20.0),
                     crs="EPSG:26915").to_file(path, layer="parcel", driver="GPKG",
                                               engine="pyogrio")
    return path


def _indexes(engine: sa.Engine) -> dict[str, tuple[int, str, str | None]]:
    with engine.connect() as conn:
        return {r.relname: (r.oid, r.definition, r.description)
                for r in conn.execute(sa.text(INDEXES))}


def test_a_first_load_builds_the_secondary_indexes_after_its_insert(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """As the writer role, which may not drop an index itself: the indexes not behind a
    constraint are made again (new oids) with the same definitions and comments, the
    constraint indexes are kept, nothing is left set aside, and the indexes answer."""
    with engine.begin() as conn:
        conn.execute(sa.text("COMMENT ON INDEX core.ix_parcel_geom IS 'kept across the load'"))
    before = _indexes(engine)
    role = f"bulk_tester_{os.getpid()}"
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE ROLE {role} LOGIN PASSWORD 'x' IN ROLE rulem_etl"))
    try:
        url = sa.engine.make_url(db_url).set(username=role, password="x")
        result = ingest(url.render_as_string(hide_password=False), "parcel",
                        _grid(tmp_path / "grid.gpkg"))
        assert result.inserted == N
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"REASSIGN OWNED BY {role} TO CURRENT_USER"))
            conn.execute(sa.text(f"DROP OWNED BY {role}"))
            conn.execute(sa.text(f"DROP ROLE {role}"))
    after = _indexes(engine)
    assert {k: v[1:] for k, v in after.items()} == {k: v[1:] for k, v in before.items()}
    assert after["ix_parcel_geom"][2] == "kept across the load"
    rebuilt = {k for k in after if after[k][0] != before[k][0]}
    assert rebuilt == {"ix_parcel_geom", "ix_parcel_pin", "ix_parcel_pin_display",
                       "ix_parcel_pin_normalized", "ix_parcel_valid_from"}
    assert scalar(engine, "SELECT count(*) FROM ops.ingest_index_set_aside") == 0
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL enable_seqscan = off"))
        assert conn.execute(sa.text(
            "SELECT count(*) FROM core.parcel WHERE geom && ST_MakeEnvelope(:x, :y, :x + 30, "
            ":y + 30, 26915)"), {"x": X0, "y": Y0}).scalar_one() == 4
        assert conn.execute(sa.text(
            "SELECT count(*) FROM core.parcel WHERE pin = 'B00042'")).scalar_one() == 1


def test_a_reader_of_the_layer_keeps_the_row_by_row_path(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """A transaction that has read the layer holds its lock: the ingest neither waits for it
    nor drops an index under it; it inserts row by row."""
    before = _indexes(engine)
    with engine.connect() as reader:
        tx = reader.begin()
        reader.execute(sa.text("SELECT count(*) FROM core.parcel")).scalar_one()
        assert ingest(db_url, "parcel", _grid(tmp_path / "grid.gpkg")).inserted == N
        tx.rollback()
    assert _indexes(engine) == before


def test_indexes_set_aside_and_not_rebuilt_refuse_the_commit(engine: sa.Engine) -> None:
    """The rebuild is not optional: a transaction that set a layer's indexes aside cannot
    commit without it, and the indexes are there after it failed; a small load, or a name
    that is not a layer, keeps them."""
    before = _indexes(engine)
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT ops.ingest_indexes_set_aside('parcel', 9999)")).scalar_one() == 0
        assert conn.execute(sa.text(
            "SELECT ops.ingest_indexes_set_aside('not_a_layer', 50000)")).scalar_one() == 0
        conn.rollback()
    refused = pytest.raises(sa.exc.DBAPIError, match="set aside for a bulk load and not rebuilt")
    with refused, engine.begin() as conn:
        assert conn.execute(sa.text(
            "SELECT ops.ingest_indexes_set_aside('parcel', 10000)")).scalar_one() == 5
        assert conn.execute(sa.text(
            "SELECT count(*) FROM pg_indexes WHERE tablename = 'parcel' "
            "AND schemaname = 'core'")).scalar_one() == 2
    assert _indexes(engine) == before
    with engine.begin() as conn:
        assert conn.execute(sa.text(
            "SELECT ops.ingest_indexes_set_aside('parcel', 10000)")).scalar_one() == 5
        assert conn.execute(sa.text(
            "SELECT ops.ingest_indexes_rebuild('parcel')")).scalar_one() == 5
    assert {k: v[1:] for k, v in _indexes(engine).items()} == \
        {k: v[1:] for k, v in before.items()}
