"""The rule checks' Python API: run them for a plan area (or one permit) and read what they
found.

Why so little here: the database is the engine. Every check is a SQL function (sql/200-299,
docs/checks.md) and `checks.run_checks` records the run, the findings and an outcome per permit
and check; this module resolves names (plan area code, permit number) to ids, calls it, and
reads `pub.finding` back. The CLI (`rulem-db check`), the flows and the demo call it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from rulem_db import db as dbmod


class CheckError(Exception):
    """A request the checks cannot serve as asked (unknown permit, no plan boundary, ...)."""


@dataclass
class CheckSummary:
    """What a check run did: its runs (one per plan area) and what they found."""

    run_ids: list[int] = field(default_factory=list)
    plan_areas: list[str] = field(default_factory=list)
    permits: int = 0
    findings: int = 0
    errors: int = 0
    warnings: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # how incremental runs went

    @property
    def run_id(self) -> int | None:
        """The run, when one plan area was checked."""
        return self.run_ids[0] if len(self.run_ids) == 1 else None

    def __str__(self) -> str:
        runs = ", ".join(str(r) for r in self.run_ids)
        notes = "".join(f"; {n}" for n in self.notes)
        return (f"run {runs}: {self.permits} permits checked, {self.findings} findings "
                f"({self.errors} errors, {self.warnings} warnings){notes} in "
                f"{self.seconds:.2f} s")


@contextmanager
def _connection(url_or_conn: str | sa.Connection) -> Iterator[sa.Connection]:
    """The caller's connection as is (its transaction decides), or a new one that commits."""
    if isinstance(url_or_conn, sa.Connection):
        yield url_or_conn
    else:
        with dbmod.connect(url_or_conn) as conn:
            yield conn


def _plan_areas(conn: sa.Connection, plan_area: str | None) -> list[tuple[int, str]]:
    """The plan areas to check: the one named, else every one with a CWMP boundary."""
    if plan_area is not None:
        row = conn.execute(sa.text("SELECT plan_area_id, code FROM core.plan_area "
                                   "WHERE code = :c"), {"c": plan_area}).first()
        if row is None:
            raise CheckError(f"unknown plan area {plan_area!r}: see rulem-db db status")
        return [(row.plan_area_id, row.code)]
    rows = conn.execute(sa.text(
        "SELECT pa.plan_area_id, pa.code FROM core.plan_area pa WHERE EXISTS ("
        "SELECT 1 FROM core.cwmp_area c WHERE c.plan_area_id = pa.plan_area_id "
        "AND c.valid_to IS NULL) ORDER BY pa.plan_area_id")).all()
    if not rows:
        raise CheckError("no plan area has a CWMP area boundary: ingest the cwmp_area layer "
                         "first (rulem-db ingest cwmp_area FILE)")
    return [(r.plan_area_id, r.code) for r in rows]


def _permit(conn: sa.Connection, permit_no: str,
            areas: list[tuple[int, str]]) -> tuple[int, int]:
    """(plan_area_id, permit_id) of a current permit, searched in the given plan areas."""
    rows = conn.execute(sa.text(
        "SELECT p.plan_area_id, p.permit_id FROM core.permit p "
        "WHERE p.permit_no = :n AND p.valid_to IS NULL AND p.plan_area_id = ANY(:pa)"),
        {"n": permit_no, "pa": [a for a, _ in areas]}).all()
    if not rows:
        raise CheckError(f"no current permit {permit_no!r}"
                         + (f" in plan area {areas[0][1]}" if len(areas) == 1 else ""))
    if len(rows) > 1:
        raise CheckError(f"permit {permit_no!r} exists in {len(rows)} plan areas: name one "
                         f"with --plan-area")
    return rows[0].plan_area_id, rows[0].permit_id


def bring_ledger_up_to_date(url_or_conn: str | sa.Connection) -> str | None:
    """Recompute what waits for the ledger before the checks read it; returns what was done,
    in words, or None when the ledger was up to date.

    Why here and not only in the database: 7(b) reads the posted ledger (docs/checks.md, "A
    fresh ledger"), and the database's own step (checks.bring_ledger_up_to_date, sql/282)
    recomputes inside the check run's transaction with one worker, holding each recomputed
    owner's lock until the run ends. Given a URL, the recompute here runs first with its
    workers and commits per chunk (rulem_db.ledger.recompute); given a connection, it joins
    the caller's transaction. Either way the check run then finds nothing waiting."""
    from rulem_db import ledger

    try:
        with _connection(url_or_conn) as conn:
            behind = conn.execute(sa.text("SELECT checks.ledger_behind()")).scalar()
            if behind is None:
                return None
            if isinstance(url_or_conn, sa.Connection):
                done = ledger.recompute(conn)
        if not isinstance(url_or_conn, sa.Connection):
            done = ledger.recompute(url_or_conn)
    except sa.exc.DBAPIError as exc:
        message = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise CheckError(message) from exc
    return (f"ledger brought up to date first by recompute run {done.run_id} "
            f"({done.entries} entries posted): {behind}")


