"""checks.run_permit: the permits a check run covers and the run that holds their outcomes.

Why: an incremental check run (the nightly's, sql/285) copied every outcome of the permits
nothing touched from its base run: 1.1 million rows a night at state size, 9 s of a night in
which 1 % changed, and 1.3 GB a week that said nothing new. A run now writes outcomes only for
the permits it evaluates, and one row here per permit in its scope naming the run whose
outcomes stand for it (itself, or the run that last evaluated the permit): 20,000 rows at state
size. pub.permit_compliance and the review read the outcomes through it (checks.run_outcome).

Every existing run covered the permits it has outcomes for, and holds them itself (before this
revision every run wrote or copied its own), so the table is filled from checks.outcome. The
outcomes earlier runs copied stay: they are history, and nothing reads them twice.

Revision ID: 0046
Revises: 0045
Create Date: 2026-12-07
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0046"
down_revision: str | None = "0045"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_permit",
        sa.Column("run_id", sa.BigInteger(), nullable=False, comment="Check run."),
        sa.Column("permit_id", sa.BigInteger(), nullable=False,
                  comment="A permit the run covers (in its scope: evaluated or carried over)."),
        sa.Column("plan_area_id", sa.Integer(), nullable=False, comment="Plan area."),
        sa.Column("outcome_run_id", sa.BigInteger(), nullable=False,
                  comment="The run whose checks.outcome rows are this run's outcomes of the "
                          "permit: the run itself when it evaluated the permit, else the run "
                          "that last did (an incremental run carried them over)."),
        sa.CheckConstraint("outcome_run_id <= run_id",
                           name="ck_run_permit_outcome_run_not_later"),
        sa.ForeignKeyConstraint(["run_id"], ["checks.run.run_id"],
                                name="fk_run_permit_run_id"),
        sa.ForeignKeyConstraint(["outcome_run_id"], ["checks.run.run_id"],
                                name="fk_run_permit_outcome_run_id"),
        sa.PrimaryKeyConstraint("run_id", "permit_id", name="pk_run_permit"),
        schema="checks",
        comment="The permits each check run covers and which run holds each one's outcomes "
                "(checks.run_outcome reads a run's outcomes through it).",
    )
    op.execute("""
        INSERT INTO checks.run_permit (run_id, permit_id, plan_area_id, outcome_run_id)
        SELECT DISTINCT o.run_id, o.permit_id, o.plan_area_id, o.run_id FROM checks.outcome o
        ORDER BY 1, 2
    """)


def downgrade() -> None:
    # pub.permit_compliance (sql/290) goes with it; the functions that write and read it
    # (sql/280, 285, 287) are those files' again once forgotten: the next migrate applies
    # them and every file after them (rulem_db/catalogue/sqlfiles.py).
    op.execute("DROP TABLE checks.run_permit CASCADE")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name IN ('280_check_runner.sql', "
               "'285_check_incremental.sql', '287_finding_review.sql', '290_pub_checks.sql')")
