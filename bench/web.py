"""Latency of `rulem-db serve` with 8 concurrent clients, beside the same queries in SQL;
and with --attack, 48 clients mixing tiles and items, quiet and then beside attackers.

    bench/web.py [--size plan|county] [--url URL] [--clients 8] [--requests 400] [--keep]
    bench/web.py --attack [--url URL] [--clients 48] [--requests 2400] [--out FILE.md]

--attack: the p95 of a mixed load (z14 tiles of pub.parcel_balance and items of
pub.parcel_balance by PIN) is measured once quiet, then again while attacker threads send
what tests/web/test_web_attack.py sends (function calls in filters, deep nesting, oversized
bodies, malformed parameters), bounded in count and time, to the same server. Target: p95
under attack within 2x of the quiet run, no attack request answered 5xx, the server alive.
The result (with the load average: figures on a shared machine are only indicative) is
written to bench/results/<date>-web.md.

Two requests, the ones the web map makes most (issue 20): a z14 vector tile of
pub.parcel_balance (tipg's /collections/pub.parcel_balance/tiles/WebMercatorQuad/14/x/y) and a
parcel's balance by PIN (/api/parcel?pin=...). Each is timed through HTTP from `clients`
threads (one keep-alive connection each, no ETag sent: every request makes its answer), and
the same work is timed directly in SQL from as many connections (bench/common.py's
concurrent_latency): the tile as pub.parcel_balance_tile(z, x, y) (sql/930), the balance as
`SELECT * FROM pub.parcel_balance WHERE pin = ...`. Targets: tile p95 < 50 ms, balance p95
< 20 ms.

The database is a clone of bench/run.py's generated plan area (kept as a template between
runs) with the ledger recomputed, or --url (a superuser URL of a database with a recomputed
ledger). The server runs as a fresh rulem_gis login, like a deployment.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from bench import common  # noqa: E402
from rulem_db import db, ledger  # noqa: E402

TILE_TARGET_MS = 50.0
BALANCE_TARGET_MS = 20.0
ZOOM = 14
TILE_SQL = "SELECT pub.parcel_balance_tile(%(z)s, %(x)s, %(y)s)"
BALANCE_SQL = "SELECT * FROM pub.parcel_balance WHERE pin = %(pin)s"


def tiles_over_parcels(url: str, n: int = 200, seed: int = 5) -> list[tuple[int, int, int]]:
    """z14 tiles holding parcels (the centres of a deterministic sample of them)."""
    with db.connect(url) as conn:
        points = conn.execute(sa.text(
            "SELECT ST_X(c), ST_Y(c) FROM (SELECT ST_Transform(ST_PointOnSurface(geom), 4326) c "
            "FROM pub.parcel ORDER BY parcel_id) s")).all()
    rng = random.Random(seed)
    out = set()
    for lon, lat in rng.sample(points, min(len(points), n * 4)):
        k = 2 ** ZOOM
        out.add((ZOOM, int((lon + 180) / 360 * k),
                 int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * k)))
    return sorted(out)[:n] if len(out) <= n else rng.sample(sorted(out), n)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`rulem-db serve` as a fresh rulem_gis login on the database (stopped by close())."""

    def __init__(self, url: str) -> None:
        admin = make_url(url)
        self.role = f"bench_web_{os.getpid()}"
        password = secrets.token_urlsafe(18)
        self._admin = sa.create_engine(admin.set(database="postgres"),
                                       isolation_level="AUTOCOMMIT")
        with self._admin.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {self.role}"))
            conn.execute(sa.text(f"CREATE ROLE {self.role} LOGIN PASSWORD :p IN ROLE rulem_gis"),
                         {"p": password})
        gis = admin.set(username=self.role, password=password, drivername="postgresql")
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = Path(tempfile.mkstemp(prefix="rulem-bench-web-", suffix=".log")[1])
        env = {k: v for k, v in os.environ.items() if k != "RULEM_DATABASE_URL"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rulem_cli", "--db",
             gis.render_as_string(hide_password=False), "serve", "--port", str(self.port),
             "--connections", "16"], cwd=ROOT, env=env, stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"rulem-db serve exited: {self.log.read_text()[-1500:]}")
            try:
                if httpx.get(self.base + "/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"rulem-db serve did not answer: {self.log.read_text()}")
            time.sleep(0.3)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        with self._admin.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {self.role}"))
        self._admin.dispose()


def http_latency(base: str, label: str, paths: list[str], clients: int, per_client: int,
                 warmup: int = 5) -> common.Latency:
    """Each of `clients` threads (one keep-alive connection) GETs random paths; latencies in
    ms of those answered 200 (others are errors)."""
    result = common.Latency(label)
    lock = threading.Lock()
    ready = threading.Barrier(clients)

    def client(n: int) -> None:
        rng = random.Random(1000 + n)
        mine: list[float] = []
        errors: list[str] = []
        with httpx.Client(base_url=base, timeout=60) as http:
            for _ in range(warmup):
                http.get(rng.choice(paths))
            ready.wait()
            for _ in range(per_client):
                path = rng.choice(paths)
                started = time.perf_counter()
                r = http.get(path)
                _ = r.content
                elapsed = (time.perf_counter() - started) * 1000
                if r.status_code == 200:
                    mine.append(elapsed)
                else:
                    errors.append(f"{path}: HTTP {r.status_code}")
        with lock:
            result.ms.extend(mine)
            result.errors.extend(errors)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return result


def run(url: str, clients: int, requests: int) -> bool:
    """Measure and print; True when both targets are met."""
    tiles = tiles_over_parcels(url)
    pins = common.sample_pins(url, n=500)
    per_client = max(requests // clients, 1)
    server = Server(url)
    try:
        api_tile = http_latency(
            server.base, "tile z14 pub.parcel_balance (HTTP)",
            [f"/collections/pub.parcel_balance/tiles/WebMercatorQuad/{z}/{x}/{y}"
             for z, x, y in tiles], clients, per_client)
        api_pin = http_latency(server.base, "parcel balance by PIN (HTTP /api/parcel)",
                               [f"/api/parcel?pin={p}" for p in pins], clients, per_client)
    finally:
        server.close()
    sql = common.concurrent_latency(url, [
        ("tile z14 pub.parcel_balance_tile (SQL)", TILE_SQL,
         lambda rng: dict(zip("zxy", rng.choice(tiles), strict=True))),
        ("pub.parcel_balance by PIN (SQL)", BALANCE_SQL, lambda rng: {"pin": rng.choice(pins)}),
    ], clients=clients, per_client=per_client)
    sql_tile, sql_pin = sql.values()
    print(f"\n{clients} concurrent clients, {per_client} requests each; "
          f"{len(tiles)} distinct z14 tiles, {len(pins)} PINs")
    ok = True
    for http_l, sql_l, target in ((api_tile, sql_tile, TILE_TARGET_MS),
                                  (api_pin, sql_pin, BALANCE_TARGET_MS)):
        passed = http_l.p95 < target and not http_l.errors
        ok = ok and passed
        print(f"  {http_l.line()}")
        print(f"  {sql_l.line()}")
        print(f"    target HTTP p95 < {target:g} ms: {'pass' if passed else 'FAIL'}")
    for lat in (api_tile, api_pin):
        if lat.errors:
            print(f"note: {lat.label}: {len(lat.errors)} errors, e.g. {lat.errors[0]}")
    return ok


ATTACK_RATIO = 2.0
ATTACKERS = 4
ATTACK_SECONDS = 600.0   # a bound; the attackers stop when the measured clients finish


def attack_requests() -> list[tuple[str, str, dict]]:
    """(method, path, httpx keyword arguments) of each attack class."""
    items = "/collections/pub.parcel_balance/items"
    big = b"x" * (4 * 1024 * 1024)
    return [
        ("GET", items, {"params": {"filter": "int4(version())=1"}}),
        ("GET", items, {"params": {"filter": "pg_sleep(10) IS NULL"}}),
        ("GET", items, {"params": {"filter": '{"op":"=","args":[{"op":"set_config","args":'
                                             '["statement_timeout","0",false]},"0"]}',
                                   "filter-lang": "cql2-json"}}),
        ("GET", items, {"params": {"filter": "lo_from_bytea(0, 'x') > 0"}}),
        ("GET", items, {"params": {"filter": "(" * 2000 + "pin='a'" + ")" * 2000}}),
        ("GET", items, {"params": {"bbox": "a,b,c,d"}}),
        ("GET", items, {"params": {"offset": "1e30"}}),
        ("GET", items, {"params": {"ids": str(10 ** 30)}}),
        ("GET", "/collections/pub.parcel/tiles/WebMercatorQuad/-1/0/0", {}),
        ("POST", "/api/screen", {"content": big}),
        ("POST", "/api/screen", {"content": b'{"type":"Feature","properties":[1]}'}),
    ]


def attackers(base: str, stop: threading.Event, seen: dict[int, int]) -> list[threading.Thread]:
    """ATTACKERS threads sending attack_requests() in turn until `stop` (or the bound)."""
    lock = threading.Lock()

    def attacker(n: int) -> None:
        plan = attack_requests()
        deadline = time.monotonic() + ATTACK_SECONDS
        with httpx.Client(base_url=base, timeout=60) as http:
            i = n
            while not stop.is_set() and time.monotonic() < deadline:
                method, path, kw = plan[i % len(plan)]
                i += 1
                try:
                    status = http.request(method, path, **kw).status_code
                except httpx.HTTPError:
                    status = 0   # the server closed a connection it refused (413)
                with lock:
                    seen[status] = seen.get(status, 0) + 1

    return [threading.Thread(target=attacker, args=(n,)) for n in range(ATTACKERS)]


def run_attack(url: str, clients: int, requests: int, out: Path | None) -> bool:
    """The mixed load quiet, then beside the attackers; True when the target is met."""
    tiles = tiles_over_parcels(url)
    pins = common.sample_pins(url, n=500)
    paths = ([f"/collections/pub.parcel_balance/tiles/WebMercatorQuad/{z}/{x}/{y}"
              for z, x, y in tiles]
             + [f"/collections/pub.parcel_balance/items?pin={p}" for p in pins])
    per_client = max(requests // clients, 1)
    server = Server(url)
    try:
        load_before = os.getloadavg()
        quiet = http_latency(server.base, "tiles and items, quiet", paths, clients,
                             per_client)
        stop = threading.Event()
        seen: dict[int, int] = {}
        threads = attackers(server.base, stop, seen)
        for t in threads:
            t.start()
        try:
            loud = http_latency(server.base, "tiles and items, beside attackers", paths,
                                clients, per_client)
        finally:
            stop.set()
            for t in threads:
                t.join()
        load_after = os.getloadavg()
        alive = httpx.get(server.base + "/healthz", timeout=10).status_code == 200
    finally:
        server.close()
    ratio = loud.p95 / quiet.p95 if quiet.p95 else float("inf")
    fives = sum(n for status, n in seen.items() if status >= 500)
    ok = ratio <= ATTACK_RATIO and not fives and alive and not quiet.errors \
        and not loud.errors
    lines = [
        f"# rulem-db serve under attack ({time.strftime('%Y-%m-%d')})", "",
        "bench/web.py --attack: "
        f"{clients} clients mixing z14 tiles of pub.parcel_balance and its items by PIN, "
        f"{per_client} requests each, quiet and then beside {ATTACKERS} attacker threads "
        "(tests/web/test_web_attack.py's classes).", "",
        f"- machine: {common.machine()}",
        f"- load average before {load_before[0]:.2f} {load_before[1]:.2f} "
        f"{load_before[2]:.2f}, after {load_after[0]:.2f} {load_after[1]:.2f} "
        f"{load_after[2]:.2f} (a shared machine: indicative only; re-run on a quiet one)",
        f"- database: {make_url(url).database}", "",
        f"    {quiet.line()}", f"    {loud.line()}", "",
        f"- p95 under attack / quiet: {ratio:.2f} (target <= {ATTACK_RATIO:g})",
        f"- attack requests by status: "
        f"{', '.join(f'{k}: {v}' for k, v in sorted(seen.items()))} "
        f"(0 = connection closed by the server after refusing a body)",
        f"- server alive afterwards: {alive}",
        f"- result: {'pass' if ok else 'FAIL'}", ""]
    text = "\n".join(lines)
    print(text)
    if out is not None:
        out.write_text(text)
        print(f"written to {out}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--size", choices=sorted(common.SIZES), default="plan")
    parser.add_argument("--url", help="a superuser URL of a database with a recomputed ledger "
                                      "(default: a clone of the generated plan area)")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=400,
                        help="requests of each kind, across all clients")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--attack", action="store_true",
                        help="48 clients of tiles and items, quiet and beside attackers")
    parser.add_argument("--out", type=Path,
                        help="with --attack: the result file (default "
                             "bench/results/<date>-web.md)")
    args = parser.parse_args(argv)
    if args.attack:
        if args.clients == 8:
            args.clients = 48
        if args.requests == 400:
            args.requests = 2400
    name = None
    url = args.url
    try:
        if url is None:
            size = common.SIZES[args.size]
            name = f"{common.PREFIX}_web_{size.name}"
            url, _ = common.plan_area_database(name, size)
            print(f"plan area {size.name}: recomputing the ledger ...", flush=True)
            ledger.recompute(url, all=True)
        print(f"machine: {common.machine()}")
        if args.attack:
            out = args.out or ROOT / "bench" / "results" / f"{time.strftime('%Y-%m-%d')}-web.md"
            ok = run_attack(url, args.clients, args.requests, out)
        else:
            ok = run(url, args.clients, args.requests)
    finally:
        if name and not args.keep:
            common.drop_database(name)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
