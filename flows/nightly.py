"""The nightly reconciliation: load what arrived in the inbox, recompute the ledger, re-run the
rule checks, compare with the previous run, write the report staff read in the morning.

Two flows:
- `ingest_inbox`: every item in the inbox is one task; a bad file goes to quarantine with its
  error report while the others load; loaded and duplicate files go to the archive.
- `nightly_reconciliation`: the inbox (when given), then `recompute`, `run_checks`, the
  comparison with the previous run (new and resolved findings, parcels whose balance changed,
  plan totals), the report and the Prefect artifacts.

Both take the plan area's reconciliation lock first: a second run while one runs exits at once
with a message naming the running one (flows.runs). Both open a run record (ops.run) and close
it as done, partial (some files quarantined or left) or failed. Re-running the same night posts
nothing (the ledger posts only differences) and records a run that says nothing changed.

No exit leaves the record `running`: an exception, Ctrl-C and SIGTERM (a service stop, `kill
PID`; turned into the exception `Terminated` while a run holds the lock, when nothing else
handles SIGTERM) close it as failed with the reason. Only SIGKILL or a power cut cannot; the
next run marks such a record abandoned (ops.start_run). A file GDAL cannot finish reading
(a recursive view) is refused after the stall limit (etl.isolation) and quarantined like any
refused file, so it cannot hold the lock for ever.

The database URL is never a flow parameter (Prefect shows parameters in its UI): the flows read
RULEM_DATABASE_URL (or the embedded default), or the URL `reconcile_now` was given.
"""

from __future__ import annotations

import contextvars
import gc
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

from flows import inbox as inbox_mod
from flows import runs
from flows.retry import call, in_flow_run
from flows.tasks import (
    FileResult,
    NotRecorded,
    Places,
    check_ledger_totals,
    compare_with_previous_run,
    ingest_file,
    recompute_ledger,
    run_rule_checks,
    write_report,
)
from rulem_db import config
from rulem_db import db as dbmod

DEFAULT_REPORTS = Path("reports")
_DATABASE_URL: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "rulem_database_url", default=None)


@dataclass
class RunSummary:
    """What a reconciliation run did, for the command line, the demo and the artifacts."""

    run_id: int
    plan_area: str
    status: str
    message: str
    report_path: Path | None
    files: list[FileResult] = field(default_factory=list)
    files_loaded: int = 0
    files_duplicate: int = 0
    files_quarantined: int = 0
    entries_posted: int = 0
    entries_posted_between: int = 0  # by other recomputes since the previous run (watch, CLI)
    findings: int = 0
    findings_new: int = 0
    findings_resolved: int = 0
    parcels_changed: int = 0
    changed: bool = False
    plan_required_acres: float | None = None
    plan_credit_acres: float | None = None
    plan_balance_acres: float | None = None
    previous_run_id: int | None = None

    def lines(self) -> list[str]:
        """The summary as a person reads it on a terminal."""
        if not self.previous_run_id:
            change = "first run (nothing to compare with)"
        elif self.changed:
            change = f"changes since run {self.previous_run_id}"
        else:
            change = f"nothing changed since run {self.previous_run_id}"
        head = f"run {self.run_id} ({self.plan_area}): {self.status}; {change}"
        out = [head]
        if self.files:
            out.append(f"  inbox: {self.files_loaded} loaded, {self.files_duplicate} already "
                       f"loaded, {self.files_quarantined} quarantined")
            for f in self.files:
                if f.outcome in ("quarantined", "left"):
                    out.append(f"    {f.outcome}: {f.rel}: {f.message}")
        between = (f" (and {self.entries_posted_between} since run {self.previous_run_id} by "
                   "other recomputes: rulem-db watch, rulem-db recompute)"
                   if self.entries_posted_between else "")
        out.append(f"  ledger: {self.entries_posted} entries posted{between}")
        out.append(f"  findings: {self.findings} ({self.findings_new} new, "
                   f"{self.findings_resolved} resolved)")
        out.append(f"  parcels whose balance changed: {self.parcels_changed}")
        if self.plan_balance_acres is not None:
            out.append(f"  plan: required {self.plan_required_acres:.4f} ac, credit "
                       f"{self.plan_credit_acres:.4f} ac, balance "
                       f"{self.plan_balance_acres:+.4f} ac")
        if self.report_path:
            out.append(f"  report: {self.report_path}")
        return out


def _url() -> str:
    return _DATABASE_URL.get() or config.database_url(None)


class Terminated(BaseException):
    """SIGTERM arrived while a run held the lock (a service stop, `kill PID`). A BaseException,
    like KeyboardInterrupt, so no `except Exception` on the way swallows it: the run record is
    closed as failed and the lock released on the way out."""


