"""checks.finding_occurrence: references checked per statement instead of by foreign keys.

Why: a check run links each of its findings to its identity (checks.finding_occurrence, the
review step, sql/287): 239,000 rows at state size every night, most of them findings an
incremental run carried over. The table's three foreign keys (finding, identity, run) checked
each row with its own query and locked the finding and the identity it named: 6.8 s for those
rows, against 1.1 s to write them without the keys. As for the outcomes and the findings
(revision 0028), a statement trigger (checks.occurrence_references, sql/281) checks the rows
a statement wrote with one join per reference, and more than the keys did: the finding must be
of the occurrence's run and the identity of the finding's plan area. What the keys also did,
keep a finding or an identity from being deleted while an occurrence names it, statement
triggers on checks.finding and checks.finding_case now do for every row: check results are a
record and are not deleted.

Revision ID: 0047
Revises: 0046
Create Date: 2026-12-07
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0047"
down_revision: str | None = "0046"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = (("fk_finding_occurrence_finding_id", "finding", ["finding_id"], ["finding_id"]),
        ("fk_finding_occurrence_finding_case_id", "finding_case", ["finding_case_id"],
         ["finding_case_id"]),
        ("fk_finding_occurrence_run_id", "run", ["run_id"], ["run_id"]))


def upgrade() -> None:
    for name, *_ in KEYS:
        op.drop_constraint(name, "finding_occurrence", schema="checks", type_="foreignkey")


def downgrade() -> None:
    # sql/281's triggers go with the keys' return; forgetting the file makes the next migrate
    # apply it (and every file after it) again (rulem_db/catalogue/sqlfiles.py)
    op.execute("DROP TRIGGER IF EXISTS occurrence_references ON checks.finding_occurrence")
    op.execute("DROP TRIGGER IF EXISTS occurrence_references_update "
               "ON checks.finding_occurrence")
    op.execute("DROP TRIGGER IF EXISTS finding_no_delete ON checks.finding")
    op.execute("DROP TRIGGER IF EXISTS finding_case_no_delete ON checks.finding_case")
    op.execute("DROP FUNCTION IF EXISTS checks.occurrence_references()")
    op.execute("DROP FUNCTION IF EXISTS checks.refuse_delete()")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name = '281_outcome_references.sql'")
    for name, table, local, remote in KEYS:
        op.create_foreign_key(name, "finding_occurrence", table, local, remote,
                              source_schema="checks", referent_schema="checks")
