"""`rulem-db export FILE.gpkg`: one GeoPackage that opens with GDAL and holds every published
view with all its features, the right geometry type and EPSG code, and the descriptions."""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from publish_fixture import SRID, published_url  # noqa: F401  (fixture)

from rulem_db.reports.export import read_layers

pytestmark = pytest.mark.skipif(shutil.which("ogr2ogr") is None, reason="GDAL not installed")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rulem_cli.main", *args],
                          capture_output=True, text=True, timeout=300)


# pub.finding (mixed geometry) is split by geometry type, as the nightly's findings.gpkg is:
# layer -> (the rows it takes, its geometry type in the GeoPackage, what its description adds).
FINDING_SPLIT = {
    "finding_point": ("ST_GeometryType(geom) IN ('ST_Point', 'ST_MultiPoint')", "MULTIPOINT",
                      "points"),
    "finding_line": ("ST_GeometryType(geom) IN ('ST_LineString', 'ST_MultiLineString')",
                     "MULTILINESTRING", "lines"),
    "finding_area": ("ST_GeometryType(geom) IN ('ST_Polygon', 'ST_MultiPolygon')",
                     "MULTIPOLYGON", "areas"),
    "finding_list": ("geom IS NULL", None, "those without a place (no geometry)"),
}


def _truth(url: str, history: bool = False) -> dict[str, tuple[int, str | None, str]]:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            views = conn.execute(sa.text(
                "SELECT c.relname, upper(g.type) AS type, obj_description(c.oid, 'pg_class') "
                "AS doc FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "LEFT JOIN geometry_columns g ON g.f_table_schema = 'pub' "
                "  AND g.f_table_name = c.relname "
                "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') ORDER BY 1")).all()
            names = {v.relname for v in views}
            truth = {v.relname: (conn.execute(sa.text(f'SELECT count(*) FROM pub."{v.relname}"'))
                                 .scalar(), v.type, v.doc)
                     for v in views if history or v.relname.removesuffix("_history") == v.relname
                     or v.relname.removesuffix("_history") not in names}
            _, _, doc = truth.pop("finding")
            for layer, (where, gtype, words) in FINDING_SPLIT.items():
                count = conn.execute(sa.text(f"SELECT count(*) FROM pub.finding WHERE {where}"))
                truth[layer] = (count.scalar(), gtype, f"{doc} This layer: {words}.")
            return truth
    finally:
        eng.dispose()


