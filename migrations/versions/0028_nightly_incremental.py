"""The proportional nightly (docs/checks.md, "Incremental runs"): check results' references checked per statement.

A check run records an outcome per permit and catalogue check (72,000 rows on the county);
its four foreign keys (run, plan area, permit, rule check) were checked one query per row and
key, about a second of each run; the six of its findings (run, plan area, permit, parcel,
feature, rule check) 0.4 s more. They are dropped here; the statement triggers of
sql/281_outcome_references.sql check the same references (and that an outcome's permit is a
permit of the run's plan area) in one set-based query each, as the layers' references are checked
(docs/design.md, "Feature keys and references"). Downgrade puts the foreign keys back (the
trigger, an SQL file, stays and checks the same rows again).

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-02
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# (name, columns, referred table, referred columns)
_OUTCOME_KEYS = (
    ("fk_outcome_run_id", ["run_id"], "run", "checks", ["run_id"]),
    ("fk_outcome_plan_area_id", ["plan_area_id"], "plan_area", "core", ["plan_area_id"]),
    ("fk_outcome_permit_id", ["permit_id"], "feature", "core", ["feature_id"]),
    ("fk_outcome_rule_check", ["paragraph", "check_code"], "rule_check", "checks",
     ["paragraph", "check_code"]),
)
_FINDING_KEYS = (
    ("fk_finding_run_id", ["run_id"], "run", "checks", ["run_id"]),
    ("fk_finding_plan_area_id", ["plan_area_id"], "plan_area", "core", ["plan_area_id"]),
    ("fk_finding_permit_id", ["permit_id"], "feature", "core", ["feature_id"]),
    ("fk_finding_parcel_id", ["parcel_id"], "feature", "core", ["feature_id"]),
    ("fk_finding_feature_id", ["feature_id"], "feature", "core", ["feature_id"]),
    ("fk_finding_rule_check", ["paragraph", "check_code"], "rule_check", "checks",
     ["paragraph", "check_code"]),
)
_KEYS = (("outcome", _OUTCOME_KEYS), ("finding", _FINDING_KEYS))


def upgrade() -> None:
    for source, keys in _KEYS:
        for name, _cols, _table, _schema, _ref in keys:
            op.drop_constraint(name, source, schema="checks", type_="foreignkey")


def downgrade() -> None:
    for source, keys in _KEYS:
        for name, cols, table, schema, ref in keys:
            op.create_foreign_key(name, source, table, cols, ref, source_schema="checks",
                                  referent_schema=schema)
