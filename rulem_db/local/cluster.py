"""The embedded default database: a private PostgreSQL + PostGIS cluster on this machine.

Why it exists: the command line, the test suite and a new colleague's laptop all need a PostGIS
database with known roles, without anyone writing connection strings by hand. When no
``--db``/``RULEM_DATABASE_URL`` is given, everything falls back to this cluster.

Two ways to run it, because PostgreSQL refuses to run as root:

* as root (CI machines, servers): a dedicated Debian cluster ``<version>/rulem`` made with
  postgresql-common (``pg_createcluster``/``pg_ctlcluster``), so it is managed like any other
  cluster on the host (``pg_lsclusters`` lists it, systemd starts it at boot). Clients connect
  over TCP 127.0.0.1 with SCRAM passwords (Debian's default ``pg_hba.conf`` allows that).
* as a normal user: ``initdb`` into ``${XDG_DATA_HOME:-~/.local/share}/rulem-db/pgdata``, no
  TCP at all, the unix socket in the 0700 state folder, so "trust" on the socket only lets the
  folder's owner in.

Roles: ``rulem_admin`` (superuser; creates extensions, used by the test suite),
``rulem_owner`` (owns database ``rulem`` and its schema, runs migrations, backups and
restores) and ``rulem_writer`` (the day-to-day login of ingest, recompute, checks and the
nightly: a member of ``rulem_etl`` that owns nothing, so the append-only rules hold for it
without exception). Passwords are generated once and kept in ``embedded.json`` (mode 0600)
in the state folder; they are never printed. ``postgis`` and ``btree_gist`` are created in
``rulem`` and in ``template1`` so that every database a test creates already has them.

Run ``python -m rulem_db.local.cluster ensure|status|start|stop`` for the same operations from a
shell (scripts/test uses ``ensure``).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rulem_db.paths import HARDEN_SQL, SQL_DIR

DATABASE = "rulem"
ADMIN_ROLE = "rulem_admin"
OWNER_ROLE = "rulem_owner"
WRITER_ROLE = "rulem_writer"  # the day-to-day login: a member of rulem_etl that owns nothing
EXTENSIONS = ("postgis", "btree_gist")
CLUSTER_NAME = "rulem"
DEFAULT_PORT = 5433
MIN_VERSION = 15
ROOT_STATE_DIR = Path("/var/lib/rulem-db")
# Written on template1 once its extensions exist: lets the fast path see that template1 is ready
# without connecting to it (a connection to template1 makes concurrent CREATE DATABASE fail).
TEMPLATE_MARKER = "rulem-db embedded: postgis, btree_gist"
BOOTSTRAP_HINT = "run scripts/bootstrap"

Progress = Callable[[str], None]
ROLES_SQL = SQL_DIR / "001_roles.sql"


class ClusterError(RuntimeError):
    """The embedded cluster could not be created, started or reached; the message says why
    and what to do about it."""


@dataclass
class Embedded:
    """How to reach the embedded database. The URLs carry passwords, so they are kept out of
    ``repr`` (pytest prints reprs of failing values)."""

    host: str
    port: int
    database: str
    owner_url: str = field(repr=False)
    admin_url: str = field(repr=False)
    writer_url: str = field(repr=False)


# --------------------------------------------------------------------------------------------
# Where things are


@dataclass
class _Layout:
    """One place that knows the paths of the cluster in the current mode (root or user)."""

    mode: str  # "debian" (root, postgresql-common) or "user" (initdb in the state folder)
    version: int | None  # major version of an existing cluster, else the one we would create
    state_dir: Path
    data_dir: Path
    socket_dir: Path
    log_file: Path
    conf_file: Path

    @property
    def state_file(self) -> Path:
        return self.state_dir / "embedded.json"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "embedded.lock"

    @property
    def bindir(self) -> Path:
        return Path(f"/usr/lib/postgresql/{self.version}/bin")

    def exists(self) -> bool:
        return self.conf_file.is_file() and (self.data_dir / "PG_VERSION").is_file()

    def configured_port(self) -> int | None:
        value = _read_conf(self.conf_file).get("port")
        return int(value) if value and value.isdigit() else None

    def running_pid(self) -> int | None:
        """The postmaster's pid if it is alive (cheap: reads postmaster.pid, no subprocess)."""
        try:
            first = (self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0]
            pid = int(first)
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    @property
    def tcp(self) -> bool:
        return self.mode == "debian"

    @property
    def host(self) -> str:
        return "127.0.0.1" if self.tcp else str(self.socket_dir)


