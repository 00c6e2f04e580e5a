"""What the ingest speed work changed, and the guarantees it must keep: the reader thread
(etl.reading.ahead), the versioning trigger that runs only for rows it would change
(sql/010), the first load that skips the closing pass (sql/061), and the indexes of revision
0011 (a feature's versions and the versions opened since a time still found through an index,
checked with EXPLAIN); and the third round: the PIN's quick normalisation, ids of new keys
taken in the match table, statements with nothing to write not run, reference checks once per
distinct batch. Geometry on a metre grid in EPSG:26915.
"""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pytest
import sqlalchemy as sa
from shapely.geometry import box

from etl.ingest import ingest


def _parcel(engine: sa.Engine, pin: str, x: int, extra: str = "", values: str = "") -> dict:
    with engine.begin() as conn:
        conn.execute(sa.text(
            f"INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom{extra}) "
            f"VALUES (1, :pin, :pin, ST_Multi(ST_MakeEnvelope(:x, 0, :x + 100, 100, "
            f"ops.working_srid())){values})"), {"pin": pin, "x": x})
        return dict(conn.execute(sa.text(
            "SELECT parcel_id, valid_from = now() AS from_now, created_by = current_user AS "
            "by_me, batch_id, closed_by, closed_batch_id, valid_to FROM core.parcel "
            "WHERE pin = :pin"), {"pin": pin}).one()._mapping)


def test_the_versioning_trigger_still_sets_what_a_row_does_not_carry(engine: sa.Engine) -> None:
    # no feature id: registered; valid_from and created_by from their defaults
    row = _parcel(engine, "P-1", 0)
    assert row["parcel_id"] is not None and row["from_now"] and row["by_me"]
    # a caller's own valid_from, created_by and closing columns are overwritten, as before
    row = _parcel(engine, "P-2", 200, ", valid_from, created_by, closed_by",
                  ", '2001-01-01', 'mallory', 'mallory'")
    assert row["from_now"] and row["by_me"] and row["closed_by"] is None
    with engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO ops.batch (plan_area_id, layer) VALUES (1, 'parcel')"))
        batch = conn.execute(sa.text("SELECT max(batch_id) FROM ops.batch")).scalar_one()
        conn.execute(sa.text("SELECT set_config('rulem.batch_id', :b, true)"), {"b": str(batch)})
        conn.execute(sa.text(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) VALUES "
            "(1, 'P-3', 'P-3', ST_Multi(ST_MakeEnvelope(400, 0, 500, 100, "
            "ops.working_srid())))"))
        assert conn.execute(sa.text(
            "SELECT batch_id FROM core.parcel WHERE pin = 'P-3'")).scalar_one() == batch
    # a version cannot be inserted closed
    with pytest.raises(sa.exc.DBAPIError, match="cannot be inserted closed"):
        _parcel(engine, "P-4", 600, ", valid_to", ", now()")


def _write(path: Path, squares: list[tuple[str, int]]) -> Path:
    x0, y0 = 480_000, 4_990_000  # in Minnesota, where EPSG:26915 is used
    gpd.GeoDataFrame({"PIN": [p for p, _ in squares]},
                     geometry=[box(x0 + x, y0, x0 + x + 100, y0 + 100) for _, x in squares],
                     crs="EPSG:26915").to_file(path, driver="GPKG", engine="pyogrio")
    return path


def test_a_first_load_closes_nothing_and_a_second_closes_what_is_gone(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    first = ingest(db_url, "parcel", _write(tmp_path / "a.gpkg", [("A", 0), ("B", 200),
                                                                   ("C", 400)]))
    assert (first.inserted, first.closed) == (3, 0)
    second = ingest(db_url, "parcel", _write(tmp_path / "b.gpkg", [("A", 0), ("C", 400)]))
    assert (second.inserted, second.unchanged, second.closed) == (0, 2, 1)
    # every feature of the layer closed: the next file is a first load again, and closes none
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() WHERE valid_to IS NULL"))
    third = ingest(db_url, "parcel", _write(tmp_path / "c.gpkg", [("B", 200)]))
    assert (third.inserted, third.closed) == (1, 0)
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT pin FROM core.parcel WHERE valid_to IS NULL")).scalars().all() == ["B"]


def _plan(conn: sa.Connection, sql: str) -> str:
    return json.dumps(conn.execute(sa.text("EXPLAIN (FORMAT JSON) " + sql)).scalar_one())


def test_revision_0011_queries_of_versions_still_use_an_index(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
            "SELECT 1, 'P' || i, 'P' || i, ST_Multi(ST_MakeEnvelope(i * 100, 0, i * 100 + 90, "
            "90, ops.working_srid())) FROM generate_series(1, 5000) i"))
    with engine.begin() as conn:
        conn.execute(sa.text("ANALYZE core.parcel"))
        indexes = conn.execute(sa.text(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'core' "
            "AND tablename = 'parcel'")).scalars().all()
        assert "ix_parcel_history" not in indexes and "ix_parcel_valid_from" in indexes
        # a feature's latest version (pub.ledger_entry, sql/180; the ledger's posting, sql/160)
        latest = _plan(conn, "SELECT p.pin FROM core.parcel p WHERE p.plan_area_id = 1 "
                             "AND p.parcel_id = (SELECT min(parcel_id) FROM core.parcel) "
                             "ORDER BY p.valid_from DESC LIMIT 1")
        assert "uq_parcel_version" in latest and "Seq Scan" not in latest
        # the versions opened or closed since a time (incremental checks, sql/285)
        since = _plan(conn, "SELECT * FROM core.parcel WHERE plan_area_id = 1 "
                            "AND (valid_from >= now() + interval '1 hour' "
                            "OR valid_to >= now() + interval '1 hour')")
        assert "ix_parcel_valid_from" in since and "Seq Scan" not in since


