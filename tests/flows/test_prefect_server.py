"""The scheduled nightly end to end through a real Prefect server (docs/operations.md, section 6).

A `prefect server start` subprocess keeps its state in a database of its own on the project's
cluster (not SQLite); `rulem-db schedule` (a subprocess, as systemd runs it) serves the nightly
deployment to it; runs are made through Prefect's REST API, as the UI's "Run" button does.

- A run so made completes with the same run record, report and ledger as `rulem-db reconcile`
  on an identical copy of the demo database.
- A run whose database goes away mid-run (the recompute waits on a lock the test holds while
  the test cuts the database off) retries its task as configured (RULEM_TASK_RETRIES,
  RULEM_TASK_RETRY_DELAYS: shortened here to seconds), ends Failed in Prefect with the reason,
  and the next run, with the database back, succeeds and marks the failed run's record
  abandoned.

"The database goes away" is a loopback TCP forwarder the test cuts (tests/support/tcp_proxy.py),
not a stopped cluster: the embedded cluster serves the other tests and the Prefect server, and to
the client a cut forwarder is a stopped server (open connections end, new ones are refused).

- The nightly flow called in this process (as `rulem-db reconcile` calls it when
  PREFECT_API_URL is set; marked e2e) runs through the same server: an inbox with two good
  files and one bad one, then the same night again, then a night refused by the lock, with
  their artifacts (one Prefect server per suite: each costs 20-30 s to start).

The server and the served deployment are started once for the module (about 15-25 s).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import flows_fixtures as fx
import httpx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from clones import cloned
from sqlalchemy.engine import URL, make_url
from tcp_proxy import TcpProxy

from flows.retry import DEFAULT_RETRIES

STARTUP_SECONDS = 240
RUN_SECONDS = 240
DEPLOYMENT = "nightly_reconciliation/nightly"
BIN = Path(sys.executable).parent
TERMINAL = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")
# The report's lines that say when, how and by which process: the only ones that differ.
REPORT_RUN_LINES = re.compile(
    r"<tr><td>(started|report written|started via|host, pid)</td><td>[^<]*</td></tr>")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path: Path, lines: int = 40) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _children(pid: int) -> list[str]:
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with suppress(OSError):
            found += (task / "children").read_text().split()
    return found


def _stop_runner(proc: subprocess.Popen) -> None:
    """Stop `rulem-db schedule` once its last flow run's process is gone: stopping it while a
    run's process winds down makes the runner cancel that run first (20 s more)."""
    deadline = time.monotonic() + 30
    while proc.poll() is None and _children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    _stop(proc)


@dataclass
class PrefectServer:
    """A Prefect server being started: `ready()` waits until it answers."""

    api: str
    env: dict[str, str]
    log: Path
    proc: subprocess.Popen

    def ready(self) -> PrefectServer:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            try:
                if httpx.get(f"{self.api}/health", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Prefect server did not start:\n{_tail(self.log)}")
            time.sleep(0.5)

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.api, timeout=30)


@pytest.fixture(scope="module")
def prefect_server(admin_url: URL, memory_tablespace: str | None,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrefectServer]:
    """`prefect server start` on a loopback port, its database on the project's cluster (in
    the test databases' tablespace, tests/conftest.py). It starts while the demo copy is made
    (ready() before use)."""
    home = tmp_path_factory.mktemp("prefect")
    name = f"prefect_{os.getpid()}"
    admin = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT",
                             poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"' + (
            f' TABLESPACE "{memory_tablespace}"' if memory_tablespace else ""))
    port = _free_port()
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(home / "home"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
               PREFECT_SERVER_UI_ENABLED="false", PREFECT_UI_ENABLED="false")
    server_env = dict(env, PREFECT_SERVER_DATABASE_CONNECTION_URL=admin_url.set(
        drivername="postgresql+asyncpg", database=name).render_as_string(hide_password=False))
    log = home / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host",
                                 "127.0.0.1", "--port", str(port)], env=server_env,
                                stdout=out, stderr=subprocess.STDOUT)
    api = f"http://127.0.0.1:{port}/api"
    try:
        yield PrefectServer(api, dict(env, PREFECT_API_URL=api), log, proc)
    finally:
        _stop(proc)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.dispose()


