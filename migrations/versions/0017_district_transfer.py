"""core.credit_transfer: a District replacement project may give credit (from_district_project).

Why: the District's own replacement (a project, not a permit) is how a plan-area replacement
regime works: permittees draw from it (docs/ledger.md). A transfer now names exactly one
giver, a permit or a District project; the surplus check applies to either (sql/130).

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('credit_transfer',
                  sa.Column('from_district_project', sa.Text(), nullable=True,
                            comment='District replacement project giving credit (NULL when a '
                                    'permit gives it).'),
                  schema='core')
    op.alter_column('credit_transfer', 'from_permit_id', existing_type=sa.BigInteger(),
                    nullable=True,
                    comment='Permit giving credit (NULL when a District project gives it).',
                    existing_comment='Permit giving credit.', schema='core')
    op.create_check_constraint(
        op.f('ck_credit_transfer_one_giver'), 'credit_transfer',
        '(from_permit_id IS NULL) <> (from_district_project IS NULL)', schema='core')
    op.create_table_comment(
        'credit_transfer',
        'Replacement credit moved from a permit or a District replacement project to a permit '
        '(area basis).', existing_comment='Replacement credit moved from one permit to another '
        '(area basis).', schema='core')


def downgrade() -> None:
    op.create_table_comment(
        'credit_transfer', 'Replacement credit moved from one permit to another (area basis).',
        schema='core')
    op.drop_constraint(op.f('ck_credit_transfer_one_giver'), 'credit_transfer', schema='core',
                       type_='check')
    op.alter_column('credit_transfer', 'from_permit_id', existing_type=sa.BigInteger(),
                    nullable=False, comment='Permit giving credit.', schema='core')
    # the published views over the column go with it; the migration step re-creates them
    op.execute('ALTER TABLE core.credit_transfer DROP COLUMN from_district_project CASCADE')
