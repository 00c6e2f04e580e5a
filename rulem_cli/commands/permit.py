"""`rulem-db permit report NO [--out DIR] [--paper letter|a4] [--as-of DATE]`: the decision
document of a permit, as HTML and a tagged PDF.

One command group, `permit`, because staff act on one permit at a time; `report` writes what
the District signs and files with its decision: the letterhead, the addressee and property,
the decision from the permit record, the findings in plain words, the conditions of issuance,
the ledger explained, the appeal paragraph and signature block, and where the data came from
(rulem_db/reports/permit/). It reads schema pub only, so a staff or GIS login can write it.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

from rulem_db import config


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("permit", help="one permit's documents (report: the decision document)",
                       description="Documents of one permit.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    r = actions.add_parser(
        "report", help="the permit's decision document, HTML and PDF",
        description="Write permit-NO.html, permit-NO.pdf (tagged, PDF/UA-1) and "
                    "permit-NO-map.png: the decision document a district signs: letterhead, "
                    "applicant and parcels, the decision, the findings with the rule's "
                    "paragraph and the values compared, the conditions of issuance, the "
                    "ledger explained, the appeal paragraph and signature block, and the "
                    "data it was read from. The district's text (letterhead, signatory, "
                    "appeal paragraph) is in its parameters (docs/reports.md).")
    r.add_argument("permit_no", metavar="NO", help="permit number, e.g. 24-004")
    r.add_argument("--out", type=Path, default=Path("reports"),
                   help="folder for the files (default: ./reports)")
    r.add_argument("--paper", choices=("letter", "a4"), default="letter",
                   help="page size of the PDF (default: %(default)s)")
    r.add_argument("--as-of", metavar="DATE", type=_date,
                   help="read the ledger, the parameters and the conditions as they stood at "
                        "the end of DATE (YYYY-MM-DD; default: now); the findings are the last "
                        "check run's")
    r.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    from rulem_db.reports.permit import write_permit_report

    files = write_permit_report(config.database_url(args.db), args.permit_no, args.out,
                                paper=args.paper, as_of=args.as_of)
    print(f"written: {files.pdf} ({files.pages} pages, {files.seconds:.1f} s)\n"
          f"         {files.html}\n         {files.map_png}")
    return 0
