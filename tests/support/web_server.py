"""`rulem-db serve` on the reconciled demo, for the web tests (the API's and the browser's).

Why a subprocess: the acceptance is that the command a deployment runs answers plain HTTP;
an in-process app would skip the command line, its login checks and uvicorn. One server per
test module (module scope): a copy of the demo as recomputed and checked once per session
(tests/conftest.py's `reconciled_demo`, made with reconcile_demo), a login in `rulem_gis`
made for it, and `rulem-db --db <that login> serve` on a free loopback port until the module
ends.

Use from a test module:

    from web_server import web_server_fixture  # noqa: F401  (provides `web_server`)

    def test_x(web_server):
        httpx.get(web_server.base_url + "/healthz")

`web_server.url` is the clone's superuser URL (to compare with SQL), `web_server.gis_url`
the login the server reads with.
"""

from __future__ import annotations

import itertools
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from clones import cloned
from sqlalchemy.engine import URL

from demo import DEMO_PLAN_AREA
from rulem_db import db

ROOT = Path(__file__).resolve().parents[2]
STARTUP_SECONDS = 120.0  # a deadline for a loaded machine, not a speed assertion
_names = itertools.count()


@dataclass
class WebServer:
    """A running `rulem-db serve`: where it answers and which database it reads."""

    base_url: str
    port: int
    url: str = field(repr=False)       # superuser URL of the served database
    gis_url: str = field(repr=False)   # the rulem_gis login the server uses
    log: Path = field(default=Path("/dev/null"))


def free_port() -> int:
    """A loopback port nobody listens on now (the kernel's choice)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def reconcile_demo(url: str) -> None:
    """The demo's ledger and checks, as the nightly leaves them: recompute everything, then a
    full plan-wide check run (both record runs, which /healthz and the ETags read)."""
    from rulem_db import checks, ledger

    ledger.recompute(url, all=True, workers=1)
    checks.run_checks(url, plan_area=DEMO_PLAN_AREA[0], since_last=False)


def gis_login(admin_url: URL, database: str) -> Iterator[str]:
    """A fresh login in `rulem_gis` (cluster-wide, dropped afterwards); yields its URL."""
    user = f"t_web_{os.getpid()}_{next(_names)}"
    password = secrets.token_urlsafe(18)
    eng = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f"CREATE ROLE {user} LOGIN PASSWORD :p IN ROLE rulem_gis"),
                         {"p": password})
        yield admin_url.set(username=user, password=password, database=database,
                            drivername="postgresql").render_as_string(hide_password=False)
    finally:
        with eng.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {user}"))
        eng.dispose()


def start_serve(db_url: str, log: Path, extra: tuple[str, ...] = (),
                env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str, int]:
    """Start `rulem-db --db URL serve` on a free port (with `env` added to the environment)
    and wait until /healthz answers 200."""
    port = free_port()
    env = {**{k: v for k, v in os.environ.items()
              if k not in ("RULEM_DATABASE_URL", "PYTHONDONTWRITEBYTECODE")}, **(env or {})}
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "rulem_cli", "--db", db_url, "serve", "--host", "127.0.0.1",
         "--port", str(port), *extra],
        cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_SECONDS
    while True:
        if proc.poll() is not None:
            out.close()
            raise RuntimeError(f"rulem-db serve exited {proc.returncode}: "
                               f"{log.read_text()[-2000:]}")
        try:
            if httpx.get(base + "/healthz", timeout=5).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            stop_serve(proc)
            raise RuntimeError(f"rulem-db serve did not answer: {log.read_text()[-2000:]}")
        time.sleep(0.3)
    out.close()
    return proc, base, port


def stop_serve(proc: subprocess.Popen) -> None:
    """End the server we started (by its own process, nothing else)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module", name="web_server")
def web_server_fixture(admin_url: URL, reconciled_demo: str,
                       tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebServer]:
    """`rulem-db serve` on a copy of the reconciled demo, as a rulem_gis login."""
    with cloned(admin_url, reconciled_demo, "rulem_web") as url:
        # as after any copy: the database's own settings (no TEMPORARY for readers, which a
        # copy does not keep) and the QGIS styles re-pointed at its name
        db.migrate(url)
        database = sa.engine.make_url(url).database
        for gis_url in gis_login(admin_url, database):
            log = tmp_path_factory.mktemp("web_server") / "serve.log"
            proc, base, port = start_serve(gis_url, log)
            try:
                yield WebServer(base, port, url, gis_url, log)
            finally:
                stop_serve(proc)
