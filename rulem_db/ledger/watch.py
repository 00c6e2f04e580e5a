"""The resident recompute service (`rulem-db watch`): keep one session, wait for the change
queue's notification, recompute what changed, wait again.

Why a resident process: a one-change recompute does 10-20 ms of work, but a new process pays
about 70 ms before any of it (authenticating, reading the catalogs, planning the ledger's
queries for the first time). A session that stays open pays that once, so each later change
costs what it computes, and the balances are current within a second of the edit's commit
instead of the next nightly run. The queue triggers NOTIFY `rulem_ledger_queue` at commit
(sql/172); this loop LISTENs, lets a burst of commits settle (`debounce`), and recomputes on
its kept connection in one transaction. A big queue (a bulk ingest, a recompute --all of
someone else) goes to `ledger.recompute(url, workers=...)` instead: several connections,
a transaction per chunk. Safe beside the nightly run and any other recompute: draining uses
FOR UPDATE SKIP LOCKED and posting locks each owner (rulem_db/ledger/__init__.py).

It also recomputes when it starts (what was queued while it was away) and when the date
changes (dated facts take effect by the day: sql/175), and it survives the database going
away: it reconnects every `retry_seconds` and then drains what waits.
"""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

import psycopg2
import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db import ledger

CHANNEL = "rulem_ledger_queue"
POLL_SECONDS = 0.5   # how often the loop looks at its stop flag when idle
DATE_SECONDS = 60.0  # how often it asks the database whether the date changed
BIG_QUEUE = 500      # queue rows above which the workers' path is used (one chunk is 100)
NOTIFIES = ("SELECT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'ledger_queue_notify' "
            "AND tgrelid = to_regclass('ledger.change_queue'))")


@dataclass
class WatchEvent:
    """What the watcher tells its caller: a recompute it made, or a problem it survived."""

    at: datetime
    why: str                      # start, change, new day
    summary: ledger.RecomputeSummary | None = None
    error: str | None = None

    def __str__(self) -> str:
        stamp = f"{self.at:%Y-%m-%d %H:%M:%S}"
        if self.error:
            return f"{stamp} {self.why}: {self.error}"
        return f"{stamp} {self.why}: {self.summary}"


def print_event(event: WatchEvent) -> None:
    print(event, flush=True)


