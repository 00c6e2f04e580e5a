"""The decision document of one permit (`rulem-db permit report NO`): HTML and PDF.

Why one document per permit: the District decides a permit on one paper that shows the site,
the 1:1 ledger of the permit, every Rule M check with its outcome and paragraph, what is still
owed before or after issuance (declarations, easement, vegetation plan, sureties), and the data
it was computed from, so that the decision can be read, filed and reproduced. Everything is read
from the database (pub views, the wetland layer as of the permit's baseline date, the runs and
batches); this module computes nothing but layout. Written to `<out>/`:
- `permit-<NO>.html`: one self-contained page (inline CSS, map embedded);
- `permit-<NO>.pdf`: the same page printed by WeasyPrint (A4 or Letter), page 1 the map and
  the failing checks;
- `permit-<NO>-map.png`: the site map, for slides and e-mail.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import io
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db.reports import html as h
from rulem_db.reports.palette import SEVERITY_COLOURS  # error red, warning orange, info blue

if TYPE_CHECKING:  # geopandas and matplotlib load only when a map is drawn
    import geopandas as gpd

TZ = "America/Chicago"  # the District's clock, as in the run report
PAPER = {"letter": "letter", "a4": "A4"}
UNIT_PLACES = {"acres": 4, "ft": 2, "ft3": 0, "days": 1}
# Checks whose failure is a condition of issuance still to be met (Rule M 5(e), 6, 6(d),
# 6(e)(v), 8): what the permittee records or submits, not what the design must change.
CONDITION_CHECKS = {"declaration_missing": "declaration", "easement_coverage": "easement",
                    "vegetation_plan": "vegetation plan"}
# What the map draws besides parcels and findings, bottom to top: (label, face, edge, hatch).
SITE_STYLE = {
    "wetland": ("wetland as of the baseline date", "#a6cee3", "#1f78b4", None),
    "buffer": ("buffer", "#d9f0a3", "#78a22f", None),
    "replacement": ("replacement", "#74c476", "#006d2c", None),
    "impact": ("impact", "#fdae6b", "#a63603", "xx"),
}
TRANSECT_COLOURS = {"pass": "#4d4d4d", "fail": None}  # a failing transect takes the error colour


@dataclass(frozen=True)
class PermitReportFiles:
    """The files written for a permit, the PDF's page count and the seconds it took."""

    html: Path
    pdf: Path
    map_png: Path
    pages: int
    seconds: float


class UnknownPermit(LookupError):
    """The permit number is not in the database."""


@dataclass
class PermitDocument:
    """What the document shows, as read from the database."""

    permit: dict[str, Any]
    balance: dict[str, Any]
    parcels: list[dict[str, Any]]
    transfers: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    conditions: list[dict[str, Any]]
    versions: dict[str, Any]
    batches: list[dict[str, Any]]
    site: dict[str, gpd.GeoDataFrame]


def _rows(conn: sa.Connection, sql: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sa.text(sql), params).mappings().all()]


