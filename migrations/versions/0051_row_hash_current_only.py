"""ops.ingest_row_hash holds hashes of current versions only.

Why: before reading a re-delivery, ingest fetches the hashes of the layer's current versions
(ops.ingest_current_hashes, sql/063). It joined every stored hash with the layer's current
versions to leave out the hashes of versions closed since (by an edit, a retirement): 1.5-1.9 s
of a state's 1,000,000 parcels, the longest wait before a re-delivery's read. An UPDATE that
closes versions now deletes their hashes (ops.ingest_forget_closed_hashes, sql/063), so the
stored hashes are read alone while every current feature has one. This revision deletes the
hashes of versions closed before it; a hash deleted costs at most one comparison in full of
its feature's next delivered row, never a wrong result.

Revision ID: 0051
Revises: 0050
Create Date: 2026-12-07
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0051"
down_revision: str | None = "0050"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
DO $$
DECLARE
  l text;
BEGIN
  FOR l IN SELECT DISTINCT layer FROM ops.ingest_row_hash ORDER BY 1 LOOP
    IF to_regclass(format('core.%I', l)) IS NULL THEN
      DELETE FROM ops.ingest_row_hash WHERE layer = l;
    ELSE
      EXECUTE format('DELETE FROM ops.ingest_row_hash h WHERE h.layer = %L AND NOT EXISTS '
                     '(SELECT 1 FROM core.%I t WHERE t.version_id = h.version_id '
                     'AND t.valid_to IS NULL)', l, l);
    END IF;
  END LOOP;
END $$""")


def downgrade() -> None:
    """Nothing to restore: the deleted hashes named closed versions, which count for nothing."""
