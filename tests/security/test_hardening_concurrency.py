"""Concurrency: two ingests of different files and a recompute at the same time
give what running them one after another gives, with no deadlock and no lost version.

How "at the same time" is made certain rather than likely: the test holds EXCLUSIVE on
ledger.change_queue, which every one of the three needs (each ingest's queue trigger inserts
into it while the ingest's merge holds its own row locks; the recompute queues every owner), so
all three are inside the database, mid-transaction, waiting on the test; the test then lets go
and they race. A deadlock or a serialization failure would surface as an exception in a thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import (
    DemoTemplate,
    admin_engine,
    backends,
    database_of,
    impact_grown,
    parcels_changed,
    published,
    wait_for,
)
from sqlalchemy.engine import URL

from etl.ingest import ingest
from rulem_db import ledger


@pytest.fixture
def recomputed(admin_url: URL, demo_template: DemoTemplate) -> Iterator[str]:  # noqa: F811
    """A copy of the demo plan area with its ledger posted (the day before the changes)."""
    with cloned(admin_url, demo_template.name) as url:
        ledger.recompute(url, all=True)
        yield url


def _work(demo_dir: Path, tmp: Path) -> list[tuple[str, Callable[[str], Any]]]:
    parcels = parcels_changed(demo_dir, tmp / "parcels.gpkg")
    impacts = impact_grown(demo_dir, tmp / "impact_24-001.gpkg")
    return [("parcels", lambda url: ingest(url, "parcel", parcels)),
            ("impacts", lambda url: ingest(url, "impact", impacts, permit="24-001")),
            ("recompute", lambda url: ledger.recompute(url, all=True))]


def test_two_ingests_and_a_recompute_at_once_equal_them_one_after_another(
        recomputed: str, admin_url: URL, demo_template: DemoTemplate,  # noqa: F811
        tmp_path: Path) -> None:
    work = _work(demo_template.directory, tmp_path)
    with cloned(admin_url, database_of(recomputed)) as sequential:
        for _, run in work:
            run(sequential)
        ledger.recompute(sequential)  # (nothing left to do: the recompute came last)
        expected = published(sequential)
    assert published(recomputed) != expected  # the work changes what staff see

    watcher = admin_engine(recomputed)
    results: dict[str, Any] = {}
    errors: dict[str, BaseException] = {}

    def run(name: str, fn: Callable[[str], Any]) -> None:
        try:
            results[name] = fn(recomputed)
        except BaseException as exc:  # reported by the test's thread
            errors[name] = exc

    threads = [threading.Thread(target=run, args=w, name=w[0]) for w in work]
    try:
        with watcher.connect() as holder:
            holder.execute(sa.text("BEGIN"))
            holder.execute(sa.text("LOCK TABLE ledger.change_queue IN EXCLUSIVE MODE"))
            me = holder.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
            for t in threads:
                t.start()
            waiting = wait_for("all three to wait on the change queue", lambda: (
                w if len(w := [b for b in backends(watcher, database_of(recomputed))
                               if me in b.blocked_by]) == 3 else None)
                or (errors and pytest.fail(f"failed before the race: {errors}")))
            queries = sorted(b.query.split("(")[0] for b in waiting)
            holder.execute(sa.text("ROLLBACK"))
        for t in threads:
            t.join(timeout=120)
        assert not errors, errors
        assert all(not t.is_alive() for t in threads)
    finally:
        watcher.dispose()
    assert queries == ["SELECT ledger.enqueue_all", "SELECT ops.ingest_apply",
                       "SELECT ops.ingest_apply"], queries
    assert (results["parcels"].inserted, results["parcels"].changed,
            results["parcels"].closed) == (1, 1, 1)
    assert results["impacts"].changed == 1
    ledger.recompute(recomputed)  # what the concurrent recompute could not yet see
    assert published(recomputed) == expected
