"""What a careful permit reviewer does to the ledger, as test helpers: files delivered through
ingest (`etl.ingest.ingest`, what `rulem-db ingest` runs), edits through the `edit` views as a
real rulem_editor login, and the answers read back from the published views and a check run.

Coordinates: the layout of tests/ledger/test_ledger.py (parcels A-1 (0,0)-(300,600), B-1
(300,0)-(600,600), C-1 (600,0)-(900,600); delineation D-1 over (0,0)-(1000,1000) approved
2020-01-01; wetland W1 (0,0)-(200,100)), written in local metres and placed at (X0, Y0) of
tests/support/ingest_helpers.py, where EPSG:26915 is used (ingest refuses a file that lies outside
the working CRS's area of use). `at` moves a local rectangle there, for SQL and files alike. 1 acre
= 4046.8564224 m^2, so a 100 m square is 2.4711 acres and 100 m x 50 m 1.2355 acres.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import ledger_scenarios as s
import shapely
import sqlalchemy as sa
from ingest_helpers import X0, Y0, write_csv, write_gpkg
from publish_fixture import Login
from sqlalchemy.engine import make_url

from etl.ingest import ingest

SQUARE = Decimal("2.4711")   # 10,000 m^2
HALF = Decimal("1.2355")     # 5,000 m^2
QUARTER = Decimal("0.6178")  # 2,500 m^2


W1 = (0, 0, 200, 100)  # 20,000 m^2 of wetland on A-1


def at(r: s.Rect) -> s.Rect:
    """A local rectangle placed at (X0, Y0)."""
    x0, y0, x1, y1 = r
    return (X0 + x0, Y0 + y0, X0 + x1, Y0 + y1)


def rect(r: s.Rect) -> str:
    """SQL for a local rectangle placed at (X0, Y0), as a multipolygon."""
    return s.rect(at(r))


def box(r: s.Rect) -> shapely.Polygon:
    """A local rectangle placed at (X0, Y0), for a file."""
    return shapely.box(*at(r))


def layout(conn: sa.Connection, wetlands: dict[str, s.Rect] | None = None,
           parcels: dict[str, s.Rect] | None = None) -> dict[str, int]:
    """The plan boundary, D-1 (approved 2020-01-01) with its wetlands (default W1) and the
    parcels (default A-1, B-1, C-1), all placed at (X0, Y0)."""
    s.plan_boundary(conn, at((-1000, -1000, 5000, 5000)))
    d = s.delineation(conn, "D-1", at((0, 0, 1000, 1000)), "2020-01-01")
    ids = {k: s.wetland(conn, d, k, at(r)) for k, r in (wetlands or {"W1": W1}).items()}
    for pin, r in (parcels or {"A-1": (0, 0, 300, 600), "B-1": (300, 0, 600, 600),
                               "C-1": (600, 0, 900, 600)}).items():
        ids[pin] = s.parcel(conn, pin, at(r))
    return ids


def impact(conn: sa.Connection, permit_id: int, kind: str, r: s.Rect, key: str) -> int:
    return s.impact(conn, permit_id, kind, at(r), key)


def replacement(conn: sa.Connection, permit_id: int | None, r: s.Rect, key: str,
                **attrs: Any) -> int:
    """A replacement feature; attrs: component, status, status_on, constructed_on,
    certified_on, district_project (defaults: wetland, certified, no dates)."""
    cols = {"component": "wetland", "status": "certified", **attrs}
    names = ", ".join(cols)
    values = ", ".join(f":{c}" for c in cols)
    return conn.execute(sa.text(
        f"INSERT INTO core.replacement (plan_area_id, permit_id, {names}, source_fid, geom) "
        f"VALUES (1, :p, {values}, :key, {rect(r)}) RETURNING replacement_id"),
        {"p": permit_id, "key": key, **cols}).scalar_one()


def ingest_features(url: str, layer: str, tmp_path: Path, rows: list[dict[str, Any]],
                    name: str | None = None, **options: Any) -> Any:
    """A GeoPackage of the rows (each with 'geometry' as a rectangle tuple) ingested into a
    layer, as `rulem-db ingest LAYER FILE` does."""
    features = [{**r, "geometry": box(r["geometry"])} for r in rows]
    path = write_gpkg(tmp_path / (name or f"{layer}.gpkg"), features)
    return ingest(url, layer, path, **options)


def ingest_transfers(url: str, tmp_path: Path, rows: list[list[Any]],
                     name: str = "transfers.csv") -> Any:
    """credit_transfer rows (key, giver permit, receiver permit, acres, date) from a CSV."""
    path = write_csv(tmp_path / name, ["feature_key", "from_permit_key", "to_permit_key",
                                       "acres", "transferred_on"], rows)
    return ingest(url, "credit_transfer", path)


def editor_engine(url: str, login: Login) -> sa.Engine:
    """An engine on the database as the rulem_editor login."""
    return sa.create_engine(make_url(url).set(username=login.user, password=login.password))


def run_findings(engine: sa.Engine, code: str) -> list[tuple]:
    """(permit, severity, measured acres, message) of a check's failures in a full run."""
    with engine.begin() as conn:
        run_id = conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()
        return [tuple(r) for r in conn.execute(sa.text(
            "SELECT pm.permit_no, f.severity, f.measured_value, f.message FROM checks.finding f "
            "LEFT JOIN core.permit pm ON pm.permit_id = f.permit_id AND pm.valid_to IS NULL "
            "WHERE f.run_id = :r AND f.check_code = :c ORDER BY 1 NULLS LAST, 2, 3"),
            {"r": run_id, "c": code})]


def permit_as_of(conn: sa.Connection, permit_no: str, on: str) -> dict:
    return dict(conn.execute(sa.text(
        "SELECT * FROM pub.permit_balance_as_of(CAST(:on AS date)) WHERE permit_no = :p"),
        {"on": on, "p": permit_no}).mappings().one())


def plan_as_of(conn: sa.Connection, on: str) -> dict:
    return dict(conn.execute(sa.text(
        "SELECT * FROM pub.plan_balance_as_of(CAST(:on AS date))"), {"on": on}
    ).mappings().one())


def open_lines(conn: sa.Connection, permit_no: str, measure: str) -> list[tuple]:
    """(effective date, acres) of a permit's open entries of a measure, summed by date."""
    return [tuple(r) for r in conn.execute(sa.text(
        "SELECT effective_on, sum(acres_exact) FROM pub.ledger_entry e "
        "WHERE permit_no = :p AND measure = :m GROUP BY effective_on "
        "HAVING round(sum(acres_exact), 9) <> 0 ORDER BY 1"),
        {"p": permit_no, "m": measure})]


def days(*iso: str) -> list[dt.date]:
    return [dt.date.fromisoformat(x) for x in iso]


def one_line(err: BaseException) -> str:
    """The first line of a refusal (the database's message, or ingest's)."""
    orig = getattr(err, "orig", None)
    return str(orig if orig is not None else err).splitlines()[0]


def noop() -> Iterator[None]:  # pragma: no cover - keeps the module importable alone
    yield None
