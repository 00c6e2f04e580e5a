"""ops.layer.ledger_input and ops.layer.recheck: how the ledger and the incremental check run
read each layer, as catalogue facts.

Why: sql/170 (the ledger's change queue) and sql/285 (which permits an incremental check run
evaluates again) each kept their own list of layer names, so a new layer the ledger or a check
reads had to be added by hand in two SQL files, and nothing said so until a slow test failed.
They are now facts of the layer catalogue (Layer.ledger_input and Layer.recheck in
rulem_db/catalogue/layers.py); the migration step writes them here right after this revision,
like every other column of ops.layer, and the two files build their triggers and places from
them. What each layer gets is unchanged.

Revision ID: 0043
Revises: 0040
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0043"
down_revision: str | None = "0040"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("layer", sa.Column(
        "ledger_input", sa.Text(),
        comment="How the ledger reads it, and so its change-queue trigger (sql/170): "
                "disturbance, replacement, place, permit, transfer, plan; NULL: the ledger "
                "does not read it."), schema="ops")
    op.add_column("layer", sa.Column(
        "recheck", postgresql.JSONB(astext_type=sa.Text()),
        comment="What an incremental check run evaluates again when it changes (sql/285, "
                "checks.recheck_places): {\"everything\": true}, or {\"site\", \"features\", "
                "\"near\"}; NULL: every permit near it."), schema="ops")
    op.create_check_constraint(
        op.f("ck_layer_ledger_input_code"), "layer",
        "ledger_input IN ('disturbance', 'replacement', 'place', 'permit', 'transfer', "
        "'plan')", schema="ops")


def downgrade() -> None:
    op.drop_constraint(op.f("ck_layer_ledger_input_code"), "layer", schema="ops", type_="check")
    op.drop_column("layer", "recheck", schema="ops")
    op.drop_column("layer", "ledger_input", schema="ops")
