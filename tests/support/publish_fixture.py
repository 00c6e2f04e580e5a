"""A small plan area for the publishing tests: one or more current features in every layer,
inserted with plain SQL into core, so that every published view has rows to list, style, tile
and export; and the session fixtures that serve it (import them into a test module).

Why not the demo: publishing is about clients (GDAL, QGIS, tiles, GeoPackage) seeing every
layer with the right type, SRID and count; a few hand-placed rectangles prove that in well
under a second, and each area below can be checked by hand. Coordinates are metres east and
north of ORIGIN (EPSG:26915, Lino Lakes, Anoka County); the plan area is 1000 m x 600 m.

Hand-checked areas (1 acre = 4046.8564224 m^2): parcel P1 500 m x 300 m = 37.0658 acres;
wetland W-3 100 m x 70 m = 1.7297 acres; impact 100 m x 50 m = 1.2355 acres.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa
from clones import cloned
from sqlalchemy.engine import URL

from rulem_db import db

ORIGIN = (487000.0, 4993000.0)
SRID = 26915
PLAN_AREA_ID = 1

# The plan area's extent in the working CRS (xmin, ymin, xmax, ymax).
EXTENT = (ORIGIN[0], ORIGIN[1], ORIGIN[0] + 1000.0, ORIGIN[1] + 600.0)


def box(x0: float, y0: float, x1: float, y1: float) -> str:
    """SQL for a multipolygon rectangle given in local metres."""
    ox, oy = ORIGIN
    return (f"ST_Multi(ST_MakeEnvelope({ox + x0}, {oy + y0}, {ox + x1}, {oy + y1}, {SRID}))")


def line(*points: tuple[float, float]) -> str:
    """SQL for a multilinestring through local points."""
    ox, oy = ORIGIN
    coords = ", ".join(f"{ox + x} {oy + y}" for x, y in points)
    return f"ST_Multi(ST_GeomFromText('LINESTRING({coords})', {SRID}))"


def point(x: float, y: float) -> str:
    """SQL for a point at local coordinates."""
    ox, oy = ORIGIN
    return f"ST_SetSRID(ST_MakePoint({ox + x}, {oy + y}), {SRID})"


def _permit(no: str) -> str:
    return f"(SELECT permit_id FROM core.permit WHERE permit_no = '{no}' AND valid_to IS NULL)"


def _wetland(fid: str) -> str:
    return f"(SELECT wetland_id FROM core.wetland WHERE source_fid = '{fid}' AND valid_to IS NULL)"


def _delineation(no: str) -> str:
    return (f"(SELECT delineation_id FROM core.delineation WHERE delineation_no = '{no}' "
            "AND valid_to IS NULL)")


P = PLAN_AREA_ID

STATEMENTS: tuple[str, ...] = (
    "INSERT INTO ops.batch (plan_area_id, layer, file_name, status, feature_count) "
    "VALUES (1, 'parcel', 'parcels.gpkg', 'loaded', 4)",
    f"INSERT INTO core.cwmp_area (plan_area_id, name, adopted_on, geom) VALUES "
    f"({P}, 'ACD 53-62 CWMP', '2003-07-17', {box(0, 0, 1000, 600)})",
    f"INSERT INTO core.central_wetland_seed (plan_area_id, name, source_fid, geom) VALUES "
    f"({P}, 'Central complex', 'seed-1', {box(100, 250, 900, 350)})",
    # Four parcels from one ingest batch, with their source attributes.
    "INSERT INTO core.parcel (plan_area_id, pin, pin_normalized, source_fid, source_attributes, "
    "batch_id, geom) VALUES "
    f"({P}, '01-31-23-11-0001', '013123110001', '1', '{{\"PIN\": \"01-31-23-11-0001\"}}', "
    f"(SELECT max(batch_id) FROM ops.batch), {box(0, 0, 500, 300)}), "
    f"({P}, '01-31-23-11-0002', '013123110002', '2', '{{\"PIN\": \"01-31-23-11-0002\"}}', "
    f"(SELECT max(batch_id) FROM ops.batch), {box(500, 0, 1000, 300)}), "
    f"({P}, '01-31-23-11-0003', '013123110003', '3', '{{\"PIN\": \"01-31-23-11-0003\"}}', "
    f"(SELECT max(batch_id) FROM ops.batch), {box(0, 300, 500, 600)}), "
    f"({P}, '01-31-23-11-0004', '013123110004', '4', '{{\"PIN\": \"01-31-23-11-0004\"}}', "
    f"(SELECT max(batch_id) FROM ops.batch), {box(500, 300, 1000, 600)})",
    "INSERT INTO core.permit (plan_area_id, permit_no, applicant, parcel_pins, status, "
    "applied_on, decided_on, baseline_on, description) VALUES "
    f"({P}, '24-101', 'North Lots LLC', ARRAY['013123110001', '013123110003'], 'approved', "
    "'2024-01-10', '2024-04-09', '2024-04-09', 'Fill of W-3 for a building pad'), "
    f"({P}, '24-102', 'Lake Drive Homes', ARRAY['013123110004'], 'under_review', "
    "'2024-06-01', NULL, NULL, 'Residential subdivision')",
    "INSERT INTO core.delineation (plan_area_id, delineation_no, permit_id, consultant, status, "
    "submitted_on, tep_reviewed_on, approved_on, geom) VALUES "
    f"({P}, 'D-1', {_permit('24-101')}, 'Wetland Co', 'approved', '2023-09-01', '2023-10-01', "
    f"'2023-11-01', {box(0, 0, 1000, 600)}), "
    f"({P}, 'D-2', {_permit('24-102')}, 'Marsh Ltd', 'submitted', '2024-06-01', NULL, NULL, "
    f"{box(600, 400, 850, 560)})",
    "INSERT INTO core.wetland (plan_area_id, delineation_id, circular39_type, cowardin_code, "
    "post_cwmp_type, susceptibility_class, source_fid, geom) VALUES "
    f"({P}, {_delineation('D-1')}, '3', 'PEMC', '3', 'moderate', 'W-1', "
    f"{box(100, 250, 900, 350)}), "
    f"({P}, {_delineation('D-2')}, '2', 'PEMB', '2', 'slight', 'W-2', {box(700, 450, 800, 520)}), "
    f"({P}, {_delineation('D-1')}, '1', 'PEMA', '1', 'slight', 'W-3', {box(150, 50, 250, 120)})",
    "INSERT INTO core.functional_assessment (plan_area_id, wetland_id, method, assessed_on, "
    f"ratings, source_fid) VALUES ({P}, {_wetland('W-1')}, 'MnRAM 3.4', '2023-09-15', "
    "'{\"hydrology\": \"high\"}', 'FA-1')",
    "INSERT INTO core.ditch (plan_area_id, system_id, status, source_fid, geom) VALUES "
    f"({P}, 'ACD 53-62', 'active', 'DT-1', {line((50, 300), (950, 300))})",
    "INSERT INTO core.heritage_area (plan_area_id, rank, community_kind, community_name, "
    f"source_fid, geom) VALUES ({P}, 'B', 'upland', 'Oak savanna', 'H-1', "
    f"{box(300, 400, 400, 500)})",
    "INSERT INTO core.figure5_area (plan_area_id, zone_name, planned_type, source_fid, geom) "
    f"VALUES ({P}, 'Zone 5A', '3', 'F5-1', {box(600, 50, 900, 200)})",
    "INSERT INTO core.soil (plan_area_id, musym, hydrologic_soil_group, high_groundwater, "
    f"contaminated, source_fid, geom) VALUES ({P}, 'ZaB', 'B', false, false, 'S-1', "
    f"{box(0, 0, 500, 600)}), ({P}, 'Cm', 'C/D', true, false, 'S-2', {box(500, 0, 1000, 600)})",
    f"INSERT INTO core.impact (plan_area_id, permit_id, kind, source_fid, geom) VALUES "
    f"({P}, {_permit('24-101')}, 'fill', 'I-1', {box(150, 50, 250, 100)})",
    "INSERT INTO core.replacement (plan_area_id, permit_id, component, status, status_on, "
    f"source_fid, geom) VALUES ({P}, {_permit('24-101')}, 'wetland', 'certified', '2025-05-01', "
    f"'R-1', {box(650, 100, 750, 180)}), ({P}, {_permit('24-101')}, 'upland', 'proposed', NULL, "
    f"'R-2', {box(750, 100, 800, 180)})",
    "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
    f"transferred_on, source_fid) VALUES ({P}, {_permit('24-101')}, {_permit('24-102')}, 0.1, "
    "'2025-06-01', 'CT-1')",
    "INSERT INTO core.buffer (plan_area_id, permit_id, declaration_no, source_fid, geom) VALUES "
    f"({P}, {_permit('24-101')}, 'DOC-1', 'B-1', {box(100, 350, 900, 366)})",
    "INSERT INTO core.trail (plan_area_id, permit_id, width_ft, source_fid, geom) VALUES "
    f"({P}, {_permit('24-101')}, 9.8, 'T-1', {box(300, 358, 900, 361)})",
    "INSERT INTO core.buffer_marker (plan_area_id, permit_id, marker_type, source_fid, geom) "
    f"VALUES ({P}, {_permit('24-101')}, 'free_standing', 'M-1', {point(100, 366)}), "
    f"({P}, {_permit('24-101')}, 'free_standing', 'M-2', {point(300, 366)}), "
    f"({P}, {_permit('24-101')}, 'free_standing', 'M-3', {point(500, 366)})",
    "INSERT INTO core.easement (plan_area_id, permit_id, grantor, recording_no, recorded_on, "
    f"source_fid, geom) VALUES ({P}, {_permit('24-101')}, 'North Lots LLC', 'A-123', "
    f"'2024-05-01', 'E-1', {box(100, 250, 900, 366)})",
    "INSERT INTO core.declaration (plan_area_id, permit_id, kind, recording_no, recorded_on, "
    f"source_fid) VALUES ({P}, {_permit('24-101')}, 'buffer', 'A-124', '2024-05-01', 'DC-1')",
    "INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, geom) VALUES "
    f"({P}, {_permit('24-102')}, 'proposed', 'IMP-1', {box(550, 450, 650, 550)})",
    "INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, source_fid, "
    f"geom) VALUES ({P}, {_permit('24-102')}, true, 'G-1', {box(540, 440, 660, 560)})",
    "INSERT INTO core.structure (plan_area_id, permit_id, kind, source_fid, geom) VALUES "
    f"({P}, {_permit('24-102')}, 'road', 'ST-1', {box(450, 250, 460, 350)})",
    "INSERT INTO core.land_cover (plan_area_id, permit_id, cover_class, source_fid, geom) "
    f"VALUES ({P}, {_permit('24-102')}, 'residential_1_4ac', 'LC-1', {box(500, 400, 700, 600)})",
    "INSERT INTO core.subwatershed (plan_area_id, permit_id, name, receiving_wetland_id, "
    f"source_fid, geom) VALUES ({P}, {_permit('24-102')}, 'SW-1', {_wetland('W-1')}, 'SW-1', "
    f"{box(500, 400, 1000, 600)})",
    "INSERT INTO core.bmp (plan_area_id, permit_id, subwatershed_id, kind, volume_cuft, "
    f"roof_runoff_only, source_fid, geom) VALUES ({P}, {_permit('24-102')}, "
    "(SELECT subwatershed_id FROM core.subwatershed WHERE name = 'SW-1'), 'infiltration', "
    f"5000, false, 'BMP-1', {box(900, 450, 950, 500)})",
    "INSERT INTO core.hydroperiod (plan_area_id, permit_id, wetland_id, existing_bounce_ft, "
    "proposed_bounce_ft, existing_inundation_days, proposed_inundation_days, source_fid) VALUES "
    f"({P}, {_permit('24-102')}, {_wetland('W-1')}, 1.0, 1.4, 5, 6, 'HP-1')",
    "INSERT INTO core.species_record (plan_area_id, species, status, source_fid, geom) VALUES "
    f"({P}, 'Blanding''s turtle', 'threatened', 'SR-1', {box(320, 420, 330, 430)})",
)


def load(conn: sa.Connection) -> None:
    """Insert the fixture into a migrated database with plan area 1 (in the caller's
    transaction)."""
    for sql in STATEMENTS:
        conn.exec_driver_sql(sql)


def load_and_reconcile(url: str) -> None:
    """The fixture, then the ledger recomputed and the rule checks run (where those exist), so
    the balance and finding views have rows too. The database is
    a copy of the session's template under another name, so its QGIS styles are re-seeded for
    this name first, as after any copy or restore (sql/940_layer_styles.sql)."""
    eng = db.engine(url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text("SELECT ops.seed_layer_styles()"))
            load(conn)
    finally:
        eng.dispose()
    try:
        from rulem_db import ledger
    except ImportError:  # the ledger is not there yet: the balance views stay empty
        ledger = None
    if ledger is not None:
        ledger.recompute(url, all=True, workers=1)
    eng = db.engine(url)
    try:
        with eng.begin() as conn:
            if conn.execute(sa.text("SELECT to_regproc('checks.run_checks')")).scalar():
                conn.execute(sa.text("SELECT checks.run_checks(:p)"), {"p": PLAN_AREA_ID})
    finally:
        eng.dispose()


_names = itertools.count()


@pytest.fixture(scope="session")
def published_url(admin_url: URL, template_db: str) -> Iterator[str]:
    """URL (superuser) of a database holding the fixture, shared by the read-only publishing
    tests of the session; tests that change data use db_url instead."""
    with cloned(admin_url, template_db, "rulem_pub") as url:
        load_and_reconcile(url)
        yield url


@dataclass
class Login:
    """A login role that is a member of one of the group roles, for clients that connect as
    a person would (ogrinfo, QGIS). The password is kept out of repr."""

    user: str
    group: str
    host: str
    port: int
    password: str = field(repr=False)

    def env(self, database: str) -> dict[str, str]:
        """libpq environment for this login (the password never on a command line)."""
        return dict(os.environ, PGHOST=self.host, PGPORT=str(self.port), PGUSER=self.user,
                    PGPASSWORD=self.password, PGDATABASE=database)

    def service_file(self, path, database: str, service: str = "rulem"):
        """A pg_service.conf with one entry for this login (as docs/pg_service.conf.example)."""
        path.write_text(f"[{service}]\nhost={self.host}\nport={self.port}\n"
                        f"dbname={database}\nuser={self.user}\npassword={self.password}\n")
        path.chmod(0o600)
        return path


def _login(admin_url: URL, group: str) -> Iterator[Login]:
    user = f"t_{group}_{os.getpid()}_{next(_names)}"
    password = secrets.token_urlsafe(18)
    eng = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f"CREATE ROLE {user} LOGIN PASSWORD :p IN ROLE {group}"),
                         {"p": password})
        yield Login(user, group, admin_url.host or "localhost", admin_url.port or 5432,
                    password)
    finally:
        with eng.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {user}"))
        eng.dispose()


@pytest.fixture(scope="session")
def gis_login(admin_url: URL) -> Iterator[Login]:
    """A login in rulem_gis, the role GIS clients use."""
    yield from _login(admin_url, "rulem_gis")
