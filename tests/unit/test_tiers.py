"""The unit tier's promise: no test here reaches PostgreSQL or starts the embedded cluster.

Why: `scripts/test --unit` must pass with PostgreSQL stopped; tests/unit/conftest.py refuses
every way to a server, and these tests prove that the refusals are in force (a refusal that
silently stopped working would let a database test slip into the unit tier unnoticed).
"""

from __future__ import annotations

import psycopg
import psycopg2
import pytest
import sqlalchemy as sa

from rulem_db.local import cluster

REFUSED = pytest.fail.Exception
URL = "postgresql://nobody:nothing@127.0.0.1:5433/rulem"


def test_psycopg2_connections_are_refused() -> None:
    with pytest.raises(REFUSED, match="tried to connect to PostgreSQL"):
        psycopg2.connect(URL)


def test_psycopg3_connections_are_refused() -> None:
    with pytest.raises(REFUSED, match="tried to connect to PostgreSQL"):
        psycopg.connect(URL)
    with pytest.raises(REFUSED, match="tried to connect to PostgreSQL"):
        psycopg.Connection.connect(URL)


def test_sqlalchemy_engines_are_refused_too() -> None:
    engine = sa.create_engine(URL)
    try:
        with pytest.raises(REFUSED, match="belongs in the database tier"):
            engine.connect()
    finally:
        engine.dispose()


def test_the_embedded_cluster_is_not_started() -> None:
    with pytest.raises(REFUSED, match="tried to start the embedded cluster"):
        cluster.ensure_embedded()


def test_database_fixtures_fail_naming_themselves(request: pytest.FixtureRequest) -> None:
    for name in ("admin_url", "template_db", "db_url", "engine", "empty_db_url"):
        with pytest.raises(REFUSED, match=f"asked for the database fixture '{name}'"):
            request.getfixturevalue(name)
