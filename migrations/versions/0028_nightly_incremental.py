"""The proportional nightly (issue 21.1): no schema change.

Kept in the chain (0027 -> 0028 -> 0029) as an empty step: the nightly's changes are in SQL
functions (sql/280, re-applied at migrate) and Python (flows, rulem_db/reports): the buffer
sites of the permits an incremental check run evaluates are cached together, and the report's
parcel layer is read while the checks run. Nothing to upgrade or downgrade.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-02
"""
from collections.abc import Sequence

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
