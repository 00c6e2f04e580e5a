"""A re-delivery costs what changed (docs/ingest.md): the reader sets aside the rows delivered as
before (etl.redelivery), the reference checks of sql/010 probe each row of a small statement (or
of an UPDATE of up to a tenth of its layer) by index and join for a large one, and sql/063
closes and re-hashes only the file's changed rows and the features it no longer holds. Both
ways must refuse the same bad references, the hashes a re-delivery leaves must let the next one
set every row aside, and a row set aside twice is still a repeated key. 100 m squares in
EPSG:26915 (2.4711 acres each).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, scalar, square, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused

BIG = 10_001  # one row past the statements the checks probe row by row (sql/010)


def _parcels(path: Path, spec: dict[str, object], owner: dict[str, str] | None = None) -> Path:
    return write_gpkg(path, [{"PIN": pin, "ZONING": (owner or {}).get(pin, f"owner of {pin}"),
                              "geometry": square(g) if isinstance(g, int) else g}
                             for pin, g in spec.items()])


def _bulk_parcels(n: int, bad: str) -> str:
    """n small parcels registered and inserted in one statement each; the last one's
    `bad` column (parcel_id or batch_id) names nothing."""
    return (
        f"WITH k AS (SELECT i, nextval(pg_get_serial_sequence('core.feature', 'feature_id')) "
        f"AS id FROM generate_series(1, {n}) i), "
        "reg AS (INSERT INTO core.feature (feature_id, layer, plan_area_id, feature_key) "
        "OVERRIDING SYSTEM VALUE SELECT id, 'parcel', 1, 'B' || i FROM k RETURNING 1) "
        "INSERT INTO core.parcel (parcel_id, plan_area_id, pin, pin_normalized, geom, batch_id) "
        f"SELECT CASE WHEN i = {n} AND '{bad}' = 'parcel_id' THEN 987654321 ELSE id END, 1, "
        "'B' || i, 'B' || i, ST_Multi(ST_MakeEnvelope(490000 + i * 20, 5002000, "
        "490010 + i * 20, 5002010, 26915)), "
        f"CASE WHEN i = {n} AND '{bad}' = 'batch_id' THEN 777 END FROM k")


@pytest.mark.parametrize("n", [2, BIG])
@pytest.mark.parametrize("bad,message", [
    ("parcel_id", "parcel_id = 987654321, which is not a parcel of this plan area"),
    ("batch_id", "batch_id = 777, which is not a batch")])
def test_an_insert_with_a_bad_reference_is_refused_small_or_large(
        engine: sa.Engine, n: int, bad: str, message: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match=message), engine.begin() as conn:
        conn.execute(sa.text(_bulk_parcels(n, bad)))
    assert scalar(engine, "SELECT count(*) FROM core.parcel") == 0


@pytest.mark.parametrize("n", [2, BIG])
def test_an_update_with_a_forged_batch_is_refused_small_or_large(
        engine: sa.Engine, n: int) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(_bulk_parcels(n, "none")))
    # every parcel changed in one statement, the new versions carrying a batch that is none
    with pytest.raises(sa.exc.DBAPIError, match="batch_id = 779, which is not a batch"), \
            engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET pin = pin || 'x', batch_id = 779 "
                             "WHERE valid_to IS NULL"))
    assert rows(engine, "SELECT count(*), count(*) FILTER (WHERE pin LIKE '%x') "
                        "FROM core.parcel")[0] == (n, 0)


def test_each_kind_of_change_and_the_hashes_it_leaves(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {p: i for i, p in
                                                              enumerate("ABCDEF")}))
    # E edited in the database in between: its hash no longer names its current version
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 1, 0)) "
                             "WHERE pin = 'E' AND valid_to IS NULL"))
    before = {r.pin: r.version_id for r in rows(
        engine, "SELECT pin, version_id FROM core.parcel WHERE valid_to IS NULL")}
    # A: attribute only; B: geometry only; C: gone; D, F: as before; E: as first delivered
    # (restores the square the edit moved); G: new
    v2 = {"A": 0, "B": square(1, dx=5), "D": 3, "E": 4, "F": 5, "G": 6}
    second = _parcels(tmp_path / "v2.gpkg", v2, owner={"A": "new owner"})
    result = ingest(db_url, "parcel", second)
    assert (result.inserted, result.changed, result.closed, result.unchanged) == (1, 2, 1, 3)
    after = {r.pin: r.version_id for r in rows(
        engine, "SELECT pin, version_id FROM core.parcel WHERE valid_to IS NULL")}
    assert set(after) == set(v2)
    assert [p for p in v2 if p in before and after[p] == before[p]] == ["A", "D", "F"]
    assert scalar(engine, "SELECT ST_XMin(geom) FROM core.parcel WHERE pin = 'E' "
                          "AND valid_to IS NULL") == scalar(
        engine, "SELECT ST_XMin(geom) FROM core.parcel WHERE pin = 'D' AND valid_to IS NULL"
    ) + 110
    # one hash per current parcel, of its current version, none of C; A's is the new row's
    assert rows(engine, "SELECT count(*), count(*) FILTER (WHERE p.valid_to IS NULL) "
                        "FROM ops.ingest_row_hash h JOIN core.parcel p USING (version_id)")[0] \
        == (6, 6)
    # so the same features again, in another order (another file), are set aside whole
    again = ingest(db_url, "parcel", _parcels(tmp_path / "v3.gpkg", dict(reversed(v2.items())),
                                              owner={"A": "new owner"}))
    assert again.status == "loaded"
    assert (again.inserted, again.changed, again.closed, again.unchanged) == (0, 0, 0, 6)
    assert scalar(engine, "SELECT unchanged_count FROM ops.batch WHERE batch_id = :b",
                  b=again.batch_id) == 6


def test_a_file_that_only_lost_a_feature_stages_nothing_and_closes_it(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1, "C": 2}))
    before = {r.pin: r.version_id for r in rows(
        engine, "SELECT pin, version_id FROM core.parcel WHERE valid_to IS NULL")}
    # every row of the file set aside by the reader: nothing is staged, validated or merged
    result = ingest(db_url, "parcel", _parcels(tmp_path / "v2.gpkg", {"A": 0, "C": 2}))
    assert (result.inserted, result.changed, result.closed, result.unchanged) == (0, 0, 1, 2)
    assert {r.pin: r.version_id for r in rows(
        engine, "SELECT pin, version_id FROM core.parcel WHERE valid_to IS NULL")} == \
        {"A": before["A"], "C": before["C"]}
    assert scalar(engine, "SELECT count(*) FROM ops.ingest_row_hash") == 2


def test_a_row_delivered_twice_as_before_is_refused_and_changes_nothing(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1}))
    before = fingerprint(engine)
    # A twice, exactly as first delivered: the reader sets aside the first copy only
    twice = write_gpkg(tmp_path / "v2.gpkg", [
        {"PIN": pin, "ZONING": f"owner of {pin}", "geometry": square(i)}
        for pin, i in (("A", 0), ("B", 1), ("A", 0))])
    with pytest.raises(IngestRefused) as refused:
        ingest(db_url, "parcel", twice)
    assert any("'A'" in line and "more than once" in line
               for line in refused.value.lines())
    assert fingerprint(engine) == before


def test_a_changed_feature_keeps_the_columns_the_file_no_longer_delivers(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """A changed feature's new version (closed and opened by sql/061 in one statement each)
    is what the versioning trigger's UPDATE made: the file's content, the closed version's
    values of the columns the file does not deliver (mukey, musym), the new batch, and the old
    version closed by this batch at the new version's start; the unchanged feature keeps its
    version."""
    first = write_gpkg(tmp_path / "soil1.gpkg", [
        {"feature_key": k, "hydrologic_soil_group": "A", "high_groundwater": False,
         "contaminated": False, "mukey": f"MU-{k}", "musym": f"S-{k}", "geometry": square(i)}
        for i, k in enumerate(("K1", "K2"))])
    b1 = ingest(db_url, "soil", first).batch_id
    second = write_gpkg(tmp_path / "soil2.gpkg", [
        {"feature_key": "K1", "hydrologic_soil_group": "B", "high_groundwater": False,
         "contaminated": False, "geometry": square(0, dx=5)},
        {"feature_key": "K2", "hydrologic_soil_group": "A", "high_groundwater": False,
         "contaminated": False, "geometry": square(1)}])
    r2 = ingest(db_url, "soil", second)
    assert (r2.changed, r2.unchanged, r2.inserted, r2.closed) == (1, 1, 0, 0)
    got = rows(engine, "SELECT source_fid IS NOT NULL AS fid, hydrologic_soil_group AS hsg, "
                       "mukey, musym, batch_id, closed_batch_id, created_by = current_user AS me, "
                       "valid_to IS NULL AS current, round(ST_XMin(geom)) - :x AS dx "
                       "FROM core.soil s JOIN core.feature f ON f.feature_id = s.soil_id "
                       "WHERE f.feature_key = 'K1' ORDER BY version_id", x=square(0).bounds[0])
    assert [tuple(r) for r in got] == [
        (True, "A", "MU-K1", "S-K1", b1, r2.batch_id, True, False, 0),
        (True, "B", "MU-K1", "S-K1", r2.batch_id, None, True, True, 5)]
    assert scalar(engine, "SELECT count(*) FROM core.soil a JOIN core.soil b "
                          "ON a.soil_id = b.soil_id AND a.valid_to = b.valid_from") == 1
    assert scalar(engine, "SELECT count(*) FROM core.soil s JOIN core.feature f "
                          "ON f.feature_id = s.soil_id WHERE f.feature_key = 'K2'") == 1



def _feature_probes(conn: sa.Connection) -> int:
    """This transaction's index scans of core.feature so far."""
    return conn.execute(sa.text("SELECT idx_scan FROM pg_stat_xact_user_tables "
                                "WHERE relid = 'core.feature'::regclass")).scalar_one()


