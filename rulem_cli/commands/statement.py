"""`rulem-db statement --year YYYY`: the annual ledger statement of a plan area.

Prints the statement (opening balance, impacts, required, credit by status, transfers,
reversals, adjustments, closing balance) and writes it as CSV and HTML, with a CSV of every
ledger entry behind it, into --out.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db import db as dbmod


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("statement",
                       help="annual ledger statement of a plan area (CSV and HTML)")
    p.add_argument("--year", type=int, required=True, help="calendar year, e.g. 2025")
    p.add_argument("--plan-area", default=None,
                   help="plan area code (default: the only one in the database)")
    p.add_argument("--tz", default="America/Chicago",
                   help="time zone in which the year runs (default: %(default)s)")
    p.add_argument("--out", type=Path, default=Path("reports"),
                   help="folder for the CSV and HTML files (default: ./reports)")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_db.reports.statement import line_label, read_statement, write_statement

    if not 1900 <= args.year <= 9999:
        raise ValueError(f"--year {args.year} is not a calendar year")
    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        code = dbmod.plan_area_code(conn, args.plan_area)
        statement = read_statement(conn, code, args.year, args.tz)
    files = write_statement(statement, args.out)
    columns = ("line", "debit_acres", "credit_acres", "memo_acres", "balance_acres",
               "entry_count")
    rows = [(line_label(statement, r), r["debit_acres"], r["credit_acres"], r["memo_acres"],
             r["balance_acres"], r["entry_count"]) for r in statement.lines]
    title = (f"Ledger statement {args.year}, plan area {code} (acres; balance = credit - debit)"
             if args.format == "table" else None)
    emit(columns, rows, args.format, title=title)
    if args.format == "table":
        print(f"\nwritten: {files.html}\n         {files.csv}\n         {files.entries_csv}")
    return 0