@dataclass
class Served:
    """The nightly deployment served by `rulem-db schedule` against a demo copy reached through
    a forwarder the test can cut."""

    server: PrefectServer
    url: str  # direct (for the test's own reads and locks)
    proxy: TcpProxy
    deployment_id: str
    reports: Path
    log: Path


@pytest.fixture(scope="module")
def served(prefect_server: PrefectServer, admin_url: URL, demo_template: Any,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    work = tmp_path_factory.mktemp("served")
    with ExitStack() as stack:
        url = stack.enter_context(cloned(admin_url, demo_template.name, prefix="rulem_pf"))
        direct = make_url(url)
        proxy = TcpProxy(direct.host or "127.0.0.1", direct.port or 5432).restore()
        stack.callback(proxy.cut)
        through = direct.set(port=proxy.port).render_as_string(hide_password=False)
        prefect_server.ready()
        env = dict(prefect_server.env, PREFECT_RUNNER_POLL_FREQUENCY="1",
                   RULEM_TASK_RETRY_DELAYS="1")
        log = work / "schedule.log"
        reports = work / "reports"
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(BIN / "rulem-db"), "--db", through, "schedule",
                                     "--reports", str(reports)], env=env, cwd=work,
                                    stdout=out, stderr=subprocess.STDOUT)
        stack.callback(_stop_runner, proc)
        deadline = time.monotonic() + STARTUP_SECONDS
        with prefect_server.client() as client:
            while True:
                found = client.get(f"/deployments/name/{DEPLOYMENT}")
                if found.status_code == 200 and found.json().get("last_polled"):
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"rulem-db schedule did not serve {DEPLOYMENT}:\n{_tail(log)}")
                time.sleep(0.5)
        yield Served(prefect_server, url, proxy, found.json()["id"], reports, log)


def _start_run(client: httpx.Client, deployment_id: str) -> str:
    made = client.post(f"/deployments/{deployment_id}/create_flow_run", json={})
    made.raise_for_status()
    return made.json()["id"]


def _wait(client: httpx.Client, flow_run_id: str, log: Path) -> dict:
    deadline = time.monotonic() + RUN_SECONDS
    while True:
        run = client.get(f"/flow_runs/{flow_run_id}").json()
        if run["state"]["type"] in TERMINAL:
            return run
        if time.monotonic() > deadline:
            pytest.fail(f"flow run {flow_run_id} still {run['state']['type']} after "
                        f"{RUN_SECONDS} s:\n{_tail(log)}")
        time.sleep(0.5)


def _record(url: str, flow_run_id: str) -> dict:
    with sa.create_engine(url, poolclass=sa.pool.NullPool).connect() as conn:
        return dict(conn.execute(sa.text(
            "SELECT v.*, o.prefect_flow_run_id FROM pub.reconciliation_run v "
            "JOIN ops.run o USING (run_id) WHERE o.prefect_flow_run_id = :f"),
            {"f": flow_run_id}).mappings().one())


def _ledger(url: str, ledger_run_id: int) -> list[tuple]:
    with sa.create_engine(url, poolclass=sa.pool.NullPool).connect() as conn:
        return [tuple(r) for r in conn.execute(sa.text(
            "SELECT permit_id, district_project, parcel_id, measure, entry_kind, acres, "
            "reverses_entry_id, reason, inputs::text, acres_published, effective_on "
            "FROM ledger.entry WHERE run_id = :r ORDER BY entry_id"), {"r": ledger_run_id})]


def _gpkg_counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM gpkg_contents")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}


RUN_FACTS_THAT_DIFFER = {"run_id", "started_at", "finished_at", "duration", "started_via",
                         "host", "pid", "report_path", "prefect_flow_run_id"}


