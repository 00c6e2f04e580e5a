"""Rule M schema: every layer, versioned, with provenance.

Generated from rulem_db.schema at the first release and frozen here; later changes are new
revisions. The geometry columns take the working SRID chosen at `rulem-db db init --srid`.

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 18:43:26.491151
"""
from collections.abc import Sequence

import geoalchemy2
import sqlalchemy as sa
from alembic import context, op
from geoalchemy2 import Geometry
from sqlalchemy.dialects import postgresql
revision: str = '0001'
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    SRID: int = context.config.attributes["srid"]  # the working CRS, resolved by env.py
    op.create_table('heritage_rank',
    sa.Column('rank', sa.Text(), nullable=False, comment='Natural Heritage rank.'),
    sa.Column('ordinal', sa.Integer(), nullable=False, comment='Order, 1 = best (A).'),
    sa.PrimaryKeyConstraint('rank', name=op.f('pk_heritage_rank')),
    sa.UniqueConstraint('ordinal', name=op.f('uq_heritage_rank_ordinal')),
    schema='core',
    comment='Natural Heritage rank order A > AB > B > BC > C > CD > D > unranked.'
    )
    op.create_table('plan_area',
    sa.Column('plan_area_id', sa.Integer(), sa.Identity(always=False), nullable=False, comment='Plan area id.'),
    sa.Column('code', sa.Text(), nullable=False, comment="Short code, e.g. 'acd-53-62'."),
    sa.Column('name', sa.Text(), nullable=False, comment='Plan name.'),
    sa.Column('rule', sa.Text(), server_default='Rule M', nullable=False, comment='Governing rule.'),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='When registered.'),
    sa.PrimaryKeyConstraint('plan_area_id', name=op.f('pk_plan_area')),
    sa.UniqueConstraint('code', name=op.f('uq_plan_area_code')),
    schema='core',
    comment='Plan areas (CWMP areas) held in this database; each has its own parameters.'
    )
    op.create_table('tr55_cover',
    sa.Column('cover_class', sa.Text(), nullable=False, comment='Cover class code.'),
    sa.Column('description', sa.Text(), nullable=False, comment='TR-55 Table 2-2a row.'),
    sa.Column('cn_a', sa.Integer(), nullable=False, comment='Curve number, soil group A.'),
    sa.Column('cn_b', sa.Integer(), nullable=False, comment='Curve number, soil group B.'),
    sa.Column('cn_c', sa.Integer(), nullable=False, comment='Curve number, soil group C.'),
    sa.Column('cn_d', sa.Integer(), nullable=False, comment='Curve number, soil group D.'),
    sa.PrimaryKeyConstraint('cover_class', name=op.f('pk_tr55_cover')),
    schema='core',
    comment='TR-55 runoff curve numbers by cover class and hydrologic soil group.'
    )
    op.create_table('setting',
    sa.Column('key', sa.Text(), nullable=False, comment='Setting name.'),
    sa.Column('value', sa.Text(), nullable=False, comment='Setting value.'),
    sa.PrimaryKeyConstraint('key', name=op.f('pk_setting')),
    schema='ops',
    comment='Database-wide settings fixed at initialisation (e.g. the working SRID).'
    )
    op.create_table('sql_applied',
    sa.Column('file_name', sa.Text(), nullable=False, comment='File under sql/.'),
    sa.Column('sha256', sa.Text(), nullable=False, comment='Hash of the applied text.'),
    sa.Column('applied_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='When applied.'),
    sa.PrimaryKeyConstraint('file_name', name=op.f('pk_sql_applied')),
    schema='ops',
    comment='Which version of each sql/ file the database runs.'
    )
    op.create_table('feature',
    sa.Column('feature_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Stable feature id, the <layer>_id of every version.'),
    sa.Column('layer', sa.Text(), nullable=False, comment='Layer.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('feature_key', sa.Text(), nullable=False, comment='Natural key (PIN, permit number, source feature id, ...).'),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='First seen.'),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_feature_plan_area_id')),
    sa.PrimaryKeyConstraint('feature_id', name=op.f('pk_feature')),
    sa.UniqueConstraint('layer', 'plan_area_id', 'feature_key', name='uq_feature_key'),
    schema='core',
    comment='Registry of features by natural key: a feature keeps its id across versions.'
    )
    op.create_table('parameter',
    sa.Column('parameter_id', sa.Integer(), sa.Identity(always=False), nullable=False, comment='Parameter row id.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('name', sa.Text(), nullable=False, comment='Parameter name.'),
    sa.Column('value_num', sa.Numeric(), nullable=True, comment='Numeric value.'),
    sa.Column('value_text', sa.Text(), nullable=True, comment='Text value.'),
    sa.Column('unit', sa.Text(), nullable=True, comment='Unit.'),
    sa.Column('rule_ref', sa.Text(), nullable=True, comment='Rule paragraph it comes from.'),
    sa.Column('effective_on', sa.Date(), nullable=False, comment='Takes effect from this date; never rewrites earlier postings.'),
    sa.Column('note', sa.Text(), nullable=True, comment="Why this value (the spec's Choice notes)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Who entered it.'),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='When entered.'),
    sa.CheckConstraint('(value_num IS NULL) <> (value_text IS NULL)', name=op.f('ck_parameter_one_value')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_parameter_plan_area_id')),
    sa.PrimaryKeyConstraint('parameter_id', name=op.f('pk_parameter')),
    sa.UniqueConstraint('plan_area_id', 'name', 'effective_on', name='uq_parameter'),
    schema='core',
    comment='Rule parameters (spec section 6) per plan area, with effective dates.'
    )
    op.create_table('susceptibility_limit',
    sa.Column('susceptibility_limit_id', sa.Integer(), sa.Identity(always=False), nullable=False, comment='Row id.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('susceptibility_class', sa.Text(), nullable=False, comment='Class.'),
    sa.Column('max_bounce_increase_ft', sa.Numeric(), nullable=True, comment='Permitted increase in 10-year bounce, feet; NULL = no limit.'),
    sa.Column('max_inundation_increase_days', sa.Numeric(), nullable=False, comment='Permitted increase in inundation period, days.'),
    sa.Column('effective_on', sa.Date(), nullable=False, comment='Effective from.'),
    sa.CheckConstraint("susceptibility_class IN ('high', 'moderate', 'slight', 'least')", name=op.f('ck_susceptibility_limit_class_code')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_susceptibility_limit_plan_area_id')),
    sa.PrimaryKeyConstraint('susceptibility_limit_id', name=op.f('pk_susceptibility_limit')),
    sa.UniqueConstraint('plan_area_id', 'susceptibility_class', 'effective_on', name='uq_susceptibility_limit'),
    schema='core',
    comment='Rule M 5(d) table: permitted bounce and inundation increase by class.'
    )
    op.create_table('batch',
    sa.Column('batch_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Ingest batch id.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area loaded into.'),
    sa.Column('layer', sa.Text(), nullable=False, comment='Layer loaded.'),
    sa.Column('file_name', sa.Text(), nullable=True, comment='Name of the file as delivered.'),
    sa.Column('file_sha256', sa.Text(), nullable=True, comment='SHA-256 of the file (re-ingest is a no-op).'),
    sa.Column('file_size', sa.BigInteger(), nullable=True, comment='File size, bytes.'),
    sa.Column('source_crs', sa.Text(), nullable=True, comment='CRS of the file (or the one given).'),
    sa.Column('status', sa.Text(), server_default='running', nullable=False, comment='running, loaded, failed or duplicate.'),
    sa.Column('feature_count', sa.Integer(), nullable=True, comment='Features read from the file.'),
    sa.Column('inserted_count', sa.Integer(), nullable=True, comment='New features.'),
    sa.Column('changed_count', sa.Integer(), nullable=True, comment='Features that got a new version.'),
    sa.Column('closed_count', sa.Integer(), nullable=True, comment='Features no longer delivered, closed.'),
    sa.Column('unchanged_count', sa.Integer(), nullable=True, comment='Features delivered unchanged.'),
    sa.Column('skipped_count', sa.Integer(), nullable=True, comment='Bad features skipped on request.'),
    sa.Column('repaired_count', sa.Integer(), nullable=True, comment='Geometries repaired.'),
    sa.Column('options', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment='Options of the ingest (mapping, CRS, ...).'),
    sa.Column('message', sa.Text(), nullable=True, comment='Outcome in one line.'),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that ran the ingest.'),
    sa.Column('started_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False, comment='Start time.'),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True, comment='End time.'),
    sa.CheckConstraint("status IN ('running', 'loaded', 'failed', 'duplicate')", name=op.f('ck_batch_status_code')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_batch_plan_area_id')),
    sa.PrimaryKeyConstraint('batch_id', name=op.f('pk_batch')),
    schema='ops',
    comment='One row per ingested file: what, from where, by whom, with what outcome.'
    )
    op.create_index('ix_batch_sha256', 'batch', ['plan_area_id', 'layer', 'file_sha256'], unique=False, schema='ops')
    op.create_geospatial_table('bmp',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('bmp_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('subwatershed_id', sa.BigInteger(), nullable=False, comment='Subwatershed it serves.'),
    sa.Column('kind', sa.Text(), nullable=False, comment='BMP kind.'),
    sa.Column('volume_cuft', sa.Numeric(), nullable=False, comment='Water quality volume provided, cubic feet.'),
    sa.Column('roof_runoff_only', sa.Boolean(), nullable=False, comment='Treats rooftop runoff only (no pretreatment needed).'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('bmp_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_bmp_one_version'),
    sa.CheckConstraint("kind IN ('infiltration', 'pretreatment', 'biofiltration', 'wet_pond')", name=op.f('ck_bmp_kind_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_bmp_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_bmp_valid_period')),
    sa.CheckConstraint('volume_cuft >= 0', name=op.f('ck_bmp_volume_cuft_check')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_bmp_batch_id')),
    sa.ForeignKeyConstraint(['bmp_id'], ['core.feature.feature_id'], name=op.f('fk_bmp_bmp_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_bmp_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_bmp_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_bmp_plan_area_id')),
    sa.ForeignKeyConstraint(['subwatershed_id'], ['core.feature.feature_id'], name=op.f('fk_bmp_subwatershed_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_bmp')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('bmp', 'Stormwater best management practices.', schema='core')
    op.create_index('ix_bmp_current', 'bmp', ['bmp_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_bmp_geom', 'bmp', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_bmp_history', 'bmp', ['plan_area_id', 'bmp_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_bmp_permit_id', 'bmp', ['permit_id'], unique=False, schema='core')
    op.create_index('ix_bmp_subwatershed_id', 'bmp', ['subwatershed_id'], unique=False, schema='core')
    op.create_geospatial_table('buffer',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('buffer_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('declaration_no', sa.Text(), nullable=True, comment='Recording number of the buffer declaration.'),
    sa.Column('public_land_agreement', sa.Boolean(), nullable=True, comment='Documented by written agreement on public land instead of a recorded declaration.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('buffer_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_buffer_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_buffer_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_buffer_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_buffer_batch_id')),
    sa.ForeignKeyConstraint(['buffer_id'], ['core.feature.feature_id'], name=op.f('fk_buffer_buffer_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_buffer_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_buffer_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_buffer_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_buffer')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('buffer', 'Declared vegetated buffers.', schema='core')
    op.create_index('ix_buffer_current', 'buffer', ['buffer_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_buffer_geom', 'buffer', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_buffer_history', 'buffer', ['plan_area_id', 'buffer_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_buffer_permit_id', 'buffer', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('buffer_marker',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('buffer_marker_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('marker_type', sa.Text(), nullable=False, comment='Marker type.'),
    sa.Column('geom', Geometry(geometry_type='POINT', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, point in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('buffer_marker_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_buffer_marker_one_version'),
    sa.CheckConstraint("marker_type IN ('free_standing', 'flush', 'breakaway')", name=op.f('ck_buffer_marker_marker_type_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_buffer_marker_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_buffer_marker_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_buffer_marker_batch_id')),
    sa.ForeignKeyConstraint(['buffer_marker_id'], ['core.feature.feature_id'], name=op.f('fk_buffer_marker_buffer_marker_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_buffer_marker_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_buffer_marker_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_buffer_marker_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_buffer_marker')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('buffer_marker', "Buffer monuments at the buffer's upland edge.", schema='core')
    op.create_index('ix_buffer_marker_current', 'buffer_marker', ['buffer_marker_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_buffer_marker_geom', 'buffer_marker', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_buffer_marker_history', 'buffer_marker', ['plan_area_id', 'buffer_marker_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_buffer_marker_permit_id', 'buffer_marker', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('central_wetland_seed',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('central_wetland_seed_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('name', sa.Text(), nullable=True, comment='Name of the mapped complex.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('central_wetland_seed_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_central_wetland_seed_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_central_wetland_seed_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_central_wetland_seed_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_central_wetland_seed_batch_id')),
    sa.ForeignKeyConstraint(['central_wetland_seed_id'], ['core.feature.feature_id'], name=op.f('fk_central_wetland_seed_central_wetland_seed_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_central_wetland_seed_closed_batch_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_central_wetland_seed_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_central_wetland_seed')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('central_wetland_seed', "The CWMP's central wetland complex as mapped; wetland connected to it is 'central'.", schema='core')
    op.create_index('ix_central_wetland_seed_current', 'central_wetland_seed', ['central_wetland_seed_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_central_wetland_seed_geom', 'central_wetland_seed', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_central_wetland_seed_history', 'central_wetland_seed', ['plan_area_id', 'central_wetland_seed_id', 'valid_from'], unique=False, schema='core')
    op.create_table('credit_transfer',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('credit_transfer_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('from_permit_id', sa.BigInteger(), nullable=False, comment='Permit giving credit.'),
    sa.Column('to_permit_id', sa.BigInteger(), nullable=False, comment='Permit receiving credit.'),
    sa.Column('acres', sa.Numeric(), nullable=False, comment='Acres transferred.'),
    sa.Column('transferred_on', sa.Date(), nullable=False, comment='Date of the transfer.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('credit_transfer_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_credit_transfer_one_version'),
    sa.CheckConstraint('acres > 0', name=op.f('ck_credit_transfer_acres_check')),
    sa.CheckConstraint('from_permit_id <> to_permit_id', name=op.f('ck_credit_transfer_distinct_permits')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_credit_transfer_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_credit_transfer_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_credit_transfer_closed_batch_id')),
    sa.ForeignKeyConstraint(['credit_transfer_id'], ['core.feature.feature_id'], name=op.f('fk_credit_transfer_credit_transfer_id')),
    sa.ForeignKeyConstraint(['from_permit_id'], ['core.feature.feature_id'], name=op.f('fk_credit_transfer_from_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_credit_transfer_plan_area_id')),
    sa.ForeignKeyConstraint(['to_permit_id'], ['core.feature.feature_id'], name=op.f('fk_credit_transfer_to_permit_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_credit_transfer')),
    schema='core',
    comment='Replacement credit moved from one permit to another (area basis).'
    )
    op.create_index('ix_credit_transfer_current', 'credit_transfer', ['credit_transfer_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_credit_transfer_from_permit_id', 'credit_transfer', ['from_permit_id'], unique=False, schema='core')
    op.create_index('ix_credit_transfer_history', 'credit_transfer', ['plan_area_id', 'credit_transfer_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_credit_transfer_to_permit_id', 'credit_transfer', ['to_permit_id'], unique=False, schema='core')
    op.create_geospatial_table('cwmp_area',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('cwmp_area_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('name', sa.Text(), nullable=False, comment='Plan name as adopted.'),
    sa.Column('adopted_on', sa.Date(), nullable=True, comment='Date the plan was adopted.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('cwmp_area_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_cwmp_area_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_cwmp_area_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_cwmp_area_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_cwmp_area_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_cwmp_area_closed_batch_id')),
    sa.ForeignKeyConstraint(['cwmp_area_id'], ['core.feature.feature_id'], name=op.f('fk_cwmp_area_cwmp_area_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_cwmp_area_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_cwmp_area')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('cwmp_area', 'The plan area (CWMP area) boundary that Rule M regulates.', schema='core')
    op.create_index('ix_cwmp_area_current', 'cwmp_area', ['cwmp_area_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_cwmp_area_geom', 'cwmp_area', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_cwmp_area_history', 'cwmp_area', ['plan_area_id', 'cwmp_area_id', 'valid_from'], unique=False, schema='core')
    op.create_table('declaration',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('declaration_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('kind', sa.Text(), nullable=False, comment='Declaration kind.'),
    sa.Column('recording_no', sa.Text(), nullable=True, comment='Recording number.'),
    sa.Column('recorded_on', sa.Date(), nullable=True, comment='Recording date.'),
    sa.Column('public_land_agreement', sa.Boolean(), nullable=True, comment='A written agreement on public land in place of a recorded declaration (6).'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('declaration_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_declaration_one_version'),
    sa.CheckConstraint("kind IN ('buffer', 'fertilizer_snow', 'buffer_restoration_3yr')", name=op.f('ck_declaration_kind_code')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_declaration_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_declaration_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_declaration_closed_batch_id')),
    sa.ForeignKeyConstraint(['declaration_id'], ['core.feature.feature_id'], name=op.f('fk_declaration_declaration_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_declaration_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_declaration_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_declaration')),
    schema='core',
    comment='Recorded declarations the rule requires.'
    )
    op.create_index('ix_declaration_current', 'declaration', ['declaration_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_declaration_history', 'declaration', ['plan_area_id', 'declaration_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_declaration_permit_id', 'declaration', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('delineation',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('delineation_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('delineation_no', sa.Text(), nullable=False, comment="District's delineation number."),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='Permit the delineation was submitted for, if any.'),
    sa.Column('consultant', sa.Text(), nullable=True, comment='Firm or person who delineated.'),
    sa.Column('field_on', sa.Date(), nullable=True, comment='Date of the field work.'),
    sa.Column('method', sa.Text(), nullable=True, comment='Delineation method (e.g. 1987 Corps Manual, Regional Supplement).'),
    sa.Column('file_name', sa.Text(), nullable=True, comment='Name of the delivered file.'),
    sa.Column('file_sha256', sa.Text(), nullable=True, comment='SHA-256 of the delivered file.'),
    sa.Column('status', sa.Text(), nullable=False, comment='Review status.'),
    sa.Column('submitted_on', sa.Date(), nullable=True, comment='Date the delineation was submitted.'),
    sa.Column('tep_reviewed_on', sa.Date(), nullable=True, comment='Date the Technical Evaluation Panel reviewed it.'),
    sa.Column('tep_findings', sa.Text(), nullable=True, comment='TEP findings and recommendations (3(e), 7(f)).'),
    sa.Column('approved_on', sa.Date(), nullable=True, comment='Date approved; approved delineations define wetland.'),
    sa.Column('rejected_on', sa.Date(), nullable=True, comment='Date rejected.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('delineation_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_delineation_one_version'),
    sa.CheckConstraint("status <> 'approved' OR approved_on IS NOT NULL", name=op.f('ck_delineation_approved_has_date')),
    sa.CheckConstraint("status <> 'rejected' OR rejected_on IS NOT NULL", name=op.f('ck_delineation_rejected_has_date')),
    sa.CheckConstraint("status IN ('submitted', 'tep_reviewed', 'approved', 'rejected')", name=op.f('ck_delineation_status_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_delineation_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_delineation_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_delineation_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_delineation_closed_batch_id')),
    sa.ForeignKeyConstraint(['delineation_id'], ['core.feature.feature_id'], name=op.f('fk_delineation_delineation_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_delineation_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_delineation_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_delineation')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('delineation', 'A wetland delineation: its study area, its provenance and its review status. A status change (TEP review, approval, rejection) is a new version.', schema='core')
    op.create_index('ix_delineation_current', 'delineation', ['delineation_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_delineation_geom', 'delineation', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_delineation_history', 'delineation', ['plan_area_id', 'delineation_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_delineation_permit_id', 'delineation', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('ditch',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('ditch_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('system_id', sa.Text(), nullable=True, comment="Public drainage system id, e.g. 'ACD 53-62'."),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='Permit whose on-site determination found it.'),
    sa.Column('determined_on', sa.Date(), nullable=True, comment='Date of the on-site determination (3(f)).'),
    sa.Column('determined_by', sa.Text(), nullable=True, comment='Who made the on-site determination.'),
    sa.Column('status', sa.Text(), nullable=False, comment='Drainage system status (9).'),
    sa.Column('geom', Geometry(geometry_type='MULTILINESTRING', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multilinestring in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('ditch_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_ditch_one_version'),
    sa.CheckConstraint("status IN ('active', 'partially_abandoned', 'abandoned')", name=op.f('ck_ditch_status_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_ditch_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_ditch_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_ditch_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_ditch_closed_batch_id')),
    sa.ForeignKeyConstraint(['ditch_id'], ['core.feature.feature_id'], name=op.f('fk_ditch_ditch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_ditch_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_ditch_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_ditch')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('ditch', 'Ditches found by the on-site determination; lines that connect wetland to the central complex.', schema='core')
    op.create_index('ix_ditch_current', 'ditch', ['ditch_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_ditch_geom', 'ditch', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_ditch_history', 'ditch', ['plan_area_id', 'ditch_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_ditch_permit_id', 'ditch', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('easement',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('easement_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='The permit this feature belongs to.'),
    sa.Column('grantor', sa.Text(), nullable=True, comment='Grantor.'),
    sa.Column('recording_no', sa.Text(), nullable=True, comment='Recording number.'),
    sa.Column('recorded_on', sa.Date(), nullable=True, comment='Recording date.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('easement_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_easement_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_easement_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_easement_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_easement_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_easement_closed_batch_id')),
    sa.ForeignKeyConstraint(['easement_id'], ['core.feature.feature_id'], name=op.f('fk_easement_easement_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_easement_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_easement_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_easement')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('easement', 'Recorded easements to the District.', schema='core')
    op.create_index('ix_easement_current', 'easement', ['easement_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_easement_geom', 'easement', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_easement_history', 'easement', ['plan_area_id', 'easement_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_easement_permit_id', 'easement', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('figure5_area',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('figure5_area_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('zone_name', sa.Text(), nullable=False, comment='Zone name as on Figure 5.'),
    sa.Column('planned_type', sa.Text(), nullable=True, comment='Planned wetland type (Circular 39).'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('figure5_area_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_figure5_area_one_version'),
    sa.CheckConstraint("planned_type IN ('1', '2', '3', '4', '5', '6', '7', '8')", name=op.f('ck_figure5_area_planned_type_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_figure5_area_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_figure5_area_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_figure5_area_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_figure5_area_closed_batch_id')),
    sa.ForeignKeyConstraint(['figure5_area_id'], ['core.feature.feature_id'], name=op.f('fk_figure5_area_figure5_area_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_figure5_area_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_figure5_area')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('figure5_area', 'Planned replacement zones of CWMP Map Figure 5.', schema='core')
    op.create_index('ix_figure5_area_current', 'figure5_area', ['figure5_area_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_figure5_area_geom', 'figure5_area', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_figure5_area_history', 'figure5_area', ['plan_area_id', 'figure5_area_id', 'valid_from'], unique=False, schema='core')
    op.create_table('functional_assessment',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('functional_assessment_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('wetland_id', sa.BigInteger(), nullable=False, comment='The assessed wetland.'),
    sa.Column('method', sa.Text(), nullable=False, comment="Method and version, e.g. 'MnRAM 3.4'."),
    sa.Column('assessed_on', sa.Date(), nullable=True, comment='Date of the assessment.'),
    sa.Column('ratings', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment='Per-function ratings, e.g. {"hydrology": "high"}.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('functional_assessment_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_functional_assessment_one_version'),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_functional_assessment_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_functional_assessment_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_functional_assessment_closed_batch_id')),
    sa.ForeignKeyConstraint(['functional_assessment_id'], ['core.feature.feature_id'], name=op.f('fk_functional_assessment_functional_assessment_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_functional_assessment_plan_area_id')),
    sa.ForeignKeyConstraint(['wetland_id'], ['core.feature.feature_id'], name=op.f('fk_functional_assessment_wetland_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_functional_assessment')),
    schema='core',
    comment='Functional assessment of a wetland (MnRAM or another approved method).'
    )
    op.create_index('ix_functional_assessment_current', 'functional_assessment', ['functional_assessment_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_functional_assessment_history', 'functional_assessment', ['plan_area_id', 'functional_assessment_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_functional_assessment_wetland_id', 'functional_assessment', ['wetland_id'], unique=False, schema='core')
    op.create_geospatial_table('grading',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('grading_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('alters_runoff_to_wetland', sa.Boolean(), nullable=False, comment='Changes the rate or volume of runoff into a CWMP wetland.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('grading_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_grading_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_grading_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_grading_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_grading_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_grading_closed_batch_id')),
    sa.ForeignKeyConstraint(['grading_id'], ['core.feature.feature_id'], name=op.f('fk_grading_grading_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_grading_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_grading_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_grading')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('grading', 'Grading with motorized equipment.', schema='core')
    op.create_index('ix_grading_current', 'grading', ['grading_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_grading_geom', 'grading', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_grading_history', 'grading', ['plan_area_id', 'grading_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_grading_permit_id', 'grading', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('heritage_area',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('heritage_area_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('rank', sa.Text(), nullable=False, comment='Natural Heritage rank.'),
    sa.Column('community_kind', sa.Text(), nullable=False, comment='Wetland or upland community.'),
    sa.Column('community_name', sa.Text(), nullable=True, comment='Community name.'),
    sa.Column('source_map', sa.Text(), nullable=True, comment="Source map, e.g. 'CWMP Map 1'."),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('heritage_area_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_heritage_area_one_version'),
    sa.CheckConstraint("community_kind IN ('wetland', 'upland')", name=op.f('ck_heritage_area_community_kind_code')),
    sa.CheckConstraint("rank IN ('A', 'AB', 'B', 'BC', 'C', 'CD', 'D', 'unranked')", name=op.f('ck_heritage_area_rank_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_heritage_area_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_heritage_area_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_heritage_area_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_heritage_area_closed_batch_id')),
    sa.ForeignKeyConstraint(['heritage_area_id'], ['core.feature.feature_id'], name=op.f('fk_heritage_area_heritage_area_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_heritage_area_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_heritage_area')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('heritage_area', 'Natural Heritage ranked plant communities (CWMP Map 1).', schema='core')
    op.create_index('ix_heritage_area_current', 'heritage_area', ['heritage_area_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_heritage_area_geom', 'heritage_area', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_heritage_area_history', 'heritage_area', ['plan_area_id', 'heritage_area_id', 'valid_from'], unique=False, schema='core')
    op.create_table('hydroperiod',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('hydroperiod_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('wetland_id', sa.BigInteger(), nullable=False, comment='Receiving wetland.'),
    sa.Column('existing_bounce_ft', sa.Numeric(), nullable=False, comment='Existing 10-year bounce, feet.'),
    sa.Column('proposed_bounce_ft', sa.Numeric(), nullable=False, comment='Proposed 10-year bounce, feet.'),
    sa.Column('existing_inundation_days', sa.Numeric(), nullable=False, comment='Existing inundation period, days.'),
    sa.Column('proposed_inundation_days', sa.Numeric(), nullable=False, comment='Proposed inundation period, days.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('hydroperiod_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_hydroperiod_one_version'),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_hydroperiod_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_hydroperiod_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_hydroperiod_closed_batch_id')),
    sa.ForeignKeyConstraint(['hydroperiod_id'], ['core.feature.feature_id'], name=op.f('fk_hydroperiod_hydroperiod_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_hydroperiod_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_hydroperiod_plan_area_id')),
    sa.ForeignKeyConstraint(['wetland_id'], ['core.feature.feature_id'], name=op.f('fk_hydroperiod_wetland_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_hydroperiod')),
    schema='core',
    comment='Modelled 10-year bounce and inundation period of a receiving wetland.'
    )
    op.create_index('ix_hydroperiod_current', 'hydroperiod', ['hydroperiod_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_hydroperiod_history', 'hydroperiod', ['plan_area_id', 'hydroperiod_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_hydroperiod_permit_id', 'hydroperiod', ['permit_id'], unique=False, schema='core')
    op.create_index('ix_hydroperiod_wetland_id', 'hydroperiod', ['wetland_id'], unique=False, schema='core')
    op.create_geospatial_table('impact',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('impact_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('kind', sa.Text(), nullable=False, comment='Kind of impact.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('impact_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_impact_one_version'),
    sa.CheckConstraint("kind IN ('fill', 'excavate', 'drain_full', 'drain_partial')", name=op.f('ck_impact_kind_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_impact_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_impact_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_impact_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_impact_closed_batch_id')),
    sa.ForeignKeyConstraint(['impact_id'], ['core.feature.feature_id'], name=op.f('fk_impact_impact_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_impact_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_impact_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_impact')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('impact', 'Wetland impacts: fill, excavation, full or partial drainage.', schema='core')
    op.create_index('ix_impact_current', 'impact', ['impact_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_impact_geom', 'impact', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_impact_history', 'impact', ['plan_area_id', 'impact_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_impact_permit_id', 'impact', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('impervious',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('impervious_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('condition', sa.Text(), nullable=False, comment='Existing or proposed.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('impervious_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_impervious_one_version'),
    sa.CheckConstraint("condition IN ('existing', 'proposed')", name=op.f('ck_impervious_condition_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_impervious_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_impervious_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_impervious_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_impervious_closed_batch_id')),
    sa.ForeignKeyConstraint(['impervious_id'], ['core.feature.feature_id'], name=op.f('fk_impervious_impervious_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_impervious_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_impervious_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_impervious')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('impervious', 'Impervious surface, existing or proposed.', schema='core')
    op.create_index('ix_impervious_current', 'impervious', ['impervious_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_impervious_geom', 'impervious', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_impervious_history', 'impervious', ['plan_area_id', 'impervious_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_impervious_permit_id', 'impervious', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('land_cover',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('land_cover_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('cover_class', sa.Text(), nullable=False, comment='TR-55 cover class (see core.tr55_cover).'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('land_cover_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_land_cover_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_land_cover_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_land_cover_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_land_cover_batch_id')),
    sa.ForeignKeyConstraint(['cover_class'], ['core.tr55_cover.cover_class'], name=op.f('fk_land_cover_cover_class')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_land_cover_closed_batch_id')),
    sa.ForeignKeyConstraint(['land_cover_id'], ['core.feature.feature_id'], name=op.f('fk_land_cover_land_cover_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_land_cover_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_land_cover_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_land_cover')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('land_cover', 'Proposed land cover (TR-55 cover classes).', schema='core')
    op.create_index('ix_land_cover_current', 'land_cover', ['land_cover_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_land_cover_geom', 'land_cover', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_land_cover_history', 'land_cover', ['plan_area_id', 'land_cover_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_land_cover_permit_id', 'land_cover', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('parcel',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('parcel_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('pin', sa.Text(), nullable=False, comment='County parcel identification number as delivered.'),
    sa.Column('pin_normalized', sa.Text(), nullable=False, comment='PIN with punctuation and spaces removed, upper case: the matching key.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('parcel_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_parcel_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_parcel_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_parcel_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_parcel_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_parcel_closed_batch_id')),
    sa.ForeignKeyConstraint(['parcel_id'], ['core.feature.feature_id'], name=op.f('fk_parcel_parcel_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_parcel_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_parcel')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('parcel', 'County tax parcels. A parcel refresh opens versions only for parcels that changed.', schema='core')
    op.create_index('ix_parcel_current', 'parcel', ['parcel_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_parcel_geom', 'parcel', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_parcel_history', 'parcel', ['plan_area_id', 'parcel_id', 'valid_from'], unique=False, schema='core')
    op.create_table('permit',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_no', sa.Text(), nullable=False, comment="Permit number, e.g. '24-017'."),
    sa.Column('applicant', sa.Text(), nullable=True, comment='Applicant.'),
    sa.Column('parcel_pins', postgresql.ARRAY(sa.Text()), nullable=True, comment='Normalized PINs of the parcels the permit covers.'),
    sa.Column('status', sa.Text(), nullable=False, comment='Permit status.'),
    sa.Column('applied_on', sa.Date(), nullable=True, comment='Application date.'),
    sa.Column('tep_on', sa.Date(), nullable=True, comment="Date of the TEP's findings (7(f))."),
    sa.Column('decided_on', sa.Date(), nullable=True, comment='Date of the permit decision.'),
    sa.Column('expires_on', sa.Date(), nullable=True, comment='Expiry date.'),
    sa.Column('baseline_on', sa.Date(), nullable=True, comment='Date whose wetland layer impacts and credit are measured against (default: decided_on, or today while undecided).'),
    sa.Column('description', sa.Text(), nullable=True, comment='What the project does.'),
    sa.Column('involves_subdivision', sa.Boolean(), nullable=True, comment='The project subdivides land.'),
    sa.Column('vegetation_plan_on', sa.Date(), nullable=True, comment='Date the buffer vegetation management plan was approved (6(d)).'),
    sa.Column('species_assessment_on', sa.Date(), nullable=True, comment='Date of a protected species assessment (3(d)).'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('permit_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_permit_one_version'),
    sa.CheckConstraint("permit_no ~ '^[0-9]{2}-[0-9]{3,4}$'", name=op.f('ck_permit_permit_no_check')),
    sa.CheckConstraint("status IN ('applied', 'under_review', 'approved', 'denied', 'withdrawn', 'expired')", name=op.f('ck_permit_status_code')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_permit_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_permit_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_permit_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_permit_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_permit_plan_area_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_permit')),
    schema='core',
    comment='Rule M permits and applications.'
    )
    op.create_index('ix_permit_current', 'permit', ['permit_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_permit_history', 'permit', ['plan_area_id', 'permit_id', 'valid_from'], unique=False, schema='core')
    op.create_geospatial_table('replacement',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('replacement_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='The permit this feature belongs to.'),
    sa.Column('district_project', sa.Text(), nullable=True, comment="District replacement project, when not a permit's."),
    sa.Column('component', sa.Text(), nullable=False, comment='Wetland (earns credit) or upland (does not, 7(c)(iv)).'),
    sa.Column('status', sa.Text(), nullable=False, comment='Construction status.'),
    sa.Column('status_on', sa.Date(), nullable=True, comment='Date the status was reached.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('replacement_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_replacement_one_version'),
    sa.CheckConstraint("component IN ('wetland', 'upland')", name=op.f('ck_replacement_component_code')),
    sa.CheckConstraint("status IN ('proposed', 'constructed', 'certified')", name=op.f('ck_replacement_status_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_replacement_geom_valid')),
    sa.CheckConstraint('permit_id IS NOT NULL OR district_project IS NOT NULL', name=op.f('ck_replacement_has_owner')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_replacement_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_replacement_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_replacement_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_replacement_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_replacement_plan_area_id')),
    sa.ForeignKeyConstraint(['replacement_id'], ['core.feature.feature_id'], name=op.f('fk_replacement_replacement_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_replacement')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('replacement', 'Replacement areas: new wetland (credit) and upland included in the replacement area.', schema='core')
    op.create_index('ix_replacement_current', 'replacement', ['replacement_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_replacement_geom', 'replacement', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_replacement_history', 'replacement', ['plan_area_id', 'replacement_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_replacement_permit_id', 'replacement', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('soil',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('soil_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('mukey', sa.Text(), nullable=True, comment='SSURGO map unit key.'),
    sa.Column('musym', sa.Text(), nullable=True, comment='Map unit symbol.'),
    sa.Column('hydrologic_soil_group', sa.Text(), nullable=False, comment='Hydrologic soil group.'),
    sa.Column('high_groundwater', sa.Boolean(), nullable=False, comment='High groundwater table (5(c)(iii)).'),
    sa.Column('contaminated', sa.Boolean(), nullable=False, comment='Soil contamination of particular concern.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('soil_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_soil_one_version'),
    sa.CheckConstraint("hydrologic_soil_group IN ('A', 'B', 'C', 'D', 'A/D', 'B/D', 'C/D')", name=op.f('ck_soil_hydrologic_soil_group_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_soil_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_soil_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_soil_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_soil_closed_batch_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_soil_plan_area_id')),
    sa.ForeignKeyConstraint(['soil_id'], ['core.feature.feature_id'], name=op.f('fk_soil_soil_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_soil')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('soil', 'Soil map units with hydrologic soil group.', schema='core')
    op.create_index('ix_soil_current', 'soil', ['soil_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_soil_geom', 'soil', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_soil_history', 'soil', ['plan_area_id', 'soil_id', 'valid_from'], unique=False, schema='core')
    op.create_geospatial_table('species_record',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('species_record_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=True, comment='The permit this feature belongs to.'),
    sa.Column('species', sa.Text(), nullable=False, comment='Species name.'),
    sa.Column('observed_on', sa.Date(), nullable=True, comment='Observation date.'),
    sa.Column('status', sa.Text(), nullable=True, comment='Legal status (endangered, threatened, special concern).'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('species_record_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_species_record_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_species_record_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_species_record_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_species_record_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_species_record_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_species_record_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_species_record_plan_area_id')),
    sa.ForeignKeyConstraint(['species_record_id'], ['core.feature.feature_id'], name=op.f('fk_species_record_species_record_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_species_record')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('species_record', 'Protected plant or animal species observations (restricted: not published).', schema='core')
    op.create_index('ix_species_record_current', 'species_record', ['species_record_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_species_record_geom', 'species_record', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_species_record_history', 'species_record', ['plan_area_id', 'species_record_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_species_record_permit_id', 'species_record', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('structure',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('structure_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('kind', sa.Text(), nullable=False, comment='Structure kind.'),
    sa.Column('variance_ref', sa.Text(), nullable=True, comment='Variance granted for a structure in wetland (7(g)).'),
    sa.Column('buffer_exception', sa.Text(), nullable=True, comment='6(f)(i)-(ii) exception on record.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('structure_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_structure_one_version'),
    sa.CheckConstraint("buffer_exception IN ('none', 'suspended_6fi', 'public_utility_6fii')", name=op.f('ck_structure_buffer_exception_code')),
    sa.CheckConstraint("kind IN ('road', 'utility', 'passive_recreation', 'education', 'other')", name=op.f('ck_structure_kind_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_structure_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_structure_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_structure_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_structure_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_structure_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_structure_plan_area_id')),
    sa.ForeignKeyConstraint(['structure_id'], ['core.feature.feature_id'], name=op.f('fk_structure_structure_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_structure')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('structure', 'Roads, utilities and other structures.', schema='core')
    op.create_index('ix_structure_current', 'structure', ['structure_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_structure_geom', 'structure', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_structure_history', 'structure', ['plan_area_id', 'structure_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_structure_permit_id', 'structure', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('subwatershed',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('subwatershed_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('name', sa.Text(), nullable=False, comment='Subwatershed name.'),
    sa.Column('receiving_wetland_id', sa.BigInteger(), nullable=True, comment='Receiving wetland.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('subwatershed_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_subwatershed_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_subwatershed_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_subwatershed_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_subwatershed_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_subwatershed_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_subwatershed_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_subwatershed_plan_area_id')),
    sa.ForeignKeyConstraint(['receiving_wetland_id'], ['core.feature.feature_id'], name=op.f('fk_subwatershed_receiving_wetland_id')),
    sa.ForeignKeyConstraint(['subwatershed_id'], ['core.feature.feature_id'], name=op.f('fk_subwatershed_subwatershed_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_subwatershed')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('subwatershed', "Subwatersheds of a permit's site, each draining to a receiving wetland.", schema='core')
    op.create_index('ix_subwatershed_current', 'subwatershed', ['subwatershed_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_subwatershed_geom', 'subwatershed', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_subwatershed_history', 'subwatershed', ['plan_area_id', 'subwatershed_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_subwatershed_permit_id', 'subwatershed', ['permit_id'], unique=False, schema='core')
    op.create_index('ix_subwatershed_receiving_wetland_id', 'subwatershed', ['receiving_wetland_id'], unique=False, schema='core')
    op.create_geospatial_table('trail',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('trail_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('permit_id', sa.BigInteger(), nullable=False, comment='The permit this feature belongs to.'),
    sa.Column('width_ft', sa.Numeric(), nullable=True, comment='Trail surface width, feet.'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('trail_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_trail_one_version'),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_trail_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_trail_valid_period')),
    sa.CheckConstraint('width_ft > 0', name=op.f('ck_trail_width_ft_check')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_trail_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_trail_closed_batch_id')),
    sa.ForeignKeyConstraint(['permit_id'], ['core.feature.feature_id'], name=op.f('fk_trail_permit_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_trail_plan_area_id')),
    sa.ForeignKeyConstraint(['trail_id'], ['core.feature.feature_id'], name=op.f('fk_trail_trail_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_trail')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('trail', 'Non-motorized trails enclosed by a buffer; they do not count toward buffer width.', schema='core')
    op.create_index('ix_trail_current', 'trail', ['trail_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_geospatial_index('ix_trail_geom', 'trail', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_trail_history', 'trail', ['plan_area_id', 'trail_id', 'valid_from'], unique=False, schema='core')
    op.create_index('ix_trail_permit_id', 'trail', ['permit_id'], unique=False, schema='core')
    op.create_geospatial_table('wetland',
    sa.Column('version_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Id of this version of the feature.'),
    sa.Column('wetland_id', sa.BigInteger(), nullable=False, comment='Stable feature id, the same in every version.'),
    sa.Column('plan_area_id', sa.Integer(), nullable=False, comment='Plan area.'),
    sa.Column('delineation_id', sa.BigInteger(), nullable=False, comment='The delineation that mapped it.'),
    sa.Column('circular39_type', sa.Text(), nullable=True, comment='Circular 39 wetland type (1 to 8); the type determination of 3(e).'),
    sa.Column('cowardin_code', sa.Text(), nullable=True, comment='Cowardin classification code (e.g. PEM1C).'),
    sa.Column('eggers_reed_community', sa.Text(), nullable=True, comment='Eggers & Reed plant community name.'),
    sa.Column('invasive_dominated', sa.Boolean(), nullable=True, comment='Dominated by invasive species.'),
    sa.Column('post_cwmp_type', sa.Text(), nullable=True, comment='Circular 39 type resulting from implementation of the CWMP; sets the susceptibility class (5(d)).'),
    sa.Column('susceptibility_class', sa.Text(), nullable=True, comment='Stormwater susceptibility class (5(d)).'),
    sa.Column('geom', Geometry(geometry_type='MULTIPOLYGON', srid=SRID, dimension=2, spatial_index=False, from_text='ST_GeomFromEWKT', name='geometry', nullable=False), nullable=False, comment='Geometry, multipolygon in the working CRS.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the source file.'),
    sa.Column('source_attributes', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment="The feature's original attributes as delivered."),
    sa.Column('batch_id', sa.BigInteger(), nullable=True, comment="Ingest batch that made this version (NULL: a user's edit)."),
    sa.Column('created_by', sa.Text(), server_default=sa.text('current_user'), nullable=False, comment='Database user that made this version.'),
    sa.Column('valid_from', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False, comment='Version valid from (inclusive).'),
    sa.Column('valid_to', sa.DateTime(timezone=True), nullable=True, comment='Version valid until (exclusive); NULL while current.'),
    sa.Column('closed_by', sa.Text(), nullable=True, comment='Database user that closed this version.'),
    sa.Column('closed_batch_id', sa.BigInteger(), nullable=True, comment='Ingest batch that closed this version.'),
    postgresql.ExcludeConstraint((sa.column('wetland_id'), '='), (sa.text('tstzrange(valid_from, valid_to)'), '&&'), deferrable=True, initially='DEFERRED', using='gist', name='ex_wetland_one_version'),
    sa.CheckConstraint("circular39_type IN ('1', '2', '3', '4', '5', '6', '7', '8')", name=op.f('ck_wetland_circular39_type_code')),
    sa.CheckConstraint("post_cwmp_type IN ('1', '2', '3', '4', '5', '6', '7', '8')", name=op.f('ck_wetland_post_cwmp_type_code')),
    sa.CheckConstraint("susceptibility_class IN ('high', 'moderate', 'slight', 'least')", name=op.f('ck_wetland_susceptibility_class_code')),
    sa.CheckConstraint('ST_IsValid(geom) AND NOT ST_IsEmpty(geom)', name=op.f('ck_wetland_geom_valid')),
    sa.CheckConstraint('valid_to IS NULL OR valid_to >= valid_from', name=op.f('ck_wetland_valid_period')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_wetland_batch_id')),
    sa.ForeignKeyConstraint(['closed_batch_id'], ['ops.batch.batch_id'], name=op.f('fk_wetland_closed_batch_id')),
    sa.ForeignKeyConstraint(['delineation_id'], ['core.feature.feature_id'], name=op.f('fk_wetland_delineation_id')),
    sa.ForeignKeyConstraint(['plan_area_id'], ['core.plan_area.plan_area_id'], name=op.f('fk_wetland_plan_area_id')),
    sa.ForeignKeyConstraint(['wetland_id'], ['core.feature.feature_id'], name=op.f('fk_wetland_wetland_id')),
    sa.PrimaryKeyConstraint('version_id', name=op.f('pk_wetland')),
    schema='core',
    )
    # geoalchemy2's create_geospatial_table drops the table comment: set it explicitly.
    op.create_table_comment('wetland', 'Delineated wetland polygons, each belonging to one delineation.', schema='core')
    op.create_index('ix_wetland_current', 'wetland', ['wetland_id'], unique=False, schema='core', postgresql_where=sa.text('valid_to IS NULL'))
    op.create_index('ix_wetland_delineation_id', 'wetland', ['delineation_id'], unique=False, schema='core')
    op.create_geospatial_index('ix_wetland_geom', 'wetland', ['geom'], unique=False, schema='core', postgresql_using='gist', postgresql_ops={})
    op.create_index('ix_wetland_history', 'wetland', ['plan_area_id', 'wetland_id', 'valid_from'], unique=False, schema='core')
    op.create_table('batch_note',
    sa.Column('batch_note_id', sa.BigInteger(), sa.Identity(always=False), nullable=False, comment='Note id.'),
    sa.Column('batch_id', sa.BigInteger(), nullable=False, comment='Batch.'),
    sa.Column('source_fid', sa.Text(), nullable=True, comment='Feature id in the file.'),
    sa.Column('kind', sa.Text(), nullable=False, comment='repaired, skipped, warning or error.'),
    sa.Column('field', sa.Text(), nullable=True, comment="Field or 'geometry'."),
    sa.Column('message', sa.Text(), nullable=False, comment='What and what to do about it.'),
    sa.Column('detail', postgresql.JSONB(astext_type=sa.Text()), nullable=True, comment='Measurements (e.g. area before and after).'),
    sa.CheckConstraint("kind IN ('repaired', 'skipped', 'warning', 'error', 'info')", name=op.f('ck_batch_note_kind_code')),
    sa.ForeignKeyConstraint(['batch_id'], ['ops.batch.batch_id'], name=op.f('fk_batch_note_batch_id')),
    sa.PrimaryKeyConstraint('batch_note_id', name=op.f('pk_batch_note')),
    schema='ops',
    comment='Per-feature notes of an ingest: repairs, skipped features, warnings.'
    )
    op.create_index('ix_batch_note_batch', 'batch_note', ['batch_id'], unique=False, schema='ops')
    op.execute(f"INSERT INTO ops.setting (key, value) VALUES ('srid', '{int(SRID)}')")


def downgrade() -> None:
    # The first revision owns every schema: dropping them removes the tables and whatever the
    # sql/ files defined on them. ops keeps Alembic's own version table.
    for schema in ("pub", "checks", "ledger", "staging", "core"):
        op.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    for table in ("batch_note", "batch", "sql_applied", "setting"):
        op.execute(f"DROP TABLE IF EXISTS ops.{table} CASCADE")
