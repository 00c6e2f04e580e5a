"""A re-delivered layer: rows delivered exactly as before are set aside before validation
(sql/063, ops.ingest_row_hash), and the result is the one a full comparison gives: unchanged
features keep their version and id, changed ones get a new version, removed ones are retired
(closed, never deleted), new ones are added. 100 m squares in EPSG:26915 (2.4711 acres each).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import shapely
import shapely.affinity
import sqlalchemy as sa
from ingest_helpers import X0, Y0, fingerprint, rows, scalar, square, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused
from etl.redelivery import Prior, PriorAhead


def _parcels(path: Path, spec: dict[str, object], owner: str = "owner of") -> Path:
    return write_gpkg(path, [{"PIN": pin, "ZONING": f"{owner} {pin}",
                              "geometry": square(g) if isinstance(g, int) else g}
                             for pin, g in spec.items()])


def _current(engine: sa.Engine) -> dict[str, tuple[int, int]]:
    """PIN -> (parcel_id, version_id) of the current parcels."""
    return {r.pin: (r.parcel_id, r.version_id) for r in rows(
        engine, "SELECT pin, parcel_id, version_id FROM core.parcel WHERE valid_to IS NULL")}


def test_a_redelivery_sets_aside_what_is_unchanged_and_versions_the_rest(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {f"P{i}": i for i in range(6)}))
    before = _current(engine)
    # one hash per current parcel, each naming its current version
    assert scalar(engine, "SELECT count(*) FROM ops.ingest_row_hash h JOIN core.parcel p "
                          "ON p.version_id = h.version_id AND p.valid_to IS NULL "
                          "WHERE h.layer = 'parcel'") == 6
    # P0, P1, P4, P5 as before; P2 moved 5 m; P3 gone; P6 new
    second = _parcels(tmp_path / "v2.gpkg", {"P0": 0, "P1": 1, "P2": square(2, dx=5),
                                             "P4": 4, "P5": 5, "P6": 6})
    result = ingest(db_url, "parcel", second)
    assert (result.inserted, result.changed, result.closed, result.unchanged) == (1, 1, 1, 4)
    assert scalar(engine, "SELECT message FROM ops.batch_note WHERE batch_id = :b "
                          "AND message LIKE '%set aside%'", b=result.batch_id).startswith(
        "4 features delivered exactly as before")
    after = _current(engine)
    assert set(after) == {"P0", "P1", "P2", "P4", "P5", "P6"}
    for pin in ("P0", "P1", "P4", "P5"):  # same version, same id
        assert after[pin] == before[pin]
    assert after["P2"][0] == before["P2"][0] and after["P2"][1] != before["P2"][1]
    # P3 retired: its version closed by this batch, still in the table
    closed = rows(engine, "SELECT valid_to IS NOT NULL AS closed, closed_batch_id FROM "
                          "core.parcel WHERE pin = 'P3'")
    assert [(r.closed, r.closed_batch_id) for r in closed] == [(True, result.batch_id)]
    assert scalar(engine, "SELECT count(*) FROM core.parcel") == 6 + 1 + 1
    assert scalar(engine, "SELECT count(*) FROM core.parcel WHERE valid_to IS NULL") == 6
    batch = rows(engine, "SELECT inserted_count, changed_count, closed_count, unchanged_count "
                         "FROM ops.batch WHERE batch_id = :b", b=result.batch_id)[0]
    assert tuple(batch) == (1, 1, 1, 4)
    # every current parcel has one hash, of its current version; none of P3
    assert rows(engine, "SELECT count(*), count(*) FILTER (WHERE p.valid_to IS NULL) "
                        "FROM ops.ingest_row_hash h JOIN core.parcel p USING (version_id) "
                        "WHERE h.layer = 'parcel'")[0] == (6, 6)
    area = scalar(engine, "SELECT area_acres FROM pub.parcel WHERE pin = 'P2'")
    assert float(area) == 2.4711
    assert scalar(engine, "SELECT count(*) FROM information_schema.tables "
                          "WHERE table_schema = 'staging'") == 0


def test_an_attribute_change_and_an_edit_are_not_taken_for_unchanged(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1}))
    before = _current(engine)
    # A's ZONING changed (a field the parcel layer does not keep): its delivered row differs,
    # so it is prepared and compared; its columns did not change, so it keeps its version
    # (source_attributes follow the version)
    # B edited in the database since: its hash names a version that is no longer current,
    # so the file's B is compared and restores the delivered square
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 1, 0)) "
                             "WHERE pin = 'B' AND valid_to IS NULL"))
    edited = _current(engine)["B"]
    again = ingest(db_url, "parcel", write_gpkg(tmp_path / "v2.gpkg", [
        {"PIN": "A", "ZONING": "someone else", "geometry": square(0)},
        {"PIN": "B", "ZONING": "owner of B", "geometry": square(1)}]))
    assert (again.inserted, again.changed, again.closed, again.unchanged) == (0, 1, 0, 1)
    after = _current(engine)
    assert after["A"] == before["A"]
    assert after["B"][0] == before["B"][0] and after["B"][1] not in (edited[1], before["B"][1])
    assert scalar(engine, "SELECT ST_XMin(geom) FROM core.parcel WHERE pin = 'B' "
                          "AND valid_to IS NULL") == X0 + 110.0


def test_a_feature_edited_since_and_no_longer_delivered_is_retired(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """The features whose rows were not set aside reach the database as unseen; a current
    feature whose hash names an older version (edited since) is among them, so a file that
    no longer holds it retires it, while the rows set aside keep their versions."""
    first = ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1, "C": 2}))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 1, 0)) "
                             "WHERE pin = 'C' AND valid_to IS NULL"))
    before = _current(engine)
    again = ingest(db_url, "parcel", _parcels(tmp_path / "v2.gpkg", {"A": 0, "B": 1}))
    assert (again.inserted, again.changed, again.closed, again.unchanged) == (0, 0, 1, 2)
    after = _current(engine)
    assert after == {"A": before["A"], "B": before["B"]}
    closed = rows(engine, "SELECT batch_id, closed_batch_id FROM core.parcel WHERE pin = 'C' "
                          "ORDER BY version_id")
    # loaded by the first batch, closed by the edit; the edit's version closed by the second
    assert [tuple(r) for r in closed] == [(first.batch_id, None), (None, again.batch_id)]
    assert scalar(engine, "SELECT unchanged_count FROM ops.batch WHERE batch_id = :b",
                  b=again.batch_id) == 2
    assert scalar(engine, "SELECT count(*) FROM ops.ingest_row_hash h JOIN core.parcel p "
                          "USING (version_id) WHERE p.pin = 'C'") == 0


def test_digests_fetched_ahead_are_used_only_while_the_layer_has_no_newer_batch(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """etl.redelivery.PriorAhead reads the prior rows while the file is checked, before the
    ingest holds the layer's lock: an ingest of the layer that commits in between makes the
    ingest fetch them again; otherwise what was read ahead is used."""
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1}))
    plan_area_id = scalar(engine, "SELECT plan_area_id FROM core.plan_area")

    def digests(prior: Prior) -> set[bytes]:
        return {bytes(row) for row in prior.digests}

    quiet = PriorAhead(engine, "parcel", "parcel", None)
    with engine.begin() as conn:
        taken = quiet.take(conn, "parcel", plan_area_id)
        assert taken is quiet._prior and len(taken) == 2  # read ahead, used
    quiet.close()
    stale = PriorAhead(engine, "parcel", "parcel", None)
    stale._thread.join()
    ingest(db_url, "parcel", _parcels(tmp_path / "v2.gpkg", {"A": 0, "B": 3, "C": 2}))
    with engine.begin() as conn:
        taken = stale.take(conn, "parcel", plan_area_id)
        fresh = Prior.fetch(conn, "parcel", plan_area_id)
    assert taken is not stale._prior and len(taken) == 3
    assert digests(taken) == digests(fresh) != digests(stale._prior)
    stale.close()


def test_a_closed_version_takes_its_hash_with_it(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """A hash counts only while the version it names is current: any UPDATE that closes a
    version (an edit, a retirement) deletes its feature's hash, so the prior rows are the
    stored hashes alone while every current feature has one, and the features without one
    are found (by the join) once some have none."""
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1, "C": 2}))
    plan_area_id = scalar(engine, "SELECT plan_area_id FROM core.plan_area")
    ids = {pin: ids[0] for pin, ids in _current(engine).items()}

    def prior() -> tuple[set[int], list[int]]:
        with engine.begin() as conn:
            found = Prior.fetch(conn, "parcel", plan_area_id)
        return set(found.feature_ids.tolist()), sorted(found.unhashed.tolist())

    def hashed() -> set[int]:
        return {r.feature_id for r in rows(engine, "SELECT feature_id FROM ops.ingest_row_hash "
                                                   "WHERE layer = 'parcel'")}

    assert prior() == ({ids["A"], ids["B"], ids["C"]}, []) and hashed() == set(ids.values())
    with engine.begin() as conn:  # B edited (a new version), C retired
        conn.execute(sa.text("UPDATE core.parcel SET owner_name = 'someone' "
                             "WHERE pin = 'B' AND valid_to IS NULL"))
        conn.execute(sa.text("UPDATE core.parcel SET valid_to = now() "
                             "WHERE pin = 'C' AND valid_to IS NULL"))
    assert hashed() == {ids["A"]}
    assert prior() == ({ids["A"]}, [ids["B"]])
    # an UPDATE that closes nothing keeps the hashes (B's new version is current)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE core.parcel SET owner_name = owner_name "
                             "WHERE valid_to IS NULL"))
    assert hashed() == {ids["A"]}


def test_a_changed_copy_of_an_unchanged_key_is_refused_and_changes_nothing(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1}))
    before = fingerprint(engine)
    # A as before (set aside) and a second A elsewhere: the key is in the file twice
    twice = write_gpkg(tmp_path / "v2.gpkg", [
        {"PIN": "A", "ZONING": "owner of A", "geometry": square(0)},
        {"PIN": "B", "ZONING": "owner of B", "geometry": square(1)},
        {"PIN": "A", "ZONING": "owner of A", "geometry": square(5)}])
    with pytest.raises(IngestRefused) as refused:
        ingest(db_url, "parcel", twice)
    lines = refused.value.lines()
    assert any("'A'" in line and "more than once" in line for line in lines)
    assert all("\n" not in line for line in lines)
    assert fingerprint(engine) == before


def test_a_bad_copy_of_an_unchanged_key_is_refused_too_when_bad_rows_are_skipped(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """A skipped row is not merged, but its key is still the file's: a second A without a
    geometry beside A delivered as before is a duplicated key, not a row to skip."""
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1}))
    before = fingerprint(engine)
    twice = write_gpkg(tmp_path / "v2.gpkg", [
        {"PIN": "A", "ZONING": "owner of A", "geometry": square(0)},
        {"PIN": "B", "ZONING": "owner of B", "geometry": square(1)},
        {"PIN": "A", "ZONING": "owner of A", "geometry": None}])
    with pytest.raises(IngestRefused) as refused:
        ingest(db_url, "parcel", twice, skip_bad_features=True)
    assert any("'A'" in line and "more than once" in line for line in refused.value.lines())
    assert fingerprint(engine) == before


def test_the_geometries_checked_against_the_limits_are_those_staged(
        db_url: str, engine: sa.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row set aside (delivered exactly as the row behind a current version) is not parsed
    for the limits' geometry checks (etl.reading.batches): it was checked when it was loaded
    and never reaches the database. Its attributes are still checked, and a changed row's
    geometry is checked as in a first load."""
    ring = [(X0 + 50 + 40 * np.cos(t), Y0 + 1000 + 40 * np.sin(t))
            for t in np.linspace(0, 2 * np.pi, 300, endpoint=False)]
    round_parcel = shapely.Polygon(ring)  # 301 vertices, closing one included
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"R": round_parcel, "A": 0,
                                                             "B": 1}))
    monkeypatch.setenv("RULEM_MAX_VERTICES", "100")
    # R as loaded (set aside, so its 301 vertices are not counted again), A moved 5 m
    result = ingest(db_url, "parcel", _parcels(tmp_path / "v2.gpkg", {
        "R": round_parcel, "A": square(0, dx=5), "B": 1}))
    assert (result.changed, result.unchanged) == (1, 2)
    before = fingerprint(engine)

    def refused(name: str, r: shapely.Polygon) -> list[str]:
        """The file's refusal (R as given, A and B as loaded), the database as it was."""
        with pytest.raises(IngestRefused) as err:
            ingest(db_url, "parcel", _parcels(tmp_path / name, {
                "R": r, "A": square(0, dx=5), "B": 1}))
        assert fingerprint(engine) == before
        return err.value.lines()

    # R moved: staged, so its geometry is checked and the file refused, nothing changed
    moved = shapely.affinity.translate(round_parcel, xoff=3)
    assert any("has 301 vertices, more than the limit of 100" in line
               for line in refused("v3.gpkg", moved))
    # an attribute over its limit is refused in a row set aside too
    monkeypatch.delenv("RULEM_MAX_VERTICES")
    monkeypatch.setenv("RULEM_MAX_ATTRIBUTE_CHARS", "9")
    assert any("ZONING: a value of 10 characters, more than the limit of 9" in line
               for line in refused("v4.gpkg", round_parcel))