def test_scheduled_run_matches_reconcile(served: Served, admin_url: URL, demo_template: Any,
                                         tmp_path: Path) -> None:
    with served.server.client() as client:
        flow_run_id = _start_run(client, served.deployment_id)
        run = _wait(client, flow_run_id, served.log)
    assert run["state"]["type"] == "COMPLETED", _tail(served.log)
    assert run["deployment_id"] == served.deployment_id
    scheduled = _record(served.url, flow_run_id)
    assert (scheduled["status"], scheduled["started_via"]) == ("done", "schedule")

    # The same night by hand on an identical copy, as staff would run it.
    from rulem_cli.main import main

    with cloned(admin_url, demo_template.name, prefix="rulem_pf") as by_hand:
        assert main(["--db", by_hand, "reconcile", "--no-prefect",
                     "--reports", str(tmp_path / "reports")]) == 0
        with sa.create_engine(by_hand, poolclass=sa.pool.NullPool).connect() as conn:
            reconciled = dict(conn.execute(sa.text(
                "SELECT * FROM pub.reconciliation_run")).mappings().one())
        ledger_by_hand = _ledger(by_hand, reconciled["ledger_run_id"])
    assert reconciled["started_via"] == "command"

    same = {k: v for k, v in scheduled.items() if k not in RUN_FACTS_THAT_DIFFER}
    assert same == {k: v for k, v in reconciled.items() if k not in RUN_FACTS_THAT_DIFFER}
    assert scheduled["entries_posted"] > 0 and scheduled["finding_count"] > 0
    ledger = _ledger(served.url, scheduled["ledger_run_id"])
    # the same entries; their order (entry ids) is the order the two workers posted in
    assert len(ledger) == scheduled["entries_posted"]
    assert sorted(ledger, key=repr) == sorted(ledger_by_hand, key=repr)

    ours, theirs = Path(scheduled["report_path"]), Path(reconciled["report_path"])
    assert ours.parent == served.reports.resolve()
    names = sorted(p.name for p in ours.iterdir())
    assert names == sorted(p.name for p in theirs.iterdir())
    assert {"index.html", "parcel_balance.csv", "findings.gpkg"} <= set(names)
    for name in names:
        if name.endswith(".gpkg"):
            assert _gpkg_counts(ours / name) == _gpkg_counts(theirs / name), name
        elif name.endswith(".html"):
            page = (ours / name).read_text()
            assert "<td>started via</td><td>schedule</td>" in page
            assert REPORT_RUN_LINES.sub("", page) == \
                REPORT_RUN_LINES.sub("", (theirs / name).read_text())
        else:
            assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name


def _task_runs(client: httpx.Client, flow_run_id: str) -> dict[str, dict]:
    found = client.post("/task_runs/filter",
                        json={"flow_runs": {"id": {"any_": [flow_run_id]}}})
    found.raise_for_status()
    return {t["name"]: t for t in found.json()}


def _wait_for_lock_wait(url: str, holder_pid: int, client: httpx.Client,
                        flow_run_id: str) -> str:
    """Until a session of the flow waits on the lock the test holds (the recompute reads the
    change queue first), so the cut comes mid-run, after the run record was written; returns
    the waiting statement."""
    deadline = time.monotonic() + RUN_SECONDS
    with sa.create_engine(url, poolclass=sa.pool.NullPool).connect() as conn:
        while time.monotonic() < deadline:
            state = client.get(f"/flow_runs/{flow_run_id}").json()["state"]
            if state["type"] in TERMINAL:
                pytest.fail(f"the run ended {state['type']} without waiting on the change "
                            f"queue the test holds: {state.get('message')}")
            waiting = conn.execute(sa.text(
                "SELECT query FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> :h"), {"h": holder_pid}).scalar()
            if waiting:
                return waiting
            conn.rollback()
            time.sleep(0.2)
    pytest.fail("no run reached the recompute")