def run_checks(url_or_conn: str | sa.Connection, permit_no: str | None = None,
               plan_area: str | None = None, since_last: bool = False,
               workers: int = 1) -> CheckSummary:
    """Run every Rule M check and record the run(s).

    Every plan area with a CWMP boundary (or the one named), every permit (or the one named).
    The ledger is brought up to date first (bring_ledger_up_to_date): 7(b) is never judged
    with an edit still waiting in the change queue. since_last (plan-wide only): evaluate
    only the permits whose inputs changed since the plan area's latest plan-wide run and
    carry the rest over (sql/285); when nothing changed, that run stands and no run is
    recorded. With a URL the run commits on its own; with a connection it joins the caller's
    transaction. workers (a URL, plan-wide): evaluate the permits on that many sessions at
    once (rulem_db.checks.parallel), the run the same.
    """
    started = time.perf_counter()
    summary = CheckSummary()
    with _connection(url_or_conn) as conn:  # what to check, refused before anything is done
        areas = _plan_areas(conn, plan_area)
        targets: list[tuple[int, int | None]] = [(a, None) for a, _ in areas]
        if permit_no is not None:
            pa, pid = _permit(conn, permit_no, areas)
            targets = [(pa, pid)]
            areas = [a for a in areas if a[0] == pa]
    fresh = bring_ledger_up_to_date(url_or_conn)
    if fresh:
        summary.notes.append(fresh)
    with _connection(url_or_conn) as conn:
        for pa, pid in targets:
            try:
                with conn.begin_nested():
                    base = _latest_plan_wide_run(conn, pa) if since_last and pid is None \
                        else None
                    if workers > 1 and pid is None and isinstance(url_or_conn, str):
                        from rulem_db.checks import parallel

                        run_id = parallel.run_plan_wide(url_or_conn, pa, base, workers)
                    elif base is None:
                        run_id = conn.execute(sa.text("SELECT checks.run_checks(:pa, :p)"),
                                              {"pa": pa, "p": pid}).scalar_one()
                    else:
                        run_id = conn.execute(sa.text(
                            "SELECT checks.run_checks_since(:pa, :b)"),
                            {"pa": pa, "b": base}).scalar_one()
            except sa.exc.DBAPIError as exc:
                message = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
                raise CheckError(message) from exc
            row = conn.execute(sa.text(
                "SELECT permit_count, finding_count, error_count, warning_count, base_run_id, "
                "rechecked_count, rechecked_why ->> 'all' AS why_all "
                "FROM checks.run WHERE run_id = :r"), {"r": run_id}).one()
            if since_last and pid is None:
                summary.notes.append(_incremental_note(run_id, base, row))
            summary.run_ids.append(run_id)
            summary.permits += row.permit_count or 0
            summary.findings += row.finding_count or 0
            summary.errors += row.error_count or 0
            summary.warnings += row.warning_count or 0
        summary.plan_areas = [code for _, code in areas]
    summary.seconds = time.perf_counter() - started
    return summary


def _incremental_note(run_id: int, base: int | None, row: sa.Row) -> str:
    """How an incremental check run went, in words."""
    if run_id == base:
        return f"nothing the checks read changed since run {base}: its results stand"
    if row.base_run_id is not None:
        return (f"{row.rechecked_count} permit(s) evaluated again, the others' results carried "
                f"over from run {row.base_run_id}")
    return f"every permit evaluated ({row.why_all or 'no earlier run'})"


def _latest_plan_wide_run(conn: sa.Connection, plan_area_id: int) -> int | None:
    """The plan area's latest finished plan-wide check run, the base of an incremental one."""
    return conn.execute(sa.text(
        "SELECT max(run_id) FROM checks.run WHERE plan_area_id = :pa AND permit_id IS NULL "
        "AND finished_at IS NOT NULL"), {"pa": plan_area_id}).scalar()


# finding_id first: the ID a clerk reviews the finding by (rulem-db finding ack|waive|note|
# reopen ID), the same one the map and the reports show (docs/checks.md, "Finding review").
FINDING_COLUMNS = ("finding_id", "plan_area", "permit_no", "paragraph", "check_code",
                   "severity", "measured_value", "limit_value", "unit", "parcel_pin",
                   "review_state", "message")


def findings(url_or_conn: str | sa.Connection, permit_no: str | None = None,
             plan_area: str | None = None) -> list[dict[str, Any]]:
    """Current findings (pub.finding), by permit and then in the rule's order."""
    with _connection(url_or_conn) as conn:
        rows = conn.execute(sa.text(
            f"SELECT {', '.join('f.' + c for c in FINDING_COLUMNS)} FROM pub.finding f "
            "WHERE (CAST(:n AS text) IS NULL OR f.permit_no = :n) "
            "AND (CAST(:pa AS text) IS NULL OR f.plan_area = :pa) "
            "ORDER BY f.plan_area, f.permit_no NULLS LAST, f.sort_order, f.parcel_pin, "
            "f.finding_id"), {"n": permit_no, "pa": plan_area}).mappings().all()
    return [dict(r) for r in rows]
