"""The guarantees that moved from per-row foreign keys to once-per-statement checks (revision
0010, sql/010_versioning.sql), the change queue's bulk path, and the queue's retention.

Each replaced foreign key has its refusal here: a version whose own id, reference, plan area or
batch does not resolve is refused whole (the statement, with its good rows), and what versions
refer to can be neither deleted nor renumbered. Geometry on a metre grid in EPSG:26915.
"""

from __future__ import annotations

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_db.catalogue.layers import LAYERS

FK = "foreign_key_violation|would break the references|is not a"


def _refused(engine: sa.Engine, match: str, *sql: str) -> None:
    """Every statement runs in one transaction; the last one must be refused."""
    with pytest.raises(sa.exc.DBAPIError, match=match), engine.begin() as conn:
        for stmt in sql:
            conn.execute(sa.text(stmt))


def _parcel_values(pin: str, x: int, parcel_id: str = "NULL", plan_area: str = "1",
                   batch: str = "NULL") -> str:
    return (f"({parcel_id}, {plan_area}, '{pin}', '{pin}', {s.rect((x, 0, x + 100, 100))}, "
            f"{batch})")


INSERT_PARCELS = ("INSERT INTO core.parcel (parcel_id, plan_area_id, pin, pin_normalized, geom, "
                  "batch_id) VALUES ")


def test_no_foreign_keys_left_on_versioned_tables_and_every_reference_is_checked(
        engine: sa.Engine) -> None:
    with engine.connect() as conn:
        fks = conn.execute(sa.text(
            "SELECT conrelid::regclass::text || ' -> ' || confrelid::regclass::text "
            "FROM pg_constraint WHERE contype = 'f' AND confrelid::regclass::text IN "
            "('core.feature', 'core.plan_area', 'ops.batch') AND "
            "(conrelid = 'core.feature'::regclass OR conrelid IN (SELECT attrelid "
            "FROM pg_attribute WHERE attname = 'version_id' "
            "AND attrelid::regclass::text LIKE 'core.%'))")).scalars().all()
        assert fks == []
        for layer in LAYERS:
            checked = conn.execute(sa.text(
                "SELECT column_name, ref_layer FROM core.reference_columns(:t)"),
                {"t": layer.name}).all()
            expected = [(layer.id_column, layer.name)] + [
                (c.name, c.ref_layer) for c in layer.columns if c.ref_layer]
            assert sorted(checked) == sorted(expected), layer.name
            triggers = set(conn.execute(sa.text(
                "SELECT tgname FROM pg_trigger WHERE tgrelid = CAST(:t AS regclass) "
                "AND tgenabled = 'O'"), {"t": f"core.{layer.name}"}).scalars())
            assert {"references_insert", "references_update"} <= triggers, layer.name


def test_a_version_whose_own_id_does_not_resolve_is_refused(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        permit = s.permit(conn, "24-001")
        conn.execute(sa.text("INSERT INTO core.plan_area (code, name) VALUES ('other', 'Other')"))
        other = conn.execute(sa.text(
            "INSERT INTO core.feature (layer, plan_area_id, feature_key) "
            "SELECT 'parcel', plan_area_id, 'P-9' FROM core.plan_area WHERE code = 'other' "
            "RETURNING feature_id")).scalar_one()
    # no such feature; a permit's id; a parcel of another plan area: each refused, and the
    # good row in the same statement with it
    for bad in ("987654321", str(permit), str(other)):
        _refused(engine, "parcel_id = .*is not a parcel of this plan area",
                 INSERT_PARCELS + _parcel_values("P-1", 0) + ", "
                 + _parcel_values("P-2", 200, parcel_id=bad))
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM core.parcel")).scalar_one() == 0


def test_a_plan_area_or_batch_that_does_not_exist_is_refused(engine: sa.Engine) -> None:
    _refused(engine, "plan_area_id 424242 .* is not a plan area",
             INSERT_PARCELS + _parcel_values("P-1", 0, plan_area="424242"))
    _refused(engine, "batch_id = 777, which is not a batch",
             INSERT_PARCELS + _parcel_values("P-1", 0, batch="777"))
    with engine.begin() as conn:
        pid = s.parcel(conn, "P-1", (0, 0, 100, 100))
    # the batch a session says it works for closes the version: it must exist
    _refused(engine, "closed_batch_id = 778, which is not a batch",
             "SET LOCAL rulem.batch_id = '778'",
             f"UPDATE core.parcel SET valid_to = now() WHERE parcel_id = {pid} "
             "AND valid_to IS NULL")
    # a new version (opened by the versioning trigger inside the UPDATE) with a forged batch
    _refused(engine, "batch_id = 779, which is not a batch",
             f"UPDATE core.parcel SET pin = 'P-1b', batch_id = 779 WHERE parcel_id = {pid} "
             "AND valid_to IS NULL")
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*), min(pin) FROM core.parcel")).one() == (1, "P-1")


