"""SQLAlchemy metadata for every table: what Alembic compares the database against.

Tables, constraints and indexes live here and in the migrations; functions, views and grants
live in the numbered files under `sql/`. The working CRS is a property of the database (chosen
at `rulem-db db init --srid`), so the metadata is built for a given SRID.

Every layer table follows one pattern (see `docs/design.md`):
- `version_id` is the row's own key; `<layer>_id` is the feature's stable id across versions,
  a foreign key to `core.feature`, the registry of natural keys;
- `valid_from` / `valid_to` bound the version in transaction time: a change closes the old
  version and opens a new one (triggers in `sql/010_versioning.sql`), nothing is deleted, and
  a unique constraint keeps one current version per feature;
- `batch_id`, `source_fid`, `source_attributes` record where the feature came from.

The layer tables' references (their own `<layer>_id` and the features they name to
`core.feature`, `plan_area_id` to `core.plan_area`, `batch_id` and `closed_batch_id` to
`ops.batch`) are not foreign keys: PostgreSQL checks those one query per row, which was a third
of a bulk ingest. `sql/010_versioning.sql` checks them once per statement instead, and refuses
deleting or renumbering what they reference (revision 0010, docs/ingest.md).
"""

from __future__ import annotations

from functools import lru_cache

import sqlalchemy as sa
from geoalchemy2 import Geometry
from sqlalchemy.dialects import postgresql as pg

from rulem_db.catalogue import layers
from rulem_db.catalogue.layers import Layer

SCHEMAS = ("ops", "core", "staging", "ledger", "checks", "pub")
DEFAULT_SRID = 26915

_KIND_TYPES: dict[str, sa.types.TypeEngine] = {
    "text": sa.Text(),
    "int": sa.Integer(),
    "numeric": sa.Numeric(),
    "bool": sa.Boolean(),
    "date": sa.Date(),
    "text[]": pg.ARRAY(sa.Text()),
    "jsonb": pg.JSONB(),
}

# Bookkeeping columns shared by every layer table; never part of a feature's content.
VERSION_COLUMNS = (
    "version_id", "valid_from", "valid_to", "batch_id", "created_by", "closed_by",
    "closed_batch_id",
)


