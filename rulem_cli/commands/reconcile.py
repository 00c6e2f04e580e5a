"""`rulem-db reconcile`: run the nightly reconciliation once, now.

Loads what waits in the inbox (with --inbox), recomputes the ledger, runs the checks, compares
with the previous run and writes the report; prints the summary and where the report is. A
second reconciliation of the same plan area while one runs exits at once with status 75 and a
message naming the running one. Through Prefect when PREFECT_API_URL is set (the run shows in
the UI), directly otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from rulem_db import config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("reconcile",
                       help="run the nightly reconciliation now: inbox, recompute, checks, "
                            "report")
    p.add_argument("--inbox", type=Path, default=None,
                   help="inbox folder to load first (inbox/<layer>/<file>); default: none")
    p.add_argument("--reports", type=Path, default=Path("reports"),
                   help="folder for the run's report (default: ./reports)")
    p.add_argument("--plan-area", default=None,
                   help="plan area code (default: the only one in the database)")
    p.add_argument("--archive", type=Path, default=None,
                   help="where loaded files go (default: archive/ beside the inbox)")
    p.add_argument("--quarantine", type=Path, default=None,
                   help="where refused files go (default: quarantine/ beside the inbox)")
    engine = p.add_mutually_exclusive_group()
    engine.add_argument("--prefect", dest="use_prefect", action="store_true", default=None,
                        help="run through Prefect (default when PREFECT_API_URL is set)")
    engine.add_argument("--no-prefect", dest="use_prefect", action="store_false",
                        help="run directly, without Prefect")
    p.add_argument("--full", action="store_true",
                   help="recompute every ledger owner and check every permit, not only what "
                        "changed since the last run (same result, slower)")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="output format (default: table)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from flows.nightly import reconcile_now

    if args.inbox is not None and not args.inbox.is_dir():
        raise ValueError(f"inbox {args.inbox} is not a folder")
    url = config.database_url(args.db)
    summary = reconcile_now(url, inbox=args.inbox, reports=args.reports,
                            plan_area=args.plan_area, started_via="command",
                            use_prefect=args.use_prefect,
                            archive=args.archive, quarantine=args.quarantine,
                            full=args.full)
    if args.format == "json":
        data = dataclasses.asdict(summary)
        print(json.dumps(data, indent=2, default=str))
    else:
        print("\n".join(summary.lines()))
    return 0
