"""README's "Using another database" on a PostgreSQL server that has never held rulem-db.

Each test makes an empty cluster of its own (tests/support/throwaway_cluster.py), plays the DBA
there (a login for the application, database `rulem`, the extensions), then runs the commands as
README writes them, as subprocesses of the installed `rulem-db`, with RULEM_DATABASE_URL set:
`rulem-db db init --srid 26915`, `rulem-db demo`, `rulem-db serve`. The cluster is removed
afterwards. The installing login is not a superuser: it has CREATEROLE, or nothing, in which case a
DBA creates the group roles from the refusal's own words (docs/operations.md, "A district's own
server").
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from throwaway_cluster import Cluster, free_port, throwaway_cluster

pytestmark = pytest.mark.slow

GROUP_ROLES = ("rulem_etl", "rulem_staff", "rulem_gis", "rulem_restricted", "rulem_editor")
RULEM_DB = Path(sys.executable).parent / "rulem-db"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with throwaway_cluster() as made:
        yield made


def _dba_prepares(cluster: Cluster, createrole: bool) -> str:
    """What README asks of a DBA: a login, its database, PostGIS and btree_gist; returns the
    URL README's example names (rulem_owner:secret@.../rulem)."""
    cluster.psql(f"CREATE ROLE rulem_owner LOGIN {'CREATEROLE' if createrole else ''} "
                 "PASSWORD 'secret';\nCREATE DATABASE rulem OWNER rulem_owner;\n")
    cluster.psql("CREATE EXTENSION postgis;\nCREATE EXTENSION btree_gist;\n", "rulem")
    return cluster.url("rulem_owner", "secret")


def _rulem_db(url: str, *argv: str, cwd: Path, timeout: float = 600
              ) -> subprocess.CompletedProcess:
    """`rulem-db ARGV` as a shell runs it, with RULEM_DATABASE_URL=url; the demo's files go to
    a cache of the test's own (XDG_CACHE_HOME), not the user's."""
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("PG")}
    env |= {"RULEM_DATABASE_URL": url, "XDG_CACHE_HOME": str(cwd / "cache")}
    return subprocess.run([str(RULEM_DB), *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _roles_present(cluster: Cluster) -> set[str]:
    return set(cluster.psql(
        "SELECT rolname FROM pg_roles WHERE rolname LIKE 'rulem\\_%'").split())


def test_readme_commands_on_a_server_that_never_held_rulem_db(
        cluster: Cluster, tmp_path: Path) -> None:
    url = _dba_prepares(cluster, createrole=True)
    assert _roles_present(cluster) == {"rulem_owner"}   # nothing of rulem-db's yet

    init = _rulem_db(url, "db", "init", "--srid", "26915", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert init.stdout.startswith("database ready: postgresql+psycopg2://rulem_owner:***@")
    assert "(working CRS EPSG:26915, plan area acd-53-62)" in init.stdout
    # not a superuser: harden.sql is the DBA's, and init says so in one line
    assert init.stderr.count("\n") == 1 and "sql/superuser/harden.sql" in init.stderr
    assert _roles_present(cluster) == {"rulem_owner", *GROUP_ROLES}

    demo = _rulem_db(url, "demo", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "run 1 (acd-53-62): done" in demo.stdout
    entries, findings, parcels = cluster.psql(
        "SELECT (SELECT count(*) FROM pub.ledger_entry), (SELECT count(*) FROM pub.finding), "
        "(SELECT count(*) FROM pub.parcel_balance)", "rulem").strip().split("|")
    assert int(entries) > 0 and int(findings) > 0 and int(parcels) > 0
    assert f"ledger: {entries} entries posted" in demo.stdout
    assert list((tmp_path / "reports").glob("*-run-1/index.html"))

    # the web login, as docs/operations.md ("The web service") has a DBA make it
    cluster.psql("CREATE ROLE rulem_gis_web LOGIN PASSWORD 'web-secret' IN ROLE rulem_gis;\n"
                 "ALTER ROLE rulem_gis_web SET default_transaction_read_only = on;\n")
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("PG")}
    env["RULEM_DATABASE_URL"] = cluster.url("rulem_gis_web", "web-secret")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen([str(RULEM_DB), "serve", "--port", str(port)], cwd=tmp_path,
                                 env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        health = _wait_for(base + "/healthz", serve, log)
        assert health.json()["database"] == "ok"
        assert health.json()["latest_run"]["status"] == "done"
        collections = httpx.get(base + "/collections", timeout=30,
                                headers={"Accept": "application/json"})
        assert collections.status_code == 200
        ids = {c["id"] for c in collections.json()["collections"]}
        assert {"pub.parcel_balance", "pub.finding", "pub.wetland"} <= ids
        items = httpx.get(base + "/collections/pub.parcel_balance/items", timeout=30,
                          params={"limit": 1000}, headers={"Accept": "application/geo+json"})
        assert items.status_code == 200 and len(items.json()["features"]) == int(parcels)
    finally:
        serve.terminate()
        try:
            serve.wait(timeout=20)
        except subprocess.TimeoutExpired:
            serve.kill()
            serve.wait()


def _wait_for(url: str, proc: subprocess.Popen, log: Path, seconds: float = 120
              ) -> httpx.Response:
    """GET url until it answers 200; fails with the server's log if it exits or never does."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        if proc.poll() is not None:
            pytest.fail(f"rulem-db serve exited {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            answer = httpx.get(url, timeout=5)
            if answer.status_code == 200:
                return answer
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"rulem-db serve did not answer {url}: {log.read_text()[-2000:]}")
        time.sleep(0.3)


def test_init_without_createrole_says_what_the_dba_runs_then_works(
        cluster: Cluster, tmp_path: Path) -> None:
    url = _dba_prepares(cluster, createrole=False)
    schemas = cluster.psql("SELECT string_agg(nspname, ',' ORDER BY nspname) "
                           "FROM pg_namespace", "rulem")

    refused = _rulem_db(url, "db", "init", "--srid", "26915", cwd=tmp_path)
    assert refused.returncode != 0 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith(
        "rulem-db db: group roles rulem_etl, rulem_staff, rulem_gis, rulem_restricted, "
        "rulem_editor do not exist and rulem_owner may not create them (no CREATEROLE): "
        "a DBA runs once on this server: CREATE ROLE rulem_etl NOLOGIN;"), refused.stderr
    # the database exactly as it was
    assert cluster.psql("SELECT string_agg(nspname, ',' ORDER BY nspname) "
                        "FROM pg_namespace", "rulem") == schemas
    assert _roles_present(cluster) == {"rulem_owner"}

    statements = re.findall(r"CREATE ROLE \w+ NOLOGIN;", refused.stderr)
    assert len(statements) == len(GROUP_ROLES)
    cluster.psql("\n".join(statements) + "\n")
    init = _rulem_db(url, "db", "init", "--srid", "26915", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    status = _rulem_db(url, "db", "status", "--format", "csv", cwd=tmp_path)
    assert status.returncode == 0
    assert "working_srid,26915" in status.stdout
    assert "plan_area.acd-53-62" in status.stdout
