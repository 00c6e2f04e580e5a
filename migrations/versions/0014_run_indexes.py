"""Indexes on ledger.run: its start time and the runs still running.

Why: with `rulem-db watch` (fifth session) every committed edit is a recompute run, tens of
thousands a year. Each run's start looks for runs left running by a gone session and each
run's end asks which runs started within the queue's retention period (sql/170
ledger.start_run, ledger.finish_run); both read every run without an index, a cost that grew
with the ledger's history inside a recompute that should cost what it computes.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-30
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_run_started_at", "run", ["started_at"], unique=False, schema="ledger")
    op.create_index("ix_run_running", "run", ["run_id"], unique=False, schema="ledger",
                    postgresql_where=sa.text("status = 'running'"))


def downgrade() -> None:
    op.drop_index("ix_run_running", table_name="run", schema="ledger")
    op.drop_index("ix_run_started_at", table_name="run", schema="ledger")
