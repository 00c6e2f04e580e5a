"""The decision document of one permit (`rulem-db permit report NO`, and `rulem-db serve` at
/permits/NO/document.pdf): what a district signs, as HTML and a tagged PDF.

Why one document per permit: the District decides a permit on one paper that names the
applicant and the property, states the decision from the permit record, explains each finding
with the rule's paragraph and the values compared, lists the conditions of issuance, explains
the ledger's figures entry by entry, carries the appeal paragraph and a signature block, and
says which data it was computed from, so that the decision can be read, filed and reproduced.

Three modules, one job each: read.py reads everything from schema pub (so a staff or GIS login
can write the document), draw.py draws the site map, render.py lays out the page and prints
the PDF. Written to `<out>/`:
- `permit-<NO>.html`: one self-contained page (inline CSS, map embedded);
- `permit-<NO>.pdf`: the same page printed by WeasyPrint as PDF/UA-1 (Letter or A4);
- `permit-<NO>-map.png`: the site map, for slides and e-mail.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa

from rulem_db.reports.permit.read import PermitDocument, UnknownPermit, read_permit
from rulem_db.reports.permit.render import PAPER, render_html, render_pdf

__all__ = ["PermitDocument", "PermitReportFiles", "UnknownPermit", "document_pdf",
           "read_permit", "write_permit_report"]


@dataclass(frozen=True)
class PermitReportFiles:
    """The files written for a permit, the PDF's page count and the seconds it took."""

    html: Path
    pdf: Path
    map_png: Path
    pages: int
    seconds: float


def document_pdf(conn: sa.Connection, permit_no: str, as_of: dt.date | None = None,
                 paper: str = "letter") -> tuple[bytes, int]:
    """The PDF of permit_no's document read on conn (UnknownPermit when there is none), and
    its page count: what the web service sends."""
    from rulem_db.reports.permit.draw import site_map

    doc = read_permit(conn, permit_no, as_of)
    return render_pdf(render_html(doc, site_map(doc), paper))


def write_permit_report(url: str, permit_no: str, out: Path, paper: str = "letter",
                        as_of: dt.date | None = None) -> PermitReportFiles:
    """Read permit_no's document from the database at url (as of the end of as_of, None: now)
    and write its HTML, PDF and map into out (created if missing). The PDF is rendered before
    anything is written, so an unknown permit (UnknownPermit) or a failure leaves out as it
    was."""
    from rulem_db import db as dbmod
    from rulem_db.reports.permit.draw import site_map

    if paper not in PAPER:
        raise ValueError(f"paper {paper!r}: choose one of {', '.join(PAPER)}")
    started = time.monotonic()
    with dbmod.connect(url) as conn:
        doc = read_permit(conn, permit_no, as_of)
    png = site_map(doc)
    page = render_html(doc, png, paper)
    pdf, pages = render_pdf(page)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "permit-" + re.sub(r"[^A-Za-z0-9._-]", "_", permit_no)
    map_path = out / f"{stem}-map.png"
    map_path.write_bytes(png)
    html_path = out / f"{stem}.html"
    html_path.write_text(page, encoding="utf-8")
    pdf_path = out / f"{stem}.pdf"
    pdf_path.write_bytes(pdf)
    return PermitReportFiles(html_path, pdf_path, map_path, pages, time.monotonic() - started)
