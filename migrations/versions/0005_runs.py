"""Reconciliation run records: ops.run, the files each run took (ops.run_file) and what each
run saw (ops.run_parcel_balance, ops.run_finding).

Written from rulem_db.catalogue.tables_runs and frozen here. The downgrade drops the tables with what
sql/300-349 built on them and forgets that those files were applied, so an upgrade re-creates
them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('run',
    sa.Column('run_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Run id.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area reconciled.'),
    sa.Column('flow', sa.Text(), nullable=False, comment='nightly_reconciliation or ingest_inbox.'),
    sa.Column('status', sa.Text(), server_default='running', nullable=False, comment='running; done; partial (done, but some inbox files were quarantined); failed; abandoned (found running after its process had gone).'),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False, comment='Start time.'),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True, comment='End time.'),
    sa.Column('started_via', sa.Text(), nullable=True, comment='How it was started: schedule (a Prefect deployment), command (rulem-db reconcile), demo, api.'),
    sa.Column('host', sa.Text(), nullable=True, comment='Host name of the process that ran it.'),
    sa.Column('pid', sa.Integer(), nullable=True, comment='Process id on that host.'),
    sa.Column('backend_pid', sa.Integer(), nullable=True, comment="Database backend pid of the session holding the run's lock."),
    sa.Column('prefect_flow_run_id', sa.Text(), nullable=True, comment='Prefect flow run id, when run through Prefect.'),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that ran it.'),
    sa.Column('previous_run_id', sa.BigInteger(), nullable=True, comment='The run this one was compared with (the last completed run).'),
    sa.Column('ledger_run_id', sa.BigInteger(), nullable=True, comment='The ledger recompute of this run.'),
    sa.Column('check_run_id', sa.BigInteger(), nullable=True, comment='The rule check run of this run.'),
    sa.Column('inbox', sa.Text(), nullable=True, comment='Inbox folder read (NULL: no ingest).'),
    sa.Column('files_loaded', sa.Integer(), nullable=True, comment='Inbox files loaded.'),
    sa.Column('files_duplicate', sa.Integer(), nullable=True, comment='Inbox files already loaded before (same SHA-256), archived.'),
    sa.Column('files_quarantined', sa.Integer(), nullable=True, comment='Inbox files refused and moved to quarantine with their report.'),
    sa.Column('entries_posted', sa.Integer(), nullable=True, comment='Ledger entries the recompute posted (new entries and reversals).'),
    sa.Column('finding_count', sa.Integer(), nullable=True, comment='Current findings after the checks.'),
    sa.Column('findings_new', sa.Integer(), nullable=True, comment='Findings not in the previous run.'),
    sa.Column('findings_resolved', sa.Integer(), nullable=True, comment='Findings of the previous run that are gone.'),
    sa.Column('parcels_changed', sa.Integer(), nullable=True, comment='Parcels whose balance (to 4 decimals of an acre) or status changed.'),
    sa.Column('changed', sa.Boolean(), nullable=True, comment='Whether anything changed since the previous run: files loaded, entries posted, findings or balances.'),
    sa.Column('plan_totals', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The plan area's balance after the run (pub.plan_balance row)."),
    sa.Column('changes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment='What changed, for the report: counts, plan totals before and after.'),
    sa.Column('report_path', sa.Text(), nullable=True, comment="Folder of the run's report (index.html)."),
    sa.Column('message', sa.Text(), nullable=True, comment='Outcome in one line (the error when failed).'),
    sa.CheckConstraint("flow IN ('nightly_reconciliation', 'ingest_inbox')", name=op.f('ck_run_flow_code')),
    sa.CheckConstraint("status IN ('running', 'done', 'partial', 'failed', 'abandoned')", name=op.f('ck_run_status_code')),
    sa.ForeignKeyConstraint(['check_run_id'], ['checks.run.run_id'], name=op.f('fk_run_check_run_id')),
    sa.ForeignKeyConstraint(['ledger_run_id'], ['ledger.run.run_id'], name=op.f('fk_run_ledger_run_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_run_plan_area_id')),
    sa.ForeignKeyConstraint(['previous_run_id'], ['ops.run.run_id'], name=op.f('fk_run_previous_run_id')),
    sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run')),
    schema='ops',
    comment='One row per reconciliation run (nightly flow or inbox ingest): start, end, status, counts, what changed, where the report is.'
    )
    op.create_index('ix_run_plan_area', 'run', ['plan_area_id', 'flow', 'run_id'], unique=False, schema='ops')
    op.create_table('run_file',
    sa.Column('run_file_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Row id.'),
    sa.Column('run_id', sa.BigInteger(), nullable=False, comment='Run that took the file.'),
    sa.Column('file_name', sa.Text(), nullable=False, comment='Path of the file relative to the inbox.'),
    sa.Column('layer', sa.Text(), nullable=True, comment='Layer it was loaded as (NULL: unknown).'),
    sa.Column('file_sha256', sa.Text(), nullable=True, comment='SHA-256 of the file.'),
    sa.Column('outcome', sa.Text(), nullable=False, comment='loaded, duplicate (archived), quarantined, or left (in the inbox after a database error, for the next run).'),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch, when one was recorded.'),
    sa.Column('moved_to', sa.Text(), nullable=True, comment='Where the file is now (archive, quarantine).'),
    sa.Column('message', sa.Text(), nullable=True, comment='Outcome in one line (the reason it was refused).'),
    sa.Column('handled_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False, comment='When.'),
    sa.CheckConstraint("outcome IN ('loaded', 'duplicate', 'quarantined', 'left')", name=op.f('ck_run_file_outcome_code')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_run_file_batch_id')),
    sa.ForeignKeyConstraint(['run_id'], ['ops.run.run_id'], name=op.f('fk_run_file_run_id')),
    sa.PrimaryKeyConstraint('run_file_id', name=op.f('pk_run_file')),
    schema='ops',
    comment='Files a run took from the inbox and what became of each.'
    )
    op.create_index('ix_run_file_run', 'run_file', ['run_id'], unique=False, schema='ops')
    op.create_table('run_parcel_balance',
    sa.Column('run_id', sa.BigInteger(), nullable=False, comment='Run.'),
    sa.Column('parcel_id', sa.BigInteger(), nullable=False, comment='Parcel (stable feature id).'),
    sa.Column('pin', sa.Text(), nullable=True, comment='Parcel PIN.'),
    sa.Column('impact_acres', sa.Numeric(), nullable=True, comment='Impact acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('required_acres', sa.Numeric(), nullable=True, comment='Required replacement acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('credit_acres', sa.Numeric(), nullable=True, comment='Counted credit acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('credit_proposed_acres', sa.Numeric(), nullable=True, comment='Proposed credit acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('credit_hosted_acres', sa.Numeric(), nullable=True, comment='Hosted credit acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('balance_acres', sa.Numeric(), nullable=True, comment='Balance acres, full precision, as pub.parcel_balance showed it.'),
    sa.Column('status', sa.Text(), nullable=True, comment='deficit, balanced or surplus.'),
    sa.ForeignKeyConstraint(['parcel_id'], ['core.feature.feature_id'], name=op.f('fk_run_parcel_balance_parcel_id')),
    sa.ForeignKeyConstraint(['run_id'], ['ops.run.run_id'], name=op.f('fk_run_parcel_balance_run_id')),
    sa.PrimaryKeyConstraint('run_id', 'parcel_id', name=op.f('pk_run_parcel_balance')),
    schema='ops',
    comment='Parcel balances a run saw (parcels with status other than none).'
    )
    op.create_table('run_finding',
    sa.Column('run_id', sa.BigInteger(), nullable=False, comment='Run.'),
    sa.Column('finding_key', sa.Text(), nullable=False, comment='Identity of the finding across runs: paragraph, check, permit, parcel, feature, and its rank among equal ones.'),
    sa.Column('finding_id', sa.BigInteger(), nullable=True, comment='checks.finding row it was read from.'),
    sa.Column('paragraph', sa.Text(), nullable=True, comment='Rule M paragraph.'),
    sa.Column('check_code', sa.Text(), nullable=True, comment='Check.'),
    sa.Column('severity', sa.Text(), nullable=True, comment='error, warning or info.'),
    sa.Column('permit_no', sa.Text(), nullable=True, comment='Permit number.'),
    sa.Column('pin', sa.Text(), nullable=True, comment='Parcel PIN.'),
    sa.Column('measured_value', sa.Numeric(), nullable=True, comment='Measured value.'),
    sa.Column('limit_value', sa.Numeric(), nullable=True, comment='Limit.'),
    sa.Column('unit', sa.Text(), nullable=True, comment='Unit.'),
    sa.Column('message', sa.Text(), nullable=True, comment='Message.'),
    sa.ForeignKeyConstraint(['run_id'], ['ops.run.run_id'], name=op.f('fk_run_finding_run_id')),
    sa.PrimaryKeyConstraint('run_id', 'finding_key', name=op.f('pk_run_finding')),
    schema='ops',
    comment='Findings a run saw, for the comparison with the next run.'
    )


def downgrade() -> None:
    for table in ("run_finding", "run_parcel_balance", "run_file", "run"):
        op.execute(f"DROP TABLE IF EXISTS ops.{table} CASCADE")
    # The functions of sql/300-349 go with their tables; mark those files unapplied so that
    # the next upgrade applies them (and every file after them) again.
    op.execute("DROP FUNCTION IF EXISTS pub.ledger_statement(text, integer, text), "
               "pub.ledger_statement_entry(text, integer, text), "
               "ops.reconcile_lock_class(), ops.try_reconcile_lock(integer), "
               "ops.release_reconcile_lock(integer), ops.reconcile_lock_holder(integer), "
               "ops.start_run(integer, text, text, text, integer, text, text), "
               "ops.record_run_file(bigint, text, text, text, text, bigint, text, text), "
               "ops.finish_run(bigint, text, text, text), "
               "ops.snapshot_run(bigint, bigint, bigint), ops.run_finding_change(bigint), "
               "ops.run_parcel_change(bigint), ops.plan_figures(jsonb), "
               "ops.summarize_run(bigint) CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name >= '300' AND file_name < '350'")
