"""Building blocks for ledger tests: plain SQL inserts into the core layers (no ingest code), on
a metre grid in EPSG:26915 so that every expected figure can be worked out by hand.

1 acre = 4046.8564224 m^2, so 10,000 m^2 (a 100 m square) = 2.4711 acres, 5,000 m^2 = 1.2355,
2,500 m^2 = 0.6178. Each helper commits nothing itself: callers pass a connection inside
`engine.begin()`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

import sqlalchemy as sa

ACRE_M2 = 4046.8564224
SRID = 26915
PLAN = 1  # the plan area every test database has (conftest: 'acd-53-62')

Rect = tuple[float, float, float, float]


def acres(m2: float) -> float:
    """Square metres to acres (the figure to 4 decimals is what pub views show)."""
    return m2 / ACRE_M2


def rect(r: Rect) -> str:
    """SQL for a rectangle as a multipolygon in the working CRS."""
    x0, y0, x1, y1 = r
    return f"ST_Multi(ST_MakeEnvelope({x0}, {y0}, {x1}, {y1}, {SRID}))"


def _one(conn: sa.Connection, sql: str, **params) -> int:
    return conn.execute(sa.text(sql), params).scalar_one()


def plan_boundary(conn: sa.Connection, r: Rect = (-1000, -1000, 5000, 5000)) -> int:
    return _one(conn, f"INSERT INTO core.cwmp_area (plan_area_id, name, geom) "
                      f"VALUES ({PLAN}, 'test plan', {rect(r)}) RETURNING cwmp_area_id")


def parcel(conn: sa.Connection, pin: str, r: Rect) -> int:
    return _one(conn, f"INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, geom) "
                      f"VALUES ({PLAN}, :pin, :norm, {rect(r)}) RETURNING parcel_id",
                pin=pin, norm=pin.replace("-", "").upper())


def delineation(conn: sa.Connection, no: str, r: Rect, approved_on: str | None,
                status: str = "approved") -> int:
    return _one(conn, f"INSERT INTO core.delineation (plan_area_id, delineation_no, status, "
                      f"approved_on, geom) VALUES ({PLAN}, :no, :st, :on, {rect(r)}) "
                      f"RETURNING delineation_id",
                no=no, st=status, on=approved_on)


def wetland(conn: sa.Connection, delineation_id: int, key: str, r: Rect) -> int:
    return _one(conn, f"INSERT INTO core.wetland (plan_area_id, delineation_id, source_fid, "
                      f"geom) VALUES ({PLAN}, :d, :k, {rect(r)}) RETURNING wetland_id",
                d=delineation_id, k=key)


def permit(conn: sa.Connection, no: str, decided_on: str | None = "2024-04-01",
           status: str = "approved", baseline_on: str | None = None,
           pins: Sequence[str] | None = None) -> int:
    return _one(conn, f"INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on, "
                      f"baseline_on, parcel_pins) VALUES ({PLAN}, :no, :st, :dec, :base, :pins) "
                      f"RETURNING permit_id",
                no=no, st=status, dec=decided_on, base=baseline_on,
                pins=[p.replace("-", "").upper() for p in pins] if pins else None)


def impact(conn: sa.Connection, permit_id: int, kind: str, r: Rect, key: str) -> int:
    return _one(conn, f"INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, "
                      f"geom) VALUES ({PLAN}, :p, :k, :key, {rect(r)}) RETURNING impact_id",
                p=permit_id, k=kind, key=key)


def replacement(conn: sa.Connection, permit_id: int | None, r: Rect, key: str,
                component: str = "wetland", status: str = "certified",
                district_project: str | None = None, status_on: str | None = None) -> int:
    return _one(conn, f"INSERT INTO core.replacement (plan_area_id, permit_id, district_project, "
                      f"component, status, status_on, source_fid, geom) VALUES ({PLAN}, :p, :dp, "
                      f":c, :s, :so, :key, {rect(r)}) RETURNING replacement_id",
                p=permit_id, dp=district_project, c=component, s=status, so=status_on, key=key)


def buffer(conn: sa.Connection, permit_id: int, r: Rect, key: str) -> int:
    return _one(conn, f"INSERT INTO core.buffer (plan_area_id, permit_id, source_fid, geom) "
                      f"VALUES ({PLAN}, :p, :key, {rect(r)}) RETURNING buffer_id",
                p=permit_id, key=key)


def heritage(conn: sa.Connection, rank: str, kind: str, r: Rect, key: str) -> int:
    return _one(conn, f"INSERT INTO core.heritage_area (plan_area_id, rank, community_kind, "
                      f"source_fid, geom) VALUES ({PLAN}, :r, :k, :key, {rect(r)}) "
                      f"RETURNING heritage_area_id", r=rank, k=kind, key=key)


def transfer(conn: sa.Connection, from_id: int, to_id: int, acres_: float | str,
             key: str, on: str = "2024-06-01") -> int:
    return _one(conn, f"INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, "
                      f"to_permit_id, acres, transferred_on, source_fid) VALUES ({PLAN}, :f, "
                      f":t, :a, :on, :key) RETURNING credit_transfer_id",
                f=from_id, t=to_id, a=acres_, on=on, key=key)


def base_site(conn: sa.Connection, wetlands: dict[str, Rect],
              approved_on: str = "2020-01-01") -> dict[str, int]:
    """A plan boundary, one approved delineation over (0,0)-(1000,1000) and its wetlands."""
    plan_boundary(conn)
    d = delineation(conn, "D-1", (0, 0, 1000, 1000), approved_on)
    return {key: wetland(conn, d, key, r) for key, r in wetlands.items()}


# -- reading back --------------------------------------------------------------------------

MEASURE_COLUMNS = ("impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
                   "credit_constructed_acres", "credit_hosted_acres", "balance_acres")


def parcel_rows(conn: sa.Connection, at: dt.datetime | None = None) -> dict[str, dict]:
    src = "pub.parcel_balance_at(:at)" if at else "pub.parcel_balance"
    rows = conn.execute(sa.text(f"SELECT * FROM {src}"), {"at": at}).mappings().all()
    return {r["pin"]: dict(r) for r in rows}


def permit_rows(conn: sa.Connection, at: dt.datetime | None = None) -> dict[str, dict]:
    src = "pub.permit_balance_at(:at)" if at else "pub.permit_balance"
    rows = conn.execute(sa.text(f"SELECT * FROM {src}"), {"at": at}).mappings().all()
    return {r["permit_no"]: dict(r) for r in rows}


def plan_row(conn: sa.Connection, at: dt.datetime | None = None) -> dict:
    src = "pub.plan_balance_at(:at)" if at else "pub.plan_balance"
    return dict(conn.execute(sa.text(f"SELECT * FROM {src} WHERE plan_area_id = {PLAN}"),
                             {"at": at}).mappings().one())


def exact_identity(conn: sa.Connection) -> tuple[Decimal, Decimal]:
    """(sum of the exact parcel balances + unallocated balance, exact plan balance)."""
    parcels = conn.execute(sa.text(
        "SELECT coalesce(sum(m.credit + m.transfer_in - m.transfer_out - m.required), 0) "
        "FROM core.parcel p CROSS JOIN LATERAL ledger.parcel_measures(p.parcel_id, 'infinity') m "
        f"WHERE p.valid_to IS NULL AND p.plan_area_id = {PLAN}")).scalar_one()
    plan = conn.execute(sa.text(
        f"SELECT unallocated_balance, balance FROM ledger.plan_measures({PLAN}, 'infinity')"
    )).one()
    return parcels + plan.unallocated_balance, plan.balance


def clock(conn: sa.Connection) -> dt.datetime:
    """The database's clock now (outside any transaction's start time)."""
    return conn.execute(sa.text("SELECT clock_timestamp()")).scalar_one()
