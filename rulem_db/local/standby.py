"""A hot standby of a rulem-db primary on this machine: a second PostgreSQL cluster made with
``pg_basebackup -R`` that follows the primary by streaming replication and answers reads.

Why: GIS and BI readers (QGIS on ``pub``, a dashboard, the export) then read a copy that the
nightly's recompute does not compete with for locks, and a long read never holds up the
primary's vacuum. The standby is read-only by nature (``pg_is_in_recovery()``); `rulem-db`
refuses its writing commands there in one line (rulem_db.db.refuse_standby).

What ``create`` does (the folder and the port are checked first; a failure after the slot
exists stops the standby, empties its folder and drops the slot and login again):

* on the primary (a superuser URL): a login ``rulem_standby_<port>`` with REPLICATION and a
  fresh password (sent as a SCRAM verifier, so it never reaches the server log), and a
  physical replication slot of the same name, so the primary keeps the WAL the standby has not
  received yet (a standby gone for good must be removed, or the slot keeps WAL forever;
  ``max_slot_wal_keep_size`` on the primary caps that, docs/scaling.md);
* ``pg_basebackup -R -X stream -S <slot>`` into the data folder, as the server's OS user
  (``postgres`` when run as root: PostgreSQL refuses to run as root);
* the standby's own settings appended to ``postgresql.auto.conf`` (read last): its port and
  listen address, ``hot_standby_feedback = on`` (the primary's vacuum then keeps the rows a
  standby query still reads, instead of the standby cancelling that query), the primary's
  ``shared_preload_libraries`` and the limits a standby must have at least as high as its
  primary (max_connections and the like), and a ``pg_hba.conf`` when the primary keeps its
  own outside the data folder (Debian); then ``pg_ctl start``.

The same roles and passwords as the primary's work on the standby (they are replicated), so a
reader's URL is the primary's with the standby's port (``reader_url``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg2
from sqlalchemy.engine import make_url

from rulem_db.local.cluster import _scram_verifier

Progress = Callable[[str], None]
ROLE_PREFIX = "rulem_standby_"
MARK = "# rulem-db standby (rulem_db/local/standby.py)"
LOG_NAME = "standby.log"
# Settings a hot standby refuses to start with when they are lower than on its primary.
AT_LEAST_PRIMARY = ("max_connections", "max_worker_processes", "max_wal_senders",
                    "max_prepared_transactions", "max_locks_per_transaction")


class StandbyError(RuntimeError):
    """The standby could not be made, started or removed; the message says why and what to
    do. A RuntimeError, so the command line prints it as one line."""


@dataclass(frozen=True)
class Standby:
    """Where a standby runs: its data folder, port and listen address."""

    data_dir: Path
    port: int
    host: str
    slot: str

    @property
    def log_file(self) -> Path:
        return self.data_dir / LOG_NAME


# --------------------------------------------------------------------------------------------
# Helpers


def _as_server_user(cmd: list[str]) -> list[str]:
    """The command as the OS user that runs PostgreSQL: `postgres` when we are root."""
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _give_to_server_user(path: Path) -> None:
    if os.geteuid() == 0:
        shutil.chown(path, "postgres", "postgres")


def _run(cmd: list[str], what: str, env: dict[str, str] | None = None,
         detach: bool = False) -> None:
    """Run a PostgreSQL tool; on failure raise StandbyError with its last line of output."""
    try:
        proc = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, cwd="/",
                              env=env, timeout=600, check=False, start_new_session=detach)
    except FileNotFoundError as exc:
        raise StandbyError(f"{what}: {cmd[0]} not found (install the PostgreSQL server)") \
            from exc
    if proc.returncode != 0:
        lines = [x.strip() for x in (proc.stderr + proc.stdout).splitlines() if x.strip()]
        raise StandbyError(f"{what} failed: {lines[-1] if lines else proc.returncode}")


@contextlib.contextmanager
def _session(url: str) -> Iterator[psycopg2.extensions.cursor]:
    """An autocommit cursor on `url`: each statement of the set-up stands on its own (a
    role, a slot), and polling a standby wants a fresh snapshot each time."""
    u = make_url(url)
    try:
        conn = psycopg2.connect(host=u.host or "", port=u.port or 5432, user=u.username,
                                password=u.password, dbname=u.database or "postgres",
                                application_name="rulem-db standby")
    except psycopg2.Error as exc:
        raise StandbyError(f"cannot reach {u.render_as_string()}: "
                           f"{' '.join(str(exc).split())}") from exc
    conn.autocommit = True
    try:
        yield conn.cursor()
    finally:
        conn.close()


def _bindir(cur: psycopg2.extensions.cursor) -> Path:
    """The tools of the primary's major version (a standby must run the same major)."""
    cur.execute("SHOW server_version_num")
    major = int(cur.fetchone()[0]) // 10000
    bindir = Path(f"/usr/lib/postgresql/{major}/bin")
    if not (bindir / "pg_basebackup").is_file():
        raise StandbyError(f"{bindir}/pg_basebackup not found: install postgresql-{major}")
    return bindir


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def read_setting(data_dir: Path, name: str) -> str | None:
    """The last value of a setting in the standby's postgresql.auto.conf (None if unset)."""
    path = Path(data_dir) / "postgresql.auto.conf"
    value = None
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            m = re.match(rf"\s*{re.escape(name)}\s*=\s*'?(.*?)'?\s*$", line)
            if m:
                value = m.group(1).replace("''", "'")
    return value


