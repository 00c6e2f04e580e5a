"""Ingest speed: the versioned layers' references are checked once per statement, not per row.

PostgreSQL checks a foreign key with one query per inserted row; a bulk ingest of 100,000
parcels spent 2.3 s of its 6.8 s INSERT there, and the registry insert 0.7 s more. The same
guarantees are kept by `sql/010_versioning.sql` (statement-level triggers over the inserted and
updated rows, and triggers that refuse deleting or renumbering a referenced feature, plan area
or batch); see docs/ingest.md. The foreign keys dropped here are those of every versioned
layer table (`core.<layer>`: its own `<layer>_id`, the references to other features,
`plan_area_id`, `batch_id`, `closed_batch_id`) and `core.feature.plan_area_id`; foreign keys to
reference tables (`core.tr55_cover`) stay. Also: an index on
`ledger.change_queue.processed_run_id` (ledger.finish_run counts a run's rows by it).

Revision ID: 0010
Revises: 0009 (renumbered by the lead: 0009 is the incremental check runs' revision, committed
first; keep this one after it)
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The foreign keys of the versioned tables (and core.feature) to the registry, the plan areas
# and the batches, read from the database (so that the revision does not depend on the layer
# catalogue of a later release).
_FKS = sa.text("""
    SELECT c.conname, t.relname AS table_name, a.attname AS column_name,
           rn.nspname || '.' || r.relname AS referenced
    FROM pg_constraint c
    JOIN pg_class t ON t.oid = c.conrelid
    JOIN pg_namespace tn ON tn.oid = t.relnamespace
    JOIN pg_class r ON r.oid = c.confrelid
    JOIN pg_namespace rn ON rn.oid = r.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
    WHERE c.contype = 'f' AND tn.nspname = 'core'
      AND rn.nspname || '.' || r.relname IN ('core.feature', 'core.plan_area', 'ops.batch')
      AND (t.relname = 'feature' OR EXISTS (
             SELECT 1 FROM pg_attribute v WHERE v.attrelid = t.oid AND v.attname = 'version_id'
               AND NOT v.attisdropped))
    ORDER BY t.relname, a.attname
""")

# What the downgrade puts back: per versioned table, every bigint column named *_id other than
# version_id and the batch columns references core.feature (the layer's own id and its
# references), plan_area_id core.plan_area, batch_id and closed_batch_id ops.batch.
_COLUMNS = sa.text("""
    SELECT c.table_name, c.column_name, c.data_type
    FROM information_schema.columns c
    WHERE c.table_schema = 'core' AND (c.column_name LIKE '%\\_id' OR c.table_name = 'feature')
      AND (c.table_name = 'feature' OR EXISTS (
             SELECT 1 FROM information_schema.columns v WHERE v.table_schema = 'core'
               AND v.table_name = c.table_name AND v.column_name = 'version_id'))
    ORDER BY c.table_name, c.ordinal_position
""")

QUEUE_COMMENT_BEFORE = ("Owners (permits, District projects) whose inputs changed, waiting for "
                        "recompute; rows are kept, marked processed, as the audit of why.")
QUEUE_COMMENT = ("Owners (permits, District projects) whose inputs changed, waiting for "
                 "recompute; processed rows are kept as the audit of why for "
                 "change_queue_retention_days (ops.setting, default 30), then purged by "
                 "ledger.finish_run.")


def upgrade() -> None:
    conn = op.get_bind()
    for fk in conn.execute(_FKS).all():
        op.drop_constraint(fk.conname, fk.table_name, schema="core", type_="foreignkey")
    op.create_index("ix_change_queue_processed_run_id", "change_queue", ["processed_run_id"],
                    unique=False, schema="ledger")
    op.create_table_comment("change_queue", QUEUE_COMMENT, existing_comment=QUEUE_COMMENT_BEFORE,
                            schema="ledger")


def downgrade() -> None:
    op.create_table_comment("change_queue", QUEUE_COMMENT_BEFORE, existing_comment=QUEUE_COMMENT,
                            schema="ledger")
    op.drop_index("ix_change_queue_processed_run_id", table_name="change_queue",
                  schema="ledger")
    conn = op.get_bind()
    for row in conn.execute(_COLUMNS).all():
        table, column = row.table_name, row.column_name
        if column == "plan_area_id":
            target = ("plan_area", "plan_area_id", "core")
        elif table == "feature":
            continue
        elif column in ("batch_id", "closed_batch_id"):
            target = ("batch", "batch_id", "ops")
        elif column != "version_id" and row.data_type == "bigint":
            target = ("feature", "feature_id", "core")
        else:
            continue
        op.create_foreign_key(f"fk_{table}_{column}", table, target[0], [column], [target[1]],
                              source_schema="core", referent_schema=target[2])
