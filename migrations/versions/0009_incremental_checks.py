"""Incremental check runs: a nightly run evaluates only the permits whose inputs changed and
carries the other permits' findings and outcomes over from the run before (sql/285). The run
records which run it built on, how many permits it evaluated and why, and from when the next
run must look for changes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("run", sa.Column(
        "base_run_id", sa.BigInteger(), nullable=True,
        comment="Run whose results were carried over for the permits no change touched (an "
                "incremental run); NULL when every permit was evaluated."), schema="checks")
    op.create_foreign_key(op.f("fk_run_base_run_id"), "run", "run", ["base_run_id"],
                          ["run_id"], source_schema="checks", referent_schema="checks")
    op.add_column("run", sa.Column(
        "rechecked_count", sa.Integer(), nullable=True,
        comment="Permits evaluated by this run (the rest carried over from base_run_id)."),
        schema="checks")
    op.add_column("run", sa.Column(
        "changes_since", sa.DateTime(timezone=True), nullable=True,
        comment="Start of the oldest transaction open when this run began: data committed by "
                "it or later may be unseen by this run, so the next incremental run looks for "
                "changes from this time on."), schema="checks")
    op.add_column("run", sa.Column(
        "rechecked_why", postgresql.JSONB(astext_type=sa.Text()), nullable=True,
        comment="Why each rechecked permit (or the whole plan area) was evaluated again: the "
                "changed layers and dates."), schema="checks")


def downgrade() -> None:
    op.drop_column("run", "rechecked_why", schema="checks")
    op.drop_column("run", "changes_since", schema="checks")
    op.drop_column("run", "rechecked_count", schema="checks")
    op.drop_constraint(op.f("fk_run_base_run_id"), "run", schema="checks", type_="foreignkey")
    op.drop_column("run", "base_run_id", schema="checks")