class LedgerWatch:
    """Recompute the ledger whenever the change queue is notified, until `stop` is set.

    `on_event` gets a WatchEvent after each recompute and each survived error (default:
    print a line). `debounce`: seconds without a further notification before recomputing
    (a burst of commits becomes one run), never waiting longer than `settle_max` in all.
    """

    def __init__(self, url: str, *, debounce: float = 0.25, settle_max: float = 5.0,
                 workers: int = ledger.DEFAULT_WORKERS, big_queue: int = BIG_QUEUE,
                 retry_seconds: float = 5.0,
                 on_event: Callable[[WatchEvent], None] = print_event,
                 stop: threading.Event | None = None) -> None:
        self.url = url
        self.debounce = debounce
        self.settle_max = settle_max
        self.workers = workers
        self.big_queue = big_queue
        self.retry_seconds = retry_seconds
        self.on_event = on_event
        self.stop = stop or threading.Event()
        self.listening = threading.Event()  # set while a session listens (tests wait on it)
        self.backend_pid: int | None = None  # the listening session's server process

    def run(self) -> None:
        """Listen and recompute until stopped; a lost connection is reopened."""
        eng = dbmod.engine(self.url, pool_size=1, max_overflow=0)
        try:
            while not self.stop.is_set():
                try:
                    with eng.connect() as conn:
                        self._serve(conn)
                except (sa.exc.DBAPIError, SessionLost) as exc:
                    self.listening.clear()
                    if isinstance(exc, sa.exc.DBAPIError) and not (
                            exc.connection_invalidated or _is_disconnect(exc)):
                        raise
                    self._tell("connection lost", error=(
                        f"{_one_line(exc)}; reconnecting in {self.retry_seconds:g} s"))
                    eng.dispose()
                    self.stop.wait(self.retry_seconds)
        finally:
            self.listening.clear()
            eng.dispose()

    def _serve(self, conn: sa.Connection) -> None:
        """One session: LISTEN, drain what waits, then recompute on each notification."""
        with conn.begin():
            if not conn.execute(sa.text(NOTIFIES)).scalar_one():
                raise RuntimeError("this database's change queue notifies nobody (no trigger "
                                   "ledger_queue_notify): run rulem-db db migrate first")
            conn.exec_driver_sql(f"LISTEN {CHANNEL}")
        self.backend_pid = conn.connection.dbapi_connection.get_backend_pid()
        self.listening.set()
        self._recompute(conn, "start")
        today, looked = self._today(conn), time.monotonic()
        while not self.stop.is_set():
            if self._notified(conn, POLL_SECONDS):
                self._settle(conn)
                self._recompute(conn, "change")
            elif time.monotonic() - looked >= DATE_SECONDS:
                looked = time.monotonic()
                if (now := self._today(conn)) != today:
                    today = now
                    self._recompute(conn, "new day")

    @staticmethod
    def _today(conn: sa.Connection) -> date:
        """The database's date (ledger.enqueue_dated measures by it, in the session's time
        zone, which need not be this process's). In its own transaction: notifications
        arrive only between transactions."""
        with conn.begin():
            return conn.execute(sa.text("SELECT current_date")).scalar_one()

    def _notified(self, conn: sa.Connection, timeout: float) -> bool:
        """Whether another session notified the channel within `timeout` seconds. Our own
        notifications (a run that queued dated facts) do not count: that run drained them."""
        pg = conn.connection.dbapi_connection
        try:
            if not pg.notifies and select.select([pg], [], [], max(timeout, 0))[0]:
                pg.poll()
        except psycopg2.Error as exc:  # raw driver call: SQLAlchemy did not see it fail
            conn.invalidate(exc)
            raise SessionLost(_one_line(exc)) from exc
        found = any(n.pid != self.backend_pid for n in pg.notifies)
        pg.notifies.clear()
        return found

    def _settle(self, conn: sa.Connection) -> None:
        """Wait until no notification came for `debounce` seconds (at most settle_max)."""
        deadline = time.monotonic() + self.settle_max
        while self.debounce > 0 and not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0 or not self._notified(conn, min(self.debounce, left)):
                return

    def _recompute(self, conn: sa.Connection, why: str) -> None:
        """Recompute what waits: on the kept session when it is small, with the workers when
        it is big, not at all when another session drained a change's rows already. A failed
        recompute leaves the queue as it was and a failed run on record (the kept session's
        run is rolled back with its work, so it is recorded anew)."""
        summary, waiting = None, 0
        try:
            with conn.begin():
                waiting = conn.execute(sa.text(ledger.WAITING)).scalar_one()
                if waiting <= self.big_queue and (waiting or why != "change"):
                    summary = ledger.recompute(conn)
            if waiting > self.big_queue:
                summary = ledger.recompute(self.url, workers=self.workers)
        except sa.exc.DBAPIError as exc:
            if exc.connection_invalidated or _is_disconnect(exc):
                raise
            self._failed(conn, why, exc, recorded=waiting > self.big_queue)
            return
        if summary is not None:  # None: another session drained what notified us
            self._tell(why, summary=summary)

    def _failed(self, conn: sa.Connection, why: str, exc: Exception, recorded: bool) -> None:
        """Say that a recompute failed, and record it as a failed run unless the workers'
        path did (ledger.recompute closes its own run as failed)."""
        message = _one_line(exc)
        run = "its run closed as failed"
        if not recorded:
            with conn.begin():
                run_id = conn.execute(sa.text("SELECT ledger.start_run('queue', 1)")
                                      ).scalar_one()
                conn.execute(sa.text("SELECT ledger.finish_run(:r, 'failed', :m)"),
                             {"r": run_id, "m": message[:500]})
            run = f"failed run {run_id} recorded"
        self._tell(why, error=f"recompute failed ({run}): {message}; the queue keeps what "
                              "waits for the next change, start or nightly run")
        self.stop.wait(self.retry_seconds)

    def _tell(self, why: str, **kw) -> None:  # noqa: ANN003
        self.on_event(WatchEvent(at=datetime.now(), why=why, **kw))


class SessionLost(Exception):
    """The listening session died while waiting (server restart, terminated backend)."""


def _is_disconnect(exc: sa.exc.DBAPIError) -> bool:
    """A connection-level failure (server restart, terminated backend, network, a refused
    connection), not a deadlock, serialization failure or cancelled statement (psycopg2
    makes those OperationalErrors too)."""
    from psycopg2 import extensions

    return (isinstance(exc.orig, psycopg2.OperationalError | psycopg2.InterfaceError)
            and not isinstance(exc.orig, extensions.TransactionRollbackError
                               | extensions.QueryCanceledError))


def _one_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    return " ".join(str(orig).split())[:300] or type(exc).__name__
