"""Every delivery format ingest takes, each written here in its real form: zipped shapefiles
among other layers, GeoParquet with and without its metadata, a zipped File Geodatabase."""

from __future__ import annotations

import zipfile
from pathlib import Path

import geopandas as gpd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import shapely
import sqlalchemy as sa
from ingest_helpers import rows, scalar, square

from etl.ingest import ingest
from etl.problems import IngestRefused


def _frame(n: int, crs: str | None = "EPSG:26915") -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"PIN": [f"Z{i}" for i in range(n)]},
                            geometry=[square(i) for i in range(n)], crs=crs)


def _zip(path: Path, folder: Path) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for f in sorted(folder.rglob("*")):
            z.write(f, f.relative_to(folder.parent))
    return path


def test_zipped_shapefile_among_other_layers(db_url: str, engine: sa.Engine,
                                             tmp_path: Path) -> None:
    folder = tmp_path / "delivery"
    folder.mkdir()
    _frame(3).to_file(folder / "parcels.shp", engine="pyogrio")
    _frame(1).to_file(folder / "project_metadata.shp", engine="pyogrio")
    path = _zip(tmp_path / "delivery.zip", folder)
    result = ingest(db_url, "parcel", path)
    assert result.inserted == 3
    note = scalar(engine, "SELECT message FROM ops.batch_note WHERE message LIKE "
                          "'the file has several layers%'")
    assert note.startswith("the file has several layers; read parcels (3 features), the "
                           "biggest, and not project_metadata (1)")
    other = ingest(db_url, "parcel", path, source_layer="project_metadata")
    assert (other.unchanged, other.closed) == (1, 2)
    with pytest.raises(IngestRefused, match="has no layer 'nope'; its layers are parcels, "
                       "project_metadata"):
        ingest(db_url, "parcel", path, source_layer="nope")


def test_incomplete_shapefiles_are_refused(db_url: str, tmp_path: Path) -> None:
    _frame(2).to_file(tmp_path / "p.shp", engine="pyogrio")
    (tmp_path / "p.shx").unlink()
    with pytest.raises(IngestRefused, match=r"p.shp: the shapefile's .shx file is missing"):
        ingest(db_url, "parcel", tmp_path / "p.shp")
    folder = tmp_path / "z"
    folder.mkdir()
    _frame(2).to_file(folder / "q.shp", engine="pyogrio")
    (folder / "q.shx").unlink()
    with pytest.raises(IngestRefused, match=r"z/q.shp in the zip has no .shx index"):
        ingest(db_url, "parcel", _zip(tmp_path / "z.zip", folder))


def test_geoparquet_with_and_without_its_metadata(db_url: str, engine: sa.Engine,
                                                  tmp_path: Path) -> None:
    _frame(2).to_parquet(tmp_path / "p.parquet")
    assert ingest(db_url, "parcel", tmp_path / "p.parquet").inserted == 2
    assert [float(r[0]) for r in rows(engine, "SELECT area_acres FROM pub.parcel")] == \
        [2.4711, 2.4711]
    plain = pa.table({"PIN": ["Y0"], "geometry": [shapely.to_wkb(square(5))]})
    pq.write_table(plain, tmp_path / "plain.parquet")
    with pytest.raises(IngestRefused, match="declares no CRS"):
        ingest(db_url, "parcel", tmp_path / "plain.parquet")
    result = ingest(db_url, "central_wetland_seed", tmp_path / "plain.parquet",
                    crs="EPSG:26915")
    assert result.inserted == 1
    assert scalar(engine, "SELECT source_attributes FROM pub.central_wetland_seed") == \
        {"PIN": "Y0"}


def test_zipped_file_geodatabase(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    gdb = tmp_path / "plan.gdb"
    zones = gpd.GeoDataFrame({"ZONE": ["North basin", "South basin"], "TYPE": ["III", "4"]},
                             geometry=[square(0), square(1)], crs="EPSG:26915")
    zones.to_file(gdb, layer="figure5", driver="OpenFileGDB", engine="pyogrio")
    mapping = tmp_path / "fig5.json"
    mapping.write_text('{"layer": "figure5_area", "fields": {"zone_name": "ZONE", '
                       '"planned_type": "TYPE"}}')
    result = ingest(db_url, "figure5_area", _zip(tmp_path / "plan.zip", gdb), mapping=mapping)
    assert result.inserted == 2
    assert [tuple(r) for r in rows(engine, "SELECT zone_name, planned_type, "
                                           "area_acres::float FROM pub.figure5_area "
                                           "ORDER BY 1")] == [
        ("North basin", "3", 2.4711), ("South basin", "4", 2.4711)]


def test_a_real_geodatabase_elsewhere_on_earth_is_refused_by_its_extent(
        db_url: str, shared: Path, tmp_path: Path) -> None:
    """gSSURGO for the Marshall Islands: read from the zip, then refused for a database whose
    working CRS is UTM 15N (loading it would store coordinates 15,000 km away)."""
    mapping = tmp_path / "soil.toml"
    mapping.write_text('[fields]\nhydrologic_soil_group = { value = "A" }\n'
                       'high_groundwater = { value = false }\ncontaminated = { value = false }\n')
    with pytest.raises(IngestRefused, match=r"gSSURGO_MH_FY26.zip: its features lie at "
                       r"longitude 171.03 to 171.76, latitude 6.07 to 8.71, wholly outside "
                       r"where the working CRS EPSG:26915 is used"):
        ingest(db_url, "soil", shared / "data/real/gssurgo_mh/gSSURGO_MH_FY26.zip",
               source_layer="MUPOLYGON", mapping=mapping)
