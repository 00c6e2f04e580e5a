"""Ledger tables ledger.visible_epoch and ledger.visible_area: each plan area's approved
delineations' visible study areas as of the latest approval, stored once instead of computed
in every recompute chunk (sql/100 ledger.refresh_visible, ledger.baseline_pieces).

Why: a recompute chunk measured impact and credit each against the baseline wetland, and
each computed the visible study area of every delineation it met (a union of the later
study areas overlapping it and a difference: 23 ms for a county's 130 delineations, twice
per chunk, about 8 % of a full recompute). The stored areas are used only when the version
ids they were computed from are those of the plan area's approved delineations now, so a
stale row is never read; a recompute run refreshes them when they are stale.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30
"""
from collections.abc import Sequence

import geoalchemy2  # noqa: F401
import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.create_table(
        'visible_epoch',
        sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
        sa.Column('epoch', sa.Date(), nullable=False,
                  comment='The latest approval date of the plan area when computed: the '
                          'stored areas are the visible study areas as of that date.'),
        sa.Column('inputs', postgresql.ARRAY(sa.BigInteger()), nullable=False,
                  comment='Version ids (sorted) of the approved current delineations the '
                          'areas were computed from; the areas are used only while these '
                          'are the approved current delineations.'),
        sa.Column('refreshed_at', sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text('now()'), comment='When computed.'),
        sa.PrimaryKeyConstraint('plan_area_id', name=op.f('pk_visible_epoch')),
        schema='ledger',
        comment="Derived: which delineations ledger.visible_area was computed from, per plan "
                "area (sql/100 ledger.refresh_visible).",
    )
    op.create_geospatial_table(
        'visible_area',
        sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
        sa.Column('delineation_id', sa.BigInteger(), nullable=False,
                  comment='Delineation feature.'),
        sa.Column('version_id', sa.BigInteger(), nullable=False,
                  comment='Its core.delineation version.'),
        sa.Column('whole', sa.Boolean(), nullable=False,
                  comment='No later-approved study area overlaps it: all of it is visible.'),
        sa.Column('area', Geometry(geometry_type='GEOMETRY', srid=SRID, dimension=2,
                                   spatial_index=False, from_text='ST_GeomFromEWKT',
                                   name='geometry', nullable=True), nullable=True,
                  comment='Its study area minus every study area approved after it (NULL: '
                          'nothing left).'),
        sa.PrimaryKeyConstraint('plan_area_id', 'delineation_id', name=op.f('pk_visible_area')),
        schema='ledger',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment(
        'visible_area',
        "Derived: each approved delineation's visible study area as of ledger.visible_epoch's "
        'epoch (sql/100).', schema='ledger')


def downgrade() -> None:
    op.drop_table('visible_area', schema='ledger')
    op.drop_table('visible_epoch', schema='ledger')