def test_a_reference_to_another_feature_must_name_a_feature_of_its_layer(
        engine: sa.Engine) -> None:
    with engine.begin() as conn:
        s.plan_boundary(conn)
        d = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        w = s.wetland(conn, d, "W1", (0, 0, 100, 100))
        parcel = s.parcel(conn, "P-1", (0, 0, 100, 100))
    insert = ("INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, geom) "
              f"VALUES (1, {{}}, 'W2', {s.rect((200, 0, 300, 100))})")
    _refused(engine, "delineation_id = 55555, which is not a delineation",
             insert.format(55555))
    _refused(engine, f"delineation_id = {parcel}, which is not a delineation",
             insert.format(parcel))
    # an UPDATE whose new version names a parcel as its delineation: the versioning trigger's
    # nested INSERT is left to the UPDATE's check, which refuses it
    _refused(engine, f"delineation_id = {parcel}, which is not a delineation",
             f"UPDATE core.wetland SET delineation_id = {parcel} WHERE wetland_id = {w} "
             "AND valid_to IS NULL")
    with engine.begin() as conn:  # the good path still works, and versions as before
        conn.execute(sa.text(insert.format(d)))
        conn.execute(sa.text(f"UPDATE core.wetland SET geom = {s.rect((0, 0, 50, 100))} "
                             f"WHERE wetland_id = {w} AND valid_to IS NULL"))
        assert conn.execute(sa.text(
            f"SELECT count(*) FROM core.wetland WHERE wetland_id = {w}")).scalar_one() == 2
        assert conn.execute(sa.text(
            "SELECT count(*) FROM core.reference_problems()")).scalar_one() == 0


def test_what_versions_refer_to_cannot_be_deleted_or_renumbered(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        pid = s.parcel(conn, "P-1", (0, 0, 100, 100))
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer) VALUES (1, 'parcel') "
            "RETURNING batch_id")).scalar_one()
    for sql in (f"DELETE FROM core.feature WHERE feature_id = {pid}",
                "TRUNCATE core.feature CASCADE",
                f"UPDATE core.feature SET feature_id = feature_id + 1000 WHERE feature_id = {pid}",
                f"UPDATE core.feature SET feature_key = 'P-2' WHERE feature_id = {pid}",
                "DELETE FROM core.plan_area",
                "UPDATE core.plan_area SET plan_area_id = 99",
                f"DELETE FROM ops.batch WHERE batch_id = {batch}",
                f"UPDATE ops.batch SET batch_id = 99 WHERE batch_id = {batch}"):
        _refused(engine, "would break the references", sql)
    with engine.begin() as conn:  # what is not identity still changes
        conn.execute(sa.text(f"UPDATE ops.batch SET status = 'loaded' WHERE batch_id = {batch}"))


def test_the_audit_finds_a_reference_the_checks_were_kept_from_checking(
        engine: sa.Engine) -> None:
    """As after a restore that loaded data without the triggers: the audit lists the row."""
    with engine.begin() as conn:
        s.parcel(conn, "P-1", (0, 0, 100, 100))
        assert conn.execute(sa.text(
            "SELECT count(*) FROM core.reference_problems()")).scalar_one() == 0
    with engine.connect() as conn, conn.begin() as tx:
        conn.execute(sa.text("ALTER TABLE core.parcel DISABLE TRIGGER references_insert"))
        conn.execute(sa.text(INSERT_PARCELS + _parcel_values("P-2", 200, parcel_id="424242")))
        problems = conn.execute(sa.text(
            "SELECT layer, column_name, value FROM core.reference_problems()")).all()
        tx.rollback()
    assert [tuple(p) for p in problems] == [("parcel", "parcel_id", 424242)]


