"""The decision document of a permit (issue 19 part 2): `rulem-db permit report 24-004` on the
demo writes HTML and a PDF whose first page shows the site map and the failing buffer findings,
and whose text holds the permit number, every check of the permit and its balance.

Permit 24-004 is built to fail two buffer checks (demo/cases.toml: a mean buffer width of
47.5 ft < 50 ft once the 12 ft trail is taken out, and the trail wider than 10 ft), and its
figures are worked out there by hand: impact 1.7297 acres (100 m x 70 m), credit 2.2239 acres
(150 m x 60 m), balance 0.4942 acres. The demo is loaded and the report written once for the
module; the tests only read what was written.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL

from demo import generate as demo
from rulem_cli import main as cli
from rulem_db import checks, ledger
from rulem_db.paths import ROOT
from rulem_db.reports.palette import SEVERITY_COLOURS

pytestmark = pytest.mark.slow
PERMIT = "24-004"
CASE = demo.DEMO_CASES[PERMIT]
SCALE = 2.0  # render at 144 dpi: a hatch line of the map is a few pixels wide


@dataclass
class Written:
    """The demo database, the report files and what the test reads of them."""

    url: str
    out: Path
    stdout: str
    seconds: float
    check_codes: list[tuple[str, str]]
    texts: list[str]
    page1: np.ndarray  # RGB pixels of page 1
    map_box: tuple[int, int, int, int] | None  # the map picture on page 1, in pixels


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, admin_url: URL,
            demo_template: DemoTemplate) -> Iterator[Written]:
    """The demo loaded, recomputed and checked as the nightly does, then the report of 24-004
    written through the command line, read back once."""
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url)
        checks.run_checks(url, permit_no=PERMIT)  # the one permit the document shows
        out = tmp_path_factory.mktemp("permit-report")
        started = time.monotonic()
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            code = cli.main(["--db", url, "permit", "report", PERMIT, "--out", str(out)])
        seconds = time.monotonic() - started
        assert code == 0, buffer.getvalue()
        with engine.connect() as conn:
            codes = [(r.paragraph, r.check_code) for r in conn.execute(sa.text(
                "SELECT paragraph, check_code FROM pub.permit_compliance WHERE permit_no = :n "
                "ORDER BY sort_order"), {"n": PERMIT})]
        pdf = pdfium.PdfDocument(out / f"permit-{PERMIT}.pdf")
        try:
            texts = [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]
            page = pdf[0]
            pixels = np.asarray(page.render(scale=SCALE).to_pil().convert("RGB"))
            height = page.get_size()[1]
            images = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]))
            box = None
            if images:  # PDF points from the bottom left -> pixels from the top left
                left, bottom, right, top = images[0].get_bounds()
                box = (int(left * SCALE), int((height - top) * SCALE),
                       int(right * SCALE), int((height - bottom) * SCALE))
        finally:
            pdf.close()
        yield Written(url, out, buffer.getvalue(), seconds, codes, texts, pixels, box)


def _words(text: str) -> str:
    """Text without white space: a table cell may wrap a long check code over two lines."""
    return re.sub(r"\s+", "", text)


def test_the_command_writes_html_pdf_and_map(written: Written) -> None:
    for name in (f"permit-{PERMIT}.html", f"permit-{PERMIT}.pdf", f"permit-{PERMIT}-map.png"):
        path = written.out / name
        assert path.is_file() and path.stat().st_size > 1000, name
        assert str(path) in written.stdout
    assert (written.out / f"permit-{PERMIT}.pdf").read_bytes().startswith(b"%PDF-")
    assert len(written.texts) >= 2, "page 1 is the map and findings, the tables follow"
    print(f"\npermit report {PERMIT}: {len(written.texts)} pages, written in "
          f"{written.seconds:.1f} s")


def test_the_pdf_holds_the_permit_its_checks_and_its_balance(written: Written) -> None:
    text = "\n".join(written.texts)
    assert PERMIT in written.texts[0]
    assert written.check_codes, "the demo's permit was checked"
    flat = _words(text)
    missing = [code for _, code in written.check_codes if code not in flat]
    assert not missing, f"check codes not in the PDF: {missing}"
    for paragraph, _ in written.check_codes:
        assert paragraph in flat
    balance = f"{CASE['balance_acres']:.4f}"  # 0.4942, cases.toml
    assert f"balance {balance} acres" in text
    for figure in (CASE["impact_acres"], CASE["credit_acres"]):
        assert f"{figure:.4f}" in text


def test_page_one_shows_the_map_and_the_failing_buffer_findings(written: Written) -> None:
    page = written.page1
    ink = (page < 235).any(axis=2)
    assert ink.mean() > 0.05, "page 1 is nearly blank"
    first = _words(written.texts[0])
    buffer_fails = [f for f in CASE["fails"] if f.startswith("6")]  # the buffer: Rule M 6
    assert buffer_fails  # "6(c) buffer_avg_width", "6(f)(iv) trail_width"
    for failed in buffer_fails:
        paragraph, code = failed.split(" ")
        assert code in first and paragraph in first, failed
    assert written.map_box is not None, "no picture on page 1"
    x0, y0, x1, y1 = written.map_box
    assert (x1 - x0) > page.shape[1] / 3 and (y1 - y0) > page.shape[0] / 4, "map too small"
    picture = page[y0:y1, x0:x1].astype(int)
    colourful = (picture.max(axis=2) - picture.min(axis=2)) > 40  # grey and white: 0
    assert colourful.mean() > 0.05, "the map has hardly any colour"
    error = np.array([int(SEVERITY_COLOURS["error"][i:i + 2], 16) for i in (1, 3, 5)])
    drawn = (np.abs(picture - error).sum(axis=2) < 60).sum()
    assert drawn > 200, "the failing buffer findings are not drawn in the error colour"


def test_the_balance_table_adds_up_to_the_published_balance(written: Written) -> None:
    from rulem_db import db
    from rulem_db.reports.permit import read_permit

    with db.connect(written.url) as conn:
        doc = read_permit(conn, PERMIT)
    assert float(doc.balance["balance_acres"]) == pytest.approx(CASE["balance_acres"],
                                                                abs=5e-5)
    for column in ("impact_acres", "required_acres", "credit_acres", "transfer_in_acres",
                   "transfer_out_acres", "balance_acres"):
        assert sum(r[column] for r in doc.parcels) == doc.balance[column], column


def test_an_unknown_permit_is_refused_in_one_line(written: Written, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "nothing"
    code = cli.main(["--db", written.url, "permit", "report", "99-999", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert "no permit '99-999'" in err and "rulem-db balance --permits" in err
    assert not out.exists(), "nothing is written for an unknown permit"


def test_the_writer_login_reads_what_the_document_needs(written: Written) -> None:
    """The command runs as the embedded writer login (rulem_etl) like the other reports: it
    reads every part, and is told, not refused, where Alembic's table is the owner's."""
    from rulem_db import db
    from rulem_db.reports.permit import read_permit

    with db.connect(written.url) as conn:
        conn.execute(sa.text("SET ROLE rulem_etl"))
        doc = read_permit(conn, PERMIT)
    assert doc.checks and doc.parcels and doc.site["parcels"].shape[0]
    assert {"permit", "parcel", "impact", "wetland"} <= {b["layer"] for b in doc.batches}
    head = sorted(p.name[:4] for p in (ROOT / "migrations" / "versions").glob("0*.py"))[-1]
    assert doc.versions["revision"].startswith(f"{head} (this rulem-db's head")
