"""One end-to-end run through a real Prefect engine (prefect_test_harness: a temporary Prefect
server, about 30 s to start here): an inbox with two good files and one bad one, then the same
night again. Marked e2e (select with -m e2e); it also runs in the default test run."""

from __future__ import annotations

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from flows import artifacts, nightly, runs

STARTUP_SECONDS = 240


@pytest.fixture(scope="module")
def prefect_server():
    import os

    from prefect.testing.utilities import prefect_test_harness

    old = os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS")
    os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = str(STARTUP_SECONDS)
    try:
        with prefect_test_harness(server_startup_timeout=STARTUP_SECONDS):
            yield
    finally:
        if old is None:
            os.environ.pop("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", None)
        else:
            os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = old


def _artifacts(keys: list[str]) -> dict[str, list]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys)))
    by_key: dict[str, list] = {}
    for a in found:
        by_key.setdefault(a.key, []).append(a)
    return by_key


@pytest.mark.e2e
def test_nightly_flow_through_prefect(prefect_server, db_url, engine, tmp_path):
    # Permit 25-001 was recorded earlier (fill 100 m x 100 m of wetland, certified replacement
    # 100 m x 50 m); tonight the county's parcels and the plan boundary arrive, and a parcel
    # file without PINs.
    with engine.begin() as conn:
        d = s.delineation(conn, "D-1", fx.at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", fx.at(0, 0, 300, 300))
        permit = s.permit(conn, "25-001", pins=["P-1", "P-2"])
        s.impact(conn, permit, "fill", fx.at(0, 0, 100, 100), "i1")
        s.replacement(conn, permit, fx.at(600, 0, 700, 50), "r1")
    box = fx.inbox_two_good_one_bad(tmp_path)
    reports = tmp_path / "reports"

    with nightly.database(db_url):
        first = nightly.nightly_reconciliation(inbox=str(box), reports=str(reports),
                                               started_via="api")
    assert first.status == "partial"  # one file quarantined
    assert {f.rel: f.outcome for f in first.files} == {
        "cwmp_area/boundary.geojson": "loaded", "parcel/parcels_2026.gpkg": "loaded",
        "parcel/parcels_no_pin.geojson": "quarantined"}
    day, run_dir = runs.local_day().isoformat(), f"run-{first.run_id}"
    bad = tmp_path / "quarantine" / day / run_dir / "parcel" / "parcels_no_pin.geojson"
    assert bad.is_file() and "pin" in bad.with_name(bad.name + ".error.txt").read_text()
    assert (tmp_path / "archive" / day / run_dir / "parcel" / "parcels_2026.gpkg").is_file()
    assert "Since the start (this is the first run): 2 file(s) loaded, 1 quarantined" in \
        first.report_path.read_text()
    assert (first.report_path.parent / "parcel_balance.csv").is_file()
    assert first.entries_posted > 0 and round(first.plan_balance_acres, 4) == -1.2356
    with engine.connect() as conn:
        record = conn.execute(sa.text("SELECT * FROM ops.run WHERE run_id = :r"),
                              {"r": first.run_id}).mappings().one()
    assert record["prefect_flow_run_id"]  # it ran through Prefect
    assert (record["status"], record["files_loaded"], record["files_quarantined"]) == (
        "partial", 2, 1)
    assert record["report_path"] == str(first.report_path.parent)

    # The same night again: the inbox holds nothing new, the ledger posts nothing.
    with nightly.database(db_url):
        second = nightly.nightly_reconciliation(inbox=str(box), reports=str(reports),
                                                started_via="api")
    assert (second.status, second.changed, second.files) == ("done", False, [])
    assert (second.entries_posted, second.findings_new, second.findings_resolved,
            second.parcels_changed) == (0, 0, 0, 0)
    assert second.report_path.is_file() and second.report_path != first.report_path

    # While another reconciliation holds the lock, the flow fails at once with its message.
    with runs.ReconcileLock(db_url, runs.plan_area(db_url, None)) as held:
        held_run = held.start_run("nightly_reconciliation", "command")
        with nightly.database(db_url), pytest.raises(runs.ReconcileLocked,
                                                     match=f"by run {held_run} "):
            nightly.nightly_reconciliation(reports=str(reports), started_via="api")

    keys = [artifacts.key(k, "acd-53-62") for k in ("nightly", "finding-changes",
                                                    "parcel-changes")]
    found = _artifacts(keys)
    assert set(found) == set(keys)
    assert any(f"run {second.run_id}" in (a.data or "") for a in found[keys[0]])
