"""Table checks.buffer_site_cache: the buffer sites of one check run, in a table of the owner's.

Why: checks.buffer_site read its run's sites from a temporary table of the caller's session
whenever a session setting said so. Published views reach checks.buffer_site through SECURITY
DEFINER functions, so any login that could create that temporary object and set that setting
made the owner read (and run) what it had made. The sites now live in this table, written and
deleted inside checks.evaluate's transaction and read by transaction id, so only the run's own
transaction ever sees them and no reader can put anything there.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_GEOMETRY = (("parcels", "The permit's parcels."),
             ("edge", "Protected edge (6(a), 6(c))."),
             ("wetland", "Wetland near the parcels after the permit's work."),
             ("central", "Central contiguous wetland near the parcels."),
             ("buffer", "Every current buffer near the parcels."),
             ("own_buffer", "The permit's own buffers."),
             ("effective", "Buffer less trails and wetland (6(f)(iv))."))


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.create_table(
        'buffer_site_cache',
        sa.Column('xact', sa.BigInteger(), nullable=False,
                  comment='Transaction (pg_current_xact_id) of the check run that wrote it.'),
        sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
        sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='Permit.'),
        sa.Column('baseline_on', sa.Date(), nullable=True,
                  comment="The permit's baseline date."),
        *[sa.Column(name, Geometry(geometry_type='GEOMETRY', srid=SRID, dimension=2,
                                   spatial_index=False, from_text='ST_GeomFromEWKT',
                                   name='geometry', nullable=True), nullable=True, comment=text)
          for name, text in _GEOMETRY],
        schema='checks',
        prefixes=['UNLOGGED'],
        comment='Derived, transient: the buffer sites of a check run, written and deleted '
                'within its transaction (sql/280 checks.evaluate).',
    )
    op.create_index('ix_buffer_site_cache_key', 'buffer_site_cache',
                    ['xact', 'plan_area_id', 'permit_id'], unique=False, schema='checks')


def downgrade() -> None:
    op.drop_index('ix_buffer_site_cache_key', table_name='buffer_site_cache', schema='checks')
    op.drop_table('buffer_site_cache', schema='checks')
