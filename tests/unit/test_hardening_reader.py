"""The reader child's stall and overall limits (docs/ingest.md) on a GeoPackage GDAL never
finishes reading: opening and reading stop after the limit, the child is killed, a good file
still reads. No database: the ingest, nightly and SIGTERM tests of the same file are in
tests/security/test_hardening_reader.py.

The bounds are generous (the stall limit here is 1 s): they only tell "stopped" from
"spinning for ever".
"""

from __future__ import annotations

import signal
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import flows_fixtures as fx
import pytest
from reader_helpers import BOUND, REASON, STALL, no_reader_left, recursive_view_gpkg

from etl import isolation
from etl.limits import Limits
from etl.problems import IngestRefused
from etl.reading import ReadLog, ahead, batches
from etl.sources import open_source


@pytest.fixture
def stall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEM_READ_STALL_SECONDS", STALL)


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
    no_reader_left()
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
    no_reader_left()