@pytest.fixture(scope="module")
def exported(published_url: str, tmp_path_factory) -> Path:  # noqa: F811
    target = tmp_path_factory.mktemp("export") / "rulem.gpkg"
    proc = _cli("--db", published_url, "export", str(target), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return target


def test_the_geopackage_holds_every_published_view_with_its_features(
        published_url: str, exported: Path) -> None:  # noqa: F811
    truth = _truth(published_url)
    layers = {layer.name: layer for layer in read_layers(exported)}
    assert sorted(layers) == sorted(truth)
    for name, (count, gtype, doc) in truth.items():
        layer = layers[name]
        assert layer.features == count, name
        assert layer.geometry_type == gtype, name
        assert layer.srid == (SRID if gtype else None), name
        assert layer.description == doc, name
    assert layers["parcel"].features == 4 and layers["wetland"].features == 3


def test_gdal_opens_it_and_reads_the_crs_as_epsg(exported: Path) -> None:
    proc = subprocess.run(["ogrinfo", "-ro", "-so", str(exported), "parcel", "wetland"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "ERROR" not in proc.stderr, proc.stderr
    styles = subprocess.run(["ogrinfo", "-ro", "-al", "-q", str(exported), "layer_styles"],
                            capture_output=True, text=True)
    assert styles.returncode == 0 and styles.stderr == "", styles.stderr  # conformant
    assert proc.stdout.count(f'ID["EPSG",{SRID}]]') == 2
    assert "Feature Count: 4" in proc.stdout
    listing = subprocess.run(["ogrinfo", "-ro", "-q", str(exported)], capture_output=True,
                             text=True).stdout
    assert re.search(r"^\d+: parcel \(Multi Polygon\)$", listing, re.M)
    assert re.search(r"^\d+: permit \(None\)$", listing, re.M)


def test_columns_keep_their_descriptions_and_values(exported: Path) -> None:
    with sqlite3.connect(exported) as lite:
        described = dict(lite.execute(
            "SELECT column_name, description FROM gpkg_data_columns WHERE table_name = 'impact'"))
        row = lite.execute("SELECT permit_no, area_acres FROM impact").fetchone()
        extension = lite.execute(
            "SELECT count(*) FROM gpkg_extensions WHERE table_name = 'gpkg_data_columns' "
            "AND extension_name = 'gpkg_schema'").fetchone()[0]
    assert described["permit_no"].startswith("Permit number")
    assert described["area_acres"].startswith("Planar area")
    assert row == ("24-101", 1.2355)
    assert extension == 1


def test_history_on_request_and_an_existing_file_is_not_overwritten(
        published_url: str, exported: Path, tmp_path: Path) -> None:  # noqa: F811
    again = _cli("--db", published_url, "export", str(exported))
    assert again.returncode != 0
    assert again.stderr.startswith("rulem-db export:") and "--overwrite" in again.stderr
    assert len(again.stderr.strip().splitlines()) == 1
    target = tmp_path / "with-history.gpkg"
    proc = _cli("--db", published_url, "export", str(target), "--history")
    assert proc.returncode == 0, proc.stderr
    layers = {layer.name: layer.features for layer in read_layers(target)}
    truth = _truth(published_url, history=True)
    assert layers == {name: t[0] for name, t in truth.items()}
    with sqlite3.connect(target) as lite:  # history views share their layer's look
        assert lite.execute("SELECT count(*) FROM layer_styles "
                            "WHERE f_table_name = 'parcel_history'").fetchone() == (1,)
    assert layers["parcel_history"] == 4


def test_findings_split_by_geometry_type_as_the_nightly_names_them(
        published_url: str, exported: Path) -> None:  # noqa: F811
    import pyogrio

    eng = sa.create_engine(published_url)
    try:
        with eng.connect() as conn:
            total = conn.execute(sa.text("SELECT count(*) FROM pub.finding")).scalar_one()
            codes = sorted(conn.execute(sa.text("SELECT check_code FROM pub.finding"))
                           .scalars())
    finally:
        eng.dispose()
    listed = {name: gtype for name, gtype in pyogrio.list_layers(exported)}
    assert "finding" not in listed
    assert {name: listed[name] for name in FINDING_SPLIT} == {
        "finding_point": "MultiPoint", "finding_line": "MultiLineString",
        "finding_area": "MultiPolygon", "finding_list": None}
    frames = {name: pyogrio.read_dataframe(exported, layer=name) for name in FINDING_SPLIT}
    assert sum(len(f) for f in frames.values()) == total > 0
    assert sorted(c for f in frames.values() for c in f["check_code"]) == codes
    assert "geom" not in frames["finding_list"].columns


def test_the_geopackage_carries_qgis_styles_for_its_layers(exported: Path) -> None:
    with sqlite3.connect(exported) as lite:
        styles = {r[0]: r[1:] for r in lite.execute(
            "SELECT f_table_name, f_table_schema, f_geometry_column, useAsDefault, styleQML "
            "FROM layer_styles")}
        registered = lite.execute("SELECT data_type FROM gpkg_contents "
                                  "WHERE table_name = 'layer_styles'").fetchone()
        drawn = {r[0] for r in lite.execute("SELECT table_name FROM gpkg_geometry_columns")}
    assert registered == ("attributes",)
    # every layer with a geometry opens styled; QGIS looks a style up by the layer's name,
    # an empty schema and the geometry column
    assert drawn <= set(styles)
    assert all(s[:3] == ("", "geom", 1) for s in styles.values())
    assert "finding_list" not in styles
    assert 'fieldName="pin_display"' in styles["parcel"][3]
    assert "<layerGeometryType>0</layerGeometryType>" in styles["finding_point"][3]
    assert "<layerGeometryType>2</layerGeometryType>" in styles["finding_area"][3]
    assert "layer_styles" not in {layer.name for layer in read_layers(exported)}