def _is_root() -> bool:
    return os.geteuid() == 0


def _user_state_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rulem-db"


def _wanted_port() -> int:
    raw = os.environ.get("RULEM_EMBEDDED_PORT", "").strip()
    if not raw:
        return DEFAULT_PORT
    if not raw.isdigit() or not 1024 <= int(raw) <= 65535:
        raise ClusterError(f"RULEM_EMBEDDED_PORT={raw!r} is not a port number (1024-65535)")
    return int(raw)


def _installed_versions() -> list[int]:
    """Server major versions >= MIN_VERSION installed under /usr/lib/postgresql, newest first."""
    found = []
    for postgres in Path("/usr/lib/postgresql").glob("*/bin/postgres"):
        name = postgres.parent.parent.name
        if name.isdigit() and int(name) >= MIN_VERSION:
            found.append(int(name))
    return sorted(found, reverse=True)


def _pick_version() -> int | None:
    """Prefer the newest server that also has PostGIS; fall back to the newest server so that
    the missing-PostGIS error can name the right package."""
    versions = _installed_versions()
    for v in versions:
        if Path(f"/usr/share/postgresql/{v}/extension/postgis.control").is_file():
            return v
    return versions[0] if versions else None


def _read_conf(path: Path) -> dict[str, str]:
    """The uncommented ``name = value`` lines of a postgresql.conf (later lines win)."""
    settings: dict[str, str] = {}
    try:
        text = path.read_text()
    except OSError:
        return settings
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z_][\w.]*)\s*=?\s*('(?:[^']|'')*'|[^\s#]+)", line)
        if m:
            value = m.group(2)
            if value.startswith("'"):
                value = value[1:-1].replace("''", "'")
            settings[m.group(1)] = value
    return settings


def _layout() -> _Layout:
    if _is_root():
        existing = sorted(
            (
                int(p.parent.parent.name)
                for p in Path("/etc/postgresql").glob("*/rulem/postgresql.conf")
                if p.parent.parent.name.isdigit()
            ),
            reverse=True,
        )
        version = existing[0] if existing else _pick_version()
        v = version if version is not None else MIN_VERSION
        conf = Path(f"/etc/postgresql/{v}/{CLUSTER_NAME}/postgresql.conf")
        settings = _read_conf(conf)
        sockets = settings.get("unix_socket_directories", "/var/run/postgresql")
        return _Layout(
            mode="debian",
            version=version,
            state_dir=ROOT_STATE_DIR,
            data_dir=Path(
                settings.get("data_directory", f"/var/lib/postgresql/{v}/{CLUSTER_NAME}")
            ),
            socket_dir=Path(sockets.split(",")[0].strip() or "/var/run/postgresql"),
            log_file=Path(f"/var/log/postgresql/postgresql-{v}-{CLUSTER_NAME}.log"),
            conf_file=conf,
        )
    state = _user_state_dir()
    data = state / "pgdata"
    version = None
    with contextlib.suppress(OSError, ValueError):
        version = int((data / "PG_VERSION").read_text().strip())
    return _Layout(
        mode="user",
        version=version if version is not None else _pick_version(),
        state_dir=state,
        data_dir=data,
        socket_dir=state,
        log_file=state / "postgresql.log",
        conf_file=data / "postgresql.conf",
    )


# --------------------------------------------------------------------------------------------
# Small helpers


