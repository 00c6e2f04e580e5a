"""The run's shared session templates (tests/support/shared_templates.py): built once, and a
build that fails leaves nothing behind for the next worker to copy."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from shared_templates import SharedTemplates
from sqlalchemy.engine import URL


def _exists(admin_url: URL, name: str) -> bool:
    engine = sa.create_engine(admin_url.set(database="postgres"), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql("SELECT 1 FROM pg_database WHERE datname = %s",
                                        (name,)).first() is not None
    finally:
        engine.dispose()


def _drop(admin_url: URL, name: str) -> None:
    engine = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT",
                              poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        engine.dispose()


def test_built_once_for_every_worker_that_asks_and_a_failed_build_leaves_none(
        admin_url: URL, tmp_path: Path) -> None:
    shared = SharedTemplates(admin_url, tmp_path, "rulem_test_ts_", None)
    stage = f"t{os.getpid()}"
    builds: list[str] = []

    def build(name: str) -> None:
        builds.append(name)
        engine = sa.create_engine(admin_url.set(database=name), poolclass=sa.pool.NullPool)
        with engine.begin() as conn:
            conn.exec_driver_sql("CREATE TABLE built (n int)")
        engine.dispose()

    def broken(name: str) -> None:
        raise ValueError(f"{name} could not be built")

    failing = f"{stage}broken"
    names: list[str] = []
    try:
        with pytest.raises(ValueError, match="could not be built"):
            shared.database(failing, "template0", broken)
        assert _names(admin_url, failing) == []

        # four "workers" ask at once: one builds, the others wait and get the same database
        asked = [threading.Thread(target=lambda: names.append(
            shared.database(stage, "template0", build))) for _ in range(4)]
        for thread in asked:
            thread.start()
        for thread in asked:
            thread.join()
        assert len(builds) == 1 and set(names) == {builds[0]} and len(names) == 4
        engine = sa.create_engine(admin_url.set(database=builds[0]), poolclass=sa.pool.NullPool)
        with engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT to_regclass('built')").scalar() == "built"
        engine.dispose()

        # the failed stage is built by the next worker that asks, whole
        again = shared.database(failing, "template0", build)
        assert len(builds) == 2 and _exists(admin_url, again)
    finally:
        for name in {*builds, *names}:
            _drop(admin_url, name)


def _names(admin_url: URL, stage: str) -> list[str]:
    """The names a shared database of `stage` could have (any controller)."""
    engine = sa.create_engine(admin_url.set(database="postgres"), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return conn.exec_driver_sql(
                "SELECT datname FROM pg_database WHERE datname LIKE %s",
                (f"rulem\\_shared\\_{stage}\\_%",)).scalars().all()
    finally:
        engine.dispose()
