"""The web service's change stamps (sql/961): one per source per transaction, so a load that
writes row by row stays linear, and a rolled-back savepoint takes its stamp with it."""

from __future__ import annotations

import sqlalchemy as sa

STAMPS = "SELECT count(*) FROM web.table_change WHERE source = 'core.feature'"
ONE_ROW = ("INSERT INTO core.feature (layer, plan_area_id, feature_key) "
           "VALUES ('parcel', 1, :key)")


def test_many_statements_in_one_transaction_leave_one_stamp(engine: sa.Engine) -> None:
    """50 one-row INSERTs (as core.register_feature makes) take one stamp per source written,
    not one per statement: the stamps' sequence moves by the sources, not by the rows."""
    top = "SELECT coalesce(max(change_id), 0) FROM web.table_change"
    with engine.connect() as conn:
        before = conn.execute(sa.text(top)).scalar_one()
    with engine.begin() as conn:
        for i in range(50):
            conn.execute(sa.text(ONE_ROW), {"key": f"row-{i}"})
        sources = conn.execute(sa.text(
            "SELECT count(DISTINCT source) FROM web.table_change WHERE change_id > :b"),
            {"b": before}).scalar_one()
    with engine.connect() as conn:
        after = conn.execute(sa.text(top)).scalar_one()
        assert conn.execute(sa.text(STAMPS)).scalar_one() == 1
    assert 1 <= sources <= after - before <= sources + 1


def test_a_rolled_back_savepoint_does_not_swallow_the_next_stamp(engine: sa.Engine) -> None:
    with engine.connect() as conn:
        old = conn.execute(sa.text("SELECT coalesce(max(change_id), 0) FROM web.table_change "
                                   "WHERE source = 'core.feature'")).scalar_one()
    with engine.begin() as conn:
        sp = conn.begin_nested()
        conn.execute(sa.text(ONE_ROW), {"key": "undone"})
        sp.rollback()
        conn.execute(sa.text(ONE_ROW), {"key": "kept"})
    with engine.connect() as conn:
        new = conn.execute(sa.text("SELECT max(change_id) FROM web.table_change "
                                   "WHERE source = 'core.feature'")).scalar_one()
    assert new is not None and new > old
