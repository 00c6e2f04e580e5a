"""The ledger's Python API: recompute (drain the change queue, or everything) and read balances.

Why so little here: the database is the engine. Measuring, allocating, comparing and posting
are SQL functions (sql/100-199, docs/ledger.md); this module opens a run, lets one or more
connections drain the change queue (ledger.drain uses FOR UPDATE SKIP LOCKED, so workers never
take the same rows, and posting locks each owner, so no line is posted twice), closes the run
and says what was posted. The CLI, the flows and the demo call `recompute`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db.locks import reporting_wait

DEFAULT_WORKERS = 2
CHUNK = 100  # change-queue rows per transaction, at least: big enough to amortise
TAIL_CHUNKS = 8  # per worker: the smallest chunk of a big queue is waiting / (workers x 8)
# Chunk sizes are guided: each chunk takes half of a worker's share of what still waits, so
# the first chunks are big and the last ones small. Why: each chunk pays a fixed cost (the
# visible study areas near its owners, the plan boundary prepared for GEOS, the queue
# bookkeeping: 10-50 ms), so a county's 2,000 owners in 100-row chunks cost a fifth more CPU
# than in a few big ones; but with a few equal chunks one worker sat idle for the whole last
# chunk (0.5 s of a 3 s recompute). Guided chunks end with small ones, so the workers finish
# together, and stay few (about ten for two workers).


@dataclass
class RecomputeSummary:
    """What a recompute did: its run, what it processed and what it posted."""

    run_id: int
    mode: str
    status: str
    workers: int
    queue_items: int
    owners: int
    entries: int
    reversals: int
    seconds: float
    posted: list[dict[str, Any]] = field(default_factory=list)

    @property
    def new_entries(self) -> int:
        return self.entries - self.reversals

    def __str__(self) -> str:
        if not self.entries:
            return (f"run {self.run_id}: {self.owners} owners recomputed, nothing to post "
                    f"({self.seconds:.2f} s)")
        return (f"run {self.run_id}: {self.owners} owners recomputed, {self.entries} entries "
                f"posted ({self.new_entries} new, {self.reversals} reversals) "
                f"in {self.seconds:.2f} s")


WAITING = "SELECT count(*) FROM ledger.change_queue WHERE processed_at IS NULL"


def _drain(conn: sa.Connection, run_id: int, chunk: int, workers: int = 1) -> int:
    """Drain until the queue has nothing this connection can take; returns rows taken.

    Each chunk takes half of this worker's share of the rows still waiting, and at least
    `chunk` rows (TAIL_CHUNKS)."""
    taken = 0
    while True:
        with conn.begin():
            size = chunk
            if workers > 1:
                waiting = conn.execute(sa.text(WAITING)).scalar_one()
                size = max(chunk, -(-waiting // (2 * workers)))
            n = conn.execute(sa.text("SELECT ledger.drain(:r, :n)"),
                             {"r": run_id, "n": size}).scalar_one()
        if not n:
            return taken
        taken += n


def _posted(conn: sa.Connection, run_id: int) -> list[dict[str, Any]]:
    """Each line the run touched: its acres before and after (full precision)."""
    rows = conn.execute(sa.text(
        "SELECT coalesce(permit_no, district_project) AS owner, pin, measure, "
        "-coalesce(sum(acres_exact) FILTER (WHERE reverses_entry_id IS NOT NULL), 0) "
        "  AS before_acres, "
        "coalesce(sum(acres_exact) FILTER (WHERE reverses_entry_id IS NULL), 0) AS after_acres "
        "FROM pub.ledger_entry WHERE run_id = :r "
        "GROUP BY 1, 2, 3 ORDER BY 1, 2 NULLS LAST, 3"), {"r": run_id}).mappings().all()
    return [dict(r) for r in rows]


def _summary(conn: sa.Connection, run_id: int, seconds: float, posted: bool,
             run: sa.RowMapping | None = None) -> RecomputeSummary:
    """The run's record (`run`, as ledger.finish_run returned it, or read here) as a
    summary."""
    r = run or conn.execute(sa.text("SELECT * FROM ledger.run WHERE run_id = :r"),
                            {"r": run_id}).mappings().one()
    return RecomputeSummary(
        run_id=run_id, mode=r["mode"], status=r["status"], workers=r["workers"],
        queue_items=r["queue_items"] or 0, owners=r["owners"] or 0, entries=r["entries"] or 0,
        reversals=r["reversals"] or 0, seconds=seconds,
        posted=_posted(conn, run_id) if posted else [])


def _enqueuer(all: bool) -> str:  # noqa: A002
    """The function that queues what a run must recompute beyond what the input triggers
    queued: every owner (all), or the owners measured as of today when a dated fact took
    effect since the last run (sql/175): the days passing are a change no trigger sees."""
    return "ledger.enqueue_all" if all else "ledger.enqueue_dated"


def _enqueue(conn: sa.Connection, run_id: int, all: bool) -> None:  # noqa: A002
    conn.execute(sa.text(f"SELECT {_enqueuer(all)}(:r)"), {"r": run_id})


def _recompute_on(conn: sa.Connection, all: bool, chunk: int,
                  with_posted: bool) -> RecomputeSummary:
    """Single worker, in the caller's transaction (nothing is committed here).

    Three statements (start and queue, drain, finish), not one per step: a one-change
    recompute on a connection that recomputed before takes 15-20 ms, and each round trip
    costs 0.5 ms of it."""
    start = time.perf_counter()
    run_id = conn.execute(sa.text(
        "SELECT r FROM ledger.start_run(:m, 1) AS r, "
        f"LATERAL {_enqueuer(all)}(r) AS q"),
        {"m": "all" if all else "queue"}).scalar_one()
    conn.execute(sa.text("SELECT ledger.drain_all(:r, :n)"), {"r": run_id, "n": chunk})
    run = conn.execute(sa.text("SELECT * FROM ledger.finish_run(:r)"),
                       {"r": run_id}).mappings().one()
    return _summary(conn, run_id, time.perf_counter() - start, with_posted, run)


def recompute(url_or_conn: str | sa.Connection, all: bool = False,  # noqa: A002
              workers: int = DEFAULT_WORKERS, chunk: int = CHUNK,
              with_posted: bool = False) -> RecomputeSummary:
    """Bring the ledger up to date with the inputs and return what was posted.

    all=False drains the change queue (what the input triggers saw change); all=True first
    queues every owner of every plan area. Given a URL, up to `workers` connections drain at
    once (one when the queue holds no more than a chunk), each chunk in its own transaction,
    so a failure keeps what was already posted and leaves the rest queued. Given a
    Connection, one worker runs in the caller's transaction. with_posted=True also returns
    the lines the run changed (owner, parcel, measure, acres before and after).
    """
    if isinstance(url_or_conn, sa.Connection):
        return _recompute_on(url_or_conn, all, chunk, with_posted)
    start = time.perf_counter()
    with dbmod.engine_for(url_or_conn, max(workers, 1) + 1) as eng, eng.connect() as conn:
        with conn.begin():
            run_id = conn.execute(sa.text("SELECT ledger.start_run(:m, :w)"),
                                  {"m": "all" if all else "queue", "w": workers}
                                  ).scalar_one()
        try:
            with conn.begin():
                _enqueue(conn, run_id, all)
                waiting = conn.execute(sa.text(WAITING)).scalar_one()
            chunk = max(chunk, -(-waiting // (max(workers, 1) * TAIL_CHUNKS)))
            helpers = min(max(workers, 1), -(-waiting // chunk)) - 1
            _run_workers(eng, conn, run_id, helpers, chunk)
        except Exception as exc:
            conn.rollback()
            with conn.begin():
                conn.execute(sa.text("SELECT ledger.finish_run(:r, 'failed', :m)"),
                             {"r": run_id, "m": " ".join(str(exc).split())[:500]})
            raise
        with conn.begin():
            conn.execute(sa.text("SELECT ledger.finish_run(:r)"), {"r": run_id})
        return _summary(conn, run_id, time.perf_counter() - start, with_posted)


def _run_workers(eng: sa.Engine, conn: sa.Connection, run_id: int, helpers: int,
                 chunk: int) -> None:
    """Drain on `conn` and on `helpers` more connections at once (threads)."""
    errors: list[BaseException] = []

    def work() -> None:
        try:
            with eng.connect() as own, reporting_wait(own, "a ledger owner's lock"):
                _drain(own, run_id, chunk, helpers + 1)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, name=f"ledger-worker-{i}")
               for i in range(helpers)]
    for t in threads:
        t.start()
    try:
        with reporting_wait(conn, "a ledger owner's lock"):
            _drain(conn, run_id, chunk, helpers + 1)
    finally:
        for t in threads:
            t.join()
    if errors:
        raise errors[0]


def recorded_at_sql(recorded_at: str | None) -> str:
    """SQL for the :recorded_at parameter: an instant, or a date alone read as its end."""
    if recorded_at and len(recorded_at) == 10:
        return "((CAST(:recorded_at AS date) + 1)::timestamptz - interval '1 microsecond')"
    return "CAST(:recorded_at AS timestamptz)"


BALANCE_COLUMNS: dict[str, Sequence[str]] = {
    "plan": ("code", "impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
             "credit_constructed_acres", "unallocated_balance_acres", "balance_acres", "status",
             "parcels_in_deficit", "permits_in_deficit"),
    "parcel": ("pin", "impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
               "credit_constructed_acres", "credit_hosted_acres", "balance_acres", "status"),
    "permit": ("permit_no", "permit_status", "baseline_on", "impact_acres", "required_acres",
               "credit_acres", "transfer_in_acres", "transfer_out_acres",
               "credit_proposed_acres", "credit_constructed_acres", "balance_acres", "status"),
}


def balances(conn: sa.Connection, level: str, key: str | None = None,
             as_of: str | None = None, only_active: bool = False,
             recorded_at: str | None = None, restated: bool = False) -> list[dict[str, Any]]:
    """Rows of pub.<level>_balance (or its _as_of(date, recorded_at) function) for the CLI and
    reports.

    level is plan, parcel or permit; key a PIN (parcel) or permit number (permit). as_of is a
    date of effect (the entries whose fact took effect by its end), recorded_at an instant (the
    entries posted by then; default everything recorded); docs/ledger.md section 4a. A date
    in a year whose statement was issued is read as recorded at the issue (the issued figures)
    unless restated (the year as now known); docs/ledger.md section 4b.
    """
    if level not in BALANCE_COLUMNS:
        raise ValueError(f"unknown balance level {level!r}: plan, parcel or permit")
    if as_of or recorded_at:
        at = recorded_at_sql(recorded_at)
        source = f"pub.{level}_balance_as_of(CAST(:as_of AS date), {at}, :restated)"
    else:
        source = f"pub.{level}_balance"
    where, params = [], {"as_of": as_of or "infinity", "recorded_at": recorded_at or "infinity",
                         "restated": restated}
    if key is not None and level == "parcel":
        # a PIN in any punctuation matches its normalized key, as ingest derives it
        where.append("b.parcel_id IN (SELECT f.feature_id FROM core.feature f "
                     "WHERE f.layer = 'parcel' "
                     "AND f.feature_key = upper(regexp_replace(:key, '[^[:alnum:]]', '', 'g')))")
        params["key"] = key
    elif key is not None and level == "permit":
        where.append("b.permit_no = :key")
        params["key"] = key
    if only_active and level != "plan":
        where.append("b.status <> 'none'")
    order = {"plan": "b.plan_area_id", "parcel": "b.pin", "permit": "b.permit_no"}[level]
    sql = (f"SELECT {', '.join('b.' + c for c in BALANCE_COLUMNS[level])} FROM {source} b"
           + (" WHERE " + " AND ".join(where) if where else "") + f" ORDER BY {order}")
    return [dict(r) for r in conn.execute(sa.text(sql), params).mappings().all()]
