"""Hostile input (docs/ingest.md): every file is loaded correctly or refused with a message
naming the file, the feature and the problem, and a refusal leaves every table as it was.

tests/ingest/test_ingest_messy.py covers every file of ../shared/data/messy as delivered; here the
GEOS validity cases and the real invalid polygons are placed where they can load (so each
feature is judged on its own), and the hostile files are made on the spot: broken coordinates,
a million vertices, zip slip, zip bombs, Latin-1 and SQL in attributes, empty and disguised
files, and every limit of etl/limits.py.
"""

from __future__ import annotations

import csv
import re
import struct
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyogrio
import pyproj
import pytest
import shapely
import sqlalchemy as sa
from ingest_helpers import X0, Y0, bowtie, fingerprint, rows, scalar, square, write_csv, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused

# The GEOS cases' coordinates (0..400) are metres east and north of (X0, Y0) in EPSG:26915: a
# transverse Mercator that is UTM 15N shifted by exactly (X0, Y0), so areas are unchanged.
GEOS_CRS = (f"+proj=tmerc +lat_0=0 +lon_0=-93 +k=0.9996 +x_0={500000 - X0:.0f} "
            f"+y_0={-Y0:.0f} +ellps=GRS80 +towgs84=0,0,0 +units=m +no_defs")
# The real invalid polygons are in Cambridge, MA (EPSG:4326): a prime meridian 22 degrees west
# places them at longitude -93, inside the working CRS's zone.
MOVED_WEST = "+proj=longlat +ellps=GRS80 +towgs84=0,0,0 +pm=-22 +no_defs"


def _refused(url: str, engine: sa.Engine, pattern: str, *args, **kwargs) -> IngestRefused:
    """Ingest, expect a refusal whose first line names the file and matches pattern, and check
    that nothing changed."""
    before = fingerprint(engine)
    with pytest.raises(IngestRefused) as err:
        ingest(url, *args, **kwargs)
    first = err.value.lines()[0]
    name = Path(args[1]).name
    assert first.startswith(f"{name}: "), first
    assert re.search(pattern, first), first
    assert fingerprint(engine) == before, f"{name}: a refusal changed the database"
    return err.value


def _parcels(path: Path, polygons: list[shapely.Polygon], **columns: list) -> Path:
    rows_ = [{"pin": f"P{i}", **{k: v[i] for k, v in columns.items()},
              "geometry": shapely.MultiPolygon([p])} for i, p in enumerate(polygons)]
    return write_gpkg(path, rows_)


def test_broken_coordinates_are_refused_naming_the_feature(db_url: str, engine: sa.Engine,
                                                           tmp_path: Path) -> None:
    for label, value, words in [("1e300", 1e300, "beyond any place on earth"),
                                ("nan", float("nan"), r"not a number \(NaN\)"),
                                ("inf", float("inf"), "infinite"),
                                ("-inf", float("-inf"), "infinite")]:
        broken = shapely.Polygon([(X0, Y0), (X0 + 100, Y0), (X0 + 100, value), (X0, Y0 + 100)])
        path = _parcels(tmp_path / f"coords_{label}.gpkg", [square(0), broken, square(2)])
        err = _refused(db_url, engine, rf"feature 2: geometry: has a coordinate .* {words}",
                       "parcel", path, skip_bad_features=True)
        assert err.total == 1


