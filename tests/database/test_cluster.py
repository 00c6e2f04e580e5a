"""The embedded default database: ensure_embedded() must be repeatable, cheap when nothing needs
doing, and hand out URLs that really connect with the right role and PostGIS.

Self-contained on purpose (no conftest fixtures): the conftest itself relies on this module.
"""

from __future__ import annotations

import os
import time
import uuid

import pytest
from sqlalchemy import create_engine, make_url, text

from rulem_db.local import cluster

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("RULEM_TEST_ADMIN_URL")),
    reason="RULEM_TEST_ADMIN_URL points the tests at another server; the embedded cluster is "
    "not used",
)


@pytest.fixture(scope="module")
def embedded() -> cluster.Embedded:
    return cluster.ensure_embedded()


def _query(url: str, sql: str) -> tuple:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return tuple(conn.execute(text(sql)).one())
    finally:
        engine.dispose()


def test_ensure_is_idempotent_and_fast(embedded: cluster.Embedded) -> None:
    started = time.perf_counter()
    again = cluster.ensure_embedded()
    elapsed = time.perf_counter() - started
    assert again == embedded
    # The promise is < 0.5 s; leave room for a busy CI machine.
    assert elapsed < 1.5, f"ensure_embedded() took {elapsed:.2f} s with everything running"


@pytest.mark.parametrize(
    ("attr", "role"), [("admin_url", "rulem_admin"), ("owner_url", "rulem_owner")]
)
def test_urls_connect_with_postgis(embedded: cluster.Embedded, attr: str, role: str) -> None:
    user, database, postgis, extensions = _query(
        getattr(embedded, attr),
        "select current_user, current_database(), postgis_full_version(), "
        "(select string_agg(extname, ',' order by extname) from pg_extension)",
    )
    assert (user, database) == (role, "rulem")
    assert postgis.startswith("POSTGIS=")
    assert {"postgis", "btree_gist"} <= set(extensions.split(","))


def test_owner_owns_the_database(embedded: cluster.Embedded) -> None:
    (owner, can_create) = _query(
        embedded.owner_url,
        "select pg_get_userbyid(datdba), (select rolcreatedb and rolcreaterole from pg_roles "
        "where rolname = current_user) from pg_database where datname = current_database()",
    )
    assert owner == "rulem_owner"
    assert can_create


def test_new_databases_get_the_extensions(embedded: cluster.Embedded) -> None:
    """Tests create scratch databases from template1 and expect PostGIS there."""
    name = f"rulem_test_cluster_{uuid.uuid4().hex[:8]}"
    engine = create_engine(embedded.admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f"create database {name}"))
        try:
            url = make_url(embedded.admin_url).set(database=name)
            (count,) = _query(
                url.render_as_string(hide_password=False),
                "select count(*) from pg_extension where extname in ('postgis', 'btree_gist')",
            )
            assert count == 2
        finally:
            with engine.connect() as conn:
                conn.execute(text(f"drop database {name} with (force)"))
    finally:
        engine.dispose()


def test_status_reports_running(embedded: cluster.Embedded) -> None:
    info = cluster.status()
    assert info["exists"] and info["running"]
    assert info["port"] == embedded.port
    assert "rulem" in (info["databases"] or [])
    assert os.stat(info["state_file"]).st_mode & 0o077 == 0


def test_repr_hides_passwords(embedded: cluster.Embedded) -> None:
    shown = repr(embedded)
    for url in (embedded.admin_url, embedded.owner_url):
        password = make_url(url).password
        assert password and password not in shown


def test_the_server_preloads_postgis(embedded: cluster.Embedded) -> None:
    """Every new session would otherwise load postgis-3.so (GEOS, PROJ) on its first spatial
    call: 13-16 ms per `rulem-db` command (docs/operations.md)."""
    layout = cluster._layout()
    tuning = cluster._tuning_file(layout)
    assert tuning.is_file() and cluster.TUNING_MARK in tuning.read_text()
    libraries, started = _query(embedded.admin_url,
                                "SELECT current_setting('shared_preload_libraries'), "
                                "extract(epoch FROM pg_postmaster_start_time())")
    if cluster.PRELOAD not in [x.strip() for x in libraries.split(",")]:
        if float(started) < tuning.stat().st_mtime:  # running since before the setting
            pytest.skip("the embedded cluster was started before rulem-db preloaded PostGIS: "
                        "`rulem-db db stop` and any command restart it with the setting")
        pytest.fail(f"{tuning} asks for {cluster.PRELOAD} but the server does not preload it")


