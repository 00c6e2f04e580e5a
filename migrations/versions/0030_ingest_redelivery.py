"""Re-delivered layers: each current feature's delivered row, as a hash (issue 21).

Why: a weekly parcel refresh of 100,000 features of which 1 % changed was validated and matched
in full (every geometry checked, repaired, tested against the plan boundary and compared with
its current version) to write 1,400 rows: 2.6x ogr2ogr reloading the whole file. With the
hash of the row each current version was loaded from (sql/063), a re-delivery sets aside the
rows delivered exactly as before, before any validation or write, and prepares and merges only
the rest.

ops.ingest_row_hash: one row per feature loaded by a layer-wide ingest: the MD5 of its
delivered row (every staged field and the geometry as read, under the ingest's settings) and
the version it made current. A hash counts only while that version is still current (an edit
or another load makes it stale), so the table never has to be right, only never wrong. Keyed
by feature_id alone (a feature id is unique across layers and plan areas): the cheapest index
to keep for the 100,000 rows a first load adds.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-02
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
        CREATE TABLE ops.ingest_row_hash (
          layer        text    NOT NULL,
          plan_area_id integer NOT NULL,
          feature_id   bigint  NOT NULL,
          version_id   bigint  NOT NULL,
          row_hash     bytea   NOT NULL,
          CONSTRAINT pk_ingest_row_hash PRIMARY KEY (feature_id)
        )""")


def downgrade() -> None:
    op.execute("DROP TABLE IF EXISTS ops.ingest_row_hash")
