"""A restricted layer's keys, batches and file names are seen by those who load or read it only.

As found: an editor read which permits have protected species records (3(d)) from the feature
registry (key '24-003/SR-001') and from the batch record (file '24-003 species.gpkg'), both of
which it reads for its own edits; staff read the same file names in pub.reconciliation_file.
Now row security (sql/013_restricted_rows.sql) shows the editor only the rows of layers that
are not restricted, rulem_etl (which loads the restricted layer) every row, and the published
run log leaves the restricted layer's files out.
"""

from __future__ import annotations

from collections.abc import Iterator

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from role_logins import as_login, role_logins
from sqlalchemy.engine import URL

from flows import runs

at = fx.at
ROLES = ("rulem_editor", "rulem_etl", "rulem_staff", "rulem_gis", "rulem_restricted")


@pytest.fixture(scope="module")
def logins(admin_url: URL) -> Iterator[dict[str, URL]]:
    with role_logins(admin_url, ROLES, "rr") as made:
        yield made


@pytest.fixture
def site(db_url: str, engine: sa.Engine) -> str:
    """Permit 24-003 with a species record on its site, loaded by batch '24-003 species.gpkg';
    a parcel loaded by batch 'parcels.gpkg'; a run that took both files from the inbox."""
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        s.parcel(conn, "P-1", at(0, 0, 500, 500))
        permit = s.permit(conn, "24-003")
        conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, status) VALUES "
            "(1, 'parcel', 'parcels.gpkg', 'loaded'), "
            "(1, 'species_record', '24-003 species.gpkg', 'loaded')"))
        conn.execute(sa.text(
            "INSERT INTO core.species_record (plan_area_id, permit_id, species, source_fid, geom) "
            f"VALUES (1, :p, 'Blanding''s turtle', '24-003/SR-001', {s.rect(at(0, 0, 10, 10))})"),
            {"p": permit})
    plan = runs.plan_area(db_url, None)
    with runs.ReconcileLock(db_url, plan) as lock:
        run_id = lock.start_run("ingest_inbox", "command")
        for name, layer in (("parcel/parcels.gpkg", "parcel"),
                            ("species_record/24-003 species.gpkg", "species_record")):
            runs.record_file(db_url, run_id, name, layer, None, "loaded", None, None, "loaded")
        runs.finish(db_url, run_id, "done", "2 files loaded")
    return db_url


def _rows(url: str, login: URL, sql: str) -> list:
    eng = as_login(url, login)
    try:
        with eng.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql))]
    finally:
        eng.dispose()


def test_an_editor_sees_no_key_or_batch_of_a_restricted_layer(
        site: str, logins: dict[str, URL]) -> None:
    editor = logins["rulem_editor"]
    assert _rows(site, editor, "SELECT feature_key FROM core.feature "
                               "WHERE layer = 'species_record' OR feature_key LIKE '%SR-%'") == []
    assert _rows(site, editor, "SELECT layer, file_name FROM ops.batch ORDER BY 1") == [
        ("parcel", "parcels.gpkg")]
    # what it may know of is still there
    assert _rows(site, editor, "SELECT feature_key FROM core.feature "
                               "WHERE layer = 'permit'") == [("24-003",)]


def test_an_editor_cannot_probe_a_restricted_layers_keys_by_writing(
        site: str, logins: dict[str, URL]) -> None:
    """Registering a key of the restricted layer (a unique violation would say it exists) is
    refused before the registry is looked at, whether the key exists or not."""
    eng = as_login(site, logins["rulem_editor"])
    for key in ("24-003/SR-001", "24-003/SR-999"):
        with pytest.raises(sa.exc.DBAPIError, match="violates row-level security policy"), \
                eng.begin() as conn:
            conn.execute(sa.text("INSERT INTO core.feature (layer, plan_area_id, feature_key) "
                                 "VALUES ('species_record', 1, :k)"), {"k": key})
    eng.dispose()


def test_the_writer_that_loads_the_restricted_layer_sees_its_rows(
        site: str, logins: dict[str, URL]) -> None:
    etl = logins["rulem_etl"]
    assert _rows(site, etl, "SELECT feature_key FROM core.feature "
                            "WHERE layer = 'species_record'") == [("24-003/SR-001",)]
    assert _rows(site, etl, "SELECT file_name FROM ops.batch WHERE layer = 'species_record'") \
        == [("24-003 species.gpkg",)]


@pytest.mark.parametrize("role", ("rulem_staff", "rulem_gis", "rulem_restricted"))
def test_readers_read_neither_table_and_the_run_log_leaves_the_file_out(
        site: str, logins: dict[str, URL], role: str) -> None:
    eng = as_login(site, logins[role])
    for table in ("core.feature", "ops.batch"):
        with pytest.raises(sa.exc.DBAPIError, match="permission denied"), eng.connect() as conn:
            conn.execute(sa.text(f"SELECT count(*) FROM {table}"))
    eng.dispose()
    assert _rows(site, logins[role], "SELECT file_name, layer FROM pub.reconciliation_file "
                                     "ORDER BY 1") == [("parcel/parcels.gpkg", "parcel")]