def test_run_cut_off_mid_run_retries_fails_then_next_succeeds(served: Served) -> None:
    holder = sa.create_engine(served.url, poolclass=sa.pool.NullPool)
    with served.server.client() as client:
        conn = holder.connect()
        try:
            conn.exec_driver_sql("LOCK TABLE ledger.change_queue IN ACCESS EXCLUSIVE MODE")
            holder_pid = conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            failing = _start_run(client, served.deployment_id)
            waiting = _wait_for_lock_wait(served.url, holder_pid, client, failing)
            served.proxy.cut()  # the database "stops" for the run
        finally:
            conn.rollback()
            conn.close()
            holder.dispose()
        try:
            run = _wait(client, failing, served.log)
        finally:
            served.proxy.restore()
        state = run["state"]
        assert state["type"] == "FAILED", f"cut while waiting in {waiting}\n{_tail(served.log)}"
        assert "OperationalError" in state["message"]
        assert re.search(r"Connection refused|closed the connection", state["message"]), \
            state["message"]
        tasks = _task_runs(client, failing)
        recompute = next(t for name, t in tasks.items() if name.startswith("recompute ledger"))
        assert recompute["state"]["type"] == "FAILED"
        assert recompute["run_count"] == DEFAULT_RETRIES + 1  # the first try and 3 retries
        assert not any(name.startswith("run rule checks") for name in tasks)
        # The run could not close its record (the database was gone): still `running`.
        cut_off = _record(served.url, failing)
        assert cut_off["status"] == "running"

        # The database is back: the next run succeeds and closes the abandoned record.
        following = _start_run(client, served.deployment_id)
        run = _wait(client, following, served.log)
    assert run["state"]["type"] == "COMPLETED", _tail(served.log)
    assert _record(served.url, following)["status"] == "done"
    assert _record(served.url, failing)["status"] == "abandoned"


# --- Point 5: a process work pool, two workers, ingests of two plan areas at once ----------

SECOND_PLAN_AREA = ("ramsey-7", "Ramsey County 7")


def _inboxes(root: Path) -> dict[str, Path]:
    """An inbox per plan area, each with a parcel delivery of its own (three 100 m squares)."""
    from ingest_helpers import square, write_gpkg

    boxes = {}
    for n, code in enumerate(("acd-53-62", SECOND_PLAN_AREA[0])):
        folder = root / code / "inbox" / "parcel"
        folder.mkdir(parents=True)
        write_gpkg(folder / "parcels.gpkg",
                   [{"PIN": f"{code}-{i}", "geometry": square(4 * n + i)} for i in range(3)])
        boxes[code] = folder.parent
    return boxes


def _two_plan_areas(stack: ExitStack, admin_url: URL, template: str) -> str:
    """A copy of the migrated template (plan area acd-53-62) with a second plan area."""
    url = stack.enter_context(cloned(admin_url, template, prefix="rulem_pf"))
    with sa.create_engine(url, poolclass=sa.pool.NullPool).begin() as conn:
        conn.execute(sa.text("SELECT core.ensure_plan_area(:c, :n)"),
                     {"c": SECOND_PLAN_AREA[0], "n": SECOND_PLAN_AREA[1]})
    return url


def _loaded(url: str) -> list[tuple]:
    """What the ingests left: the parcels per plan area and each run's outcome."""
    with sa.create_engine(url, poolclass=sa.pool.NullPool).connect() as conn:
        parcels = [tuple(r) for r in conn.execute(sa.text(
            "SELECT pa.code, p.pin, md5(ST_AsBinary(p.geom)), round(ST_Area(p.geom)::numeric, 4) "
            "FROM core.parcel p JOIN core.plan_area pa USING (plan_area_id) "
            "ORDER BY pa.code, p.pin"))]
        outcomes = [tuple(r) for r in conn.execute(sa.text(
            "SELECT pa.code, r.flow, r.status, r.files_loaded, r.files_quarantined "
            "FROM pub.reconciliation_run r JOIN core.plan_area pa ON pa.code = r.plan_area "
            "ORDER BY pa.code"))]
    return parcels + outcomes


def _waiting_sessions(url: str) -> int:
    """Sessions of this database waiting for a lock (the parcel table the test holds, or the
    layer's ingest lock that the first of them took)."""
    with sa.create_engine(url, poolclass=sa.pool.NullPool).connect() as conn:
        return conn.execute(sa.text(
            "SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_database d "
            "ON d.oid = l.database WHERE NOT l.granted AND d.datname = current_database()")
        ).scalar_one()


