"""`rulem-db finding list|ack|waive|reopen|note`: the findings staff review, by their ID (the
finding_id of pub.finding, the same from run to run, the one the map, the reports and
`rulem-db check` show).

    rulem-db finding list [--permit NO] [--state open|acknowledged|waived]
    rulem-db finding ack ID [--note TEXT]
    rulem-db finding waive ID --reference REF [--note TEXT]
    rulem-db finding reopen ID [--note TEXT]
    rulem-db finding note ID --note TEXT

Who reviewed is the database login the command connects as (--db or $RULEM_DATABASE_URL).
"""

from __future__ import annotations

import argparse

from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db.catalogue.tables_checks import NOTE_MAX, REFERENCE_MAX
from rulem_db.checks import review

NOTE_HELP = f"at most {NOTE_MAX:,} characters"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("finding", help="list and review findings (acknowledge, waive, note)",
                       description="List the current findings with their review state, and "
                                   "review one by its ID (finding_id, the ID the map and the "
                                   "reports show): acknowledge it, waive it under a variance "
                                   "or decision (Rule M 7(g)), re-open it, or add a note. "
                                   "Every change is kept with your login.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help="current findings with their review state")
    ls.add_argument("--permit", metavar="NO", help="this permit's findings only")
    ls.add_argument("--state", choices=review.REVIEW_STATES, help="this review state only")
    add_format_option(ls)
    ls.set_defaults(func=_list)

    ack = actions.add_parser("ack", help="acknowledge a finding: seen, it stands")
    ack.add_argument("id", type=int, metavar="ID", help="finding_id (rulem-db finding list)")
    ack.add_argument("--note", metavar="TEXT", help=f"why, or what happens next ({NOTE_HELP})")
    add_format_option(ack)
    ack.set_defaults(func=_review, state="acknowledged", reference=None)

    waive = actions.add_parser("waive", help="waive a finding under a variance or decision")
    waive.add_argument("id", type=int, metavar="ID", help="finding_id (rulem-db finding list)")
    waive.add_argument("--reference", metavar="REF", required=True,
                       help="the variance or decision it stands on, e.g. V-2024-03 (at most "
                            f"{REFERENCE_MAX} characters)")
    waive.add_argument("--note", metavar="TEXT", help=NOTE_HELP)
    add_format_option(waive)
    waive.set_defaults(func=_review, state="waived")

    reopen = actions.add_parser("reopen", help="re-open an acknowledged or waived finding "
                                               "(the review withdrawn)")
    reopen.add_argument("id", type=int, metavar="ID", help="finding_id (rulem-db finding list)")
    reopen.add_argument("--note", metavar="TEXT", help=f"why ({NOTE_HELP})")
    add_format_option(reopen)
    reopen.set_defaults(func=_review, state="open", reference=None)

    note = actions.add_parser("note", help="add a note to a finding (its state unchanged)")
    note.add_argument("id", type=int, metavar="ID", help="finding_id (rulem-db finding list)")
    note.add_argument("--note", metavar="TEXT", required=True, help=NOTE_HELP)
    add_format_option(note)
    note.set_defaults(func=_review, state=None, reference=None)


def _list(args: argparse.Namespace) -> int:
    rows = review.list_findings(config.database_url(args.db), permit_no=args.permit,
                                state=args.state)
    if not rows and args.format == "table":
        print("no findings")
        return 0
    emit(review.LIST_COLUMNS, [[r[c] for c in review.LIST_COLUMNS] for r in rows],
         args.format)
    return 0


def _review(args: argparse.Namespace) -> int:
    row = review.review(config.database_url(args.db), args.id, args.state,
                        reference=args.reference, note=args.note)
    emit(review.REVIEW_COLUMNS, [[row[c] for c in review.REVIEW_COLUMNS]], args.format)
    return 0
