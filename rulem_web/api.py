"""The service's own JSON API: health, a parcel's or permit's balance with its findings, the
plan's balance, permit and parcel search, the 2(a) screen (the map's style and legend are
rulem_web.app's: they need the serve settings).

Why beside tipg: OGC API Features answers "the rows of a view"; the map's panel needs one
parcel's balance and its findings in one answer, as of a date, in acres rounded the way the
ledger publishes them. Every query reads the published views and functions of pub (and
web's stamps), as the reader the pool connects as.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from decimal import Decimal
from typing import Any

import asyncpg
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from rulem_web import screen

router = APIRouter()

PARCEL_FIELDS = ("pin", "parcel_id", "site_address", "owner_name", "impact_acres",
                 "required_acres", "credit_acres", "credit_proposed_acres",
                 "credit_constructed_acres", "credit_hosted_acres", "balance_acres", "status")
PERMIT_FIELDS = ("permit_no", "permit_id", "permit_status", "impact_acres", "required_acres",
                 "credit_acres", "transfer_in_acres", "transfer_out_acres",
                 "credit_proposed_acres", "credit_constructed_acres", "credit_hosted_acres",
                 "balance_acres", "status")
PLAN_FIELDS = ("code", "name", "impact_acres", "required_acres", "credit_acres",
               "credit_proposed_acres", "credit_constructed_acres", "credit_hosted_acres",
               "district_project_credit_acres", "unallocated_balance_acres", "balance_acres",
               "status", "parcels_in_deficit", "permits_in_deficit")
FINDING_SQL = """
SELECT finding_id, permit_no, parcel_pin AS pin, paragraph, check_code AS "check", title,
       severity, message, review_state
FROM pub.finding WHERE {where}
ORDER BY permit_no, sort_order, paragraph, finding_id"""
# Why a figure is what it is (pub.balance_explain, sql/312): the ledger entries standing at the
# reading, whose acres sum to the figures, and the findings of the permits behind them that
# shape the figures (a parcel in deficit because of its permit's 7(b) finding shows it).
EXPLAIN_SQL = """
SELECT row_kind, measure, entry_kind, acres, balance_effect_acres, effective_on, entry_id,
       permit_no, district_project, pin, reason, feature_keys, wetland_keys, finding_id,
       check_code AS "check", paragraph, severity, finding_message AS message, review_state
