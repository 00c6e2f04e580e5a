"""Index on a finding's parcel: a parcel's findings are found without reading every finding.

Why: the web service's `/api/parcel` answers a parcel's balance with its current findings
(pub.finding WHERE parcel_id = ...). checks.finding had indexes by run and by permit only, so
each answer read every finding of the current runs: 4 s p50 with 8 clients at state size
(114,000 findings), where the target is a p95 under 20 ms.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-02
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_finding_parcel", "finding", ["parcel_id", "run_id"], schema="checks")


def downgrade() -> None:
    op.drop_index("ix_finding_parcel", table_name="finding", schema="checks")
