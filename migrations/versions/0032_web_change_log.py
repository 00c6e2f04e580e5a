"""web.table_change: which table of the database changed last, for truthful ETags.

Why: `rulem-db serve` answers 304 Not Modified when a collection's ETag has not changed, so
its ETag must change whenever anything the collection shows changes. The service's earlier
stamps (the newest layer write, ledger entry, check run, finding review) missed every other
source: a new nightly run left pub.reconciliation_run at 304. Here each write statement on a
table a published view reads records one row (a statement trigger, sql/961), and a
collection's ETag is made from the rows of the tables it reads, found in the database
catalogue (docs/publishing.md, "Web service"). The trigger keeps the table small: it deletes
the older rows of its table that no other transaction holds.

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-05
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
CREATE TABLE web.table_change (
  change_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
)""")
    op.execute("CREATE INDEX ix_table_change_source ON web.table_change (source, change_id)")
    op.execute("REVOKE ALL ON web.table_change FROM PUBLIC")
    op.execute("COMMENT ON TABLE web.table_change IS 'One row per recent write statement on "
               "a table the published views read (sql/961): rulem-db serve makes each "
               "collection''s ETag from the rows of its source tables.'")
    op.execute("COMMENT ON COLUMN web.table_change.change_id IS 'Grows with each write.'")
    op.execute("COMMENT ON COLUMN web.table_change.source IS 'The table written, "
               "schema.table.'")
    op.execute("COMMENT ON COLUMN web.table_change.changed_at IS 'When the statement ran.'")


def downgrade() -> None:
    # sql/961 puts triggers that write this table on other tables: drop them with it, and
    # forget that 961 was applied so that the next upgrade installs them again
    op.execute("DROP FUNCTION IF EXISTS web.note_change() CASCADE")
    op.execute("DROP TABLE IF EXISTS web.table_change")
    op.execute("DO $$ BEGIN IF to_regclass('ops.sql_applied') IS NOT NULL THEN "
               "DELETE FROM ops.sql_applied WHERE file_name >= '961'; END IF; END $$")
