"""A file GDAL never finishes reading (issue 16, defect 3): a GeoPackage whose layer is an SQLite
view with an endless `WITH RECURSIVE` makes GDAL spin at full CPU while it opens the file
(pyogrio.list_layers never returns). GDAL now works in a reader child (etl.isolation) that is
killed when it gives nothing for the stall limit (RULEM_READ_STALL_SECONDS): the file is
refused in one line naming it, the database left as it was, the inbox quarantines it and goes
on, and the run record is closed whatever ends the run.

The bounds below are generous (the stall limit here is 1-2 s; a run with a report takes a few
seconds): they only tell "stopped" from "spinning for ever".
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import flows_fixtures as fx
import psutil
import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint

from etl import isolation
from etl.ingest import ingest
from etl.limits import Limits
from etl.problems import IngestRefused
from etl.reading import ReadLog, ahead, batches
from etl.sources import open_source
from flows import nightly

STALL = "1"  # seconds, for the tests
BOUND = 120  # seconds: far above what a stopped read takes, far below "for ever"
REASON = ("opening stopped: GDAL gave no answer for 1 s (a recursive view or a broken "
          "file?); nothing was loaded (raise the limit with RULEM_READ_STALL_SECONDS if the "
          "file is real and that slow)")


def recursive_view_gpkg(path: Path) -> Path:
    """A valid GeoPackage of one parcel whose only registered layer is a view that recurses
    for ever and never yields a row (gpkg_contents and gpkg_geometry_columns name the view;
    the table it reads is unregistered)."""
    fx.parcels_gpkg(path, {"P-LOOP": (0, 0, 100, 100)})
    con = sqlite3.connect(path)
    try:
        table, srs = con.execute("SELECT table_name, srs_id FROM gpkg_contents").fetchone()
        con.execute(f"""CREATE VIEW parcel_loop AS
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)
            SELECT t.fid AS fid, t.geom AS geom, t.pin AS pin FROM "{table}" t, n
            WHERE n.i < 0""")
        for meta in ("gpkg_geometry_columns", "gpkg_contents", "gpkg_ogr_contents"):
            con.execute(f"DELETE FROM {meta}")
        con.execute("INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) "
                    "VALUES ('parcel_loop', 'features', 'parcel_loop', ?)", (srs,))
        con.execute("INSERT INTO gpkg_geometry_columns VALUES "
                    "('parcel_loop', 'geom', 'MULTIPOLYGON', ?, 0, 0)", (srs,))
        con.commit()
    finally:
        con.close()
    return path


@pytest.fixture
def stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEM_READ_STALL_SECONDS", STALL)


def _readers(pid: int | None = None, spinning: bool = False) -> list[psutil.Process]:
    """The live reader children of a process (this one by default): its forkserver's children;
    spinning: only those using most of a CPU."""
    found = []
    try:
        servers = [p for p in psutil.Process(pid).children()
                   if "forkserver" in " ".join(p.cmdline())]
        for server in servers:
            for child in server.children():
                try:
                    if child.status() != psutil.STATUS_ZOMBIE and (
                            not spinning or child.cpu_percent(0.2) > 50):
                        found.append(child)
                except psutil.NoSuchProcess:
                    continue
    except psutil.NoSuchProcess:
        pass
    return found


def _no_reader_left() -> None:
    deadline = time.monotonic() + 10
    while (left := _readers()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"reader processes left: {left}"


def test_gdal_really_spins_on_the_file(tmp_path: Path) -> None:
    """The premise, checked with GDAL's own tool: it does not finish in 5 s."""
    bad = recursive_view_gpkg(tmp_path / "loop.gpkg")
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(["ogrinfo", "-al", "-so", str(bad)], capture_output=True, timeout=5)


def test_opening_and_reading_stop_after_the_stall_limit(tmp_path: Path, stall: None) -> None:
    bad = recursive_view_gpkg(tmp_path / "loop.gpkg")
    good = fx.parcels_gpkg(tmp_path / "good.gpkg", {"P-1": (0, 0, 500, 500)})
    start = time.monotonic()
    with pytest.raises(IngestRefused) as err:
        open_source(bad, layer_name="parcel")
    assert str(err.value) == f"loop.gpkg: {REASON}"
    assert err.value.lines() == [str(err.value)]
    # the same file reaching the reading step (its metadata taken from a good file)
    src = replace(open_source(good, layer_name="parcel"), path=bad, dataset=str(bad),
                  layer="parcel_loop")
    with pytest.raises(IngestRefused, match=r"^loop.gpkg: reading stopped: GDAL gave no "
                       r"feature for 1 s \(a recursive view or a broken file\?\)"):
        list(batches(src, read_geometry=True, log=ReadLog()))
    assert time.monotonic() - start < BOUND
    _no_reader_left()
    # a good file still reads, through the same kind of child
    src = open_source(good, layer_name="parcel")
    assert [b.num_rows for b in batches(src, read_geometry=True, log=ReadLog())] == [1]


def test_the_limits_come_from_the_environment() -> None:
    assert (Limits().read_stall_seconds, Limits().max_read_seconds) == (120.0, 3600.0)
    lim = Limits.from_env({"RULEM_READ_STALL_SECONDS": "0.5", "RULEM_MAX_READ_SECONDS": "60"})
    assert (lim.read_stall_seconds, lim.max_read_seconds) == (0.5, 60.0)


def test_the_overall_limit_counts_only_the_time_spent_waiting(tmp_path: Path) -> None:
    """A child that answers nothing within max_read_seconds (shorter than the stall limit) is
    stopped by the overall limit, with its own words."""
    limits = Limits(read_stall_seconds=60, max_read_seconds=1)
    with pytest.raises(IngestRefused, match=r"^x.gpkg: reading stopped: GDAL took more than "
                       r"1 s in all on this file; .*RULEM_MAX_READ_SECONDS"):
        list(isolation.stream(time.sleep, (3600,), "x.gpkg", limits))


def test_a_reader_that_stops_early_kills_the_child_it_waits_on() -> None:
    """etl.reading.ahead: when its consumer stops (here an alarm while it waits for the first
    batch, as SIGTERM would), the reader thread's child is killed rather than waited for."""
    class Alarm(Exception):
        pass

    def ring(signum: int, frame: object) -> None:
        raise Alarm

    limits = Limits(read_stall_seconds=3600)
    previous = signal.signal(signal.SIGALRM, ring)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 1.0)
        with pytest.raises(Alarm):
            for _ in ahead(isolation.stream(time.sleep, (3600,), "x.gpkg", limits)):
                pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < BOUND
    _no_reader_left()


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
            readers = _readers(proc.pid, spinning=True)
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
