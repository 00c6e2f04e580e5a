"""`rulem-db schedule`: serve the nightly reconciliation as a Prefect deployment on a cron
schedule (default 02:00 America/Chicago) against the Prefect server in PREFECT_API_URL.

How the schedule survives a restart (docs/operations.md): the deployment is served with
pause_on_shutdown=False, so stopping this process (SIGTERM from systemd or docker) leaves the
schedule active on the server, which keeps creating the nightly runs; when the process is back
(systemd Restart=always, compose restart: unless-stopped) it registers the deployment again and
runs what came due while it was down (late runs), one at a time.

With --work-pool POOL it serves nothing: it registers the inbox ingest as a deployment of the
Prefect process work pool POOL (created when missing) and exits; workers started with
`prefect worker start --pool POOL` (RULEM_DATABASE_URL in their environment) then run ingests,
one per worker at a time, so two workers load two plan areas' deliveries at once (flows.deploy).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rulem_db import config

DEFAULT_CRON = "0 2 * * *"
DEFAULT_TIMEZONE = "America/Chicago"
DEFAULT_NAME = "nightly"


NEEDS_SERVER = """\
Serve the nightly reconciliation (inbox, recompute, checks, report) on a cron schedule.

It needs a Prefect server, named by PREFECT_API_URL, and refuses to start without one.
Start one (its state in SQLite under ~/.prefect unless PREFECT_API_DATABASE_CONNECTION_URL
names a PostgreSQL database) and point the schedule at it:

  prefect server start                      # API and UI on http://127.0.0.1:4200
  export PREFECT_API_URL=http://127.0.0.1:4200/api
  rulem-db schedule --inbox /srv/rulem/inbox --reports /srv/rulem/reports

--work-pool POOL registers the inbox ingest in a process work pool instead (then start
workers: RULEM_DATABASE_URL=... prefect worker start --pool POOL --limit 1, one per ingest
to run at once; a run names its plan_area and inbox).

--dry-run needs no server. As services (systemd units, Docker Compose) and with Prefect's
state in PostgreSQL: docs/operations.md, section 6."""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schedule",
                       help="serve the nightly reconciliation on a schedule (needs a Prefect "
                            "server)",
                       description=NEEDS_SERVER,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cron", default=DEFAULT_CRON,
                   help='cron expression of the runs (default: "%(default)s")')
    p.add_argument("--timezone", default=DEFAULT_TIMEZONE,
                   help="IANA time zone of the cron expression (default: %(default)s)")
    p.add_argument("--name", default=DEFAULT_NAME,
                   help="deployment name (default: %(default)s; with --work-pool: ingest)")
    p.add_argument("--inbox", type=Path, default=None,
                   help="inbox folder each run loads first (default: none)")
    p.add_argument("--reports", type=Path, default=Path("reports"),
                   help="folder for the reports (default: ./reports)")
    p.add_argument("--plan-area", default=None,
                   help="plan area code (default: the only one in the database)")
    p.add_argument("--settle-seconds", type=float, default=300.0,
                   help="leave inbox files younger than this for the next run, as they may "
                        "still be copying (default: %(default)s)")
    p.add_argument("--work-pool", metavar="POOL", default=None,
                   help="register the inbox ingest as a deployment of the process work pool "
                        "POOL (created when missing) for workers to run, and exit: serves "
                        "no nightly")
    p.add_argument("--dry-run", action="store_true",
                   help="print the deployment and its next runs, serve nothing")
    p.set_defaults(func=run)


def deployment_parameters(args: argparse.Namespace) -> dict[str, Any]:
    """The parameters every scheduled run gets (absolute paths: runs start in a subprocess)."""
    return {
        "inbox": str(args.inbox.resolve()) if args.inbox else None,
        "reports": str(args.reports.resolve()),
        "plan_area": args.plan_area,
        "settle_seconds": args.settle_seconds,
        "started_via": "schedule",
    }


def next_runs(cron: str, timezone: str, n: int = 3) -> list[Any]:
    """The next n run times of a cron expression in a time zone (validates both)."""
    import asyncio
    import inspect
    import re

    from prefect.server.schemas.schedules import CronSchedule

    try:
        schedule = CronSchedule(cron=cron, timezone=timezone)
    except ValueError as exc:
        found = re.search(r"Value error, ([^\[]+)", str(exc))
        reason = found.group(1).strip() if found else " ".join(str(exc).split())[:200]
        raise ValueError(f"bad schedule (--cron {cron!r}, --timezone {timezone!r}): "
                         f"{reason}") from None
    dates = schedule.get_dates(n)
    if inspect.iscoroutine(dates):
        dates = asyncio.run(dates)
    return list(dates)


def build_deployment(args: argparse.Namespace) -> Any:
    """The Prefect deployment of the nightly flow with its cron schedule."""
    from prefect.schedules import Cron
    from prefect.types.entrypoint import EntrypointType

    from flows.nightly import nightly_reconciliation

    next_runs(args.cron, args.timezone, 1)
    return nightly_reconciliation.to_deployment(
        name=args.name, schedules=[Cron(args.cron, timezone=args.timezone)],
        parameters=deployment_parameters(args), tags=["rulem-db"],
        description="Rule M nightly reconciliation: inbox, ledger recompute, rule checks, "
                    "comparison with the previous run, report.",
        entrypoint_type=EntrypointType.MODULE_PATH)


def deploy_to_pool(args: argparse.Namespace) -> int:
    """--work-pool: register the ingest deployment in the pool (or show it with --dry-run)."""
    from flows import deploy
    from flows.nightly import prefect_configured

    name = args.name if args.name != DEFAULT_NAME else deploy.DEFAULT_NAME
    if args.dry_run:
        print(f"deployment ingest_inbox/{name} in process work pool {args.work_pool}; "
              f"workers: {deploy.worker_command(args.work_pool)}")
        return 0
    if not prefect_configured():
        raise RuntimeError("PREFECT_API_URL is not set: a work pool lives on a Prefect server "
                           "(rulem-db schedule --help)")
    deployment_id, created = deploy.deploy_ingest(args.work_pool, name)
    made = "created the process work pool" if created else "process work pool"
    print(f"{made} {args.work_pool}; deployment ingest_inbox/{name} ({deployment_id})")
    print(f"start workers (one per ingest to run at once): {deploy.worker_command(args.work_pool)}")
    print(f"run one: prefect deployment run ingest_inbox/{name} --param plan_area=CODE "
          "--param inbox=/path/to/inbox")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.work_pool:
        return deploy_to_pool(args)
    deployment = build_deployment(args)
    if args.dry_run:
        print(f"deployment nightly_reconciliation/{deployment.name}: cron {args.cron!r} in "
              f"{args.timezone}")
        for key, value in deployment.parameters.items():
            print(f"  {key} = {value}")
        for when in next_runs(args.cron, args.timezone):
            print(f"  next run: {when.isoformat()}")
        return 0
    from flows.inbox import prepare
    from flows.nightly import prefect_configured

    if not prefect_configured():
        raise RuntimeError("PREFECT_API_URL is not set: start a Prefect server "
                           "(prefect server start) and point it there "
                           "(e.g. http://127.0.0.1:4200/api; rulem-db schedule --help)")
    if args.inbox is not None and prepare(args.inbox):
        print(f"created the inbox {args.inbox.resolve()} with a folder per layer")
    # Scheduled runs start in subprocesses: they find the database in the environment.
    os.environ["RULEM_DATABASE_URL"] = config.database_url(args.db)
    from prefect import serve

    serve(deployment, pause_on_shutdown=False, limit=1)
    return 0
