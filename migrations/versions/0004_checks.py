"""Rule check tables: the catalogue of checks, check runs, findings and per-permit outcomes.

Generated from rulem_db.catalogue.tables_checks and frozen here. The finding geometry takes the working
SRID. The downgrade drops the tables with what the sql/2xx files built on them (pub.finding,
pub.permit_compliance) and forgets that those files were applied, so an upgrade re-creates them.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.create_table('rule_check',
    sa.Column('paragraph', sa.Text(), nullable=False, comment="Rule M paragraph, e.g. '6(c)'."),
    sa.Column('check_code', sa.Text(), nullable=False, comment="Short code of the check, e.g. 'buffer_min_width'."),
    sa.Column('severity', sa.Text(), nullable=False, comment='Severity of a failure: error, warning or info.'),
    sa.Column('title', sa.Text(), nullable=False, comment='What the rule requires.'),
    sa.Column('measure', sa.Text(), nullable=False, comment='Exactly what is measured and compared with the limit.'),
    sa.Column('unit', sa.Text(), nullable=True, comment='Unit of the measured value and the limit.'),
    sa.Column('worse', sa.Text(), nullable=False, comment='Which measured values are worse: higher, lower, or flag (yes/no).'),
    sa.Column('sort_order', sa.Integer(), nullable=False, comment="Order of the check in reports (the rule's order)."),
    sa.CheckConstraint("severity IN ('error', 'warning', 'info')", name=op.f('ck_rule_check_severity_code')),
    sa.CheckConstraint("worse IN ('higher', 'lower', 'flag')", name=op.f('ck_rule_check_worse_code')),
    sa.PrimaryKeyConstraint('paragraph', 'check_code', name=op.f('pk_rule_check')),
    schema='checks',
    comment='Catalogue of the Rule M checks (seeded by sql/200_check_catalogue.sql).'
    )
    op.create_table('run',
    sa.Column('run_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Check run id.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area checked.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='The one permit checked, or NULL when every permit was.'),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False, comment='Start time.'),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True, comment='End time.'),
    sa.Column('permit_count', sa.Integer(), nullable=True, comment='Permits checked.'),
    sa.Column('finding_count', sa.Integer(), nullable=True, comment='Findings recorded.'),
    sa.Column('error_count', sa.Integer(), nullable=True, comment='Findings of severity error.'),
    sa.Column('warning_count', sa.Integer(), nullable=True, comment='Findings of severity warning.'),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that ran the checks.'),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_run_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_run_plan_area_id')),
    sa.PrimaryKeyConstraint('run_id', name=op.f('pk_run')),
    schema='checks',
    comment='One row per run of the rule checks.'
    )
    op.create_index('ix_run_plan_area', 'run', ['plan_area_id', 'run_id'], unique=False, schema='checks')
    op.create_table('finding',
    sa.Column('finding_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Finding id.'),
    sa.Column('run_id', sa.BigInteger(), nullable=False, comment='Check run that found it.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('paragraph', sa.Text(), nullable=False, comment="Rule M paragraph, e.g. '6(c)'."),
    sa.Column('check_code', sa.Text(), nullable=False, comment='Short code of the check.'),
    sa.Column('severity', sa.Text(), nullable=False, comment='error, warning or info.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='Permit concerned (NULL for a District project).'),
    sa.Column('parcel_id', sa.BigInteger(), nullable=True, comment='Parcel concerned, when the check is per parcel.'),
    sa.Column('feature_id', sa.BigInteger(), nullable=True, comment='The feature found at fault (structure, BMP, replacement, ...).'),
    sa.Column('measured_value', sa.Numeric(), nullable=True, comment='Measured value.'),
    sa.Column('limit_value', sa.Numeric(), nullable=True, comment="The rule's limit for it."),
    sa.Column('unit', sa.Text(), nullable=True, comment='Unit of the measured value and the limit.'),
    sa.Column('message', sa.Text(), nullable=False, comment='What is wrong, in one line.'),
    sa.Column('geom', Geometry(srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry'), nullable=True, comment='Where: the failing area, line or point, in the working CRS.'),
    sa.CheckConstraint("severity IN ('error', 'warning', 'info')", name=op.f('ck_finding_severity_code')),
    sa.ForeignKeyConstraint(['feature_id'], ['core.feature.feature_id'], name=op.f('fk_finding_feature_id')),
    sa.ForeignKeyConstraint(['paragraph', 'check_code'], ['checks.rule_check.paragraph', 'checks.rule_check.check_code'], name='fk_finding_rule_check'),
    sa.ForeignKeyConstraint(['parcel_id'], ['core.feature.feature_id'], name=op.f('fk_finding_parcel_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_finding_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_finding_plan_area_id')),
    sa.ForeignKeyConstraint(['run_id'], ['checks.run.run_id'], name=op.f('fk_finding_run_id')),
    sa.PrimaryKeyConstraint('finding_id', name=op.f('pk_finding')),
    schema='checks',
    comment='Findings of the rule checks: a failure, its measure, limit and place.'
    )
    op.create_index('ix_finding_geom', 'finding', ['geom'], unique=False, schema='checks', postgresql_using='gist')
    op.create_index('ix_finding_permit', 'finding', ['permit_id', 'run_id'], unique=False, schema='checks')
    op.create_index('ix_finding_run', 'finding', ['run_id'], unique=False, schema='checks')
    op.create_table('outcome',
    sa.Column('outcome_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Outcome id.'),
    sa.Column('run_id', sa.BigInteger(), nullable=False, comment='Check run.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='Permit.'),
    sa.Column('paragraph', sa.Text(), nullable=False, comment='Rule M paragraph.'),
    sa.Column('check_code', sa.Text(), nullable=False, comment='Short code of the check.'),
    sa.Column('outcome', sa.Text(), nullable=False, comment='pass, fail or not_applicable.'),
    sa.Column('measured_value', sa.Numeric(), nullable=True, comment='The worst measured value of the permit for this check.'),
    sa.Column('limit_value', sa.Numeric(), nullable=True, comment='The limit that value was held against.'),
    sa.Column('unit', sa.Text(), nullable=True, comment='Unit.'),
    sa.Column('evaluated_count', sa.Integer(), nullable=False, comment='Cases evaluated (features, parcels, subwatersheds ...).'),
    sa.Column('finding_count', sa.Integer(), nullable=False, comment='Cases that failed.'),
    sa.Column('message', sa.Text(), nullable=True, comment='The worst case, in one line.'),
    sa.CheckConstraint("outcome IN ('pass', 'fail', 'not_applicable')", name=op.f('ck_outcome_outcome_code')),
    sa.ForeignKeyConstraint(['paragraph', 'check_code'], ['checks.rule_check.paragraph', 'checks.rule_check.check_code'], name='fk_outcome_rule_check'),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_outcome_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_outcome_plan_area_id')),
    sa.ForeignKeyConstraint(['run_id'], ['checks.run.run_id'], name=op.f('fk_outcome_run_id')),
    sa.PrimaryKeyConstraint('outcome_id', name=op.f('pk_outcome')),
    sa.UniqueConstraint('run_id', 'permit_id', 'paragraph', 'check_code', name='uq_outcome_run_permit_check'),
    schema='checks',
    comment='Outcome of every check for every permit of a run: pass, fail or not applicable.'
    )
    op.create_index('ix_outcome_permit', 'outcome', ['permit_id', 'run_id'], unique=False, schema='checks')


def downgrade() -> None:
    for table in ("outcome", "finding", "run", "rule_check"):
        op.execute(f"DROP TABLE IF EXISTS checks.{table} CASCADE")
    # The check functions and views of sql/200-299 go with their tables; mark those files
    # unapplied so that the next upgrade applies them (and every file after them) again.
    op.execute("DROP VIEW IF EXISTS pub.buffer_transect, pub.stormwater_volume CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name >= '200' AND file_name < '300'")
