"""Incremental check runs: a nightly run evaluates only the permits whose inputs changed and
carries the other permits' findings and outcomes over from the run before (sql/285). The run
records which run it built on, how many permits it evaluated and why, and from when the next
run must look for changes; a reconciliation run that saw the same balances or findings as the
run before refers to that run's snapshot instead of copying it; ops.layer_write logs which core tables each statement wrote, so the
next run finds them without scanning every layer. The downgrade drops sql/285's triggers with
the table and forgets that sql/285 and later files were applied, so an upgrade re-creates
them. Also: ledger.run records the backend of the session that started a recompute, so the
next one can mark a run left running by a killed process abandoned.

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
    op.create_table(
        "layer_write",
        sa.Column("layer_write_id", sa.BigInteger(), sa.Identity(always=False), nullable=False,
                  comment="Statement number."),
        sa.Column("table_name", sa.Text(), nullable=False,
                  comment="Table written (schema.name)."),
        sa.Column("written_at", sa.DateTime(timezone=True), server_default=sa.text("now()"),
                  nullable=False,
                  comment="Start of the writing transaction (the valid_from of the versions it "
                          "opened)."),
        sa.PrimaryKeyConstraint("layer_write_id", name=op.f("pk_layer_write")),
        schema="ops",
        comment="Which core tables were written when (one row per statement): what the "
                "incremental rule check runs look at first.")
    op.create_index(op.f("ix_layer_write_written_at"), "layer_write", ["written_at"],
                    unique=False, schema="ops")
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


    op.add_column("run", sa.Column(
        "balance_state", postgresql.JSONB(astext_type=sa.Text()), nullable=True,
        comment="Fingerprint of what the parcel balances were read from: current parcels "
                "(count, newest version) and the newest ledger entry of the plan area. Equal "
                "fingerprints mean equal balances."), schema="ops")
    for column, what in (("parcels_seen_in_run_id",
                          "Run whose ops.run_parcel_balance rows hold the balances this run "
                          "saw, when they had not changed (no copy kept); NULL: its own rows."),
                         ("findings_seen_in_run_id",
                          "Run whose ops.run_finding rows hold the findings this run saw, when "
                          "its check run was the same (no copy kept); NULL: its own rows.")):
        op.add_column("run", sa.Column(column, sa.BigInteger(), nullable=True, comment=what),
                      schema="ops")
        op.create_foreign_key(op.f(f"fk_run_{column}"), "run", "run", [column], ["run_id"],
                              source_schema="ops", referent_schema="ops")


    # A recompute killed mid-way left its ledger.run row 'running' for ever.
    op.add_column("run", sa.Column(
        "backend_pid", sa.Integer(), nullable=True,
        comment="Database backend pid of the session that started the run (revision 0009): a "
                "later run marks a run left running by a gone session abandoned."),
        schema="ledger")
    op.drop_constraint(op.f("ck_run_status_code"), "run", schema="ledger", type_="check")
    op.create_check_constraint(op.f("ck_run_status_code"), "run",
                               "status IN ('running', 'done', 'failed', 'abandoned')",
                               schema="ledger")
    op.alter_column("run", "status", schema="ledger", existing_type=sa.Text(),
                    comment="running, done, failed, or abandoned (found running by a later run "
                            "after its session had gone: a killed process).")


def downgrade() -> None:
    op.execute("UPDATE ledger.run SET status = 'failed' WHERE status = 'abandoned'")
    op.drop_constraint(op.f("ck_run_status_code"), "run", schema="ledger", type_="check")
    op.create_check_constraint(op.f("ck_run_status_code"), "run",
                               "status IN ('running', 'done', 'failed')", schema="ledger")
    op.alter_column("run", "status", schema="ledger", existing_type=sa.Text(),
                    comment="running, done or failed.")
    op.drop_column("run", "backend_pid", schema="ledger")
    for column in ("findings_seen_in_run_id", "parcels_seen_in_run_id"):
        op.drop_constraint(op.f(f"fk_run_{column}"), "run", schema="ops", type_="foreignkey")
        op.drop_column("run", column, schema="ops")
    op.drop_column("run", "balance_state", schema="ops")
    op.execute("DROP FUNCTION IF EXISTS ops.log_layer_write() CASCADE")  # sql/285's triggers
    op.execute("DELETE FROM ops.sql_applied WHERE file_name >= '285'")
    op.drop_index(op.f("ix_layer_write_written_at"), table_name="layer_write", schema="ops")
    op.drop_table("layer_write", schema="ops")
    op.drop_column("run", "rechecked_why", schema="checks")
    op.drop_column("run", "changes_since", schema="checks")
    op.drop_column("run", "rechecked_count", schema="checks")
    op.drop_constraint(op.f("fk_run_base_run_id"), "run", schema="checks", type_="foreignkey")
    op.drop_column("run", "base_run_id", schema="checks")