def reader_url(url: str, standby: Standby) -> str:
    """A URL of the primary (any login) pointed at the standby instead."""
    return make_url(url).set(host=standby.host, port=standby.port) \
        .render_as_string(hide_password=False)


# --------------------------------------------------------------------------------------------
# Public API


def create(primary_url: str, data_dir: Path, port: int, host: str = "127.0.0.1",
           progress: Progress | None = None) -> Standby:
    """Make and start a hot standby of the primary (a superuser URL) in `data_dir` (absent or
    empty) listening on host:port; returns it once it accepts connections."""
    say = progress or (lambda _msg: None)
    data_dir = Path(data_dir).absolute()
    if data_dir.exists() and any(data_dir.iterdir()):
        raise StandbyError(f"{data_dir} is not empty: a standby is made in a new folder "
                           "(rulem-db db standby remove deletes an old one)")
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise StandbyError(f"cannot listen on {host}:{port} ({exc.strerror}): pick "
                               "another --port") from exc
    slot = f"{ROLE_PREFIX}{port}"
    created = not data_dir.exists()
    data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    data_dir.chmod(0o700)
    _give_to_server_user(data_dir)
    if os.geteuid() == 0 and subprocess.run(_as_server_user(["test", "-w", str(data_dir)]),
                                            check=False).returncode != 0:
        if created:
            data_dir.rmdir()
        raise StandbyError(f"the postgres user cannot write to {data_dir}: every folder above "
                           "it must be open to it (e.g. /var/lib/postgresql/15/rulem-standby)")
    password = os.urandom(18).hex()
    bindir, settings = _prepare_primary(primary_url, slot, password, say)
    standby = Standby(data_dir=data_dir, port=port, host=host, slot=slot)
    try:
        say(f"copying the primary into {data_dir} (pg_basebackup)")
        u = make_url(primary_url)
        conninfo = (f"host={u.host or ''} port={u.port or 5432} user={slot} "
                    f"application_name={slot}")
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGPASSWORD"] = password
        _run([str(bindir / "pg_basebackup"), "-D", str(data_dir), "-d", conninfo, "-R",
              "-X", "stream", "-S", slot, "-c", "fast", "--no-password"],
             "pg_basebackup from the primary", env=env)
        _configure(data_dir, port, host, settings)
        say(f"starting the standby on {host}:{port}")
        start(standby)
    except BaseException:
        # A slot nobody reads keeps the primary's WAL forever: undo everything.
        with contextlib.suppress(Exception):
            stop(standby)
        for child in data_dir.iterdir():
            shutil.rmtree(child) if child.is_dir() else child.unlink()
        if created:
            data_dir.rmdir()
        with contextlib.suppress(StandbyError):
            _drop_slot_and_login(primary_url, slot)
        raise
    return standby


