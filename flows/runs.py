"""The run record (ops.run) and the lock that lets one reconciliation run at a time.

Why a session-level advisory lock on its own connection: the lock must outlive the many
transactions of a run (each ingest, the recompute, the checks), be released by the database
if the process dies (so a crash never leaves the plan area locked), and be seen at once by a
second run, which then exits instead of waiting. The key is fixed per plan area
(sql/300_runs.sql), so runs started by the schedule, by `rulem-db reconcile` and by the demo
all exclude each other.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import socket
import time
from dataclasses import dataclass
from types import TracebackType

import sqlalchemy as sa

from rulem_db import db as dbmod

EXIT_LOCKED = 75  # EX_TEMPFAIL: try again later


@dataclass(frozen=True)
class PlanArea:
    """A plan area as the flows name it."""

    plan_area_id: int
    code: str
    name: str


class ReconcileLocked(RuntimeError):
    """Another reconciliation of the plan area holds the lock; this one did nothing."""

    exit_code = EXIT_LOCKED


def plan_area(url: str, code: str | None) -> PlanArea:
    """The plan area by code; with no code, the only one in the database (rulem_db.db.plan_area,
    as for every command: a ValueError names the plan areas present)."""
    with dbmod.connect(url) as conn:
        r = dbmod.plan_area(conn, code)
    return PlanArea(r.plan_area_id, r.code, r.name)


def holder_message(plan: PlanArea, holder: sa.Row | None) -> str:
    """One line naming the run that holds the lock, and what to do."""
    if holder is None:
        return (f"another reconciliation of plan area {plan.code} is running (it finished "
                "while this one looked for it): try again")
    if holder.run_id is not None:
        when = holder.run_started_at.isoformat(timespec="seconds")
        via = f" via {holder.started_via}" if holder.started_via else ""
        return (f"plan area {plan.code} is being reconciled by run {holder.run_id} "
                f"({holder.flow}{via}, started {when} on host {holder.host}, pid {holder.pid}; "
                f"database session {holder.backend_pid}): this run did nothing; wait for it "
                "to finish (see pub.reconciliation_run)")
    since = f", since {holder.backend_start.isoformat(timespec='seconds')}" \
        if holder.backend_start else ""
    app = f" ({holder.application_name})" if holder.application_name else ""
    return (f"plan area {plan.code} is locked by database session {holder.backend_pid}{app}"
            f"{since}, which has no run record: this run did nothing; wait for it, or end that "
            f"session with SELECT pg_terminate_backend({holder.backend_pid})")


class ReconcileLock:
    """Holds the plan area's reconciliation lock on a dedicated connection while in use."""

    def __init__(self, url: str, plan: PlanArea) -> None:
        self.url = url
        self.plan = plan
        self._engine: sa.Engine | None = None
        self._conn: sa.Connection | None = None

    def __enter__(self) -> ReconcileLock:
        from flows.retry import with_retries

        self._engine = dbmod.engine(self.url, poolclass=sa.pool.NullPool)
        try:  # a database restarting at 02:00 costs a retry, not the night
            conn = with_retries(self._engine.connect).execution_options(
                isolation_level="AUTOCOMMIT")
        except Exception:
            self._close()
            raise
        self._conn = conn
        got = conn.execute(sa.text("SELECT ops.try_reconcile_lock(:p)"),
                           {"p": self.plan.plan_area_id}).scalar()
        if not got:
            holder = self._holder(conn)
            self._close()
            raise ReconcileLocked(holder_message(self.plan, holder))
        return self

    def _holder(self, conn: sa.Connection, patience: float = 3.0) -> sa.Row | None:
        """Who holds the lock. A run takes the lock a moment before it writes its run record,
        so give the record that moment before saying there is none."""
        deadline = time.monotonic() + patience
        while True:
            holder = conn.execute(sa.text("SELECT * FROM ops.reconcile_lock_holder(:p)"),
                                  {"p": self.plan.plan_area_id}).first()
            if holder is None or holder.run_id is not None or time.monotonic() > deadline:
                return holder
            time.sleep(0.1)

    def start_run(self, flow: str, started_via: str, inbox: str | None = None,
                  prefect_flow_run_id: str | None = None) -> int:
        """Open the run record in the lock's session (so it names the session's pid)."""
        assert self._conn is not None, "start_run needs the lock"
        return int(self._conn.execute(sa.text(
            "SELECT ops.start_run(:p, :f, :v, :h, :pid, :i, :r)"),
            {"p": self.plan.plan_area_id, "f": flow, "v": started_via,
             "h": socket.gethostname(), "pid": os.getpid(), "i": inbox,
             "r": prefect_flow_run_id}).scalar_one())

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._conn is not None:
            # If the session is gone, so is the lock.
            with contextlib.suppress(sa.exc.DBAPIError):
                self._conn.execute(sa.text("SELECT ops.release_reconcile_lock(:p)"),
                                   {"p": self.plan.plan_area_id})
        self._close()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None


def record_file(url: str, run_id: int, rel: str, layer: str | None, sha: str | None,
                outcome: str, batch_id: int | None, moved_to: str | None,
                message: str | None) -> None:
    """Record what became of one inbox file."""
    with dbmod.connect(url) as conn:
        conn.execute(sa.text("SELECT ops.record_run_file(:r, :f, :l, :s, :o, :b, :m, :msg)"),
                     {"r": run_id, "f": rel, "l": layer, "s": sha, "o": outcome, "b": batch_id,
                      "m": moved_to, "msg": message})


def snapshot(url: str, run_id: int, ledger_run_id: int | None,
             check_run_id: int | None) -> None:
    """Keep what the run saw and count what changed since the previous run (in SQL)."""
    with dbmod.connect(url) as conn:
        conn.execute(sa.text("SELECT ops.snapshot_run(:r, :l, :c)"),
                     {"r": run_id, "l": ledger_run_id, "c": check_run_id})
        conn.execute(sa.text("SELECT ops.summarize_run(:r)"), {"r": run_id})


def previous_check_run(url: str, run_id: int) -> int | None:
    """The check run whose findings the previous completed run saw (None: no such run)."""
    with dbmod.connect(url) as conn:
        return conn.execute(sa.text(
            "SELECT p.check_run_id FROM ops.run r JOIN ops.run p "
            "ON p.run_id = r.previous_run_id WHERE r.run_id = :r"), {"r": run_id}).scalar()


def finish(url: str, run_id: int, status: str, message: str,
           report_path: str | None = None) -> None:
    """Close the run record."""
    with dbmod.connect(url) as conn:
        conn.execute(sa.text("SELECT ops.finish_run(:r, :s, :m, :p)"),
                     {"r": run_id, "s": status, "m": message[:2000], "p": report_path})


def run_row(url: str, run_id: int) -> dict:
    """The run record as pub.reconciliation_run shows it, with what ops.summarize_run counted
    (`changes`, e.g. the entries other recomputes posted since the previous run)."""
    with dbmod.connect(url) as conn:
        row = conn.execute(sa.text(
            "SELECT v.*, coalesce(o.changes, '{}') AS changes FROM pub.reconciliation_run v "
            "JOIN ops.run o ON o.run_id = v.run_id WHERE v.run_id = :r"),
            {"r": run_id}).mappings().one()
    return dict(row)


def local_day(tz: str = "America/Chicago") -> dt.date:
    """Today in the District's time zone (archive and report folders are named by it)."""
    from zoneinfo import ZoneInfo

    return dt.datetime.now(ZoneInfo(tz)).date()