def test_a_new_plan_boundary_makes_every_row_checked_again(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """The boundary is part of what a row's outcome depends on: after it changes, the same
    rows are validated again (the parcel outside it gets its warning) though none changed."""
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1, "C": 30}))
    ingest(db_url, "cwmp_area", write_gpkg(tmp_path / "plan.gpkg", [
        {"name": "plan", "geometry": square(0, size=1_000)}]))
    before = _current(engine)
    again = ingest(db_url, "parcel", _parcels(tmp_path / "v2.gpkg", {"A": 0, "B": 1, "C": 30}))
    assert (again.inserted, again.changed, again.closed, again.unchanged) == (0, 0, 0, 3)
    assert scalar(engine, "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b "
                          "AND message LIKE '%set aside%'", b=again.batch_id) == 0
    assert _current(engine) == before
    warned = rows(engine, "SELECT detail ->> 'key' AS key FROM ops.batch_note "
                          "WHERE batch_id = :b AND kind = 'warning' AND field = 'geometry'",
                  b=again.batch_id)
    assert [r.key for r in warned] == ["C"]


def test_digests_of_another_definition_make_one_full_comparison_then_count_again(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """A database whose digests were made under another definition (MD5, before XXH3-128:
    etl.row_digest) matches none of a re-delivery's rows: that file is staged and compared
    whole, changes only what changed, and leaves the digests of the current definition, so
    the next re-delivery sets its unchanged rows aside again."""
    ingest(db_url, "parcel", _parcels(tmp_path / "v1.gpkg", {"A": 0, "B": 1, "C": 2}))
    with engine.begin() as conn:  # each digest replaced by another 16 bytes, its context kept
        conn.execute(sa.text("UPDATE ops.ingest_row_hash SET row_hash = substr(row_hash, 1, 16) "
                             "|| decode(md5(feature_id::text), 'hex') WHERE layer = 'parcel'"))
    before = _current(engine)
    second = _parcels(tmp_path / "v2.gpkg", {"A": 0, "B": square(1, dx=5), "C": 2})
    again = ingest(db_url, "parcel", second)
    assert (again.inserted, again.changed, again.closed, again.unchanged) == (0, 1, 0, 2)
    assert scalar(engine, "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b "
                          "AND message LIKE '%set aside%'", b=again.batch_id) == 0
    after = _current(engine)
    assert after["A"] == before["A"] and after["C"] == before["C"]
    assert after["B"][0] == before["B"][0] and after["B"][1] != before["B"][1]
    # the same rows in another order (another file: the same file again is a no-op)
    third = ingest(db_url, "parcel", _parcels(tmp_path / "v3.gpkg", {
        "C": 2, "B": square(1, dx=5), "A": 0}))
    assert (third.inserted, third.changed, third.closed, third.unchanged) == (0, 0, 0, 3)
    assert scalar(engine, "SELECT message FROM ops.batch_note WHERE batch_id = :b "
                          "AND message LIKE '%set aside%'", b=third.batch_id).startswith(
        "3 features delivered exactly as before")
    assert _current(engine) == after
