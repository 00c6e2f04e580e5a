"""`rulem-db docs`: write docs/data-dictionary.md from the database's comments and the table
of checks in docs/checks.md from the check catalogue (checks.rule_check)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_db import config
from rulem_db import db as dbmod


def register(sub: argparse._SubParsersAction) -> None:
    from rulem_db.catalogue.checks_doc import DEFAULT_PATH as CHECKS_PATH
    from rulem_db.catalogue.datadict import DEFAULT_PATH

    p = sub.add_parser("docs", help="write the data dictionary from the database's comments "
                                    "and the table of checks from the check catalogue")
    p.add_argument("--out", type=Path, default=DEFAULT_PATH,
                   help="data dictionary to write (default: docs/data-dictionary.md of this "
                        "checkout)")
    p.add_argument("--checks-doc", type=Path, default=CHECKS_PATH,
                   help="file whose generated table of checks is rewritten, the rest of it "
                        "kept (default: docs/checks.md of this checkout)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; fail when a file is not current")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_db.catalogue import checks_doc, datadict

    url = config.database_url(args.db)
    with dbmod.connect(url) as conn:
        if args.check:
            stale = []
            if not (args.out.exists() and args.out.read_text() == datadict.generate(conn)):
                stale.append(str(args.out))
            if not checks_doc.is_current(conn, args.checks_doc):
                stale.append(f"{args.checks_doc} (table of checks)")
            if stale:
                raise RuntimeError(f"{', '.join(stale)} not current: run rulem-db docs")
            print(f"{args.out} and {args.checks_doc} are current")
            return 0
        changed = datadict.write(conn, args.out)
        checks_changed = checks_doc.write(conn, args.checks_doc)
    print(f"{'wrote' if changed else 'unchanged:'} {args.out}")
    print(f"{'wrote' if checks_changed else 'unchanged:'} {args.checks_doc} (table of checks)")
    return 0
