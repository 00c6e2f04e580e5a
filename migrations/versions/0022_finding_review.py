"""checks.finding_case, finding_occurrence, finding_review: findings have a life.

Why: a finding row belongs to one check run, so a review written on it would be lost with the
next run. A finding keeps its identity from run to run (finding_case: same permit, check and
place) and carries a review state (open, acknowledged, waived with the variance or decision it
stands on, resolved); finding_occurrence says which identity each run's finding row is, so
that checks.finding stays insert-only; finding_review keeps every change, by whom and when
(sql/287 writes all three).

Existing findings get their identity from the next check run: nothing is back-filled.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'finding_case',
        sa.Column('finding_case_id', sa.BigInteger(), sa.Identity(always=False),
                  nullable=False,
                  comment="The finding's identity, the same in every run that finds it."),
        sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
        sa.Column('finding_key', sa.Text(), nullable=False,
                  comment="What makes it the same finding: paragraph|check|permit|parcel|"
                          "feature|place|n (ids; place: the geometry's lower-left corner to "
                          "the metre when no feature is named; n: the rank among otherwise "
                          "equal findings)."),
        sa.Column('paragraph', sa.Text(), nullable=False, comment='Rule M paragraph.'),
        sa.Column('check_code', sa.Text(), nullable=False, comment='Short code of the check.'),
        sa.Column('permit_id', sa.BigInteger(), nullable=True,
                  comment='Permit concerned (NULL for a District project).'),
        sa.Column('parcel_id', sa.BigInteger(), nullable=True,
                  comment='Parcel concerned, when the check is per parcel.'),
        sa.Column('feature_id', sa.BigInteger(), nullable=True,
                  comment='The feature found at fault.'),
        sa.Column('review_state', sa.Text(), server_default=sa.text("'open'"), nullable=False,
                  comment='open, acknowledged, waived (with waiver_reference) or resolved.'),
        sa.Column('waiver_reference', sa.Text(), nullable=True,
                  comment='The variance or decision a waived finding stands on; NULL unless '
                          'waived.'),
        sa.Column('review_note', sa.Text(), nullable=True, comment='The latest note.'),
        sa.Column('reviewed_by', sa.Text(), nullable=True,
                  comment='Database login of the latest change (a staff member, or the login '
                          'of the check run that resolved or re-opened it).'),
        sa.Column('reviewed_at', sa.DateTime(timezone=True), nullable=True,
                  comment='When of that change.'),
        sa.Column('first_found_at', sa.DateTime(timezone=True), nullable=False,
                  comment='When a check run first found it.'),
        sa.Column('first_run_id', sa.BigInteger(), nullable=False,
                  comment='Check run that first found it.'),
        sa.Column('last_run_id', sa.BigInteger(), nullable=False,
                  comment='Latest check run that found it or resolved it.'),
        sa.CheckConstraint("review_state IN ('open', 'acknowledged', 'waived', 'resolved')",
                           name='review_state_code'),
        sa.CheckConstraint("(review_state = 'waived') = (coalesce(btrim(waiver_reference), "
                           "'') <> '')", name='waiver_has_reference'),
        sa.ForeignKeyConstraint(['paragraph', 'check_code'],
                                ['checks.rule_check.paragraph', 'checks.rule_check.check_code'],
                                name='fk_finding_case_rule_check'),
        sa.ForeignKeyConstraint(['feature_id'], ['core.feature.feature_id']),
        sa.ForeignKeyConstraint(['first_run_id'], ['checks.run.run_id']),
        sa.ForeignKeyConstraint(['last_run_id'], ['checks.run.run_id']),
        sa.ForeignKeyConstraint(['parcel_id'], ['core.feature.feature_id']),
        sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id']),
        sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id']),
        sa.PrimaryKeyConstraint('finding_case_id'),
        sa.UniqueConstraint('plan_area_id', 'finding_key', name='uq_finding_case_key'),
        schema='checks',
        comment='A finding as staff review it: one row per identity (permit, check and place), '
                'with its review state now (sql/287).')
    op.create_index('ix_finding_case_permit', 'finding_case', ['permit_id'], unique=False,
                    schema='checks')
    op.create_table(
        'finding_occurrence',
        sa.Column('finding_id', sa.BigInteger(), nullable=False,
                  comment='Finding row of a run.'),
        sa.Column('finding_case_id', sa.BigInteger(), nullable=False,
                  comment='The finding it is (checks.finding_case).'),
        sa.Column('run_id', sa.BigInteger(), nullable=False,
                  comment='Check run of the finding row.'),
        sa.ForeignKeyConstraint(['finding_case_id'], ['checks.finding_case.finding_case_id']),
        sa.ForeignKeyConstraint(['finding_id'], ['checks.finding.finding_id']),
        sa.ForeignKeyConstraint(['run_id'], ['checks.run.run_id']),
        sa.PrimaryKeyConstraint('finding_id'),
        schema='checks',
        comment='Which finding (checks.finding_case) each finding row of a run is; written at '
                'the end of the run.')
    op.create_index('ix_finding_occurrence_case', 'finding_occurrence',
                    ['finding_case_id', 'run_id'], unique=False, schema='checks')
    op.create_index('ix_finding_occurrence_run', 'finding_occurrence', ['run_id'],
                    unique=False, schema='checks')
    op.create_table(
        'finding_review',
        sa.Column('review_id', sa.BigInteger(), sa.Identity(always=False), nullable=False,
                  comment='History row id, in the order the changes were made.'),
        sa.Column('finding_case_id', sa.BigInteger(), nullable=False, comment='The finding.'),
        sa.Column('event', sa.Text(), nullable=False,
                  comment='found, resolved, reopened (by a check run); acknowledged, waived, '
                          'opened, noted (by staff).'),
        sa.Column('review_state', sa.Text(), nullable=False,
                  comment='State after the change.'),
        sa.Column('waiver_reference', sa.Text(), nullable=True,
                  comment='Variance or decision (waived).'),
        sa.Column('note', sa.Text(), nullable=True, comment='Note given with the change.'),
        sa.Column('run_id', sa.BigInteger(), nullable=True,
                  comment='Check run that made the change; NULL for a staff change.'),
        sa.Column('changed_by', sa.Text(), server_default=sa.text('session_user'),
                  nullable=False,
                  comment='Database login that made the change (session_user).'),
        sa.Column('changed_at', sa.DateTime(timezone=True),
                  server_default=sa.text('clock_timestamp()'), nullable=False,
                  comment='When.'),
        sa.CheckConstraint("event IN ('found', 'resolved', 'reopened', 'acknowledged', "
                           "'waived', 'opened', 'noted')", name='review_event_code'),
        sa.CheckConstraint("review_state IN ('open', 'acknowledged', 'waived', 'resolved')",
                           name='review_history_state_code'),
        sa.ForeignKeyConstraint(['finding_case_id'], ['checks.finding_case.finding_case_id']),
        sa.ForeignKeyConstraint(['run_id'], ['checks.run.run_id']),
        sa.PrimaryKeyConstraint('review_id'),
        schema='checks',
        comment='History of every review change of every finding, append-only (sql/287).')
    op.create_index('ix_finding_review_case', 'finding_review',
                    ['finding_case_id', 'review_id'], unique=False, schema='checks')
    op.create_index('ix_finding_review_run', 'finding_review', ['run_id'], unique=False,
                    schema='checks')


def downgrade() -> None:
    # What reads the tables goes first; the migration step of the older code creates the views
    # and functions again from its SQL files (sql/287 forgotten: 287 and every file after it
    # are applied again, and a file gone from sql/ makes every file apply again).
    op.execute("DROP VIEW IF EXISTS edit.finding CASCADE")
    op.execute("DROP VIEW IF EXISTS pub.finding_review_history CASCADE")
    op.execute("DROP VIEW IF EXISTS pub.finding, pub.permit_compliance CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.review_finding(bigint, text, text, text) "
               "CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.review_after_run(bigint) CASCADE")
    op.drop_index('ix_finding_review_run', table_name='finding_review', schema='checks')
    op.drop_index('ix_finding_review_case', table_name='finding_review', schema='checks')
    op.drop_table('finding_review', schema='checks')
    op.drop_index('ix_finding_occurrence_run', table_name='finding_occurrence',
                  schema='checks')
    op.drop_index('ix_finding_occurrence_case', table_name='finding_occurrence',
                  schema='checks')
    op.drop_table('finding_occurrence', schema='checks')
    op.drop_index('ix_finding_case_permit', table_name='finding_case', schema='checks')
    op.drop_table('finding_case', schema='checks')
    op.execute("DELETE FROM ops.sql_applied WHERE file_name = '287_finding_review.sql'")
