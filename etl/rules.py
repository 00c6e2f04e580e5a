"""Rules beyond the catalogue's CHECKs: facts a new version must carry that a CHECK constraint
cannot say, checked per feature with the layer's CHECK rules (etl.describe) before
anything is merged, so a feature that breaks one is a line naming the file, the feature and the
field (and is skipped with --skip-bad-features like any other bad feature).

Why not CHECK constraints: they are the catalogue's (rulem_db/catalogue/layers.py, through
migrations) and bind every historical version too; these rules bind what is written from now
on, and ingest may look at the feature's current stored version when the file does not
deliver the field at all (a file that leaves a column out leaves the stored value as it is).

Every rule here holds in the database as well, for writers that are not ingest (the edit
views, a writer's own SQL): sql/014_write_rules.sql refuses the same in `stored_message`'s
words (docs/ingest.md, "Rules that hold in the database").

The one rule so far: an approved or expired permit needs its decision date (`decided_on`).
The ledger measures a permit against the wetland of its baseline date, `baseline_on`, else
`decided_on`, else *today* (docs/ledger.md, section 1): without a decision date an old,
approved fill is measured against today's wetland, where the wetland it filled is gone, and
can come out as 0 acres. A `baseline_on` does not replace it (the decision is a fact of the
permit; the baseline is an override).
"""

from __future__ import annotations

from dataclasses import dataclass

from etl.spec import CheckSpec


@dataclass(frozen=True)
class RequiredWhen:
    """Column `column` of layer `layer` must have a value when `condition` (SQL over the
    prepared feature, bare column names) holds."""

    layer: str
    name: str
    column: str
    condition: str
    condition_columns: tuple[str, ...]
    label: str  # the column in words ("decision date")
    what: str  # the feature, as the message says it ("the permit is approved or expired")
    why: str  # what goes wrong without the value


RULES: tuple[RequiredWhen, ...] = (
    RequiredWhen(
        "permit", "decided_when_approved", "decided_on",
        "status IN ('approved', 'expired')", ("status",), "decision date",
        "the permit is approved or expired",
        "without its decision date it is measured against today's wetland, not the "
        "wetland as of its decision (a baseline_on does not replace it)"),
)


def stored_message(rule: RequiredWhen) -> str:
    """The rule in the words the database refuses a write with (sql/014_write_rules.sql, held
    to this by tests/security/test_write_rules.py): ingest's words without the file's field."""
    return (f"{rule.what} but has no {rule.label} ({rule.column} is empty); {rule.why}; "
            f"give {rule.column} a value")


def checks(layer: str, delivered: dict[str, str | None], plan_area_id: int,
           likely: dict[str, str] | None = None) -> list[CheckSpec]:
    """The ingest rules of layer as ops.ingest_prepare's checks (each naming its field and
    saying its own message). delivered maps each delivered column to its field (None: a constant);
    likely maps an unmapped field of the file to the column it probably is (a hint)."""
    out = []
    for rule in RULES:
        if rule.layer != layer or not all(c in delivered for c in rule.condition_columns):
            continue
        col = rule.column
        if col in delivered:
            expr = f"NOT ({rule.condition}) OR {col} IS NOT NULL"
            src = delivered[col]
            missing = f"field {src} is empty" if src else "the value given is empty"
            fix = f"fill in {src}" if src else f"give {col} a value"
        else:
            # the file leaves the column out: the stored value stays, so it must exist
            expr = (f"NOT ({rule.condition}) OR EXISTS (SELECT 1 FROM core.feature f "
                    f"JOIN core.{layer} t ON t.{layer}_id = f.feature_id AND t.valid_to IS NULL "
                    f"WHERE f.layer = '{layer}' AND f.plan_area_id = {int(plan_area_id)} "
                    f"AND f.feature_key = p._key AND t.{col} IS NOT NULL)")
            missing = f"the file has no {col} field (and none is stored)"
            hint = next((f for f, c in (likely or {}).items() if c == col), None)
            fix = (f"the file's field {hint} looks like it: map it with [fields] {col} = "
                   f"\"{hint}\"" if hint else
                   f"deliver a {col} field, or map the file's field for it in a mapping file "
                   f"([fields] {col} = \"<field>\")")
        message = f"{rule.what} but has no {rule.label} ({missing}); {rule.why}; {fix}"
        out.append(CheckSpec(rule.name, expr, field=col, message=message))
    return out
