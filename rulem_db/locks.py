"""Say what a writer waits for when it waits on a lock.

Why: the writers take locks that only they may take (advisory locks are the writer roles'
after sql/superuser/harden.sql; row locks need the right to write), but two writers can still
meet: an ingest of a layer waits for another ingest of the same layer, a recompute for the
one that holds an owner. A writer that waits in silence looks hung. This watchdog asks the
database, from a connection of its own, whom this session waits for once it has waited a few
seconds, and says so on stderr (again every minute while it still waits).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

FIRST_NOTICE_SECONDS = 5.0
REPEAT_SECONDS = 60.0

BLOCKERS = sa.text("""
SELECT a.pid, a.usename, a.application_name, a.backend_start, a.xact_start,
       (SELECT l.locktype FROM pg_locks l WHERE l.pid = :me AND NOT l.granted LIMIT 1) AS lock
FROM unnest(pg_blocking_pids(:me)) AS b(pid)
JOIN pg_stat_activity a ON a.pid = b.pid
ORDER BY a.pid
""")


def describe(rows: list[sa.Row], what: str) -> str | None:
    """One line naming the sessions this one waits for (None: it waits for nobody)."""
    if not rows:
        return None
    lock = rows[0].lock or "a lock"
    holders = "; ".join(
        f"database session {r.pid} (user {r.usename}"
        + (f", {r.application_name}" if r.application_name else "")
        + (f", in a transaction since {r.xact_start:%Y-%m-%d %H:%M:%S}" if r.xact_start else "")
        + ")" for r in rows)
    return (f"waiting for {what} ({lock} lock), held by {holders}; it goes on when that "
            "finishes")


@contextmanager
def reporting_wait(conn: sa.Connection, what: str,
                   say: Callable[[str], None] | None = None,
                   first: float = FIRST_NOTICE_SECONDS,
                   repeat: float = REPEAT_SECONDS) -> Iterator[None]:
    """Run the block; if this connection is still waiting for a lock after `first` seconds,
    say what it waits for and who holds it. Costs a thread when the block is quick."""
    emit = say or (lambda line: print(f"rulem-db: {line}", file=sys.stderr, flush=True))
    # asked of the driver, not the server: no round trip, and no transaction opened
    me = conn.connection.dbapi_connection.get_backend_pid()
    url = conn.engine.url
    done = threading.Event()

    def watch() -> None:
        delay = first
        eng: sa.Engine | None = None
        try:
            while not done.wait(delay):
                if eng is None:
                    eng = sa.create_engine(url, poolclass=NullPool)
                with eng.connect() as other:
                    line = describe(other.execute(BLOCKERS, {"me": me}).all(), what)
                if line and not done.is_set():
                    emit(line)
                delay = repeat
        except sa.exc.SQLAlchemyError:
            pass  # the watchdog only informs: a failure to ask is not the writer's failure
        finally:
            if eng is not None:
                eng.dispose()

    thread = threading.Thread(target=watch, name="rulem-lock-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)
