"""Rendering a permit's decision document: the page (HTML) and the tagged PDF a district signs.

Why apart from the reading: this module only lays out what read.py read (PermitDocument) and
computes nothing but words: the decision from the permit record, the rule's requirements
with the parameter values in force written in (never a parameter's name), the findings in
plain words with the values compared, the conditions of issuance, the ledger's explained
entries, the district's letterhead, signatory and appeal paragraph (district text parameters,
sql/032), page numbers and a short data-provenance appendix. No internal view or table is
named; a check code is printed whole, breaking only after its underscores.

The PDF is PDF/UA-1 (WeasyPrint's tagged variant): the structure (headings, tables, the
map's alternative text) is in the file, for screen readers and archives.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from rulem_db.reports import html as h
from rulem_db.reports.palette import SEVERITY_COLOURS  # error red, warning orange, info blue
from rulem_db.reports.permit.read import PermitDocument

TZ = "America/Chicago"  # the District's clock, as in the run report
PAPER = {"letter": "letter", "a4": "A4"}
PDF_VARIANT = "pdf/ua-1"
UNIT_PLACES = {"acres": 4, "ft": 2, "ft2": 0, "ft3": 0, "days": 1, "in": 2, "cfs": 2}
# Units of a measurement (the "values compared" of a finding); other units count things
# ("missing", "problems") and the finding's words say them.
MEASURED_UNITS = {"acres", "ft", "ft2", "ft3", "in", "days", "cfs", "%", "ratio", "years"}
UNIT_WORDS = {"ft2": "sq ft", "ft3": "cu ft", "acre/acre": "acre per acre"}
SEVERITY_WORDS = {"error": "does not meet the rule", "warning": "warning",
                  "info": "for information"}
MEASURE_WORDS = {
    "impact": "wetland impacted (memo)",
    "required": "replacement required",
    "credit": "replacement credit counted",
    "credit_proposed": "replacement proposed, not yet counted (memo)",
    "credit_constructed": "replacement constructed, not yet certified (memo)",
    "credit_hosted": "replacement on the permit's land (memo)",
    "transfer_in": "credit transferred in",
    "transfer_out": "credit transferred out",
}
DECISIONS = {
    "approved": "Approved",
    "denied": "Denied",
    "withdrawn": "Application withdrawn",
    "expired": "Permit expired",
}


def local(when: dt.datetime | None) -> dt.datetime | None:
    """An instant on the District's clock."""
    return when.astimezone(ZoneInfo(TZ)) if when is not None else None


def _num(value: Any, places: int | None = None) -> str:
    """A number as written in the rule: no trailing zeros unless places asks for them."""
    if value is None:
        return ""
    if places is not None:
        return f"{value:,.{places}f}"
    d = Decimal(str(value))
    text = f"{d:,f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def measure(value: Any, unit: str | None) -> str:
    """A measured value or limit to the precision its unit is read in, with its unit."""
    if value is None:
        return ""
    number = _num(value, UNIT_PLACES.get(unit or "", 2))
    return f"{number} {UNIT_WORDS.get(unit or '', unit or '')}".strip()


def parameter_value(row: dict[str, Any], following: str = "") -> str:
    """A parameter's value as it reads in a sentence: with its unit, unless the sentence
    already writes the unit right after it ("monitored for 5 years", "5:1", "5-15 %")."""
    unit = row.get("unit") or ""
    if row.get("value_num") is None:
        text = str(row.get("value_text") or "")
        if row.get("name") == "heritage_threshold":   # a rank, "BC": B/C
            return "/".join(text)
        if unit == "years" and "," in text:           # storm events: 2-, 10- and 100-year
            years = [y.strip() for y in text.split(",")]
            return ", ".join(f"{y}-" for y in years[:-1]) + f" and {years[-1]}-year"
        return text
    value = row["value_num"]
    if unit == "ratio" and Decimal(str(value)) < 1:
        return f"{_num(Decimal(str(value)) * 100)} %"
    number = _num(value)
    word = UNIT_WORDS.get(unit, unit)
    after = following.lstrip()
    if not word or unit in ("ratio", "H:V") or after.startswith((word, unit, ":", "%", "-")):
        return number
    return f"{number} {word}"