def test_an_update_of_a_tenth_of_a_large_layer_probes_and_refuses_alike(
        engine: sa.Engine) -> None:
    """An UPDATE of more than 10,000 rows but at most a tenth of its layer (by the planner's
    estimate: a state's parcels, claimed here in pg_class) looks its references up row by
    row, as a small one does (sql/010), and refuses a forged batch the same way."""
    with engine.begin() as conn:
        conn.execute(sa.text(_bulk_parcels(BIG, "none")))
        conn.execute(sa.text("UPDATE pg_class SET reltuples = 1000000 "
                             "WHERE oid = 'core.parcel'::regclass"))
    with engine.connect() as conn, conn.begin():
        before = _feature_probes(conn)
        with pytest.raises(sa.exc.DBAPIError, match="batch_id = 779, which is not a batch"), \
                conn.begin_nested():
            conn.execute(sa.text("UPDATE core.parcel SET pin = pin || 'x', batch_id = 779 "
                                 "WHERE valid_to IS NULL"))
        after = _feature_probes(conn)
    # each changed feature's id probed in core.feature's key (the joined check: one scan)
    assert after - before >= BIG
    assert rows(engine, "SELECT count(*), count(*) FILTER (WHERE pin LIKE '%x') "
                        "FROM core.parcel")[0] == (BIG, 0)
