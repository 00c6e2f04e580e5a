"""Findings as a record: what a review was given for, and bounded review texts.

Why: an acknowledgement or a waiver holds for the finding as staff saw it. checks.finding_case
keeps the measured value, the check run and the versions of the inputs it was given for
(review_measure, review_run_id, review_inputs), so a later run that measures the finding
worse, or sees a new version of the feature at fault, re-opens it (sql/287, docs/checks.md
"Finding review"). And a review note or waiver reference is a line a clerk writes, not a
file: a 20 MB note made every page of pub.finding 40 MB. Notes are at most 4,000 characters
and waiver references 200 (checks.review_text_limits(), the same numbers); the database holds
them for every client (the CLI, edit.finding in QGIS, SQL).

Existing rows: a current note or reference over the limit in checks.finding_case is cut to
the limit, ending in an ellipsis (its full text stays in checks.finding_review, the history,
which is never changed); the history's own limit is checked for new rows only when an old row
exceeds it (NOT VALID), else validated.

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-05
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0037"
down_revision: str | None = "0036"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOTE_MAX = 4000
REFERENCE_MAX = 200

_MEASURE = ("The measured value the current acknowledgement or waiver was given for: a later "
            "run that measures the finding worse (by the check's worse direction, beyond the "
            "tolerance) re-opens it.")
_INPUTS = ("Versions of the inputs the current acknowledgement or waiver was given for "
           "({feature_id: version_id}: the feature at fault; for a finding without one, the "
           "permit, its features, its transfers and the parcel): a new version re-opens it.")
_RUN = "The check run whose finding was acknowledged or waived."


def _limit(column: str, limit: int) -> str:
    return f"{column} IS NULL OR char_length({column}) <= {limit}"


def upgrade() -> None:
    op.add_column("finding_case", sa.Column("review_measure", sa.Numeric(), comment=_MEASURE),
                  schema="checks")
    op.add_column("finding_case", sa.Column("review_inputs", JSONB(), comment=_INPUTS),
                  schema="checks")
    op.add_column("finding_case", sa.Column("review_run_id", sa.BigInteger(), comment=_RUN),
                  schema="checks")
    op.create_foreign_key(op.f("fk_finding_case_review_run_id"), "finding_case", "run",
                          ["review_run_id"], ["run_id"], source_schema="checks",
                          referent_schema="checks")
    # The current texts: cut to the limit (the history keeps them whole).
    op.execute(f"UPDATE checks.finding_case SET review_note = left(review_note, {NOTE_MAX - 1})"
               f" || '…' WHERE char_length(review_note) > {NOTE_MAX}")
    op.execute(f"UPDATE checks.finding_case SET waiver_reference = "
               f"left(waiver_reference, {REFERENCE_MAX - 1}) || '…' "
               f"WHERE char_length(waiver_reference) > {REFERENCE_MAX}")
    op.create_check_constraint(op.f("ck_finding_case_review_note_length"), "finding_case",
                               _limit("review_note", NOTE_MAX), schema="checks")
    op.create_check_constraint(op.f("ck_finding_case_waiver_reference_length"), "finding_case",
                               _limit("waiver_reference", REFERENCE_MAX), schema="checks")
    # The history is never changed: its limits hold for new rows, and for the old ones too
    # when none exceeds them.
    for name, column, limit in (("ck_finding_review_note_length", "note", NOTE_MAX),
                                ("ck_finding_review_waiver_reference_length",
                                 "waiver_reference", REFERENCE_MAX)):
        op.execute(f"ALTER TABLE checks.finding_review ADD CONSTRAINT {name} "
                   f"CHECK ({_limit(column, limit)}) NOT VALID")
        op.execute(f"""
            DO $$
            BEGIN
              IF NOT EXISTS (SELECT 1 FROM checks.finding_review
                             WHERE char_length({column}) > {limit}) THEN
                ALTER TABLE checks.finding_review VALIDATE CONSTRAINT {name};
              END IF;
            END $$""")


def downgrade() -> None:
    for name in ("ck_finding_review_waiver_reference_length", "ck_finding_review_note_length"):
        op.drop_constraint(op.f(name), "finding_review", schema="checks", type_="check")
    op.drop_constraint(op.f("ck_finding_case_waiver_reference_length"), "finding_case",
                       schema="checks", type_="check")
    op.drop_constraint(op.f("ck_finding_case_review_note_length"), "finding_case",
                       schema="checks", type_="check")
    op.drop_constraint(op.f("fk_finding_case_review_run_id"), "finding_case", schema="checks",
                       type_="foreignkey")
    # What reads the columns goes first; the migration step re-creates it from sql/.
    op.execute("DROP VIEW IF EXISTS edit.finding CASCADE")
    op.execute("DROP VIEW IF EXISTS pub.finding CASCADE")
    for column in ("review_run_id", "review_inputs", "review_measure"):
        op.drop_column("finding_case", column, schema="checks")
    op.execute("DELETE FROM ops.sql_applied WHERE file_name = '287_finding_review.sql'")
