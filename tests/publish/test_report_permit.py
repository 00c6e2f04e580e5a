"""The permit's decision document: `rulem-db permit report 24-004`, run as a
rulem_staff login (pub only), writes a tagged PDF a district signs, and its text holds the
decision, the conditions of issuance, the signature block and appeal paragraph (district text
parameters), the findings with the parameter VALUES (never their names) and the ledger
explained.

Permit 24-004 (demo/cases.toml) is approved on 2024-06-11 with conditions (declarations and
easement due 2024-07-11, met that day; a letter of credit of $22,300 held) and fails two
buffer checks: a mean buffer width of 47.50 ft < 50 ft once the 12 ft trail is taken out, and
the trail wider than 10 ft. Its figures, worked out there by hand: impact 1.7297 acres
(100 m x 70 m), credit 2.2239 acres (150 m x 60 m, certified 2025-07-15), balance 0.4942.
As of 2024-06-30 the impact stands (effective at the decision) and the credit does not yet:
balance -1.7297, deficit, and the conditions due 2024-07-11 are still open. Permit 24-009 is
under review: no decision. The demo is loaded and the documents written once for the module;
the tests read what was written.
"""

from __future__ import annotations

import contextlib
import io
import re
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from role_logins import as_login_url, role_logins
from sqlalchemy.engine import URL

from demo.cases import DEMO_CASES
from rulem_cli import main as cli
from rulem_db import checks, ledger

pytestmark = pytest.mark.slow
PERMIT = "24-004"
PENDING = "24-009"
CASE = DEMO_CASES[PERMIT]
AS_OF = "2024-06-30"


@dataclass
class Written:
    """The demo database, what the staff login wrote and the PDFs' text."""

    url: str
    staff_url: str
    out: Path
    stdout: str
    seconds: float
    pdf: bytes
    text: str                  # the whole document, page after page
    pages: list[str]
    as_of_text: str            # the document as of AS_OF
    pending_text: str          # the document of the permit under review
    check_codes: list[tuple[str, str]]
    parameter_names: list[str]
    district: dict[str, str]


def pdf_text(path: Path) -> list[str]:
    """Each page's text, as a reader extracts it (pypdfium2)."""
    pdf = pdfium.PdfDocument(path)
    try:
        return [pdf[i].get_textpage().get_text_bounded() for i in range(len(pdf))]
    finally:
        pdf.close()


def _report(url: str, permit: str, out: Path, *extra: str) -> tuple[int, str]:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = cli.main(["--db", url, "permit", "report", permit, "--out", str(out), *extra])
    return code, buffer.getvalue()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, admin_url: URL,
            demo_template: DemoTemplate) -> Iterator[Written]:
    """The demo recomputed and its two permits checked as the nightly does, then the
    documents written through the command line by a rulem_staff login."""
    with cloned_database(admin_url, demo_template.name) as engine, \
            role_logins(admin_url, ("rulem_staff",), "doc") as logins:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url)
        for permit in (PERMIT, PENDING):
            checks.run_checks(url, permit_no=permit)
        staff = as_login_url(url, logins["rulem_staff"])
        out = tmp_path_factory.mktemp("permit-report")
        started = time.monotonic()
        code, stdout = _report(staff, PERMIT, out)
        seconds = time.monotonic() - started
        assert code == 0, stdout
        pages = pdf_text(out / f"permit-{PERMIT}.pdf")
        as_of = tmp_path_factory.mktemp("permit-report-as-of")
        assert _report(staff, PERMIT, as_of, "--as-of", AS_OF)[0] == 0
        pending = tmp_path_factory.mktemp("permit-report-pending")
        assert _report(staff, PENDING, pending)[0] == 0
        with engine.connect() as conn:
            codes = [(r.paragraph, r.check_code) for r in conn.execute(sa.text(
                "SELECT paragraph, check_code FROM pub.permit_compliance WHERE permit_no = :n "
                "ORDER BY sort_order"), {"n": PERMIT})]
            names = list(conn.execute(sa.text(
                "SELECT DISTINCT name FROM pub.parameter")).scalars())
            district = dict(conn.execute(sa.text(
                "SELECT name, value_text FROM pub.parameter WHERE effective_to IS NULL "
                "AND name IN ('district_name', 'district_address', 'decision_signatory', "
                "'decision_appeal_text')")).all())
        yield Written(url, staff, out, stdout, seconds,
                      (out / f"permit-{PERMIT}.pdf").read_bytes(), "\n".join(pages), pages,
                      "\n".join(pdf_text(as_of / f"permit-{PERMIT}.pdf")),
                      "\n".join(pdf_text(pending / f"permit-{PENDING}.pdf")), codes, names,
                      district)


