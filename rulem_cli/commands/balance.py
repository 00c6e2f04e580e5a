"""`rulem-db balance [--parcel PIN | --permit NO | --parcels | --permits] [--as-of DATE]
[--recorded-at INSTANT]`: the 1:1 replacement balance from the ledger (pub.plan_balance,
pub.parcel_balance, pub.permit_balance, or their _as_of(date, recorded_at) functions).

--as-of goes by the date each entry's fact took effect (a permit's decision, a credit's
status, a transfer); --recorded-at by when the book recorded it (default now): "as of
2024-12-31 as recorded at 2026-12-01" is what the book said on 2026-12-01 about the end of
2024 (docs/ledger.md section 4a)."""

from __future__ import annotations

import argparse
import datetime as dt

from rulem_cli.output import add_format_option, emit
from rulem_db import config, ledger
from rulem_db import db as dbmod


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("balance",
                       help="1:1 replacement balance of the plan area, a parcel or a permit")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--parcel", metavar="PIN", help="one parcel, by PIN (any punctuation)")
    which.add_argument("--permit", metavar="NO", help="one permit, by number (e.g. 24-017)")
    which.add_argument("--parcels", action="store_true",
                       help="every parcel that owes or holds credit")
    which.add_argument("--permits", action="store_true", help="every permit")
    p.add_argument("--as-of", metavar="DATE", type=_date,
                   help="what had taken effect by the end of DATE (YYYY-MM-DD): permits "
                        "decided, credit certified, transfers made by then")
    p.add_argument("--recorded-at", metavar="INSTANT", type=_instant,
                   help="as the book stood at INSTANT (YYYY-MM-DD[THH:MM[:SS]][+HH:MM]; a "
                        "date alone: its end, in the database's time zone); default now")
    add_format_option(p)
    p.set_defaults(func=run)


def _date(value: str) -> str:
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def _instant(value: str) -> str:
    try:
        if len(value) == 10:   # a date alone: by the end of that date (ledger.balances)
            return dt.date.fromisoformat(value).isoformat()
        return dt.datetime.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a date or date and time (YYYY-MM-DD[THH:MM]): {value!r}") from None


def run(args: argparse.Namespace) -> int:
    if args.parcel or args.parcels:
        level, key = "parcel", args.parcel
    elif args.permit or args.permits:
        level, key = "permit", args.permit
    else:
        level, key = "plan", None
    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        rows = ledger.balances(conn, level, key, as_of=args.as_of, only_active=args.parcels,
                               recorded_at=args.recorded_at)
    if key is not None and not rows:
        what = "parcel with PIN" if level == "parcel" else "permit"
        when = _when(args)
        raise LookupError(f"no {what} {key}{when}: check the number (rulem-db balance "
                          f"--{level}s lists them)")
    columns = ledger.BALANCE_COLUMNS[level]
    title = None
    if args.format == "table":
        title = f"{level} balance{_when(args)}:"
    emit(columns, [tuple(r[c] for c in columns) for r in rows], args.format, title=title)
    return 0


def _when(args: argparse.Namespace) -> str:
    return ((f" as of {args.as_of}" if args.as_of else "")
            + (f" as recorded at {args.recorded_at}" if args.recorded_at else ""))
