"""Shared pieces of the benchmark harness (bench/run.py, bench/load.py): scratch databases on
the embedded cluster, the generated plan areas at three sizes (kept as templates between runs),
concurrent-client latency, an ingest in a child process that reports its peak memory, and the
result table.

Why one module: every figure of the harness must be measured the same way on the same kind of
database, and the expensive part (generating a county in SQL) must happen once, not per script.
The generator itself is the ledger benchmark's (bench/recompute.py: GENERATE, TRANSFERS_SQL),
run here with the size's parameters, so the two benchmarks measure the same county.

Scratch databases are all named rulem_bench_run_*; the database `rulem` is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import psycopg2  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from demo import DEMO_PLAN_AREA  # noqa: E402
from rulem_db import db  # noqa: E402

# Scratch databases: rulem_bench_run_*, or a longer prefix of one's own (RULEM_BENCH_PREFIX,
# e.g. rulem_bench_run_mine) so that two people's harnesses on one cluster never share a
# template or a work database.
PREFIX = os.environ.get("RULEM_BENCH_PREFIX", "rulem_bench_run")
if not PREFIX.startswith("rulem_bench_run"):
    raise SystemExit(f"RULEM_BENCH_PREFIX must start with rulem_bench_run, not {PREFIX!r}")
SRID = 26915


# -- sizes -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Size:
    """One size of the generated plan area and of the ingest files.

    The plan area is the ledger benchmark's (bench/recompute.py): a grid of cols x rows parcels
    of pw x ph metres from the corner of Anoka County's box, delineations tiling that box,
    wetlands (basins and `complexes` large outlines of thousands of vertices) placed inside the
    plan boundary, permits working on them. The boundary is Anoka County's real outline, or for
    the small size the parcel grid's own envelope (the county's corner holds no county).
    """

    name: str
    cols: int
    rows: int
    pw: float
    ph: float
    wetlands: int
    complexes: int
    permits: int
    heritage: int
    projects: int
    transfers: int
    ingest_features: int      # polygons in the GeoPackage timed against ogr2ogr
    county_outline: bool = True
    memory_factor: int = 10   # the memory test ingests a file this many times larger
    tiles: int = 1            # copies of the county side by side (bench/recompute.py TILE_DX)

    @property
    def parcels(self) -> int:
        return self.cols * self.rows * self.tiles

    def params(self) -> dict[str, Any]:
        """Bind parameters of bench/recompute.py's GENERATE."""
        from bench import recompute as ledger_bench

        if self.county_outline:
            boundary = ledger_bench.anoka_outline()
        else:
            import shapely

            box = shapely.box(ledger_bench.X0, ledger_bench.Y0,
                              ledger_bench.X0 + self.cols * self.pw,
                              ledger_bench.Y0 + self.rows * self.ph)
            boundary = shapely.to_wkb(shapely.set_srid(box, SRID), hex=True, include_srid=True)
        n = self.tiles  # one tile's figures: the generator runs once per tile
        return {"x0": ledger_bench.X0, "y0": ledger_bench.Y0, "cols": self.cols,
                "rows": self.rows, "pw": self.pw, "ph": self.ph, "wetlands": self.wetlands // n,
                "complexes": self.complexes // n, "permits": self.permits // n,
                "heritage": self.heritage // n, "projects": self.projects // n,
                "county": boundary}


# The generator pairs permit k with basin 13 k (wetlands >= complexes + 13 x permits) and needs
# one complex at least; it places District projects 3 to 36 km into the county's box, outside
# the small size's plan area, so that size has none. County: the ledger benchmark's own sizes.
SIZES: dict[str, Size] = {
    "plan": Size("plan", cols=10, rows=5, pw=102.2, ph=159.4, wetlands=80, complexes=1,
                 permits=5, heritage=5, projects=0, transfers=1, ingest_features=50,
                 county_outline=False),
    "county": Size("county", cols=380, rows=264, pw=102.2, ph=159.4, wetlands=30_000,
                   complexes=300, permits=2_000, heritage=500, projects=10, transfers=100,
                   ingest_features=100_000),
    # Larger sizes are the county repeated side by side (tiles, bench/recompute.py says why):
    # region, 3 counties, measures growth without the hours of the state size.
    "region": Size("region", cols=380, rows=264, pw=102.2, ph=159.4, wetlands=90_000,
                   complexes=900, permits=6_000, heritage=1_500, projects=30,
                   transfers=300, ingest_features=300_000, tiles=3),
    "state": Size("state", cols=380, rows=264, pw=102.2, ph=159.4, wetlands=300_000,
                  complexes=3_000, permits=20_000, heritage=5_000, projects=100,
                  transfers=1_000, ingest_features=1_000_000, tiles=10),
}


