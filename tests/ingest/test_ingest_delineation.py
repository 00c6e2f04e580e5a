"""`ingest delineation FILE` (docs/ingest.md, "Delineations"): one file of wetland polygons
becomes one delineation, status submitted, with its study area; revisions, approval by a status
CSV, supersession, and delineation records. Areas worked out by hand from 100 m squares."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import shapely
import sqlalchemy as sa
from ingest_helpers import X0, Y0, fingerprint, rows, scalar, square, write_csv, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused

ACRE = 4046.8564224


def _wetlands(tmp_path: Path, name: str, spec: dict[str, shapely.Geometry]) -> Path:
    return write_gpkg(tmp_path / name, [
        {"feature_key": key, "ATTRIBUTE": "PEM1C", "CIRC39": "Type 3",
         "COMMUNITY": "shallow marsh", "geometry": geom} for key, geom in spec.items()])


def _parcels(db_url: str, tmp_path: Path) -> None:
    ingest(db_url, "parcel", write_gpkg(tmp_path / "parcels.gpkg", [
        {"PIN": "P0", "geometry": square(0)}, {"PIN": "P1", "geometry": square(1)}]))


def _approve(db_url: str, tmp_path: Path, number: str, on: str) -> None:
    write_csv(tmp_path / f"approve_{number}.csv",
              ["delineation_no", "status", "tep_reviewed_on", "tep_findings", "approved_on"],
              [[number, "approved", on, "Boundaries concur.", on]])
    ingest(db_url, "delineation", tmp_path / f"approve_{number}.csv")


W1 = shapely.box(X0 + 10, Y0 + 10, X0 + 60, Y0 + 60)  # inside parcel P0
W2 = shapely.box(X0 + 150, Y0 + 50, X0 + 250, Y0 + 100)  # 40 x 50 m beyond P1's east edge
W3 = shapely.box(X0 + 1000, Y0, X0 + 1050, Y0 + 50)  # touches no parcel


def test_delineation_with_study_area_from_the_parcels_it_touches(db_url: str, engine: sa.Engine,
                                                                 tmp_path: Path) -> None:
    _parcels(db_url, tmp_path)
    path = _wetlands(tmp_path, "consultant.gpkg", {"W1": W1, "W2": W2, "W3": W3})
    result = ingest(db_url, "delineation", path, permit=None)
    number = f"D-{dt.date.today().year}-01"
    assert (result.delineation_no, result.inserted) == (number, 3)
    d = rows(engine, "SELECT delineation_no, status, submitted_on, file_name, file_sha256, "
                     "ST_Area(geom) AS m2 FROM pub.delineation")[0]
    assert (d.delineation_no, d.status, d.submitted_on) == (number, "submitted", dt.date.today())
    assert d.file_name == "consultant.gpkg" and len(d.file_sha256) == 64
    # P0 + P1 + the part of W2 beyond P1 + W3: 10,000 + 10,000 + 2,000 + 2,500 m2
    assert d.m2 == pytest.approx(24_500)
    wet = rows(engine, "SELECT f.feature_key, w.cowardin_code, w.circular39_type, "
                       "w.eggers_reed_community, w.delineation_status FROM pub.wetland w "
                       "JOIN core.feature f ON f.feature_id = w.wetland_id ORDER BY 1")
    assert [tuple(w) for w in wet] == [
        (f"{number}/W{i}", "PEM1C", "3", "Shallow Marsh", "submitted") for i in (1, 2, 3)]
    # a submitted delineation defines no wetland yet (docs/ledger.md section 1)
    assert scalar(engine, "SELECT count(*) FROM core.wetland_layer(1, current_date)") == 0


def test_study_area_without_parcels_is_the_convex_hull_or_the_file_given(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    first = ingest(db_url, "delineation", _wetlands(tmp_path, "a.gpkg",
                                                    {"A": square(0), "B": square(2)}))
    # the hull of two 100 m squares 120 m apart: 320 x 100 m
    assert scalar(engine, "SELECT ST_Area(geom) FROM pub.delineation WHERE delineation_no = :n",
                  n=first.delineation_no) == pytest.approx(32_000)
    study = write_gpkg(tmp_path / "study.gpkg", [
        {"geometry": shapely.box(X0 - 50, Y0 - 50, X0 + 350, Y0 + 150)}])
    second = ingest(db_url, "delineation", _wetlands(tmp_path, "b.gpkg", {"A": square(0)}),
                    study_area=study)
    assert second.delineation_no.endswith("-02")
    assert scalar(engine, "SELECT ST_Area(geom) FROM pub.delineation WHERE delineation_no = :n",
                  n=second.delineation_no) == pytest.approx(400 * 200)


def test_revision_then_approval_then_a_new_delineation_supersedes(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    first = ingest(db_url, "delineation", _wetlands(tmp_path, "v1.gpkg",
                                                    {"A": square(0), "B": square(1)}),
                   delineation="D-2024-07")
    assert first.delineation_no == "D-2024-07"
    # the consultant revises before approval: B moved, A unchanged, C new
    revised = ingest(db_url, "delineation", _wetlands(tmp_path, "v2.gpkg", {
        "A": square(0), "B": square(1, dx=5), "C": square(2)}), delineation="D-2024-07")
    assert (revised.inserted, revised.changed, revised.unchanged, revised.closed) == (1, 1, 1, 0)
    assert scalar(engine, "SELECT count(*) FROM core.delineation") == 2  # a new version
    _approve(db_url, tmp_path, "D-2024-07", "2024-09-01")
    d = rows(engine, "SELECT status, approved_on, tep_findings, file_name, ST_Area(geom) AS m2 "
                     "FROM pub.delineation")[0]
    assert (d.status, d.approved_on, d.tep_findings) == ("approved", dt.date(2024, 9, 1),
                                                         "Boundaries concur.")
    assert d.file_name == "v2.gpkg"  # a status change keeps the delivery's provenance
    assert d.m2 == pytest.approx(320 * 100)  # and the study area
    assert scalar(engine, "SELECT count(*) FROM core.wetland_layer(1, '2024-09-01')") == 3
    assert scalar(engine, "SELECT count(*) FROM core.wetland_layer(1, '2024-08-31')") == 0
    # an approved delineation is part of the record: a revision of it is refused
    before = fingerprint(engine)
    with pytest.raises(IngestRefused, match="D-2024-07 was approved on 2024-09-01.*new "
                       "delineation"):
        ingest(db_url, "delineation", _wetlands(tmp_path, "v3.gpkg", {"A": square(0)}),
               delineation="D-2024-07")
    assert fingerprint(engine) == before
    # a re-delineation over part of the site: noted, and it wins there once approved
    redo = ingest(db_url, "delineation", _wetlands(tmp_path, "redo.gpkg", {"R": square(0)}),
                  delineation="D-2025-01")
    info = scalar(engine, "SELECT message FROM ops.batch_note WHERE batch_id = :b "
                          "AND field = 'delineation'", b=redo.batch_id)
    assert "once approved it supersedes, where their study areas overlap, D-2024-07 " \
           "(2.4711 acres)" in info
    _approve(db_url, tmp_path, "D-2025-01", "2025-03-01")
    keys = rows(engine, "SELECT f.feature_key FROM core.wetland_layer(1, '2025-03-01') l "
                        "JOIN core.feature f ON f.feature_id = l.wetland_id ORDER BY 1")
    assert [k[0] for k in keys] == ["D-2024-07/B", "D-2024-07/C", "D-2025-01/R"]


def test_status_change_for_an_unknown_delineation_is_refused(db_url: str, engine: sa.Engine,
                                                             tmp_path: Path) -> None:
    write_csv(tmp_path / "s.csv", ["delineation_no", "status", "approved_on"],
              [["D-1999-01", "approved", "1999-05-01"]])
    with pytest.raises(IngestRefused, match="no current delineation 'D-1999-01'; a file "
                       "without geometry only changes features that exist"):
        ingest(db_url, "delineation", tmp_path / "s.csv")
    write_csv(tmp_path / "s2.csv", ["delineation_no", "status"], [["D-1999-01", "approved"]])
    with pytest.raises(IngestRefused):
        ingest(db_url, "delineation", tmp_path / "s2.csv")


def test_delineation_records_with_their_study_areas(db_url: str, engine: sa.Engine,
                                                    tmp_path: Path) -> None:
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"]])
    ingest(db_url, "permit", tmp_path / "permit.csv")
    records = write_gpkg(tmp_path / "delineations.gpkg", [
        {"feature_key": "D-2019-01", "delineation_no": "D-2019-01", "permit_key": None,
         "consultant": "Sandplain", "status": "approved", "submitted_on": "2019-06-10",
         "approved_on": "2019-08-06", "geometry": square(0)},
        {"feature_key": "D-2025-03", "delineation_no": "D-2025-03", "permit_key": "24-001",
         "consultant": "Rice Creek", "status": "approved", "submitted_on": "2025-08-01",
         "approved_on": None, "geometry": square(1)},
    ], layer="delineation")
    with pytest.raises(IngestRefused, match="approved_has_date"):
        ingest(db_url, "delineation", records, records=True)
    records = write_gpkg(tmp_path / "delineations2.gpkg", [
        {"feature_key": "D-2019-01", "delineation_no": "D-2019-01", "consultant": "Sandplain",
         "status": "approved", "approved_on": "2019-08-06", "geometry": square(0)}],
        layer="delineation")
    result = ingest(db_url, "delineation", records, records=True)
    assert result.inserted == 1
    d = rows(engine, "SELECT delineation_no, status, approved_on, file_name "
                     "FROM pub.delineation")[0]
    assert tuple(d) == ("D-2019-01", "approved", dt.date(2019, 8, 6), "delineations2.gpkg")


def test_same_delineation_file_again_is_a_noop(db_url: str, engine: sa.Engine,
                                               tmp_path: Path) -> None:
    path = _wetlands(tmp_path, "w.gpkg", {"A": square(0)})
    ingest(db_url, "delineation", path)
    again = ingest(db_url, "delineation", path)
    assert again.status == "duplicate"
    assert scalar(engine, "SELECT count(*) FROM core.delineation") == 1
