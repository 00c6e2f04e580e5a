"""The three steps the flows orchestrate, each behind one small function: ingest
(etl.ingest.ingest), the ledger recompute (rulem_db.ledger.recompute) and the rule checks
(rulem_db.checks.run_checks).

Why a module of adapters: those APIs are owned by other modules and evolve; the flows depend
on exactly the calls below and on nothing else of theirs, so a change of theirs is a change
here only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from flows.inbox import InboxItem
from flows.retry import is_transient


@dataclass
class IngestOutcome:
    """What ingesting one inbox item did: loaded, duplicate, or refused (with the reasons)."""

    status: str  # loaded, duplicate, refused
    message: str
    batch_id: int | None = None
    details: list[str] = field(default_factory=list)


def ingest_item(url: str, plan_area: str, item: InboxItem) -> IngestOutcome:
    """Ingest one inbox item with etl.ingest; a refusal comes back as status 'refused'.

    Transient database errors are raised (the task retries them); every other error is the
    file's: ingest is all or nothing, so the database is as it was and the file is refused.
    """
    if item.problem:
        return IngestOutcome("refused", item.problem)
    from etl import ingest as ingest_mod
    from etl.problems import IngestRefused

    opts = item.options
    try:
        result = ingest_mod.ingest(
            url, item.layer or "", item.path, crs=opts.get("crs"), mapping=opts.get("mapping"),
            permit=opts.get("permit"), study_area=opts.get("study_area"),
            skip_bad_features=bool(opts.get("skip_bad_features", False)),
            source_layer=opts.get("source_layer"), records=bool(opts.get("records", False)),
            delineation=opts.get("delineation"), plan_area=plan_area)
    except Exception as exc:
        if is_transient(exc):
            raise
        details = exc.lines() if isinstance(exc, IngestRefused) else []
        message = " ".join(str(exc).split()) or type(exc).__name__
        return IngestOutcome("refused", message, details=details)
    notes = [n.line() for n in getattr(result, "notes", [])]
    message = "; ".join(m for m in (result.message, result.unmapped_line) if m)
    return IngestOutcome(result.status, message, result.batch_id, notes)


@dataclass
class RecomputeOutcome:
    """The ledger recompute of a run: its ledger.run id and what it posted."""

    ledger_run_id: int
    entries: int
    reversals: int
    text: str


def recompute(url: str, full: bool = False) -> RecomputeOutcome:
    """Bring the ledger up to date (rulem_db.ledger.recompute): the change queue, plus the
    owners measured as of today when a dated fact took effect; full=True queues every owner."""
    from rulem_db import ledger

    summary = ledger.recompute(url, all=full)
    return RecomputeOutcome(summary.run_id, summary.entries, summary.reversals, str(summary))


@dataclass
class ChecksOutcome:
    """The rule check run of a run: its checks.run id and how many findings it recorded."""

    check_run_id: int | None
    findings: int
    text: str


def run_checks(url: str, plan_area: str, full: bool = False,
               workers: int | None = None) -> ChecksOutcome:
    """Run the rule checks of the plan area (rulem_db.checks.run_checks, which records the run,
    its findings and the outcome per permit and check): only the permits whose inputs changed
    since the last plan-wide run, the others carried over; full=True evaluates every permit.
    workers: sessions evaluating at once, as many as the recompute's (ledger.DEFAULT_WORKERS)
    when not given."""
    from rulem_db import checks, ledger

    summary = checks.run_checks(url, plan_area=plan_area, since_last=not full,
                                workers=ledger.DEFAULT_WORKERS if workers is None else workers)
    return ChecksOutcome(summary.run_id, summary.findings, str(summary))