def _clean_env() -> dict[str, str]:
    """The environment for PostgreSQL tools, without PG* variables that could point them at
    another server or user."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PG")}


def _log_tail(layout: _Layout, lines: int = 8) -> str:
    """The log's last lines for an error message. Only the file's end is read: a cluster's log
    is never rotated by us and can grow to gigabytes (every migration's DDL is logged)."""
    try:
        with layout.log_file.open("rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - 64 * 1024))
            tail = fh.read().decode(errors="replace").splitlines()[-lines:]
    except OSError:
        return ""
    return f"\nlast lines of {layout.log_file}:\n" + "\n".join(tail) if tail else ""


def _run(
    cmd: list[str],
    what: str,
    fix: str,
    layout: _Layout | None = None,
    stdin: str | None = None,
    detach: bool = False,
) -> str:
    """Run a PostgreSQL tool; on failure raise ClusterError naming the step and the fix.
    ``detach`` starts it in its own session so a Ctrl-C in the caller's terminal does not
    reach a server it launched."""
    try:
        proc = subprocess.run(
            cmd,
            input=stdin,
            capture_output=True,
            text=True,
            cwd="/",
            env=_clean_env(),
            start_new_session=detach,
            timeout=300,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ClusterError(f"{what} failed: {cmd[0]} not found; {fix}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"{what} timed out after 300 s; {fix}") from exc
    if proc.returncode != 0:
        detail = (proc.stderr.strip() or proc.stdout.strip()).splitlines()[-5:]
        tail = _log_tail(layout) if layout else ""
        raise ClusterError(
            f"{what} failed (exit {proc.returncode}): {' / '.join(detail)}; {fix}{tail}"
        )
    return proc.stdout


def _scram_verifier(password: str, iterations: int = 4096) -> str:
    """A SCRAM-SHA-256 verifier (RFC 5803 form, as PostgreSQL stores it), so the plain
    password never reaches the server, its logs or a psql command line."""
    salt = secrets.token_bytes(16)
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()

    def b64(b: bytes) -> str:
        return base64.b64encode(b).decode()

    return f"SCRAM-SHA-256${iterations}:{b64(salt)}${b64(stored_key)}:{b64(server_key)}"


def _load_state(layout: _Layout) -> dict[str, Any] | None:
    try:
        with layout.state_file.open() as fh:
            state = json.load(fh)
        passwords = state["passwords"]
        roles = (ADMIN_ROLE, OWNER_ROLE)
        if all(isinstance(passwords.get(r), str) and passwords[r] for r in roles):
            return state
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def _save_state(layout: _Layout, state: dict[str, Any]) -> None:
    """Write the state file atomically with mode 0600 (it holds the passwords)."""
    layout.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = layout.state_file.with_suffix(".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(state, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, layout.state_file)


@contextlib.contextmanager
def _locked(layout: _Layout) -> Iterator[None]:
    """Serialise the slow path between processes (e.g. several pytest workers at once)."""
    layout.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(layout.state_dir, 0o700)
    fd = os.open(layout.lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _connect(layout: _Layout, port: int, role: str, password: str, dbname: str) -> Any:
    import psycopg2  # imported here: status() and the CLI's --help should not pay for it

    conn = psycopg2.connect(
        host=layout.host,
        port=port,
        user=role,
        password=password,
        dbname=dbname,
        connect_timeout=10,
        application_name="rulem-db cluster",
    )
    conn.autocommit = True
    return conn


def _url(layout: _Layout, port: int, role: str, password: str) -> str:
    pw = quote(password, safe="")
    if layout.tcp:
        return f"postgresql+psycopg2://{role}:{pw}@{layout.host}:{port}/{DATABASE}"
    sock = quote(layout.host, safe="/")
    return f"postgresql+psycopg2://{role}:{pw}@/{DATABASE}?host={sock}&port={port}"


def _embedded(layout: _Layout, port: int, state: dict[str, Any]) -> Embedded:
    pw = state["passwords"]
    return Embedded(
        host=layout.host,
        port=port,
        database=DATABASE,
        owner_url=_url(layout, port, OWNER_ROLE, pw[OWNER_ROLE]),
        admin_url=_url(layout, port, ADMIN_ROLE, pw[ADMIN_ROLE]),
        writer_url=_url(layout, port, WRITER_ROLE, pw[WRITER_ROLE]),
    )


# --------------------------------------------------------------------------------------------
# Checks


def _require_software(layout: _Layout) -> None:
    """Name the missing package instead of letting initdb or CREATE EXTENSION fail later."""
    v = layout.version
    if v is None or not (layout.bindir / "postgres").is_file():
        raise ClusterError(
            f"no PostgreSQL server >= {MIN_VERSION} is installed (looked in "
            f"/usr/lib/postgresql/*/bin): {BOOTSTRAP_HINT}"
            + ("" if _is_root() else " as root, or: sudo apt-get install -y postgresql-15")
        )
    ext = Path(f"/usr/share/postgresql/{v}/extension")
    if not (ext / "postgis.control").is_file():
        raise ClusterError(f"postgresql-{v}-postgis-3 is not installed: {BOOTSTRAP_HINT}")
    if not (ext / "btree_gist.control").is_file():
        raise ClusterError(f"btree_gist (postgresql-contrib) is not installed: {BOOTSTRAP_HINT}")
    if layout.mode == "debian" and not Path("/usr/bin/pg_createcluster").is_file():
        raise ClusterError(
            "postgresql-common (pg_createcluster) is not installed; as root the embedded "
            f"cluster is a Debian cluster because PostgreSQL refuses to run as root: "
            f"{BOOTSTRAP_HINT}"
        )


def _port_for(layout: _Layout) -> int:
    """The port of an existing cluster wins; RULEM_EMBEDDED_PORT only chooses it at creation.
    A conflicting explicit setting is an error rather than a silent surprise."""
    configured = layout.configured_port() if layout.exists() else None
    if configured is None:
        return _wanted_port()
    if os.environ.get("RULEM_EMBEDDED_PORT") and _wanted_port() != configured:
        how = (
            f"pg_conftool {layout.version} {CLUSTER_NAME} set port {_wanted_port()} && "
            f"pg_ctlcluster {layout.version} {CLUSTER_NAME} restart"
            if layout.mode == "debian"
            else f"edit port in {layout.conf_file} and restart"
        )
        raise ClusterError(
            f"RULEM_EMBEDDED_PORT={_wanted_port()} but the embedded cluster at "
            f"{layout.data_dir} uses port {configured}: unset RULEM_EMBEDDED_PORT, "
            f"or move the cluster: {how}"
        )
    return configured


_READY_SQL = """
select
  (select count(*) from pg_extension where extname in ('postgis', 'btree_gist')) = 2
  and exists (select from pg_roles where rolname = %(owner)s
              and rolcanlogin and rolcreatedb and rolcreaterole)
  and (select pg_get_userbyid(datdba) from pg_database where datname = current_database())
      = %(owner)s
  and shobj_description((select oid from pg_database where datname = 'template1'),
                        'pg_database') = %(marker)s
  and not has_function_privilege('public', 'pg_catalog.pg_advisory_lock(bigint)', 'EXECUTE')
  and not has_function_privilege('public', 'pg_catalog.lo_from_bytea(oid, bytea)', 'EXECUTE')
  and exists (select from pg_auth_members m
              where m.member = (select oid from pg_roles where rolname = %(writer)s)
                and m.roleid = (select oid from pg_roles where rolname = 'rulem_etl'))
"""


def _ready(layout: _Layout, port: int, state: dict[str, Any]) -> bool:
    """True when both logins work and the database, roles and extensions are in place."""
    import psycopg2

    pw = state["passwords"]
    if not pw.get(WRITER_ROLE):  # a state file from before the writer login existed
        return False
    try:
        admin = _connect(layout, port, ADMIN_ROLE, pw[ADMIN_ROLE], DATABASE)
        with contextlib.closing(admin), admin.cursor() as cur:
            cur.execute(_READY_SQL, {"owner": OWNER_ROLE, "marker": TEMPLATE_MARKER,
                                     "writer": WRITER_ROLE})
            if not cur.fetchone()[0]:
                return False
        for role in (OWNER_ROLE, WRITER_ROLE):
            with contextlib.closing(_connect(layout, port, role, pw[role], DATABASE)):
                pass
    except psycopg2.Error:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Creating and starting


def _create(layout: _Layout, port: int, progress: Progress) -> None:
    v = layout.version
    if layout.mode == "debian":
        progress(f"creating PostgreSQL {v} cluster {v}/{CLUSTER_NAME} on port {port}")
        _run(
            [
                "pg_createcluster",
                str(v),
                CLUSTER_NAME,
                "-p",
                str(port),
                "--locale",
                "C.UTF-8",
                "--encoding",
                "UTF8",
                "--start-conf",
                "auto",
            ],
            f"pg_createcluster {v} {CLUSTER_NAME}",
            f"check `pg_lsclusters`; remove a broken cluster with "
            f"`pg_dropcluster {v} {CLUSTER_NAME} --stop`",
        )
        return
    progress(f"creating PostgreSQL {v} cluster in {layout.data_dir} (port {port}, socket only)")
    sock = str(layout.socket_dir)
    if len(sock) + len(f"/.s.PGSQL.{port}") > 103:
        raise ClusterError(
            f"socket path {sock} is too long for a unix socket: set XDG_DATA_HOME to a shorter "
            "folder"
        )
    layout.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(layout.state_dir, 0o700)
    if layout.data_dir.exists() and any(layout.data_dir.iterdir()):
        raise ClusterError(
            f"{layout.data_dir} exists but holds no usable cluster: move it away and retry"
        )
    _run(
        [
            str(layout.bindir / "initdb"),
            "-D",
            str(layout.data_dir),
            "-U",
            ADMIN_ROLE,
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
        ],
        f"initdb {layout.data_dir}",
        f"remove {layout.data_dir} and retry",
    )
    with layout.conf_file.open("a") as fh:
        fh.write(
            "\n# rulem-db embedded cluster: no TCP, socket in the 0700 state folder\n"
            f"port = {port}\n"
            f"unix_socket_directories = '{sock.replace(chr(39), chr(39) * 2)}'\n"
            "listen_addresses = ''\n"
        )


PRELOAD = "postgis-3"  # loaded once by the server, not by every new session
TUNING_MARK = "# rulem-db: server settings (rulem_db/local/cluster.py _tune)"


def _tuning_file(layout: _Layout) -> Path:
    """Where the embedded cluster's own settings go: Debian's conf.d (read after
    postgresql.conf), else postgresql.conf itself."""
    if layout.mode == "debian":
        return layout.conf_file.parent / "conf.d" / "rulem-db.conf"
    return layout.conf_file


def _tune(layout: _Layout) -> None:
    """Preload PostGIS in the server (takes effect at the next start; cheap when done: a stat
    and a read).

    Why: every new session otherwise loads postgis-3.so with GEOS and PROJ on its first
    spatial call, 13-16 ms measured here, which every `rulem-db` command and every pooled
    connection pays once (docs/operations.md). Libraries already preloaded in postgresql.conf
    are kept; nothing is written when the library is not installed (the server would not
    start) or the setting is already there.
    """
    if not (layout.bindir.parent / "lib" / f"{PRELOAD}.so").is_file():
        return
    target = _tuning_file(layout)
    if target.is_file() and TUNING_MARK in target.read_text():
        return
    current = _read_conf(layout.conf_file).get("shared_preload_libraries", "")
    libraries = [x.strip() for x in current.split(",") if x.strip()]
    if PRELOAD in libraries:
        return
    value = ", ".join([*libraries, PRELOAD]).replace("'", "''")
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as fh:
        fh.write(f"\n{TUNING_MARK}\nshared_preload_libraries = '{value}'\n")
    if layout.mode == "debian" and _is_root():
        shutil.chown(target, "postgres", "postgres")


AUDIT_MARK = "# rulem-db: schema changes are logged (rulem_db/local/cluster.py _log_schema_changes)"


def _log_schema_changes(layout: _Layout) -> bool:
    """Log every schema-changing statement (`log_statement = 'ddl'`): who disabled a trigger,
    dropped one or changed a table is in the server log with the role's name.

    Why: the append-only rules (versions, ledger entries, batches and their notes) are
    triggers that hold for every role, the owner included; only the owner can switch them
    off, by an ALTER TABLE, and that statement then leaves a line in the log (docs/design.md,
    "Roles"). Takes effect at the next start or reload (the set-up reloads); returns whether
    it wrote the setting."""
    target = _tuning_file(layout)
    if target.is_file() and AUDIT_MARK in target.read_text():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("a") as fh:
        fh.write(f"\n{AUDIT_MARK}\nlog_statement = 'ddl'\n")
    if layout.mode == "debian" and _is_root():
        shutil.chown(target, "postgres", "postgres")
    return True


def _start(layout: _Layout, progress: Progress) -> None:
    v = layout.version
    progress(f"starting the embedded cluster ({layout.data_dir})")
    if layout.mode == "debian":
        _run(
            ["pg_ctlcluster", str(v), CLUSTER_NAME, "start"],
            f"pg_ctlcluster {v} {CLUSTER_NAME} start",
            f"read {layout.log_file}; is port {layout.configured_port()} taken (`ss -ltnp`)?",
            layout,
            detach=True,
        )
        return
    _run(
        [
            str(layout.bindir / "pg_ctl"),
            "-D",
            str(layout.data_dir),
            "-l",
            str(layout.log_file),
            "-w",
            "-t",
            "60",
            "start",
        ],
        f"pg_ctl start -D {layout.data_dir}",
        f"read {layout.log_file}",
        layout,
        detach=True,
    )


def _bootstrap_admin(layout: _Layout, port: int, password: str) -> None:
    """As root, only the postgres OS user can get in (peer auth): use it once to create
    rulem_admin with its password; everything else then goes through rulem_admin."""
    verifier = _scram_verifier(password)
    sql = (
        "do $$ begin\n"
        f"  if not exists (select from pg_roles where rolname = '{ADMIN_ROLE}') then\n"
        f"    create role {ADMIN_ROLE};\n"
        "  end if;\n"
        "end $$;\n"
        f"alter role {ADMIN_ROLE} login superuser password '{verifier}';\n"
    )
    _run(
        [
            "runuser",
            "-u",
            "postgres",
            "--",
            "psql",
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            str(layout.socket_dir),
            "-p",
            str(port),
            "-d",
            "postgres",
        ],
        f"creating role {ADMIN_ROLE} as the postgres user",
        f"check that cluster {layout.version}/{CLUSTER_NAME} runs (`pg_lsclusters`)",
        layout,
        stdin=sql,
    )


def _login(cur: Any, role: str, attributes: str, password: str, progress: Progress) -> None:
    """Create the login role if missing and (re)set its attributes and password, and its
    connection limit unless one was set (rulem_db.catalogue.hardening.CONNECTION_LIMITS)."""
    from rulem_db.catalogue.hardening import connection_limit_sql

    cur.execute("select 1 from pg_roles where rolname = %s", (role,))
    if cur.fetchone() is None:
        progress(f"creating role {role}")
        cur.execute(f"create role {role}")
    cur.execute(f"alter role {role} login {attributes} password %s",
                (_scram_verifier(password),))
    limit = connection_limit_sql(role)
    if limit:
        cur.execute(limit)


def _provision(layout: _Layout, port: int, state: dict[str, Any], progress: Progress) -> None:
    """Roles, database and extensions; every statement is safe to repeat."""
    pw = state["passwords"]
    with contextlib.closing(_connect(layout, port, ADMIN_ROLE, pw[ADMIN_ROLE], "postgres")) as c:
        cur = c.cursor()
        cur.execute(
            f"alter role {ADMIN_ROLE} login superuser password %s",
            (_scram_verifier(pw[ADMIN_ROLE]),),
        )
        _login(cur, OWNER_ROLE, "createdb createrole", pw[OWNER_ROLE], progress)
        # The group roles (as the migration makes them), and the day-to-day login: a member
        # of rulem_etl that owns nothing, so it writes only through the triggers' rules.
        cur.execute(ROLES_SQL.read_text())
        _login(cur, WRITER_ROLE, "nosuperuser nocreatedb nocreaterole", pw[WRITER_ROLE],
               progress)
        cur.execute(f"grant rulem_etl to {WRITER_ROLE}")

        cur.execute(
            "select shobj_description(oid, 'pg_database') from pg_database "
            "where datname = 'template1'"
        )
        if cur.fetchone()[0] != TEMPLATE_MARKER:
            progress("creating postgis and btree_gist in template1")
            with contextlib.closing(
                _connect(layout, port, ADMIN_ROLE, pw[ADMIN_ROLE], "template1")
            ) as t:
                for ext in EXTENSIONS:
                    t.cursor().execute(f"create extension if not exists {ext}")
            cur.execute("comment on database template1 is %s", (TEMPLATE_MARKER,))

        cur.execute(
            "select pg_get_userbyid(datdba) from pg_database where datname = %s", (DATABASE,)
        )
        row = cur.fetchone()
        if row is None:
            progress(f"creating database {DATABASE} owned by {OWNER_ROLE}")
            cur.execute(f"create database {DATABASE} owner {OWNER_ROLE} template template1")
        elif row[0] != OWNER_ROLE:
            cur.execute(f"alter database {DATABASE} owner to {OWNER_ROLE}")

    with contextlib.closing(_connect(layout, port, ADMIN_ROLE, pw[ADMIN_ROLE], DATABASE)) as c:
        for ext in EXTENSIONS:
            c.cursor().execute(f"create extension if not exists {ext}")
        # what only a superuser can take from the readers (rulem_db/catalogue/hardening.py)
        c.cursor().execute(HARDEN_SQL.read_text())
        c.cursor().execute("select pg_reload_conf()")  # settings written since the start


# --------------------------------------------------------------------------------------------
# Public API


def ensure_embedded(progress: Progress | None = None) -> Embedded:
    """Make the embedded database usable and say how to reach it.

    Idempotent: creates the cluster if missing, starts it if stopped, (re)creates roles,
    passwords, database and extensions as needed. When everything is in place it reads a few
    small files and opens two connections (well under 0.5 s). Raises ClusterError with the fix.
    """
    say = progress or (lambda _msg: None)
    layout = _layout()
    logging_written = False
    if layout.exists():
        _tune(layout)  # a running cluster takes it at its next start (docs/operations.md)
        logging_written = _log_schema_changes(layout)  # the set-up below reloads it
    state = _load_state(layout)
    if state is not None and layout.exists() and layout.running_pid() and not logging_written:
        port = _port_for(layout)
        if _ready(layout, port, state):
            return _embedded(layout, port, state)

    with _locked(layout):
        layout = _layout()  # another process may have created the cluster meanwhile
        state = _load_state(layout)
        if state is None:
            state = {
                "format": 1,
                "mode": layout.mode,
                "passwords": {r: secrets.token_urlsafe(24)
                              for r in (ADMIN_ROLE, OWNER_ROLE, WRITER_ROLE)},
            }
            _save_state(layout, state)
        else:
            os.chmod(layout.state_file, 0o600)
            if not state["passwords"].get(WRITER_ROLE):
                state["passwords"][WRITER_ROLE] = secrets.token_urlsafe(24)
                _save_state(layout, state)
        port = _port_for(layout)
        if layout.exists() and layout.running_pid() and not logging_written \
                and _ready(layout, port, state):
            return _embedded(layout, port, state)

        _require_software(layout)
        if not layout.exists():
            _create(layout, port, say)
            layout = _layout()
        if not layout.running_pid():
            _tune(layout)  # a cluster created just now
            _log_schema_changes(layout)
            _start(layout, say)
        if layout.mode == "debian":
            _bootstrap_admin(layout, port, state["passwords"][ADMIN_ROLE])
        try:
            _provision(layout, port, state, say)
        except Exception as exc:  # psycopg2.Error, but keep the import lazy
            raise ClusterError(
                f"setting up roles, database {DATABASE} and extensions failed: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}; "
                f"read {layout.log_file}"
            ) from exc
        if not _ready(layout, port, state):
            raise ClusterError(
                f"the embedded cluster was set up but the readiness check still fails; "
                f"read {layout.log_file}"
            )
        say(f"embedded database {DATABASE} ready on {layout.host}:{port}")
        return _embedded(layout, port, state)


def status() -> dict[str, Any]:
    """What the embedded cluster looks like right now, without changing anything.

    Keys: mode, exists, running, port, data_directory, version, databases (None when it is not
    running or the admin login does not work), socket_directory, log_file, state_file.
    """
    layout = _layout()
    exists = layout.exists()
    running = exists and layout.running_pid() is not None
    port = layout.configured_port() if exists else None
    databases: list[str] | None = None
    state = _load_state(layout)
    if running and state is not None and port is not None:
        import psycopg2

        with contextlib.suppress(psycopg2.Error):
            pw = state["passwords"][ADMIN_ROLE]
            with contextlib.closing(_connect(layout, port, ADMIN_ROLE, pw, "postgres")) as c:
                cur = c.cursor()
                cur.execute(
                    "select datname from pg_database where not datistemplate order by datname"
                )
                databases = [r[0] for r in cur.fetchall()]
    return {
        "mode": layout.mode,
        "exists": exists,
        "running": running,
        "port": port if port is not None else _wanted_port(),
        "data_directory": str(layout.data_dir),
        "version": layout.version if exists else None,
        "databases": databases,
        "socket_directory": str(layout.socket_dir),
        "log_file": str(layout.log_file),
        "state_file": str(layout.state_file),
    }


def start(progress: Progress | None = None) -> None:
    """Start the embedded cluster if it exists and is stopped (no-op when running)."""
    layout = _layout()
    if not layout.exists():
        raise ClusterError(
            f"no embedded cluster at {layout.data_dir} yet: run `rulem-db db init` "
            "(or rulem_db.local.cluster.ensure_embedded())"
        )
    if layout.running_pid() is None:
        _start(layout, progress or (lambda _msg: None))


def stop(progress: Progress | None = None) -> None:
    """Stop the embedded cluster (fast shutdown; no-op when it is not running)."""
    layout = _layout()
    if not layout.exists() or layout.running_pid() is None:
        return
    (progress or (lambda _msg: None))(f"stopping the embedded cluster ({layout.data_dir})")
    if layout.mode == "debian":
        v = layout.version
        _run(
            ["pg_ctlcluster", str(v), CLUSTER_NAME, "stop", "-m", "fast"],
            f"pg_ctlcluster {v} {CLUSTER_NAME} stop",
            f"read {layout.log_file}",
            layout,
        )
    else:
        _run(
            [str(layout.bindir / "pg_ctl"), "-D", str(layout.data_dir), "-w", "-m", "fast", "stop"],
            f"pg_ctl stop -D {layout.data_dir}",
            f"read {layout.log_file}",
            layout,
        )


def main(argv: list[str] | None = None) -> int:
    """``python -m rulem_db.local.cluster ensure|status|start|stop``: used by scripts/test;
    prints no secrets."""
    args = sys.argv[1:] if argv is None else argv
    command = args[0] if args else "ensure"

    def say(msg: str) -> None:
        print(f"rulem-db: {msg}", file=sys.stderr)

    try:
        if command == "ensure":
            info = ensure_embedded(say)
            print(f"embedded database {info.database} ready on {info.host}:{info.port}")
        elif command == "status":
            print(json.dumps(status(), indent=2))
        elif command == "start":
            start(say)
        elif command == "stop":
            stop(say)
        else:
            print("usage: python -m rulem_db.local.cluster ensure|status|start|stop",
                  file=sys.stderr)
            return 2
    except ClusterError as exc:
        print(f"rulem-db: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
