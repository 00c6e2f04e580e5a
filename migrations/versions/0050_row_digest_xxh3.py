"""ops.ingest_row_hash.row_hash: the delivered row's digest is XXH3-128 (etl.row_digest).

Why: the digest is made once per row in the reader, in Python, and MD5 was the slowest part
of a re-delivery's read (0.6-0.75 s of a state's 1,000,000 parcels, where XXH3-128 takes
0.10-0.13 s). Only the column's description changes here: the stored digests are left as they
are. A layer's first re-delivery after the change matches none of them, is staged and compared
whole, and replaces them (ops.ingest_keep_hashes, sql/063).

Revision ID: 0050
Revises: 0049
Create Date: 2026-12-07
"""
from collections.abc import Sequence

from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision: str = "0050"
down_revision: str | None = "0049"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = ("The ingest's context (16 bytes: MD5 of its settings, plan boundary and tolerance, "
       "sql/063), then the delivered row's digest (16 bytes: XXH3-128, etl.row_digest).")
BEFORE = "MD5 of the delivered row and the ingest's context (sql/063)."


def _comment(text: str, before: str) -> None:
    op.alter_column("ingest_row_hash", "row_hash", schema="ops", existing_type=pg.BYTEA,
                    existing_nullable=False, comment=text, existing_comment=before)


def upgrade() -> None:
    _comment(NOW, BEFORE)


def downgrade() -> None:
    _comment(BEFORE, NOW)
