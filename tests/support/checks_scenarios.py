"""Hand-built sites for the rule-check tests: plain SQL inserts into the core layers, with
geometry in feet on a local grid, so every expected figure can be worked out on paper.

Test modules import ``checks_engine_fixture`` and ``site_fixture`` (fixtures named
``checks_engine`` and ``site``).

Why not the demo or ingest: the checks are tested on the smallest data that proves each
point, independent of the loaders (written concurrently) and of the demo's layout.

Coordinates are feet east and north of ORIGIN (metres, EPSG:26915); 1 ft = 0.3048 m. The
standard site (``Site.standard``) is one parcel, x 0..300 ft and y -200..50 ft, with the central
wetland from x -50 to 350 ft and y 0 to 100 ft, so the protected edge is the line y = 0 from
x = 0 to 300 ft (300 ft long), upland to the south.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from clones import cloned
from sqlalchemy.engine import URL

FT = 0.3048
ACRE_M2 = 4046.8564224
SQFT_PER_ACRE = 43560.0
ORIGIN = (500_000.0, 5_000_000.0)
SRID = 26915
PLAN_AREA_ID = 1

Point = tuple[float, float]


def _xy(p: Point) -> str:
    return f"{ORIGIN[0] + p[0] * FT:.6f} {ORIGIN[1] + p[1] * FT:.6f}"


def ring(points: Sequence[Point]) -> str:
    """A closed WKT ring from points in feet."""
    pts = list(points) + [points[0]]
    return "(" + ", ".join(_xy(p) for p in pts) + ")"


def rect_pts(x0: float, y0: float, x1: float, y1: float) -> list[Point]:
    return [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]


def polygon(*rings: Sequence[Point]) -> str:
    """EWKT multipolygon of one polygon (outer ring, then holes), feet."""
    return f"SRID={SRID};MULTIPOLYGON((" + ", ".join(ring(r) for r in rings) + "))"


def rect(x0: float, y0: float, x1: float, y1: float,
         hole: tuple[float, float, float, float] | None = None) -> str:
    """EWKT multipolygon of a rectangle in feet, optionally with a rectangular hole."""
    rings = [rect_pts(x0, y0, x1, y1)]
    if hole:
        rings.append(rect_pts(*hole))
    return polygon(*rings)


def rects(*boxes: tuple[float, float, float, float]) -> str:
    """EWKT multipolygon of several disjoint rectangles (feet)."""
    return (f"SRID={SRID};MULTIPOLYGON(" +
            ", ".join("(" + ring(rect_pts(*b)) + ")" for b in boxes) + ")")


def line(*points: Point) -> str:
    """EWKT multilinestring through points in feet."""
    return f"SRID={SRID};MULTILINESTRING((" + ", ".join(_xy(p) for p in points) + "))"


def point(x: float, y: float) -> str:
    """EWKT point in feet."""
    return f"SRID={SRID};POINT({_xy((x, y))})"


def sqft_to_acres(sqft: float) -> float:
    return sqft / SQFT_PER_ACRE


class Site:
    """A plan area being built inside one test's database transaction.

    ``add(layer, geom, **columns)`` inserts one feature and returns its stable id; the helpers
    below only fill in the columns a test does not care about.
    """

    wetland_geom: str
    parcel_id: int
    delineation_id: int
    wetland_id: int
    permit_id: int
    buffer_id: int

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn

    # -- generic -------------------------------------------------------------------------
    def add(self, layer: str, geom: str | None = None, **cols: Any) -> int:
        cols = {"plan_area_id": PLAN_AREA_ID, **cols}
        names = list(cols)
        values = [f":{n}" for n in names]
        params = {n: (json.dumps(v) if isinstance(v, dict) else v) for n, v in cols.items()}
        if geom is not None:
            names.append("geom")
            values.append("ST_GeomFromEWKT(:geom)")
            params["geom"] = geom
        sql = (f"INSERT INTO core.{layer} ({', '.join(names)}) VALUES ({', '.join(values)}) "
               f"RETURNING {layer}_id")
        return int(self.conn.execute(sa.text(sql), params).scalar_one())

    def update(self, layer: str, feature_id: int, **cols: Any) -> None:
        sets = ", ".join(f"{c} = :{c}" for c in cols)
        self.conn.execute(sa.text(f"UPDATE core.{layer} SET {sets} WHERE {layer}_id = :fid "
                                  f"AND valid_to IS NULL"), {**cols, "fid": feature_id})

    def retire(self, layer: str, feature_id: int) -> None:
        self.conn.execute(sa.text(f"UPDATE core.{layer} SET valid_to = now() "
                                  f"WHERE {layer}_id = :fid AND valid_to IS NULL"),
                          {"fid": feature_id})

    # -- frame ---------------------------------------------------------------------------
    def plan(self, geom: str | None = None) -> int:
        return self.add("cwmp_area", geom or rect(-2000, -2000, 2000, 2000), name="Test CWMP")

    def seed(self, geom: str) -> int:
        return self.add("central_wetland_seed", geom, name="central complex")

    def parcel(self, pin: str, geom: str) -> int:
        return self.add("parcel", geom, pin=pin, pin_normalized=pin)

    def permit(self, permit_no: str, pins: Iterable[str], status: str = "approved",
               decided_on: str | None = "2024-06-01", **cols: Any) -> int:
        return self.add("permit", None, permit_no=permit_no, parcel_pins=list(pins),
                        status=status, decided_on=decided_on, **cols)

    def delineation(self, geom: str, no: str = "D-1", status: str = "approved",
                    approved_on: str | None = "2020-01-01",
                    tep_reviewed_on: str | None = "2019-12-01", **cols: Any) -> int:
        return self.add("delineation", geom, delineation_no=no, status=status,
                        approved_on=approved_on, tep_reviewed_on=tep_reviewed_on, **cols)

    def wetland(self, geom: str, delineation_id: int, circular39_type: str | None = "3",
                assess: bool = True, **cols: Any) -> int:
        wid = self.add("wetland", geom, delineation_id=delineation_id,
                       circular39_type=circular39_type, **cols)
        if assess:
            self.add("functional_assessment", None, wetland_id=wid, method="MnRAM 3.4",
                     ratings={"hydrology": "high"})
        return wid

    # -- the standard site -----------------------------------------------------------------
    def standard(self, *, buffer: str | None = None, declarations: bool = True,
                 easement: bool = True, records: bool = True, **permit_cols: Any) -> Site:
        """One approved permit on one parcel bordering the central wetland (see the module
        doc), compliant with every check that applies to it unless a test changes something.
        buffer defaults to the 60 ft x 300 ft rectangle along the edge. records: the permit
        records its fill and its buffer need (``standard_records``)."""
        permit_cols = {"tep_on": "2024-05-01", **permit_cols}
        self.plan()
        self.wetland_geom = rect(-50, 0, 350, 100)
        self.seed(self.wetland_geom)
        self.parcel_id = self.parcel("P1", rect(0, -200, 300, 50))
        self.delineation_id = self.delineation(rect(-100, -300, 400, 200))
        self.wetland_id = self.wetland(self.wetland_geom, self.delineation_id,
                                       susceptibility_class="moderate")
        cols = {"vegetation_plan_on": "2024-05-01", "ditch_determined_on": "2024-03-01",
                **permit_cols}
        self.permit_id = self.permit("24-001", ["P1"], **cols)
        self.buffer_id = self.add("buffer", buffer or rect(0, -60, 300, 0),
                                  permit_id=self.permit_id, declaration_no="DOC-1")
        # A small fill of wetland off the parcel: a Rule M permit (2(a)(i)).
        self.add("impact", rect(340, 90, 350, 100), permit_id=self.permit_id, kind="fill")
        if declarations:
            self.declare("buffer", subdivision_clause=True)
        if records:
            self.standard_records()
        if easement:
            self.add("easement", rect(-10, -70, 310, 60), permit_id=self.permit_id,
                     recording_no="E-1", recorded_on="2024-07-01")
        return self

    # -- records -------------------------------------------------------------------------
    def record(self, kind: str, permit_id: int | None = None, **cols: Any) -> int:
        """One permit record (core.permit_record) of a kind; facts as a dict."""
        return self.add("permit_record", None, permit_id=permit_id or self.permit_id, kind=kind,
                        **cols)

    def standard_records(self, permit_id: int | None = None) -> None:
        """What the standard permit's fill and buffer need on record (docs/rule-m.md): the
        Corps' approval (3(h)), an approved erosion control plan (4), a groundwater analysis
        that finds flow unchanged (5(f)), the marker design approved in writing (6(b)) and the
        District's finding that the buffer is equivalent to a uniform 50 ft one (6(c))."""
        pid = permit_id or self.permit_id
        self.record("corps_approval", pid, approved_on="2024-05-15", document_ref="MVP-1")
        self.record("erosion_control_plan", pid, submitted_on="2024-03-01",
                    approved_on="2024-06-01", approved_by="board")
        self.record("groundwater", pid, submitted_on="2024-03-01",
                    facts={"existing_flow": 100, "proposed_flow": 100, "unit": "gpd"})
        self.record("marker_design", pid, approved_on="2024-06-01", approved_by="staff")
        self.record("buffer_equivalence", pid, approved_on="2024-06-01", approved_by="board")

    def declare(self, kind: str, permit_id: int | None = None, recorded: bool = True,
                **cols: Any) -> int:
        pid = permit_id or self.permit_id
        return self.add("declaration", None, permit_id=pid, kind=kind,
                        recording_no="DOC-" + kind if recorded else None,
                        recorded_on="2024-07-01" if recorded else None, **cols)

    def markers(self, points: Iterable[Point], permit_id: int | None = None,
                marker_type: str = "free_standing") -> list[int]:
        pid = permit_id or self.permit_id
        return [self.add("buffer_marker", point(*p), permit_id=pid, marker_type=marker_type)
                for p in points]

    # -- running checks ------------------------------------------------------------------
    def evaluate(self, function: str, permit_id: int | None = None) -> list[dict[str, Any]]:
        """Rows of one check function (checks.evaluation), geometry as WKT in local feet."""
        rows = self.conn.execute(sa.text(
            f"SELECT e.paragraph, e.check_code, e.severity, e.permit_id, e.parcel_id, "
            f"e.feature_id, e.passed, e.measured_value, e.limit_value, e.unit, e.message, "
            f"ST_AsText(e.geom) AS wkt, ST_Area(e.geom) AS area_m2, "
            f"ST_Length(e.geom) AS length_m, ST_GeometryType(e.geom) AS geom_type "
            f"FROM checks.{function}(:pa, CAST(:pids AS bigint[])) e "
            f"ORDER BY e.check_code, e.passed, e.measured_value"),
            {"pa": PLAN_AREA_ID, "pids": None if permit_id is None else [permit_id]}
        ).mappings().all()
        return [dict(r) for r in rows]


