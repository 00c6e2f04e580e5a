"""Findings have a life: list the current findings with their review state, and review one
(acknowledge, waive with the variance or decision it stands on, add a note).

Why so little here: the rules are the database's (sql/287, checks.review_finding): what may
change, that a waiver needs its reference (Rule M 7(g)), and who changed it (the login,
session_user) are held there for every client, the QGIS form (edit.finding) as much as this.
This module calls it and reads pub.finding back, and turns the database's refusal into one
line.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db.checks import CheckError

# What staff set; resolved is the check run's.
REVIEW_STATES = ("open", "acknowledged", "waived")
LIST_COLUMNS = ("finding_case_id", "permit_no", "paragraph", "check_code", "severity",
                "review_state", "waiver_reference", "reviewed_by", "reviewed_at",
                "review_note", "message")


def list_findings(url: str, permit_no: str | None = None,
                  state: str | None = None) -> list[dict[str, Any]]:
    """Current findings (pub.finding) with their identity and review state, by permit and in
    the rule's order; optionally one permit's or one state's."""
    if state is not None and state not in REVIEW_STATES:
        raise CheckError(f"unknown review state {state!r}: one of {', '.join(REVIEW_STATES)}")
    with dbmod.connect(url) as conn:
        rows = conn.execute(sa.text(
            f"SELECT {', '.join(LIST_COLUMNS)} FROM pub.finding "
            "WHERE (CAST(:n AS text) IS NULL OR permit_no = :n) "
            "AND (CAST(:s AS text) IS NULL OR review_state = :s) "
            "ORDER BY permit_no NULLS LAST, sort_order, finding_case_id"),
            {"n": permit_no, "s": state}).mappings().all()
    return [dict(r) for r in rows]


def review(url: str, finding: int, state: str | None, reference: str | None = None,
           note: str | None = None) -> dict[str, Any]:
    """Review finding `finding` (its finding_case_id): state acknowledged, waived (reference
    required) or open, or None for a note alone. Returns the finding's review as it now is
    (checks.finding_case through pub.finding_review_history's latest row)."""
    try:
        with dbmod.connect(url) as conn:
            review_id = conn.execute(sa.text(
                "SELECT checks.review_finding(:f, :s, :r, :n)"),
                {"f": finding, "s": state, "r": reference, "n": note}).scalar_one()
            row = conn.execute(sa.text(
                "SELECT finding_case_id, permit_no, paragraph, check_code, event, "
                "review_state, waiver_reference, note, changed_by, changed_at "
                "FROM pub.finding_review_history WHERE review_id = :v"),
                {"v": review_id}).mappings().one()
    except sa.exc.DBAPIError as exc:
        message = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise CheckError(message) from exc
    return dict(row)
