"""Reading a permit's decision document: every figure, finding and word it shows, from pub.

Why apart from the rendering: what a district signs must come from the published record and
nothing else, so this module is the one place that touches the database, and it reads schema
pub only (views and their functions), which a staff or GIS login (rulem_staff, rulem_gis) may
read; the rendering (render.py, draw.py) lays out what is read here and computes nothing.

--as-of DATE reads the ledger (figures and the explained entries) and the parameters as of
the end of DATE by their effective dates, and a condition's state as it stood then (met on a
later date: still open then); the findings are those of the last check run, as the document
says.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:  # geopandas loads only when a map is drawn
    import geopandas as gpd

# Checks whose failure is a condition of issuance still to be met (Rule M 5(e), 6, 6(d),
# 6(e)(v), 8): what the permittee records or submits, not what the design must change.
CONDITION_CHECKS = {"declaration_missing": "declaration", "easement_coverage": "easement",
                    "vegetation_plan": "vegetation plan"}
# The district text of the document (sql/032), read as parameters in force on the date.
DISTRICT_TEXT = ("district_name", "district_address", "district_contact", "decision_signatory",
                 "decision_appeal_text")


class UnknownPermit(LookupError):
    """The permit number is not in the database."""


@dataclass
class PermitDocument:
    """What the document shows, as read from pub."""

    permit: dict[str, Any]
    as_of: dt.date | None                      # None: now
    balance: dict[str, Any]
    parcels: list[dict[str, Any]]              # the permit's parcels (PINs, acres)
    explain: list[dict[str, Any]]              # pub.balance_explain rows of the permit
    transfers: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    findings: list[dict[str, Any]]
    conditions: list[dict[str, Any]]
    parameters: dict[str, dict[str, Any]]      # name -> the row in force on the date
    provenance: dict[str, Any]
    batches: list[dict[str, Any]]
    site: dict[str, gpd.GeoDataFrame] = field(default_factory=dict)

    @property
    def text(self) -> dict[str, str]:
        """The district text parameters (letterhead, signatory, appeal paragraph)."""
        return {n: (self.parameters.get(n) or {}).get("value_text") or "" for n in DISTRICT_TEXT}


def _rows(conn: sa.Connection, sql: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sa.text(sql), params).mappings().all()]


def read_permit(conn: sa.Connection, permit_no: str, as_of: dt.date | None = None,
                with_site: bool = True) -> PermitDocument:
    """Everything the document of permit_no shows, as of the end of as_of (None: now);
    UnknownPermit when there is no such permit. with_site=False leaves the map's layers out
    (a caller that draws no map)."""
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
    if as_of is None:
        balance = _rows(conn, "SELECT * FROM pub.permit_balance WHERE permit_id = :p", p=pid)
    else:
        balance = _rows(conn, "SELECT * FROM pub.permit_balance_as_of(:on) WHERE permit_id = :p",
                        p=pid, on=as_of)
    explain = _rows(conn, """
        SELECT row_kind, measure, entry_kind, pin, acres, balance_effect_acres, effective_on,
               run_id, reason, feature_keys, wetland_keys, source_files, check_code,
               paragraph, severity, finding_message, measured_value, unit, review_state
        FROM pub.balance_explain(p_permit => :n, p_as_of => :on)""", n=permit_no, on=as_of)
    parcels = _rows(conn, """
        SELECT x.pin_display AS pin, x.site_address, x.area_acres FROM pub.parcel x
        WHERE x.plan_area_id = :a AND x.pin_normalized = ANY(:pins) ORDER BY x.pin_display""",
        a=p["plan_area_id"], pins=list(p["parcel_pins"] or []))
    transfers = _rows(conn, """
        SELECT credit_transfer_id, transferred_on, acres,
               coalesce(from_permit_no, 'District project ' || from_district_project)
                 AS from_owner, to_permit_no,
               CASE WHEN to_permit_id = :p THEN 'in' ELSE 'out' END AS direction
        FROM pub.credit_transfer
        WHERE (from_permit_id = :p OR to_permit_id = :p)
          AND (CAST(:on AS date) IS NULL OR transferred_on <= :on)
        ORDER BY transferred_on, credit_transfer_id""", p=pid, on=as_of)
    findings = _rows(conn, """
        SELECT f.finding_id, f.paragraph, f.check_code, f.sort_order, f.severity, f.parcel_pin,
               f.title, f.measured_value, f.limit_value, f.unit, f.message, f.review_state,
               f.waiver_reference
        FROM pub.finding f WHERE f.permit_id = :p
        ORDER BY f.sort_order, f.paragraph, f.check_code, f.finding_id""", p=pid)
    checks = _rows(conn, """
        SELECT paragraph, check_code, sort_order, title, severity, outcome, measured_value,
               limit_value, unit, evaluated_count, finding_count, message, run_id, checked_at
        FROM pub.permit_compliance WHERE permit_id = :p
        ORDER BY sort_order, paragraph, check_code""", p=pid)
    on = as_of or dt.date.today()
    parameters = {r["name"]: r for r in _rows(conn, """
        SELECT name, value_num, value_text, unit, rule_ref, effective_on FROM pub.parameter
        WHERE plan_area_id = :a AND effective_on <= :on
          AND (effective_to IS NULL OR effective_to > :on)""", a=p["plan_area_id"], on=on)}
    doc = PermitDocument(
        permit=p, as_of=as_of, balance=balance[0] if balance else {}, parcels=parcels,
        explain=explain, transfers=transfers, checks=checks, findings=findings,
        conditions=conditions(conn, pid, checks, as_of), parameters=parameters,
        provenance=provenance(conn, pid, checks), batches=[])
    if with_site:
        doc.site = site(conn, p)
        doc.batches = batches(conn, p, doc.site)
    return doc


def conditions(conn: sa.Connection, pid: int, checks: list[dict[str, Any]],
               as_of: dt.date | None = None) -> list[dict[str, Any]]:
    """The conditions of issuance: every condition of the permit record with its due date and
    its state (as it stood at the end of as_of: one met later was still open then; an open one
    past its due date is overdue), those the checks find unmet (declarations, easement,
    vegetation plan) and the sureties still held."""
    on = as_of or dt.date.today()
    rows = [{"kind": CONDITION_CHECKS[c["check_code"]],
             "condition": c["message"] or c["title"], "due_on": None, "met_on": None,
             "state": "not met" if c["outcome"] == "fail" else "not evaluated",
             "source": f"Rule M {c['paragraph']}"}
            for c in checks
            if c["check_code"] in CONDITION_CHECKS and c["outcome"] in ("fail", "not_evaluated")]
    for r in _rows(conn, """
            SELECT kind, condition, state, due_on, met_on FROM pub.permit_condition
            WHERE permit_id = :p ORDER BY due_on NULLS LAST, condition""", p=pid):
        state = r["state"]
        if state != "open" and r["met_on"] is not None and r["met_on"] > on:
            state = "open"          # met (or waived) after the date read
        if state == "open" and r["due_on"] is not None and r["due_on"] < on:
            state = "overdue"
        rows.append(dict(r, state=state, met_on=r["met_on"] if state in ("met", "waived")
                         else None, source="permit"))
    rows += [{"kind": "surety", "condition": f"{r['instrument'].replace('_', ' ')} of "
                                             f"${r['amount']:,.2f}",
              "due_on": None, "met_on": r["posted_on"], "state": "held",
              "source": "financial assurance"}
             for r in _rows(conn, """
            SELECT instrument, amount, posted_on FROM pub.financial_assurance
            WHERE permit_id = :p AND (released_on IS NULL OR released_on > :on)
              AND (posted_on IS NULL OR posted_on <= :on)
            ORDER BY posted_on""", p=pid, on=on)]
    return rows


def provenance(conn: sa.Connection, pid: int, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The runs and the software the figures come from: the check run, the ledger runs, this
    rulem-db's version and the schema revision it migrates to (the database's own record is
    the owner's, outside pub)."""
    from alembic.script import ScriptDirectory

    from rulem_db import db as dbmod

    ledger_runs = _rows(conn, """
        SELECT e.run_id, e.run_mode AS mode, max(e.posted_at) AS posted_at, count(*) AS entries
        FROM pub.ledger_entry e
        WHERE e.permit_id = :p GROUP BY e.run_id, e.run_mode ORDER BY e.run_id""", p=pid)
    try:
        software = importlib.metadata.version("rulem-db")
    except importlib.metadata.PackageNotFoundError:
        software = "unknown"
    return {"check_runs": sorted({(c["run_id"], c["checked_at"]) for c in checks}),
            "ledger_runs": ledger_runs, "software": software,
            "revision": ScriptDirectory.from_config(dbmod.alembic_config()).get_current_head(),
            "database": conn.execute(sa.text("SELECT current_database()")).scalar()}


