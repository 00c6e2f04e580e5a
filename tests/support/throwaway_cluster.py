"""A PostgreSQL cluster of a test's own: initdb into a temporary folder, started on a free
loopback port, stopped and deleted afterwards (also when the test fails).

Why not the embedded or the test cluster: roles are cluster-wide, and every cluster the suite
otherwise reaches already holds rulem-db's group roles, which hides what a server that never
held rulem-db lacks (docs/operations.md, "A district's own server"). PostgreSQL refuses to
run as root, so as root the server tools run as the `postgres` OS user; otherwise as the
current user. The cluster's superuser is reached over its unix socket only (peer), like a
DBA's psql on the host; clients of the application connect over TCP with passwords.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def free_port() -> int:
    """A loopback port nobody listens on now (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_bindir() -> Path | None:
    """The newest installed PostgreSQL >= 15 that has PostGIS, else None."""
    found = []
    for initdb in Path("/usr/lib/postgresql").glob("*/bin/initdb"):
        version = initdb.parent.parent.name
        if version.isdigit() and int(version) >= 15 and Path(
                f"/usr/share/postgresql/{version}/extension/postgis.control").is_file():
            found.append((int(version), initdb.parent))
    return max(found)[1] if found else None


def _as_server_user(cmd: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
    argv = ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd
    return subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd="/",
                          check=False, timeout=180,
                          env={k: v for k, v in os.environ.items() if not k.startswith("PG")})


@dataclass
class Cluster:
    """A running throw-away cluster: its port, folder and superuser (over the socket)."""

    bindir: Path
    data: Path
    port: int
    superuser: str

    def psql(self, sql: str, database: str = "postgres") -> str:
        """Run SQL as the cluster's superuser (a DBA on the host); raises on any error."""
        proc = _as_server_user(
            [str(self.bindir / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
             "-h", str(self.data), "-p", str(self.port), "-U", self.superuser,
             "-d", database], stdin=sql)
        if proc.returncode != 0:
            raise AssertionError(f"psql on the throw-away cluster: {proc.stderr.strip()}")
        return proc.stdout

    def url(self, user: str, password: str, database: str = "rulem") -> str:
        """A libpq URL over TCP, as a district writes it in RULEM_DATABASE_URL."""
        return f"postgresql://{user}:{password}@127.0.0.1:{self.port}/{database}"


@contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    """An empty cluster (nothing but initdb's own databases and its superuser `postgres`)."""
    bindir = server_bindir()
    if bindir is None:
        raise AssertionError("no PostgreSQL >= 15 with PostGIS installed: run scripts/bootstrap")
    base = Path(tempfile.mkdtemp(prefix="rulem-fresh-"))
    base.chmod(0o755)
    data = base / "data"
    data.mkdir(mode=0o700)
    if os.geteuid() == 0:
        shutil.chown(data, "postgres", "postgres")
    superuser = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    port = free_port()
    try:
        made = _as_server_user(
            [str(bindir / "initdb"), "-D", str(data), "-U", superuser, "-E", "UTF8",
             "--locale=C.UTF-8", "--auth-local=peer", "--auth-host=scram-sha-256", "-N"])
        assert made.returncode == 0, f"initdb: {made.stderr.strip()[-400:]}"
        with (data / "postgresql.auto.conf").open("a") as fh:
            fh.write(f"port = {port}\nlisten_addresses = '127.0.0.1'\n"
                     f"unix_socket_directories = '{data}'\n"
                     "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n")
        started = _as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-l",
                                   str(data / "server.log"), "-w", "start"])
        assert started.returncode == 0, f"pg_ctl start: {started.stderr.strip()[-400:]}"
        yield Cluster(bindir, data, port, superuser)
    finally:
        if (data / "postmaster.pid").exists():
            _as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-w", "-m",
                             "immediate", "stop"])
        shutil.rmtree(base, ignore_errors=True)
