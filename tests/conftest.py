"""Test databases: one migrated template per test session, cloned for every test that writes.
With test workers (scripts/test) the session templates are built once per run and each worker
copies them (tests/support/shared_templates.py).

Why clones: a test gets a real PostGIS database with the whole schema in a fraction of a
second, and no test can see another's data. The cluster is the one named by
RULEM_TEST_ADMIN_URL (a superuser URL) or else the embedded default that rulem-db manages.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import tmpfs_tablespace
from module_order import longest_first
from shared_templates import (
    SharedTemplates,
    drop_run_shared,
    drop_stale_shared,
    is_worker,
    shared_anything,
)
from sqlalchemy.engine import URL, make_url
from time_limit import (  # noqa: F401 - the time-limit hooks (tests/support/time_limit.py)
    pytest_timeout_cancel_timer,
    pytest_timeout_set_timer,
)

from demo import DEMO_PLAN_AREA
from rulem_db import db
from rulem_db.paths import shared_dir

_counter = itertools.count()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first, for the test workers (tests/support/module_order.py)."""
    longest_first(items)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """In the controller of test workers: drop what the workers shared (shared_templates), if
    they built anything: a run of the unit tier never reaches the cluster."""
    factory = getattr(session.config, "_tmp_path_factory", None)  # as xdist reads it
    if (session.config.pluginmanager.hasplugin("dsession") and factory is not None
            and shared_anything(factory.getbasetemp())):
        drop_run_shared(_admin_url(), TABLESPACE_PREFIX)


def _admin_url() -> URL:
    url = os.environ.get("RULEM_TEST_ADMIN_URL")
    if not url:
        from rulem_db.local import cluster

        url = cluster.ensure_embedded().admin_url
    return make_url(url).set(drivername="postgresql+psycopg2")


@pytest.fixture(scope="session")
def admin_url() -> URL:
    return _admin_url()


TABLESPACE_PREFIX = "rulem_test_ts_"
MEMORY_FS = Path("/dev/shm")
MEMORY_FS_ROOM = 4 << 30  # bytes free on it, or the test databases stay on the cluster's disk


def _memory_fs() -> Path | None:
    """/dev/shm when it is a tmpfs with room, unless RULEM_TEST_TMPFS=0."""
    if os.environ.get("RULEM_TEST_TMPFS", "1") == "0":
        return None
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
        free = os.statvfs(MEMORY_FS)
    except OSError:
        return None
    if not any(line.split()[1:3] == [str(MEMORY_FS), "tmpfs"] for line in mounts):
        return None
    return MEMORY_FS if free.f_bavail * free.f_frsize >= MEMORY_FS_ROOM else None


def _drop_tablespace(conn: sa.Connection, name: str) -> None:
    """Drop a test tablespace and whatever databases are left in it (all tests' own)."""
    left = conn.exec_driver_sql(
        "SELECT d.datname FROM pg_database d JOIN pg_tablespace t ON t.oid = d.dattablespace "
        "WHERE t.spcname = %s", (name,)).scalars().all()
    for dbname in left:
        conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
    conn.exec_driver_sql(f'DROP TABLESPACE IF EXISTS "{name}"')


def _drop_stale_tablespaces(conn: sa.Connection) -> None:
    """The test tablespaces of test processes that are gone (killed before their clean-up, or
    a reboot emptied the memory file system under them)."""
    for (name,) in conn.exec_driver_sql(
            "SELECT spcname FROM pg_tablespace WHERE spcname LIKE %s",
            (TABLESPACE_PREFIX.replace("_", r"\_") + "%",)):
        pid = name.removeprefix(TABLESPACE_PREFIX)
        if not pid.isdigit() or Path(f"/proc/{pid}").exists():
            continue
        with contextlib.suppress(sa.exc.DBAPIError):  # another worker dropping it just now
            _drop_tablespace(conn, name)


