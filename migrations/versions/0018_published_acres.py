"""ledger.entry.acres_published: the 4-decimal figure published for each line.

Why: every published figure was its own entries' sum rounded to 4 decimals, so the parcel
rows of a plan area did not add up to the plan row (the demo: 11.2827 against 11.2828), nor
a permit's parcels to the permit. Spec section 4: "rounded to 4 decimals so that parts add up
to their totals (parcels to permit and plan; rounding allocated by largest remainder)". Posting
(sql/160) now allocates the rounding among each owner's lines of a measure and stores the
figure with the entry; the pub balance views sum it (sql/180). docs/ledger.md section 4.

Entries posted before this revision keep NULL: the book is append-only, and round(acres, 4)
stands for a NULL in the views and in posting, which is what they published until now. This
revision queues every owner with entries, so the next recompute (rulem-db watch, the nightly
run or `rulem-db recompute`) re-posts the few lines whose published figure the allocation
moves; until then the views show the figures they showed before.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-10
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        'entry',
        sa.Column('acres_published', sa.Numeric(precision=14, scale=4), nullable=True,
                  comment="Acres as published, 4 decimals: the 4-decimal rounding of the "
                          "owner's lines of a measure allocated by largest remainder, so "
                          "they add up to the owner's total rounded; a reversal carries the "
                          "negated figure. NULL on entries posted before revision 0018: "
                          "round(acres, 4) stands for it."),
        schema='ledger')
    # Every owner with entries waits for a recompute: it posts only the lines whose published
    # figure differs from round(acres, 4) (a reversal and a new entry each).
    op.execute(
        "INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, "
        "reason) "
        "SELECT DISTINCT e.plan_area_id, e.permit_id, e.district_project, 'recompute', "
        "'published acres allocated by largest remainder (revision 0018)' "
        "FROM ledger.entry e")


def downgrade() -> None:
    # The published views and functions over the column go with it (CASCADE); the migration
    # step re-creates them from sql/160, 180 and 310 (their hashes forgotten: applied again).
    op.execute('ALTER TABLE ledger.entry DROP COLUMN acres_published CASCADE')
    op.execute("DELETE FROM ops.sql_applied WHERE file_name IN ('160_ledger_posting.sql', "
               "'180_ledger_balances.sql', '310_ledger_statement.sql')")
