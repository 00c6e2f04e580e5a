"""Real files nobody on the team wrote (../shared/data/real): the National Wetlands Inventory
for Washington DC as a delineation, and the City of Cambridge's FY2014 parcels."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, scalar

from demo import DEMO_PLAN_AREA
from etl.ingest import ingest
from etl.problems import IngestRefused
from rulem_db import db

CAMBRIDGE = ("data/real/cambridge_ma/"
             "Assessing__FY2014__FY2014_Parcels__ASSESSING_ParcelsFY2014.topojson")


def _database(url: str, srid: int) -> sa.Engine:
    db.migrate(url, srid=srid, plan_area=DEMO_PLAN_AREA)
    return db.engine(url)


def test_nwi_dc_ingests_as_a_delineation_in_conus_albers(empty_db_url: str,
                                                        shared: Path) -> None:
    engine = _database(empty_db_url, 5070)
    try:
        srs_before = scalar(engine, "SELECT count(*) FROM spatial_ref_sys")
        result = ingest(empty_db_url, "delineation",
                        shared / "data/real/nwi_dc/DC_shapefile_wetlands.zip")
        assert (result.inserted, result.repaired, result.skipped) == (1556, 1, 0)
        assert scalar(engine, "SELECT count(*) FROM pub.wetland") == 1556
        # stored in the working CRS, EPSG:5070, which the file's .prj is; no SRID made up
        assert scalar(engine, "SELECT source_crs FROM ops.batch") == "EPSG:5070"
        assert scalar(engine, "SELECT DISTINCT ST_SRID(geom) FROM core.wetland") == 5070
        assert scalar(engine, "SELECT count(*) FROM spatial_ref_sys") == srs_before
        worst = scalar(engine, "SELECT max(abs(core.acres(geom) - "
                               "(source_attributes ->> 'ACRES')::numeric)) FROM core.wetland")
        assert worst < 0.01
        # the one invalid polygon (a 0.13-acre riverine R3UBH) was repaired and recorded
        note = rows(engine, "SELECT n.source_fid, n.message, n.detail, w.cowardin_code, "
                            "core.acres(w.geom) AS acres FROM ops.batch_note n "
                            "JOIN core.wetland w ON w.source_fid = n.source_fid "
                            "WHERE n.kind = 'repaired'")
        assert len(note) == 1
        assert note[0].cowardin_code == "R3UBH" and round(float(note[0].acres), 2) == 0.13
        assert "Self-intersection" in note[0].detail["reason"]
        assert note[0].detail["method"] == "ST_MakeValid"
        assert result.delineation_no == scalar(engine, "SELECT delineation_no FROM "
                                                       "pub.delineation WHERE status = "
                                                       "'submitted'")
    finally:
        engine.dispose()


@pytest.mark.slow
def test_cambridge_parcels_no_crs_null_geometry_and_skipped_repairs(empty_db_url: str,
                                                                   shared: Path,
                                                                   tmp_path: Path) -> None:
    engine = _database(empty_db_url, 26986)
    path = shared / CAMBRIDGE
    mapping = tmp_path / "cambridge.toml"
    mapping.write_text('layer = "parcel"\n[fields]\npin = "id"\n')
    try:
        before = fingerprint(engine)
        with pytest.raises(IngestRefused, match="declares no CRS.*--crs"):
            ingest(empty_db_url, "parcel", path, mapping=mapping)
        with pytest.raises(IngestRefused) as err:
            ingest(empty_db_url, "parcel", path, mapping=mapping, crs="EPSG:4326")
        lines = err.value.lines()
        assert any("feature 1895 (key 13064): geometry: null or empty geometry" in line
                   for line in lines)
        assert sum("more than 0.1 percent" in line for line in lines) == 5
        assert len(lines) == 6
        assert fingerprint(engine) == before
        result = ingest(empty_db_url, "parcel", path, mapping=mapping, crs="EPSG:4326",
                        skip_bad_features=True)
        assert (result.inserted, result.skipped, result.repaired) == (13_110, 6, 32)
        assert scalar(engine, "SELECT count(*) FROM pub.parcel") == 13_110
        kinds = dict(rows(engine, "SELECT kind, count(*) FROM ops.batch_note WHERE batch_id = "
                                  ":b GROUP BY kind", b=result.batch_id))
        assert (kinds["repaired"], kinds["skipped"]) == (32, 6)
        assert scalar(engine, "SELECT DISTINCT ST_SRID(geom) FROM core.parcel") == 26986
    finally:
        engine.dispose()
