"""`rulem-db recompute [--all]`: bring the ledger up to date with the layers and say what was
posted (rulem_db.ledger.recompute does the work; the SQL functions compute everything)."""

from __future__ import annotations

import argparse

from rulem_cli.output import add_format_option, emit
from rulem_db import config, ledger

MAX_LINES = 200  # a first full recompute posts thousands of lines: show a readable head


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "recompute",
        help="post to the ledger what changed in the layers (reversal + new entry per change)")
    p.add_argument("--all", action="store_true",
                   help="recompute every permit and District project, not only what the "
                        "change queue holds")
    p.add_argument("--workers", type=int, default=ledger.DEFAULT_WORKERS,
                   help="connections draining the queue at once (default: %(default)s)")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise ValueError("--workers must be 1 or more")
    url = config.database_url(args.db)
    summary = ledger.recompute(url, all=args.all, workers=args.workers, with_posted=True)
    columns = ("owner", "pin", "measure", "before_acres", "after_acres")
    rows = [tuple(r[c] for c in columns) for r in summary.posted]
    if args.format != "table":
        emit(columns, rows, args.format)
        return 0
    print(summary)
    if rows:
        emit(columns, rows[:MAX_LINES], "table",
             title="Lines changed (owner = permit or District project; no PIN = no parcel):")
        if len(rows) > MAX_LINES:
            print(f"... and {len(rows) - MAX_LINES} more lines: "
                  f"SELECT * FROM pub.ledger_entry WHERE run_id = {summary.run_id}")
    return 0
