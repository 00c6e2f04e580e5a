"""`rulem-db serve` renders a permit's decision document on request:
GET /permits/{permit_no}/document.pdf, as the service's rulem_gis reader, kept while the
data's change stamp holds (ETag, 304), made afresh after a write; an unknown permit is a 404;
a permit number or a date that is not one is refused (400) before anything reads it, whatever
it carries: path traversal, SQL, control characters, huge values.

One server for the module (tests/support/web_server.py: the reconciled demo). Permit 24-004 is
approved with conditions on 2024-06-11 (demo/cases.toml).
"""

from __future__ import annotations

import re
import time

import httpx
import pypdfium2 as pdfium
import pytest
import sqlalchemy as sa
from web_server import web_server_fixture  # noqa: F401  (provides `web_server`)

from rulem_db.catalogue.layers import layer
from rulem_web import document

pytestmark = pytest.mark.slow
PERMIT = "24-004"
PATH = f"/permits/{PERMIT}/document.pdf"


def get(server, path: str, **kw) -> httpx.Response:
    return httpx.get(server.base_url + path, timeout=300, **kw)


def text_of(pdf: bytes) -> str:
    doc = pdfium.PdfDocument(pdf)
    try:
        return re.sub(r"\s+", " ", " ".join(doc[i].get_textpage().get_text_bounded()
                                            for i in range(len(doc))))
    finally:
        doc.close()


def test_the_allow_list_is_the_permit_layers_own_pattern() -> None:
    check = next(c.check for c in layer("permit").columns if c.name == "permit_no")
    assert document.PERMIT_NO.pattern in check


def test_a_permits_document_is_served_and_kept_until_the_data_changes(web_server) -> None:
    started = time.monotonic()
    first = get(web_server, PATH)
    made = time.monotonic() - started
    assert first.status_code == 200, first.text[:300]
    assert first.headers["content-type"] == "application/pdf"
    assert first.content.startswith(b"%PDF-")
    text = text_of(first.content)
    assert "Decision: Approved with conditions" in text and "Permit 24-004" in text
    etag = first.headers["etag"]

    assert get(web_server, PATH, headers={"If-None-Match": etag}).status_code == 304
    started = time.monotonic()
    again = get(web_server, PATH)
    kept = time.monotonic() - started
    assert again.status_code == 200 and again.headers["etag"] == etag
    assert again.content == first.content
    print(f"\ndocument of {PERMIT}: made in {made:.1f} s, answered from memory in "
          f"{kept:.2f} s")
    assert kept < made

    # a district edits its name (a dated parameter): a new stamp, a new document
    engine = sa.create_engine(web_server.url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text(
                "INSERT INTO core.parameter (plan_area_id, name, value_text, effective_on, "
                "note) SELECT plan_area_id, 'district_name', 'Rice Creek WD (web test)', "
                "current_date - 1, 'web test' FROM pub.permit WHERE permit_no = :n"),
                {"n": PERMIT})
        after = get(web_server, PATH, headers={"If-None-Match": etag})
        assert after.status_code == 200 and after.headers["etag"] != etag
        assert "Rice Creek WD (web test)" in text_of(after.content)
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(
                "ALTER TABLE core.parameter DISABLE TRIGGER parameter_append_only"))
            conn.execute(sa.text("DELETE FROM core.parameter WHERE note = 'web test'"))
            conn.execute(sa.text(
                "ALTER TABLE core.parameter ENABLE TRIGGER parameter_append_only"))
        engine.dispose()


def test_a_date_reads_the_record_then(web_server) -> None:
    r = get(web_server, PATH + "?as_of=2024-06-30&paper=a4")
    assert r.status_code == 200, r.text[:300]
    assert "reads the record as of 2024-06-30" in text_of(r.content)


def test_an_unknown_permit_is_404(web_server) -> None:
    r = get(web_server, "/permits/99-999/document.pdf")
    assert r.status_code == 404
    assert r.json() == {"error": "no permit 99-999"}


@pytest.mark.parametrize("bad", [
    "24-4", "2400-004", "24-00400", "24_004", "24-004 ", " 24-004", "24-004%00",
    "24-004%0A", "24-004'--", "24-004%27%20OR%20%271%27=%271", "24-004;DROP%20TABLE%20x",
    "%2e%2e", "..%2F..%2Fetc%2Fpasswd", "..%5C..%5Cwindows", "24-004%2F..", "%2524-004",
    "<script>", "1" * 5000, "24-" + "9" * 8_000,
])
def test_a_bad_permit_number_is_refused(web_server, bad: str) -> None:
    r = get(web_server, f"/permits/{bad}/document.pdf")
    assert r.status_code in (400, 404, 414, 431), (bad[:40], r.status_code)
    assert not r.content.startswith(b"%PDF")
    assert b"root:" not in r.content and b"Traceback" not in r.content


@pytest.mark.parametrize("query", [
    "as_of=2024-13-01", "as_of=2024-6-1", "as_of=yesterday", "as_of=2024-06-30%27--",
    "as_of=" + "2" * 10_000, "paper=legal", "paper=letter%00",
])
def test_a_bad_date_or_paper_is_refused(web_server, query: str) -> None:
    r = get(web_server, f"{PATH}?{query}")
    assert r.status_code in (400, 414, 431), (query[:40], r.status_code)
    assert not r.content.startswith(b"%PDF")


def test_a_huge_permit_number_is_refused_and_the_server_goes_on(web_server) -> None:
    """60,000 characters (httpx's limit is 65,536): uvicorn refuses the request line or the
    route refuses the number; either way no PDF, and the next request is answered."""
    try:
        r = get(web_server, "/permits/24-" + "9" * 60_000 + "/document.pdf")
        assert r.status_code in (400, 404, 414, 431), r.status_code
        assert not r.content.startswith(b"%PDF")
    except httpx.RemoteProtocolError:
        pass   # the server closed the connection on an oversized request line
    assert get(web_server, "/healthz").status_code == 200


def test_traversal_outside_the_route_reaches_nothing(web_server) -> None:
    for path in ("/permits/../../etc/passwd", "/permits/24-004/../../../etc/passwd",
                 "/permits/24-004/document.pdf/..", "/permits//document.pdf"):
        r = httpx.get(web_server.base_url + path, timeout=60)
        assert r.status_code in (400, 404), (path, r.status_code)
        assert b"root:" not in r.content
    assert get(web_server, "/healthz").status_code == 200   # still answering
