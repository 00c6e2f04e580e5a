"""Benchmark: the current balance views read the totals kept at posting (sql/165), against the
same views summing every entry (their definition before revision 0027), as the ledger grows.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/ledger_totals.py [--size county]
        [--template rulem_bench_run_county_src] [--growth 5] [--keep]

Copies the generated plan area kept by bench/run.py (the template named, default
rulem_bench_run_<size>_src; run bench/run.py first if it is missing) to a scratch database,
migrates it, fills the ledger with a full recompute (two workers), and creates beside pub the
views as they were before the totals (schema bench_entries: the body of pub.*_balance_as_of
with 'infinity' for the date and the instant, which is what the views were). Then, with 8
concurrent clients and with 1: pub.plan_balance and one permit's row of pub.permit_balance,
both ways. Then it grows the ledger --growth times by entries that change no balance (a copy of
every entry and its reversal, as many re-postings would leave), checks ledger.totals_drift(),
and measures again: the totals stay flat, the sums grow with the book.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common  # noqa: E402
from rulem_db import db, ledger  # noqa: E402

PLAN = "SELECT * FROM {schema}.plan_balance"
PERMIT = "SELECT * FROM {schema}.permit_balance WHERE permit_no = %(no)s"


def _old_views(url: str) -> None:
    """bench_entries.plan_balance / permit_balance: the views summing every entry (one
    transaction; db.connect commits)."""
    with db.connect(url) as conn:
        conn.execute(sa.text("DROP SCHEMA IF EXISTS bench_entries CASCADE; "
                             "CREATE SCHEMA bench_entries"))
        for view in ("plan_balance", "permit_balance"):
            body = conn.execute(sa.text(
                "SELECT prosrc FROM pg_proc WHERE proname = :f "
                "AND pronamespace = 'pub'::regnamespace"), {"f": f"{view}_as_of"}).scalar_one()
            body = (body.replace("p_recorded_at", "'infinity'::timestamptz")
                    .replace("p_on", "'infinity'::date"))
            conn.execute(sa.text(f"CREATE VIEW bench_entries.{view} AS {body}"))


def _grow(url: str) -> int:
    """A copy of every entry and its reversal: more entries, the same balances."""
    with db.connect(url) as conn:
        conn.execute(sa.text("""
            WITH copy AS (
              INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, district_project,
                parcel_id, measure, entry_kind, acres, acres_published, reason, inputs,
                effective_on)
              SELECT e.run_id, e.plan_area_id, e.permit_id, e.district_project, e.parcel_id,
                     e.measure, e.entry_kind, e.acres, e.acres_published, 'bench growth',
                     '{}', e.effective_on
              FROM ledger.entry e WHERE e.reason <> 'bench growth'
              RETURNING *)
            INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, district_project,
              parcel_id, measure, entry_kind, acres, acres_published, reverses_entry_id,
              reason, inputs, effective_on)
            SELECT c.run_id, c.plan_area_id, c.permit_id, c.district_project, c.parcel_id,
                   c.measure, c.entry_kind, -c.acres, -c.acres_published, c.entry_id,
                   'bench growth', '{}', c.effective_on
            FROM copy c"""))
        conn.execute(sa.text("ANALYZE ledger.entry"))
        return conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar_one()


def _measure(url: str, permits: list[str], label: str) -> list[str]:
    lines = []
    for schema in ("pub", "bench_entries"):
        queries = [(f"{schema}.plan_balance", PLAN.format(schema=schema), lambda rng: {}),
                   (f"{schema}.permit_balance, one permit", PERMIT.format(schema=schema),
                    lambda rng: {"no": rng.choice(permits)})]
        for clients, rounds in ((8, 25), (1, 50)):
            got = common.concurrent_latency(url, queries, clients=clients, per_client=rounds)
            for name, lat in got.items():
                line = f"{label}: {name}, {clients} client(s): {lat.line()}"
                print(line, flush=True)
                lines.append(line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(common.SIZES), default="county")
    parser.add_argument("--template", help="database to copy (default: bench/run.py's)")
    parser.add_argument("--growth", type=int, default=5,
                        help="rounds of growth (each adds twice the entries there were)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    template = args.template or f"{common.PREFIX}_{args.size}_src"
    name = f"{common.PREFIX}_totals_{args.size}"
    print(f"machine: {common.machine()}")
    url = common.create_database(name, template)
    try:
        db.migrate(url)
        started = time.perf_counter()
        run = ledger.recompute(url, all=True, workers=2)
        print(f"full recompute: {run.entries:,} entries in {time.perf_counter() - started:.1f} s")
        _old_views(url)
        with db.connect(url) as conn:
            conn.execute(sa.text("ANALYZE"))
            same = conn.execute(sa.text(
                "SELECT count(*) FROM (SELECT * FROM pub.plan_balance EXCEPT ALL "
                "SELECT * FROM bench_entries.plan_balance) d")).scalar_one()
            assert same == 0, "pub.plan_balance differs from the sums of the entries"
        permits = common.sample_permits(url)
        lines = _measure(url, permits, f"{run.entries:,} entries")
        entries = run.entries
        for _ in range(args.growth):
            entries = _grow(url)
        with db.connect(url) as conn:
            drift = conn.execute(sa.text("SELECT count(*) FROM ledger.totals_drift()")
                                 ).scalar_one()
        print(f"grown to {entries:,} entries; ledger.totals_drift(): {drift} rows")
        lines += _measure(url, permits, f"{entries:,} entries")
        print(f"machine: {common.machine()}")
    finally:
        if not args.keep:
            common.drop_database(name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
