"""Read a run's findings and write its findings.gpkg while the run's snapshot is taken.

Why: on a night with change the run's snapshot (ops.snapshot_run: the parcel balances and the
findings, carried and keyed; 3-4 s of one backend at state size) comes before the report, and
the report's longest thread then read every finding of the check run (240,000 at state size,
1.5-2 s with the other threads beside it) and wrote them to findings.gpkg (0.8-1.0 s) before
its page could be written. Neither depends on the snapshot: the check run is finished and its
findings never change. So the nightly starts both in a thread as soon as its check run is
done, on the second core while the server takes the snapshot on the first; the report takes
the frame and the file when they are of its check run, and reads and writes them itself
otherwise (none started, failed, another check run).

The file is written in the reports folder as `.findings-run-<id>.pending.gpkg` and moved into the
run's folder by the report (os.replace, within one file system); a run that fails removes it.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy.pool import NullPool

from rulem_db import db as dbmod
from rulem_db.reports.findings_file import write_findings_gpkg
from rulem_db.reports.frames import read_finding_frame

if TYPE_CHECKING:
    import geopandas as gpd

_LOCK = threading.Lock()
_PENDING: dict[tuple[str, int], Future[FindingsAhead]] = {}


@dataclass(frozen=True)
class FindingsAhead:
    """A check run's findings as read, and findings.gpkg written from them, not yet placed."""

    check_run_id: int
    frame: gpd.GeoDataFrame
    gpkg: Path

    def place(self, path: Path) -> Path:
        """Move the written file to `path` (the report's findings.gpkg)."""
        os.replace(self.gpkg, path)
        return path


def pending_path(reports: Path, run_id: int) -> Path:
    """Where run_id's findings.gpkg is written ahead, until its report places it."""
    return Path(reports) / f".findings-run-{run_id}.pending.gpkg"


def read_and_write(url: str, check_run_id: int, plan_area_id: int,
                   gpkg: Path) -> FindingsAhead:
    """The check run's findings (a connection of its own: the caller's is busy) and the file
    written from them; no file is left behind when either fails."""
    eng = dbmod.engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn, conn.begin():
            frame = read_finding_frame(conn, check_run_id, plan_area_id)
    finally:
        eng.dispose()
    try:
        write_findings_gpkg(gpkg, frame)
    except BaseException:
        gpkg.unlink(missing_ok=True)
        raise
    return FindingsAhead(check_run_id, frame, gpkg)


def start(url: str, run_id: int, check_run_id: int, plan_area_id: int,
          reports: Path) -> None:
    """Start reading run_id's findings and writing their file in a thread (see the module's
    docstring)."""
    future: Future[FindingsAhead] = Future()
    gpkg = pending_path(reports, run_id)

    def work() -> None:
        try:
            gpkg.parent.mkdir(parents=True, exist_ok=True)
            future.set_result(read_and_write(url, check_run_id, plan_area_id, gpkg))
        except BaseException as exc:  # handed to the report, which then reads on its own
            future.set_exception(exc)

    with _LOCK:
        _PENDING[(url, run_id)] = future
    threading.Thread(target=work, name=f"findings-of-run-{run_id}", daemon=True).start()


def take(url: str, run_id: int, check_run_id: int | None) -> FindingsAhead | None:
    """What was read and written ahead for run_id when it is of `check_run_id` (the run's
    check run as its record holds it); None when none was started, it failed or it is of
    another check run (its file is removed then)."""
    with _LOCK:
        future = _PENDING.pop((url, run_id), None)
    if future is None:
        return None
    try:
        got = future.result()
    except Exception:  # the report reads and writes itself; the error would show there
        return None
    if got.check_run_id != check_run_id:
        got.gpkg.unlink(missing_ok=True)
        return None
    return got


def discard(url: str, run_id: int) -> None:
    """Forget what will not be used (a short report, a failed run): its file is removed as
    soon as the thread is done with it, without waiting for it here."""
    with _LOCK:
        future = _PENDING.pop((url, run_id), None)
    if future is None:
        return

    def remove(done: Future[FindingsAhead]) -> None:
        if not done.cancelled() and done.exception() is None:
            done.result().gpkg.unlink(missing_ok=True)

    future.add_done_callback(remove)
