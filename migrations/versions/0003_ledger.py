"""Ledger tables: ledger.run, ledger.entry (append-only), ledger.change_queue,
ledger.wetland_piece.

Functions, triggers (append-only, change queue) and views are in sql/100-199.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.execute("CREATE SCHEMA IF NOT EXISTS ledger")
    op.create_geospatial_table(
        'wetland_piece',
        sa.Column('wetland_piece_id', sa.BigInteger(), sa.Identity(always=False),
                  nullable=False, comment='Piece id.'),
        sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
        sa.Column('wetland_id', sa.BigInteger(), nullable=False, comment='Wetland feature.'),
        sa.Column('version_id', sa.BigInteger(), nullable=False,
                  comment='The core.wetland version cut into pieces.'),
        sa.Column('delineation_id', sa.BigInteger(), nullable=False,
                  comment='Delineation of that wetland version.'),
        sa.Column('geom', Geometry(geometry_type='POLYGON', srid=SRID, dimension=2,
                                   spatial_index=False, from_text='ST_GeomFromEWKT',
                                   name='geometry', nullable=False), nullable=False,
                  comment='One piece (at most 128 vertices, ST_Subdivide); the pieces of a '
                          'version tile it.'),
        sa.PrimaryKeyConstraint('wetland_piece_id', name=op.f('pk_wetland_piece')),
        schema='ledger',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment(
        'wetland_piece',
        "Current wetland versions cut into small pieces for the ledger's overlays; derived, "
        'kept by triggers on core.wetland (sql/105).', schema='ledger')
    op.create_geospatial_index('ix_wetland_piece_geom', 'wetland_piece', ['geom'],
                               unique=False, schema='ledger', postgresql_using='gist',
                               postgresql_ops={})
    op.create_index('ix_wetland_piece_version_id', 'wetland_piece', ['version_id'],
                    unique=False, schema='ledger')
    op.create_table(
        'run',
        sa.Column('run_id', sa.BigInteger(), sa.Identity(always=False), nullable=False,
                  comment='Recompute run id.'),
        sa.Column('mode', sa.Text(), nullable=False,
                  comment='all (every owner recomputed) or queue (only what changed).'),
        sa.Column('status', sa.Text(), server_default='running', nullable=False,
                  comment='running, done or failed.'),
        sa.Column('workers', sa.Integer(), server_default='1', nullable=False,
                  comment='Connections that drained the change queue for this run.'),
        sa.Column('queue_items', sa.Integer(), nullable=True,
                  comment='Change queue rows processed.'),
        sa.Column('owners', sa.Integer(), nullable=True,
                  comment='Permits and District projects recomputed.'),
        sa.Column('entries', sa.Integer(), nullable=True,
                  comment='Entries posted (new entries and reversals).'),
        sa.Column('reversals', sa.Integer(), nullable=True, comment='Of those, reversals.'),
        sa.Column('message', sa.Text(), nullable=True,
                  comment='Outcome in one line (the error when failed).'),
        sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'),
                  nullable=False, comment='Database user that ran the recompute.'),
        sa.Column('started_at', sa.DateTime(timezone=True),
                  server_default=sa.text('clock_timestamp()'), nullable=False,
                  comment='Start time.'),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True,
                  comment='End time.'),
        sa.CheckConstraint("mode IN ('all', 'queue')", name=op.f('ck_run_mode_code')),
        sa.CheckConstraint("status IN ('running', 'done', 'failed')",
                           name=op.f('ck_run_status_code')),
        sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run')),
        schema='ledger',
        comment='One row per recompute: what it was asked to do, what it posted.',
    )
    op.create_table(
        'entry',
        sa.Column('entry_id', sa.BigInteger(), sa.Identity(always=False), nullable=False,
                  comment='Entry id.'),
        sa.Column('run_id', sa.BigInteger(), nullable=False,
                  comment='Recompute run that posted the entry (ledger.run).'),
        sa.Column('plan_area_id', sa.Integer(), nullable=False,
                  comment='Plan area (core.plan_area).'),
        sa.Column('permit_id', sa.BigInteger(), nullable=True,
                  comment='Permit the entry belongs to (NULL for a District project).'),
        sa.Column('district_project', sa.Text(), nullable=True,
                  comment='District replacement project the entry belongs to (no permit).'),
        sa.Column('parcel_id', sa.BigInteger(), nullable=True,
                  comment='Parcel the acres are allocated to; NULL when no parcel could be '
                          'found (see docs/ledger.md).'),
        sa.Column('measure', sa.Text(), nullable=False,
                  comment='What the acres measure: impact, required, credit, transfer_in, '
                          'transfer_out, credit_proposed, credit_constructed, credit_hosted.'),
        sa.Column('entry_kind', sa.Text(), nullable=False,
                  comment='debit (required, transfer_out), credit (credit, transfer_in) or '
                          'memo (shown, never in a balance).'),
        sa.Column('acres', sa.Numeric(), nullable=False,
                  comment='Acres, full precision; a reversal carries the negated acres.'),
        sa.Column('reverses_entry_id', sa.BigInteger(), nullable=True,
                  comment='The entry this one reverses (NULL for a new entry).'),
        sa.Column('reason', sa.Text(), nullable=False,
                  comment='Why it was posted: the changes that queued the recompute.'),
        sa.Column('inputs', postgresql.JSONB(astext_type=sa.Text()), nullable=False,
                  comment='Version ids of the inputs that produced the figure, by layer, and '
                          'the parameter rows used.'),
        sa.Column('posted_by', sa.Text(), server_default=sa.text('current_user'),
                  nullable=False, comment='Database user that posted it.'),
        sa.Column('posted_at', sa.DateTime(timezone=True), server_default=sa.text('now()'),
                  nullable=False,
                  comment='When posted (transaction time); balances as of a date read this.'),
        sa.CheckConstraint('(permit_id IS NULL) <> (district_project IS NULL)',
                           name=op.f('ck_entry_one_owner')),
        sa.CheckConstraint(
            "measure IN ('impact', 'required', 'credit', 'transfer_in', 'transfer_out', "
            "'credit_proposed', 'credit_constructed', 'credit_hosted')",
            name=op.f('ck_entry_measure_code')),
        sa.CheckConstraint("entry_kind IN ('debit', 'credit', 'memo')",
                           name=op.f('ck_entry_entry_kind_code')),
        sa.CheckConstraint(
            "entry_kind = CASE WHEN measure IN ('required', 'transfer_out') THEN 'debit' "
            "WHEN measure IN ('credit', 'transfer_in') THEN 'credit' ELSE 'memo' END",
            name=op.f('ck_entry_kind_of_measure')),
        sa.ForeignKeyConstraint(['reverses_entry_id'], ['ledger.entry.entry_id'],
                                name=op.f('fk_entry_reverses_entry_id')),
        sa.PrimaryKeyConstraint('entry_id', name=op.f('pk_entry')),
        sa.UniqueConstraint('reverses_entry_id', name=op.f('uq_entry_reverses_entry_id')),
        schema='ledger',
        comment='The replacement ledger: append-only entries; a change is a reversal plus a '
                'new entry.',
    )
    op.create_index('ix_entry_district_project', 'entry', ['plan_area_id', 'district_project'],
                    unique=False, schema='ledger',
                    postgresql_where=sa.text('district_project IS NOT NULL'))
    op.create_index('ix_entry_parcel_id', 'entry', ['parcel_id', 'posted_at'], unique=False,
                    schema='ledger')
    op.create_index('ix_entry_permit_id', 'entry', ['permit_id', 'measure'], unique=False,
                    schema='ledger')
    op.create_index('ix_entry_posted_at', 'entry', ['plan_area_id', 'posted_at'], unique=False,
                    schema='ledger')
    op.create_index('ix_entry_run_id', 'entry', ['run_id'], unique=False, schema='ledger')
    op.create_table(
        'change_queue',
        sa.Column('queue_id', sa.BigInteger(), sa.Identity(always=False), nullable=False,
                  comment='Queue row id.'),
        sa.Column('plan_area_id', sa.Integer(), nullable=False,
                  comment='Plan area (core.plan_area).'),
        sa.Column('permit_id', sa.BigInteger(), nullable=True,
                  comment='Permit to recompute (NULL for a District project).'),
        sa.Column('district_project', sa.Text(), nullable=True,
                  comment='District project to recompute.'),
        sa.Column('layer', sa.Text(), nullable=False,
                  comment="Layer whose change queued the owner (or 'recompute')."),
        sa.Column('feature_id', sa.BigInteger(), nullable=True, comment='Feature that changed.'),
        sa.Column('version_id', sa.BigInteger(), nullable=True,
                  comment='Version that was opened or closed.'),
        sa.Column('parcel_id', sa.BigInteger(), nullable=True,
                  comment='Parcel that changed, for parcel changes.'),
        sa.Column('reason', sa.Text(), nullable=False, comment='What changed, in words.'),
        sa.Column('queued_at', sa.DateTime(timezone=True),
                  server_default=sa.text('clock_timestamp()'), nullable=False,
                  comment='When queued.'),
        sa.Column('processed_at', sa.DateTime(timezone=True), nullable=True,
                  comment='When a recompute processed it (NULL while waiting).'),
        sa.Column('processed_run_id', sa.BigInteger(), nullable=True,
                  comment='Run that processed it (ledger.run).'),
        sa.CheckConstraint('(permit_id IS NULL) <> (district_project IS NULL)',
                           name=op.f('ck_change_queue_one_owner')),
        sa.PrimaryKeyConstraint('queue_id', name=op.f('pk_change_queue')),
        schema='ledger',
        comment='Owners (permits, District projects) whose inputs changed, waiting for '
                'recompute; rows are kept, marked processed, as the audit of why.',
    )
    op.create_index('ix_change_queue_waiting', 'change_queue', ['queue_id'], unique=False,
                    schema='ledger', postgresql_where=sa.text('processed_at IS NULL'))
    op.create_index('ix_change_queue_waiting_permit', 'change_queue', ['permit_id'],
                    unique=False, schema='ledger',
                    postgresql_where=sa.text('processed_at IS NULL'))


def downgrade() -> None:
    # Everything sql/100-199 defined goes too: the functions in schema ledger (and with them
    # the change-queue and transfer triggers on core tables that call them), the pub views over
    # these tables, and the pub functions by name. Forgetting the files' hashes makes the next
    # upgrade apply them again.
    op.execute("DROP SCHEMA IF EXISTS ledger CASCADE")
    op.execute("CREATE SCHEMA ledger")
    for fn in PUB_FUNCTIONS:
        op.execute(f"DROP FUNCTION IF EXISTS pub.{fn} CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name ~ '^1[0-9][0-9]_'")


# The functions sql/180_ledger_balances.sql publishes in schema pub.
PUB_FUNCTIONS = (
    "parcel_balance_as_of(date)", "permit_balance_as_of(date)", "plan_balance_as_of(date)",
    "parcel_balance_at(timestamptz)", "permit_balance_at(timestamptz)",
    "plan_balance_at(timestamptz)",
)
