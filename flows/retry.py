"""Retries on transient database errors, the same with or without a Prefect engine.

Why: the nightly job runs unattended; a database restart, a failover or a deadlock at 02:00
must cost a retry, not a night. Only errors that can pass by themselves are retried
(OperationalError: lost or refused connections, serialization failures and deadlocks, which
psycopg2 and SQLAlchemy both class as operational). A bad file or a bug fails at once.

Tasks are called through `call()`: inside a Prefect flow run it submits the task (Prefect
retries it, and the UI shows each attempt); outside one (`rulem-db reconcile` without a Prefect
server, tests) it runs the task's function with the same retry policy, so the behaviour does not
depend on how the flow was started.

The policy (3 retries after 5, 30 and 120 s) can be set per installation with
RULEM_TASK_RETRIES and RULEM_TASK_RETRY_DELAYS (seconds, comma-separated; the last delay repeats),
read when the flows are imported: a site whose database restarts slowly lengthens the delays,
and the end-to-end test shortens them so a run made to fail fails in seconds, not minutes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_RETRIES = 3
DEFAULT_RETRY_DELAYS: tuple[float, ...] = (5.0, 30.0, 120.0)
RETRIES_VARIABLE = "RULEM_TASK_RETRIES"
DELAYS_VARIABLE = "RULEM_TASK_RETRY_DELAYS"


def retries_from(value: str | None) -> int:
    """The number of retries RULEM_TASK_RETRIES asks for (default 3); a bad value is refused in
    one line naming the variable, as a silent default would hide a typo until a night fails."""
    if value is None or not value.strip():
        return DEFAULT_RETRIES
    try:
        retries = int(value)
    except ValueError:
        retries = -1
    if retries < 0:
        raise ValueError(f"{RETRIES_VARIABLE}={value!r}: give a whole number of retries, 0 or "
                         "more")
    return retries


def delays_from(value: str | None) -> tuple[float, ...]:
    """The delays RULEM_TASK_RETRY_DELAYS asks for (seconds, comma-separated; default 5,30,120)."""
    if value is None or not value.strip():
        return DEFAULT_RETRY_DELAYS
    try:
        delays = tuple(float(v) for v in value.split(","))
    except ValueError:
        delays = (-1.0,)
    if any(d < 0 for d in delays):
        raise ValueError(f"{DELAYS_VARIABLE}={value!r}: give seconds, comma-separated (e.g. "
                         "5,30,120)")
    return delays


RETRIES = retries_from(os.environ.get(RETRIES_VARIABLE))
RETRY_DELAYS: tuple[float, ...] = delays_from(os.environ.get(DELAYS_VARIABLE))

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