def test_two_workers_ingest_two_plan_areas_at_once_as_serially(
        prefect_server: PrefectServer, admin_url: URL, template_db: str,
        tmp_path: Path) -> None:
    from flows import nightly

    prefect_server.ready()
    pool = f"rulem-ingest-{os.getpid()}"
    with ExitStack() as stack:
        url = _two_plan_areas(stack, admin_url, template_db)
        env = dict(prefect_server.env, RULEM_DATABASE_URL=url, PREFECT_WORKER_QUERY_SECONDS="1")
        for i in range(2):  # first: they take longest to start
            with open(tmp_path / f"worker{i}.log", "wb") as out:
                worker = subprocess.Popen(
                    [str(BIN / "prefect"), "worker", "start", "--pool", pool, "--type",
                     "process", "--limit", "1"], env=env, cwd=tmp_path, stdout=out,
                    stderr=subprocess.STDOUT)
            stack.callback(_stop, worker)
        made = subprocess.run([str(BIN / "rulem-db"), "--db", url, "schedule", "--work-pool",
                               pool], env=prefect_server.env, capture_output=True, text=True,
                              timeout=STARTUP_SECONDS)
        assert made.returncode == 0, made.stderr
        assert f"process work pool {pool}; deployment ingest_inbox/ingest" in made.stdout
        boxes = _inboxes(tmp_path / "pool")
        with prefect_server.client() as client:
            deployment = client.get("/deployments/name/ingest_inbox/ingest").json()
            assert deployment["work_pool_name"] == pool
            holder = sa.create_engine(url, poolclass=sa.pool.NullPool)
            with holder.connect() as conn:
                # Both ingests wait on locks at the same time (the first on the parcel table
                # the test holds, the second on the layer's ingest lock the first took): two
                # runs in two worker processes at once.
                conn.exec_driver_sql("LOCK TABLE core.parcel IN ACCESS EXCLUSIVE MODE")
                runs = [_start_ingest(client, deployment["id"], code, box)
                        for code, box in boxes.items()]
                deadline = time.monotonic() + RUN_SECONDS
                while _waiting_sessions(url) < 2:
                    if time.monotonic() > deadline:
                        pytest.fail("the two ingests never ran at once:\n" + "\n".join(
                            _tail(tmp_path / f"worker{i}.log", 15) for i in range(2)))
                    time.sleep(0.3)
                conn.rollback()
            holder.dispose()
            done = [_wait(client, r, tmp_path / "worker0.log") for r in runs]
        assert [r["state"]["type"] for r in done] == ["COMPLETED", "COMPLETED"], \
            "\n".join(_tail(tmp_path / f"worker{i}.log", 20) for i in range(2))
        at_once = _loaded(url)

    # The same deliveries, one after the other, on an identical copy.
    with ExitStack() as stack:
        serial_url = _two_plan_areas(stack, admin_url, template_db)
        with nightly.database(serial_url):
            for code, box in _inboxes(tmp_path / "serial").items():
                nightly.ingest_inbox.fn(inbox=str(box), plan_area=code, started_via="work pool")
        serially = _loaded(serial_url)
    assert at_once == serially
    assert len([r for r in at_once if r[1] == "ingest_inbox"]) == 2
    assert ("acd-53-62", "ingest_inbox", "done", 1, 0) in at_once
    assert (SECOND_PLAN_AREA[0], "ingest_inbox", "done", 1, 0) in at_once


def _start_ingest(client: httpx.Client, deployment_id: str, code: str, box: Path) -> str:
    made = client.post(f"/deployments/{deployment_id}/create_flow_run",
                       json={"parameters": {"inbox": str(box), "plan_area": code}})
    made.raise_for_status()
    return made.json()["id"]


