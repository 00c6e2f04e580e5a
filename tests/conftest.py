"""Test databases: one migrated template per test session, cloned for every test that writes.

Why clones: a test gets a real PostGIS database with the whole schema in a fraction of a
second, and no test can see another's data. The cluster is the one named by
RULEM_TEST_ADMIN_URL (a superuser URL) or else the embedded default that rulem-db manages.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from pytest_postgresql.janitor import DatabaseJanitor
from sqlalchemy.engine import URL, make_url

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


def _clone(admin_url: URL, template: str) -> Iterator[str]:
    name = f"rulem_t_{os.getpid()}_{next(_counter)}"
    janitor = _janitor(admin_url, name, template=template)
    janitor.init()
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        janitor.drop()


@pytest.fixture
def db_url(admin_url: URL, template_db: str) -> Iterator[str]:
    """URL (superuser) of a fresh, migrated database for this test alone."""
    yield from _clone(admin_url, template_db)


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
def shared() -> Path:
    """The team's shared data folder; tests that need it skip loudly when it is absent."""
    path = shared_dir()
    if not (path / "data").is_dir():
        pytest.fail(f"shared data folder not found at {path} (set RULEM_SHARED_DIR)")
    return path
