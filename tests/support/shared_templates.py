"""The session templates built once per test run and copied by every test worker.

Why: each test worker (pytest-xdist, scripts/test) needs the same three databases before its
first test: the migrated template, the demo loaded into a copy of it, and the demo recomputed
and checked. Built by every worker they were some 11 s of database work each, three times
at the start of a run on two cores. Here the first worker to need one builds it under a file
lock, the others wait for it, and each worker then copies it into a database of its own (a
file copy, a fraction of a second), so a worker's template is its own as before: nothing a
worker does to its databases reaches another.

What a run shares is named by the run's controller (the workers' parent process): databases
`rulem_shared_<stage>_<pid>` in tablespace `rulem_test_ts_<pid>` on the memory file system
when the test databases go there. The controller drops them when the run ends
(`drop_run_shared`); those of a controller that is gone (killed) are dropped by the next run
(`drop_stale_shared`), like the workers' own tablespaces.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import sqlalchemy as sa
import tmpfs_tablespace
from sqlalchemy.engine import URL

SHARED_PREFIX = "rulem_shared_"


def controller_pid() -> int:
    """The process that names this run's shared databases: a worker's parent (the xdist
    controller)."""
    return os.getppid()


def is_worker() -> bool:
    """Whether this process is an xdist worker (only then is there anything to share)."""
    return "PYTEST_XDIST_WORKER" in os.environ


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class SharedTemplates:
    """Builds each shared database once per run (`database`), under a lock in a folder all the
    run's workers see."""

    def __init__(self, admin: URL, folder: Path, tablespace_prefix: str,
                 memory_fs: Path | None) -> None:
        self._admin = admin.set(database="postgres")
        self._folder = folder
        self._pid = controller_pid()
        self._tablespace_name = f"{tablespace_prefix}{self._pid}"
        self._memory_fs = memory_fs

    def _engine(self) -> sa.Engine:
        return sa.create_engine(self._admin, isolation_level="AUTOCOMMIT",
                                poolclass=sa.pool.NullPool)

    def _tablespace(self, conn: sa.Connection) -> str:
        """The run's tablespace on the memory file system, made by the first worker to need
        it; "" (the cluster's default) when the workers' databases are not on one either."""
        if self._memory_fs is None:
            return ""
        if conn.exec_driver_sql("SELECT 1 FROM pg_tablespace WHERE spcname = %s",
                                (self._tablespace_name,)).first() is None:
            data = Path(conn.exec_driver_sql("SHOW data_directory").scalar_one())
            if not data.is_dir() or tmpfs_tablespace.create(
                    conn, self._tablespace_name, self._memory_fs, data) is None:
                return ""
        return f' TABLESPACE "{self._tablespace_name}"'

    def folder(self, name: str, make: Callable[[Path], None]) -> Path:
        """This run's folder `name`, filled by `make(folder)` by the first worker that asks."""
        folder = self._folder / name
        with _locked(self._folder / f"{name}.lock"):
            if not (self._folder / f"{name}.done").exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                (self._folder / f"{name}.done").touch()
        return folder

    def database(self, stage: str, template: str, build: Callable[[str], None]) -> str:
        """The name of this run's shared database `stage`: a copy of `template` that
        `build(name)` filled, built by the first worker that asks (the others wait on the
        lock). A build that fails leaves no database, and the next worker to ask tries again
        (and reports its own failure)."""
        name = f"{SHARED_PREFIX}{stage}_{self._pid}"
        done = self._folder / f"{name}.done"
        with _locked(self._folder / f"{name}.lock"):
            if done.exists():
                return name
            engine = self._engine()
            try:
                with engine.connect() as conn:
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                    conn.exec_driver_sql(
                        f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY'
                        + self._tablespace(conn))
                try:
                    build(name)
                except BaseException:
                    with engine.connect() as conn:
                        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                    raise
            finally:
                engine.dispose()
            done.touch()
        return name


def _drop(conn: sa.Connection, pid: int, tablespace_prefix: str) -> None:
    """Drop controller `pid`'s shared databases and its tablespace (with its folder)."""
    pattern = SHARED_PREFIX.replace("_", r"\_") + "%" + rf"\_{pid}"
    for (name,) in conn.exec_driver_sql(
            "SELECT datname FROM pg_database WHERE datname LIKE %s", (pattern,)).all():
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    tablespace = f"{tablespace_prefix}{pid}"
    location = conn.exec_driver_sql(
        "SELECT pg_tablespace_location(oid) FROM pg_tablespace WHERE spcname = %s",
        (tablespace,)).scalar()
    if location is not None:
        left = conn.exec_driver_sql(
            "SELECT count(*) FROM pg_database d JOIN pg_tablespace t "
            "ON t.oid = d.dattablespace WHERE t.spcname = %s", (tablespace,)).scalar_one()
        if not left:  # a worker's own tablespace of the same pid is not ours to drop
            conn.exec_driver_sql(f'DROP TABLESPACE IF EXISTS "{tablespace}"')
            shutil.rmtree(location, ignore_errors=True)


def shared_anything(folder: Path) -> bool:
    """Whether a worker of the run whose shared folder this is asked for a shared database (its
    lock file is there): only then has the controller anything to drop."""
    return any(folder.glob(f"{SHARED_PREFIX}*.lock"))


def drop_run_shared(admin: URL, tablespace_prefix: str) -> None:
    """At the end of a run, in the controller: drop what its workers shared."""
    engine = sa.create_engine(admin.set(database="postgres"), isolation_level="AUTOCOMMIT",
                              poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            _drop(conn, os.getpid(), tablespace_prefix)
    finally:
        engine.dispose()


def drop_stale_shared(conn: sa.Connection, tablespace_prefix: str) -> None:
    """The shared databases of runs whose controller is gone (killed before its clean-up)."""
    pattern = SHARED_PREFIX.replace("_", r"\_") + "%"
    pids = {name.rsplit("_", 1)[1] for (name,) in conn.exec_driver_sql(
        "SELECT datname FROM pg_database WHERE datname LIKE %s", (pattern,))}
    for pid in pids:
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(sa.exc.DBAPIError):  # another worker dropping it now
                _drop(conn, int(pid), tablespace_prefix)
