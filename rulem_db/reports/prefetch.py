"""Read a run's parcel layer for its report while the rule checks run.

Why: a night that changed balances writes a full report, and its largest read is every parcel
of the plan area with its balance (pub.parcel_balance, 100,000 rows on a county) decoded into a
GeoDataFrame, a second or two of the database and as much of Python (with the imports of
geopandas and matplotlib, and the parcels' rings the maps draw). Nothing in it depends on the
checks, which keep one backend busy for seconds: on two cores both can go at once. The nightly
starts the read in a thread right after the ledger recompute; the report takes it only when the
balances it read are the ones the run's snapshot recorded (ops.balance_state equal: the same
pub.parcel_balance rows), and reads them again otherwise (an edit and a `rulem-db watch`
recompute in between). On a night whose balances did not move nothing is read ahead: the
report is short, or reads the parcels itself.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from rulem_db import db as dbmod
from rulem_db.reports.frames import read_parcel_frame

if TYPE_CHECKING:
    import geopandas as gpd

_LOCK = threading.Lock()
_PENDING: dict[tuple[str, int], Future[ParcelRead]] = {}


@dataclass(frozen=True)
class ParcelRead:
    """The parcel layer as read, with the fingerprint of what it was computed from."""

    state: dict[str, Any]  # ops.balance_state at the time of the read
    frame: gpd.GeoDataFrame


def balances_moved(conn: sa.Connection, run_id: int) -> bool:
    """Whether the plan area's balances differ from what the previous completed run saw (or
    there is none), so that the run's report will be a full one with every parcel."""
    return bool(conn.execute(sa.text(
        "SELECT p.balance_state IS DISTINCT FROM ops.balance_state(r.plan_area_id) "
        "FROM ops.run r LEFT JOIN ops.run p ON p.run_id = r.previous_run_id "
        "WHERE r.run_id = :r"), {"r": run_id}).scalar())


def read_parcels(url: str, plan_area_id: int) -> ParcelRead:
    """Every current parcel with its balance and the fingerprint, from one snapshot (a
    repeatable-read transaction on a connection of its own: the caller's may be busy)."""
    eng = dbmod.engine(url, poolclass=NullPool)
    try:
        with eng.connect().execution_options(isolation_level="REPEATABLE READ") as conn, \
                conn.begin():
            state = conn.execute(sa.text("SELECT ops.balance_state(:p)"),
                                 {"p": plan_area_id}).scalar_one()
            read = ParcelRead(state, read_parcel_frame(conn, plan_area_id))
    finally:
        eng.dispose()
    # matplotlib's import and the parcels' rings for the maps, while the checks still run
    from rulem_db.reports import map as report_map

    report_map.prepare(read.frame)
    return read


def start(url: str, run_id: int, plan_area_id: int) -> None:
    """Start reading run_id's parcel layer in a thread (see the module's docstring)."""
    future: Future[ParcelRead] = Future()

    def work() -> None:
        try:
            future.set_result(read_parcels(url, plan_area_id))
        except BaseException as exc:  # handed to the report, which then reads on its own
            future.set_exception(exc)

    with _LOCK:
        _PENDING[(url, run_id)] = future
    threading.Thread(target=work, name=f"parcels-of-run-{run_id}", daemon=True).start()


def take(url: str, run_id: int, state: dict[str, Any] | None) -> gpd.GeoDataFrame | None:
    """The parcel frame read ahead for run_id when it was read from the balances `state`
    (the run's snapshot fingerprint); None when none was started, it failed or is stale."""
    with _LOCK:
        future = _PENDING.pop((url, run_id), None)
    if future is None or state is None:
        return None
    try:
        got = future.result()
    except Exception:  # the report reads the parcels itself; the error would show there
        return None
    return got.frame if got.state == state else None


def discard(url: str, run_id: int) -> None:
    """Forget a read ahead that will not be used (a short report, a failed run)."""
    with _LOCK:
        _PENDING.pop((url, run_id), None)
