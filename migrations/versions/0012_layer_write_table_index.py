"""Index on ops.layer_write (table_name, layer_write_id): the nightly's parcel-balance
fingerprint (sql/300 ops.balance_state) counts the statements that wrote core.parcel, which
was a scan of every logged statement (14 ms of a 0.3 s quiet night at county size, where the
log held 141,000 rows, nearly all registry writes).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_layer_write_table_name", "layer_write",
                    ["table_name", "layer_write_id"], unique=False, schema="ops")


def downgrade() -> None:
    op.drop_index("ix_layer_write_table_name", table_name="layer_write", schema="ops")