def test_files_that_are_empty_or_not_what_their_extension_says(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(200)
    shp = _parcels(tmp_path / "real.gpkg", [square(0)])
    pyogrio.write_dataframe(gpd.read_file(shp), tmp_path / "lonely.shp")
    for part in ("lonely.shx", "lonely.dbf"):
        (tmp_path / part).unlink()
    cases = [("empty.gpkg", b"", r"is empty \(0 bytes\): the export or the transfer failed"),
             ("empty.zip", b"", r"is empty \(0 bytes\)"),
             ("empty.csv", b"", r"is empty \(0 bytes\)"),
             ("empty.geojson", b"", r"is empty \(0 bytes\)"),
             ("text.gpkg", b"pin,wkt\n1,POINT(0 0)\n",
              r"is not a GeoPackage: its content is text \('pin,wkt 1,POINT"),
             ("feature.gpkg", b'{"type": "FeatureCollection", "features": []}',
              r"is not a GeoPackage: its content is JSON text"),
             ("picture.zip", png, r"is not a zip file: its content is a PNG image"),
             ("picture.parquet", png, r"is not a Parquet file: its content is a PNG image"),
             ("page.shp", b"<!DOCTYPE html><html>404</html>",
              r"is not a shapefile: its content is an HTML page")]
    for name, content, pattern in cases:
        (tmp_path / name).write_bytes(content)
        _refused(db_url, engine, pattern, "parcel", tmp_path / name)
    _refused(db_url, engine, r"the shapefile's .shx and .dbf file is missing", "parcel",
             tmp_path / "lonely.shp")


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_zip_members_that_climb_out_are_refused_before_reading(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    gpkg = _parcels(tmp_path / "parcels.gpkg", [square(0)]).read_bytes()
    for i, member in enumerate(["../../etc/x", "../parcels.gpkg", "data/../../parcels.gpkg",
                                "/etc/parcels.gpkg", "..\\..\\parcels.gpkg",
                                "C:/parcels.gpkg"]):
        path = _zip(tmp_path / f"slip{i}.zip", {"parcels.gpkg": gpkg, member: gpkg})
        _refused(db_url, engine, rf"member {re.escape(repr(member))} climbs out of the zip's "
                 r"folder \(zip slip\)", "parcel", path)


def _forge_sizes(path: Path, declared: int) -> None:
    """Rewrite every member's declared uncompressed size (local and central headers), as a
    hostile zip would, without writing the gigabytes."""
    data = bytearray(path.read_bytes())
    for sig, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        for m in re.finditer(re.escape(sig), bytes(data)):
            struct.pack_into("<I", data, m.start() + offset, declared)
    path.write_bytes(bytes(data))


def test_zip_bombs_are_refused_without_expanding(db_url: str, engine: sa.Engine,
                                                 tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z, \
            z.open("wetlands.geojson", "w", force_zip64=True) as member:
        zeros = bytes(1 << 20)
        for _ in range(200):  # 200 MB of zeros, about 200 KB compressed
            member.write(zeros)
    assert bomb.stat().st_size < 1 << 20
    _refused(db_url, engine, r"member 'wetlands.geojson' expands 1,0\d\d times \(to 200.0 MB "
             r"from .* KB\), more than the limit of 100 \(zip bomb\?\)", "parcel", bomb)

    forged = _zip(tmp_path / "forged.zip", {"parcels.gpkg": bytes(4096)})
    _forge_sizes(forged, 4_000_000_000)
    assert zipfile.ZipFile(forged).infolist()[0].file_size == 4_000_000_000
    _refused(db_url, engine, r"member 'parcels.gpkg' expands .* times \(to 3.7 GB from ",
             "parcel", forged)

    liar = tmp_path / "liar.zip"  # 200 MB of zeros that declare 100 bytes
    with zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as z, \
            z.open("wetlands.geojson", "w", force_zip64=True) as member:
        for _ in range(200):
            member.write(zeros)
    _forge_sizes(liar, 100)
    _refused(db_url, engine, r"member 'wetlands.geojson' expands beyond the 100 bytes it "
             r"declares \(a forged zip, or a zip bomb\)", "parcel", liar)

    big = _zip(tmp_path / "big.zip", {"parcels.gpkg": _parcels(
        tmp_path / "p.gpkg", [square(0)]).read_bytes()})
    monkeypatch.setenv("RULEM_MAX_UNZIPPED_BYTES", "50000")
    _refused(db_url, engine, r"expands to 96.0 KB, more than the limit of 48.8 KB \(zip "
             r"bomb\?\); raise the limit with RULEM_MAX_UNZIPPED_BYTES", "parcel", big)
    monkeypatch.delenv("RULEM_MAX_UNZIPPED_BYTES")
    assert ingest(db_url, "parcel", big).inserted == 1  # the same zip, under the default limit


def test_each_limit_refuses_naming_the_file_or_the_feature(
        db_url: str, engine: sa.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ring = [(X0 + 50 + 40 * np.cos(t), Y0 + 50 + 40 * np.sin(t))
            for t in np.linspace(0, 2 * np.pi, 300, endpoint=False)]
    path = _parcels(tmp_path / "limits.gpkg", [square(0), shapely.Polygon(ring), square(2)],
                    note=["short", "x" * 40, "short"])
    for env, value, pattern in [
        ("RULEM_MAX_FILE_BYTES", "1000", r"is [\d.]+ KB, more than the limit of 1000 bytes for "
                                         r"one delivery; split it, or raise the limit with "
                                         r"RULEM_MAX_FILE_BYTES"),
        ("RULEM_MAX_FEATURES", "2", r"holds 3 features, more than the limit of 2; split it, or "
                                    r"raise the limit with RULEM_MAX_FEATURES"),
        ("RULEM_MAX_VERTICES", "100", r"feature 2: geometry: has 301 vertices, more than the "
                                      r"limit of 100 for one feature"),
        ("RULEM_MAX_ATTRIBUTE_CHARS", "39", r"feature 2: note: a value of 40 characters, more "
                                            r"than the limit of 39"),
        ("RULEM_MAX_ABS_COORDINATE", "5000000", r"feature 1: geometry: has a coordinate .* "
                                                r"beyond any place on earth"),
    ]:
        monkeypatch.setenv(env, value)
        _refused(db_url, engine, pattern, "parcel", path)
        monkeypatch.delenv(env)
    assert ingest(db_url, "parcel", path).inserted == 3  # under the default limits


def test_a_csv_without_a_feature_count_is_stopped_at_the_limit_while_reading(
        db_url: str, engine: sa.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_csv(tmp_path / "permits.csv", ["permit_no", "status"],
                     [[f"25-{i:03d}", "approved"] for i in range(30)])
    monkeypatch.setenv("RULEM_MAX_FEATURES", "29")
    _refused(db_url, engine, r"holds more than 29 features, the limit; split it, or raise the "
             r"limit with RULEM_MAX_FEATURES", "permit", path)


@pytest.mark.slow
def test_a_polygon_of_a_million_vertices_loads_whole(db_url: str, engine: sa.Engine,
                                                     tmp_path: Path) -> None:
    n = 1_000_000
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    ring = np.column_stack([X0 + 500 + 400 * np.cos(t), Y0 + 500 + 400 * np.sin(t)])
    polygon = shapely.Polygon(ring)
    path = _parcels(tmp_path / "million.gpkg", [polygon])
    result = ingest(db_url, "parcel", path)
    assert result.inserted == 1
    (points, area), = rows(engine, "SELECT ST_NPoints(geom), ST_Area(geom) FROM core.parcel "
                                   "WHERE batch_id = :b", b=result.batch_id)
    assert points == n + 1
    assert area == pytest.approx(polygon.area, rel=1e-9)


HOSTILE = "'); DROP TABLE core.parcel; --"


def test_latin1_and_sql_in_attributes_are_stored_verbatim(db_url: str, engine: sa.Engine,
                                                          tmp_path: Path) -> None:
    names = ["Hämäläinen", "Lac-Ste-Anne", "Côté & Søn"]
    gdf = gpd.GeoDataFrame({"pin": ["L1", "L2", "L3"], "owner": names},
                           geometry=[shapely.MultiPolygon([square(i)]) for i in range(3)],
                           crs="EPSG:26915")
    with_cpg = tmp_path / "with_cpg" / "latin1.shp"
    with_cpg.parent.mkdir()
    pyogrio.write_dataframe(gdf, with_cpg, encoding="ISO-8859-1")
    assert (with_cpg.with_suffix(".dbf").read_bytes().count("Hämäläinen".encode("latin-1")))
    no_cpg = tmp_path / "no_cpg" / "latin1.shp"
    no_cpg.parent.mkdir()
    for part in with_cpg.parent.iterdir():
        if part.suffix != ".cpg":
            (no_cpg.parent / part.name).write_bytes(part.read_bytes())
    first = ingest(db_url, "parcel", with_cpg)
    assert first.inserted == 3
    second = ingest(db_url, "parcel", no_cpg)  # read as Latin-1: the same text, so unchanged
    assert (second.status, second.unchanged, second.changed) == ("loaded", 3, 0), second.message
    stored = dict(rows(engine, "SELECT pin, source_attributes ->> 'owner' FROM core.parcel "
                               "WHERE valid_to IS NULL"))
    assert stored == dict(zip(["L1", "L2", "L3"], names, strict=True))

    hostile = write_gpkg(tmp_path / "hostile.gpkg", [
        {"pin": HOSTILE, HOSTILE: HOSTILE, "geometry": shapely.MultiPolygon([square(5)])}])
    result = ingest(db_url, "parcel", hostile)
    (pin, attrs), = rows(engine, "SELECT pin, source_attributes FROM core.parcel "
                                 "WHERE batch_id = :b", b=result.batch_id)
    assert pin == HOSTILE and attrs[HOSTILE] == HOSTILE
    # the table is still there, with the three versions the hostile file closed and its own
    assert rows(engine, "SELECT count(*) FROM core.parcel")[0][0] == 4


def _csv_rows(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 30)
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _judged_one_by_one(db_url: str, engine: sa.Engine, path: Path, crs: str, mapping: Path,
                       total: int) -> tuple[dict[str, float], dict[str, str]]:
    """Refused whole (naming features) without --skip-bad-features; with it, every feature
    either loads (valid, 2D, in the working CRS) or is skipped with a line naming it."""
    err = _refused(db_url, engine, r"feature \d+( \(key [^)]*\))?: ", "central_wetland_seed",
                   path, crs=crs, mapping=mapping)
    assert all(p.feature is not None for p in err.problems)
    result = ingest(db_url, "central_wetland_seed", path, crs=crs, mapping=mapping,
                    skip_bad_features=True)
    loaded = dict(rows(engine, "SELECT source_fid, ST_Area(geom) FROM core.central_wetland_seed "
                               "WHERE batch_id = :b AND ST_IsValid(geom) AND ST_SRID(geom) = "
                               "26915 AND ST_CoordDim(geom) = 2", b=result.batch_id))
    skipped = dict(rows(engine, "SELECT source_fid, message FROM ops.batch_note WHERE "
                                "batch_id = :b AND kind = 'skipped'", b=result.batch_id))
    assert result.inserted == len(loaded) and result.skipped == len(skipped)
    assert len(loaded) + len(skipped) == total
    assert all(m.strip() for m in skipped.values())
    return loaded, skipped


def _broken_coordinates(wkt: str) -> bool:
    try:
        xy = shapely.get_coordinates(shapely.from_wkt(wkt))
    except shapely.errors.GEOSException:
        return False
    return bool((~np.isfinite(xy) | (np.abs(np.nan_to_num(xy)) > 1e9)).any())


def test_geos_validity_cases_each_load_or_are_refused(db_url: str, engine: sa.Engine,
                                                      shared: Path, tmp_path: Path) -> None:
    path = shared / "data/messy/geos/geos_isvalid_cases.csv"
    cases = _csv_rows(path)
    assert len(cases) == 842
    mapping = tmp_path / "geos.toml"
    mapping.write_text('geometry = "wkt"\n')
    # Cases with NaN or infinite coordinates refuse the whole file, even when skipping, and
    # are each named (the other cases, delivered without them: the next test).
    err = _refused(db_url, engine, r"feature \d+: geometry: has a coordinate \(\S+ \S+\) that "
                   r"is (not a number|infinite)", "central_wetland_seed", path, crs=GEOS_CRS,
                   mapping=mapping, skip_bad_features=True)
    broken = {int(p.feature) for p in err.problems}
    suspects = {i for i, c in enumerate(cases, start=1) if _broken_coordinates(c["wkt"])}
    assert broken and broken <= suspects  # (GDAL reads a NaN in some WKT as no geometry)


def test_geos_validity_cases_without_broken_coordinates_are_judged_one_by_one(
        db_url: str, engine: sa.Engine, shared: Path, tmp_path: Path) -> None:
    path = shared / "data/messy/geos/geos_isvalid_cases.csv"
    cases = _csv_rows(path)
    mapping = tmp_path / "geos.toml"
    mapping.write_text('geometry = "wkt"\n')
    broken = {i for i, c in enumerate(cases, start=1) if _broken_coordinates(c["wkt"])}
    rest = [c for i, c in enumerate(cases, start=1) if i not in broken]
    sound = tmp_path / "geos_cases_without_broken_coordinates.csv"
    write_csv(sound, list(cases[0]), [list(c.values()) for c in rest])
    loaded, skipped = _judged_one_by_one(db_url, engine, sound, GEOS_CRS, mapping, len(rest))
    repaired = dict(rows(engine, "SELECT n.source_fid, n.message FROM ops.batch_note n "
                                 "JOIN ops.batch b USING (batch_id) WHERE b.status = 'loaded' "
                                 "AND n.kind = 'repaired'"))
    to_work = pyproj.Transformer.from_crs(GEOS_CRS, "EPSG:26915", always_xy=True).transform
    for fid, case in enumerate(rest, start=1):
        try:
            geom = shapely.from_wkt(case["wkt"])
        except shapely.errors.GEOSException:
            geom = None
        polygonal = geom is not None and not geom.is_empty and geom.geom_type in (
            "Polygon", "MultiPolygon")
        if polygonal and case["expected_isvalid"] == "true":
            # a valid polygon loads as it is: its area once moved to the working CRS (a pure
            # shift near the origin; PROJ's round trip through latitude and longitude moves
            # the cases that reach 10,000 km east by centimetres)
            moved = shapely.transform(geom, to_work, interleaved=False)
            assert loaded.get(str(fid)) == pytest.approx(moved.area, rel=1e-9, abs=1e-6), case
        elif polygonal:
            # an invalid polygon loads only repaired (and noted so), or is skipped
            assert (str(fid) in repaired) != (str(fid) in skipped), case
        else:
            assert str(fid) in skipped, case  # a point, a line or nothing is not a polygon
    assert len(loaded) > 250 and len(skipped) > 500, (len(loaded), len(skipped))
    # valid polygons with rings or parts of no points ('POLYGON ((...), EMPTY)') load without
    # them, noted; 'POLYGON (EMPTY, EMPTY, EMPTY)' is skipped as empty (it reached the table's
    # CHECK before, failing the whole file)
    emptied = rows(engine, "SELECT detail FROM ops.batch_note n JOIN ops.batch b USING "
                           "(batch_id) WHERE b.status = 'loaded' AND n.message LIKE "
                           "'%rings or parts of no points%'")
    fids = {f for (detail,) in emptied for f in detail["first_fids"]}
    assert fids and fids <= set(loaded), fids
    assert scalar(engine, "SELECT count(*) FROM core.central_wetland_seed "
                          "WHERE source_fid = ANY(:f) AND ST_IsClosed(geom)", f=list(fids)) \
        == len(fids)
    empty_shell = next(i for i, c in enumerate(rest, start=1)
                       if c["wkt"] == "POLYGON (EMPTY, EMPTY, EMPTY)")
    assert "null or empty geometry" in skipped[str(empty_shell)]


def test_rings_and_parts_of_no_points(db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """GDAL reads 'POLYGON ((...), EMPTY)' as a polygon with a ring of no points: valid to
    GEOS, but ST_IsEmpty judges a polygon by its ring count and ST_MakeValid of it returns a
    point of uninitialised memory. Such rings and parts are dropped (area unchanged, noted); a
    polygon of empty rings only is empty (it became MULTIPOLYGON EMPTY and failed the table's
    CHECK for the whole file)."""
    def ring(i: int) -> str:
        x, y = X0 + i * 110, Y0
        return f"({x} {y}, {x + 100} {y}, {x + 100} {y + 100}, {x} {y + 100}, {x} {y})"
    path = write_csv(tmp_path / "empty_rings.csv", ["feature_key", "wkt"], [
        ["hole", f"POLYGON ({ring(0)}, EMPTY)"],
        ["shell", "POLYGON (EMPTY, EMPTY)"],
        ["part", f"MULTIPOLYGON (({ring(2)}), EMPTY)"],
        ["plain", f"POLYGON ({ring(3)})"]])
    err = _refused(db_url, engine, r"feature 2 \(key shell\): geometry: null or empty geometry",
                   "central_wetland_seed", path, crs="EPSG:26915")
    assert err.total == 1
    result = ingest(db_url, "central_wetland_seed", path, crs="EPSG:26915",
                    skip_bad_features=True)
    assert (result.inserted, result.skipped) == (3, 1)
    stored = dict(rows(engine, "SELECT source_fid, ST_Area(geom) FROM core.central_wetland_seed "
                               "WHERE ST_IsClosed(geom) AND ST_NRings(geom) = 1"))
    assert stored == {"1": pytest.approx(1e4), "3": pytest.approx(1e4), "4": pytest.approx(1e4)}
    (detail,), = rows(engine, "SELECT detail FROM ops.batch_note WHERE batch_id = :b AND "
                              "message LIKE '2 features had rings or parts of no points%'",
                      b=result.batch_id)
    assert detail["first_fids"] == ["1", "3"]


_PASS_THROUGH = """
CREATE OR REPLACE FUNCTION ops.ingest_geometry(g geometry, p_target text, p_src_srid integer,
    p_src_proj text, p_work_srid integer, p_max_change double precision,
    p_moved geometry DEFAULT NULL, OUT geom geometry, OUT problem text, OUT reason text,
    OUT curved boolean, OUT zm boolean, OUT repaired boolean, OUT measure_before float8,
    OUT measure_after float8, OUT source_type text, OUT emptied boolean)
LANGUAGE plpgsql AS $$
BEGIN
  geom := {result};
  curved := false; zm := false; repaired := false; emptied := false;
  source_type := GeometryType(g);
END $$"""


@pytest.mark.parametrize("result, reason", [
    ("ST_Multi(ST_SetSRID(g, p_work_srid))", r"Self-intersection"),
    ("ST_SetSRID('MULTIPOLYGON EMPTY'::geometry, p_work_srid)", r"empty")])
def test_a_geometry_the_table_would_refuse_is_named_not_a_constraint_error(
        db_url: str, engine: sa.Engine, tmp_path: Path, result: str, reason: str) -> None:
    """The last check of ops.ingest_prepare, proven by a defect put into this test's own
    database: ops.ingest_geometry passing an invalid (or empty) geometry through unrepaired."""
    with engine.begin() as conn:
        conn.execute(sa.text(_PASS_THROUGH.replace("{result}", result)))
    path = _parcels(tmp_path / "seeds.gpkg", [square(0), bowtie(1)])
    _refused(db_url, engine, rf"feature 2: geometry: prepared for storing, it is still invalid "
             rf"or empty \({reason}.*\), so the table would refuse it", "central_wetland_seed",
             path)
    loaded = ingest(db_url, "central_wetland_seed", path, skip_bad_features=True)
    assert (loaded.inserted, loaded.skipped) == (1, 1)


def test_a_crs_given_by_its_definition_transforms_each_feature_as_its_own(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    """Features in a CRS without an EPSG code are transformed 1,000 to a PostGIS call (one
    PROJ transformation each); every feature, on either side of a chunk's edge, gets its own
    geometry back: the one pyproj gives, to the micrometre."""
    n = 1_003
    polygons = [shapely.box(10 * (i % 40), 10 * (i // 40), 10 * (i % 40) + 1 + i / n,
                            10 * (i // 40) + 2) for i in range(n)]
    path = _parcels(tmp_path / "local.gpkg", polygons)
    pyogrio.write_dataframe(gpd.read_file(path).set_crs(GEOS_CRS, allow_override=True),
                            tmp_path / "defined.gpkg")
    result = ingest(db_url, "parcel", tmp_path / "defined.gpkg")
    assert result.inserted == n
    to_work = pyproj.Transformer.from_crs(GEOS_CRS, "EPSG:26915", always_xy=True).transform
    stored = dict(rows(engine, "SELECT pin, ST_AsBinary(geom) FROM core.parcel"))
    for i, polygon in enumerate(polygons):
        expected = shapely.transform(polygon, to_work, interleaved=False)
        got = shapely.from_wkb(bytes(stored[f"P{i}"]))
        assert shapely.equals_exact(got.geoms[0], expected, tolerance=1e-6), i


@pytest.mark.slow
def test_real_invalid_polygons_each_are_repaired_or_refused(
        db_url: str, engine: sa.Engine, shared: Path, tmp_path: Path) -> None:
    path = shared / "data/messy/real_invalid/real_invalid_polygons.csv"
    cases = _csv_rows(path)
    mapping = tmp_path / "invalid.toml"
    mapping.write_text('key = "feature_key"\ngeometry = "wkt_epsg4326"\n')
    loaded, skipped = _judged_one_by_one(db_url, engine, path, MOVED_WEST, mapping, len(cases))
    assert len(cases) == 38
    repaired = dict(rows(engine, "SELECT n.source_fid, n.message FROM ops.batch_note n "
                                 "JOIN ops.batch b USING (batch_id) WHERE b.status = 'loaded' "
                                 "AND n.kind = 'repaired'"))
    assert repaired  # the repair path was taken (a feature may be noted repaired, then skipped)
