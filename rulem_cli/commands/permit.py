"""`rulem-db permit report NO [--out DIR] [--paper letter|a4]`: the decision document of a
permit, as HTML and PDF.

One command group, `permit`, because staff act on one permit at a time; `report` writes what
the District files with its decision: the site map, the impact and credit table with transfers,
every Rule M check with its state, the conditions of issuance still open and the data versions
the figures come from (rulem_db/reports/permit.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_db import config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("permit", help="one permit's documents (report: HTML and PDF)",
                       description="Documents of one permit.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser(
        "report", help="the permit's decision document, HTML and PDF",
        description="Write permit-NO.html, permit-NO.pdf and permit-NO-map.png: the site map, "
                    "the impact and credit table with transfers, every Rule M check with its "
                    "state, measured value, limit and paragraph, the conditions of issuance "
                    "still open, and the data versions the figures come from.")
    r.add_argument("permit_no", metavar="NO", help="permit number, e.g. 24-004")
    r.add_argument("--out", type=Path, default=Path("reports"),
                   help="folder for the files (default: ./reports)")
    r.add_argument("--paper", choices=("letter", "a4"), default="letter",
                   help="page size of the PDF (default: %(default)s)")
    r.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from rulem_db.reports.permit import write_permit_report

    files = write_permit_report(config.database_url(args.db), args.permit_no, args.out,
                                paper=args.paper)
    print(f"written: {files.pdf} ({files.pages} pages, {files.seconds:.1f} s)\n"
          f"         {files.html}\n         {files.map_png}")
    return 0
