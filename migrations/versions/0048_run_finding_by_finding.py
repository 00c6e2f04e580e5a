"""Index on the finding a run's snapshot row was read from: a row is found by its finding.

Why: a run's snapshot copies the rows of the findings its check run carried over from the
previous run's snapshot (ops.copy_carried_findings, sql/300), and the report's review sections
look up the rows of the few findings found, re-opened or waived (ops.run_finding_review_first).
Both look rows up by `finding_id`, which ops.run_finding had no index on. Right after a check
run the planner has no statistics for its findings yet, estimated one, and probed the previous
snapshot (240,000 rows at state size) once per carried finding by its run alone: the state
benchmark's 1 % night sat in the snapshot for minutes. The copy is now hashed whatever the
estimate; the index keeps any lookup by finding a lookup (the review's marked rows, and any
plan that probes).

Revision ID: 0048
Revises: 0047
Create Date: 2026-12-07
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0048"
down_revision: str | None = "0047"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_run_finding_finding", "run_finding", ["run_id", "finding_id"],
                    schema="ops")


def downgrade() -> None:
    op.drop_index("ix_run_finding_finding", table_name="run_finding", schema="ops")
