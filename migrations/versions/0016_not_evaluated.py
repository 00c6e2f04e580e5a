"""checks.outcome: a fourth state, not_evaluated, for a check that applies but lacks an input.

Why: a subwatershed partly without land cover was sized as if that land gave no runoff, and
a permit that needs the 5(d) hydroperiod analysis but has none came out "not applicable";
both read as compliance. A check that cannot be evaluated now says so: an error finding
naming the missing input, and the outcome not_evaluated (never pass). Spec section 5.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-09
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint(op.f('ck_outcome_outcome_code'), 'outcome', schema='checks',
                       type_='check')
    op.create_check_constraint(
        op.f('ck_outcome_outcome_code'), 'outcome',
        "outcome IN ('pass', 'fail', 'not_evaluated', 'not_applicable')", schema='checks')
    op.alter_column('outcome', 'outcome', schema='checks',
                    comment='pass, fail, not_evaluated (an input the check needs is missing) '
                            'or not_applicable.',
                    existing_comment='pass, fail or not_applicable.')
    op.alter_column('outcome', 'finding_count', schema='checks',
                    comment='Cases that failed or could not be evaluated (findings).',
                    existing_comment='Cases that failed.')
    op.create_table_comment(
        'outcome', 'Outcome of every check for every permit of a run: pass, fail, not '
                   'evaluated or not applicable.',
        existing_comment='Outcome of every check for every permit of a run: pass, fail or not '
                         'applicable.', schema='checks')


def downgrade() -> None:
    op.execute("DELETE FROM checks.outcome WHERE outcome = 'not_evaluated'")
    op.drop_constraint(op.f('ck_outcome_outcome_code'), 'outcome', schema='checks',
                       type_='check')
    op.create_check_constraint(
        op.f('ck_outcome_outcome_code'), 'outcome',
        "outcome IN ('pass', 'fail', 'not_applicable')", schema='checks')
    op.alter_column('outcome', 'outcome', schema='checks',
                    comment='pass, fail or not_applicable.')
    op.alter_column('outcome', 'finding_count', schema='checks', comment='Cases that failed.')
    op.create_table_comment(
        'outcome', 'Outcome of every check for every permit of a run: pass, fail or not '
                   'applicable.', schema='checks')
