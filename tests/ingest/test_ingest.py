"""Ingest, proved on small files written here with answers worked out by hand: every feature
validated before anything is visible, all or nothing, versions only for what changed."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd
import pytest
import sqlalchemy as sa
from ingest_helpers import (
    X0,
    Y0,
    bowtie,
    fingerprint,
    rows,
    scalar,
    spike,
    square,
    write_csv,
    write_gpkg,
)

from etl.ingest import ingest
from etl.problems import IngestRefused


def _parcels(tmp_path: Path, name: str, spec: dict[str, object]) -> Path:
    """Parcels by PIN: a square index, or a geometry."""
    features = []
    for pin, g in spec.items():
        features.append({"PIN": pin, "OWNER": f"owner of {pin}",
                         "geometry": square(g) if isinstance(g, int) else g})
    return write_gpkg(tmp_path / name, features)


def _versions(engine: sa.Engine, batch_id: int) -> tuple[int, int]:
    """(versions opened, versions closed) by a batch."""
    return (scalar(engine, "SELECT count(*) FROM core.parcel WHERE batch_id = :b", b=batch_id),
            scalar(engine, "SELECT count(*) FROM core.parcel WHERE closed_batch_id = :b",
                   b=batch_id))


def test_parcels_load_with_exact_areas_and_provenance(db_url: str, engine: sa.Engine,
                                                      tmp_path: Path) -> None:
    path = _parcels(tmp_path, "parcels.gpkg", {"01-31-23-11-0001": 0, "01 31 23 11 0002": 1})
    result = ingest(db_url, "parcel", path)
    assert (result.status, result.inserted, result.features) == ("loaded", 2, 2)
    got = rows(engine, "SELECT pin, pin_normalized, area_acres, source_attributes, batch_id "
                       "FROM pub.parcel ORDER BY pin_normalized")
    assert [(r.pin, r.pin_normalized) for r in got] == [
        ("01-31-23-11-0001", "013123110001"), ("01 31 23 11 0002", "013123110002")]
    assert all(float(r.area_acres) == 2.4711 for r in got)
    assert got[0].source_attributes == {"PIN": "01-31-23-11-0001",
                                        "OWNER": "owner of 01-31-23-11-0001"}
    # OWNER is a common name of the owner's field: recognised without a mapping file
    assert rows(engine, "SELECT owner_name, site_address FROM pub.parcel "
                        "ORDER BY pin_normalized")[0] == ("owner of 01-31-23-11-0001", None)
    batch = rows(engine, "SELECT status, layer, file_name, file_sha256, source_crs, "
                         "feature_count, inserted_count FROM ops.batch")
    assert [tuple(b) for b in batch] == [("loaded", "parcel", "parcels.gpkg", batch[0][3],
                                          "EPSG:26915", 2, 2)]
    assert len(batch[0].file_sha256) == 64
    assert scalar(engine, "SELECT count(*) FROM pg_tables WHERE schemaname = 'staging'") == 0


def test_same_file_again_is_a_noop_that_says_so(db_url: str, engine: sa.Engine,
                                               tmp_path: Path) -> None:
    path = _parcels(tmp_path, "p.gpkg", {"A1": 0, "A2": 1})
    ingest(db_url, "parcel", path)
    before = fingerprint(engine)
    again = ingest(db_url, "parcel", path)
    assert again.status == "duplicate"
    assert "same file" in again.message and "nothing changed" in again.message
    after = fingerprint(engine)
    changed = {t for t in after if after[t] != before[t]}
    assert changed == {"ops.batch"}  # only the record of the duplicate delivery
    assert scalar(engine, "SELECT count(*) FROM core.parcel") == 2


def test_redelivery_versions_only_what_changed(db_url: str, engine: sa.Engine,
                                               tmp_path: Path) -> None:
    first = _parcels(tmp_path, "v1.gpkg", {f"P{i}": i for i in range(8)})
    ingest(db_url, "parcel", first)
    ids = dict(rows(engine, "SELECT pin, parcel_id FROM pub.parcel"))
    # P0-P1 unchanged; P2, P3 moved 5 m; P4 grew; P5, P6 gone; P8 new; P7 unchanged
    second = _parcels(tmp_path, "v2.gpkg", {
        "P0": 0, "P1": 1, "P2": square(2, dx=5), "P3": square(3, dx=5),
        "P4": square(4, size=120), "P7": 7, "P8": 8})
    result = ingest(db_url, "parcel", second)
    assert (result.inserted, result.changed, result.closed, result.unchanged) == (1, 3, 2, 3)
    assert _versions(engine, result.batch_id) == (4, 5)  # 3 new versions + 1 new feature
    current = dict(rows(engine, "SELECT pin, parcel_id FROM pub.parcel"))
    assert set(current) == {"P0", "P1", "P2", "P3", "P4", "P7", "P8"}
    assert all(current[p] == ids[p] for p in current if p != "P8")  # stable ids
    assert scalar(engine, "SELECT count(*) FROM core.parcel") == 8 + 1 + 3
    # the unchanged features keep their first version, untouched
    assert scalar(engine, "SELECT count(*) FROM core.parcel WHERE pin IN ('P0', 'P1', 'P7') "
                          "AND batch_id <> 1") == 0
    p4 = scalar(engine, "SELECT area_acres FROM pub.parcel WHERE pin = 'P4'")
    assert float(p4) == round(14_400 / 4046.8564224, 4)


def test_invalid_polygon_repaired_within_tolerance_and_recorded(db_url: str, engine: sa.Engine,
                                                                 tmp_path: Path) -> None:
    path = _parcels(tmp_path, "p.gpkg", {"S1": spike(0), "S2": 1})
    result = ingest(db_url, "parcel", path)
    assert (result.inserted, result.repaired) == (2, 1)
    assert float(scalar(engine, "SELECT area_acres FROM pub.parcel WHERE pin = 'S1'")) == 2.4711
    note = rows(engine, "SELECT source_fid, kind, field, message, detail FROM ops.batch_note "
                        "WHERE kind = 'repaired'")[0]
    assert (note.kind, note.field) == ("repaired", "geometry")
    assert "ST_MakeValid" in note.message and "Self-intersection" in note.message
    assert note.detail["before_m2"] == pytest.approx(10_000)
    assert note.detail["after_m2"] == pytest.approx(10_000)


def test_refusal_names_every_problem_and_changes_nothing(db_url: str, engine: sa.Engine,
                                                         tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path, "base.gpkg", {"B1": 0}))
    before = fingerprint(engine)
    bad = write_gpkg(tmp_path / "bad.gpkg", [
        {"PIN": "B1", "geometry": square(0, dx=1)},  # a change that must not be applied
        {"PIN": "X1", "geometry": bowtie(1)},
        {"PIN": "X2", "geometry": square(2)},
        {"PIN": "X2", "geometry": square(3)},
        {"PIN": None, "geometry": square(4)},
    ])
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "parcel", bad)
    lines = err.value.lines()
    assert fingerprint(engine) == before
    assert len(lines) == 4
    assert any(line.startswith("bad.gpkg: feature 2 (key X1): geometry: invalid") and
               "more than 0.1 percent" in line for line in lines)
    assert sum("feature key 'X2' appears 2 times" in line for line in lines) == 2
    assert any("feature 5: pin: no value (field PIN)" in line for line in lines)
    assert "(and 3 more problems)" in str(err.value)


def test_skip_bad_features_loads_the_rest_and_lists_the_skipped(db_url: str,
                                                                engine: sa.Engine,
                                                                tmp_path: Path) -> None:
    ingest(db_url, "parcel", _parcels(tmp_path, "base.gpkg", {"K1": 0, "K2": 1}))
    bad = write_gpkg(tmp_path / "bad.gpkg", [
        {"PIN": "K1", "geometry": bowtie(0)},  # bad now: skipped, and not closed either
        {"PIN": "N1", "geometry": square(5)},
    ])
    result = ingest(db_url, "parcel", bad, skip_bad_features=True)
    assert (result.inserted, result.skipped, result.closed) == (1, 1, 1)
    assert {r[0] for r in rows(engine, "SELECT pin FROM pub.parcel")} == {"K1", "N1"}
    skipped = rows(engine, "SELECT source_fid, message FROM ops.batch_note "
                           "WHERE batch_id = :b AND kind = 'skipped'", b=result.batch_id)
    assert [s.source_fid for s in skipped] == ["1"]
    assert skipped[0].message.startswith("skipped: invalid")


def test_no_crs_refused_unless_given_and_input_reprojected(db_url: str, engine: sa.Engine,
                                                           tmp_path: Path) -> None:
    lonlat = write_gpkg(tmp_path / "ll.gpkg", [
        {"PIN": "L1", "geometry": square(0)}], crs=None)
    with pytest.raises(IngestRefused, match="declares no CRS.*--crs"):
        ingest(db_url, "parcel", lonlat)
    with pytest.raises(IngestRefused, match="not degrees"):
        ingest(db_url, "parcel", lonlat, crs="EPSG:4326")
    # a 0.001 x 0.001 degree cell near Lino Lakes, declared in the file as EPSG:4326
    import shapely

    cell = shapely.box(-93.1, 45.18, -93.099, 45.181)
    path = write_gpkg(tmp_path / "wgs.gpkg", [{"PIN": "W1", "geometry": cell}],
                      crs="EPSG:4326")
    result = ingest(db_url, "parcel", path)
    assert result.inserted == 1
    srid, area = rows(engine, "SELECT ST_SRID(geom), ST_Area(geom) FROM core.parcel")[0]
    assert srid == 26915
    # 0.001 deg of latitude = 111.1 m; of longitude at 45.18 N = 78.6 m (within 1 percent)
    assert area == pytest.approx(111.1 * 78.6, rel=0.01)
    assert scalar(engine, "SELECT source_crs FROM ops.batch WHERE batch_id = :b",
                  b=result.batch_id) == "EPSG:4326"


def test_missing_required_field_lists_the_fields_the_file_has(db_url: str,
                                                              tmp_path: Path) -> None:
    path = write_gpkg(tmp_path / "p.gpkg", [{"PARCELNUMBER": "1", "ZONE": "R1",
                                             "geometry": square(0)}])
    with pytest.raises(IngestRefused, match=r"needs pin, but the file has no field for it "
                       r"\(its fields are: PARCELNUMBER, ZONE\)"):
        ingest(db_url, "parcel", path)


def test_mapping_file_fields_values_and_constants(db_url: str, engine: sa.Engine,
                                                  tmp_path: Path) -> None:
    mapping = tmp_path / "soil.toml"
    mapping.write_text(
        'layer = "soil"\n'
        '[fields]\n'
        'musym = "SYM"\n'
        'hydrologic_soil_group = { field = "GRP", values = { "wet D" = "D" } }\n'
        'high_groundwater = { value = false }\n'
        'contaminated = { value = "no" }\n')
    path = write_gpkg(tmp_path / "soil.gpkg", [
        {"SYM": "A1", "GRP": "a", "geometry": square(0)},
        {"SYM": "B2", "GRP": "b / d", "geometry": square(1)},
        {"SYM": "C3", "GRP": "wet D", "geometry": square(2)},
    ])
    result = ingest(db_url, "soil", path, mapping=mapping)
    assert result.inserted == 3
    got = rows(engine, "SELECT musym, hydrologic_soil_group, high_groundwater, contaminated "
                       "FROM pub.soil ORDER BY musym")
    assert [tuple(r) for r in got] == [("A1", "A", False, False), ("B2", "B/D", False, False),
                                       ("C3", "D", False, False)]


def test_coded_values_are_checked_and_recognised(db_url: str, engine: sa.Engine,
                                                 tmp_path: Path) -> None:
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "applied_on", "decided_on"],
              [["24-001", "Approved", "2024-01-15", "2024-03-12"],
               ["24-002", "under review", "2024-02-01", ""]])
    assert ingest(db_url, "permit", tmp_path / "permit.csv").inserted == 2
    assert [tuple(r) for r in rows(engine, "SELECT permit_no, status, applied_on::text "
                                           "FROM pub.permit ORDER BY 1")] == [
        ("24-001", "approved", "2024-01-15"), ("24-002", "under_review", "2024-02-01")]
    path = write_gpkg(tmp_path / "impact.gpkg", [
        {"feature_key": "I1", "permit_key": "24-001", "kind": "Drain Partial",
         "geometry": square(0)},
        {"feature_key": "I2", "permit_key": "24-001", "kind": "bulldoze", "geometry": square(1)},
        {"feature_key": "I3", "permit_key": "24-999", "kind": "fill", "geometry": square(2)},
    ])
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "impact", path)
    lines = err.value.lines()
    assert any("(key 24-001/I2): kind: 'bulldoze' (field kind) is not a kind; expected one of "
               "fill, excavate, drain_full, drain_partial" in line for line in lines)
    assert any("(key I3): permit_id: no permit '24-999' in this plan area; load that permit "
               "first" in line for line in lines)
    assert len(lines) == 2


def test_permit_owned_keys_and_scope(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"], ["24-002", "approved", "2024-05-14"]])
    ingest(db_url, "permit", tmp_path / "permit.csv")
    both = write_gpkg(tmp_path / "impacts.gpkg", [
        {"feature_key": "I1", "permit_key": "24-001", "kind": "fill", "geometry": square(0)},
        {"feature_key": "I1", "permit_key": "24-002", "kind": "fill", "geometry": square(1)},
    ])
    assert ingest(db_url, "impact", both).inserted == 2
    keys = rows(engine, "SELECT feature_key FROM core.feature WHERE layer = 'impact' ORDER BY 1")
    assert [k[0] for k in keys] == ["24-001/I1", "24-002/I1"]
    # a file for 24-002 alone replaces 24-002's impacts and leaves 24-001's alone
    one = write_gpkg(tmp_path / "impacts_24-002.gpkg", [
        {"feature_key": "I2", "kind": "excavate", "geometry": square(2)}])
    result = ingest(db_url, "impact", one, permit="24-002")
    assert (result.inserted, result.closed) == (1, 1)
    current = rows(engine, "SELECT p.permit_no, i.kind FROM pub.impact i "
                           "JOIN pub.permit p USING (permit_id) ORDER BY 1, 2")
    assert [tuple(r) for r in current] == [("24-001", "fill"), ("24-002", "excavate")]


def test_impact_outside_the_plan_area_is_an_error_elsewhere_a_warning(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    import shapely

    plan = shapely.box(X0, Y0, X0 + 300, Y0 + 300)
    ingest(db_url, "cwmp_area", write_gpkg(tmp_path / "plan.gpkg", [
        {"name": "Test plan", "geometry": plan}]))
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"]])
    ingest(db_url, "permit", tmp_path / "permit.csv")
    far = square(10)  # x from X0 + 1100: outside
    impacts = write_gpkg(tmp_path / "i.gpkg", [
        {"feature_key": "I1", "kind": "fill", "geometry": square(0)},
        {"feature_key": "I2", "kind": "fill", "geometry": far}])
    with pytest.raises(IngestRefused, match=r"feature 2 \(key 24-001/I2\): geometry: lies "
                       r"outside the plan area"):
        ingest(db_url, "impact", impacts, permit="24-001")
    parcels = _parcels(tmp_path, "p.gpkg", {"IN": 0, "OUT": far})
    result = ingest(db_url, "parcel", parcels)
    assert (result.inserted, result.warnings) == (2, 1)
    assert any("OUT" in (n.key or "") and "outside the plan area" in n.message
               for n in result.notes)


def test_csv_with_wkt_and_attribute_csv(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    write_csv(tmp_path / "seed.csv", ["name", "WKT"], [
        ["Central", square(0).wkt], ["Broken", "POLYGON((0 0, 1 1"]])
    with pytest.raises(IngestRefused, match="feature 2.*null or empty geometry"):
        ingest(db_url, "central_wetland_seed", tmp_path / "seed.csv", crs="EPSG:26915")
    write_csv(tmp_path / "seed2.csv", ["name", "WKT"], [["Central", square(0).wkt]])
    with pytest.raises(IngestRefused, match="declares no CRS"):
        ingest(db_url, "central_wetland_seed", tmp_path / "seed2.csv")
    result = ingest(db_url, "central_wetland_seed", tmp_path / "seed2.csv", crs="EPSG:26915")
    assert result.inserted == 1
    assert float(scalar(engine, "SELECT area_acres FROM pub.central_wetland_seed")) == 2.4711


def test_credit_transfer_references_and_checks(db_url: str, engine: sa.Engine,
                                               tmp_path: Path) -> None:
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"], ["24-002", "approved", "2024-05-14"]])
    ingest(db_url, "permit", tmp_path / "permit.csv")
    write_csv(tmp_path / "t.csv",
              ["feature_key", "from_permit_key", "to_permit_key", "acres", "transferred_on"],
              [["T1", "24-001", "24-002", "0.15", "2025-07-10"],
               ["T2", "24-001", "24-001", "0.10", "2025-07-10"],
               ["T3", "24-001", "24-002", "-1", "07/10/2025"]])
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "credit_transfer", tmp_path / "t.csv")
    text = "\n".join(err.value.lines())
    assert "feature 2 (key 24-001/T2): distinct_permits: fails the rule" in text
    assert "feature 3 (key 24-001/T3): transferred_on: '07/10/2025' (field transferred_on) " \
           "is not a date as YYYY-MM-DD" in text
    assert "acres_check" in text
    write_csv(tmp_path / "t_ok.csv",
              ["feature_key", "from_permit_key", "to_permit_key", "acres", "transferred_on"],
              [["T1", "24-001", "24-002", "0.15", "2025-07-10"]])
    # valid values, but a refusal raised inside the database (spec 4: a transfer larger than the
    # giving permit's surplus is refused) comes back as one line, and nothing is kept
    before = fingerprint(engine)
    with pytest.raises(IngestRefused, match=r"^t_ok.csv: .*surplus"):
        ingest(db_url, "credit_transfer", tmp_path / "t_ok.csv")
    assert fingerprint(engine) == before


def test_curves_linearised_and_zm_dropped_are_noted(db_url: str, engine: sa.Engine,
                                                    shared: Path, tmp_path: Path) -> None:
    fixtures = shared / "data/messy/pyogrio_fixtures"
    result = ingest(db_url, "central_wetland_seed", fixtures / "multisurface.gpkg")
    assert result.inserted == 1
    assert scalar(engine, "SELECT GeometryType(geom) FROM core.central_wetland_seed") == \
        "MULTIPOLYGON"
    mapping = tmp_path / "ditch.toml"
    mapping.write_text('[fields]\nstatus = { value = "active" }\n')
    result = ingest(db_url, "ditch", fixtures / "line_zm.gpkg", mapping=mapping)
    assert result.inserted == 1
    assert rows(engine, "SELECT GeometryType(geom), ST_CoordDim(geom) FROM core.ditch")[0] == \
        ("MULTILINESTRING", 2)
    notes = [r[0] for r in rows(engine, "SELECT message FROM ops.batch_note WHERE kind = 'info'")]
    assert "1 features had curves; they were linearised (ST_CurveToLine)" in notes
    assert "1 features had Z or M values; they were dropped (2D is stored)" in notes


def test_cli_prints_every_problem_and_exits_non_zero(db_url: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    from rulem_cli.main import main

    bad = write_gpkg(tmp_path / "bad.gpkg", [{"PIN": "X", "geometry": bowtie(0)},
                                              {"PIN": "Y", "geometry": bowtie(1)}])
    assert main(["--db", db_url, "ingest", "parcel", str(bad)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("bad.gpkg: feature 1 (key X): geometry: invalid")
    assert err[1].startswith("bad.gpkg: feature 2 (key Y): geometry: invalid")
    assert err[-1].startswith("rulem-db ingest: bad.gpkg: feature 1")
    good = _parcels(tmp_path, "good.gpkg", {"G1": 0})
    assert main(["--db", db_url, "ingest", "parcel", str(good), "--format", "json"]) == 0
    out = {r["item"]: r["value"] for r in json.loads(capsys.readouterr().out)}
    assert (out["status"], out["new"]) == ("loaded", 1)


def test_unknown_layer_and_mapping_mistakes_are_one_line(db_url: str, tmp_path: Path) -> None:
    path = _parcels(tmp_path, "p.gpkg", {"A": 0})
    mapping = tmp_path / "m.toml"
    mapping.write_text('[fields]\npin = "PARCEL_NUMBER"\n')
    with pytest.raises(IngestRefused, match="maps pin from field 'PARCEL_NUMBER', which the "
                       "file does not have; its fields are PIN, OWNER"):
        ingest(db_url, "parcel", path, mapping=mapping)
    mapping.write_text('[fields]\npin = "PIN"\nacreage = "X"\n')
    with pytest.raises(IngestRefused, match="names column 'acreage', which layer parcel does "
                       "not have"):
        ingest(db_url, "parcel", path, mapping=mapping)
    with pytest.raises(IngestRefused, match="unknown layer 'parcels'"):
        ingest(db_url, "parcels", path)
    (tmp_path / "empty.csv").write_text("permit_no,status\n")
    with pytest.raises(IngestRefused, match="holds no features"):
        ingest(db_url, "permit", tmp_path / "empty.csv")


def test_etl_role_can_ingest(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """The nightly flow runs as rulem_etl: staging, merge functions and core are open to it."""
    import os

    role = f"ingest_tester_{os.getpid()}"
    with engine.begin() as conn:
        conn.execute(sa.text(f"CREATE ROLE {role} LOGIN PASSWORD 'x' IN ROLE rulem_etl"))
    try:
        url = sa.engine.make_url(db_url).set(username=role, password="x")
        path = _parcels(tmp_path, "p.gpkg", {"E1": 0})
        assert ingest(url.render_as_string(hide_password=False), "parcel", path).inserted == 1
        assert scalar(engine, "SELECT created_by FROM core.parcel") == role
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text(f"REASSIGN OWNED BY {role} TO CURRENT_USER"))
            conn.execute(sa.text(f"DROP OWNED BY {role}"))
            conn.execute(sa.text(f"DROP ROLE {role}"))


def test_geometry_must_fit_the_layer(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    import shapely

    x = X0 + 500
    path = tmp_path / "mixed.geojson"
    gdf = gpd.GeoDataFrame(
        {"PIN": ["PT", "LN", "GC", "MP"]},
        geometry=[shapely.Point(x, Y0), shapely.LineString([(x, Y0), (x + 10, Y0)]),
                  shapely.GeometryCollection([square(0), square(1)]),
                  shapely.MultiPolygon([square(2), square(3)])], crs="EPSG:26915")
    gdf.to_file(path, driver="GeoJSON", engine="pyogrio")
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "parcel", path)
    lines = err.value.lines()
    assert len(lines) == 2
    assert "(key PT): geometry: a point, but parcel takes polygons; deliver polygons" in lines[0]
    assert "(key LN): geometry: a linestring, but parcel takes polygons" in lines[1]
    result = ingest(db_url, "parcel", path, skip_bad_features=True)
    assert (result.inserted, result.skipped) == (2, 2)
    got = dict(rows(engine, "SELECT pin, ST_NumGeometries(geom) FROM pub.parcel"))
    assert got == {"GC": 2, "MP": 2}


def test_an_ambiguous_bare_reference_key_is_refused_naming_the_candidates(
        db_url: str, tmp_path: Path) -> None:
    for number in ("D-2024-01", "D-2024-02"):
        ingest(db_url, "delineation", write_gpkg(tmp_path / f"{number}.gpkg", [
            {"feature_key": "W-1", "geometry": square(0)}]), delineation=number)
    write_csv(tmp_path / "fa.csv", ["feature_key", "wetland_key", "method"],
              [["FA-1", "W-1", "MnRAM 3.4"], ["FA-2", "D-2024-02/W-1", "MnRAM 3.4"]])
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "functional_assessment", tmp_path / "fa.csv")
    assert err.value.lines() == [
        "fa.csv: feature 1 (key FA-1): wetland_id: 'W-1' names 2 current wetland features "
        "(D-2024-01/W-1, D-2024-02/W-1); give the full key (field wetland_key)"]
