"""`rulem-db statement --year YYYY [--issue | --restated]`: the annual ledger statement of a
plan area.

Prints the statement (opening balance, prior-period adjustments, impacts, required, credit by
status, transfers, reversals, late postings, closing balance) and writes it as CSV and HTML,
with a CSV of every ledger entry behind it, into --out. --issue first records that the year's
statement is issued (who, when, the digest of its figures): from then on the year reads as
issued, and facts recorded later are prior-period adjustments of the next year. --restated
shows an issued year as now known (docs/ledger.md section 4b, docs/operations.md section 5).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import sqlalchemy as sa

from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db import db as dbmod


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("statement",
                       help="annual ledger statement of a plan area (CSV and HTML)")
    p.add_argument("--year", type=int, required=True, help="calendar year, e.g. 2025")
    p.add_argument("--plan-area", default=None,
                   help="plan area code (default: the only one in the database)")
    p.add_argument("--tz", default=None,
                   help="time zone in which the year runs (default: the one an issued year "
                        "was issued in, else America/Chicago)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--issue", action="store_true",
                      help="issue the year's statement: record who, when and the digest of its "
                           "figures; the year's figures never change afterwards (needs a "
                           "writer login, rulem_etl)")
    mode.add_argument("--restated", action="store_true",
                      help="an issued year as now known (facts recorded after its issue "
                           "included); files named ...-restated")
    p.add_argument("--out", type=Path, default=Path("reports"),
                   help="folder for the CSV and HTML files (default: ./reports)")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_db.reports.statement import (
        issue_note,
        issue_statement,
        line_label,
        read_statement,
        write_statement,
    )

    if not 1900 <= args.year <= 9998:
        raise ValueError(f"--year {args.year} is not a calendar year")
    url = config.database_url(args.db)
    if args.issue:
        with dbmod.connect(url) as conn:
            code = dbmod.plan_area_code(conn, args.plan_area)
            try:
                issue_statement(conn, code, args.year, args.tz)
            except sa.exc.DBAPIError as exc:
                raise ValueError(_db_message(exc)) from None
    with dbmod.connect(url) as conn:
        code = dbmod.plan_area_code(conn, args.plan_area)
        try:
            statement = read_statement(conn, code, args.year, args.tz, args.restated)
        except sa.exc.DBAPIError as exc:
            raise ValueError(_db_message(exc)) from None
    files = write_statement(statement, args.out)
    columns = ("line", "debit_acres", "credit_acres", "memo_acres", "balance_acres",
               "entry_count")
    rows = [(line_label(statement, r), r["debit_acres"], r["credit_acres"], r["memo_acres"],
             r["balance_acres"], r["entry_count"]) for r in statement.lines]
    title = (f"Ledger statement {args.year}, plan area {code} (acres; balance = credit - debit)"
             if args.format == "table" else None)
    emit(columns, rows, args.format, title=title)
    if args.format == "table":
        print(f"\n{issue_note(statement)}")
        print(f"\nwritten: {files.html}\n         {files.csv}\n         {files.entries_csv}")
    if statement.verified is False and not statement.restated:
        raise RuntimeError(f"the {args.year} statement of {code} reads differently from what "
                           f"was issued (digest now {statement.issue['digest_now']}, issued "
                           f"{statement.issue['digest']}): the ledger was changed outside "
                           "rulem-db")
    return 0


def _db_message(exc: sa.exc.DBAPIError) -> str:
    """The database's refusal in one line (its message and hint), or what a login without
    the writer's rights needs."""
    orig = exc.orig
    text = str(getattr(orig, "pgerror", None) or orig).strip()
    first = text.splitlines()[0].removeprefix("ERROR:").strip() if text else str(exc)
    if "permission denied" in first:
        return ("issuing a statement writes the ledger's record: it needs a writer login "
                f"(a member of rulem_etl); {first}")
    diag = getattr(orig, "diag", None)
    hint = getattr(diag, "message_hint", None)
    return first + (f" ({hint})" if hint else "")