# --- session 3: the single-pass changes of sql/061 and sql/010 ---------------------------------

def test_a_pin_is_normalised_alike_by_the_quick_path_and_the_general_rule(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """pin_normalized is the PIN without anything but letters and digits, upper case: a PIN of
    ASCII letters, digits, dashes and spaces takes replace(); any other the regexp. Both give
    what the general rule gives, checked against it in SQL for every stored parcel."""
    pins = ["13-31-23-00-0001", "ab 12-c", "12.34/56", "Ünï-07", "x_y", " 7 ", "A–B", "1\t2",
            "R-3 3", "zz"]
    ingest(db_url, "parcel", _write(tmp_path / "pins.gpkg",
                                    [(p, 200 * i) for i, p in enumerate(pins)]))
    with engine.connect() as conn:
        got = dict(conn.execute(sa.text(
            "SELECT pin, pin_normalized FROM core.parcel WHERE valid_to IS NULL")).all())
        general = dict(conn.execute(sa.text(
            "SELECT pin, upper(regexp_replace(pin, '[^[:alnum:]]', '', 'g')) "
            "FROM core.parcel WHERE valid_to IS NULL")).all())
    assert got == general
    # worked out by hand: the dashes, spaces, dots, slashes, underscore, en dash and tab go
    assert [got[p] for p in ("13-31-23-00-0001", "ab 12-c", "12.34/56", "x_y", "7", "A–B",
                             "1\t2", "R-3 3", "zz")] == [
        "133123000001", "AB12C", "123456", "XY", "7", "AB", "12", "R33", "ZZ"]
    assert got["Ünï-07"] == "ÜNÏ07"


def test_ids_given_to_new_keys_come_from_the_registry_sequence(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """New keys get their ids in the match table (nextval, in key order) and are registered
    with them: every parcel's id is its key's registry row, the ids rise with the keys, and a
    key registered afterwards the ordinary way (the identity default) gets an id of its own."""
    ingest(db_url, "parcel", _write(tmp_path / "a.gpkg", [("C", 0), ("A", 200), ("B", 400)]))
    with engine.begin() as conn:
        stored = conn.execute(sa.text(
            "SELECT f.feature_key, p.parcel_id FROM core.parcel p JOIN core.feature f "
            "ON f.feature_id = p.parcel_id AND f.layer = 'parcel' "
            "AND f.feature_key = p.pin_normalized ORDER BY f.feature_key")).all()
        assert [k for k, _ in stored] == ["A", "B", "C"]
        assert [i for _, i in stored] == sorted(i for _, i in stored)
        later = conn.execute(sa.text(
            "INSERT INTO core.feature (layer, plan_area_id, feature_key) "
            "VALUES ('parcel', 1, 'D') RETURNING feature_id")).scalar_one()
        assert later > max(i for _, i in stored)


def test_a_redelivery_without_changes_writes_nothing_to_the_layer(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """Statements with nothing to write are not run: the same parcels in a new file (another
    file, so not a duplicate) register no key and open no version."""
    ingest(db_url, "parcel", _write(tmp_path / "a.gpkg", [("A", 0), ("B", 200)]))
    with engine.connect() as conn:
        before = conn.execute(sa.text(
            "SELECT (SELECT count(*) FROM core.feature), (SELECT count(*) FROM core.parcel)")).one()
    again = ingest(db_url, "parcel", _write(tmp_path / "b.gpkg", [("B", 200), ("A", 0)]))
    assert (again.inserted, again.changed, again.unchanged, again.closed) == (0, 0, 2, 0)
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT (SELECT count(*) FROM core.feature), "
            "(SELECT count(*) FROM core.parcel)")).one() == before


def test_one_bad_batch_among_many_rows_is_refused_when_each_batch_is_checked_once(
        engine: sa.Engine) -> None:
    """The statement check probes each distinct batch once; a single row naming a batch that
    does not exist among many that name one that does still refuses the statement."""
    with engine.begin() as conn:
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer) VALUES (1, 'parcel') "
            "RETURNING batch_id")).scalar_one()
    values = ", ".join(
        f"(1, 'P{i}', 'P{i}', ST_Multi(ST_MakeEnvelope({200 * i}, 0, {200 * i + 100}, 100, "
        f"26915)), {batch if i != 7 else 777})" for i in range(20))
    with pytest.raises(sa.exc.DBAPIError, match="batch_id = 777, which is not a batch"), \
            engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom, "
                             "batch_id) VALUES " + values))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM core.parcel")).scalar_one() == 0


