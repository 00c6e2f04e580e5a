"""Versioned layers: the history index (plan_area_id, <layer>_id, valid_from) becomes an index
on valid_from alone.

Why: every versioned table kept three btree indexes led by the feature id (the primary key's
version_id aside): the one-version constraint (<layer>_id, valid_to), this history index and,
for references, one per referencing column. A bulk ingest pays for each per row: this one cost
0.4-0.5 s of CPU per 100,000 parcels. The queries it served are served as well without it:
a feature's versions (`WHERE <layer>_id = ... ORDER BY valid_from DESC LIMIT 1`, in
pub.ledger_entry and the ledger's posting) by the one-version constraint's index, which leads
with the feature id, a feature having a handful of versions; and the incremental checks' scan
for versions opened since the last run (sql/285: `plan_area_id = $1 AND (valid_from >= $2 OR
valid_to >= $2)`) by the new index on valid_from, a range scan where the history index was a
scan of every entry of the plan area. All the versions an ingest opens share one valid_from
(the transaction's time), so the new index takes them at its right edge, deduplicated.
tests/ingest/test_ingest_speed.py checks both plans with EXPLAIN.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The versioned tables, read from the database (the revision does not depend on the layer
# catalogue of a later release).
_TABLES = sa.text("""
    SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables t USING (table_schema, table_name)
    WHERE c.table_schema = 'core' AND c.column_name = 'version_id' AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name
""")


def upgrade() -> None:
    for table in op.get_bind().execute(_TABLES).scalars().all():
        op.drop_index(f"ix_{table}_history", table_name=table, schema="core")
        op.create_index(f"ix_{table}_valid_from", table, ["valid_from"], unique=False,
                        schema="core")


def downgrade() -> None:
    for table in op.get_bind().execute(_TABLES).scalars().all():
        op.drop_index(f"ix_{table}_valid_from", table_name=table, schema="core")
        op.create_index(f"ix_{table}_history", table, ["plan_area_id", f"{table}_id",
                                                       "valid_from"], unique=False, schema="core")
