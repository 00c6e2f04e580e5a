"""A file GDAL never finishes reading (docs/ingest.md): a GeoPackage whose layer is an SQLite
view with an endless `WITH RECURSIVE` makes GDAL spin at full CPU while it opens the file
(pyogrio.list_layers never returns). GDAL now works in a reader child (etl.isolation) that is
killed when it gives nothing for the stall limit (RULEM_READ_STALL_SECONDS): the file is
refused in one line naming it, the database left as it was, the inbox quarantines it and goes
on, and the run record is closed whatever ends the run. Here what needs a database (ingest,
the nightly, SIGTERM during a run); the stall limits themselves are tested in
tests/unit/test_hardening_reader.py.

The bounds below are generous (the stall limit here is 1-2 s; a run with a report takes a few
seconds): they only tell "stopped" from "spinning for ever".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import flows_fixtures as fx
import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint
from reader_helpers import BOUND, REASON, STALL, reader_children, recursive_view_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused
from flows import nightly


@pytest.fixture
def stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEM_READ_STALL_SECONDS", STALL)


def test_ingest_of_the_file_is_refused_in_one_line(db_url: str, engine: sa.Engine,
                                                   tmp_path: Path, stall: None,
                                                   capsys: pytest.CaptureFixture) -> None:
    from rulem_cli import main as cli

    bad = recursive_view_gpkg(tmp_path / "loop.gpkg")
    before = fingerprint(engine)
    with pytest.raises(IngestRefused) as refused:
        ingest(db_url, "parcel", bad)
    assert str(refused.value) == f"loop.gpkg: {REASON}"
    start = time.monotonic()
    code = cli.main(["--db", db_url, "ingest", "parcel", str(bad)])
    err = capsys.readouterr().err
    assert code == 1
    assert err == f"rulem-db ingest: loop.gpkg: {REASON}\n"
    assert time.monotonic() - start < BOUND
    assert fingerprint(engine) == before


def _inbox(root: Path) -> Path:
    """A plan boundary, a good parcel file and the recursive view, all for tonight."""
    box = root / "inbox"
    fx.plan_area_geojson(box / "cwmp_area" / "boundary.geojson")
    recursive_view_gpkg(box / "parcel" / "a_loop.gpkg")  # first in the parcel folder
    fx.parcels_gpkg(box / "parcel" / "b_parcels.gpkg",
                    {"P-1": (0, 0, 500, 500), "P-2": (500, 0, 1000, 500)})
    return box


def test_the_nightly_quarantines_the_file_and_loads_the_rest(db_url: str, engine: sa.Engine,
                                                             tmp_path: Path,
                                                             stall: None) -> None:
    box = _inbox(tmp_path)
    start = time.monotonic()
    summary = nightly.reconcile_now(db_url, inbox=box, reports=tmp_path / "reports",
                                    use_prefect=False)
    assert time.monotonic() - start < BOUND
    outcomes = {f.rel: (f.outcome, f.message) for f in summary.files}
    assert outcomes["parcel/a_loop.gpkg"] == ("quarantined", f"a_loop.gpkg: {REASON}")
    assert outcomes["parcel/b_parcels.gpkg"][0] == "loaded"
    assert outcomes["cwmp_area/boundary.geojson"][0] == "loaded"
    # a quarantined file makes the run partial, as any refused file does
    assert summary.status == "partial"
    day = next((tmp_path / "quarantine").iterdir())
    report = (day / f"run-{summary.run_id}" / "parcel" / "a_loop.gpkg.error.txt").read_text()
    assert f"Refused:\n  a_loop.gpkg: {REASON}\n" in report
    assert "Details:" not in report  # the one line is the whole story
    assert not (box / "parcel" / "a_loop.gpkg").exists()
    with engine.connect() as conn:
        pins = conn.execute(sa.text("SELECT pin FROM core.parcel ORDER BY pin")).scalars().all()
        batches_of_bad = conn.execute(sa.text(
            "SELECT count(*) FROM ops.batch WHERE file_name = 'a_loop.gpkg'")).scalar_one()
        status, files = conn.execute(sa.text(
            "SELECT status, (SELECT array_agg(outcome ORDER BY file_name) FROM ops.run_file f "
            "WHERE f.run_id = r.run_id) FROM ops.run r WHERE run_id = :r"),
            {"r": summary.run_id}).one()
    assert pins == ["P-1", "P-2"] and batches_of_bad == 0
    assert status == "partial" and files == ["loaded", "quarantined", "loaded"]


def test_sigterm_closes_the_run_as_failed(db_url: str, engine: sa.Engine,
                                          tmp_path: Path) -> None:
    """`rulem-db reconcile` stopped by SIGTERM while GDAL spins (stall limit one hour): the
    process ends at once with 143, the run record says why, nothing stays running or locked,
    the file waits in the inbox for the next run."""
    box = tmp_path / "inbox"
    fx.plan_area_geojson(box / "cwmp_area" / "boundary.geojson")
    recursive_view_gpkg(box / "parcel" / "loop.gpkg")
    env = dict(os.environ, RULEM_READ_STALL_SECONDS="3600")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulem_cli.main", "--db", db_url, "reconcile", "--no-prefect",
         "--inbox", str(box), "--reports", str(tmp_path / "reports")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + BOUND
        while True:  # wait until the boundary is loaded and the parcel file is being opened
            with engine.connect() as conn:
                loaded = conn.execute(sa.text(
                    "SELECT count(*) FROM ops.run_file WHERE outcome = 'loaded'")).scalar_one()
            readers = reader_children(proc.pid, spinning=True)
            if loaded and readers:
                break
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        spinning = readers[0]
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=BOUND)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    spinning.wait(10)  # the reader is gone too (psutil.TimeoutExpired if it still spins)
    with engine.connect() as conn:
        status, message = conn.execute(sa.text(
            "SELECT status, message FROM ops.run ORDER BY run_id DESC LIMIT 1")).one()
        holders = conn.execute(sa.text(
            "SELECT count(*) FROM core.plan_area p, ops.reconcile_lock_holder(p.plan_area_id) "
            "h")).scalar_one()
    assert status == "failed"
    assert message.startswith("stopped before the end (SIGTERM)"), message
    assert holders == 0
    assert (box / "parcel" / "loop.gpkg").exists()