def flat(text: str) -> str:
    """Text with its white space folded to single spaces (lines wrap anywhere)."""
    return re.sub(r"\s+", " ", text)


def test_a_staff_login_writes_html_pdf_and_map(written: Written) -> None:
    for name in (f"permit-{PERMIT}.html", f"permit-{PERMIT}.pdf", f"permit-{PERMIT}-map.png"):
        path = written.out / name
        assert path.is_file() and path.stat().st_size > 1000, name
        assert str(path) in written.stdout
    assert written.pdf.startswith(b"%PDF-")
    assert 2 <= len(written.pages) <= 8, len(written.pages)
    print(f"\npermit document {PERMIT}: {len(written.pages)} pages, written in "
          f"{written.seconds:.1f} s by a rulem_staff login")


def _streams(pdf: bytes) -> Iterator[bytes]:
    """The PDF's streams, inflated (the catalogue and the XMP metadata sit in them)."""
    for m in re.finditer(rb"stream\r?\n", pdf):
        with contextlib.suppress(zlib.error):
            yield zlib.decompressobj().decompress(pdf[m.end():])


def test_the_pdf_is_tagged_pdf_ua(written: Written) -> None:
    """PDF/UA-1: marked as tagged with a structure tree, and identified as PDF/UA part 1 in
    its XMP metadata."""
    doc = pdfium.PdfDocument(written.pdf)
    try:
        assert pdfium_c.FPDFCatalog_IsTagged(doc.raw)
    finally:
        doc.close()
    streams = list(_streams(written.pdf))
    assert any(b"/StructTreeRoot" in s for s in streams)
    assert any(re.search(rb"pdfuaid:part[^0-9]{0,3}1", s) for s in streams)


def test_letterhead_addressee_property_and_decision(written: Written) -> None:
    first = flat(written.pages[0])
    assert written.district["district_name"] in first
    assert written.district["district_address"] in first
    assert "Lakeview Builders Inc." in first                 # the applicant, cases.toml
    assert "22-31-22-14-0001" in first                       # its parcel's PIN
    eng = sa.create_engine(written.url)
    try:
        with eng.connect() as conn:
            address = conn.execute(sa.text(
                "SELECT site_address FROM pub.parcel WHERE pin_display = '22-31-22-14-0001'"
            )).scalar_one()
    finally:
        eng.dispose()
    assert f"22-31-22-14-0001 ({address})" in first          # and its site address
    assert "Decision: Approved with conditions" in first
    assert "approved the application on 2024-06-11" in first


def test_the_conditions_of_issuance_with_due_dates_and_state(written: Written) -> None:
    text = flat(written.text)
    for condition in ("Record the buffer declaration", "Convey and record the easement",
                      "Post the replacement surety"):
        assert re.search(re.escape(condition) + r".{0,60}2024-07-11 met", text), condition
    assert "letter of credit of $22,300.00 surety held 2024-06-11" in text


def test_the_signature_block_and_appeal_paragraph(written: Written) -> None:
    text = flat(written.text)
    assert flat(written.district["decision_appeal_text"]) in text
    signature = flat(written.district["decision_signatory"])
    assert re.search(re.escape(signature) + " " + re.escape(written.district["district_name"])
                     + " Date: _+", text)


def test_findings_carry_the_parameter_values_never_their_names(written: Written) -> None:
    text = flat(written.text)
    leaked = [n for n in written.parameter_names if "_" in n and n in text]
    assert not leaked, f"parameter names printed: {leaked}"
    # the rule's requirements with the values in force (sql/030 defaults)
    assert "The buffer averages at least 50 ft in width." in text
    assert "A trail a buffer encloses is no more than 10 ft wide." in text
    assert "more than 10,000 sq ft of new impervious surface" in text
    assert "The buffer is at least 25 ft wide at all points." in text
    assert "rank B/C or higher" in text
    # the values compared, for the failing buffer checks (cases.toml)
    assert "Values compared: 47.50 ft found; the rule's limit 50.00 ft." in text
    assert "Values compared: 12.00 ft found; the rule's limit 10.00 ft." in text


