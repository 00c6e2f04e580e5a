"""The unit tier: no PostgreSQL, no embedded cluster, no database fixture.

Why: `scripts/test --unit` runs these tests with the cluster stopped (or never created), in
seconds. The root tests/conftest.py is still loaded by pytest (it sits in a parent folder),
but it only defines lazy fixtures; here those fixtures are replaced by ones that fail, and
every way a test could reach a server (psycopg2, psycopg 3, starting the embedded cluster) is
refused, so a test that quietly needs a database fails at once instead of starting a cluster
or hanging on a connection. Such a test belongs in the database tier (tests/).
"""

from __future__ import annotations

from typing import NoReturn

import psycopg
import psycopg2
import pytest

from rulem_db.local import cluster

MOVE = "needs PostgreSQL: it belongs in the database tier (tests/), not in tests/unit/"


def _refuse(what: str) -> NoReturn:
    pytest.fail(f"a unit test {what}; it {MOVE}", pytrace=False)


def _refusing_fixture(name: str) -> object:
    """A fixture named like one of tests/conftest.py's database fixtures that fails when used."""

    @pytest.fixture(name=name)
    def fixture() -> NoReturn:
        _refuse(f"asked for the database fixture {name!r}")

    return fixture


admin_url = _refusing_fixture("admin_url")
template_db = _refusing_fixture("template_db")
db_url = _refusing_fixture("db_url")
engine = _refusing_fixture("engine")
empty_db_url = _refusing_fixture("empty_db_url")


@pytest.fixture(autouse=True)
def _no_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse connections and the embedded cluster for the length of each unit test.

    Function-scoped on purpose: a run of both tiers in one pytest process must leave the
    database tier's connections alone.
    """

    def connect(*_args: object, **_kwargs: object) -> NoReturn:
        _refuse("tried to connect to PostgreSQL")

    def ensure_embedded(*_args: object, **_kwargs: object) -> NoReturn:
        _refuse("tried to start the embedded cluster")

    monkeypatch.setattr(psycopg2, "connect", connect)
    monkeypatch.setattr(psycopg, "connect", connect)
    monkeypatch.setattr(psycopg.Connection, "connect", connect)
    monkeypatch.setattr(cluster, "ensure_embedded", ensure_embedded)