def _sql_list(values: tuple[str, ...]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def _layer_catalogue_table(md: sa.MetaData) -> None:
    """ops.layer: the layer catalogue as the SQL files read it (written from layers.py by the
    migration step, rulem_db/catalogue/register.py)."""
    sa.Table(
        "layer", md,
        sa.Column("layer", sa.Text, primary_key=True, comment="Layer name: table core.<layer>."),
        sa.Column("position", sa.Integer, nullable=False,
                  comment="Order in the catalogue (rulem_db/catalogue/layers.py)."),
        sa.Column("rule", sa.Text, nullable=False, comment="Rule M paragraphs it serves."),
        sa.Column("doc", sa.Text, nullable=False, comment="What the layer holds."),
        sa.Column("geometry_type", sa.Text,
                  comment="MULTIPOLYGON, MULTILINESTRING or POINT; NULL: attributes only."),
        sa.Column("natural_key", sa.Text, nullable=False,
                  comment="Column whose value is the feature's natural key on ingest."),
        sa.Column("restricted", sa.Boolean, nullable=False,
                  comment="Readable only by rulem_restricted (schema restricted, not pub)."),
        sa.Column("owner_column", sa.Text,
                  comment="Reference column whose feature owns this layer's features."),
        sa.Column("ingest_scope", sa.Text, nullable=False,
                  comment="What a delivered file replaces: layer, owner (the file's owners' "
                          "features) or none (records)."),
        sa.Column("outside_plan_area", sa.Text,
                  comment="A feature outside the plan area: error or warning; NULL: not "
                          "looked at."),
        sa.Column("legend_group", sa.Text, comment="Legend group on maps (QGIS project)."),
        sa.Column("legend_position", sa.Integer,
                  comment="Position in its legend group, 1 = drawn on top."),
        sa.Column("editable", sa.Boolean, nullable=False, server_default=sa.false(),
                  comment="Staff edit its features by hand through a view of schema edit "
                          "(sql/950_edit_layers.sql)."),
        sa.Column("ledger_input", sa.Text,
                  comment="How the ledger reads it, and so its change-queue trigger "
                          "(sql/170): disturbance, replacement, place, permit, transfer, "
                          "plan; NULL: the ledger does not read it."),
        sa.Column("recheck", pg.JSONB,
                  comment="What an incremental check run evaluates again when it changes "
                          "(sql/285, checks.recheck_places): {\"everything\": true}, or "
                          "{\"site\", \"features\", \"near\"}; NULL: every permit near it."),
        sa.CheckConstraint("ingest_scope IN ('layer', 'owner', 'none')", name="scope_code"),
        sa.CheckConstraint("ledger_input IN ('disturbance', 'replacement', 'place', 'permit', "
                           "'transfer', 'plan')", name="ledger_input_code"),
        sa.CheckConstraint("outside_plan_area IN ('error', 'warning')", name="outside_code"),
        schema="ops",
        comment="The layer catalogue (rulem_db/catalogue/layers.py), written by every "
                "migration; the SQL files build versioning, views and grants from it.",
    )


def _ops_tables(md: sa.MetaData) -> None:
    sa.Table(
        "setting", md,
        sa.Column("key", sa.Text, primary_key=True, comment="Setting name."),
        sa.Column("value", sa.Text, nullable=False, comment="Setting value."),
        schema="ops",
        comment="Database-wide settings fixed at initialisation (e.g. the working SRID).",
    )
    sa.Table(
        "batch", md,
        sa.Column("batch_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Ingest batch id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area loaded into."),
        sa.Column("layer", sa.Text, nullable=False, comment="Layer loaded."),
        sa.Column("file_name", sa.Text, comment="Name of the file as delivered."),
        sa.Column("file_sha256", sa.Text, comment="SHA-256 of the file (re-ingest is a no-op)."),
        sa.Column("file_size", sa.BigInteger, comment="File size, bytes."),
        sa.Column("source_crs", sa.Text, comment="CRS of the file (or the one given)."),
        sa.Column("status", sa.Text, nullable=False, server_default="running",
                  comment="running, loaded, failed or duplicate."),
        sa.Column("feature_count", sa.Integer, comment="Features read from the file."),
        sa.Column("inserted_count", sa.Integer, comment="New features."),
        sa.Column("changed_count", sa.Integer, comment="Features that got a new version."),
        sa.Column("closed_count", sa.Integer, comment="Features no longer delivered, closed."),
        sa.Column("unchanged_count", sa.Integer, comment="Features delivered unchanged."),
        sa.Column("skipped_count", sa.Integer, comment="Bad features skipped on request."),
        sa.Column("repaired_count", sa.Integer, comment="Geometries repaired."),
        sa.Column("options", pg.JSONB, comment="Options of the ingest (mapping, CRS, ...)."),
        sa.Column("message", sa.Text, comment="Outcome in one line."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that ran the ingest."),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"), comment="Start time."),
        sa.Column("finished_at", sa.DateTime(timezone=True), comment="End time."),
        sa.Column("opened_xact", sa.BigInteger,
                  comment="Transaction (pg_current_xact_id) that opened the batch: the only "
                          "one that may attribute versions to it. Set by the database."),
        sa.CheckConstraint("status IN ('running', 'loaded', 'failed', 'duplicate')",
                           name="status_code"),
        sa.Index("ix_batch_sha256", "plan_area_id", "layer", "file_sha256"),
        schema="ops",
        comment="One row per ingested file: what, from where, by whom, with what outcome.",
    )
    sa.Table(
        "batch_note", md,
        sa.Column("batch_note_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Note id."),
        sa.Column("batch_id", sa.BigInteger, sa.ForeignKey("ops.batch.batch_id"),
                  nullable=False, comment="Batch."),
        sa.Column("source_fid", sa.Text, comment="Feature id in the file."),
        sa.Column("kind", sa.Text, nullable=False,
                  comment="repaired, skipped, warning or error."),
        sa.Column("field", sa.Text, comment="Field or 'geometry'."),
        sa.Column("message", sa.Text, nullable=False, comment="What and what to do about it."),
        sa.Column("detail", pg.JSONB, comment="Measurements (e.g. area before and after)."),
        sa.CheckConstraint("kind IN ('repaired', 'skipped', 'warning', 'error', 'info')",
                           name="kind_code"),
        sa.Index("ix_batch_note_batch", "batch_id"),
        schema="ops",
        comment="Per-feature notes of an ingest: repairs, skipped features, warnings.",
    )
    sa.Table(
        "ingest_row_hash", md,
        sa.Column("layer", sa.Text, nullable=False, comment="Layer of the feature."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("feature_id", sa.BigInteger, primary_key=True, autoincrement=False,
                  comment="Feature (core.feature)."),
        sa.Column("version_id", sa.BigInteger, nullable=False,
                  comment="The current version the row made (the hash counts while it is)."),
        sa.Column("row_hash", pg.BYTEA, nullable=False,
                  comment="The ingest's context (16 bytes: MD5 of its settings, plan boundary "
                          "and tolerance, sql/063), then the delivered row's digest (16 bytes: "
                          "XXH3-128, etl.row_digest)."),
        schema="ops",
        comment="Per feature of a layer-wide load, the hash of the delivered row behind its "
                "current version: a re-delivery sets aside rows delivered as before.",
    )
    sa.Table(
        "ingest_index_set_aside", md,
        sa.Column("xact", sa.BigInteger, primary_key=True, autoincrement=False,
                  comment="The transaction that set the index aside (pg_current_xact_id)."),
        sa.Column("layer", sa.Text, nullable=False, comment="Layer whose table the index is on."),
        sa.Column("index_name", sa.Text, primary_key=True,
                  comment="The index's name."),
        sa.Column("definition", sa.Text, nullable=False,
                  comment="Its CREATE INDEX statement (pg_get_indexdef)."),
        sa.Column("description", sa.Text, comment="Its comment, if any."),
        schema="ops",
        comment="Secondary indexes an ingest set aside for its bulk INSERT and must rebuild "
                "in the same transaction (sql/064).",
    )
    sa.Table(
        "sql_applied", md,
        sa.Column("file_name", sa.Text, primary_key=True, comment="File under sql/."),
        sa.Column("sha256", sa.Text, nullable=False, comment="Hash of the applied text."),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="When applied."),
        schema="ops",
        comment="Which version of each sql/ file the database runs.",
    )


