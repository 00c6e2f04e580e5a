"""`rulem-db backup FILE` and `rulem-db restore FILE`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_db import config
from rulem_db.local import backup


def register(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("backup", help="write the whole database to FILE (pg_dump custom format)")
    b.add_argument("file", type=Path)
    b.set_defaults(func=_backup)
    r = sub.add_parser("restore", help="restore FILE into an empty database (see --db)")
    r.add_argument("file", type=Path)
    r.set_defaults(func=_restore)


def _backup(args: argparse.Namespace) -> int:
    url = config.database_url(args.db, owner=True)
    path = backup.backup(url, args.file)
    print(f"backup written: {path} ({path.stat().st_size:,} bytes) from {config.redact(url)}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    url = config.database_url(args.db, owner=True)
    backup.restore(url, args.file)
    print(f"restored {args.file} into {config.redact(url)}")
    return 0
