"""The transaction that opened an ingest batch, so that only that transaction attributes
versions to it.

Why: a version records the batch that opened or closed it (batch_id, closed_batch_id), read
from the session setting rulem.batch_id or given as a column. Any login may set a setting or
a column, so an editor could attribute a hand edit to an ingest batch (its file, its login).
ops.batch.opened_xact is stamped by a trigger (sql/012_batch_record.sql) with the opening
transaction's id and never changes; the versioning checks (sql/010_versioning.sql) accept a
batch only in the transaction that opened it.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("batch", sa.Column(
        "opened_xact", sa.BigInteger,
        comment="Transaction (pg_current_xact_id) that opened the batch: the only one that "
                "may attribute versions to it. Set by the database."), schema="ops")


def downgrade() -> None:
    op.drop_column("batch", "opened_xact", schema="ops")
