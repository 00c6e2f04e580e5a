"""Every file in ../shared/data/messy/ through ingest: each is loaded correctly or refused with a
clear message, and after every refusal every table holds exactly what it held before."""

from __future__ import annotations

import re
from pathlib import Path

import pyogrio
import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, write_csv

from etl.ingest import ingest
from etl.problems import IngestRefused

SIDECARS = (".dbf", ".shx", ".sbn", ".sbx", ".prj", ".cpg")
STATUS = '[fields]\nstatus = { value = "active" }\n'
MARKER = '[fields]\nmarker_type = { value = "flush" }\n'
TRANSFER = ('key = "id"\n[fields]\nacres = "v"\nfrom_permit_id = { value = "24-001" }\n'
            'to_permit_id = { value = "24-002" }\ntransferred_on = { value = "2025-01-01" }\n')
INVALID = 'key = "feature_key"\ngeometry = "wkt_epsg4326"\n'
NOT_GIS = r"GDAL cannot read it \(.*not recognized as being in a supported file format\.\)"
OUTSIDE = (r"its features lie at longitude {}, wholly outside where the working CRS "
           r"EPSG:26915 is used \(longitude -96.00 to -90.00")

# file -> (layer, options, expected): expected is the number of features loaded, or a pattern
# the refusal's first line must match (after the file name).
CASES: dict[str, tuple[str, dict[str, str], int | str]] = {
    "SOURCE.txt": ("parcel", {}, NOT_GIS),
    "gdal_autotest_text/inf_nan.csv": (
        "credit_transfer", {"mapping": TRANSFER},
        r"feature 2 \(key 24-001/2\): acres: 'inf' \(field v\) is not a finite number"),
    "gdal_autotest_text/point_with_utf8bom.json": (
        "buffer_marker", {"permit": "24-001", "mapping": MARKER},
        OUTSIDE.format(r"100.00 to 100.00, latitude 0.00 to 0.00")),
    "gdal_autotest_text/unbalanced_double_quotes.csv": (
        "permit", {}, r"is not valid CSV near line 3 .*unbalanced double quote"),
    "geos/COPYING.head": ("parcel", {}, NOT_GIS),
    "geos/geos_isvalid_cases.csv": (
        "central_wetland_seed", {"crs": "EPSG:26915"},
        r"feature 37: geometry: has a coordinate \(nan 10\) that is not a number"),
    "geos/geos_overlay_cases.csv": ("central_wetland_seed", {}, r"declares no CRS .*--crs"),
    "pyogrio_fixtures/README.md": ("central_wetland_seed", {}, NOT_GIS),
    "pyogrio_fixtures/curve.gpkg": ("ditch", {"mapping": STATUS}, 1),
    "pyogrio_fixtures/curvepolygon.gpkg": (
        "central_wetland_seed", {}, OUTSIDE.format(r"-128.97 to -122.03, latitude 51.41 to "
                                                   r"55.36")),
    "pyogrio_fixtures/line_zm.gpkg": ("ditch", {"mapping": STATUS}, 1),
    "pyogrio_fixtures/list_field_values_file.parquet": (
        "central_wetland_seed", {}, r"declares no CRS"),
    "pyogrio_fixtures/list_nested_struct_file.parquet": (
        "central_wetland_seed", {"crs": "EPSG:4326"},
        OUTSIDE.format(r"1.00 to 1.00, latitude 1.00 to 1.00")),
    "pyogrio_fixtures/multisurface.gpkg": ("central_wetland_seed", {}, 1),
    "pyogrio_fixtures/test_gpkg_nulls.gpkg": (
        "buffer_marker", {"permit": "24-001", "mapping": MARKER},
        OUTSIDE.format(r"0.00 to 4.00, latitude 0.00 to 4.00")),
    "pyshp/LICENSE.TXT": ("parcel", {}, NOT_GIS),
    "pyshp/MyPolyZ.shp": ("central_wetland_seed", {"crs": "EPSG:4326"}, 1),
    "pyshp/NullTest.shp": ("buffer_marker", {"permit": "24-001", "mapping": MARKER},
                           r"declares no CRS"),
    "pyshp/blockgroups.shp": ("central_wetland_seed", {}, r"declares no CRS"),
    "pyshp/corrupt_too_long.shp": (
        "ditch", {"mapping": STATUS, "crs": "EPSG:26915"},
        OUTSIDE.format(r"-97.49 to -97.49, latitude 0.00 to 0.00")),
    "pyshp/empty_zipfile.zip": (
        "parcel", {}, r"the zip holds no shapefile, File Geodatabase, GeoPackage or GeoJSON "
                      r"\(it holds dummyfile.txt\)"),
    "pyshp/latin1.shp": ("central_wetland_seed", {}, r"the shapefile's .shx file is missing"),
    "pyshp/shapetype.shp": ("buffer_marker", {}, r"holds no features"),
    "real_invalid/real_invalid_polygons.csv": (
        "central_wetland_seed", {"mapping": INVALID, "crs": "EPSG:4326"},
        OUTSIDE.format(r"-77.12 to -71.07, latitude 38.82 to 42.40")),
}