def _prepare_primary(primary_url: str, slot: str, password: str,
                     say: Progress) -> tuple[Path, dict[str, str]]:
    """Check that the primary can feed a standby, then make its replication login and slot;
    returns the server tools' folder and the settings the standby must copy."""
    with _session(primary_url) as cur:
        bindir = _bindir(cur)
        cur.execute("SELECT current_setting('wal_level'), "
                    "current_setting('max_wal_senders')::int")
        wal_level, senders = cur.fetchone()
        if wal_level not in ("replica", "logical") or senders < 1:
            raise StandbyError(f"the primary has wal_level = {wal_level} and max_wal_senders = "
                               f"{senders}: set wal_level = replica and max_wal_senders >= 2 "
                               "and restart it")
        cur.execute("SELECT count(*) FROM pg_hba_file_rules WHERE 'replication' = ANY(database)"
                    " AND error IS NULL")
        if not cur.fetchone()[0]:
            raise StandbyError(
                "the primary's pg_hba.conf lets no one connect for replication: add "
                f"`host replication {slot} 127.0.0.1/32 scram-sha-256` and reload it")
        cur.execute("SELECT active FROM pg_replication_slots WHERE slot_name = %s", (slot,))
        row = cur.fetchone()
        if row is not None and row[0]:
            raise StandbyError(f"replication slot {slot} is in use by another standby: pick "
                               "another port")
        settings = {}
        for name in (*AT_LEAST_PRIMARY, "shared_preload_libraries"):
            cur.execute("SELECT current_setting(%s)", (name,))
            settings[name] = cur.fetchone()[0]
        say(f"replication login and slot {slot} on the primary")
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (slot,))
        if cur.fetchone() is None:
            cur.execute(f'CREATE ROLE "{slot}"')
        cur.execute(f'ALTER ROLE "{slot}" LOGIN REPLICATION NOSUPERUSER PASSWORD %s',
                    (_scram_verifier(password),))
        if row is None:
            cur.execute("SELECT pg_create_physical_replication_slot(%s)", (slot,))
    return bindir, settings


def _drop_slot_and_login(primary_url: str, slot: str) -> None:
    with _session(primary_url) as cur:
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = %s AND NOT active", (slot,))
        cur.execute(f'DROP ROLE IF EXISTS "{slot}"')


def _configure(data_dir: Path, port: int, host: str, settings: dict[str, str]) -> None:
    """The standby's own settings, after the primary's (postgresql.auto.conf is read last)."""
    lines = [MARK, f"port = {port}", f"listen_addresses = {_quote(host)}",
             f"unix_socket_directories = {_quote(str(data_dir))}",
             "hot_standby = on", "hot_standby_feedback = on",
             "logging_collector = off", "cluster_name = " + _quote(f"rulem standby {port}")]
    lines += [f"{name} = {_quote(value)}" for name, value in settings.items() if value]
    files = {"postgresql.auto.conf": "\n".join(lines) + "\n"}
    # Debian keeps the configuration in /etc: the copy then has none of its own.
    if not (data_dir / "postgresql.conf").exists():
        files["postgresql.conf"] = f"{MARK}: settings in postgresql.auto.conf\n"
    if not (data_dir / "pg_hba.conf").exists():
        files["pg_hba.conf"] = (f"{MARK}\nlocal all all peer\n"
                                "host all all 127.0.0.1/32 scram-sha-256\n"
                                "host all all ::1/128 scram-sha-256\n")
    if not (data_dir / "pg_ident.conf").exists():
        files["pg_ident.conf"] = f"{MARK}\n"
    for name, text in files.items():
        path = data_dir / name
        with path.open("a") as fh:
            fh.write(text)
        path.chmod(0o600)
        _give_to_server_user(path)


