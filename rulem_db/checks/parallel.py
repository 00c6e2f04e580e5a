"""A plan-wide check run split over several database sessions (`--workers`), as the ledger's
recompute drains its queue with several (rulem_db.ledger).

Why: the checks of different permits are independent, and a server with more cores finishes
sooner when each core evaluates a share of them. The run stays one transaction of its own
session, which decides what to evaluate (sql/285 checks.plan_checks_since), opens the run,
records every evaluation and closes it: a failed run leaves nothing half-written. The worker
sessions only evaluate, each in one transaction on the snapshot the run's session exported
(`pg_export_snapshot`: every worker reads exactly what the run read), and leave their
evaluations in checks.evaluation_stage under the run's stage id (sql/280); the run's session
takes them back (checks.take_staged). The permits go to the workers in a few chunks, each
every n-th permit (chunks), so that the workers finish together.

The result is the run one session would make (tests/checks/test_checks_workers.py compares them row
for row): the same permits, the same evaluations, the same findings and outcomes.
"""

from __future__ import annotations

import json
import queue
import threading
import uuid
from dataclasses import dataclass

import sqlalchemy as sa

from rulem_db import db as dbmod

MIN_CHUNK = 25  # permits per call at least: each call plans its two dozen check statements
CHUNKS_PER_WORKER = 2  # a worker slowed by other load leaves its second chunk to another


@dataclass
class Todo:
    """What a run evaluates: plan 'full' (every permit and the District cases) or 'some'
    (permit_ids, and the District cases when district), carrying the rest over from base."""

    plan: str
    why: str | None
    permit_ids: list[int] | None
    district: bool
    base: int | None