def batches(conn: sa.Connection, permit: dict[str, Any],
            site_layers: dict[str, gpd.GeoDataFrame]) -> list[dict[str, Any]]:
    """The files the document's features came from, one row per layer and file: the permit's
    own features in every published layer that names a permit, its parcels and the wetlands
    drawn as of its baseline date (each feature names its ingest batch)."""
    layers = conn.execute(sa.text("""
        SELECT c.table_name FROM information_schema.columns c
        WHERE c.table_schema = 'pub' AND c.column_name IN ('permit_id', 'batch_id', 'version_id')
          AND c.table_name NOT LIKE '%\\_history'
        GROUP BY c.table_name HAVING count(*) = 3
        ORDER BY c.table_name""")).scalars().all()
    # view names come from the database catalogue, never from request input
    parts = [f"SELECT '{name}'::text AS layer, batch_id FROM pub.{name} WHERE permit_id = :p"
             for name in layers if name.isidentifier()]
    parts.append("SELECT 'permit', batch_id FROM pub.permit WHERE permit_id = :p")
    parts.append("SELECT 'parcel', batch_id FROM pub.parcel "
                 "WHERE pin_normalized = ANY(:pins) AND plan_area_id = :a")
    parts.append("SELECT 'wetland', b FROM unnest(CAST(:wetland AS bigint[])) b")
    wetland = site_layers.get("wetland")
    wetland_batches = ([int(b) for b in wetland["batch_id"].dropna().unique()]
                       if wetland is not None and len(wetland) else [])
    return _rows(conn, f"""
        WITH used AS ({' UNION '.join(parts)})
        SELECT u.layer, b.file_name, b.file_sha256, max(b.finished_at) AS loaded_at,
               string_agg(DISTINCT b.created_by, ', ') AS loaded_by, count(*) AS batches
        FROM used u JOIN pub.ingest_batch b ON b.batch_id = u.batch_id
        GROUP BY u.layer, b.file_name, b.file_sha256
        ORDER BY u.layer, b.file_name""", p=permit["permit_id"],
        pins=list(permit["parcel_pins"] or []), a=permit["plan_area_id"], wetland=wetland_batches)


