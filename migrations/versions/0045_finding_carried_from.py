"""checks.finding.carried_from_id: the base run's row an incremental run's finding copies.

Why: an incremental check run copies the findings of every permit nothing touched from its
base run (checks.carry_over, sql/285), and the review step at the end of the run (sql/287)
then worked out every finding's identity again from its key: a window over all of the run's
findings and a text-key lookup per finding, 9 s of a state-size 1 % night spent on findings
that had not changed. The copy now names its source, and the review links it to the source's
identity after checking that the copy is the source's finding (the same check, permit, parcel,
feature, place, severity, measure and message); only the findings the run evaluated get keys.
No foreign key: the review checks the reference itself, like the run's other references
(revision 0028), and a wrong one only sends the run back to computing every key.

checks.finding_case.last_run_id now names the latest run that found the finding by evaluating
its permit: an incremental run that carries it over leaves it (rewriting every identity of the
plan area each night was 6 s at state size, for a night in which 1 % changed).

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-06
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0045"
down_revision: str | None = "0044"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("finding", sa.Column(
        "carried_from_id", sa.BigInteger(),
        comment="The base run's finding row this one copies (an incremental run carried the "
                "permit's results over, checks.carry_over); NULL when this run evaluated "
                "it."), schema="checks")
    op.alter_column("finding_case", "last_run_id", schema="checks", comment=LAST_RUN,
                    existing_type=sa.BigInteger(), existing_nullable=False)


LAST_RUN = ("Latest check run that found it by evaluating its permit, or resolved it (an "
            "incremental run that carries it over unchanged leaves it as it was).")


def downgrade() -> None:
    op.alter_column("finding_case", "last_run_id", schema="checks",
                    comment="Latest check run that found it or resolved it.",
                    existing_type=sa.BigInteger(), existing_nullable=False)
    op.drop_column("finding", "carried_from_id", schema="checks")
