"""Retries on transient database errors, the same with or without a Prefect engine.

Why: the nightly job runs unattended; a database restart, a failover or a deadlock at 02:00
must cost a retry, not a night. Only errors that can pass by themselves are retried
(OperationalError: lost or refused connections, serialization failures and deadlocks, which
psycopg2 and SQLAlchemy both class as operational). A bad file or a bug fails at once.

Tasks are called through `call()`: inside a Prefect flow run it submits the task (Prefect
retries it, and the UI shows each attempt); outside one (`rulem-db reconcile` without a Prefect
server, tests) it runs the task's function with the same retry policy, so the behaviour does not
depend on how the flow was started.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

RETRIES = 3
RETRY_DELAYS: tuple[float, ...] = (5.0, 30.0, 120.0)

log = logging.getLogger("rulem_db.flows")


class Final(Exception):
    """An error that must not be retried, whatever caused it (trying again would repeat work
    that was done, such as moving a file)."""


def is_transient(exc: BaseException | None) -> bool:
    """Whether an error may pass if tried again: an OperationalError anywhere in its chain
    (also as the context of an error raised while handling it), unless the error is Final."""
    import psycopg2
    import sqlalchemy.exc

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, Final):
            return False
        if isinstance(exc, sqlalchemy.exc.OperationalError | psycopg2.OperationalError):
            return True
        if isinstance(exc, sqlalchemy.exc.DBAPIError) and exc.connection_invalidated:
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def retry_on_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect `retry_condition_fn`: retry a failed task run only for a transient error."""
    try:
        state.result()
    except Exception as exc:  # the task's exception, re-raised by result()
        return is_transient(exc)
    return False


def in_flow_run() -> bool:
    """Whether we run inside a Prefect flow run (so tasks are tracked and retried by Prefect)."""
    try:
        from prefect.context import FlowRunContext
    except ImportError:  # pragma: no cover - prefect is a dependency
        return False
    return FlowRunContext.get() is not None


def with_retries(fn: Callable[..., T], *args: Any, retries: int = RETRIES,
                 delays: Sequence[float] = RETRY_DELAYS,
                 sleep: Callable[[float], None] = time.sleep, **kwargs: Any) -> T:
    """Call fn, again after a delay on a transient database error, at most `retries` times."""
    attempt = 0
    while True:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if attempt >= retries or not is_transient(exc):
                raise
            delay = delays[min(attempt, len(delays) - 1)] if delays else 0.0
            attempt += 1
            log.warning("%s: transient database error (%s); retry %d of %d in %.0f s",
                        getattr(fn, "__name__", "task"), " ".join(str(exc).split())[:200],
                        attempt, retries, delay)
            sleep(delay)


def call(task: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a Prefect task: through Prefect inside a flow run, else directly with retries."""
    if in_flow_run():
        return task(*args, **kwargs)
    return with_retries(task.fn, *args, retries=task.retries,
                        delays=_delays(task.retry_delay_seconds), **kwargs)


def _delays(value: Any) -> tuple[float, ...]:
    if value is None:
        return ()
    if isinstance(value, int | float):
        return (float(value),)
    return tuple(float(v) for v in value)