def in_values(text: str | None, parameters: dict[str, dict[str, Any]]) -> str:
    """A requirement with every parameter name replaced by its value in force; a
    parenthesis that only repeats the default ("heritage_threshold (B/C)") goes with it."""
    if not text:
        return ""
    names = sorted((n for n in parameters if n in text), key=len, reverse=True)
    if not names:
        return text
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b( \([^)]*\))?")

    def value(m: re.Match[str]) -> str:
        row = dict(parameters[m.group(1)], name=m.group(1))
        return parameter_value(row, text[m.end():m.end() + 8])

    return pattern.sub(value, text)


def words(text: str | None) -> str:
    """Text as escaped HTML whose dotted numbers (statutes: 103D.537) never break at the
    dot, as a line of the PDF may otherwise do."""
    return re.sub(r"\b(\w+\.\w+)\b", r'<span class="keep">\1</span>', h.esc(text or ""))


def code(check_code: str) -> str:
    """A check code whole, breakable only after an underscore (never mid-word)."""
    parts = [h.esc(p) for p in check_code.split("_")]
    return '<span class="code">' + "_<wbr>".join(parts) + "</span>"


def decision(doc: PermitDocument) -> tuple[str, str]:
    """The decision (a word to print large, and its sentence), from the permit record."""
    p = doc.permit
    status = p.get("status") or ""
    decided = p.get("decided_on")
    if status in ("applied", "under_review") or (
            doc.as_of is not None and decided is not None and decided > doc.as_of
            and status == "approved"):
        when = f" as of {doc.as_of.isoformat()}" if doc.as_of else ""
        return ("No decision yet",
                f"The application is under review{when}: this document is a draft and "
                "decides nothing.")
    on = f" on {decided.isoformat()}" if decided else ""
    if status == "approved":
        conditions = [c for c in doc.conditions if c["source"] != "financial assurance"]
        if conditions:
            return ("Approved with conditions",
                    f"The District approved the application{on}, subject to the "
                    f"{len(conditions)} conditions of issuance listed below.")
        return "Approved", f"The District approved the application{on}."
    if status == "denied":
        return "Denied", f"The District denied the application{on}, for the findings below."
    return (DECISIONS.get(status, status.replace("_", " ").capitalize()),
            f"The permit record reads {status.replace('_', ' ')}{on}.")


CSS = """
@page { size: %(paper)s; margin: 16mm 15mm 18mm 15mm;
        @bottom-left { content: "%(footer)s"; font-size: 7.5pt; color: #555; }
        @bottom-right { content: "Page " counter(page) " of " counter(pages);
                        font-size: 7.5pt; color: #555; } }
body { font-family: "DejaVu Sans", sans-serif; font-size: 9pt; color: #111; margin: 0;
       line-height: 1.35; }
header.letterhead { border-bottom: 2px solid #1f4e79; padding-bottom: 4pt; margin-bottom: 8pt; }
header.letterhead .district { font-size: 15pt; font-weight: bold; color: #1f4e79; }
header.letterhead .address { font-size: 8.5pt; color: #333; }
h1 { font-size: 13pt; margin: 6pt 0 4pt 0; }
h2 { font-size: 11pt; margin: 12pt 0 4pt 0; border-bottom: 1px solid #bbb;
     page-break-after: avoid; }
h3 { font-size: 9.5pt; margin: 8pt 0 2pt 0; page-break-after: avoid; }
table { border-collapse: collapse; width: 100%%; font-size: 8pt; }
th, td { text-align: left; vertical-align: top; padding: 2pt 4pt;
         border-bottom: 1px solid #ddd; }
th { background: #f0f0f0; }
td.num { text-align: right; white-space: nowrap; }
th.num { text-align: right; }
tr { page-break-inside: avoid; }
table.facts { width: auto; }
table.facts td:first-child { color: #444; padding-right: 10pt; white-space: nowrap; }
.decision { border: 2px solid #1f4e79; padding: 6pt 8pt; margin: 8pt 0; }
.decision .word { font-size: 14pt; font-weight: bold; }
.finding { margin: 0 0 6pt 0; padding: 3pt 6pt; border-left: 3px solid #999;
           page-break-inside: avoid; }
.finding.error { border-left-color: %(error)s; }
.finding.warning { border-left-color: %(warning)s; }
.finding.info { border-left-color: %(info)s; }
.finding p { margin: 1pt 0; }
.code { font-family: "DejaVu Sans Mono", monospace; font-size: 0.92em;
        overflow-wrap: normal; word-break: normal; hyphens: none; }
.note { color: #444; font-size: 8pt; }
.keep { white-space: nowrap; }
img.map { max-width: 100%%; max-height: 105mm; display: block; margin: 4pt auto; }
.signature { margin-top: 14pt; page-break-inside: avoid; }
.signature .line { border-bottom: 1px solid #000; width: 70mm; height: 16mm; }
.appendix { page-break-before: always; }
"""