def _plan_nodes(plan: dict) -> list[dict]:
    return [plan, *(n for child in plan.get("Plans", []) for n in _plan_nodes(child))]


def test_a_statement_s_reference_probe_reads_one_feature_per_row(engine: sa.Engine) -> None:
    """sql/010: a statement of up to 10,000 rows checks each row's own feature id with one
    probe of core.feature's primary key. With the layer and plan area in the probe's WHERE, a
    planner that still sees core.feature as empty (a first load registers its keys in the same
    transaction) probed uq_feature_key by layer and plan area and read every key of the layer
    for each row: 10.4 s for a first load of 10,000 parcels."""
    n = 3000
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.feature (layer, plan_area_id, feature_key) "
            "SELECT 'parcel', 1, 'K' || i FROM generate_series(1, :n) i"), {"n": n})
        conn.execute(sa.text(
            "CREATE TEMP TABLE new_rows AS SELECT * FROM core.parcel WITH NO DATA"))
        conn.execute(sa.text(
            "INSERT INTO new_rows (version_id, parcel_id, plan_area_id, pin, pin_normalized) "
            "SELECT f.feature_id, f.feature_id, 1, f.feature_key, f.feature_key "
            "FROM core.feature f WHERE f.layer = 'parcel'"))
        check = conn.execute(sa.text(
            "SELECT core.reference_check_sql('parcel', 'new_rows', true, true)")).scalar_one()
        (plan,) = conn.execute(sa.text(
            "EXPLAIN (ANALYZE, FORMAT JSON) " + check)).scalar_one()
        conn.rollback()
    nodes = _plan_nodes(plan["Plan"])
    probes = [x for x in nodes if x.get("Relation Name") == "feature"]
    assert probes and {x.get("Index Name") for x in probes} == {"pk_feature"}
    # every row of new_rows found its feature, and no probe read more than its own key
    assert sum(x["Actual Rows"] * x["Actual Loops"] for x in probes) == n
    assert all(x.get("Rows Removed by Filter", 0) == 0 for x in probes)


def test_a_statement_s_batch_is_checked_once_not_once_per_row(engine: sa.Engine) -> None:
    """sql/010: the batch an INSERT's 2,000 versions name is tested once (is it this
    transaction's?). The planner pushed that test below the grouping by batch into the scan of
    the rows, where it ran once per row: 0.43 s of a first load of 100,000 parcels."""
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL track_functions = 'all'"))
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer) VALUES (1, 'parcel') "
            "RETURNING batch_id")).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom, batch_id) "
            "SELECT 1, 'P' || i, 'P' || i, ST_Multi(ST_MakeEnvelope(i * 100, 0, i * 100 + 90, "
            "90, ops.working_srid())), :b FROM generate_series(1, 2000) i"), {"b": batch})
        calls = conn.execute(sa.text(
            "SELECT calls FROM pg_stat_xact_user_functions "
            "WHERE schemaname = 'core' AND funcname = 'batch_of_this_transaction'")).scalar()
        assert conn.execute(sa.text("SELECT count(*) FROM core.parcel WHERE batch_id = :b"),
                            {"b": batch}).scalar_one() == 2000
    assert calls == 1


def test_a_re_delivery_s_changed_rows_probe_while_few_against_what_was_set_aside(
        engine: sa.Engine) -> None:
    """sql/061 ops.ingest_few: up to 10,000 rows, or a tenth of the rows a re-delivery set
    aside (the batch's unchanged count, written when they were set aside), look the layer up
    one probe each; a first load (nothing set aside) of more joins. At state size a
    re-delivery's 12,000 changed rows joined the whole layer (2.95 s) where probes take
    0.1 s."""
    with engine.begin() as conn:
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, file_sha256, file_size) "
            "SELECT min(plan_area_id), 'parcel', 'p.gpkg', repeat('0', 64), 1 "
            "FROM core.plan_area RETURNING batch_id")).scalar_one()

        def few(rows: int) -> bool:
            return conn.execute(sa.text("SELECT ops.ingest_few(:b, :n)"),
                                {"b": batch, "n": rows}).scalar_one()

        assert few(10_000) and not few(10_001)  # nothing set aside
        conn.execute(sa.text("UPDATE ops.batch SET unchanged_count = 200000 "
                             "WHERE batch_id = :b"), {"b": batch})
        assert few(20_000) and not few(20_001)  # a tenth of the 200,000
        assert not conn.execute(sa.text("SELECT ops.ingest_few(:b, 10001)"),
                                {"b": batch + 1000}).scalar_one()  # no such batch
        conn.rollback()