def _deliveries(messy: Path) -> set[str]:
    """Every file a person could hand to ingest (a shapefile's companions travel with it)."""
    out = set()
    for p in messy.rglob("*"):
        if p.is_file() and not (p.suffix.lower() in SIDECARS and p.with_suffix(".shp").exists()):
            out.add(str(p.relative_to(messy)))
    return out


def _expected_measure(path: Path, geometry: str) -> float:
    """Area (m2) or length (m) in EPSG:26915 computed without the database: GDAL linearises
    curves on read, pyproj transforms."""
    gdf = pyogrio.read_dataframe(path, force_2d=True)
    if gdf.crs is None:
        gdf = gdf.set_crs("EPSG:4326")
    g = gdf.to_crs("EPSG:26915").geometry
    return float(g.area.sum() if geometry == "polygon" else g.length.sum())


def test_every_messy_file_loads_correctly_or_is_refused_changing_nothing(
        db_url: str, engine: sa.Engine, shared: Path, tmp_path: Path) -> None:
    messy = shared / "data/messy"
    assert _deliveries(messy) == set(CASES), "a messy file without an expectation"
    write_csv(tmp_path / "permit.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"], ["24-002", "approved", "2024-05-14"]])
    ingest(db_url, "permit", tmp_path / "permit.csv")
    for name, (layer, options, expected) in CASES.items():
        opts = dict(options)
        if "mapping" in opts:
            mapping = tmp_path / f"{abs(hash(opts['mapping']))}.toml"
            mapping.write_text(opts["mapping"])
            opts["mapping"] = str(mapping)
        before = fingerprint(engine)
        if isinstance(expected, str):
            with pytest.raises(IngestRefused) as err:
                ingest(db_url, layer, messy / name, **opts)
            first = err.value.lines()[0]
            assert first.startswith(Path(name).name + ": "), (name, first)
            assert re.search(expected, first), (name, first)
            assert fingerprint(engine) == before, f"{name}: a refusal changed the database"
        else:
            result = ingest(db_url, layer, messy / name, **opts)
            assert result.features == expected, name
            assert result.inserted + result.changed + result.unchanged == expected, name


def test_messy_geometries_that_load_are_stored_correctly(db_url: str, engine: sa.Engine,
                                                         shared: Path, tmp_path: Path) -> None:
    """Curves linearised, Z and M dropped, reprojected: the stored measure agrees with GDAL and
    PROJ working on the same file outside the database."""
    fixtures, pyshp = shared / "data/messy/pyogrio_fixtures", shared / "data/messy/pyshp"
    (tmp_path / "s.toml").write_text(STATUS)
    for path, layer, kind, opts in [
        (fixtures / "multisurface.gpkg", "central_wetland_seed", "polygon", {}),
        (pyshp / "MyPolyZ.shp", "central_wetland_seed", "polygon", {"crs": "EPSG:4326"}),
        (fixtures / "curve.gpkg", "ditch", "line", {"mapping": tmp_path / "s.toml"}),
        (fixtures / "line_zm.gpkg", "ditch", "line", {"mapping": tmp_path / "s.toml"}),
    ]:
        result = ingest(db_url, layer, path, **opts)
        measure = "ST_Area" if kind == "polygon" else "ST_Length"
        stored = rows(engine, f"SELECT {measure}(geom), ST_CoordDim(geom), ST_SRID(geom), "
                              f"ST_IsValid(geom) FROM core.{layer} WHERE batch_id = :b",
                      b=result.batch_id)
        assert len(stored) == 1, path.name
        value, dims, srid, valid = stored[0]
        assert (dims, srid, valid) == (2, 26915, True), path.name
        assert value == pytest.approx(_expected_measure(path, kind), rel=0.01), path.name
