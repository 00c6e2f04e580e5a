"""Table checks.evaluation_stage: the evaluations of a check run's worker sessions.

Why: a check run splits its permits over several sessions (`--workers`, docs/checks.md,
"Performance"), like the ledger's recompute. Each worker evaluates its share in its own
transaction, on the snapshot the run exported, and leaves its evaluations here under the
run's stage id; the run's own session takes them back, records them in the run (findings and
outcomes are written by that one transaction, so a failed run leaves nothing half-written)
and deletes them. Unlogged: the rows live for minutes and are derived again by a new run.

Revision ID: 0039
Revises: 0037
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry

revision: str = "0039"
down_revision: str | None = "0037"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.create_table(
        'evaluation_stage',
        sa.Column('stage_id', sa.Uuid(), nullable=False,
                  comment='The check run whose worker wrote the row (a random id per run).'),
        sa.Column('staged_at', sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text('now()'), comment='When the worker wrote it.'),
        sa.Column('paragraph', sa.Text(), nullable=True, comment='Rule M paragraph.'),
        sa.Column('check_code', sa.Text(), nullable=True, comment='Check code.'),
        sa.Column('severity', sa.Text(), nullable=True, comment='error or warning.'),
        sa.Column('permit_id', sa.BigInteger(), nullable=True,
                  comment='Permit (none: a District project or the plan area).'),
        sa.Column('parcel_id', sa.BigInteger(), nullable=True, comment='Parcel.'),
        sa.Column('feature_id', sa.BigInteger(), nullable=True, comment='Feature at fault.'),
        sa.Column('passed', sa.Boolean(), nullable=True,
                  comment='Passed, failed, or NULL: not evaluated.'),
        sa.Column('measured_value', sa.Numeric(), nullable=True, comment='Measured value.'),
        sa.Column('limit_value', sa.Numeric(), nullable=True, comment='Limit.'),
        sa.Column('unit', sa.Text(), nullable=True, comment='Unit.'),
        sa.Column('message', sa.Text(), nullable=True, comment='One-line message.'),
        sa.Column('geom', Geometry(geometry_type='GEOMETRY', srid=SRID, dimension=2,
                                   spatial_index=False, from_text='ST_GeomFromEWKT',
                                   name='geometry', nullable=True), nullable=True,
                  comment='Place of the case.'),
        schema='checks',
        prefixes=['UNLOGGED'],
        comment='Transient: the evaluations of a check run\'s worker sessions, taken back and '
                'deleted by the run (sql/280 checks.stage_evaluations).',
    )
    op.create_index('ix_evaluation_stage_stage', 'evaluation_stage', ['stage_id'],
                    unique=False, schema='checks')


def downgrade() -> None:
    op.drop_index('ix_evaluation_stage_stage', table_name='evaluation_stage', schema='checks')
    op.drop_table('evaluation_stage', schema='checks')
