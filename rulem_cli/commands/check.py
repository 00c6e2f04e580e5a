"""`rulem-db check [--permit NO] [--plan-area CODE] [--last]`: run the Rule M checks and print
the findings grouped by permit and rule paragraph."""

from __future__ import annotations

import argparse
from itertools import groupby
from typing import Any

from rulem_cli.output import add_format_option, emit
from rulem_db import checks, config

TABLE_COLUMNS = ("finding_id", "paragraph", "check_code", "severity", "measured_value",
                 "limit_value", "unit", "parcel_pin", "review_state", "message")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="run the Rule M checks and print the findings",
                       description="Run every Rule M check (spec section 5) for every permit, "
                                   "or one, and print the current findings grouped by permit "
                                   "and rule paragraph.")
    p.add_argument("--permit", metavar="NO", help="check this permit only, e.g. 24-017")
    p.add_argument("--plan-area", metavar="CODE",
                   help="plan area code (default: every plan area with a CWMP boundary)")
    p.add_argument("--last", action="store_true",
                   help="print the findings of the last run without running the checks")
    p.add_argument("--workers", type=int, default=1,
                   help="database sessions evaluating the permits at once (default 1; the "
                        "nightly uses as many as the recompute)")
    add_format_option(p)
    p.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    url = config.database_url(args.db)
    summary = None
    if args.workers < 1:
        raise ValueError("--workers must be 1 or more")
    if not args.last:
        summary = checks.run_checks(url, permit_no=args.permit, plan_area=args.plan_area,
                                    workers=args.workers)
    rows = checks.findings(url, permit_no=args.permit, plan_area=args.plan_area)
    if args.format != "table":
        emit(checks.FINDING_COLUMNS, [[r[c] for c in checks.FINDING_COLUMNS] for r in rows],
             args.format)
        return 0
    _print_grouped(rows)
    if summary is not None:
        print(f"checks: {summary}")
    return 0


def _print_grouped(rows: list[dict[str, Any]]) -> None:
    """One table per permit (District projects last), its rows in the rule's order."""
    if not rows:
        print("no findings")
        return
    for (area, permit), group in groupby(rows, key=lambda r: (r["plan_area"], r["permit_no"])):
        items = list(group)
        errors = sum(1 for r in items if r["severity"] == "error")
        owner = f"permit {permit}" if permit else "District projects (no permit)"
        title = (f"{owner} ({area}): {len(items)} findings, {errors} errors, "
                 f"{len(items) - errors} warnings or notes")
        emit(TABLE_COLUMNS, [[r[c] for c in TABLE_COLUMNS] for r in items], title=title)
        print()