def _table(head: tuple[str, ...], rows: list[tuple], numeric: tuple[str, ...] = (),
           raw: tuple[str, ...] = (), empty: str = "None.", widths: tuple[int, ...] = ()) -> str:
    """A table of plain values; raw columns hold ready HTML (check codes); widths (percent
    per column) keep a wide table to the paper."""
    if not rows:
        return f'<p class="note">{h.esc(empty)}</p>'
    cls = {c: ' class="num"' if c in numeric else "" for c in head}
    th = "".join(f"<th{cls[c]}>{h.esc(c)}</th>" for c in head)
    body = "".join(
        "<tr>" + "".join(f"<td{cls[c]}>{v if c in raw else h.esc(h.fmt(v))}</td>"
                         for c, v in zip(head, r, strict=True)) + "</tr>"
        for r in rows)
    cols = ("<colgroup>" + "".join(f'<col style="width: {w}%">' for w in widths)
            + "</colgroup>") if widths else ""
    fixed = ' style="table-layout: fixed"' if widths else ""
    return (f"<table{fixed}>{cols}<thead><tr>{th}</tr></thead><tbody>{body}</tbody>"
            "</table>")


def _finding(f: dict[str, Any], parameters: dict[str, dict[str, Any]]) -> str:
    """One finding in plain words: the paragraph, what the rule requires (values written in),
    what was found, the values compared and the review state."""
    requirement = in_values(f.get("title"), parameters)
    compared = ""
    if f.get("unit") in MEASURED_UNITS and f.get("measured_value") is not None:
        compared = (f"<p>Values compared: {h.esc(measure(f['measured_value'], f['unit']))} "
                    f"found; the rule's limit {h.esc(measure(f['limit_value'], f['unit']))}."
                    "</p>")
    where = f" on parcel {h.esc(f['parcel_pin'])}" if f.get("parcel_pin") else ""
    review = f.get("review_state") or "open"
    if f.get("waiver_reference"):
        review += f" ({f['waiver_reference']})"
    severity = f.get("severity") or "error"
    return (f'<div class="finding {h.esc(severity)}">'
            f"<p><b>Rule M {h.esc(f['paragraph'])}</b> · {code(f['check_code'])} · "
            f"{h.esc(SEVERITY_WORDS.get(severity, severity))}{where}</p>"
            f"<p>The rule requires: {h.esc(requirement)}</p>"
            f"<p>Found: {words(f.get('message'))}.</p>{compared}"
            f'<p class="note">Review: {h.esc(review)}</p></div>')


def _ledger(doc: PermitDocument) -> str:
    """The balance and the entries behind it (the ledger's explained rows), in words."""
    b = doc.balance
    if not b:
        return '<p class="note">The ledger holds nothing for this permit on this date.</p>'
    ratio = doc.parameters.get("replacement_ratio", {}).get("value_num")
    ratio_words = (f" at {_num(ratio)} acre of replacement per acre impacted (Rule M 7(b))"
                   if ratio is not None else "")
    summary = (
        f"Wetland impacted: {h.fmt(b['impact_acres'])} acres{ratio_words}, so "
        f"{h.fmt(b['required_acres'])} acres of replacement are required. Replacement credit "
        f"counted: {h.fmt(b['credit_acres'])} acres (transfers in "
        f"{h.fmt(b['transfer_in_acres'])}, out {h.fmt(b['transfer_out_acres'])}). Balance: "
        f"<b>{h.fmt(b['balance_acres'])} acres, {h.esc(b['status'])}</b>.")
    entries = [r for r in doc.explain if r["row_kind"] == "entry"]
    rows = []
    for r in entries:
        features = ", ".join(f'<span class="keep">{h.esc(k)}</span>' for k in
                             (r.get("feature_keys") or []) + (r.get("wetland_keys") or []))
        rows.append((MEASURE_WORDS.get(r["measure"], r["measure"]), r["pin"] or "",
                     h.fmt(r["acres"]), h.fmt(r["balance_effect_acres"]), r["effective_on"],
                     features))
    effects = " ".join(f"{'+' if (r['balance_effect_acres'] or 0) >= 0 else '−'} "
                       f"{h.fmt(abs(r['balance_effect_acres'] or 0))}"
                       for r in entries if r["balance_effect_acres"])
    total = (f'<p class="note">The balance is the sum of the entries\' effects: '
             f"{h.esc(effects.lstrip('+ '))} = {h.fmt(b['balance_acres'])} acres. A memo "
             "entry is shown for the record and does not change the balance. The features "
             "are the permit's mapped impacts, replacement and wetlands each entry was "
             "measured from (Appendix B names their files).</p>"
             if effects else "")
    shaping = [r for r in doc.explain if r["row_kind"] == "finding"]
    shaping_html = ""
    if shaping:
        shaping_html = "<h3>Findings that shape these figures</h3>" + _table(
            ("paragraph", "check", "what was found"),
            [(f"Rule M {r['paragraph']}", code(r["check_code"]), r["finding_message"])
             for r in shaping], raw=("check",), widths=(14, 24, 62))
    transfers = ""
    if doc.transfers:
        transfers = "<h3>Credit transfers</h3>" + _table(
            ("on", "direction", "from", "to", "acres"),
            [(t["transferred_on"], t["direction"], t["from_owner"], t["to_permit_no"],
              h.fmt(t["acres"])) for t in doc.transfers], numeric=("acres",))
    return (f"<p>{summary}</p>"
            + _table(("entry", "parcel", "acres", "effect on balance", "effective",
                      "features measured"), rows, numeric=("acres", "effect on balance"),
                     raw=("features measured",),
                     empty="No ledger entries for this permit on this date.",
                     widths=(21, 16, 9, 11, 11, 32))
            + total + transfers + shaping_html)


