"""A run's snapshots: references checked per statement instead of by foreign keys.

Why: a night's snapshot writes a row per finding the run saw (ops.run_finding: 240,000 at
state size, every night with change) and per parcel with a balance (ops.run_parcel_balance:
41,000). Their foreign keys (the run; the parcel's feature) checked each row with its own
query and lock: inserting a state's findings took 1.95 s with the key against 0.98 s without.
As for the check runs' rows (revisions 0028, 0047), the statement trigger that already
refuses rows of a run that is not running (ops.run_rows_while_running, sql/300) now also
refuses, with one join per reference, a row whose run does not exist or whose parcel is not a
parcel of core.feature. What the keys also did, keep a run or a feature from being deleted
while a snapshot names it, the tables' own triggers do for every row: ops.run and
core.feature refuse DELETE and TRUNCATE.

Revision ID: 0049
Revises: 0048
Create Date: 2026-12-07
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0049"
down_revision: str | None = "0048"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = (("fk_run_finding_run_id", "run_finding", "ops", "run", ["run_id"], ["run_id"]),
        ("fk_run_parcel_balance_run_id", "run_parcel_balance", "ops", "run", ["run_id"],
         ["run_id"]),
        ("fk_run_parcel_balance_parcel_id", "run_parcel_balance", "core", "feature",
         ["parcel_id"], ["feature_id"]))


def upgrade() -> None:
    for name, table, *_ in KEYS:
        op.drop_constraint(name, table, schema="ops", type_="foreignkey")


def downgrade() -> None:
    for name, table, schema, referent, local, remote in KEYS:
        op.create_foreign_key(name, table, referent, local, remote, source_schema="ops",
                              referent_schema=schema)
