"""`rulem-db balance [--parcel PIN | --permit NO | --parcels | --permits] [--as-of DATE]`:
the 1:1 replacement balance from the ledger (pub.plan_balance, pub.parcel_balance,
pub.permit_balance, or their _as_of(date) functions)."""

from __future__ import annotations

import argparse
import datetime as dt

from rulem_db import config, ledger
from rulem_db import db as dbmod
from rulem_db.output import add_format_option, emit


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
                   help="as posted up to the end of DATE (YYYY-MM-DD)")
    add_format_option(p)
    p.set_defaults(func=run)


def _date(value: str) -> str:
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def run(args: argparse.Namespace) -> int:
    if args.parcel or args.parcels:
        level, key = "parcel", args.parcel
    elif args.permit or args.permits:
        level, key = "permit", args.permit
    else:
        level, key = "plan", None
    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        rows = ledger.balances(conn, level, key, as_of=args.as_of, only_active=args.parcels)
    if key is not None and not rows:
        what = "parcel with PIN" if level == "parcel" else "permit"
        when = f" as of {args.as_of}" if args.as_of else ""
        raise LookupError(f"no {what} {key}{when}: check the number (rulem-db balance "
                          f"--{level}s lists them)")
    columns = ledger.BALANCE_COLUMNS[level]
    title = None
    if args.format == "table":
        title = f"{level} balance" + (f" as of {args.as_of}" if args.as_of else "") + ":"
    emit(columns, [tuple(r[c] for c in columns) for r in rows], args.format, title=title)
    return 0
