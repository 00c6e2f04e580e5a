"""Backup and restore with PostgreSQL's own tools (pg_dump custom format, pg_restore).

Why plain pg_dump: it is what a DBA trusts and can restore without this program. It works for
our append-only tables because pg_dump puts triggers and foreign keys in its post-data section:
pg_restore loads every version exactly as stored (valid_from, valid_to, who, batch) before the
versioning triggers exist again. Passwords go to the tools through the environment (PGPASSWORD),
never on a command line or in a message.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from rulem_db import db as dbmod


class BackupError(RuntimeError):
    """A backup or restore that could not be done, with the reason."""


def _tool(name: str, url: str) -> str:
    """The pg_dump/pg_restore matching the server's major version (Debian keeps several)."""
    with dbmod.connect(url) as conn:
        major = int(conn.execute(sa.text("SHOW server_version_num")).scalar()) // 10000
    for candidate in (Path(f"/usr/lib/postgresql/{major}/bin/{name}"),):
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if not found:
        raise BackupError(f"{name} not found: install postgresql-client-{major}")
    return found


def _libpq(url: str) -> tuple[list[str], dict[str, str]]:
    """Connection arguments and environment for a libpq tool, password kept out of argv."""
    u = make_url(url)
    env = dict(os.environ)
    if u.password:
        env["PGPASSWORD"] = u.password
    args = ["--dbname", u.database or "postgres"]
    host = u.host or u.query.get("host")
    if host:
        args += ["--host", host if isinstance(host, str) else host[0]]
    port = u.port or u.query.get("port")
    if port:
        args += ["--port", str(port if not isinstance(port, tuple) else port[0])]
    if u.username:
        args += ["--username", u.username]
    return args, env


def _run(cmd: list[str], env: dict[str, str], what: str) -> None:
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = " ".join(proc.stderr.split())[:500]
        raise BackupError(f"{what} failed: {detail}")


def backup(url: str, path: Path) -> Path:
    """Write the whole database (schema, every version, ledger, findings) to path."""
    path = Path(path)
    args, env = _libpq(url)
    tmp = path.with_name(path.name + ".partial")
    _run([_tool("pg_dump", url), "--format=custom", "--no-password", "--file", str(tmp), *args],
         env, "pg_dump")
    tmp.replace(path)  # a crash mid-dump never leaves a truncated file under the real name
    return path


def restore(url: str, path: Path) -> None:
    """Restore a backup into an empty database (one without rulem-db's schema)."""
    path = Path(path)
    if not path.is_file():
        raise BackupError(f"{path}: no such backup file")
    with dbmod.connect(url) as conn:
        if conn.execute(sa.text("SELECT to_regclass('ops.setting')")).scalar() is not None:
            raise BackupError(
                f"{make_url(url).database} already holds a rulem-db schema: restore into a new, "
                "empty database (createdb, then --db pointing at it)")
    args, env = _libpq(url)
    _run([_tool("pg_restore", url), "--no-password", "--exit-on-error", "--single-transaction",
          *args, str(path)], env, f"pg_restore of {path.name}")
    dbmod.migrate(url)  # a backup of an older release comes up to date; styles re-pointed
