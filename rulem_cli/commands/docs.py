"""`rulem-db docs`: write docs/data-dictionary.md from the database's comments."""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_db import config
from rulem_db import db as dbmod


def register(sub: argparse._SubParsersAction) -> None:
    from rulem_db.catalogue.datadict import DEFAULT_PATH

    p = sub.add_parser("docs", help="write the data dictionary from the database's comments")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH,
                   help="file to write (default: docs/data-dictionary.md of this checkout)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; fail when the file is not current")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_db.catalogue import datadict

    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        if args.check:
            current = args.out.exists() and args.out.read_text() == datadict.generate(conn)
            if not current:
                raise RuntimeError(f"{args.out} is not current: run rulem-db docs")
            print(f"{args.out} is current")
            return 0
        changed = datadict.write(conn, args.out)
    print(f"{'wrote' if changed else 'unchanged:'} {args.out}")
    return 0