FROM pub.balance_explain(p_parcel => $1, p_permit => $2, p_as_of => $3::date)"""
ENTRY_FIELDS = ("measure", "entry_kind", "acres", "balance_effect_acres", "effective_on",
                "entry_id", "permit_no", "district_project", "pin", "reason", "feature_keys",
                "wetland_keys")
CAUSE_FIELDS = ("finding_id", "permit_no", "pin", "paragraph", "check", "severity",
                "message", "review_state")
BBOX = ("CASE WHEN {g} IS NULL THEN NULL ELSE ARRAY[ST_XMin(b.e), ST_YMin(b.e), "
        "ST_XMax(b.e), ST_YMax(b.e)] END")
NO_CACHE = {"Cache-Control": "no-cache"}
HEALTH_TIMEOUT_S = 5.0  # a monitor wants an answer, not a hung request, when the DB is gone


def error(status: int, message: str) -> JSONResponse:
    """A one-line JSON error."""
    return JSONResponse({"error": message}, status_code=status, headers=NO_CACHE)


def plain(value: Any) -> Any:
    """JSON numbers for acres (4 decimals, as the ledger publishes them), ISO dates."""
    if isinstance(value, Decimal):
        return float(round(value, 4))
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def record(row: asyncpg.Record, fields: tuple[str, ...]) -> dict[str, Any]:
    """The fields of a row; numerics (doubles from the pool's codec) at the ledger's 4
    decimals."""
    return {f: round(v, 4) if isinstance(v := row[f], float) else plain(v) for f in fields}


def display_pin(pin: str) -> str:
    """A PIN typed with any punctuation, in the published (display) form when it has the
    county's twelve characters (as core.pin_display, sql/025)."""
    bare = re.sub(r"[^0-9A-Za-z]", "", pin)
    if re.fullmatch(r"[0-9]{12}", bare):
        return f"{bare[0:2]}-{bare[2:4]}-{bare[4:6]}-{bare[6:8]}-{bare[8:12]}"
    return pin.strip()


async def explain(conn: asyncpg.Connection, pin: str | None, no: str | None,
                  on: dt.date | None) -> dict[str, list[dict[str, Any]]]:
    """The explained entries and the findings that shape the figures (docs/ledger.md section 5)."""
    rows = await conn.fetch(EXPLAIN_SQL, pin, no, on)
    return {"entries": [record(r, ENTRY_FIELDS) for r in rows if r["row_kind"] == "entry"],
            "causes": [record(r, CAUSE_FIELDS) for r in rows if r["row_kind"] == "finding"]}


def as_of_date(request: Request) -> tuple[dt.date | None, JSONResponse | None]:
    raw = request.query_params.get("as_of")
    if not raw:
        return None, None
    try:
        return dt.date.fromisoformat(raw), None
    except ValueError:
        return None, error(400, f"as_of is not a date (YYYY-MM-DD): {raw!r}")


def pool(request: Request) -> asyncpg.Pool:
    return request.app.state.pool


def health_reason(exc: Exception) -> str:
    """Why the database does not answer, in words that name no server version, SQL or
    address (the service's log has the exception)."""
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return "no database connection free within 5 s (busy or unreachable)"
    if isinstance(exc, asyncpg.PostgresError):
        state = getattr(exc, "sqlstate", "") or "?"
        if state.startswith("28"):
            return f"the database refused the service's login (SQLSTATE {state})"
        if state.startswith("57") or state.startswith("08"):
            return f"the database is shutting down or unreachable (SQLSTATE {state})"
        return f"the database refused the health query (SQLSTATE {state})"
    if isinstance(exc, OSError | asyncpg.InterfaceError):
        return "cannot connect to the database"
    return "the database did not answer (" + type(exc).__name__ + ")"


@router.get("/healthz", tags=["rulem-db"])
async def healthz(request: Request) -> JSONResponse:
    """The process answers, and so does the database (with the latest run and batch)."""
    try:
        async with pool(request).acquire(timeout=HEALTH_TIMEOUT_S) as conn:
            run = await conn.fetchrow(
                "SELECT run_id, status, started_at, finished_at FROM pub.reconciliation_run "
                "ORDER BY run_id DESC LIMIT 1")
            batch = await conn.fetchrow("SELECT * FROM web.latest_batch()")
    except Exception as exc:  # any failure is the database's state, said in one line
        return JSONResponse({"status": "error", "database": health_reason(exc)},
                            status_code=503, headers=NO_CACHE)
    return JSONResponse({
        "status": "ok", "database": "ok",
        "latest_run": {k: plain(v) for k, v in run.items()} if run else None,
        "latest_batch": ({k: plain(v) for k, v in batch.items()}
                         if batch and batch["batch_id"] is not None else None),
    }, headers=NO_CACHE)


@router.get("/api/parcel", tags=["rulem-db"])
async def parcel(request: Request) -> JSONResponse:
    """One parcel's balance (now, or as of a date) with its findings and extent."""
    pin = request.query_params.get("pin")
    if not pin:
        return error(400, "give a parcel's PIN: /api/parcel?pin=NN-NN-NN-NN-NNNN")
    on, bad = as_of_date(request)
    if bad:
        return bad
    pin = display_pin(pin)
    source = "pub.parcel_balance_as_of($2::date)" if on else "pub.parcel_balance"
    # one round trip: the balance, its extent and its findings (as JSON) together
    # by the parcel's id, which ix_finding_parcel serves (by the display PIN every current
    # finding's PIN would be computed: seconds at state size)
    findings = FINDING_SQL.format(where="parcel_id = p.parcel_id")
    sql = (f"SELECT p.*, {BBOX.format(g='p.geom')} AS bbox, "
           f"(SELECT coalesce(json_agg(f), '[]') FROM ({findings}) f) AS findings, "
           "a.site_address, a.owner_name "
           f"FROM {source} p "
           "LEFT JOIN LATERAL (SELECT ST_Transform(ST_Envelope(p.geom), 4326) AS e) b ON true "
           "LEFT JOIN pub.parcel a ON a.parcel_id = p.parcel_id "
           "WHERE p.pin = $1")
    async with pool(request).acquire() as conn:
        row = await conn.fetchrow(sql, pin, *([on] if on else []))
        why = await explain(conn, pin, None, on) if row is not None else {}
    if row is None:
        when = f" as of {on}" if on else ""
        return error(404, f"no parcel with PIN {pin}{when}")
    body = record(row, PARCEL_FIELDS)
    body.update(as_of=plain(on), findings=row["findings"], bbox=plain(row["bbox"]), **why)
    return JSONResponse(body, headers=NO_CACHE)


PERMIT_EXTENT = """
SELECT {bbox} AS bbox FROM (
  SELECT ST_Transform(ST_Envelope(ST_Collect(geom)), 4326) AS e, ST_Collect(geom) AS g FROM (
    SELECT geom FROM pub.impact WHERE permit_no = $1
    UNION ALL SELECT geom FROM pub.replacement WHERE permit_no = $1
    UNION ALL SELECT geom FROM pub.buffer WHERE permit_no = $1) s) b"""


@router.get("/api/permit", tags=["rulem-db"])
async def permit(request: Request) -> JSONResponse:
    """One permit's balance (now, or as of a date) with its findings and extent (its impacts,
    replacement and buffers)."""
    no = (request.query_params.get("no") or "").strip()
    if not no:
        return error(400, "give a permit number: /api/permit?no=24-001")
    on, bad = as_of_date(request)
    if bad:
        return bad
    source = "pub.permit_balance_as_of($2::date)" if on else "pub.permit_balance"
    async with pool(request).acquire() as conn:
        row = await conn.fetchrow(f"SELECT * FROM {source} WHERE permit_no = $1", no,
                                  *([on] if on else []))
        if row is None:
            when = f" as of {on}" if on else ""
            return error(404, f"no permit {no}{when}")
        findings = await conn.fetch(FINDING_SQL.format(where="permit_no = $1"), no)
        bbox = await conn.fetchval(PERMIT_EXTENT.format(bbox=BBOX.format(g="b.g")), no)
        why = await explain(conn, None, no, on)
    body = record(row, PERMIT_FIELDS)
    body.update(as_of=plain(on), findings=[record(f, tuple(f.keys())) for f in findings],
                bbox=plain(bbox), **why)
    return JSONResponse(body, headers=NO_CACHE)


def like_fragment(q: str) -> str:
    """`%q%` for ILIKE, with LIKE's own characters in q taken literally."""
    return "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


@router.get("/api/permits", tags=["rulem-db"])
async def permits(request: Request) -> JSONResponse:
    """Permits whose number starts with (or contains) q: up to 20, by number."""
    q = (request.query_params.get("q") or "").strip()
    like = like_fragment(q)
    sql = f"""
    SELECT p.permit_no, {BBOX.format(g='b.g')} AS bbox
    FROM (SELECT permit_no FROM pub.permit WHERE permit_no ILIKE $1
          ORDER BY (permit_no NOT ILIKE $2), permit_no LIMIT 20) p
    LEFT JOIN LATERAL (
      SELECT ST_Transform(ST_Envelope(ST_Collect(geom)), 4326) AS e, ST_Collect(geom) AS g
      FROM (SELECT geom FROM pub.impact WHERE permit_no = p.permit_no
            UNION ALL SELECT geom FROM pub.replacement WHERE permit_no = p.permit_no
            UNION ALL SELECT geom FROM pub.buffer WHERE permit_no = p.permit_no) s) b ON true
    ORDER BY (p.permit_no NOT ILIKE $2), p.permit_no"""
    async with pool(request).acquire() as conn:
        rows = await conn.fetch(sql, like, like[1:])
    return JSONResponse([{"permit_no": r["permit_no"], "bbox": plain(r["bbox"])}
                         for r in rows], headers=NO_CACHE)


# Parcels by site address or owner (pub.parcel, delivered by the county's parcel file): a
# fragment of at least PARCEL_QUERY_MIN characters (a two-letter query would list half the
# owners of a county), at most PARCEL_QUERY_MAX, matched anywhere, case-insensitive, LIKE's
# own characters escaped; the address matches first, then by address and PIN.
PARCEL_QUERY_MIN, PARCEL_QUERY_MAX, PARCEL_MATCHES = 3, 100, 20
PARCEL_SEARCH_SQL = f"""
SELECT p.pin_display AS pin, p.site_address, p.owner_name, {BBOX.format(g='p.geom')} AS bbox
FROM (SELECT pin_display, site_address, owner_name, geom,
             (site_address ILIKE $1) AS by_address
      FROM pub.parcel WHERE site_address ILIKE $1 OR owner_name ILIKE $1
      ORDER BY (site_address ILIKE $1) DESC, site_address, pin_display
      LIMIT {PARCEL_MATCHES}) p
LEFT JOIN LATERAL (SELECT ST_Transform(ST_Envelope(p.geom), 4326) AS e) b ON true
ORDER BY p.by_address DESC, p.site_address, p.pin_display"""


@router.get("/api/parcels", tags=["rulem-db"])
async def parcels(request: Request) -> JSONResponse:
    """Parcels whose site address or owner contains q: up to 20, address matches first."""
    q = " ".join((request.query_params.get("q") or "").split())
    if not PARCEL_QUERY_MIN <= len(q) <= PARCEL_QUERY_MAX:
        return error(400, f"give {PARCEL_QUERY_MIN} to {PARCEL_QUERY_MAX} characters of an "
                          "address or an owner's name: /api/parcels?q=Main")
    async with pool(request).acquire() as conn:
        rows = await conn.fetch(PARCEL_SEARCH_SQL, like_fragment(q))
    return JSONResponse([{"pin": r["pin"], "site_address": r["site_address"],
                          "owner_name": r["owner_name"], "bbox": plain(r["bbox"])}
                         for r in rows], headers=NO_CACHE)


@router.get("/api/plan", tags=["rulem-db"])
async def plan(request: Request) -> JSONResponse:
    """The plan area's balance (now, or as of a date)."""
    on, bad = as_of_date(request)
    if bad:
        return bad
    source = "pub.plan_balance_as_of($1::date)" if on else "pub.plan_balance"
    sql = (f"SELECT p.*, {BBOX.format(g='p.geom')} AS bbox FROM {source} p "
           "LEFT JOIN LATERAL (SELECT ST_Transform(ST_Envelope(p.geom), 4326) AS e) b ON true "
           "ORDER BY p.plan_area_id LIMIT 1")
    async with pool(request).acquire() as conn:
        row = await conn.fetchrow(sql, *([on] if on else []))
    if row is None:
        return error(404, "no plan area is registered")
    body = record(row, PLAN_FIELDS)
    body.update(as_of=plain(on), bbox=plain(row["bbox"]))
    return JSONResponse(body, headers=NO_CACHE)


@router.post("/api/screen", tags=["rulem-db"])
async def screen_footprint(request: Request) -> JSONResponse:
    """Rule M 2(a)'s answer for a proposed footprint (GeoJSON, EPSG:4326)."""
    body = await request.body()
    try:
        footprint = screen.parse(body)
    except screen.ScreenInputError as exc:
        return error(400, str(exc))
    async with pool(request).acquire() as conn:
        try:
            answer = await screen.screen(conn, request.app.state.plan_area, footprint)
        except screen.ScreenInputError as exc:
            return error(400, str(exc))
    return JSONResponse(answer, headers=NO_CACHE)