def _conditions(doc: PermitDocument) -> str:
    return _table(("condition", "kind", "due", "state", "met or posted"),
                  [(c["condition"], c["kind"].replace("_", " "), c["due_on"], c["state"],
                    c["met_on"]) for c in doc.conditions],
                  empty="The permit carries no conditions of issuance.")


def state(check: dict[str, Any]) -> str:
    """A check's result as the document says it."""
    if check["outcome"] == "fail":
        return {"warning": "warning", "info": "note"}.get(check["severity"], "does not meet")
    return {"pass": "meets", "not_applicable": "does not apply",
            "not_evaluated": "not evaluated"}.get(check["outcome"], check["outcome"])


def render_html(doc: PermitDocument, map_png: bytes | None, paper: str = "letter",
                written_at: dt.datetime | None = None) -> str:
    """The document as one self-contained page (inline CSS, the map embedded)."""
    if paper not in PAPER:
        raise ValueError(f"paper {paper!r}: choose one of {', '.join(PAPER)}")
    p, text, params = doc.permit, doc.text, doc.parameters
    no = p["permit_no"]
    written = local(written_at or dt.datetime.now(dt.UTC))
    word, sentence = decision(doc)
    # each PIN with its site address where the county's parcel file gives one
    pins = (", ".join(r["pin"] + (f" ({r['site_address']})" if r.get("site_address") else "")
                      for r in doc.parcels)
            or ", ".join(p.get("parcel_pins") or []))
    area = sum((r["area_acres"] or 0) for r in doc.parcels)
    facts = [("Permit", f"{no} (Rule M, wetland alteration)"),
             ("To (applicant)", p.get("applicant") or ""),
             ("Property (PINs)", pins + (f"; {h.fmt(area)} acres" if area else "")),
             ("Project", p.get("description") or ""),
             ("Application received", p.get("applied_on")),
             ("Decision date", p.get("decided_on") or "none yet"),
             ("Wetlands as delineated on", p.get("wetland_on")),
             ("This document reads the record as of",
              doc.as_of.isoformat() if doc.as_of else f"{written:%Y-%m-%d %H:%M} (now)")]
    facts_html = "".join(f"<tr><td>{h.esc(k)}</td><td>{h.esc(h.fmt(v))}</td></tr>"
                         for k, v in facts)
    counts = {"pass": 0, "fail": 0, "not_applicable": 0, "not_evaluated": 0}
    for c in doc.checks:
        counts[c["outcome"]] = counts.get(c["outcome"], 0) + 1
    run = max((c["checked_at"] for c in doc.checks if c["checked_at"]), default=None)
    findings = "".join(_finding(f, params) for f in doc.findings) or (
        '<p class="note">None: every Rule M check the permit was put to is met or does not '
        "apply.</p>")
    check_rows = [(f"Rule M {c['paragraph']}", code(c["check_code"]),
                   in_values(c["title"], params), state(c)) for c in doc.checks]
    pv = doc.provenance
    sources = [("Rule M checks", f"run {', '.join(str(r) for r, _ in pv['check_runs'])} of "
                f"{h.fmt(local(run))}" if pv["check_runs"] else "not checked yet"),
               ("Ledger", "; ".join(f"run {r['run_id']} ({r['mode']}) posted "
                                    f"{h.fmt(local(r['posted_at']))}"
                                    for r in pv["ledger_runs"]) or "no entries"),
               ("Software", f"rulem-db {pv['software']}, schema revision {pv['revision']}, "
                            f"database {pv['database']}"),
               ("Written", h.fmt(written))]
    map_html = (f'<img class="map" alt="Site map of permit {h.esc(no)}: the permit\'s parcels '
                "outlined, wetlands as delineated, buffers, impacts and replacement, and the "
                'findings in red; scale bar in feet." src="' + h.png_data_uri(map_png) + '">'
                if map_png else "")
    footer = f"{text['district_name']} · Permit {no} · Rule M decision".replace('"', "'")
    css = CSS % {"paper": PAPER[paper], "footer": footer, **SEVERITY_COLOURS}
    title = f"Permit {no}: Rule M decision"
    body = [
        '<header class="letterhead">',
        f'<div class="district">{h.esc(text["district_name"])}</div>',
        f'<div class="address">{h.esc(text["district_address"])}</div>',
        f'<div class="address">{h.esc(text["district_contact"])}</div>',
        "</header>",
        f"<h1>{h.esc(title)}</h1>",
        f'<table class="facts"><tbody>{facts_html}</tbody></table>',
        f'<div class="decision"><div class="word">Decision: {h.esc(word)}</div>'
        f"<p>{h.esc(sentence)}</p></div>",
        "<h2>Site</h2>", map_html,
        f"<h2>Findings ({len(doc.findings)})</h2>",
        f'<p class="note">The permit was put to {len(doc.checks)} Rule M checks: '
        f"{counts['pass']} met, {counts['not_applicable']} do not apply, {counts['fail']} "
        f"not met, {counts['not_evaluated']} could not be evaluated (check run of "
        f"{h.fmt(local(run)) or 'none'}). Each one not met is below; Appendix A lists all."
        "</p>",
        findings,
        "<h2>Conditions of issuance</h2>", _conditions(doc),
        "<h2>Wetland replacement ledger</h2>", _ledger(doc),
        "<h2>Appeal</h2>", f"<p>{words(text['decision_appeal_text'])}</p>",
        '<div class="signature"><div class="line"></div>',
        f"<p>{h.esc(text['decision_signatory'])}<br>{h.esc(text['district_name'])}</p>",
        "<p>Date: ____________________</p></div>",
        '<section class="appendix">',
        "<h2>Appendix A: the Rule M checks</h2>",
        _table(("paragraph", "check", "the rule requires", "result"), check_rows,
               raw=("check",), empty="The permit has not been checked.",
               widths=(12, 24, 52, 12)),
        "<h2>Appendix B: data provenance</h2>",
        "<table class=\"facts\"><tbody>" + "".join(
            f"<tr><td>{h.esc(k)}</td><td>{h.esc(v)}</td></tr>" for k, v in sources)
        + "</tbody></table>",
        "<h3>Files the permit's features came from</h3>",
        _table(("layer", "file", "SHA-256", "loaded", "by"),
               [(r["layer"].replace("_", " "), r["file_name"], (r["file_sha256"] or "")[:12],
                 h.fmt(local(r["loaded_at"]))[:16], r["loaded_by"]) for r in doc.batches],
               empty="Not read.", widths=(16, 30, 16, 20, 18)),
        "</section>",
    ]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{h.esc(title)}</title>"
            f'<meta name="author" content="{h.esc(text["district_name"])}">'
            f"<style>{css}</style></head><body>{''.join(body)}</body></html>\n")


def render_pdf(page: str) -> tuple[bytes, int]:
    """The page printed as a tagged PDF (PDF/UA-1), and its page count."""
    weasyprint = _weasyprint()
    rendered = weasyprint.HTML(string=page).render()
    return rendered.write_pdf(pdf_variant=PDF_VARIANT), len(rendered.pages)


def _weasyprint() -> Any:
    """WeasyPrint, or one line saying what the machine lacks: it loads Pango when imported."""
    try:
        import weasyprint
    except OSError as exc:  # cffi could not open a library
        raise RuntimeError(
            f"the PDF printer WeasyPrint cannot load Pango ({exc}): run scripts/bootstrap, or "
            "apt-get install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 "
            "fonts-dejavu-core") from exc
    return weasyprint
