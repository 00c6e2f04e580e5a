"""`rulem-db watch`: the resident recompute service. It keeps one database session, waits for
the change queue's notification and recomputes what changed within a second of each commit
(rulem_db/ledger/watch.py; docs/ledger.md section 7)."""

from __future__ import annotations

import argparse
import signal
import threading

from rulem_db import config, ledger
from rulem_db.ledger.watch import BIG_QUEUE, LedgerWatch


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "watch",
        help="stay running and recompute the ledger each time the layers change")
    p.add_argument("--debounce", type=float, default=0.25,
                   help="seconds without a further change before recomputing, so a burst of "
                        "commits is one run (default: %(default)s)")
    p.add_argument("--workers", type=int, default=ledger.DEFAULT_WORKERS,
                   help=f"connections for a big queue (over {BIG_QUEUE} rows; smaller ones "
                        "run on the kept session) (default: %(default)s)")
    p.add_argument("--retry-seconds", type=float, default=5.0,
                   help="wait after a lost connection or a failed recompute "
                        "(default: %(default)s)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise ValueError("--workers must be 1 or more")
    if args.debounce < 0 or args.retry_seconds <= 0:
        raise ValueError("--debounce must be 0 or more and --retry-seconds more than 0")
    stop = threading.Event()
    # SIGTERM (systemd, docker) ends the loop between recomputes: a run in progress finishes.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    url = config.database_url(args.db)
    print("rulem-db watch: recomputing the ledger on each change; Ctrl-C or SIGTERM stops",
          flush=True)
    LedgerWatch(url, debounce=args.debounce, workers=args.workers,
                retry_seconds=args.retry_seconds, stop=stop).run()
    print("rulem-db watch: stopped", flush=True)
    return 0