def _bindir_of(data_dir: Path) -> Path:
    try:
        major = (Path(data_dir) / "PG_VERSION").read_text().strip()
    except OSError as exc:
        raise StandbyError(f"{data_dir} holds no PostgreSQL cluster") from exc
    return Path(f"/usr/lib/postgresql/{major}/bin")


def load(data_dir: Path) -> Standby:
    """The standby made earlier in `data_dir`, from its own settings."""
    data_dir = Path(data_dir).absolute()
    port, slot = read_setting(data_dir, "port"), read_setting(data_dir, "primary_slot_name")
    if port is None or slot is None or not (data_dir / "standby.signal").exists():
        raise StandbyError(f"{data_dir} is not a standby made by rulem-db")
    host = read_setting(data_dir, "listen_addresses") or "127.0.0.1"
    return Standby(data_dir=data_dir, port=int(port), host=host, slot=slot)


def running(standby: Standby) -> bool:
    """Whether its postmaster is alive (reads postmaster.pid: no connection, no subprocess)."""
    try:
        pid = int((standby.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def start(standby: Standby) -> None:
    """Start the standby (no-op when it runs); returns when it accepts connections."""
    if running(standby):
        return
    log = standby.log_file
    log.touch()
    _give_to_server_user(log)
    try:
        _run([str(_bindir_of(standby.data_dir) / "pg_ctl"), "-D", str(standby.data_dir), "-l",
              str(log), "-w", "-t", "120", "start"], "starting the standby", detach=True)
    except StandbyError as exc:
        last = [x for x in log.read_text(errors="replace").splitlines() if x.strip()][-1:]
        raise StandbyError(f"{exc}; {log}: {last[0] if last else 'empty'}") from None


def stop(standby: Standby) -> None:
    """Stop the standby (fast shutdown; no-op when it is not running)."""
    if not running(standby):
        return
    _run([str(_bindir_of(standby.data_dir) / "pg_ctl"), "-D", str(standby.data_dir), "-w",
          "-m", "fast", "stop"], "stopping the standby")


def remove(primary_url: str | None, standby: Standby) -> None:
    """Stop the standby, delete its folder, and drop its slot and login on the primary (when
    a primary URL is given and reachable): a forgotten slot keeps the primary's WAL forever."""
    stop(standby)
    shutil.rmtree(standby.data_dir, ignore_errors=True)
    if primary_url is None:
        return
    _drop_slot_and_login(primary_url, standby.slot)


def replay_lag(primary_url: str) -> list[tuple[str, int, float | None]]:
    """Every standby's lag as the primary sees it: (application_name, bytes of WAL written
    on the primary and not yet replayed there, replay_lag in seconds or None when nothing
    was waiting), one row per streaming standby. Needs a superuser (or pg_read_all_stats)."""
    with _session(primary_url) as cur:
        cur.execute("SELECT application_name, "
                    "pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint, "
                    "extract(epoch FROM replay_lag)::float8 FROM pg_stat_replication "
                    "ORDER BY application_name")
        return [(name, int(lag or 0), secs) for name, lag, secs in cur.fetchall()]


def wait_caught_up(primary_url: str, standby_url: str, timeout: float = 60.0) -> float:
    """Wait until the standby (any login's URL) has replayed everything the primary had
    written when called; returns the seconds it took. Raises StandbyError after `timeout`."""
    # The insert position, not pg_current_wal_lsn() (the write position): with
    # synchronous_commit off a transaction that has returned may not be written yet, and the
    # standby would be "caught up" without it.
    with _session(primary_url) as cur:
        cur.execute("SELECT pg_current_wal_insert_lsn()::text")
        target = cur.fetchone()[0]
    started = time.monotonic()
    while True:
        with contextlib.suppress(StandbyError), _session(standby_url) as cur:
            cur.execute("SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), %s) >= 0", (target,))
            if cur.fetchone()[0]:
                return time.monotonic() - started
        if time.monotonic() - started > timeout:
            u = make_url(standby_url)
            raise StandbyError(f"the standby on {u.host}:{u.port} has not replayed the "
                               f"primary's WAL up to {target} after {timeout:.0f} s")
        time.sleep(0.05)
