"""A test that runs past its time limit fails, and the run goes on (pytest-timeout's timer).

Why our own timer: pytest-timeout's two methods both fail us. The thread method ends the whole
worker process, and pytest-xdist (--dist loadfile) then lost the rest of that module's tests
and waited for them for ever: CI hung until its own 90-minute limit. The signal method raises
in the test, but only once the main thread runs Python again, and a test waiting on a SQL
statement that never ends (a PL/pgSQL loop, a lock) is in C inside libpq.

So on time-out this prints every thread's stack, cancels the statements running in this
process's test databases (their names carry its pid: rulem_t_<pid>_<n>, rulem_demo_<pid>, ...),
which returns the waiting call with an error; pytest's Failed is raised in the main thread
through SIGALRM, sent before the cancel. The test fails with its stack; the worker lives and
takes the next test.

Hooks registered by tests/conftest.py; pytest-timeout calls them in place of its own methods.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from typing import Any

import pytest
import sqlalchemy as sa

_TIMER = pytest.StashKey[threading.Timer]()
_PREVIOUS_HANDLER = pytest.StashKey[Any]()
_CANCEL_OWN_BACKENDS = """
SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND state <> 'idle' AND datname ~ :pattern
"""


def _admin_url() -> str | None:
    """The admin URL of the test cluster (None when it is not known here)."""
    url = os.environ.get("RULEM_TEST_ADMIN_URL")
    if url:
        return url
    try:
        from rulem_db.local import cluster

        return cluster.ensure_embedded().admin_url
    except Exception:  # noqa: BLE001 - the timer never raises from its thread
        return None


def cancel_own_statements(pid: int) -> int:
    """Cancels the statements running in the test databases of process `pid`; returns how
    many were asked to stop (0 when the cluster cannot be reached)."""
    url = _admin_url()
    if url is None:
        return 0
    engine = sa.create_engine(sa.make_url(url).set(database="postgres"),
                              poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return int(conn.execute(sa.text(_CANCEL_OWN_BACKENDS),
                                    {"pattern": rf"_{pid}(_|$)"}).scalar_one())
    except Exception as exc:  # noqa: BLE001 - reported, the signal still fails the test
        print(f"time limit: could not cancel the test's statements: {exc}", file=sys.stderr)
        return 0
    finally:
        engine.dispose()


def _expire(timeout: float) -> None:
    """On the timer's thread: stacks, fail the main thread, then cancel the database work.

    The signal goes first: a main thread waiting in libpq runs its handler only when the
    cancelled statement returns, so Failed is raised in the test's own frame (its stack shows
    the statement). Cancelling first let the test's error reach pytest's hooks before the
    signal came, and Failed was raised in pytest-timeout's teardown instead, without the stack.
    """
    print(f"\ntime limit: the test ran past {timeout:g} s; the stacks of its threads:",
          file=sys.stderr, flush=True)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGALRM)
    cancelled = cancel_own_statements(os.getpid())
    print(f"time limit: cancelled {cancelled} running statement(s) in this process's test "
          "databases", file=sys.stderr, flush=True)


@pytest.hookimpl
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> bool:
    timeout = float(settings.timeout or 0)
    if timeout <= 0:
        return True

    def fail(signum: int, frame: Any) -> None:
        pytest.fail(f"Timeout: the test ran past {timeout:g} s (stacks above)", pytrace=True)

    item.stash[_PREVIOUS_HANDLER] = signal.signal(signal.SIGALRM, fail)
    timer = threading.Timer(timeout, _expire, args=(timeout,))
    timer.name = "rulem-time-limit"
    timer.daemon = True
    timer.start()
    item.stash[_TIMER] = timer
    return True


@pytest.hookimpl
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool:
    timer = item.stash.get(_TIMER, None)
    if timer is not None:
        timer.cancel()
        timer.join()
        del item.stash[_TIMER]
    if _PREVIOUS_HANDLER in item.stash:
        signal.signal(signal.SIGALRM, item.stash[_PREVIOUS_HANDLER])
        del item.stash[_PREVIOUS_HANDLER]
    return True