def chunks(ids: list[int], workers: int) -> list[list[int]]:
    """CHUNKS_PER_WORKER chunks per worker (fewer when that would leave fewer than MIN_CHUNK
    permits in one), each taking every n-th permit, so that every chunk is a sample of the
    whole plan area.

    Why not chunks of neighbouring permits, big first and small last: a call costs about
    0.5 s before its first permit at state size (two dozen statements planned, each check's
    plan-wide inputs read once per call), and the permits' cost is not spread evenly by id
    (the state benchmark's last quarter by id cost 3.4 times its first). Guided chunks made
    23 calls there, the last ones holding the dearest permits: two workers took 16.7 s to
    evaluate what one session evaluates in 18.6 s, and take 11.1 s this way."""
    n = max(1, min(max(workers, 1) * CHUNKS_PER_WORKER, len(ids) // MIN_CHUNK))
    return [part for part in (ids[k::n] for k in range(n)) if part]


def _evaluate_on(eng: sa.Engine, snapshot: str, stage: uuid.UUID, plan_area_id: int,
                 work: queue.Queue, errors: list[BaseException]) -> None:
    """One worker: its own session, one transaction on the run's snapshot, chunks from the
    queue until it is empty. The District cases come with the chunk that asks for them."""
    try:
        with eng.connect() as raw:
            conn = raw.execution_options(isolation_level="AUTOCOMMIT")
            conn.execute(sa.text("BEGIN ISOLATION LEVEL REPEATABLE READ"))
            try:
                conn.execute(sa.text("SET TRANSACTION SNAPSHOT :s"), {"s": snapshot})
                while not errors:
                    try:
                        ids, district = work.get_nowait()
                    except queue.Empty:
                        break
                    conn.execute(sa.text(
                        "SELECT checks.stage_evaluations(:stage, :pa, :ids, :district)"),
                        {"stage": stage, "pa": plan_area_id, "ids": ids, "district": district})
                conn.execute(sa.text("COMMIT"))
            except BaseException:
                conn.execute(sa.text("ROLLBACK"))
                raise
    except BaseException as exc:  # re-raised in the run's thread
        errors.append(exc)


def _evaluate_in_workers(eng: sa.Engine, conn: sa.Connection, stage: uuid.UUID,
                         plan_area_id: int, parts: list[list[int]], workers: int,
                         district: bool) -> None:
    """Evaluate the chunks on `workers` sessions on this transaction's snapshot and take
    their evaluations back into pg_temp.check_evaluation."""
    snapshot = conn.execute(sa.text("SELECT pg_export_snapshot()")).scalar_one()
    work: queue.Queue = queue.Queue()
    for k, part in enumerate(parts):
        work.put((part, district and k == 0))
    errors: list[BaseException] = []
    threads = [threading.Thread(target=_evaluate_on, name=f"checks-worker-{i}",
                                args=(eng, snapshot, stage, plan_area_id, work, errors))
               for i in range(min(workers, len(parts)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    conn.execute(sa.text("SELECT checks.take_staged(:s)"), {"s": stage})


def _todo(conn: sa.Connection, plan_area_id: int, base: int | None) -> Todo:
    if base is None:
        return Todo("full", None, None, True, None)
    row = conn.execute(sa.text("SELECT * FROM checks.plan_checks_since(:pa, :b)"),
                       {"pa": plan_area_id, "b": base}).one()
    return Todo(row.plan, row.why, row.permit_ids, row.district, base)


def run_plan_wide(url: str, plan_area_id: int, base: int | None, workers: int) -> int:
    """Run the checks of a plan area on `workers` sessions besides the run's own; returns the
    run that holds its results (the base run itself when nothing changed since it). base: the
    latest plan-wide run to evaluate the changes since (None: every permit)."""
    with dbmod.engine_for(url, workers + 1) as eng, eng.connect() as conn:
        stage = uuid.uuid4()
        try:
            with conn.begin():
                # the run is dated from here: deciding what to evaluate is its work
                started = conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one()
                todo = _todo(conn, plan_area_id, base)
                if todo.plan == "stand":
                    return int(base)  # type: ignore[arg-type]
                why = todo.why
                run_id = conn.execute(sa.text(
                    "SELECT checks.start_run(:pa, NULL, :base, CAST(:why AS jsonb), :at)"),
                    {"pa": plan_area_id, "base": todo.base if todo.plan == "some" else None,
                     "why": None if why is None else json.dumps(why), "at": started}
                ).scalar_one()
                ids = todo.permit_ids if todo.plan == "some" else list(conn.execute(sa.text(
                    "SELECT permit_id FROM checks.permits_in_scope(:pa) ORDER BY 1"),
                    {"pa": plan_area_id}).scalars())
                parts = chunks(ids, workers)
                if len(parts) <= 1:  # one chunk: no session to gain, evaluated here
                    conn.execute(sa.text("SELECT checks.evaluate(:pa, :ids, :district)"),
                                 {"pa": plan_area_id, "ids": ids, "district": todo.district})
                else:
                    _evaluate_in_workers(eng, conn, stage, plan_area_id, parts, workers,
                                         todo.district)
                scope = ids if todo.plan == "some" else None
                conn.execute(sa.text(
                    "SELECT checks.record_evaluations(:r, :pa, :ids, :district)"),
                    {"r": run_id, "pa": plan_area_id, "ids": scope,
                     "district": todo.district})
                conn.execute(sa.text("DROP TABLE pg_temp.check_evaluation"))
                if todo.plan == "some":
                    conn.execute(sa.text(
                        "SELECT checks.carry_over(:r, :pa, :b, :ids, :district)"),
                        {"r": run_id, "pa": plan_area_id, "b": todo.base, "ids": ids,
                         "district": todo.district})
                    rechecked = len(ids)
                else:
                    rechecked = conn.execute(sa.text(
                        "SELECT count(DISTINCT permit_id) FROM checks.outcome "
                        "WHERE run_id = :r"), {"r": run_id}).scalar_one()
                conn.execute(sa.text(
                    "UPDATE checks.run SET rechecked_count = :n WHERE run_id = :r"),
                    {"n": rechecked, "r": run_id})
                conn.execute(sa.text("SELECT checks.finish_run(:r)"), {"r": run_id})
            return int(run_id)
        finally:  # what workers staged for a run that did not finish
            with eng.connect() as other, other.begin():
                other.execute(sa.text("DELETE FROM checks.evaluation_stage WHERE stage_id = :s"),
                              {"s": stage})
