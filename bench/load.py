"""Load test: 8 concurrent clients read pub.parcel_balance (by PIN) and pub.finding (by permit)
while a full ledger recompute runs; prints p50 and p95 latency, the longest single wait, and
whether the queries kept answering (issue 8, item 7).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/load.py [--size county]
        [--clients 8] [--check-permits 20] [--keep] [--standby URL]

The database is a clone of the harness's generated plan area (bench/common.py, template
rulem_bench_run_<size>_src; generated on first use): the rule checks run for --check-permits
permits (one run each; the plan-wide run takes hours at county size today, see
docs/scaling.md) so that pub.finding has rows to return, then the clients start, and a full
recompute on the empty ledger posts every entry (the heaviest write the ledger does) while they
read. The same clients are measured for as long again with nothing running, for comparison.

With --standby URL (a hot standby of the cluster, `rulem-db db standby create`), the same
8 clients then read a second copy of the database on the standby while a full recompute of
that copy runs on the primary, and both are measured idle too: the figures of the primary
and of the standby side by side, with the replication lag the primary saw during each
recompute (bytes of WAL not yet replayed, replay_lag) and how long the standby took to catch
up after it. The URL needs only host and port; the login defaults to the harness's.

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

import sqlalchemy as sa  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench import common  # noqa: E402
from rulem_db import checks, config, db, ledger  # noqa: E402
from rulem_db.local import standby  # noqa: E402

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


class LagSampler:
    """Polls the primary's pg_stat_replication while a recompute runs: the worst lag seen.

    Why sampled: the lag is a moving figure (WAL written minus WAL replayed), largest while
    the recompute writes fastest; a reading every quarter second shows that peak."""

    def __init__(self, primary_url: str, every: float = 0.25) -> None:
        self.primary_url, self.every = primary_url, every
        self.max_bytes, self.max_seconds, self.samples, self.standbys = 0, 0.0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-lag")

    def _run(self) -> None:
        while not self._stop.is_set():
            rows = standby.replay_lag(self.primary_url)
            self.samples += 1
            self.standbys = max(self.standbys, len(rows))
            for _, lag_bytes, seconds in rows:
                self.max_bytes = max(self.max_bytes, lag_bytes)
                self.max_seconds = max(self.max_seconds, seconds or 0.0)
            self._stop.wait(self.every)

    def __enter__(self) -> LagSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def line(self) -> str:
        return (f"worst replication lag seen: {self.max_bytes / 2**20:,.1f} MiB of WAL not yet "
                f"replayed, replay_lag {self.max_seconds * 1000:,.0f} ms ({self.samples} "
                f"samples, {self.standbys} standby)")


def standby_url(given: str, database: str) -> str:
    """The standby's URL for `database`: host and port as given, the login as given or else
    the harness's (the standby has the primary's roles and passwords)."""
    u = make_url(config.normalize_url(given))
    admin = common.admin_url()
    if not u.username:
        u = u.set(username=admin.username, password=admin.password)
    return u.set(database=database).render_as_string(hide_password=False)


def check_standby(primary_url: str, url: str) -> None:
    """Refuse a URL that is not a hot standby of this primary (same system identifier)."""
    ids = []
    for which in (primary_url, url):
        with db.connect(which) as conn:
            ids.append(conn.execute(sa.text(
                "SELECT system_identifier, pg_is_in_recovery() FROM pg_control_system()")).one())
    if not ids[1][1]:
        raise SystemExit(f"--standby {config.redact(url)} is not a standby (not in recovery)")
    if ids[0][0] != ids[1][0]:
        raise SystemExit(f"--standby {config.redact(url)} is not a standby of this cluster "
                         "(another system identifier)")


def _print_table(rows: list[tuple[str, dict[str, common.Latency]]]) -> None:
    print(f"{'':21}{'query':<44} {'count':>7}          {'p50':>8}       {'p95':>8}"
          f"       {'max':>9}")
    for label in rows[0][1]:
        for name, figures in rows:
            print(f"  {name:<18} {figures[label].line()}")


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
    parser.add_argument("--standby", metavar="URL",
                        help="also read on this hot standby of the cluster during a second "
                             "full recompute on the primary (host and port; login optional)")
    args = parser.parse_args(argv)
    size = common.SIZES[args.size]
    name = f"{common.PREFIX}_{size.name}_load"
    copy = f"{name}_standby"
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
        admin = common.url_of("postgres")
        reader = None
        if args.standby:
            # A second copy, as the first is before its recompute: the standby's readers
            # watch the same work as the primary's.
            copy_url = common.create_database(copy, template=name)
            reader = standby_url(args.standby, copy)
            try:
                common.timed("the standby replays the copy",
                             lambda: standby.wait_caught_up(admin, reader, 600))
            except standby.StandbyError as exc:  # far behind: say so, measure nothing
                raise SystemExit(f"--standby: {exc}") from None
            check_standby(url, reader)

        def recompute(target: str) -> Callable[[], None]:
            return lambda: print(f"    {ledger.recompute(target, all=True)}")

        rows: list[tuple[str, dict[str, common.Latency]]] = []
        busy_s, busy = under_load(url, queries, args.clients, recompute(url))
        print(f"  full recompute with {args.clients} clients reading the primary: {busy_s:.2f} s")
        rows.append(("recompute, primary", busy))
        answered = {"primary": sum(len(v.ms) for v in busy.values()) / busy_s}
        if reader is not None:
            with LagSampler(admin) as lag:
                standby_s, on_standby = under_load(reader, queries, args.clients,
                                                   recompute(copy_url))
                try:
                    caught = f"{standby.wait_caught_up(admin, reader, 600):.2f} s"
                except standby.StandbyError:
                    caught = "not within 600 s"
            print(f"  full recompute with {args.clients} clients reading the standby: "
                  f"{standby_s:.2f} s; the standby had replayed it {caught} after its end")
            print(f"  {lag.line()}")
            rows.append(("recompute, standby", on_standby))
            answered["standby"] = sum(len(v.ms) for v in on_standby.values()) / standby_s
        quiet_s, quiet = under_load(url, queries, args.clients, lambda: time.sleep(busy_s))
        rows.append(("idle, primary", quiet))
        if reader is not None:
            rows.append(("idle, standby", under_load(
                reader, queries, args.clients, lambda: time.sleep(busy_s))[1]))
        print()
        _print_table(rows)
        ok = all(not f.errors and f.ms and f.max <= args.max_wait_ms
                 for name_, figures in rows if name_.startswith("recompute")
                 for f in figures.values())
        print("\nqueries answered during the recompute: " + ", ".join(
            f"{n:,.0f} per second on the {where}" for where, n in answered.items())
            + f" (idle: {sum(len(v.ms) for v in quiet.values()) / quiet_s:,.0f})")
        print("kept answering: " + ("yes" if ok else "NO") + f" (no errors, no query over "
              f"{args.max_wait_ms:,.0f} ms)")
        print(f"machine at the end: {common.machine()}")
        return 0 if ok else 1
    finally:
        if not args.keep:
            common.drop_database(name)
            if args.standby:
                common.drop_database(copy)


if __name__ == "__main__":
    raise SystemExit(main())
