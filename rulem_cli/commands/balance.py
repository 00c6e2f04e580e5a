"""`rulem-db balance [--parcel PIN | --permit NO | --parcels | --permits] [--as-of DATE]
[--recorded-at INSTANT] [--restated] [--explain]`: the 1:1 replacement balance from the ledger
(pub.plan_balance, pub.parcel_balance, pub.permit_balance, or their _as_of(date, recorded_at,
restated) functions), and with --explain the entries and findings behind it
(pub.balance_explain).

--as-of goes by the date each entry's fact took effect (a permit's decision, a credit's
status, a transfer); --recorded-at by when the book recorded it (default now): "as of
2024-12-31 as recorded at 2026-12-01" is what the book said on 2026-12-01 about the end of
2024 (docs/ledger.md section 4a). A date in a year whose statement was issued reads the
figures issued (the year as recorded at its issue); --restated reads it as now known
(docs/ledger.md section 4b)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from typing import Any

from rulem_cli.output import add_format_option, emit
from rulem_db import config, ledger
from rulem_db import db as dbmod
from rulem_db.ledger import explain as explaining


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
    p.add_argument("--restated", action="store_true",
                   help="with --as-of: a date in a year whose statement was issued as now "
                        "known (default: the figures issued)")
    p.add_argument("--explain", action="store_true",
                   help="with --parcel or --permit: list the ledger entries behind each "
                        "figure (feature keys, run, ingest batch) and the permit findings "
                        "that shape it")
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
    if args.explain and not (args.parcel or args.permit):
        raise ValueError("--explain explains one parcel or one permit: give --parcel PIN or "
                         "--permit NO")
    if args.restated and not args.as_of:
        raise ValueError("--restated reads a date of an issued year as now known: give "
                         "--as-of DATE (without it the balance is the current one)")
    if args.parcel or args.parcels:
        level, key = "parcel", args.parcel
    elif args.permit or args.permits:
        level, key = "permit", args.permit
    else:
        level, key = "plan", None
    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        rows = ledger.balances(conn, level, key, as_of=args.as_of, only_active=args.parcels,
                               recorded_at=args.recorded_at, restated=args.restated)
        if key is not None and not rows:
            what = "parcel with PIN" if level == "parcel" else "permit"
            when = _when(args)
            raise LookupError(f"no {what} {key}{when}: check the number (rulem-db balance "
                              f"--{level}s lists them)")
        explained = (explaining.explain(conn, level, key, as_of=args.as_of,
                                        recorded_at=args.recorded_at, restated=args.restated)
                     if args.explain else None)
    columns = ledger.BALANCE_COLUMNS[level]
    if explained is not None:
        _emit_explained(args, level, columns, rows, explained)
        return 0
    title = None
    if args.format == "table":
        title = f"{level} balance{_when(args)}:"
    emit(columns, [tuple(r[c] for c in columns) for r in rows], args.format, title=title)
    return 0


def _when(args: argparse.Namespace) -> str:
    return ((f" as of {args.as_of}" if args.as_of else "")
            + (f" as recorded at {args.recorded_at}" if args.recorded_at else "")
            + (" restated" if args.restated else ""))


def _flat(value: Any) -> Any:
    """A cell of the CSV: a list as its items joined with '; ', jsonb as JSON text."""
    if isinstance(value, list):
        if value and isinstance(value[0], dict):
            return json.dumps(value, default=str)
        return "; ".join(str(v) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str)
    return value


def _sources(row: dict[str, Any]) -> str:
    """The ingest batches of a row, 'file (login)' each, as the table prints them."""
    pairs = zip(row["source_files"] or [], row["loaded_by"] or [], strict=False)
    return ", ".join(f"{f} ({who})" for f, who in pairs)


def _emit_explained(args: argparse.Namespace, level: str, columns, rows,
                    explained: list[dict[str, Any]]) -> None:
    """The figures and the rows behind them: pub.balance_explain's columns for csv and json
    (what the web panel and BI read), a readable selection of them on a terminal."""
    if args.format == "json":
        emit(explaining.EXPLAIN_COLUMNS,
             [tuple(r[c] for c in explaining.EXPLAIN_COLUMNS) for r in explained], "json")
        return
    if args.format == "csv":
        emit(explaining.EXPLAIN_COLUMNS,
             [tuple(_flat(r[c]) for c in explaining.EXPLAIN_COLUMNS) for r in explained],
             "csv")
        return
    emit(columns, [tuple(r[c] for c in columns) for r in rows], "table",
         title=f"{level} balance{_when(args)}:")
    entries = [r for r in explained if r["row_kind"] == "entry"]
    findings = [r for r in explained if r["row_kind"] == "finding"]
    print(f"\nentries behind it ({len(entries)}; acres add up to the figures, "
          "effect to the balance):")
    emit(("measure", "owner", "pin", "acres", "effect", "effective_on", "entry", "run",
          "features", "wetland", "loaded from", "reason"),
         [(r["measure"], r["permit_no"] or r["district_project"], r["pin"], r["acres"],
           r["balance_effect_acres"], r["effective_on"], r["entry_id"], r["run_id"],
           " ".join(r["feature_keys"] or []), " ".join(r["wetland_keys"] or []),
           _sources(r), r["reason"]) for r in entries], "table")
    print(f"\nfindings of its permits that shape it ({len(findings)}):")
    if findings:
        emit(("permit", "paragraph", "check", "severity", "finding", "state", "message"),
             [(r["permit_no"], r["paragraph"], r["check_code"], r["severity"],
               r["finding_id"], r["review_state"], r["finding_message"]) for r in findings],
             "table")
    else:
        print("none")
