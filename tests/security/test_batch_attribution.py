"""Who and which batch made a version cannot be forged (sql/010_versioning.sql, "attribution").

As found: a version's batch came from the session setting rulem.batch_id or from the column
itself, and any login may set either, so an editor could attribute a hand edit to an ingest
batch (its file, its login). And the flag rulem.versioning, by which the versioning trigger
marks the one version it inserts inside an UPDATE, was taken on its word: an editor who set it
had the insert of a new impact skip the ledger's change queue. Now a version may name only a
batch its own transaction opened (ops.batch.opened_xact), and the flag counts only for the
version the versioning trigger really inserted.

Data: permit 24-001 and its fill impact loaded by batch 'permits.gpkg' (the superuser stands in
for the ingest, in one transaction), inside the plan boundary.
"""

from __future__ import annotations

from collections.abc import Iterator

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from role_logins import as_login, role_logins
from sqlalchemy.engine import URL

at = fx.at
FORGED = "a batch this transaction did not open"


@pytest.fixture(scope="module")
def logins(admin_url: URL) -> Iterator[dict[str, URL]]:
    with role_logins(admin_url, ("rulem_editor", "rulem_etl"), "ba") as made:
        yield made


@pytest.fixture
def site(db_url: str, engine: sa.Engine) -> tuple[str, int]:
    """The database and the batch that loaded permit 24-001."""
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        batch = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, status) "
            "VALUES (1, 'permit', 'permits.gpkg', 'loaded') RETURNING batch_id")).scalar_one()
        conn.execute(sa.text("SELECT set_config('rulem.batch_id', :b, true)"),
                     {"b": str(batch)})
        permit = s.permit(conn, "24-001")
        s.impact(conn, permit, "fill", at(0, 0, 100, 100), "I-1")
    return db_url, batch


def _permit(engine: sa.Engine) -> sa.Row:
    with engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT applicant, batch_id, created_by, version_id FROM core.permit "
            "WHERE permit_no = '24-001' AND valid_to IS NULL")).one()


def _refused(eng: sa.Engine, match: str, *sql: str) -> None:
    with pytest.raises(sa.exc.DBAPIError, match=match), eng.begin() as conn:
        for statement in sql:
            conn.execute(sa.text(statement))


def test_the_ingest_batch_is_recorded_in_the_transaction_that_opened_it(
        site: tuple[str, int], engine: sa.Engine) -> None:
    _, batch = site
    row = _permit(engine)
    assert row.batch_id == batch


def test_an_editor_cannot_attribute_an_edit_to_an_ingest_batch(
        site: tuple[str, int], engine: sa.Engine, logins: dict[str, URL]) -> None:
    url, batch = site
    before = _permit(engine)
    editor = as_login(url, logins["rulem_editor"])
    # through the setting the versioning triggers read, through the view QGIS writes
    _refused(editor, FORGED, f"SET LOCAL rulem.batch_id = '{batch}'",
             "UPDATE edit.permit SET applicant = 'forged' WHERE permit_no = '24-001'")
    # through the setting, retiring a feature (the batch that closed it)
    _refused(editor, FORGED, f"SET LOCAL rulem.batch_id = '{batch}'",
             "DELETE FROM edit.impact WHERE permit_no = '24-001'")
    # through the column, writing core directly (naming the permit's own batch again is no
    # attribution: the new version is the editor's; naming another batch is refused)
    with engine.begin() as conn:
        other = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, status) "
            "VALUES (1, 'parcel', 'parcels.gpkg', 'loaded') RETURNING batch_id")).scalar_one()
    _refused(editor, FORGED, f"UPDATE core.permit SET applicant = 'forged', batch_id = {other} "
                             "WHERE permit_no = '24-001' AND valid_to IS NULL")
    _refused(editor, FORGED,
             "INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, batch_id, geom) "
             f"VALUES (1, {_permit_id(engine)}, 'fill', 'I-2', {batch}, "
             f"{s.rect(at(100, 0, 200, 100))})")
    assert _permit(engine) == before
    # without a forged batch the edit is the editor's own
    with editor.begin() as conn:
        conn.execute(sa.text("UPDATE edit.permit SET applicant = 'Lake Homes' "
                             "WHERE permit_no = '24-001'"))
    editor.dispose()
    after = _permit(engine)
    assert (after.applicant, after.batch_id, after.created_by) == (
        "Lake Homes", None, logins["rulem_editor"].username)


def _permit_id(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text(
            "SELECT permit_id FROM core.permit WHERE permit_no = '24-001'")).scalar_one()


def test_a_writer_attributes_versions_to_the_batch_it_opened_and_no_other(
        site: tuple[str, int], engine: sa.Engine, logins: dict[str, URL]) -> None:
    url, batch = site
    writer = as_login(url, logins["rulem_etl"])
    parcel = ("INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
              f"VALUES (1, 'P-1', 'P1', {s.rect(at(0, 0, 500, 500))})")
    _refused(writer, FORGED, f"SET LOCAL rulem.batch_id = '{batch}'", parcel)
    with writer.begin() as conn:  # a batch of its own, committed: over once committed
        mine = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name) VALUES (1, 'parcel', "
            "'parcels.gpkg') RETURNING batch_id")).scalar_one()
        conn.execute(sa.text("UPDATE ops.batch SET status = 'loaded' WHERE batch_id = :b"),
                     {"b": mine})
    _refused(writer, FORGED, f"SET LOCAL rulem.batch_id = '{mine}'", parcel)
    with writer.begin() as conn:  # the ingest's way: open, write, end, in one transaction
        new = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name) VALUES (1, 'parcel', "
            "'parcels.gpkg') RETURNING batch_id")).scalar_one()
        conn.execute(sa.text("SELECT set_config('rulem.batch_id', :b, true)"), {"b": str(new)})
        conn.execute(sa.text(parcel))
        conn.execute(sa.text("UPDATE ops.batch SET status = 'loaded' WHERE batch_id = :b"),
                     {"b": new})
    writer.dispose()
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT batch_id FROM core.parcel WHERE pin = 'P-1'")).scalar_one() == new


def test_a_forged_versioning_flag_skips_neither_the_queue_nor_the_checks(
        site: tuple[str, int], engine: sa.Engine, logins: dict[str, URL]) -> None:
    """The editor sets rulem.versioning to the version id its new impact will get, as the
    versioning trigger does for the version it inserts inside an UPDATE; the new impact must
    still reach the ledger's change queue."""
    url, _ = site
    with engine.connect() as conn:
        upcoming = conn.execute(sa.text(
            "SELECT last_value + 1 FROM core.impact_version_id_seq")).scalar_one()
        queued = conn.execute(sa.text("SELECT count(*) FROM ledger.change_queue")).scalar_one()
    editor = as_login(url, logins["rulem_editor"])
    with editor.begin() as conn:
        conn.execute(sa.text("SELECT set_config('rulem.versioning', :v, true)"),
                     {"v": str(upcoming)})
        got = conn.execute(sa.text(
            "INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('24-001', 'excavate', "
            f"{s.rect(at(100, 0, 150, 100))}) RETURNING version_id")).scalar_one()
    editor.dispose()
    assert got == upcoming  # the flag named exactly this version
    with engine.connect() as conn:
        reasons = conn.execute(sa.text(
            "SELECT reason FROM ledger.change_queue ORDER BY queue_id OFFSET :n"),
            {"n": queued}).scalars().all()
    assert reasons and all("impact" in r and "added" in r for r in reasons)