# -- the cluster and scratch databases ---------------------------------------------------------

def admin_url() -> sa.engine.URL:
    """The superuser URL of the cluster: RULEM_TEST_ADMIN_URL, else the embedded one."""
    url = os.environ.get("RULEM_TEST_ADMIN_URL")
    if not url:
        from rulem_db.local import cluster

        url = cluster.ensure_embedded().admin_url
    return make_url(url).set(drivername="postgresql+psycopg2")


def url_of(name: str) -> str:
    """The URL of a database of the cluster (password included: it is passed, never printed)."""
    return admin_url().set(database=name).render_as_string(hide_password=False)


@contextmanager
def _maintenance() -> Iterator[sa.Connection]:
    eng = sa.create_engine(admin_url().set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            yield conn
    finally:
        eng.dispose()


def _check_name(name: str) -> None:
    if not name.startswith("rulem_bench_run"):
        raise ValueError(f"benchmark databases are named rulem_bench_run*; refusing {name!r}")


def create_database(name: str, template: str | None = None) -> str:
    """(Re)create a scratch database, empty or as a copy of a template; returns its URL.

    CREATE DATABASE fails while anyone is connected to its template (colleagues' tests open
    template1 now and then), so it is retried for a while. A copy of a template is made with
    STRATEGY FILE_COPY: PostgreSQL 15's default (WAL_LOG) writes the 300 MB of a county
    through the 128 MB of shared buffers, evicting what was cached and leaving dirty pages
    that the next timed step would pay to write.
    """
    _check_name(name)
    with _maintenance() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        sql = f'CREATE DATABASE "{name}"' + (
            f' TEMPLATE "{template}" STRATEGY FILE_COPY' if template else "")
        for attempt in range(30):
            try:
                conn.execute(sa.text(sql))
                break
            except sa.exc.OperationalError:
                if attempt == 29:
                    raise
                time.sleep(1.0)
    return url_of(name)


def checkpoint() -> None:
    """Write every dirty page now (CHECKPOINT), so that a timed step does not pay for what
    the harness wrote before it (a cloned or migrated database)."""
    with _maintenance() as conn:
        conn.execute(sa.text("CHECKPOINT"))


def drop_database(name: str) -> None:
    _check_name(name)
    with _maintenance() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def _comment(name: str) -> str | None:
    with _maintenance() as conn:
        return conn.execute(sa.text(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = :n"),
            {"n": name}).scalar()


def _keep_as_template(work: str, template: str, key: str) -> None:
    with _maintenance() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)'))
        conn.execute(sa.text(f'CREATE DATABASE "{template}" TEMPLATE "{work}"'))
        conn.execute(sa.text(f"COMMENT ON DATABASE \"{template}\" IS '{key}'"))


def _schema_key() -> str:
    """What a migrated database depends on: the SQL files and the Alembic revisions."""
    h = hashlib.sha256()
    for folder in (ROOT / "sql", ROOT / "migrations" / "versions"):
        for path in sorted(folder.iterdir()):
            if path.suffix in (".sql", ".py"):
                h.update(path.name.encode())
                h.update(path.read_bytes())
    for path in sorted((ROOT / "rulem_db" / "catalogue").glob("*.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def empty_database(name: str) -> str:
    """A migrated database with the demo plan area and nothing else, cloned from a kept
    template (made on first use, or again when the schema files changed)."""
    template = f"{PREFIX}_empty_src"
    key = "rulem-db bench empty " + _schema_key()
    if _comment(template) != key:
        work = f"{PREFIX}_empty_work"
        url = create_database(work)
        db.migrate(url, srid=SRID, plan_area=DEMO_PLAN_AREA)
        _keep_as_template(work, template, key)
        drop_database(work)
    return create_database(name, template)


# -- the generated plan area -------------------------------------------------------------------

def _generator() -> tuple[str, str]:
    from bench import recompute as ledger_bench

    return ledger_bench.GENERATE, ledger_bench.TRANSFERS_SQL


def _plan_key(size: Size, seed: float) -> str:
    """What a generated plan area depends on: the generator, the size, the seed, and the schema
    (triggers fill derived tables such as the ledger's wetland pieces while it generates, so a
    changed SQL file or migration makes a new one)."""
    generate, transfers = _generator()
    text = f"{generate}{transfers}{size}{seed}{_schema_key()}"
    return "rulem-db bench plan area " + hashlib.sha256(text.encode()).hexdigest()[:16]


def generate_plan_area(url: str, size: Size, seed: float) -> None:
    """Fill a migrated database with the ledger benchmark's generated plan area at this size
    (all in SQL, generate_series), then ANALYZE."""
    from bench import recompute as ledger_bench

    ledger_bench.generate_tiles(url, {"seed": seed, **size.params()}, size.tiles,
                                size.transfers, seed, log=print)
    eng = db.engine(url, isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            conn.execute(sa.text("VACUUM ANALYZE"))
    finally:
        eng.dispose()


def plan_area_database(name: str, size: Size, seed: float = 0.42,
                       fresh: bool = False) -> tuple[str, float | None]:
    """A database holding the generated plan area with an empty ledger and no check run.

    Cloned from the kept template rulem_bench_run_<size>_src when the same generator, size,
    seed and schema made it; generated otherwise (minutes) and kept. Two harness processes
    must not generate the same size at once (they would share the work database). Returns the
    URL and the generation time in seconds (None when cloned).
    """
    template = f"{PREFIX}_{size.name}_src"
    key = _plan_key(size, seed)
    if not fresh and _comment(template) == key:
        url = create_database(name, template)
        db.migrate(url)
        return url, None
    started = time.perf_counter()
    work = f"{PREFIX}_{size.name}_work"
    url = empty_database(work)
    generate_plan_area(url, size, seed)
    seconds = time.perf_counter() - started
    _keep_as_template(work, template, key)
    drop_database(work)
    url = create_database(name, template)
    db.migrate(url)
    return url, seconds


def counts(url: str) -> dict[str, int]:
    from bench import recompute as ledger_bench

    with db.connect(url) as conn:
        return {k: int(v) for k, v in conn.execute(sa.text(ledger_bench.COUNTS_SQL)).all()}


# -- timing ------------------------------------------------------------------------------------

def timed(label: str, fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run fn, print how long it took (progress for the person waiting), return both."""
    started = time.perf_counter()
    value = fn()
    seconds = time.perf_counter() - started
    print(f"  {label:<64} {seconds:9.2f} s", flush=True)
    return seconds, value


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) by linear interpolation between closest ranks."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q / 100.0
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


@dataclass
class Latency:
    """Latencies (milliseconds) of one kind of query, across all clients."""

    label: str
    ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def p50(self) -> float:
        return percentile(self.ms, 50)

    @property
    def p95(self) -> float:
        return percentile(self.ms, 95)

    @property
    def max(self) -> float:
        return max(self.ms) if self.ms else float("nan")

    def line(self) -> str:
        return (f"{self.label:<44} {len(self.ms):7,d} queries  p50 {self.p50:8.2f} ms  "
                f"p95 {self.p95:8.2f} ms  max {self.max:9.2f} ms  errors {len(self.errors)}")


Query = tuple[str, str, Callable[[random.Random], dict[str, Any]]]  # label, SQL, params


def concurrent_latency(url: str, queries: Sequence[Query], clients: int = 8,
                       per_client: int | None = 200, until: threading.Event | None = None,
                       warmup: int = 5, seed: int = 7) -> dict[str, Latency]:
    """Each of `clients` threads (one connection each, autocommit) runs the queries in turn,
    `per_client` rounds or until the event is set; returns the latencies per query label.

    psycopg2 releases the GIL while it waits for the server, so the threads are concurrent
    clients as far as the database is concerned. Parameters come from a seeded random
    generator per client, so a run is repeatable.
    """
    u = make_url(url)
    results = {label: Latency(label) for label, _, _ in queries}
    lock = threading.Lock()
    ready = threading.Barrier(clients)
    failed: list[BaseException] = []

    def client(n: int) -> None:
        try:
            measure(n)
        except BaseException as exc:  # re-raised in the caller's thread
            failed.append(exc)
            ready.abort()  # the others stop waiting for this one

    def measure(n: int) -> None:
        rng = random.Random(seed * 1000 + n)
        conn = psycopg2.connect(host=u.host, port=u.port, dbname=u.database, user=u.username,
                                password=u.password, application_name="rulem-bench")
        conn.autocommit = True
        mine: dict[str, list[float]] = {label: [] for label, _, _ in queries}
        errors: dict[str, list[str]] = {label: [] for label, _, _ in queries}
        try:
            with conn.cursor() as cur:
                for _ in range(warmup):
                    for _, sql, params in queries:
                        cur.execute(sql, params(rng))
                        cur.fetchall()
                ready.wait()
                rounds = 0
                while (per_client is None or rounds < per_client) and not (
                        until is not None and until.is_set()):
                    for label, sql, params in queries:
                        p = params(rng)
                        started = time.perf_counter()
                        try:
                            cur.execute(sql, p)
                            cur.fetchall()
                        except psycopg2.Error as exc:
                            errors[label].append(" ".join(str(exc).split())[:200])
                            continue
                        mine[label].append((time.perf_counter() - started) * 1000)
                    rounds += 1
        finally:
            conn.close()
            with lock:
                for label in mine:
                    results[label].ms.extend(mine[label])
                    results[label].errors.extend(errors[label])

    threads = [threading.Thread(target=client, args=(n,), name=f"bench-client-{n}")
               for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = next((e for e in failed if not isinstance(e, threading.BrokenBarrierError)), None)
    if first is not None:
        raise first
    return results


def sample_pins(url: str, n: int = 2000, seed: int = 11) -> list[str]:
    """PINs of current parcels to look up (deterministic sample)."""
    with db.connect(url) as conn:
        pins = conn.execute(sa.text(
            "SELECT pin FROM core.parcel WHERE valid_to IS NULL ORDER BY parcel_id")).scalars()
        pins = list(pins)
    rng = random.Random(seed)
    return rng.sample(pins, min(n, len(pins)))


def sample_permits(url: str, n: int = 500, seed: int = 13) -> list[str]:
    with db.connect(url) as conn:
        permits = list(conn.execute(sa.text(
            "SELECT permit_no FROM core.permit WHERE valid_to IS NULL ORDER BY permit_id")
        ).scalars())
    rng = random.Random(seed)
    return rng.sample(permits, min(n, len(permits)))


# -- ingest in a child process (peak memory) ---------------------------------------------------

@dataclass
class ChildIngest:
    """What an ingest in a child process reported."""

    seconds: float
    peak_rss_mb: float
    baseline_rss_mb: float   # the child's peak after its imports, before the ingest
    message: str
    stages: list[tuple[str, float]]


def ingest_in_child(url: str, layer: str, path: Path) -> ChildIngest:
    """Run etl.ingest.ingest in a fresh Python process and return its time and peak RSS
    (VmHWM of that process: everything Python, pyogrio/GDAL and Arrow held at once)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "ingest-child", layer,
                          str(path)], input=url, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"the ingest child failed: {out.stderr.strip()[-2000:]}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return ChildIngest(data["seconds"], data["peak_rss_kb"] / 1024,
                       data["baseline_rss_kb"] / 1024, data["message"],
                       [tuple(s) for s in data["stages"]])


def peak_rss_kb() -> int:
    """This process's peak resident set (VmHWM, kB).

    Not getrusage's ru_maxrss: Linux carries that over fork and exec, so a child would report
    its parent's peak (the harness holds a million polygons while it forks); VmHWM belongs to
    the process's own address space, new at exec.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux


def _ingest_child(layer: str, path: str) -> None:
    """The child's side: the URL on stdin (never on the command line), one JSON line out."""
    from bench.ingest import Stages
    from etl.ingest import ingest

    url = sys.stdin.read().strip()
    baseline = peak_rss_kb()
    stages = Stages()
    started = time.perf_counter()
    result = ingest(url, layer, path, progress=stages)
    seconds = time.perf_counter() - started
    peak = peak_rss_kb()
    print(json.dumps({"seconds": seconds, "peak_rss_kb": peak, "baseline_rss_kb": baseline,
                      "message": result.message, "stages": stages.durations()}))


# -- the nightly reconciliation in a child process (time budget) --------------------------------

@dataclass
class ChildNightly:
    """What a nightly reconciliation in a child process reported (None fields: it ran out of
    its time budget and was stopped)."""

    seconds: float
    finished: bool
    error: str | None = None
    run_id: int | None = None
    findings: int | None = None
    changed: bool | None = None
    entries_posted: int | None = None
    parcels_changed: int | None = None


def terminate_sessions(database: str) -> int:
    """End every session on one of the harness's scratch databases (after a stopped child)."""
    _check_name(database)
    with _maintenance() as conn:
        return len(conn.execute(sa.text(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = :d AND pid <> pg_backend_pid()"), {"d": database}).all())


def nightly_in_child(url: str, reports: Path, full: bool, budget_s: float) -> ChildNightly:
    """Run flows.nightly.reconcile_now (use_prefect=False) in a child process, as shipped (only
    what changed) or with full=True (recompute every owner, check every permit: what
    `rulem-db reconcile --full` does), within a time budget.

    Why a child: a run that outlasts its budget must be stopped without waiting for retries
    (a cancelled query is a transient error the flows retry for minutes); killing the child and
    ending its sessions stops it, and the next run marks its record abandoned.
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    args = [sys.executable, str(Path(__file__).resolve()), "nightly-child", str(reports),
            "full" if full else "shipped"]
    started = time.perf_counter()
    try:
        out = subprocess.run(args, input=url, capture_output=True, text=True, env=env,
                             timeout=budget_s)
    except subprocess.TimeoutExpired:
        terminate_sessions(make_url(url).database or "")
        return ChildNightly(time.perf_counter() - started, False)
    if out.returncode != 0:  # the run failed: its last line says why
        lines = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
        return ChildNightly(time.perf_counter() - started, False,
                            error=lines[-1][:300] if lines else f"exit {out.returncode}")
    data = json.loads(out.stdout.strip().splitlines()[-1])
    return ChildNightly(data.pop("seconds"), True, **data)


def _nightly_child(reports: str, mode: str) -> None:
    """The child's side: the URL on stdin (never on the command line), one JSON line out."""
    from flows import nightly

    url = sys.stdin.read().strip()
    started = time.perf_counter()
    s = nightly.reconcile_now(url, reports=Path(reports), use_prefect=False, full=mode == "full")
    print(json.dumps({"seconds": time.perf_counter() - started, "run_id": s.run_id,
                      "findings": s.findings, "changed": s.changed,
                      "entries_posted": s.entries_posted, "parcels_changed": s.parcels_changed}))


# -- the result table --------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the result table: our figure beside its comparison, the ratio, the target."""

    figure: str
    ours: str
    comparison: str
    ratio: str = ""
    target: str = ""
    passed: bool | None = None

    @property
    def verdict(self) -> str:
        return "" if self.passed is None else ("PASS" if self.passed else "MISS")


def machine() -> str:
    """Cores, memory and load average: the context every figure needs."""
    load = os.getloadavg()
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()} cores, {mem:.0f} GiB, load average {load[0]:.2f} {load[1]:.2f} "
            f"{load[2]:.2f} at {time.strftime('%Y-%m-%d %H:%M')}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "ingest-child":
        _ingest_child(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "nightly-child":
        _nightly_child(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit("usage: common.py ingest-child LAYER PATH | nightly-child REPORTS "
                         "shipped|full  (the database URL on stdin)")
