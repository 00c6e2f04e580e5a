"""Which `rulem-db` commands only read the database, and the refusal of every other one on a
read-only standby (rulem_db/local/standby.py).

Why one table here rather than a check in each command: main() dispatches every command, so
one check before the dispatch covers every writing command, the ones to come included, before
it reads a file, opens a run or starts a service. A command not named below counts as writing
and is refused on a standby, so forgetting to classify one costs a clear refusal, never a
half-done write (and tests/unit/test_read_only.py fails until READING or WRITING names it).
"""

from __future__ import annotations

import argparse
import os

from rulem_db import config
from rulem_db import db as dbmod

# Commands (or "command action") that write nothing to the database they are pointed at.
# The reports (export, statement, permit report, docs) write files only; backup reads with
# pg_dump; serve publishes pub read-only; db start/stop/status manage or describe the embedded
# cluster; db standby works on the primary it is given with its own checks.
READING = frozenset({
    "balance", "backup", "docs", "export", "permit", "serve", "statement",
    "db status", "db start", "db stop", "db standby", "finding list",
})


# Commands (or "command action") that write: refused on a standby. Listed so that the unit
# test can tell a new command nobody classified from one that writes.
WRITING = frozenset({
    "check", "demo", "ingest", "recompute", "reconcile", "restore", "schedule", "watch",
    "db init", "db migrate", "finding ack", "finding waive", "finding note", "finding reopen",
})


def command_name(args: argparse.Namespace) -> str:
    """"command" or "command action", as READING names them."""
    action = getattr(args, "db_command", None) or getattr(args, "action", None)
    return f"{args.command} {action}" if action else args.command


def writes(args: argparse.Namespace) -> bool:
    """Whether this invocation may write to the database (and so needs the primary)."""
    if args.command == "statement":   # --issue records the year's issue
        return bool(getattr(args, "issue", False))
    if command_name(args) in READING or args.command in READING:
        return False
    if args.command == "check":       # --last prints the last run's findings
        return not getattr(args, "last", False)
    if args.command == "schedule":    # --dry-run prints the deployment, serves nothing
        return not getattr(args, "dry_run", False)
    return True


def refuse_on_standby(args: argparse.Namespace) -> None:
    """Raise rulem_db.db.ReadOnlyStandby, before the command does anything, when it writes and
    its database is a read-only standby.

    Only a database named by --db or $RULEM_DATABASE_URL is asked: the embedded default is a
    cluster rulem-db made with initdb, a primary by construction, and a standby is always
    reached by its URL. So the default path pays no extra connection, and a command that
    needs no database for what it checks first (schedule without a Prefect server) still
    needs none."""
    if not (args.db or os.environ.get("RULEM_DATABASE_URL")) or not writes(args):
        return
    dbmod.refuse_standby(config.database_url(args.db), doing=command_name(args))
