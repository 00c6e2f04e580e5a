"""Index on the PIN in its display form: lookups of pub.parcel_balance by PIN stay indexed.

Why: the published PIN is core.pin_display(pin) (sql/025), which ix_parcel_pin (revision 0008,
the PIN as delivered) cannot serve, so `SELECT * FROM pub.parcel_balance WHERE pin = '...'`
scanned every parcel and summed its ledger (seconds at 100,000 parcels, where the target is a
p95 under 10 ms). An expression index needs its function at creation, so this revision creates
core.pin_display as sql/025 defines it (the SQL files apply after the revisions and replace it
with the same).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-02
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PIN_DISPLAY = r"""
CREATE OR REPLACE FUNCTION core.pin_display(p_pin text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN regexp_replace(p_pin, '[^0-9A-Za-z]', '', 'g') ~ '^[0-9]{12}$'
              THEN regexp_replace(regexp_replace(p_pin, '[^0-9A-Za-z]', '', 'g'),
                                  '^(..)(..)(..)(..)(....)$', '\1-\2-\3-\4-\5')
              ELSE p_pin END
$$;
"""


def upgrade() -> None:
    op.execute(PIN_DISPLAY)
    op.execute("CREATE INDEX ix_parcel_pin_display ON core.parcel (core.pin_display(pin))")


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS core.ix_parcel_pin_display")
