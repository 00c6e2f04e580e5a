"""Profile of a check run, per check function, on a database that already holds a plan area.

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python bench/check_profile.py URL [URL ...]
        [--permits N] [--seed S] [--top K]

For each database (a county and a state made by `bench/run.py`, cloned from its templates):
the same number of permits (--permits, default 2000, drawn at random with --seed) is
evaluated the way a worker of the check run evaluates a chunk (sql/280 checks.evaluate): the
buffer sites first, then each check function of checks.evaluation_query() on its own, timed.
With the same permits at every size, a function whose time grows with the size of the plan
area (not with its permits) shows as a ratio above 1 in the last column. The functions it
calls, from pg_stat_user_functions (track_functions = 'all' where the role may set it),
are listed by self time, so a plan-wide lookup made once per permit shows by name.
Nothing is written: everything runs in one transaction that is rolled back.
"""

from __future__ import annotations

import argparse
import random
import re
import time

import psycopg2
from sqlalchemy.engine import make_url

FN_STATS = """
SELECT schemaname || '.' || funcname, calls, total_time, self_time
FROM pg_stat_xact_user_functions
"""


def _dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def profile(url: str, permits: int, seed: int) -> tuple[dict[str, float], list[tuple]]:
    """Seconds per check function (and the buffer sites) for `permits` random permits, and
    the called functions' statistics of the transaction (name, calls, total ms, self ms)."""
    conn = psycopg2.connect(_dsn(url))
    try:
        cur = conn.cursor()
        try:
            cur.execute("SET LOCAL track_functions = 'all'")
        except psycopg2.Error:  # not a superuser: the server's setting stands
            conn.rollback()
        cur.execute("SET LOCAL jit = off")
        cur.execute("SELECT plan_area_id FROM checks.permit_site GROUP BY 1 ORDER BY count(*) "
                    "DESC LIMIT 1")
        plan_area_id = cur.fetchone()[0]
        cur.execute("SELECT permit_id FROM checks.permit_site WHERE plan_area_id = %s "
                    "ORDER BY permit_id", (plan_area_id,))
        ids = [r[0] for r in cur.fetchall()]
        ids = sorted(random.Random(seed).sample(ids, min(permits, len(ids))))
        cur.execute("SELECT checks.evaluation_query()")
        parts = cur.fetchone()[0].split("\nUNION ALL ")
        seconds: dict[str, float] = {}
        started = time.perf_counter()
        cur.execute("""
            INSERT INTO checks.buffer_site_cache (xact, plan_area_id, permit_id, baseline_on,
                parcels, edge, wetland, central, buffer, own_buffer, effective)
            SELECT pg_current_xact_id()::text::bigint, %s, s.*
            FROM checks.buffer_site_of(%s, %s::bigint[]) s""", (plan_area_id, plan_area_id, ids))
        seconds["(buffer sites: checks.buffer_site_of)"] = time.perf_counter() - started
        for part in parts:
            name = re.search(r"(\w+\.\w+)\(\$1", part).group(1)
            sql = part.replace("$1", "%(pa)s").replace("$2", "%(ids)s::bigint[]")
            started = time.perf_counter()
            cur.execute(f"SELECT count(*) FROM ({sql}) q", {"pa": plan_area_id, "ids": ids})
            cur.fetchone()
            seconds[name] = time.perf_counter() - started
        cur.execute(FN_STATS)
        stats = sorted(cur.fetchall(), key=lambda r: -r[3])
        return seconds, stats
    finally:
        conn.rollback()
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("urls", nargs="+", help="databases, smallest first")
    parser.add_argument("--permits", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    runs = []
    for url in args.urls:
        print(f"profiling {make_url(url).database} ...", flush=True)
        runs.append(profile(url, args.permits, args.seed))
    names = list(runs[0][0])
    header = "".join(f"{make_url(u).database[-14:]:>16}" for u in args.urls)
    print(f"\n{args.permits} permits, seconds per check function\n{'function':52}{header}"
          f"{'last/first':>12}")
    for name in names:
        cells = [r[0].get(name, float("nan")) for r in runs]
        print(f"{name:52}" + "".join(f"{c:16.2f}" for c in cells)
              + f"{cells[-1] / max(cells[0], 1e-6):12.1f}")
    totals = [sum(r[0].values()) for r in runs]
    print(f"{'total':52}" + "".join(f"{t:16.2f}" for t in totals)
          + f"{totals[-1] / max(totals[0], 1e-6):12.1f}")
    for url, (_, stats) in zip(args.urls, runs, strict=True):
        print(f"\n{make_url(url).database}: called functions by self time (ms)")
        print(f"{'function':52}{'calls':>10}{'total':>12}{'self':>12}")
        for name, calls, total, own in stats[:args.top]:
            print(f"{name:52}{calls:10}{total:12.0f}{own:12.0f}")


if __name__ == "__main__":
    main()
