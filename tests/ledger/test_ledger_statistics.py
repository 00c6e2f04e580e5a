"""A recompute leaves the planner's statistics of the ledger up to date (sql/168).

As found: the night after the ledger's first full recompute planned pub.parcel_balance while
ledger.parcel_total had no statistics yet (autovacuum gathers them up to a minute later), took
its rows for a handful and joined them to every parcel by a nested loop: 36-57 s of a county's
report instead of 0.3 s. Now ledger.finish_run analyzes each table the run grew by more than a
tenth, with the owner's rights, so the writer login's recompute does it too.

The demo plan area, loaded and not yet recomputed: its ledger is empty and was never analyzed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from role_logins import as_login_url, role_logins
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from rulem_db import ledger

TABLES = ("parcel_total", "permit_total", "plan_total", "entry")


@pytest.fixture(scope="module")
def etl(admin_url: URL) -> Iterator[URL]:
    with role_logins(admin_url, ("rulem_etl",), "ls") as made:
        yield made["rulem_etl"]


def _statistics(url: str) -> dict[str, tuple]:
    """Per ledger table: (the planner's row count, the rows it holds, when it was analyzed by
    hand; autovacuum's own analyses are not counted)."""
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return {t: tuple(conn.execute(sa.text(
                f"SELECT c.reltuples, (SELECT count(*) FROM ledger.{t}), s.last_analyze "
                "FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid "
                f"WHERE c.oid = 'ledger.{t}'::regclass")).one()) for t in TABLES}
    finally:
        eng.dispose()


def test_the_first_recompute_analyzes_what_it_filled_and_a_small_one_nothing(
        admin_url: URL, demo_template: DemoTemplate, etl: URL) -> None:
    with cloned(admin_url, demo_template.name, prefix="rulem_ls") as url:
        before = _statistics(url)
        assert all(last is None and planner <= 0 for planner, _, last in before.values())
        ledger.recompute(as_login_url(url, etl), workers=1)  # the writer login, not the owner
        first = _statistics(url)
        for table, (planner, rows, last) in first.items():
            assert rows > 0, table
            assert last is not None and planner == rows, table  # exact: all rows sampled
        eng = sa.create_engine(url, poolclass=NullPool)
        try:
            with eng.begin() as conn:  # one impact moved: its owners recomputed
                conn.execute(sa.text(
                    "UPDATE core.impact SET geom = ST_Multi(ST_Translate(geom, 1.0, 0.0)) "
                    "WHERE valid_to IS NULL AND impact_id = (SELECT min(impact_id) "
                    "FROM core.impact WHERE valid_to IS NULL)"))
        finally:
            eng.dispose()
        assert ledger.recompute(as_login_url(url, etl), workers=1).owners >= 1
        second = _statistics(url)
        assert {t: second[t][2] for t in TABLES} == {t: first[t][2] for t in TABLES}
