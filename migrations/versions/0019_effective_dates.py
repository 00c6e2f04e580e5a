"""ledger.entry.effective_on: the date each entry's fact took effect, beside posted_at.

Why: "as of" a date read the posting time only, so a permit decided in 2024 and loaded in
2026 was missing from every balance and statement of 2024. Spec section 4: "Each entry has an
effective date (impact: the permit's decision date; credit: the date its counted status was
reached) and a posting time; 'as of' a date goes by the effective date, optionally 'as
recorded at' a past moment (bitemporal)". Posting (sql/160) now dates each line, the
pub.*_balance_as_of functions (sql/180) take (date, recorded_at) and the statement (sql/310)
goes by effective year. docs/ledger.md section 4a.

Existing entries: the book is append-only and its history is not rewritten beyond filling the
new column once, here: each entry gets the date it was posted (posted_at::date in the
database's time zone), a reversal the date of the entry it reverses. So right after the
upgrade every "as of" answer is what it was before. The revision queues every owner with
entries: the next recompute (rulem-db watch, the nightly run or `rulem-db recompute`)
re-dates the lines whose effective date by the new rule differs (a reversal carrying the old
date and a new entry carrying the new one); no `recompute --all` is needed.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COMMENT = ("Date the fact took effect: impact and required the permit's decision date; "
           "credit the date its counted status was reached; transfers transferred_on "
           "(docs/ledger.md 4a). A reversal carries the date of the entry it reverses. "
           "Balances as of a date read this; posted_at says when it was recorded.")


def upgrade() -> None:
    op.add_column('entry', sa.Column('effective_on', sa.Date(), nullable=True,
                                     comment=COMMENT), schema='ledger')
    # The one fill of the new column (the append-only trigger, created by sql/160 once a
    # database has been migrated, refuses any UPDATE otherwise).
    op.execute("""
      DO $$
      DECLARE
        guarded boolean := EXISTS (SELECT 1 FROM pg_trigger
                                   WHERE tgrelid = 'ledger.entry'::regclass
                                     AND tgname = 'entry_append_only');
      BEGIN
        IF guarded THEN
          ALTER TABLE ledger.entry DISABLE TRIGGER entry_append_only;
        END IF;
        UPDATE ledger.entry e
           SET effective_on = coalesce((SELECT r.posted_at::date FROM ledger.entry r
                                        WHERE r.entry_id = e.reverses_entry_id),
                                       e.posted_at::date);
        IF guarded THEN
          ALTER TABLE ledger.entry ENABLE TRIGGER entry_append_only;
        END IF;
      END $$""")
    op.alter_column('entry', 'effective_on', nullable=False, schema='ledger')
    op.create_index('ix_entry_effective_on', 'entry', ['plan_area_id', 'effective_on'],
                    unique=False, schema='ledger')
    op.execute(
        "INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, "
        "reason) "
        "SELECT DISTINCT e.plan_area_id, e.permit_id, e.district_project, 'recompute', "
        "'effective dates of the lines (revision 0019)' "
        "FROM ledger.entry e")


def downgrade() -> None:
    # The published views and functions over the column go with it (CASCADE); the migration
    # step re-creates them from sql/160, 180 and 310 (their hashes forgotten: applied again).
    op.execute("DROP FUNCTION IF EXISTS pub.parcel_balance_as_of(date, timestamptz) CASCADE")
    op.execute("DROP FUNCTION IF EXISTS pub.permit_balance_as_of(date, timestamptz) CASCADE")
    op.execute("DROP FUNCTION IF EXISTS pub.plan_balance_as_of(date, timestamptz) CASCADE")
    op.drop_index('ix_entry_effective_on', table_name='entry', schema='ledger')
    op.execute('ALTER TABLE ledger.entry DROP COLUMN effective_on CASCADE')
    op.execute("DELETE FROM ops.sql_applied WHERE file_name IN ('160_ledger_posting.sql', "
               "'180_ledger_balances.sql', '310_ledger_statement.sql')")