def only(rows: list[dict[str, Any]], code: str, **match: Any) -> dict[str, Any]:
    """The one evaluation of a check code (and matching fields); fails loudly otherwise."""
    found = [r for r in rows if r["check_code"] == code
             and all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, f"expected one {code} evaluation, got {found or rows}"
    return found[0]


_counter = itertools.count()


@contextmanager
def cloned_database(admin_url: URL, template_db: str) -> Iterator[sa.Engine]:
    """An engine on a copy of database template_db (tests/support/clones.py), dropped afterwards."""
    with cloned(admin_url, template_db, "rulem_chk") as url:
        eng = sa.create_engine(url)
        try:
            yield eng
        finally:
            eng.dispose()


@pytest.fixture(scope="module", name="checks_engine")
def checks_engine_fixture(admin_url: URL, template_db: str) -> Iterator[sa.Engine]:
    """One migrated database per test module: cloning and dropping a database costs seconds
    on a busy cluster, so the tests of a module share one and each rolls its work back."""
    with cloned_database(admin_url, template_db) as eng:
        yield eng


@pytest.fixture(name="site")
def site_fixture(checks_engine: sa.Engine) -> Iterator[Site]:
    """A Site on a connection whose transaction is rolled back after the test."""
    with checks_engine.connect() as conn:
        tx = conn.begin()
        try:
            yield Site(conn)
        finally:
            tx.rollback()
