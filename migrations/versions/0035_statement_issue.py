"""The annual statements issued: ledger.statement_issue (closed years stay closed).

Why (docs/ledger.md 4b): once a year's statement is issued, the figures as of
any date in that year never change, and a fact recorded later shows only as a prior-period
adjustment in the next statement. The ledger is bitemporal already (each entry's effective
date and posting time, revision 0019); what it lacked is the record of the moment a year was
closed. `rulem-db statement --year Y --issue` writes one row here (who, when, the digest of
the figures issued), and from then on the as-of functions and the statement read the year as
recorded at that moment (sql/176, sql/180, sql/310; docs/ledger.md section 4b). Append-only:
the SQL file refuses updates, deletes and truncation.

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql as pg

revision: str = "0035"
down_revision: str | None = "0034"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "statement_issue",
        sa.Column("statement_issue_id", sa.BigInteger, sa.Identity(), nullable=False,
                  comment="Issue id."),
        sa.Column("plan_area_id", sa.Integer, nullable=False,
                  comment="Plan area whose statement was issued."),
        sa.Column("year", sa.Integer, nullable=False,
                  comment="Calendar year of effective dates the statement covers."),
        sa.Column("tz", sa.Text, nullable=False,
                  comment="Time zone the year ran in (its end splits the year's own lines "
                          "from its late postings)."),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False,
                  server_default=sa.text("clock_timestamp()"),
                  comment="When issued: the year (and every year before it) is read as "
                          "recorded at this moment from now on (docs/ledger.md 4b)."),
        sa.Column("issued_by", sa.Text, nullable=False, server_default=sa.text("session_user"),
                  comment="Login that issued it (session_user)."),
        sa.Column("digest", sa.Text, nullable=False,
                  comment="SHA-256 (hex) of the statement's lines as issued: figures and "
                          "entry ids (pub.ledger_statement_digest gives it as read now)."),
        sa.Column("closing_balance_acres", sa.Numeric(14, 4), nullable=False,
                  comment="Closing balance of the year as issued, published acres."),
        sa.Column("entry_count", sa.BigInteger, nullable=False,
                  comment="Entries the closing balance sums."),
        sa.Column("lines", pg.JSONB, nullable=False,
                  comment="The statement's lines as issued (pub.ledger_statement rows)."),
        sa.PrimaryKeyConstraint("statement_issue_id", name="pk_statement_issue"),
        sa.ForeignKeyConstraint(["plan_area_id"], ["core.plan_area.plan_area_id"],
                                name="fk_statement_issue_plan_area_id"),
        sa.UniqueConstraint("plan_area_id", "year", name="uq_statement_issue_year"),
        sa.CheckConstraint("year BETWEEN 1900 AND 9999", name="ck_statement_issue_year_range"),
        sa.CheckConstraint("digest ~ '^[0-9a-f]{64}$'", name="ck_statement_issue_digest_hex"),
        schema="ledger",
        comment="The annual ledger statements issued (rulem-db statement --issue), "
                "append-only: one per plan area and year, in year order.",
    )


def downgrade() -> None:
    # sql/176 (the closed-books guard and the issue) and the statement and as-of functions
    # that read the table go with it; forgetting sql/176's record makes the next migrate apply
    # it and every file after it again (rulem_db/catalogue/sqlfiles.py).
    op.execute("DROP TRIGGER IF EXISTS entry_closed_books ON ledger.entry")
    op.execute("DROP TABLE ledger.statement_issue CASCADE")
    op.execute("DROP FUNCTION IF EXISTS ledger.closed_at(integer, date) CASCADE")
    op.execute("DROP FUNCTION IF EXISTS ledger.entry_closed_books() CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name IN ('176_ledger_closed.sql', "
               "'180_ledger_balances.sql', '310_ledger_statement.sql')")