def _core_reference_tables(md: sa.MetaData) -> None:
    sa.Table(
        "plan_area", md,
        sa.Column("plan_area_id", sa.Integer, sa.Identity(), primary_key=True,
                  comment="Plan area id."),
        sa.Column("code", sa.Text, nullable=False, unique=True,
                  comment="Short code, e.g. 'acd-53-62'."),
        sa.Column("name", sa.Text, nullable=False, comment="Plan name."),
        sa.Column("rule", sa.Text, nullable=False, server_default="Rule M",
                  comment="Governing rule."),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="When registered."),
        schema="core",
        comment="Plan areas (CWMP areas) held in this database; each has its own parameters.",
    )
    sa.Table(
        "feature", md,
        sa.Column("feature_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Stable feature id, the <layer>_id of every version."),
        sa.Column("layer", sa.Text, nullable=False, comment="Layer."),
        # not a foreign key: checked once per statement (sql/010_versioning.sql)
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
        sa.Column("feature_key", sa.Text, nullable=False,
                  comment="Natural key (PIN, permit number, source feature id, ...)."),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="First seen."),
        sa.UniqueConstraint("layer", "plan_area_id", "feature_key", name="uq_feature_key"),
        schema="core",
        comment="Registry of features by natural key: a feature keeps its id across versions.",
    )
    sa.Table(
        "parameter", md,
        sa.Column("parameter_id", sa.Integer, sa.Identity(), primary_key=True,
                  comment="Parameter row id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area."),
        sa.Column("name", sa.Text, nullable=False, comment="Parameter name."),
        sa.Column("value_num", sa.Numeric, comment="Numeric value."),
        sa.Column("value_text", sa.Text, comment="Text value."),
        sa.Column("unit", sa.Text, comment="Unit."),
        sa.Column("rule_ref", sa.Text, comment="Rule paragraph it comes from."),
        sa.Column("effective_on", sa.Date, nullable=False,
                  comment="Takes effect from this date; never rewrites earlier postings."),
        sa.Column("note", sa.Text, comment="Why this value (the spec's Choice notes)."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Who entered it."),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="When entered."),
        sa.UniqueConstraint("plan_area_id", "name", "effective_on", name="uq_parameter"),
        sa.CheckConstraint("(value_num IS NULL) <> (value_text IS NULL)", name="one_value"),
        schema="core",
        comment="Rule parameters (spec section 6) per plan area, with effective dates.",
    )
    sa.Table(
        "susceptibility_limit", md,
        sa.Column("susceptibility_limit_id", sa.Integer, sa.Identity(), primary_key=True,
                  comment="Row id."),
        sa.Column("plan_area_id", sa.Integer, sa.ForeignKey("core.plan_area.plan_area_id"),
                  nullable=False, comment="Plan area."),
        sa.Column("susceptibility_class", sa.Text, nullable=False, comment="Class."),
        sa.Column("max_bounce_increase_ft", sa.Numeric,
                  comment="Permitted increase in 10-year bounce, feet; NULL = no limit."),
        sa.Column("max_inundation_increase_days", sa.Numeric, nullable=False,
                  comment="Permitted increase in inundation period, days."),
        sa.Column("effective_on", sa.Date, nullable=False, comment="Effective from."),
        sa.UniqueConstraint("plan_area_id", "susceptibility_class", "effective_on",
                            name="uq_susceptibility_limit"),
        sa.CheckConstraint(
            "susceptibility_class IN ('high', 'moderate', 'slight', 'least')",
            name="class_code"),
        schema="core",
        comment="Rule M 5(d) table: permitted bounce and inundation increase by class.",
    )
    sa.Table(
        "heritage_rank", md,
        sa.Column("rank", sa.Text, primary_key=True, comment="Natural Heritage rank."),
        sa.Column("ordinal", sa.Integer, nullable=False, unique=True,
                  comment="Order, 1 = best (A)."),
        schema="core",
        comment="Natural Heritage rank order A > AB > B > BC > C > CD > D > unranked.",
    )
    sa.Table(
        "tr55_cover", md,
        sa.Column("cover_class", sa.Text, primary_key=True, comment="Cover class code."),
        sa.Column("description", sa.Text, nullable=False, comment="TR-55 Table 2-2a row."),
        sa.Column("cn_a", sa.Integer, nullable=False, comment="Curve number, soil group A."),
        sa.Column("cn_b", sa.Integer, nullable=False, comment="Curve number, soil group B."),
        sa.Column("cn_c", sa.Integer, nullable=False, comment="Curve number, soil group C."),
        sa.Column("cn_d", sa.Integer, nullable=False, comment="Curve number, soil group D."),
        schema="core",
        comment="TR-55 runoff curve numbers by cover class and hydrologic soil group.",
    )


def _layer_table(md: sa.MetaData, layer: Layer, srid: int) -> sa.Table:
    name = layer.name
    cols: list[sa.schema.SchemaItem] = [
        sa.Column("version_id", sa.BigInteger, sa.Identity(), primary_key=True,
                  comment="Id of this version of the feature."),
        # References without foreign keys: checked once per statement (module doc).
        sa.Column(layer.id_column, sa.BigInteger, nullable=False,
                  comment="Stable feature id, the same in every version."),
        sa.Column("plan_area_id", sa.Integer, nullable=False, comment="Plan area."),
    ]
    for c in layer.columns:
        if c.ref_layer:
            cols.append(sa.Column(c.name, sa.BigInteger, nullable=not c.required,
                                  comment=c.doc))
        else:
            fks = [sa.ForeignKey(c.references)] if c.references else []
            cols.append(sa.Column(c.name, _KIND_TYPES[c.kind], *fks, nullable=not c.required,
                                  comment=c.doc))
        if c.codes:
            cols.append(sa.CheckConstraint(f"{c.name} IN ({_sql_list(c.codes)})",
                                           name=f"{c.name}_code"))
        if c.check:
            cols.append(sa.CheckConstraint(c.check, name=f"{c.name}_check"))
    for check_name, expr in layer.extra_checks:
        cols.append(sa.CheckConstraint(expr, name=check_name))
    if layer.geometry:
        cols.append(sa.Column(
            "geom", Geometry(layer.geometry, srid=srid, spatial_index=False),
            nullable=False, comment=f"Geometry, {layer.geometry.lower()} in the working CRS."))
        cols.append(sa.CheckConstraint("ST_IsValid(geom) AND NOT ST_IsEmpty(geom)",
                                       name="geom_valid"))
        cols.append(sa.Index(f"ix_{name}_geom", "geom", postgresql_using="gist"))
    cols += [
        sa.Column("source_fid", sa.Text, comment="Feature id in the source file."),
        sa.Column("source_attributes", pg.JSONB,
                  comment="The feature's original attributes as delivered."),
        sa.Column("batch_id", sa.BigInteger,
                  comment="Ingest batch that made this version (NULL: a user's edit)."),
        sa.Column("created_by", sa.Text, nullable=False, server_default=sa.text("current_user"),
                  comment="Database user that made this version."),
        sa.Column("valid_from", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("now()"), comment="Version valid from (inclusive)."),
        sa.Column("valid_to", sa.DateTime(timezone=True),
                  comment="Version valid until (exclusive); NULL while current."),
        sa.Column("closed_by", sa.Text, comment="Database user that closed this version."),
        sa.Column("closed_batch_id", sa.BigInteger,
                  comment="Ingest batch that closed this version."),
        sa.CheckConstraint("valid_to IS NULL OR valid_to >= valid_from", name="valid_period"),
        # At most one current version per feature (NULLs not distinct: two open versions of
        # one feature collide), and closed versions never share a close time. Deferred, so the
        # versioning trigger may open the new version before the statement closes the old one.
        sa.UniqueConstraint(layer.id_column, "valid_to", name=f"uq_{name}_version",
                            postgresql_nulls_not_distinct=True, deferrable=True,
                            initially="DEFERRED"),
        # Versions opened since a time (the incremental checks, sql/285); a feature's versions
        # are found through the one-version constraint's index (revision 0011).
        sa.Index(f"ix_{name}_valid_from", "valid_from"),
    ]
    for c in layer.columns:
        if c.ref_layer:
            cols.append(sa.Index(f"ix_{name}_{c.name}", c.name))
    if layer.key != "source_fid":  # look-ups by natural key (PIN, permit number, ...)
        # Not partial on valid_to IS NULL: such an index would also match every "current
        # versions" scan and could win over the spatial index for the pub views' map queries.
        cols.append(sa.Index(f"ix_{name}_{layer.key}", "plan_area_id", layer.key))
    for suffix, expression in layer.lookup:
        key = expression if expression.isidentifier() else sa.text(expression)
        cols.append(sa.Index(f"ix_{name}_{suffix}", key))
    return sa.Table(name, md, *cols, schema="core", comment=layer.doc)


def build_metadata(srid: int = DEFAULT_SRID) -> sa.MetaData:
    """All tables for a database whose working CRS is EPSG:srid, for the layer catalogue as it
    stands (layers.LAYERS is read at call time: a test may add a layer)."""
    return _metadata(srid, layers.LAYERS)


@lru_cache(maxsize=4)
def _metadata(srid: int, catalogue: tuple[Layer, ...]) -> sa.MetaData:
    md = sa.MetaData(naming_convention={
        "pk": "pk_%(table_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "ck": "ck_%(table_name)s_%(constraint_name)s",
        "ix": "ix_%(table_name)s_%(column_0_name)s",
    })
    _core_reference_tables(md)
    _ops_tables(md)
    _layer_catalogue_table(md)
    for layer in catalogue:
        _layer_table(md, layer, srid)
    # Derived tables, each concern in its own module (and its own migration revision).
    from rulem_db.catalogue import (
        tables_checks,
        tables_ledger,
        tables_publish,
        tables_runs,
    )

    for module in (tables_ledger, tables_checks, tables_runs, tables_publish):
        module.define(md, srid)
    return md
