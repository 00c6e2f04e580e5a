"""The ledger as a record: queue every owner once, so the next recompute re-posts what the
rules of docs/ledger.md now say.

Why: no table changes, but the figures of existing ledgers move. Replacement ground goes to
the claim counted first (decision 19), ground is charged once and BMPs, grading and
suspended structures in wetland are impact (decision 25), credit and transfers are dated per
feature and per transfer (section 4a: an owner's line now exists per effective date), a
transfer stands only on its giver's position on its date (decision 9), and a delineation
approved after a basin was built measures it from its approval date (decision 26). The
functions come with the migration step (sql/110-170); this revision queues every owner with
entries, so the next recompute (`rulem-db watch`, the nightly, or `rulem-db recompute`)
re-posts the lines that differ, each as a reversal and a new entry with its reason, and the
book keeps the earlier figures as recorded history.

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-10
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0034"
down_revision: str | None = "0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute(
        "INSERT INTO ledger.change_queue (plan_area_id, permit_id, district_project, layer, "
        "reason) "
        "SELECT DISTINCT e.plan_area_id, e.permit_id, e.district_project, 'recompute', "
        "'claims, charges, dates and transfers by the ledger''s record rules (revision 0034)' "
        "FROM ledger.entry e")


def downgrade() -> None:
    # Nothing to undo in the tables; the queue rows are processed by the next recompute.
    pass