@contextmanager
def sigterm_raises() -> Iterator[None]:
    """While in this block, SIGTERM raises Terminated in the main thread instead of ending the
    process on the spot (Python's default), so every `finally` runs: the reader child of an
    ingest is killed, the ingest's transaction rolled back, the run record closed. Only when
    nobody else handles SIGTERM (Prefect's runner does, and closes the run the same way) and
    only in the main thread (Python delivers signals there). A second SIGTERM while closing
    is ignored; SIGKILL remains the way to end it at once."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated(f"stopped by {signal.Signals(signum).name}")

    signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def database(url: str) -> Iterator[None]:
    """Run the flows of this block against url (without making it a flow parameter)."""
    token = _DATABASE_URL.set(url)
    try:
        yield
    finally:
        _DATABASE_URL.reset(token)


def _log(message: str) -> None:
    if in_flow_run():
        get_run_logger().info(message)
    else:
        runs_logger().info(message)


def runs_logger():  # noqa: ANN201 - a logging.Logger
    import logging

    return logging.getLogger("rulem_db.flows")


def _prefect_flow_run_id() -> str | None:
    if not in_flow_run():
        return None
    from prefect.runtime import flow_run

    return str(flow_run.id) if flow_run.id else None


def _places(inbox: Path, archive: Path | None, quarantine: Path | None) -> Places:
    inbox = Path(inbox).resolve()
    return Places(inbox, Path(archive or inbox.parent / "archive").resolve(),
                  Path(quarantine or inbox.parent / "quarantine").resolve(), runs.local_day())


def ingest_items(url: str, plan: runs.PlanArea, run_id: int, places: Places,
                 settle_seconds: float = 0.0) -> list[FileResult]:
    """Ingest every inbox item in load order, one task each; never stops for one file."""
    results: list[FileResult] = []
    items = inbox_mod.scan(places.inbox, settle_seconds)
    _log(f"inbox {places.inbox}: {len(items)} item(s)")
    for item in items:
        try:
            result = call(ingest_file, url, plan.code, item, places, run_id)
        except NotRecorded as exc:  # handled and moved; only its ops.run_file row is missing
            result = exc.result
            runs_logger().error("run %s: %s", run_id, exc)
        except Exception as exc:  # a database error that outlasted the retries
            message = "left in the inbox for the next run: " + " ".join(str(exc).split())[:300]
            runs.record_file(url, run_id, item.rel, item.layer, None, "left", None,
                             str(item.path), message)
            result = FileResult(item.rel, item.layer, "left", message, str(item.path))
        _log(f"{result.outcome}: {result.rel}: {result.message}")
        results.append(result)
    return results


def _status(files: list[FileResult]) -> str:
    return "partial" if any(f.outcome in ("quarantined", "left") for f in files) else "done"


@flow(name="ingest_inbox", log_prints=True)
def ingest_inbox(inbox: str, plan_area: str | None = None, archive: str | None = None,
                 quarantine: str | None = None, settle_seconds: float = 0.0,
                 started_via: str = "api") -> RunSummary:
    """Load every file waiting in the inbox (delineations, parcels, any layer); bad files go to
    quarantine with their error report, loaded ones to the archive."""
    url = _url()
    plan = runs.plan_area(url, plan_area)
    places = _places(Path(inbox), _path(archive), _path(quarantine))
    with sigterm_raises(), runs.ReconcileLock(url, plan) as lock:
        run_id = lock.start_run("ingest_inbox", started_via, str(places.inbox),
                                _prefect_flow_run_id())
        try:
            files = ingest_items(url, plan, run_id, places, settle_seconds)
            status = _status(files)
            runs.finish(url, run_id, status, _files_message(files))
        except BaseException as exc:
            _close_failed(url, run_id, exc)
            raise
    return _summary(url, run_id, files, None)


@flow(name="nightly_reconciliation", log_prints=True)
def nightly_reconciliation(inbox: str | None = None, reports: str = str(DEFAULT_REPORTS),
                           plan_area: str | None = None, full_recompute: bool = False,
                           settle_seconds: float = 0.0, archive: str | None = None,
                           quarantine: str | None = None,
                           started_via: str = "schedule") -> RunSummary:
    """Ingest, recompute, check, compare with the previous run, report.

    By default only what changed is recomputed and checked: the ledger drains its change queue
    (plus the owners measured as of today when a dated fact took effect, sql/175) and the
    checks evaluate the permits whose inputs changed, carrying the others over (sql/285).
    full_recompute=True recomputes every owner and checks every permit (the result is the
    same; use it after restoring a backup or to prove that it is).
    """
    url = _url()
    places = _places(Path(inbox), _path(archive), _path(quarantine)) if inbox else None
    with dbmod.reusing_connections():  # one pooled session for every step, and the lock's own
        plan = runs.plan_area(url, plan_area)
        with sigterm_raises(), runs.ReconcileLock(url, plan) as lock:
            run_id = lock.start_run("nightly_reconciliation", started_via,
                                    str(places.inbox) if places else None,
                                    _prefect_flow_run_id())
            try:
                _log(f"run {run_id}: plan area {plan.code}")
                files = ingest_items(url, plan, run_id, places, settle_seconds) if places else []
                ledger = call(recompute_ledger, url, full_recompute)
                _log(f"recompute: {ledger.text}")
                call(check_ledger_totals, url)
                _read_parcels_ahead(url, run_id, plan)
                checks = call(run_rule_checks, url, plan.code, full_recompute)
                _log(f"checks: run {checks.check_run_id}, {checks.findings} findings")
                _findings_ahead(url, run_id, checks.check_run_id, plan, Path(reports))
                call(compare_with_previous_run, url, run_id, ledger.ledger_run_id,
                     checks.check_run_id)
                status = _status(files)
                message = _run_message(url, run_id, files, places is not None)
                html = call(write_report, url, run_id, Path(reports).resolve(), status,
                            message)
                runs.finish(url, run_id, status, message, str(html.parent))
            except BaseException as exc:
                _forget_parcels_ahead(url, run_id)
                _close_failed(url, run_id, exc)
                raise
        summary = _summary(url, run_id, files, html)
    _log("\n".join(summary.lines()))
    if in_flow_run():
        from flows.artifacts import publish

        try:
            publish(url, summary)
        except Exception as exc:  # the run is done and recorded; the UI copy is a courtesy
            get_run_logger().warning("could not publish the artifacts: %s", exc)
    return summary


def _read_parcels_ahead(url: str, run_id: int, plan: runs.PlanArea) -> None:
    """When the balances moved since the previous run (its report will show every parcel) of
    a plan area whose maps draw every parcel's polygon, read the parcel layer in a thread
    while the checks keep the database busy: the report takes it if the snapshot saw the
    same balances (rulem_db.reports.prefetch). A courtesy: any failure here leaves the report
    to read the parcels itself."""
    from rulem_db.reports import prefetch
    from rulem_db.reports.frames import drawn_as_vectors, parcel_count

    try:
        with dbmod.connect(url) as conn:
            # a large plan area's report reads no parcel polygons (the kept raster is
            # redrawn where parcels changed: rulem_db.reports.tiles)
            moved = prefetch.balances_moved(conn, run_id)
            vectors = moved and drawn_as_vectors(parcel_count(conn, plan.plan_area_id))
        if vectors:
            prefetch.start(url, run_id, plan.plan_area_id)
        if moved:  # a full report follows: its drawing modules load while the checks run
            threading.Thread(target=_load_drawing_modules, name="rulem-report-modules",
                             daemon=True).start()
    except Exception as exc:  # never fails the run
        runs_logger().warning("run %s: parcels not read ahead: %s", run_id, exc)


def _findings_ahead(url: str, run_id: int, check_run_id: int, plan: runs.PlanArea,
                    reports: Path) -> None:
    """When the check run is a new one (its findings are not the previous run's), read its
    findings and write their findings.gpkg in a thread while the run's snapshot is taken
    (rulem_db.reports.findings_ahead): the report takes them if they are of its check run. A
    courtesy, as the parcels' read ahead: a failure here leaves the report to do it."""
    from rulem_db.reports import findings_ahead

    try:
        if runs.previous_check_run(url, run_id) != check_run_id:
            findings_ahead.start(url, run_id, check_run_id, plan.plan_area_id,
                                 reports.resolve())
    except Exception as exc:  # never fails the run
        runs_logger().warning("run %s: findings not read ahead: %s", run_id, exc)


def _load_drawing_modules() -> None:
    """Import what a full report draws and writes with (matplotlib, geopandas, pyogrio: 1.5 s
    of a county's night when the report imported them after the checks). The report's own
    import waits for this one if it is still under way; a failure here is the report's to
    meet and name."""
    try:
        import pyogrio  # noqa: F401

        import rulem_db.reports.map  # noqa: F401
        import rulem_db.reports.tiles  # noqa: F401
    except Exception:  # the report imports them again and says what is wrong
        return


def _forget_parcels_ahead(url: str, run_id: int) -> None:
    from rulem_db.reports import findings_ahead, prefetch

    prefetch.discard(url, run_id)
    findings_ahead.discard(url, run_id)


def _path(value: str | Path | None) -> Path | None:
    return None if value in (None, "") else Path(value)


def _close_failed(url: str, run_id: int, exc: BaseException) -> None:
    """Mark the run failed; if even that fails (database gone), the next run marks it
    abandoned, and the original error is the one that propagates."""
    try:
        runs.finish(url, run_id, "failed", _one_line(exc))
    except Exception as again:  # reported, never masks the original error
        runs_logger().error("run %s: could not record the failure: %s", run_id, again)


def _one_line(exc: BaseException) -> str:
    if not isinstance(exc, Exception):  # SIGTERM (service stop), Ctrl-C, cancellation
        why = "SIGTERM" if isinstance(exc, Terminated) else type(exc).__name__
        return (f"stopped before the end ({why}); the next run completes what this one did "
                "not")
    return (" ".join(str(exc).split()) or type(exc).__name__)[:2000]


def _files_message(files: list[FileResult]) -> str:
    counts: dict[str, int] = {}
    for f in files:
        counts[f.outcome] = counts.get(f.outcome, 0) + 1
    if not files:
        return "inbox empty"
    return "inbox: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


def _run_message(url: str, run_id: int, files: list[FileResult], read_inbox: bool) -> str:
    row = runs.run_row(url, run_id)
    inbox = f"{_files_message(files)}; " if read_inbox else ""
    if not row["changed"]:
        return f"{inbox}nothing changed since the previous run"
    between = row["changes"].get("entries_posted_between") or 0
    others = f" (+{between} by other recomputes since the previous run)" if between else ""
    return (f"{inbox}{row['entries_posted']} ledger entries posted{others}; "
            f"{row['findings_new']} new and {row['findings_resolved']} resolved findings; "
            f"{row['parcels_changed']} parcels changed")


def _summary(url: str, run_id: int, files: list[FileResult], html: Path | None) -> RunSummary:
    row = runs.run_row(url, run_id)

    def num(key: str) -> Any:
        value = row.get(key)
        return float(value) if value is not None else None

    return RunSummary(
        run_id=run_id, plan_area=row["plan_area"], status=row["status"],
        message=row["message"] or "", report_path=html, files=files,
        files_loaded=row["files_loaded"] or 0, files_duplicate=row["files_duplicate"] or 0,
        files_quarantined=row["files_quarantined"] or 0,
        entries_posted=row["entries_posted"] or 0,
        entries_posted_between=row["changes"].get("entries_posted_between") or 0,
        findings=row["finding_count"] or 0,
        findings_new=row["findings_new"] or 0, findings_resolved=row["findings_resolved"] or 0,
        parcels_changed=row["parcels_changed"] or 0, changed=bool(row["changed"]),
        plan_required_acres=num("plan_required_acres"),
        plan_credit_acres=num("plan_credit_acres"), plan_balance_acres=num("plan_balance_acres"),
        previous_run_id=row["previous_run_id"])


def prefect_configured() -> bool:
    """Whether a Prefect server is configured (PREFECT_API_URL), so runs can be tracked."""
    if os.environ.get("PREFECT_API_URL"):
        return True
    try:
        from prefect.settings import PREFECT_API_URL

        return bool(PREFECT_API_URL.value())
    except Exception:  # a broken profile must not stop a reconciliation
        return False


def reconcile_now(url: str, inbox: Path | None = None, reports: Path | None = None,
                  plan_area: str | None = None, started_via: str = "api",
                  use_prefect: bool | None = None, archive: Path | None = None,
                  quarantine: Path | None = None, full: bool = False) -> RunSummary:
    """Run the nightly reconciliation once, now, and return its summary.

    use_prefect: None runs it through Prefect when a server is configured (PREFECT_API_URL), so
    it shows in the UI, and directly otherwise (no 30-second ephemeral server for a demo);
    the steps, retries and results are the same either way. full: recompute every owner and
    check every permit instead of only what changed.
    """
    # The objects alive now (mostly imported modules; Prefect's are several hundred thousand)
    # are left out of the garbage collector's full passes: one such pass over them took
    # 100-150 ms in the middle of a run, half of a quiet night's time.
    gc.freeze()
    use = prefect_configured() if use_prefect is None else use_prefect
    params = {"inbox": str(inbox) if inbox else None,
              "reports": str(reports or DEFAULT_REPORTS), "plan_area": plan_area,
              "started_via": started_via, "archive": str(archive) if archive else None,
              "quarantine": str(quarantine) if quarantine else None,
              "full_recompute": full}
    try:
        with database(url), dbmod.reusing_connections():
            if use:
                return nightly_reconciliation(**params)
            return nightly_reconciliation.fn(**params)
    except Terminated:  # the run is closed as failed; end as SIGTERM would have, 128 + 15
        raise SystemExit(128 + signal.SIGTERM) from None
