"""Load test: 8 concurrent clients read pub.parcel_balance (by PIN) and pub.finding (by permit)
while a full ledger recompute runs; prints p50 and p95 latency, the longest single wait, and
whether the queries kept answering (issue 8, item 7).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/load.py [--size county]
        [--clients 8] [--check-permits 20] [--keep]

The database is a clone of the harness's generated plan area (bench/common.py, template
rulem_bench_run_<size>_src; generated on first use): the rule checks run for --check-permits
permits (one run each; the plan-wide run takes hours at county size today, see
docs/scaling.md) so that pub.finding has rows to return, then the clients start, and a full
recompute on the empty ledger posts every entry (the heaviest write the ledger does) while they
read. The same clients are measured for as long again with nothing running, for comparison.

"Kept answering" means: no query failed, and no single query waited longer than
--max-wait-ms (default 1,000 ms), i.e. no reader was blocked behind a lock the recompute held.
Readers take no locks a writer waits for and the recompute takes no lock that blocks readers
(it only INSERTs entries and UPDATEs its queue and run rows), so the expectation is that the
readers slow down only by sharing two cores with it.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import common  # noqa: E402
from rulem_db import checks, ledger  # noqa: E402

BY_PIN = "SELECT * FROM pub.parcel_balance WHERE pin = %(pin)s"
FINDINGS = "SELECT * FROM pub.finding WHERE permit_no = %(permit)s"


def _queries(pins: list[str], permits: list[str]) -> list[common.Query]:
    return [("pub.parcel_balance by PIN", BY_PIN, lambda rng: {"pin": rng.choice(pins)}),
            ("pub.finding by permit", FINDINGS, lambda rng: {"permit": rng.choice(permits)})]


def under_load(url: str, queries: list[common.Query], clients: int,
               work: Callable[[], object]) -> tuple[float, dict[str, common.Latency]]:
    """Run the clients until `work()` returns; returns its seconds and the latencies (a
    client that could not run at all raises here: no figures is not "kept answering")."""
    stop = threading.Event()
    result: dict[str, common.Latency] = {}
    failed: list[BaseException] = []

    def readers() -> None:
        try:
            result.update(common.concurrent_latency(url, queries, clients=clients,
                                                    per_client=None, until=stop))
        except BaseException as exc:  # re-raised in the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=readers, name="bench-readers")
    thread.start()
    time.sleep(1.0)  # the clients are connected and warmed up
    started = time.perf_counter()
    try:
        work()
    finally:
        seconds = time.perf_counter() - started
        stop.set()
        thread.join()
    if failed:
        raise failed[0]
    return seconds, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(common.SIZES), default="county")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--max-wait-ms", type=float, default=1000.0,
                        help="a single query waiting longer than this means it was blocked")
    parser.add_argument("--check-permits", type=int, default=20,
                        help="run the rule checks for this many permits, one run each, and "
                             "query their findings (0: the plan-wide run, every permit)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args(argv)
    size = common.SIZES[args.size]
    name = f"{common.PREFIX}_{size.name}_load"
    print(f"load test, size {size.name}: {size.parcels:,} parcels, {size.permits:,} permits; "
          f"{args.clients} clients")
    print(f"machine: {common.machine()}")
    try:
        _, (url, _) = common.timed("clone the generated plan area (or generate it in SQL)",
                                   lambda: common.plan_area_database(name, size))
        permits = common.sample_permits(url)
        checked = permits[:args.check_permits] if args.check_permits else []
        if checked:
            for permit_no in checked:  # the plan-wide run takes hours at county size today
                checks.run_checks(url, permit_no=permit_no)
            print(f"  rule checks of {len(checked)} permits, one run each (pub.finding has "
                  "their findings)")
        else:
            _, summary = common.timed("rule checks (so that pub.finding has rows)",
                                      lambda: checks.run_checks(url))
            print(f"    {summary}")
        queries = _queries(common.sample_pins(url), checked or permits)

        def recompute() -> None:
            print(f"    {ledger.recompute(url, all=True)}")

        busy_s, busy = under_load(url, queries, args.clients, recompute)
        print(f"  full recompute with {args.clients} clients reading: {busy_s:.2f} s")
        quiet_s, quiet = under_load(url, queries, args.clients, lambda: time.sleep(busy_s))
        print()
        print(f"{'':13}{'query':<44} {'count':>7}          {'p50':>8}       {'p95':>8}"
              f"       {'max':>9}")
        ok = True
        for label in busy:
            print(f"  recompute  {busy[label].line()}")
            print(f"  idle       {quiet[label].line()}")
            if busy[label].errors or not busy[label].ms or busy[label].max > args.max_wait_ms:
                ok = False
        per_second = sum(len(v.ms) for v in busy.values()) / busy_s
        print(f"\nqueries answered during the recompute: {per_second:,.0f} per second "
              f"(idle: {sum(len(v.ms) for v in quiet.values()) / quiet_s:,.0f})")
        print("kept answering: " + ("yes" if ok else "NO") + f" (no errors, no query over "
              f"{args.max_wait_ms:,.0f} ms)")
        print(f"machine at the end: {common.machine()}")
        return 0 if ok else 1
    finally:
        if not args.keep:
            common.drop_database(name)


if __name__ == "__main__":
    raise SystemExit(main())