def site(conn: sa.Connection, permit: dict[str, Any]) -> dict[str, gpd.GeoDataFrame]:
    """The map's layers, clipped to the site: the permit's parcels, impacts, replacement and
    buffers plus a margin (a quarter of the larger side, at least 40 m)."""
    import geopandas as gpd

    params = {"p": permit["permit_id"], "a": permit["plan_area_id"],
              "pins": list(permit["parcel_pins"] or []), "on": permit["wetland_on"]}
    box = """WITH own AS (
        SELECT geom FROM pub.parcel WHERE plan_area_id = :a AND pin_normalized = ANY(:pins)
        UNION ALL SELECT geom FROM pub.impact WHERE permit_id = :p
        UNION ALL SELECT geom FROM pub.replacement WHERE permit_id = :p
        UNION ALL SELECT geom FROM pub.buffer WHERE permit_id = :p),
      box AS (SELECT ST_Envelope(ST_Collect(geom)) AS b FROM own),
      site AS (SELECT ST_Expand(b, greatest(40, 0.25 * greatest(ST_XMax(b) - ST_XMin(b),
                                                                  ST_YMax(b) - ST_YMin(b))))
                        AS geom FROM box)"""

    def read(sql: str) -> gpd.GeoDataFrame:
        return gpd.read_postgis(sa.text(f"{box} {sql}"), conn, geom_col="geom", params=params)

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
        "wetland": read(f"""SELECT x.batch_id, {clip} FROM site s
            CROSS JOIN LATERAL pub.wetland_as_of(:a, :on, s.geom) x"""),
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
