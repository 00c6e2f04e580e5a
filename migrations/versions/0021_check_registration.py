"""checks.rule_check: each check registers itself (evaluating function, defining file, retired).

Why: the catalogue was filled in one place (sql/200) and the runner (sql/280) called a
hand-kept UNION of the check functions, so a new check was three edits in three files that
nothing held together. Now each check file (sql/210-279) upserts its own catalogue rows,
naming the function that evaluates them (`evaluated_by`) and itself (`defined_in`); the runner
calls every function the current rows name. A row its file no longer registers, or whose
function is gone, is retired (`retired_at`), never deleted: the findings and outcomes of past
runs reference it. `district_cases` says which checks also evaluate cases without a permit
(District projects, the plan area's balance), which an incremental run re-evaluates on their
own; `not_applicable_when` is the text docs/checks.md's generated table of checks shows.

The new columns are filled by the SQL files, which the migration step applies right after
this revision (their hashes changed); a row no file registers is retired by sql/280.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-12
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('rule_check', sa.Column(
        'evaluated_by', sa.Text(), nullable=True,
        comment="Function that evaluates the check (schema.name), called as "
                "f(plan_area_id integer, permit_id bigint) and returning checks.evaluation "
                "rows; the runner calls every function a current row names. NULL: no SQL "
                "file ever registered the row (before revision 0021)."), schema='checks')
    op.add_column('rule_check', sa.Column(
        'defined_in', sa.Text(), nullable=True,
        comment="SQL file that registers the check beside its function, e.g. "
                "250_check_buffer_width.sql."), schema='checks')
    op.add_column('rule_check', sa.Column(
        'district_cases', sa.Boolean(), server_default=sa.text('false'), nullable=False,
        comment="The check also evaluates cases of no permit (District projects, the plan "
                "area as a whole): a run that re-evaluates those calls its function "
                "plan-wide."), schema='checks')
    op.add_column('rule_check', sa.Column(
        'not_applicable_when', sa.Text(), nullable=True,
        comment="When a permit has nothing to check (outcome not_applicable)."),
        schema='checks')
    op.add_column('rule_check', sa.Column(
        'registered_at', sa.DateTime(timezone=True), server_default=sa.text('now()'),
        nullable=True,
        comment="When a migration last registered it (the transaction that applied its "
                "file)."), schema='checks')
    op.add_column('rule_check', sa.Column(
        'retired_at', sa.DateTime(timezone=True), nullable=True,
        comment="When its file stopped registering it or its function was gone; NULL: "
                "current. A retired check is not run and gets no outcome; the row stays, "
                "for the findings and outcomes of past runs."), schema='checks')
    op.create_table_comment(
        'rule_check', 'Catalogue of the Rule M checks: each row registered by the SQL file '
                      'that defines its function (sql/210-279).',
        existing_comment='Catalogue of the Rule M checks (seeded by '
                         'sql/200_check_catalogue.sql).', schema='checks')


def downgrade() -> None:
    # The functions that read the columns go first; the migration step of the older code
    # creates them again from its SQL files (their hashes forgotten: applied again).
    op.execute("DROP VIEW IF EXISTS checks.registration CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.register_check() CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.current_checks() CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.evaluation_query(boolean) CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.finish_registration(text) CASCADE")
    op.execute("DROP FUNCTION IF EXISTS checks.evaluator(text) CASCADE")
    for column in ('retired_at', 'registered_at', 'not_applicable_when', 'district_cases',
                   'defined_in', 'evaluated_by'):
        op.drop_column('rule_check', column, schema='checks')
    op.create_table_comment(
        'rule_check', 'Catalogue of the Rule M checks (seeded by sql/200_check_catalogue.sql).',
        existing_comment='Catalogue of the Rule M checks: each row registered by the SQL file '
                         'that defines its function (sql/210-279).', schema='checks')
    # sql/200 forgotten: it and every file after it (the checks, the runner) are applied again
    op.execute("DELETE FROM ops.sql_applied WHERE file_name = '200_check_catalogue.sql'")