def _queued(conn: sa.Connection) -> set[tuple[str, str]]:
    return {(r.feature_key, r.reason) for r in conn.execute(sa.text(
        "SELECT f.feature_key, q.reason FROM ledger.change_queue q "
        "JOIN core.feature f ON f.feature_id = q.permit_id "
        "WHERE q.processed_at IS NULL AND q.layer = 'parcel'"))}


@pytest.mark.parametrize("one_statement", [True, False])
def test_a_bulk_parcel_change_queues_the_owners_it_meets(engine: sa.Engine,
                                                         one_statement: bool) -> None:
    """Five parcels against one impact and one replacement: in one statement the owners are
    met from the owners' side (5 changes > 2 owner geometries), one by one from the parcels';
    both queue the permit for exactly the parcels whose old or new version meets its impact
    or replacement."""
    with engine.begin() as conn:
        s.plan_boundary(conn)
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (0, 0, 100, 100), "fill-1")
        s.replacement(conn, p, (800, 0, 900, 100), "basin-1")
        conn.execute(sa.text("UPDATE ledger.change_queue SET processed_at = now()"))
        rows = [_parcel_values(f"P-{i}", 200 * i - 50) for i in range(5)]  # x = -50, 150, ...
        statements = [", ".join(rows)] if one_statement else rows
        for values in statements:
            conn.execute(sa.text(INSERT_PARCELS + values))
        versions = {r.pin: r.version_id for r in conn.execute(sa.text(
            "SELECT pin, version_id FROM core.parcel"))}
        # P-0 (-50..50) overlaps the impact, P-4 (750..850) the replacement
        assert _queued(conn) == {
            ("24-001", f"parcel P-0 added (version {versions['P-0']})"),
            ("24-001", f"parcel P-4 added (version {versions['P-4']})")}
        conn.execute(sa.text("UPDATE ledger.change_queue SET processed_at = now()"))
        # every parcel moved 400 m east: P-0 leaves the impact, P-2 (350..450 -> 750..850)
        # comes onto the replacement, P-4 (-> 1150..1250) leaves it; P-1, P-3 meet nothing
        move = ("UPDATE core.parcel SET geom = ST_Translate(geom, 400, 0) "
                "WHERE valid_to IS NULL")
        for where in [""] if one_statement else [f" AND pin = 'P-{i}'" for i in range(5)]:
            conn.execute(sa.text(move + where))
        new = {r.pin: r.version_id for r in conn.execute(sa.text(
            "SELECT pin, version_id FROM core.parcel WHERE valid_to IS NULL"))}
        assert _queued(conn) == {
            ("24-001", f"parcel {pin} changed (version {versions[pin]} -> {new[pin]})")
            for pin in ("P-0", "P-2", "P-4")}


def test_finishing_a_run_purges_processed_queue_rows_past_retention(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        s.plan_boundary(conn)
        for no in ("24-001", "24-002", "24-003"):
            s.permit(conn, no)
        ids = conn.execute(sa.text(
            "SELECT queue_id FROM ledger.change_queue ORDER BY queue_id")).scalars().all()
        assert len(ids) == 3  # one per permit
        run = conn.execute(sa.text("SELECT ledger.start_run('queue')")).scalar_one()
        old, recent, waiting = ids[0], ids[1], ids[2]
        conn.execute(sa.text(
            "UPDATE ledger.change_queue SET processed_at = now() - interval '31 days', "
            "processed_run_id = 0 WHERE queue_id = :q"), {"q": old})
        conn.execute(sa.text(
            "UPDATE ledger.change_queue SET processed_at = now() - interval '29 days', "
            "processed_run_id = 0 WHERE queue_id = :q"), {"q": recent})
        conn.execute(sa.text("SELECT * FROM ledger.finish_run(:r)"), {"r": run})
        left = set(conn.execute(sa.text("SELECT queue_id FROM ledger.change_queue")).scalars())
        assert old not in left and {recent, waiting} <= left
        conn.execute(sa.text(
            "INSERT INTO ops.setting (key, value) VALUES ('change_queue_retention_days', '7')"))
        assert conn.execute(sa.text("SELECT ledger.purge_processed_queue()")).scalar_one() == 1
        assert recent not in set(conn.execute(sa.text(
            "SELECT queue_id FROM ledger.change_queue")).scalars())
        assert conn.execute(sa.text(
            "SELECT indexdef FROM pg_indexes WHERE indexname = "
            "'ix_change_queue_processed_run_id'")).scalar_one().endswith("(processed_run_id)")
