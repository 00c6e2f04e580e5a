"""A hot standby serving reads while the primary takes the writes (rulem_db/local/standby.py):
an entry posted on the primary shows on the standby, `rulem-db balance` reads there, and
`rulem-db recompute` is refused there in one line.

One throwaway primary cluster and one standby of it for the module, on free loopback ports
(never the embedded cluster's: a base backup copies a whole cluster, every test database
included); both are stopped and deleted at the end, also when a test fails.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from demo import DEMO_PLAN_AREA
from rulem_cli import main as cli
from rulem_db import db
from rulem_db.local import standby
from rulem_db.local.cluster import ROLES_SQL

BIN = Path("/usr/lib/postgresql/15/bin")
ADMIN = "rulem_standby_test_admin"
PASSWORD = "standby-test-only"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server(cmd: list[str], stdin: str | None = None) -> None:
    """A server tool as the OS user that runs PostgreSQL (postgres when we are root)."""
    argv = ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd="/",
                          check=False, timeout=120)
    assert proc.returncode == 0, f"{cmd[0]}: {proc.stderr.strip()[-400:]}"


@pytest.fixture(scope="module")
def primary() -> Iterator[tuple[str, Path]]:
    """A small primary cluster of its own: initdb, PostGIS preloaded, replication allowed
    from loopback (initdb's default pg_hba), the schema migrated (the group roles first, as
    the embedded cluster makes them); yields (superuser URL of
    database rulem, base folder for the standby)."""
    if not (BIN / "initdb").is_file():
        pytest.skip("PostgreSQL 15 server tools not installed")
    base = Path(tempfile.mkdtemp(prefix="rulem-standby-"))
    base.chmod(0o755)
    data, port = base / "primary", _free_port()
    data.mkdir(mode=0o700)
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    try:
        _server([str(BIN / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8",
                 "--locale=C.UTF-8", "--auth-local=peer", "--auth-host=scram-sha-256", "-N"])
        with (data / "postgresql.auto.conf").open("a") as fh:
            fh.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\n"
                     f"unix_socket_directories = '{data}'\nshared_preload_libraries = "
                     "'postgis-3'\nfsync = off\nsynchronous_commit = off\n")
        _server([str(BIN / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w",
                 "start"])
        _server([str(BIN / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", str(data),
                 "-p", str(port), "-d", "postgres"],
                stdin=f"CREATE ROLE {ADMIN} LOGIN SUPERUSER PASSWORD '{PASSWORD}';\n"
                      "CREATE DATABASE rulem;\n" + ROLES_SQL.read_text())
        url = f"postgresql+psycopg2://{ADMIN}:{PASSWORD}@127.0.0.1:{port}/rulem"
        db.migrate(url, srid=26915, plan_area=DEMO_PLAN_AREA)
        yield url, base
    finally:
        if (data / "postmaster.pid").exists():
            _server([str(BIN / "pg_ctl"), "-D", str(data), "-w", "-m", "immediate", "stop"])
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def pair(primary: tuple[str, Path]) -> Iterator[tuple[str, str, standby.Standby]]:
    """(primary URL, standby URL, the standby), made by `rulem-db db standby create`."""
    url, base = primary
    folder, port = base / "standby", _free_port()
    try:
        assert cli.main(["--db", url, "db", "standby", "create", "--port", str(port),
                         "--dir", str(folder)]) == 0
        made = standby.load(folder)
        assert (made.port, made.slot) == (port, f"rulem_standby_{port}")
        yield url, standby.reader_url(url, made), made
    finally:
        if (folder / "postmaster.pid").exists():
            assert cli.main(["--db", url, "db", "standby", "remove", "--dir", str(folder)]) == 0


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_an_entry_posted_on_the_primary_is_read_on_the_standby(
        pair: tuple[str, str, standby.Standby], capsys: pytest.CaptureFixture) -> None:
    url, reader, made = pair
    eng = sa.create_engine(url)
    try:
        with eng.begin() as conn:   # test_ledger_cli's site: A-1 owes 2.4711 ac, holds 4.9421
            s.base_site(conn, {"W1": (50, 0, 150, 100)})
            s.parcel(conn, "01-31-23-11-0001", (0, 0, 300, 600))
            s.parcel(conn, "01-31-23-11-0002", (300, 0, 600, 600))
            p = s.permit(conn, "24-001")
            s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")
            s.replacement(conn, p, (350, 400, 550, 500), "basin")
    finally:
        eng.dispose()
    assert _cli(capsys, "--db", url, "recompute")[0] == 0
    standby.wait_caught_up(url, reader)
    assert [name for name, _, _ in standby.replay_lag(url)] == [made.slot]   # streaming
    eng = sa.create_engine(reader)
    try:
        with eng.connect() as conn:
            assert conn.execute(sa.text("SELECT pg_is_in_recovery()")).scalar() is True
            entries = conn.execute(sa.text(
                "SELECT count(*) FROM pub.ledger_entry WHERE permit_no = '24-001'")).scalar()
    finally:
        eng.dispose()
    assert entries == 4

    code, out, err = _cli(capsys, "--db", reader, "balance", "--format", "json")
    assert (code, err) == (0, "")
    plan = json.loads(out)
    assert (plan[0]["required_acres"], plan[0]["credit_acres"], plan[0]["balance_acres"]) == \
        (2.4711, 4.9421, 2.4710)


def test_writing_commands_are_refused_on_the_standby_in_one_line(
        pair: tuple[str, str, standby.Standby], capsys: pytest.CaptureFixture) -> None:
    url, reader, _ = pair
    code, out, err = _cli(capsys, "--db", reader, "recompute", "--all")
    assert code != 0 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("rulem-db recompute: database rulem on 127.0.0.1:")
    assert "is a read-only standby (pg_is_in_recovery): run recompute on the primary" in err
    code, _, err = _cli(capsys, "--db", reader, "finding", "ack", "1")
    assert code != 0 and "run finding ack on the primary" in err
    code, out, err = _cli(capsys, "--db", reader, "finding", "list")   # reading: works
    assert (code, err) == (0, "")
    code, out, _ = _cli(capsys, "--db", reader, "db", "status", "--format", "json")
    role = {r["item"]: r["value"] for r in json.loads(out)}["role"]
    assert code == 0 and role.startswith("read-only standby, last transaction replayed 20")
    assert _cli(capsys, "--db", url, "recompute")[0] == 0                # the primary writes
