"""Findings have a life: list the current findings with their review state, and review one
(acknowledge, waive with the variance or decision it stands on, re-open, add a note).

Why so little here: the rules are the database's (sql/287, checks.review_finding): what may
change, that a waiver needs its reference (Rule M 7(g)), that a state is set only on a current
finding, what an acknowledgement or waiver holds for, the length of a note, and who changed it
(the login, session_user) are held there for every client, the QGIS form (edit.finding) as
much as this. This module calls it, reads pub.finding back, and turns the database's refusal
into one line; it refuses an over-long text and an unknown permit before connecting to write.

A finding's ID is pub.finding.finding_id: the same from run to run, and the one the map, the
reports and `rulem-db check` show (docs/checks.md, "Finding review").
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db.catalogue.tables_checks import NOTE_MAX, REFERENCE_MAX
from rulem_db.checks import CheckError

# What staff set; resolved is the check run's.
REVIEW_STATES = ("open", "acknowledged", "waived")
LIST_COLUMNS = ("finding_id", "permit_no", "paragraph", "check_code", "severity",
                "review_state", "waiver_reference", "reviewed_by", "reviewed_at",
                "review_note", "message")
REVIEW_COLUMNS = ("finding_id", "permit_no", "paragraph", "check_code", "event",
                  "review_state", "waiver_reference", "note", "changed_by", "changed_at")


def list_findings(url: str, permit_no: str | None = None,
                  state: str | None = None) -> list[dict[str, Any]]:
    """Current findings (pub.finding) with their ID and review state, by permit and in the
    rule's order; optionally one permit's (a permit that does not exist is refused: an empty
    list would say it has no findings) or one state's."""
    if state is not None and state not in REVIEW_STATES:
        raise CheckError(f"unknown review state {state!r}: one of {', '.join(REVIEW_STATES)}")
    with dbmod.connect(url) as conn:
        if permit_no is not None and conn.execute(sa.text(
                "SELECT NOT EXISTS (SELECT 1 FROM pub.permit WHERE permit_no = :n)"),
                {"n": permit_no}).scalar_one():
            raise CheckError(f"no permit {permit_no!r} (permit numbers as in pub.permit, "
                             "e.g. 24-017)")
        rows = conn.execute(sa.text(
            f"SELECT {', '.join(LIST_COLUMNS)} FROM pub.finding "
            "WHERE (CAST(:n AS text) IS NULL OR permit_no = :n) "
            "AND (CAST(:s AS text) IS NULL OR review_state = :s) "
            "ORDER BY permit_no NULLS LAST, sort_order, finding_id"),
            {"n": permit_no, "s": state}).mappings().all()
    return [dict(r) for r in rows]


def _within_limits(finding: int, reference: str | None, note: str | None) -> None:
    """The database's limits (revision 0037), said before a 20 MB note travels to it."""
    for text, limit, what in ((note, NOTE_MAX, "a note"),
                              (reference, REFERENCE_MAX, "a waiver reference")):
        size = len(text.strip(" ")) if text is not None else 0  # as btrim counts
        if size > limit:
            raise CheckError(f"finding {finding}: {what} is at most {limit:,} characters "
                             f"(this one has {size:,})")


def review(url: str, finding: int, state: str | None, reference: str | None = None,
           note: str | None = None) -> dict[str, Any]:
    """Review finding `finding` (pub.finding.finding_id): state acknowledged, waived
    (reference required) or open (re-opened: the review withdrawn), or None for a note alone.
    Returns the change as pub.finding_review_history records it."""
    _within_limits(finding, reference, note)
    try:
        with dbmod.connect(url) as conn:
            review_id = conn.execute(sa.text(
                "SELECT checks.review_finding(:f, :s, :r, :n)"),
                {"f": finding, "s": state, "r": reference, "n": note}).scalar_one()
            row = conn.execute(sa.text(
                f"SELECT {', '.join(REVIEW_COLUMNS)} "
                "FROM pub.finding_review_history WHERE review_id = :v"),
                {"v": review_id}).mappings().one()
    except sa.exc.DBAPIError as exc:
        message = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
        raise CheckError(message) from exc
    return dict(row)