def _columns(conn: sa.Connection, view: str) -> set[str]:
    """The columns of a pub view (empty when it does not exist): the review states of findings
    and the record layers are read when the database has them, so the document works with and
    without them."""
    return set(conn.execute(sa.text(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = 'pub' AND table_name = :v"), {"v": view}).scalars())


def read_permit(conn: sa.Connection, permit_no: str) -> PermitDocument:
    """Everything the document of permit_no shows; UnknownPermit when there is no such permit."""
    permit = _rows(conn, "SELECT p.*, b.baseline_on AS wetland_on FROM pub.permit p "
                   "JOIN pub.permit_balance b USING (permit_id) WHERE p.permit_no = :n",
                   n=permit_no)
    if not permit:
        some = conn.execute(sa.text(
            "SELECT permit_no FROM pub.permit ORDER BY permit_no LIMIT 3")).scalars().all()
        hint = f" (e.g. {', '.join(some)})" if some else ""
        raise UnknownPermit(
            f"no permit {permit_no!r} in this database: `rulem-db balance --permits` lists "
            f"every permit number{hint}")
    p = permit[0]
    pid = p["permit_id"]
    balance = _rows(conn, "SELECT * FROM pub.permit_balance WHERE permit_id = :p", p=pid)[0]
    # Per parcel, the permit's published entries summed as pub.permit_balance sums them, so the
    # parcel rows add up to the permit's figures to the last digit.
    parcels = _rows(conn, """
        SELECT m.*, m.counted_acres + m.transfer_in_acres - m.transfer_out_acres AS credit_acres,
               m.counted_acres + m.transfer_in_acres - m.transfer_out_acres - m.required_acres
                 AS balance_acres
        FROM (
        SELECT coalesce(e.pin, '(not allocated to a parcel)') AS pin,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'impact'), 0) AS impact_acres,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'required'), 0)
                 AS required_acres,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'credit'), 0) AS counted_acres,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'transfer_in'), 0)
                 AS transfer_in_acres,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'transfer_out'), 0)
                 AS transfer_out_acres,
               coalesce(sum(e.acres) FILTER (WHERE e.measure = 'credit_proposed'), 0)
                 AS credit_proposed_acres
        FROM pub.ledger_entry e WHERE e.permit_id = :p
        GROUP BY e.pin) m ORDER BY m.pin LIKE '(%' , m.pin""", p=pid)
    transfers = _rows(conn, """
        SELECT credit_transfer_id, transferred_on, acres,
               coalesce(from_permit_no, 'District project ' || from_district_project)
                 AS from_owner, to_permit_no,
               CASE WHEN to_permit_id = :p THEN 'in' ELSE 'out' END AS direction
        FROM pub.credit_transfer WHERE from_permit_id = :p OR to_permit_id = :p
        ORDER BY transferred_on, credit_transfer_id""", p=pid)
    review = [c for c in ("review_state", "waiver_reference") if c in _columns(conn, "finding")]
    review_cols = "".join(f", f.{c}" for c in review)
    findings = _rows(conn, f"""
        SELECT f.finding_id, f.paragraph, f.check_code, f.sort_order, f.severity, f.parcel_pin,
               f.measured_value, f.limit_value, f.unit, f.message{review_cols}
        FROM pub.finding f WHERE f.permit_id = :p
        ORDER BY f.sort_order, f.paragraph, f.check_code, f.finding_id""", p=pid)
    checks = _rows(conn, """
        SELECT paragraph, check_code, sort_order, title, severity, outcome, measured_value,
               limit_value, unit, evaluated_count, finding_count, message, run_id, checked_at
        FROM pub.permit_compliance WHERE permit_id = :p
        ORDER BY sort_order, paragraph, check_code""", p=pid)
    return PermitDocument(
        permit=p, balance=balance, parcels=parcels, transfers=transfers, checks=checks,
        findings=findings, conditions=_conditions(conn, pid, checks),
        versions=_versions(conn, pid, checks), batches=_batches(conn, p),
        site=_site(conn, p))


def _conditions(conn: sa.Connection, pid: int,
                checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conditions of issuance still open: those the checks find unmet (declarations,
    easement coverage, vegetation plan), the open rows of pub.permit_condition and the sureties
    still held (pub.financial_assurance), when the database has those layers."""
    rows = [{"kind": CONDITION_CHECKS[c["check_code"]], "source": f"check {c['paragraph']} "
             f"{c['check_code']}", "condition": c["message"] or c["title"],
             "state": c["outcome"].replace("_", " "), "due_on": None}
            for c in checks
            if c["check_code"] in CONDITION_CHECKS and c["outcome"] in ("fail", "not_evaluated")]
    if {"condition", "kind", "state", "due_on"} <= _columns(conn, "permit_condition"):
        rows += [dict(r, source="permit condition") for r in _rows(conn, """
            SELECT kind, condition, state, due_on FROM pub.permit_condition
            WHERE permit_id = :p AND state = 'open' ORDER BY due_on NULLS LAST, condition""",
            p=pid)]
    if {"amount", "instrument", "released_on"} <= _columns(conn, "financial_assurance"):
        rows += [{"kind": "surety", "source": "financial assurance",
                  "condition": f"{r['instrument'].replace('_', ' ')} of "
                               f"${r['amount']:,.2f} posted {h.fmt(r['posted_on']) or '(date?)'}",
                  "state": "held", "due_on": None}
                 for r in _rows(conn, """
            SELECT instrument, amount, posted_on FROM pub.financial_assurance
            WHERE permit_id = :p AND released_on IS NULL ORDER BY posted_on""", p=pid)]
    return rows


def _versions(conn: sa.Connection, pid: int, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs and the software the figures come from."""
    check_runs = sorted({(c["run_id"], c["checked_at"]) for c in checks})
    ledger_runs = _rows(conn, """
        SELECT e.run_id, e.run_mode AS mode, max(e.posted_at) AS posted_at, count(*) AS entries
        FROM pub.ledger_entry e
        WHERE e.permit_id = :p GROUP BY e.run_id, e.run_mode ORDER BY e.run_id""", p=pid)
    # Alembic's table is the owner's: the writer login (the command's default) is given the
    # revision this rulem-db migrates to, and the SQL files' record, which it may read
    if conn.execute(sa.text(
            "SELECT has_table_privilege('ops.alembic_version', 'SELECT')")).scalar():
        revision = conn.execute(sa.text("SELECT version_num FROM ops.alembic_version")).scalar()
    else:
        from alembic.script import ScriptDirectory

        head = ScriptDirectory.from_config(dbmod.alembic_config()).get_current_head()
        revision = f"{head} (this rulem-db's head; the database's record is the owner's)"
    sql_files = conn.execute(sa.text(
        "SELECT count(*) AS files, max(applied_at) AS last FROM ops.sql_applied")).one()
    try:
        software = importlib.metadata.version("rulem-db")
    except importlib.metadata.PackageNotFoundError:
        software = "unknown"
    return {"check_runs": check_runs, "ledger_runs": ledger_runs, "revision": revision,
            "sql_files": f"{sql_files.files} applied, the last at "
                         f"{h.fmt(_local(sql_files.last))}",
            "software": software,
            "server": conn.execute(sa.text("SELECT current_database()")).scalar()}


def _batches(conn: sa.Connection, permit: dict[str, Any]) -> list[dict[str, Any]]:
    """The ingest batches of the current features the document rests on: the permit's own
    features in every layer that names a permit, its parcels, and the wetlands and delineations
    as of its baseline date (each feature names the batch it came in)."""
    # the published layer views (a version and a batch per row) that name a permit
    layers = conn.execute(sa.text("""
        SELECT c.table_name FROM information_schema.columns c
        WHERE c.table_schema = 'pub' AND c.column_name IN ('permit_id', 'batch_id', 'version_id')
        GROUP BY c.table_name HAVING count(*) = 3
        ORDER BY c.table_name""")).scalars().all()
    # view names come from the catalogue, never from user input
    parts = [f"SELECT '{name}'::text AS layer, batch_id FROM pub.{name} WHERE permit_id = :p"
             for name in layers if name.isidentifier()]
    parts.append("SELECT 'permit', batch_id FROM pub.permit WHERE permit_id = :p")
    parts.append("SELECT 'parcel', batch_id FROM pub.parcel "
                 "WHERE pin_normalized = ANY(:pins) AND plan_area_id = :a")
    parts.append("SELECT 'wetland', w.batch_id FROM core.wetland_layer(:a, :on) l "
                 "JOIN core.wetland w ON w.version_id = l.version_id")
    parts.append("SELECT 'delineation', d.batch_id FROM pub.delineation d WHERE "
                 "d.delineation_id IN (SELECT delineation_id FROM core.wetland_layer(:a, :on))")
    sql = f"""
        WITH used AS ({' UNION '.join(parts)})
        SELECT u.layer, b.batch_id, b.file_name, b.file_sha256, b.finished_at AS loaded_at,
               b.created_by
        FROM used u JOIN ops.batch b ON b.batch_id = u.batch_id
        ORDER BY u.layer, b.batch_id"""
    return _rows(conn, sql, p=permit["permit_id"], pins=list(permit["parcel_pins"] or []),
                 a=permit["plan_area_id"], on=permit["wetland_on"])


def _site(conn: sa.Connection, permit: dict[str, Any]) -> dict[str, gpd.GeoDataFrame]:
    """The map's layers, clipped to the site: the permit's parcels, impacts, replacement and
    buffers plus a margin (a quarter of the larger side, at least 40 m)."""
    import geopandas as gpd

    params = {"p": permit["permit_id"], "a": permit["plan_area_id"],
              "pins": list(permit["parcel_pins"] or []), "on": permit["wetland_on"]}
    site = """WITH own AS (
        SELECT geom FROM pub.parcel WHERE plan_area_id = :a AND pin_normalized = ANY(:pins)
        UNION ALL SELECT geom FROM pub.impact WHERE permit_id = :p
        UNION ALL SELECT geom FROM pub.replacement WHERE permit_id = :p
        UNION ALL SELECT geom FROM pub.buffer WHERE permit_id = :p),
      box AS (SELECT ST_Envelope(ST_Collect(geom)) AS b FROM own),
      site AS (SELECT ST_Expand(b, greatest(40, 0.25 * greatest(ST_XMax(b) - ST_XMin(b),
                                                                  ST_YMax(b) - ST_YMin(b))))
                        AS geom FROM box)"""

    def read(sql: str) -> gpd.GeoDataFrame:
        return gpd.read_postgis(sa.text(f"{site} {sql}"), conn, geom_col="geom", params=params)

    clip = "ST_Intersection(x.geom, s.geom) AS geom"
    return {
        "site": read("SELECT geom FROM site"),
        "parcels": read(f"""
            SELECT x.pin_display AS pin, x.pin_normalized = ANY(:pins) AS own, b.status,
                   (SELECT string_agg(pm.permit_no, ' ' ORDER BY pm.permit_no) FROM pub.permit pm
                    WHERE x.pin_normalized = ANY(pm.parcel_pins)) AS permits, {clip}
            FROM pub.parcel x JOIN site s ON x.geom && s.geom
            LEFT JOIN pub.parcel_balance b ON b.parcel_id = x.parcel_id
            WHERE x.plan_area_id = :a AND ST_Intersects(x.geom, s.geom)"""),
        "wetland": read(f"""SELECT {clip} FROM core.wetland_layer(:a, :on) x
            JOIN site s ON ST_Intersects(x.geom, s.geom)"""),
        "buffer": read(f"SELECT {clip} FROM pub.buffer x, site s WHERE x.permit_id = :p"),
        "replacement": read(f"""SELECT x.permit_no, {clip} FROM pub.replacement x, site s
            WHERE ST_Intersects(x.geom, s.geom)"""),
        "impact": read(f"""SELECT x.permit_no, {clip} FROM pub.impact x, site s
            WHERE ST_Intersects(x.geom, s.geom)"""),
        "trail": read(f"SELECT {clip} FROM pub.trail x, site s WHERE x.permit_id = :p"),
        "markers": read("SELECT x.geom FROM pub.buffer_marker x WHERE x.permit_id = :p"),
        "transects": read("""SELECT x.outcome, x.geom FROM pub.buffer_transect x
            WHERE x.permit_id = :p"""),
        "findings": read("""SELECT x.severity, x.check_code, x.geom FROM pub.finding x
            WHERE x.permit_id = :p AND x.geom IS NOT NULL"""),
    }


def site_map(doc: PermitDocument, dpi: int = 150) -> bytes:
    """The PNG of the site map: parcels (own permit's coloured by balance) labelled with PINs
    and the permits on them, the wetland as of the baseline date, buffers with their transects,
    impacts and replacement, findings in the severity colours, legend and scale bar."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from rulem_db.reports.map import BALANCE_COLOURS, _scale_bar

    s = doc.site
    fig, ax = plt.subplots(figsize=(7.2, 5.4), dpi=dpi)
    try:
        handles: list = []
        parcels = s["parcels"]
        if len(parcels):
            # the permit's parcels tinted by their balance, so what is drawn on them stays
            # readable; the figures are in the tables
            faces = [to_rgba(BALANCE_COLOURS.get(st or "none", "#ffffff"), 0.3) if own
                     else to_rgba("#f4f4f4")
                     for own, st in zip(parcels["own"], parcels["status"], strict=True)]
            parcels.plot(ax=ax, color=faces, edgecolor="#555555", linewidth=0.6, zorder=1)
            own = parcels[parcels["own"]]
            if len(own):
                own.boundary.plot(ax=ax, color="#000000", linewidth=1.6, zorder=6)
                handles.append(Patch(facecolor=to_rgba(BALANCE_COLOURS.get(
                    doc.balance["status"], "#ffffff"), 0.3), edgecolor="#000000", linewidth=1.6,
                    label=f"parcel of {doc.permit['permit_no']}: {doc.balance['status']}"))
            handles.append(Patch(facecolor="#f4f4f4", edgecolor="#555555",
                                 label="other parcel"))
        for z, (name, (label, face, edge, hatch)) in enumerate(SITE_STYLE.items(), start=2):
            layer = s[name]
            if len(layer) and layer.geometry.notna().any():
                layer.plot(ax=ax, facecolor=face, edgecolor=edge, linewidth=0.8, hatch=hatch,
                           alpha=0.85, zorder=z)
                handles.append(Patch(facecolor=face, edgecolor=edge, hatch=hatch, label=label))
        trails = s["trail"]
        if len(trails) and trails.geometry.notna().any():
            trails.plot(ax=ax, facecolor="#8c6d31", edgecolor="#5b4520", linewidth=0.6,
                        zorder=6)
            handles.append(Patch(facecolor="#8c6d31", edgecolor="#5b4520", label="trail"))
        markers = s["markers"]
        if len(markers):
            markers.plot(ax=ax, color="#000000", marker="^", markersize=14, zorder=9)
            handles.append(Line2D([0], [0], color="#000000", marker="^", lw=0, markersize=5,
                                  label="buffer marker"))
        transects = s["transects"]
        if len(transects):
            for outcome in ("pass", "fail"):
                part = transects[transects["outcome"] == outcome]
                colour = TRANSECT_COLOURS[outcome] or SEVERITY_COLOURS["error"]
                if len(part):
                    part.plot(ax=ax, color=colour, linewidth=0.5 if outcome == "pass" else 0.9,
                              zorder=7)
                    handles.append(Line2D([0], [0], color=colour, lw=1,
                                          label=f"buffer transect: {outcome}"))
        findings = s["findings"]
        for severity, colour in SEVERITY_COLOURS.items():
            part = findings[findings["severity"] == severity]
            if not len(part):
                continue
            kinds = part.geometry.geom_type.str.replace("Multi", "")
            if (kinds == "Polygon").any():
                part[kinds == "Polygon"].plot(ax=ax, facecolor="none", edgecolor=colour,
                                              hatch="////", linewidth=1.8, zorder=8)
            if (kinds == "LineString").any():
                part[kinds == "LineString"].plot(ax=ax, color=colour, linewidth=2.4, zorder=8)
            if (kinds == "Point").any():
                part[kinds == "Point"].plot(ax=ax, color=colour, markersize=30,
                                            edgecolor="white", zorder=9)
            handles.append(Patch(facecolor="none", edgecolor=colour, hatch="////",
                                 linewidth=1.8, label=f"finding: {severity}"))
        for _, r in parcels.iterrows():
            if r["geom"] is None or r["geom"].is_empty:
                continue
            point = r["geom"].representative_point()
            permits = r["permits"] if isinstance(r["permits"], str) else ""
            text = r["pin"] + (f"\n{permits}" if permits else "")
            ax.annotate(text, (point.x, point.y), ha="center", va="center", zorder=10,
                        fontsize=7 if r["own"] else 6,
                        fontweight="bold" if r["own"] else "normal",
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                              "alpha": 0.75, "linewidth": 0})
        bounds = s["site"].total_bounds
        if len(s["site"]) and all(v == v for v in bounds):
            ax.set_xlim(bounds[0], bounds[2])
            ax.set_ylim(bounds[1], bounds[3])
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  frameon=False)
        _scale_bar(ax)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.1)
        return buf.getvalue()
    finally:
        plt.close(fig)


def state(check: dict[str, Any]) -> str:
    """A check's state as the document says it: pass, fail (an error), warning or info (a
    failed check of that severity), not applicable, not evaluated."""
    if check["outcome"] == "fail" and check["severity"] in ("warning", "info"):
        return check["severity"]
    return check["outcome"].replace("_", " ")


def _measure(value: Any, unit: str | None) -> str:
    """A measured value or limit to the precision its unit is read in."""
    if value is None:
        return ""
    return f"{value:,.{UNIT_PLACES.get(unit or '', 4)}f}"


CSS = """
@page { size: %(paper)s; margin: 13mm 12mm 15mm 12mm;
        @bottom-left { content: "Rule M decision document, permit %(permit)s";
                       font-size: 8pt; color: #555; }
        @bottom-right { content: "page " counter(page) " of " counter(pages);
                        font-size: 8pt; color: #555; } }
.state { font-weight: 600; padding: 0 4px; border-radius: 3px; }
.st-fail { background: %(error)s; color: #fff; }
.st-warning { background: %(warning)s; color: #fff; }
.st-info { background: %(info)s; color: #fff; }
.st-pass { background: #d9efd9; }
.st-not-applicable, .st-not-evaluated { background: #eeeeee; }
.st-not-evaluated { border: 1px solid %(error)s; }
.sev-error { color: %(error)s; font-weight: 600; }
.sev-warning { color: %(warning)s; font-weight: 600; }
.sev-info { color: %(info)s; font-weight: 600; }
img.map { max-width: 100%%; max-height: 108mm; display: block; margin: 4px auto; }
@media print {
  body { margin: 0; max-width: none; font-size: 9pt; }
  h1 { font-size: 15pt; } h2 { font-size: 12pt; margin-top: 14pt; }
  table { font-size: 7.5pt; width: 100%%; }
  td { white-space: normal; }
  table.fixed { table-layout: fixed; }
  table.fixed td, table.fixed th { overflow-wrap: anywhere; padding: 2px 4px; }
  table.kv { width: auto; }
  tr, img.map { page-break-inside: avoid; }
  .first { page-break-after: always; }
  .headline { font-size: 10pt; padding: 5px 8px; margin: 6px 0; }
}
"""


def _state_label(word: str) -> str:
    return f'<span class="state st-{word.replace(" ", "-")}">{h.esc(word)}</span>'


def _table(columns: tuple[str, ...], rows: list[tuple], html_columns: tuple[str, ...] = (),
           numeric: tuple[str, ...] = (), total: tuple | None = None, empty: str = "none",
           widths: tuple[int, ...] = ()) -> str:
    """A table whose html_columns hold ready HTML (state labels) and the rest plain values;
    widths (percent per column) fix the layout, so a wide table keeps to the paper."""
    if not rows:
        return f'<p class="note">{h.esc(empty)}</p>'

    def row(values: tuple, attrs: str = "") -> str:
        cells = []
        for c, v in zip(columns, values, strict=True):
            if c in html_columns:
                cells.append(f"<td>{v}</td>")
            elif c in numeric or (isinstance(v, int | float) and not isinstance(v, bool)):
                cells.append(f'<td class="num">{h.esc(h.fmt(v))}</td>')
            else:
                cells.append(f"<td>{h.esc(h.fmt(v))}</td>")
        return f"<tr{attrs}>{''.join(cells)}</tr>"

    body = [row(r) for r in rows] + ([row(total, ' class="total"')] if total else [])
    head = "".join(f"<th>{h.esc(c)}</th>" for c in columns)
    cols = ""
    if widths:
        cols = "<colgroup>" + "".join(f'<col style="width: {w}%">' for w in widths) + \
            "</colgroup>"
    attrs = ' class="fixed"' if widths else ""
    return (f"<table{attrs}>{cols}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table>")


def render_html(doc: PermitDocument, map_png: bytes, paper: str = "letter") -> str:
    """The document as one self-contained page, laid out for the screen and for print."""
    p, b = doc.permit, doc.balance
    no = p["permit_no"]
    failing = [c for c in doc.checks if c["outcome"] in ("fail", "not_evaluated")]
    errors = sum(1 for c in failing if c["severity"] == "error")
    kind = "failed" if errors else ("changed" if failing else "same")
    headline = (f"{len(failing)} of {len(doc.checks)} Rule M checks fail or could not be "
                f"evaluated ({errors} errors); balance {h.fmt(b['balance_acres'])} acres "
                f"({b['status']}); {len(doc.conditions)} conditions of issuance open."
                if failing else
                f"Every one of the {len(doc.checks)} Rule M checks passes or does not apply; "
                f"balance {h.fmt(b['balance_acres'])} acres ({b['status']}); "
                f"{len(doc.conditions)} conditions of issuance open.")
    facts = h.key_values([
        ("permit", no), ("applicant", p.get("applicant")), ("status", p.get("status")),
        ("decided", p.get("decided_on")), ("wetland as of (baseline date)", p["wetland_on"]),
        ("parcels", ", ".join(r["pin"] for r in doc.parcels if r["pin"][0] != "(") or
         ", ".join(p.get("parcel_pins") or [])),
        ("description", p.get("description"))])
    review = any("review_state" in f for f in doc.findings)
    finding_head = ("para.", "check", "severity", "parcel", "measured", "limit", "unit",
                    "what is wrong") + (("review",) if review else ())
    finding_rows = [
        (f["paragraph"], f["check_code"],
         f'<span class="sev-{h.esc(f["severity"])}">{h.esc(f["severity"])}</span>',
         f["parcel_pin"], _measure(f["measured_value"], f["unit"]),
         _measure(f["limit_value"], f["unit"]), f["unit"], f["message"])
        + ((" ".join(filter(None, (f.get("review_state"), f.get("waiver_reference")
                                   and f"({f['waiver_reference']})"))),) if review else ())
        for f in doc.findings]
    first = [
        f'<div class="headline {kind}">{h.esc(headline)}</div>',
        '<div class="grid">', facts, "</div>",
        h.image(map_png, f"site map of permit {no}"),
        f"<h2>Findings ({len(doc.findings)})</h2>",
        _table(finding_head, finding_rows, html_columns=("severity",),
               numeric=("measured", "limit"), empty="No findings: every check passes.",
               widths=(7, 15, 8, 11, 9, 8, 6, 36) if not review else
               (7, 14, 8, 10, 9, 8, 6, 27, 11)),
    ]
    parcel_rows = [(r["pin"], r["impact_acres"], r["required_acres"], r["counted_acres"],
                    r["transfer_in_acres"], r["transfer_out_acres"], r["credit_acres"],
                    r["balance_acres"], r["credit_proposed_acres"]) for r in doc.parcels]
    total = ("permit " + no, b["impact_acres"], b["required_acres"],
             sum(r["counted_acres"] for r in doc.parcels),
             b["transfer_in_acres"], b["transfer_out_acres"], b["credit_acres"],
             b["balance_acres"], b["credit_proposed_acres"])
    check_review: dict[tuple[str, str], str] = {}
    if review:
        for f in doc.findings:
            key = (f["paragraph"], f["check_code"])
            words = set(filter(None, check_review.get(key, "").split(", ")))
            words.add(f.get("review_state") or "")
            check_review[key] = ", ".join(sorted(w for w in words if w))
    check_head = ("para.", "check", "requires", "state") + (("review",) if review else ()) \
        + ("measured", "limit", "unit", "cases", "worst case")
    check_rows = [
        (c["paragraph"], c["check_code"], c["title"], _state_label(state(c)))
        + ((check_review.get((c["paragraph"], c["check_code"]), ""),) if review else ())
        + (_measure(c["measured_value"], c["unit"]), _measure(c["limit_value"], c["unit"]),
           c["unit"], f"{c['finding_count']} of {c['evaluated_count']}"
           if c["evaluated_count"] is not None else "", c["message"])
        for c in doc.checks]
    v = doc.versions
    version_rows = [("check run", f"{run} finished {h.fmt(_local(at))}")
                    for run, at in v["check_runs"]]
    version_rows += [("ledger run", f"{r['run_id']} ({r['mode']}) posted "
                      f"{h.fmt(_local(r['posted_at']))}: {r['entries']} entries of this permit")
                     for r in v["ledger_runs"]]
    version_rows += [("schema revision", v["revision"]), ("SQL files", v["sql_files"]),
                     ("rulem-db", v["software"]),
                     ("database", v["server"]),
                     ("written", h.fmt(_local(dt.datetime.now(dt.UTC))))]
    rest = [
        "<h2>Impact and credit (acres, Rule M 7(b): one acre replaced for each acre impacted)"
        "</h2>",
        _table(("parcel", "impact", "required", "credit counted", "transfer in", "transfer out",
                "credit net", "balance", "credit proposed (memo)"), parcel_rows, total=total,
               empty="No ledger entries for this permit."),
        f'<p class="note">Balance {h.fmt(b["balance_acres"])} acres: {h.esc(b["status"])}. '
        "The rows are the permit's ledger entries by parcel; the total row is "
        "pub.permit_balance.</p>",
        "<h3>Credit transfers</h3>",
        _table(("transfer", "on", "direction", "from", "to", "acres"),
               [(t["credit_transfer_id"], t["transferred_on"], t["direction"], t["from_owner"],
                 t["to_permit_no"], t["acres"]) for t in doc.transfers],
               empty="No credit transferred to or from this permit."),
        f"<h2>Rule M checks ({len(doc.checks)})</h2>",
        _table(check_head, check_rows, html_columns=("state",),
               numeric=("measured", "limit", "cases"), empty="The permit has not been checked.",
               widths=(7, 15, 16, 8, 7, 9, 7, 8, 6, 17) if review else
               (7, 15, 18, 8, 9, 7, 8, 6, 22)),
        "<h2>Conditions of issuance still open</h2>",
        _table(("kind", "condition", "state", "due", "from"),
               [(c["kind"], c["condition"], c["state"], c["due_on"], c["source"])
                for c in doc.conditions], empty="None open."),
        "<h2>Data versions</h2>",
        h.key_values(version_rows),
        "<h3>Files the features came from</h3>",
        _table(("layer", "batch", "file", "loaded", "by", "sha256"),
               [(r["layer"], r["batch_id"], r["file_name"], _local(r["loaded_at"]),
                 r["created_by"], (r["file_sha256"] or "")[:12]) for r in doc.batches]),
    ]
    colours = {"paper": PAPER[paper], "permit": h.esc(no), **SEVERITY_COLOURS}
    title = f"Rule M decision document: permit {no}"
    sub = (f"Rice Creek Watershed District, Rule M; plan area {p['plan_area_id']}; "
           f"produced {h.fmt(_local(dt.datetime.now(dt.UTC)))}")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{h.esc(title)}</title><style>{h.CSS}{CSS % colours}</style></head><body>"
            f'<div class="first"><h1>{h.esc(title)}</h1><p class="sub">{h.esc(sub)}</p>'
            f"{''.join(first)}</div>{''.join(rest)}</body></html>\n")


def _local(when: dt.datetime | None) -> dt.datetime | None:
    return when.astimezone(ZoneInfo(TZ)) if when is not None else None


def write_permit_report(url: str, permit_no: str, out: Path,
                        paper: str = "letter") -> PermitReportFiles:
    """Read permit_no's document from the database at url and write its HTML, PDF and map into
    out (created if missing). The PDF is rendered before anything is written, so an unknown
    permit (UnknownPermit) or a failure leaves out as it was."""
    if paper not in PAPER:
        raise ValueError(f"paper {paper!r}: choose one of {', '.join(PAPER)}")
    weasyprint = _weasyprint()
    started = time.monotonic()
    with dbmod.connect(url) as conn:
        doc = read_permit(conn, permit_no)
    png = site_map(doc)
    page = render_html(doc, png, paper)
    rendered = weasyprint.HTML(string=page).render()
    pdf = rendered.write_pdf()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "permit-" + re.sub(r"[^A-Za-z0-9._-]", "_", permit_no)
    map_path = out / f"{stem}-map.png"
    map_path.write_bytes(png)
    html_path = out / f"{stem}.html"
    html_path.write_text(page, encoding="utf-8")
    pdf_path = out / f"{stem}.pdf"
    pdf_path.write_bytes(pdf)
    return PermitReportFiles(html_path, pdf_path, map_path, len(rendered.pages),
                             time.monotonic() - started)


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