@pytest.fixture(scope="session")
def memory_tablespace(admin_url: URL) -> Iterator[str | None]:
    """A tablespace of this process on a memory file system (tmpfs), where the template and
    every test database is made, or None: the cluster's default tablespace.

    Why: a test database is some 800 files, made and deleted for every test. On a disk without
    a journal (ext4 without one skips recently deleted inodes when it hands out new ones) making
    those files cost more than half a second of kernel time per test by the middle of a run,
    the larger part of the suite's time; on tmpfs it is a few milliseconds. Only when the
    server runs on this machine (its data directory is here: the embedded cluster); a remote
    RULEM_TEST_ADMIN_URL keeps the default. The databases are throw-away, so memory is
    enough; RULEM_TEST_TMPFS=0 turns this off.
    """
    memory = _memory_fs()
    engine = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT",
                              poolclass=sa.pool.NullPool)
    name = f"{TABLESPACE_PREFIX}{os.getpid()}"
    folder: Path | None = None
    try:
        with engine.connect() as conn:
            data = Path(conn.exec_driver_sql("SHOW data_directory").scalar_one())
            drop_stale_shared(conn, TABLESPACE_PREFIX)
            if memory is not None and data.is_dir():
                _drop_stale_tablespaces(conn)
                folder = tmpfs_tablespace.create(conn, name, memory, data)
        yield name if folder is not None else None
    finally:
        if folder is not None:
            with engine.connect() as conn:
                _drop_tablespace(conn, name)
            shutil.rmtree(folder, ignore_errors=True)
        engine.dispose()


@pytest.fixture(scope="session")
def _shared(admin_url: URL, tmp_path_factory: pytest.TempPathFactory) -> SharedTemplates | None:
    """What this run's test workers build once (tests/support/shared_templates.py); None
    without workers."""
    if not is_worker():
        return None
    return SharedTemplates(admin_url, tmp_path_factory.getbasetemp().parent, TABLESPACE_PREFIX,
                           _memory_fs())


def _session_database(admin_url: URL, _clones: _Clones, shared: SharedTemplates | None,
                      name: str, stage: str, template: str,
                      build: Callable[[str], None]) -> None:
    """Make this process's session database `name`: a copy of `template` that `build` fills,
    or, in a test worker, a copy of the run's shared one (built once, by the first worker)."""
    if shared is not None:
        _clones.create(name, shared.database(stage, template, build))
        return
    _clones.create(name, template)
    build(name)


def _url(admin_url: URL, name: str) -> str:
    return admin_url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def template_db(admin_url: URL, _clones: _Clones, _shared: SharedTemplates | None
                ) -> Iterator[str]:
    """A database migrated to head with the demo plan area registered, used as a template."""
    name = f"rulem_tmpl_{os.getpid()}"
    try:
        _session_database(admin_url, _clones, _shared, name, "tmpl", "template0", lambda n:
                          db.migrate(_url(admin_url, n), srid=26915, plan_area=DEMO_PLAN_AREA))
        yield name
    finally:
        _clones.drop_later(name)


