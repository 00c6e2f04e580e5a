"""Test databases: one migrated template per test session, cloned for every test that writes.

Why clones: a test gets a real PostGIS database with the whole schema in a fraction of a
second, and no test can see another's data. The cluster is the one named by
RULEM_TEST_ADMIN_URL (a superuser URL) or else the embedded default that rulem-db manages.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from pytest_postgresql.janitor import DatabaseJanitor
from sqlalchemy.engine import URL, make_url
from time_limit import (  # noqa: F401 - the time-limit hooks (tests/support/time_limit.py)
    pytest_timeout_cancel_timer,
    pytest_timeout_set_timer,
)

from demo import DEMO_PLAN_AREA
from rulem_db import db
from rulem_db.paths import shared_dir

_counter = itertools.count()


def _admin_url() -> URL:
    url = os.environ.get("RULEM_TEST_ADMIN_URL")
    if not url:
        from rulem_db.local import cluster

        url = cluster.ensure_embedded().admin_url
    return make_url(url).set(drivername="postgresql+psycopg2")


def _janitor(admin: URL, dbname: str, template: str | None = None,
             as_template: bool = False) -> DatabaseJanitor:
    return DatabaseJanitor(user=admin.username, password=admin.password, host=admin.host or "",
                           port=admin.port or 5432, dbname=dbname, template_dbname=template,
                           as_template=as_template)


@pytest.fixture(scope="session")
def admin_url() -> URL:
    return _admin_url()


@pytest.fixture(scope="session")
def template_db(admin_url: URL) -> Iterator[str]:
    """A database migrated to head with the demo plan area registered, used as a template."""
    name = f"rulem_tmpl_{os.getpid()}"
    janitor = _janitor(admin_url, name, template="template0", as_template=False)
    janitor.init()
    url = admin_url.set(database=name).render_as_string(hide_password=False)
    try:
        db.migrate(url, srid=26915, plan_area=DEMO_PLAN_AREA)
        yield name
    finally:
        janitor.drop()


class _Clones:
    """Clones the template for each test on one kept admin connection and drops the clones on a
    background thread.

    Why: a test's own database is most of a short test's time. The janitor opens two new
    connections per test and drops in the test's teardown; here creating is one statement on a
    kept connection (FILE_COPY: a file copy of a small template beats writing it through the
    WAL) and dropping overlaps the next tests.
    """

    def __init__(self, admin: URL) -> None:
        self._admin = admin.set(database="postgres")
        self._engine = sa.create_engine(self._admin, isolation_level="AUTOCOMMIT",
                                        poolclass=sa.pool.NullPool)
        self._conn = self._engine.connect()
        self._dropping: queue.Queue[str | None] = queue.Queue()
        self._errors: list[BaseException] = []
        self._dropper = threading.Thread(target=self._drop_all, name="drop-clones", daemon=True)
        self._dropper.start()

    def create(self, name: str, template: str) -> None:
        self._conn.exec_driver_sql(
            f'CREATE DATABASE "{name}" TEMPLATE "{template}" STRATEGY FILE_COPY')

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
def _clones(admin_url: URL) -> Iterator[_Clones]:
    clones = _Clones(admin_url)
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
def empty_db_url(admin_url: URL) -> Iterator[str]:
    """A database with nothing in it (not even PostGIS), for init and migration tests."""
    name = f"rulem_e_{os.getpid()}_{next(_counter)}"
    janitor = _janitor(admin_url, name, template="template0")
    janitor.init()
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        janitor.drop()


@pytest.fixture(scope="session")
def demo_template(admin_url: URL, template_db: str, _clones: _Clones,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The demo loaded through ingest once per session (not recomputed), as a template: the
    demo modules clone it instead of loading the demo again (seconds each)."""
    from hardening_helpers import DemoTemplate

    from demo import generate, load

    directory = tmp_path_factory.mktemp("demo_template")
    generate.generate(directory)
    name = f"rulem_demo_{os.getpid()}"
    _clones.create(name, template_db)
    try:
        load.load_demo(admin_url.set(database=name).render_as_string(hide_password=False),
                       directory)
        yield DemoTemplate(name, directory)
    finally:
        _clones.drop_later(name)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The team's shared data folder; tests that need it skip loudly when it is absent."""
    path = shared_dir()
    if not (path / "data").is_dir():
        pytest.fail(f"shared data folder not found at {path} (set RULEM_SHARED_DIR)")
    return path