@pytest.fixture
def prefect_api(prefect_server: PrefectServer) -> Iterator[PrefectServer]:
    """This process's Prefect settings pointed at the module's server, for flows called here."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    prefect_server.ready()
    with temporary_settings(updates={PREFECT_API_URL: prefect_server.api}):
        yield prefect_server


def _artifacts(keys: list[str]) -> dict[str, list]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys)))
    by_key: dict[str, list] = {}
    for a in found:
        by_key.setdefault(a.key, []).append(a)
    return by_key


@pytest.mark.e2e
def test_nightly_flow_through_prefect(prefect_api: PrefectServer, db_url: str,
                                      engine: sa.Engine, tmp_path: Path) -> None:
    # Permit 25-001 was recorded earlier (fill 100 m x 100 m of wetland, certified replacement
    # 100 m x 50 m); tonight the county's parcels and the plan boundary arrive, and a parcel
    # file without PINs.
    with engine.begin() as conn:
        d = s.delineation(conn, "D-1", fx.at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", fx.at(0, 0, 300, 300))
        permit = s.permit(conn, "25-001", pins=["P-1", "P-2"])
        s.impact(conn, permit, "fill", fx.at(0, 0, 100, 100), "i1")
        s.replacement(conn, permit, fx.at(600, 0, 700, 50), "r1")
    box = fx.inbox_two_good_one_bad(tmp_path)
    reports = tmp_path / "reports"

    from flows import artifacts, nightly, runs

    with nightly.database(db_url):
        first = nightly.nightly_reconciliation(inbox=str(box), reports=str(reports),
                                               started_via="api")
    assert first.status == "partial"  # one file quarantined
    assert {f.rel: f.outcome for f in first.files} == {
        "cwmp_area/boundary.geojson": "loaded", "parcel/parcels_2026.gpkg": "loaded",
        "parcel/parcels_no_pin.geojson": "quarantined"}
    day, run_dir = runs.local_day().isoformat(), f"run-{first.run_id}"
    bad = tmp_path / "quarantine" / day / run_dir / "parcel" / "parcels_no_pin.geojson"
    assert bad.is_file() and "pin" in bad.with_name(bad.name + ".error.txt").read_text()
    assert (tmp_path / "archive" / day / run_dir / "parcel" / "parcels_2026.gpkg").is_file()
    assert "Since the start (this is the first run): 2 file(s) loaded, 1 quarantined" in \
        first.report_path.read_text()
    assert (first.report_path.parent / "parcel_balance.csv").is_file()
    assert first.entries_posted > 0 and round(first.plan_balance_acres, 4) == -1.2356
    with engine.connect() as conn:
        record = conn.execute(sa.text("SELECT * FROM ops.run WHERE run_id = :r"),
                              {"r": first.run_id}).mappings().one()
    assert record["prefect_flow_run_id"]  # it ran through Prefect
    assert (record["status"], record["files_loaded"], record["files_quarantined"]) == (
        "partial", 2, 1)
    assert record["report_path"] == str(first.report_path.parent)

    # The same night again: the inbox holds nothing new, the ledger posts nothing.
    with nightly.database(db_url):
        second = nightly.nightly_reconciliation(inbox=str(box), reports=str(reports),
                                                started_via="api")
    assert (second.status, second.changed, second.files) == ("done", False, [])
    assert (second.entries_posted, second.findings_new, second.findings_resolved,
            second.parcels_changed) == (0, 0, 0, 0)
    assert second.report_path.is_file() and second.report_path != first.report_path

    # While another reconciliation holds the lock, the flow fails at once with its message.
    with runs.ReconcileLock(db_url, runs.plan_area(db_url, None)) as held:
        held_run = held.start_run("nightly_reconciliation", "command")
        with nightly.database(db_url), pytest.raises(runs.ReconcileLocked,
                                                     match=f"by run {held_run} "):
            nightly.nightly_reconciliation(reports=str(reports), started_via="api")

    keys = [artifacts.key(k, "acd-53-62") for k in ("nightly", "finding-changes",
                                                    "parcel-changes")]
    found = _artifacts(keys)
    assert set(found) == set(keys)
    assert any(f"run {second.run_id}" in (a.data or "") for a in found[keys[0]])
