"""The Prefect tasks of the nightly reconciliation, each a thin call of one Python API or SQL
function (flows.api, flows.runs, rulem_db.reports.run).

Every task retries transient database errors (flows.retry) and caches nothing: each one changes
the database or the file system, so running it again must run it again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from prefect import task
from prefect.cache_policies import NO_CACHE

from flows import api, inbox, runs
from flows.retry import RETRIES, RETRY_DELAYS, Final, retry_on_transient, with_retries
from rulem_db import db as dbmod

TASK_OPTIONS = {"retries": RETRIES, "retry_delay_seconds": list(RETRY_DELAYS),
                "retry_condition_fn": retry_on_transient, "cache_policy": NO_CACHE}


@dataclass(frozen=True)
class FileResult:
    """What became of one inbox item."""

    rel: str
    layer: str | None
    outcome: str  # loaded, duplicate, quarantined, left
    message: str
    moved_to: str | None = None
    batch_id: int | None = None


@dataclass(frozen=True)
class Places:
    """Where a run's inbox items come from and go to."""

    inbox: Path
    archive: Path
    quarantine: Path
    day: dt.date


class NotRecorded(Final):
    """An inbox file was loaded or refused and moved, but its record could not be written.
    Final: a retry would look for a file that is no longer in the inbox."""

    def __init__(self, result: FileResult, cause: BaseException) -> None:
        super().__init__(f"{result.rel}: {result.outcome}, moved to {result.moved_to}, but not "
                         f"recorded: {' '.join(str(cause).split())[:300]}")
        self.result = result


@task(name="ingest file", task_run_name="ingest {item.rel}", **TASK_OPTIONS)
def ingest_file(url: str, plan_area: str, item: inbox.InboxItem, places: Places,
                run_id: int) -> FileResult:
    """Load one inbox item; archive it when loaded (or already loaded), quarantine it with its
    error report when refused. Transient database errors of the ingest propagate (and are
    retried: ingest is all or nothing, so trying again is safe); once the file has moved, its
    record is retried on its own and the task is never run again for it."""
    sha = inbox.sha256(item.path)
    outcome = api.ingest_item(url, plan_area, item)
    if outcome.status in ("loaded", "duplicate"):
        moved = inbox.move(item, places.inbox, places.archive, places.day, run_id)
        result = FileResult(item.rel, item.layer, outcome.status, outcome.message, str(moved),
                            outcome.batch_id)
    else:
        moved = inbox.move(item, places.inbox, places.quarantine, places.day, run_id)
        report = inbox.error_report(item, outcome.message, outcome.details, sha, run_id,
                                    dt.datetime.now(dt.UTC).astimezone())
        inbox.write_error_report(moved, report)
        result = FileResult(item.rel, item.layer, "quarantined", outcome.message, str(moved))
    try:
        with_retries(runs.record_file, url, run_id, item.rel, item.layer, sha, result.outcome,
                     result.batch_id, result.moved_to, result.message)
    except Exception as exc:
        raise NotRecorded(result, exc) from exc
    return result


@task(name="recompute ledger", **TASK_OPTIONS)
def recompute_ledger(url: str, full: bool = False) -> api.RecomputeOutcome:
    """Post to the ledger what the inputs now imply (nothing when nothing changed)."""
    return api.recompute(url, full=full)


class LedgerTotalsDrift(Final):
    """The kept totals (ledger.plan_total, permit_total, parcel_total) differ from the entries.
    Final: trying again reads the same totals; the cure is a full recompute, which rebuilds
    them from the entries (ledger.rebuild_totals)."""


@task(name="check ledger totals", **TASK_OPTIONS)
def check_ledger_totals(url: str) -> None:
    """Refuse to check and report on totals that disagree with the entries.

    Why: the balance views and the report read the kept totals, not the entries; a total
    corrupted by hand (or by a path that bypassed the posting trigger) would be published as
    a balance. Run after the ledger step, before the checks, so no report is written. Every
    level (plan, permit, parcel: 0.1 s on the county) every night, quiet or not: a parcel's
    total changed on a night that posts nothing would otherwise be published until the next
    posting (sql/288_nightly_totals_guard.sql).
    """
    with dbmod.connect(url) as conn:
        n = int(conn.execute(sa.text("SELECT ops.totals_drift_count(false)")).scalar_one())
    if n:
        raise LedgerTotalsDrift(
            f"ledger totals differ from the entries in {n} figures (ledger.totals_drift()); "
            "run rulem-db recompute --all")


@task(name="run rule checks", **TASK_OPTIONS)
def run_rule_checks(url: str, plan_area: str, full: bool = False) -> api.ChecksOutcome:
    """Run the Rule M checks: the permits whose inputs changed (every permit when full)."""
    return api.run_checks(url, plan_area, full)


@task(name="compare with previous run", **TASK_OPTIONS)
def compare_with_previous_run(url: str, run_id: int, ledger_run_id: int | None,
                              check_run_id: int | None) -> None:
    """Keep what this run saw and count what changed since the previous run (SQL)."""
    runs.snapshot(url, run_id, ledger_run_id, check_run_id)


@task(name="write report", **TASK_OPTIONS)
def write_report(url: str, run_id: int, reports: Path, status: str, message: str) -> Path:
    """Write the run's report folder; returns the path of its index.html."""
    from rulem_db.reports.run import write_run_report

    return write_run_report(url, run_id, reports, status, message).html