class _Clones:
    """Clones the template for each test on one kept admin connection and drops the clones on a
    background thread.

    Why: a test's own database is most of a short test's time. The janitor opens two new
    connections per test and drops in the test's teardown; here creating is one statement on a
    kept connection (FILE_COPY: a file copy of a small template beats writing it through the
    WAL), in this process's tablespace on tmpfs when there is one (memory_tablespace), and
    dropping overlaps the next tests. The template and the empty databases are made here too.
    """

    def __init__(self, admin: URL, tablespace: str | None) -> None:
        self._admin = admin.set(database="postgres")
        self._tablespace = f' TABLESPACE "{tablespace}"' if tablespace else ""
        self._engine = sa.create_engine(self._admin, isolation_level="AUTOCOMMIT",
                                        poolclass=sa.pool.NullPool)
        self._conn = self._engine.connect()
        self._dropping: queue.Queue[str | None] = queue.Queue()
        self._errors: list[BaseException] = []
        self._dropper = threading.Thread(target=self._drop_all, name="drop-clones", daemon=True)
        self._dropper.start()

    def create(self, name: str, template: str) -> None:
        self._conn.exec_driver_sql(
            f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY'
            + self._tablespace)

    def drop_later(self, name: str) -> None:
        self._dropping.put(name)

    def _drop_all(self) -> None:
        with self._engine.connect() as conn:
            while (name := self._dropping.get()) is not None:
                try:
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                except Exception as exc:  # reported at the end of the session
                    self._errors.append(exc)

    def close(self) -> None:
        self._dropping.put(None)
        self._dropper.join()
        self._conn.close()
        self._engine.dispose()
        if self._errors:
            raise RuntimeError(f"dropping test databases failed: {self._errors[0]}")


@pytest.fixture(scope="session")
def _clones(admin_url: URL, memory_tablespace: str | None) -> Iterator[_Clones]:
    clones = _Clones(admin_url, memory_tablespace)
    yield clones
    clones.close()


@pytest.fixture
def db_url(admin_url: URL, template_db: str, _clones: _Clones) -> Iterator[str]:
    """URL (superuser) of a fresh, migrated database for this test alone."""
    name = f"rulem_t_{os.getpid()}_{next(_counter)}"
    _clones.create(name, template_db)
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        _clones.drop_later(name)


@pytest.fixture
def engine(db_url: str) -> Iterator[sa.Engine]:
    eng = db.engine(db_url)
    yield eng
    eng.dispose()


@pytest.fixture
def empty_db_url(admin_url: URL, _clones: _Clones) -> Iterator[str]:
    """A database with nothing in it (not even PostGIS), for init and migration tests."""
    name = f"rulem_e_{os.getpid()}_{next(_counter)}"
    _clones.create(name, "template0")
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        _clones.drop_later(name)


@pytest.fixture(scope="session")
def demo_template(admin_url: URL, template_db: str, _clones: _Clones,
                  _shared: SharedTemplates | None,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The demo loaded through ingest once per session (not recomputed), as a template: the
    demo modules clone it instead of loading the demo again (seconds each)."""
    from hardening_helpers import DemoTemplate

    from demo import generate, load

    # one folder of demo files per run: the shared demo database records the files it loaded
    directory = (_shared.folder("demo_template", generate.generate) if _shared is not None
                 else tmp_path_factory.mktemp("demo_template"))
    if _shared is None:
        generate.generate(directory)
    name = f"rulem_demo_{os.getpid()}"
    try:
        _session_database(admin_url, _clones, _shared, name, "demo", template_db,
                          lambda n: load.load_demo(_url(admin_url, n), directory))
        yield DemoTemplate(name, directory)
    finally:
        _clones.drop_later(name)


@pytest.fixture(scope="session")
def reconciled_demo(admin_url: URL, demo_template: Any, _clones: _Clones,
                    _shared: SharedTemplates | None) -> Iterator[str]:
    """The demo recomputed and checked once per session (web_server.reconcile_demo), as a
    template: the web modules each serve a copy of it instead of reconciling the demo again."""
    from web_server import reconcile_demo

    def build(name: str) -> None:
        url = _url(admin_url, name)
        db.migrate(url)  # as after any copy (web_server_fixture migrates each copy again)
        reconcile_demo(url)

    name = f"rulem_webt_{os.getpid()}"
    try:
        _session_database(admin_url, _clones, _shared, name, "reconciled", demo_template.name,
                          build)
        yield name
    finally:
        _clones.drop_later(name)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The team's shared data folder; tests that need it skip loudly when it is absent."""
    path = shared_dir()
    if not (path / "data").is_dir():
        pytest.fail(f"shared data folder not found at {path} (set RULEM_SHARED_DIR)")
    return path