def test_every_failing_check_is_a_finding_with_its_paragraph(written: Written) -> None:
    text = flat(written.text)
    for failed in CASE["fails"]:
        paragraph, check = failed.split(" ")
        whole = re.escape(check).replace("_", r"_ ?")   # a break only after an underscore
        assert re.search(rf"Rule M {re.escape(paragraph)} · {whole} · does not meet",
                         text), failed


def test_check_codes_are_never_split_mid_word(written: Written) -> None:
    assert written.check_codes
    for _, check in written.check_codes:
        whole = r"_\s*".join(map(re.escape, check.split("_")))
        assert re.search(whole, written.text), f"{check} split inside a word"


def test_the_ledger_explained(written: Written) -> None:
    text = flat(written.text)
    balance, impact, credit = (f"{CASE[k]:.4f}" for k in
                               ("balance_acres", "impact_acres", "credit_acres"))
    assert f"Balance: {balance} acres, surplus" in text
    assert f"{credit} − {impact} = {balance} acres" in text   # the entries' effects
    assert re.search(rf"replacement required 22-31-22-14-0001 {impact} -{impact} 2024-06-11",
                     text)
    assert re.search(rf"replacement credit counted 22-31-22-14-0001 {credit} {credit} "
                     r"2025-07-15 24-004/R-005", text)


def test_page_numbers_no_internal_names_a_short_provenance(written: Written) -> None:
    total = len(written.pages)
    for i, page in enumerate(written.pages, start=1):
        assert f"Page {i} of {total}" in page
    text = written.text
    assert not re.search(r"\b(pub|core|ops|ledger|checks|web)\.[a-z_]+", text)
    appendix = text[text.index("Appendix B: data provenance"):]
    assert appendix.count("\n") < 40, "the provenance appendix is short"
    assert "demo.gpkg" in appendix


def test_as_of_a_date_reads_the_ledger_and_conditions_then(written: Written) -> None:
    text = flat(written.as_of_text)
    impact = f"{CASE['impact_acres']:.4f}"
    assert f"reads the record as of {AS_OF}" in text
    assert f"Balance: -{impact} acres, deficit" in text   # the credit counts from 2025-07-15
    assert "Record the buffer declaration declaration 2024-07-11 open" in text


def test_a_permit_under_review_has_no_decision_yet(written: Written) -> None:
    text = flat(written.pending_text)
    assert "Decision: No decision yet" in text
    assert "decides nothing" in text


def test_an_unknown_permit_is_refused_in_one_line(written: Written, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "nothing"
    code = cli.main(["--db", written.staff_url, "permit", "report", "99-999", "--out",
                     str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert len(err.strip().splitlines()) == 1
    assert "no permit '99-999'" in err and "rulem-db balance --permits" in err
    assert not out.exists(), "nothing is written for an unknown permit"


def test_a_district_edits_its_text_by_a_dated_parameter(written: Written,
                                                        tmp_path: Path) -> None:
    """A new row of district_name, effective later, is what the document prints after that
    date; before it, the old name (the document reads the text in force on its date)."""
    with sa.create_engine(written.url).begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO core.parameter (plan_area_id, name, value_text, effective_on, note) "
            "SELECT plan_area_id, 'district_name', 'Rice Creek WD (renamed)', DATE '2026-01-01',"
            " 'test' FROM pub.permit WHERE permit_no = :n"), {"n": PERMIT})
    try:
        assert _report(written.staff_url, PERMIT, tmp_path / "now")[0] == 0
        assert "Rice Creek WD (renamed)" in pdf_text(tmp_path / "now" / f"permit-{PERMIT}.pdf")[0]
        assert _report(written.staff_url, PERMIT, tmp_path / "then", "--as-of", AS_OF)[0] == 0
        then = pdf_text(tmp_path / "then" / f"permit-{PERMIT}.pdf")[0]
        assert written.district["district_name"] in then and "renamed" not in then
    finally:
        with sa.create_engine(written.url).begin() as conn:   # the owner may remove it
            trigger = "TRIGGER parameter_append_only"
            conn.execute(sa.text(f"ALTER TABLE core.parameter DISABLE {trigger}"))
            conn.execute(sa.text("DELETE FROM core.parameter WHERE note = 'test'"))
            conn.execute(sa.text(f"ALTER TABLE core.parameter ENABLE {trigger}"))
