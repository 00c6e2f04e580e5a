"""A first load builds the layer's secondary indexes once, after its INSERT (sql/064).

Why: a first load of 100,000 parcels spent 2.7-4.0 s in its INSERT into core.parcel, most of
it keeping five secondary indexes current row by row (the GiST index, the PIN's three btree
indexes, valid_from); the same rows inserted bare and the indexes built after took 1.3-1.6 s.
ops.ingest_indexes_set_aside drops a layer's secondary indexes inside the ingest's
transaction when the load at least doubles the layer, and ops.ingest_indexes_rebuild makes
them again after the INSERT, from the definitions this table keeps.

ops.ingest_index_set_aside: the definitions of the indexes set aside by the current
transaction. Only the owner writes it (through the two SECURITY DEFINER functions), so what
the rebuild runs is what the catalogue said; a deferred constraint trigger (sql/064) refuses
to commit a transaction that set indexes aside and did not rebuild them.

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0040"
down_revision: str | None = "0039"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ingest_index_set_aside",
        sa.Column("xact", sa.BigInteger, nullable=False,
                  comment="The transaction that set the index aside (pg_current_xact_id)."),
        sa.Column("layer", sa.Text, nullable=False, comment="Layer whose table the index is on."),
        sa.Column("index_name", sa.Text, nullable=False, comment="The index's name."),
        sa.Column("definition", sa.Text, nullable=False,
                  comment="Its CREATE INDEX statement (pg_get_indexdef)."),
        sa.Column("description", sa.Text, comment="Its comment, if any."),
        sa.PrimaryKeyConstraint("xact", "index_name", name="pk_ingest_index_set_aside"),
        schema="ops",
        comment="Secondary indexes an ingest set aside for its bulk INSERT and must rebuild "
                "in the same transaction (sql/064).",
    )


def downgrade() -> None:
    op.drop_table("ingest_index_set_aside", schema="ops")
