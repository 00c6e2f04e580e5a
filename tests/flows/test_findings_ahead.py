"""A night's findings read and their findings.gpkg written beside the run's snapshot
(rulem_db.reports.findings_ahead): the same frame and file the report makes itself, taken only
for the check run they are of, and never left behind by a run that fails."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pyogrio
import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from flows import nightly, runs
from rulem_db.reports import findings_ahead
from rulem_db.reports import run as report_run
from rulem_db.reports.findings_file import write_findings_gpkg
from rulem_db.reports.frames import read_finding_frame


def _move_an_impact(url: str) -> None:
    """A new version of one impact of 24-007, 2 m east: its permit is checked again."""
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.begin() as conn:
            assert conn.execute(sa.text(
                "UPDATE core.impact SET geom = ST_Multi(ST_Translate(geom, 2.0, 0.0)) "
                "WHERE valid_to IS NULL AND impact_id = (SELECT min(i.impact_id) "
                "FROM core.impact i "
                "JOIN core.permit p ON p.permit_id = i.permit_id AND p.valid_to IS NULL "
                "WHERE i.valid_to IS NULL AND p.permit_no = '24-007')")).rowcount == 1
    finally:
        eng.dispose()


def _check_run(url: str, run_id: int) -> tuple[int, int]:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return tuple(conn.execute(sa.text(
                "SELECT check_run_id, plan_area_id FROM ops.run WHERE run_id = :r"),
                {"r": run_id}).one())
    finally:
        eng.dispose()


def _wait_for_threads() -> None:
    """Until every thread reading ahead is done (a discarded one removes its file then)."""
    deadline = time.monotonic() + 60
    for t in threading.enumerate():
        if t.name.startswith("findings-of-run-"):
            t.join(max(0.0, deadline - time.monotonic()))
            assert not t.is_alive(), t.name


def _parts(reports: Path) -> list[Path]:
    return sorted(reports.rglob(".findings-run-*.pending.gpkg"))


def _layers(path: Path) -> dict[str, object]:
    return {name: pyogrio.read_dataframe(path, layer=name)
            for name, _ in pyogrio.list_layers(path)}


@pytest.fixture(scope="module")
def night(admin_url: URL, demo_template: DemoTemplate,
          tmp_path_factory: pytest.TempPathFactory):
    """A demo database after its first night, and that night's reports folder."""
    reports = tmp_path_factory.mktemp("findings_ahead")
    with cloned(admin_url, demo_template.name, prefix="rulem_fa") as url:
        first = nightly.reconcile_now(url, reports=reports, use_prefect=False)
        yield url, reports, first


def test_what_is_read_ahead_is_what_the_report_reads_and_writes(night, tmp_path):
    url, _, first = night
    check_run, plan = _check_run(url, first.run_id)
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn, conn.begin():
            own = read_finding_frame(conn, check_run, plan)
    finally:
        eng.dispose()
    assert len(own)  # the demo has findings: an empty comparison would prove nothing
    own_file = write_findings_gpkg(tmp_path / "own.gpkg", own)

    findings_ahead.start(url, -1, check_run, plan, tmp_path)
    got = findings_ahead.take(url, -1, check_run)
    assert got is not None and got.frame.equals(own)
    assert got.gpkg == findings_ahead.pending_path(tmp_path, -1) and got.gpkg.is_file()
    placed = got.place(tmp_path / "findings.gpkg")
    assert not got.gpkg.exists()
    theirs, ours = _layers(placed), _layers(own_file)
    assert theirs.keys() == ours.keys() and theirs
    for name, frame in ours.items():
        assert frame.equals(theirs[name]), name

    # of another check run: not taken, its file removed; none started: nothing
    findings_ahead.start(url, -2, check_run, plan, tmp_path)
    assert findings_ahead.take(url, -2, check_run + 1000) is None
    assert not findings_ahead.pending_path(tmp_path, -2).exists()
    assert findings_ahead.take(url, -3, check_run) is None
    # discarded while it may still run: its file goes when the thread is done
    findings_ahead.start(url, -4, check_run, plan, tmp_path)
    findings_ahead.discard(url, -4)
    _wait_for_threads()
    assert _parts(tmp_path) == []


def test_a_night_with_change_takes_the_file_written_ahead(night, monkeypatch):
    """The report of a night whose check run is new does not write findings.gpkg itself: with
    its own writer broken, the night still ends with the file in its folder."""
    url, reports, _ = night
    _move_an_impact(url)

    def broken(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report wrote findings.gpkg itself")

    monkeypatch.setattr(report_run, "write_findings_gpkg", broken)
    summary = nightly.reconcile_now(url, reports=reports, use_prefect=False)
    folder = Path(summary.report_path).parent
    assert summary.status == "done" and (folder / "findings.gpkg").is_file()
    assert _parts(reports) == []
    assert runs.previous_check_run(url, summary.run_id) != _check_run(url, summary.run_id)[0]


def test_a_night_that_fails_after_its_checks_leaves_no_file_behind(night, monkeypatch):
    url, reports, _ = night
    _move_an_impact(url)

    def failing(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the snapshot failed")

    monkeypatch.setattr(runs, "snapshot", failing)
    with pytest.raises(RuntimeError, match="the snapshot failed"):
        nightly.reconcile_now(url, reports=reports, use_prefect=False)
    _wait_for_threads()
    assert _parts(reports) == []
