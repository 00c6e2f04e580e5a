"""Why a balance is what it is: the rows of pub.balance_explain for one parcel or permit.

Why here and not in the CLI: the web panel and the permit decision document read the same
rows (sql/312_ledger_explain.sql computes them; docs/ledger.md section 5), so the one
reading lives beside the ledger's other readers (`rulem_db.ledger.balances`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from rulem_db.ledger import recorded_at_sql

# pub.balance_explain's columns, in order (the published contract, docs/ledger.md section 5).
EXPLAIN_COLUMNS = (
    "level", "parcel_id", "pin", "permit_id", "permit_no", "district_project", "plan_area_id",
    "row_kind", "measure", "entry_kind", "acres", "acres_exact", "balance_effect_acres",
    "effective_on", "entry_id", "posted_at", "posted_by", "run_id", "reason", "feature_keys",
    "wetland_keys", "source_batch_ids", "source_files", "loaded_by", "sources", "finding_id",
    "check_code", "paragraph", "severity", "finding_message", "measured_value", "unit",
    "review_state",
)

# The published figure each measure adds to (credit_acres: credit + transfer_in - transfer_out).
FIGURE_OF_MEASURE = {
    "impact": "impact_acres", "required": "required_acres", "credit": "credit_acres",
    "transfer_in": "credit_acres", "transfer_out": "credit_acres",
    "credit_proposed": "credit_proposed_acres", "credit_constructed": "credit_constructed_acres",
    "credit_hosted": "credit_hosted_acres",
}


def explain(conn: sa.Connection, level: str, key: str, as_of: str | None = None,
            recorded_at: str | None = None, restated: bool = False) -> list[dict[str, Any]]:
    """The rows explaining one parcel (level 'parcel', key a PIN in any punctuation) or one
    permit (level 'permit', key its number), read as `rulem_db.ledger.balances` reads the
    figures (as of a date, as recorded at an instant, restated)."""
    if level not in ("parcel", "permit"):
        raise ValueError(f"only a parcel or a permit is explained, not {level!r}")
    at = recorded_at_sql(recorded_at)
    sql = (f"SELECT {', '.join(EXPLAIN_COLUMNS)} FROM pub.balance_explain("
           f"p_{level} => :key, p_as_of => CAST(:as_of AS date), p_recorded_at => {at}, "
           "p_restated => :restated)")
    params = {"key": key, "as_of": as_of, "recorded_at": recorded_at or "infinity",
              "restated": restated}
    return [dict(r) for r in conn.execute(sa.text(sql), params).mappings().all()]
