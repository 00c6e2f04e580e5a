"""Re-delivered layers: each current feature's delivered row, as a hash (docs/ingest.md).

Why: a weekly parcel refresh of 100,000 features of which 1 % changed was validated and matched
in full (every geometry checked, repaired, tested against the plan boundary and compared with
its current version) to write 1,400 rows: 2.6x ogr2ogr reloading the whole file. With the
hash of the row each current version was loaded from (sql/063), a re-delivery sets aside the
rows delivered exactly as before, before any validation or write, and prepares and merges only
the rest.

ops.ingest_row_hash: one row per feature loaded by a layer-wide ingest: the hash of its
delivered row (32 bytes: the MD5 of the ingest's settings, plan boundary and tolerance, then
the MD5 digest the reader makes of the row's geometry and fields, etl/row_digest.py) and the
version it made current. A hash counts only while that version is still current (an edit
or another load makes it stale), so the table never has to be right, only never wrong. Keyed
by feature_id alone (a feature id is unique across layers and plan areas): the cheapest index
to keep for the 100,000 rows a first load adds.

Revision ID: 0030
Revises: 0028
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision: str = "0030"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ingest_row_hash",
        sa.Column("layer", sa.Text, nullable=False, comment="Layer of the feature."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("feature_id", sa.BigInteger, primary_key=True, autoincrement=False,
                  comment="Feature (core.feature)."),
        sa.Column("version_id", sa.BigInteger, nullable=False,
                  comment="The current version the row made (the hash counts while it is)."),
        sa.Column("row_hash", pg.BYTEA, nullable=False,
                  comment="MD5 of the delivered row and the ingest's context (sql/063)."),
        sa.PrimaryKeyConstraint("feature_id", name="pk_ingest_row_hash"),
        schema="ops",
        comment="Per feature of a layer-wide load, the hash of the delivered row behind its "
                "current version: a re-delivery sets aside rows delivered as before.",
    )


def downgrade() -> None:
    op.drop_table("ingest_row_hash", schema="ops")
