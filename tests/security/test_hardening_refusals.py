"""Bad input refused in one line (docs/ingest.md): each file here is refused with a line that
names the file, the feature and the problem, the CLI exits non-zero, and the database is left
exactly as it was; a file name with `;` loads like any other; two `db init` racing to create
the cluster's group roles both succeed.

The bad files are made on the spot (GeoPackages edited with sqlite3, GeoJSON and CSV as text).
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import geopandas as gpd
import pyproj
import pytest
import shapely
import sqlalchemy as sa
from hardening_helpers import wait_for
from ingest_helpers import bowtie, fingerprint, rows, scalar, square, write_csv, write_gpkg
from sqlalchemy.engine import URL

from etl import staging
from etl.ingest import ingest
from etl.problems import IngestRefused, printable
from rulem_cli.main import main
from rulem_db.paths import SQL_DIR

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach stderr raw


def _cli_refused(url: str, engine: sa.Engine, capsys: pytest.CaptureFixture, path: Path,
                 pattern: str, *options: str, layer: str = "parcel") -> list[str]:
    """`rulem-db ingest` of path: exit 1, the one-line summary (last line of stderr) names the
    file and matches pattern, nothing changed in the database; returns stderr's lines."""
    before = fingerprint(engine)
    assert main(["--db", url, "ingest", layer, str(path), *options]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err, "nothing printed"
    summary = err[-1]
    assert summary.startswith(f"rulem-db ingest: {printable(path.name)}: "), summary
    assert re.search(pattern, summary), summary
    assert fingerprint(engine) == before, f"{path.name}: a refusal changed the database"
    assert scalar(engine, "SELECT count(*) FROM ops.batch") == 0
    assert scalar(engine, "SELECT count(*) FROM core.parcel") == 0
    return err


def _parcel_gpkg(path: Path, n: int = 2, **columns: list) -> Path:
    return _gpkg(path, [{"pin": f"P{i}", **{k: v[i] for k, v in columns.items()},
                         "geometry": shapely.MultiPolygon([square(i)])} for i in range(n)])


def _gpkg(path: Path, rows: list[dict]) -> Path:
    """A GeoPackage of parcels at path, written under a plain name and renamed (pyogrio cannot
    write to every name a file can have)."""
    plain = write_gpkg(path.with_name("plain.gpkg"), rows, layer="parcel")
    return plain.rename(path)


# --- 1. more fields than a PostgreSQL table can hold ---------------------------------------

def _wide_csv(path: Path, fields: int) -> Path:
    """A parcel CSV of `fields` columns: wkt, pin and the rest extra."""
    extra = [f"x{i}" for i in range(fields - 2)]
    wkt = square(0).wkt
    return write_csv(path, ["wkt", "pin", *extra], [[wkt, "P0", *["1"] * len(extra)]])


def test_a_file_with_more_fields_than_a_table_can_hold_is_refused_before_staging(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert staging.MAX_FIELDS == 1600 - 3
    wide = _wide_csv(tmp_path / "wide.csv", staging.MAX_FIELDS + 1)
    _cli_refused(db_url, engine, capsys, wide,
                 r"wide\.csv: has 1,598 fields, more than the 1,597 ingest can stage "
                 r"\(PostgreSQL tables have at most 1,600 columns", "--crs", "EPSG:26915")
    # the most a staging table can hold loads
    widest = _wide_csv(tmp_path / "widest.csv", staging.MAX_FIELDS)
    result = ingest(db_url, "parcel", widest, crs="EPSG:26915")
    assert (result.status, result.inserted) == ("loaded", 1)
    assert scalar(engine, "SELECT source_attributes ->> 'x1594' FROM core.parcel") == "1"


# --- 2. a CRS code PROJ does not know ----------------------------------------------------

def _lonlat_feature() -> dict:
    """A 100 m square near Lino Lakes in longitude/latitude, as a GeoJSON feature."""
    to_lonlat = pyproj.Transformer.from_crs("EPSG:26915", "EPSG:4326", always_xy=True)
    ring = [to_lonlat.transform(x, y) for x, y in square(0).exterior.coords]
    return {"type": "Feature", "properties": {"pin": "P0"},
            "geometry": {"type": "Polygon", "coordinates": [ring]}}


def test_an_unknown_crs_code_is_refused_naming_it_not_read_as_wgs84(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    hint = r"which PROJ does not know; name the file's CRS with --crs"
    for name, crs in [("named.geojson", {"type": "name", "properties": {"name": "EPSG:999999"}}),
                      ("urn.geojson", {"type": "name", "properties": {
                          "name": "urn:ogc:def:crs:EPSG::999999"}}),
                      ("old.geojson", {"type": "EPSG", "properties": {"code": 999999}})]:
        # the crs member after the features, as some writers put it
        path = tmp_path / name
        path.write_text(json.dumps({"type": "FeatureCollection",
                                    "features": [_lonlat_feature()], "crs": crs}))
        code = "urn:ogc:def:crs:EPSG::999999" if name == "urn.geojson" else "EPSG:999999"
        _cli_refused(db_url, engine, capsys, path,
                     rf"{name}: declares the CRS {re.escape(code)}, {hint}")
    # a GeoPackage whose layer's srs is an EPSG code PROJ does not know
    gpkg = _parcel_gpkg(tmp_path / "srs.gpkg", 1)
    with closing(sqlite3.connect(gpkg)) as con:
        con.execute("UPDATE gpkg_spatial_ref_sys SET srs_id = 999999, "
                    "organization_coordsys_id = 999999, definition = 'undefined' "
                    "WHERE srs_id = 26915")
        for table in ("gpkg_geometry_columns", "gpkg_contents"):
            con.execute(f"UPDATE {table} SET srs_id = 999999")
        con.commit()
    _cli_refused(db_url, engine, capsys, gpkg, rf"srs\.gpkg: declares the CRS EPSG:999999, {hint}")
    # shapefiles whose .prj names the code, alone or in a full definition
    gpd.GeoDataFrame({"pin": ["P0"]}, geometry=[square(0)], crs="EPSG:26915").to_file(
        tmp_path / "prj.shp", engine="pyogrio")
    esri = pyproj.CRS("EPSG:26915").to_wkt("WKT1_ESRI").replace("NAD_1983_UTM_Zone_15N", "Ours")
    for prj in ["EPSG:999999", esri[:-1] + ',AUTHORITY["EPSG","999999"]]']:
        (tmp_path / "prj.prj").write_text(prj)
        _cli_refused(db_url, engine, capsys, tmp_path / "prj.shp",
                     rf"prj\.shp: declares the CRS EPSG:999999, {hint}")
    # named with --crs, the file loads, and the declaration set aside is noted
    result = ingest(db_url, "parcel", tmp_path / "named.geojson", crs="EPSG:4326")
    assert (result.status, result.inserted) == ("loaded", 1)
    notes = [r[0] for r in rows(engine, "SELECT message FROM ops.batch_note WHERE kind = 'info'")]
    assert "named.geojson declares the CRS EPSG:999999, which PROJ does not know; --crs " \
        "EPSG:4326 was used" in notes, notes
    assert scalar(engine, "SELECT source_crs FROM ops.batch") == "EPSG:4326"


def test_geojson_crs_members_that_proj_knows_or_none_still_load(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    path = tmp_path / "crs84.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "crs": {"type": "name", "properties": {
        "name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}, "features": [_lonlat_feature()]}))
    assert ingest(db_url, "parcel", path).inserted == 1
    plain = tmp_path / "plain.geojson"
    plain.write_text(json.dumps({"type": "FeatureCollection", "features": [_lonlat_feature()]}))
    assert ingest(db_url, "parcel", plain).status == "loaded"


# --- 3. NUL characters in values and field names -----------------------------------------

def _refused(url: str, engine: sa.Engine, path: Path, *, crs: str | None = None) -> list[str]:
    """ingest of path as parcels: refused, nothing changed; returns the refusal's lines."""
    before = fingerprint(engine)
    with pytest.raises(IngestRefused) as err:
        ingest(url, "parcel", path, crs=crs)
    assert fingerprint(engine) == before, f"{path.name}: a refusal changed the database"
    assert scalar(engine, "SELECT count(*) FROM ops.batch") == 0
    return err.value.lines()


NUL_VALUE = "holds a NUL character (\\x00), which cannot be stored"
NUL_NAME = "this field's name holds a NUL character (\\x00)"


def test_nul_characters_in_values_and_field_names_are_refused_naming_them(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # a GeoPackage: SQLite keeps the NUL, GDAL cut the value there
    gpkg = _parcel_gpkg(tmp_path / "nul.gpkg", 3, note=["a", "b", "c"])
    with closing(sqlite3.connect(gpkg)) as con:
        for (trigger,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            con.execute(f'DROP TRIGGER "{trigger}"')  # GDAL's rtree triggers need its functions
        con.execute("UPDATE parcel SET note = 'ab' || char(0) || 'cd' WHERE fid = 2")
        con.commit()
    err = _cli_refused(db_url, engine, capsys, gpkg,
                       "nul\\.gpkg: feature 2: note: " + re.escape(NUL_VALUE))
    assert err[-1].endswith("--skip-bad-features does not skip it)"), err[-1]
    assert main(["--db", db_url, "ingest", "parcel", str(gpkg), "--skip-bad-features"]) == 1
    capsys.readouterr()
    # NULs in two fields (one pass over the table finds both): by field, then feature
    with closing(sqlite3.connect(gpkg)) as con:
        con.execute("UPDATE parcel SET pin = 'P' || char(0) WHERE fid IN (1, 3)")
        con.commit()
    lines = _refused(db_url, engine, gpkg)
    assert [line.split(": ")[1:3] for line in lines] == [
        ["feature 1", "pin"], ["feature 3", "pin"], ["feature 2", "note"]], lines
    # a GeoJSON: the escape \u0000, in a value and in a property name
    feature = {"type": "Feature", "geometry": shapely.geometry.mapping(square(0)),
               "properties": {"pin": "P0", "note": "x\u0000y"}}
    second = {**feature, "properties": {"pin": "P1", "no\u0000te": "z"}}
    path = tmp_path / "nul.geojson"
    path.write_text(json.dumps({"type": "FeatureCollection", "crs": {
        "type": "name", "properties": {"name": "EPSG:26915"}}, "features": [feature, second]}))
    assert "\\u0000" in path.read_text()
    lines = _refused(db_url, engine, path)
    assert lines == [f"nul.geojson: feature 0: note: {NUL_VALUE}"
                     "; remove it and deliver the file again",
                     f"nul.geojson: no\\x00te: {NUL_NAME}; "
                     "rename the field and deliver the file again"], lines
    # a CSV: in the header and in a value
    path = tmp_path / "nul.csv"
    path.write_bytes(b"pin,wkt,no\x00te\nP0,\"" + square(0).wkt.encode() + b"\",ok\n"
                     b"P1,\"" + square(1).wkt.encode() + b"\",a\x00b\n")
    lines = _refused(db_url, engine, path, crs="EPSG:26915")
    assert lines[0].startswith("nul.csv: no\\x00te: this field's name holds a NUL"), lines
    assert lines[1].startswith("nul.csv: feature 2: no\\x00te: holds a NUL character"), lines
    # a GeoParquet (pyarrow keeps the NUL; the database cannot)
    gdf = gpd.GeoDataFrame({"pin": ["P0", "P1"], "note": ["ok", "a\x00b"]}, crs="EPSG:26915",
                           geometry=[square(0), square(1)])
    gdf.to_parquet(tmp_path / "nul.parquet")
    lines = _refused(db_url, engine, tmp_path / "nul.parquet")
    assert lines == [f"nul.parquet: feature 1: note: {NUL_VALUE}"
                     "; remove it and deliver the file again"], lines
    # the same files without the NUL load
    gdf["note"] = ["ok", "ab"]
    gdf.to_parquet(tmp_path / "clean.parquet")
    assert ingest(db_url, "parcel", tmp_path / "clean.parquet").inserted == 2


# --- 4. control characters are escaped in every line printed -------------------------------

def test_control_characters_in_names_and_values_are_escaped_in_every_line(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    name = "p\x1b[31mred\x85.gpkg"
    path = _gpkg(tmp_path / name, [{"pin": "K\x1b]0;owned\x07", "geometry": bowtie(0)},
                                    {"pin": "L\u202egpj.exe", "geometry": bowtie(1)}])
    err = _cli_refused(db_url, engine, capsys, path, r"geometry: invalid")
    for line in err:
        assert not CONTROL.search(line) and "\u202e" not in line, repr(line)
    assert err[0].startswith("p\\x1b[31mred\\x85.gpkg: feature 1 (key K0OWNED): "
                             "geometry: invalid"), err[0]
    assert err[1].startswith("p\\x1b[31mred\\x85.gpkg: feature 2 (key LGPJEXE)"
                             ": geometry: invalid"), err[1]
    # a field name echoed in a refusal
    fields = _gpkg(tmp_path / "fields.gpkg", [{"no\x1b[8mpin": "A", "geometry": square(0)}])
    err = _cli_refused(db_url, engine, capsys, fields, r"its fields are: no\\x1b\[8mpin\)")
    assert not any(CONTROL.search(line) for line in err), err
    # a file that loads: its summary and notes are escaped too
    good = _parcel_gpkg(tmp_path / "ok\x1b[2J.gpkg", 1)
    assert main(["--db", db_url, "ingest", "parcel", str(good)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ok\\x1b[2J.gpkg: 1 features into parcel"), out
    assert not any(CONTROL.search(line) for line in out), out


# --- 5. a file name with `;` (or `!`, or a CR) loads like any other -----------------------

def test_file_names_pyogrio_would_read_as_uris_load_like_any_other(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gpkg = _parcel_gpkg(tmp_path / "parcels;2024.gpkg", 2)
    assert main(["--db", db_url, "ingest", "parcel", str(gpkg)]) == 0
    assert capsys.readouterr().out.startswith("parcels;2024.gpkg: 2 features into parcel: 2 new")
    # a shapefile (its .dbf and .prj found beside it), a GeoJSON and a CSV, each a re-delivery
    # of the same parcels under another odd name: nothing new, nothing closed
    import geopandas as gpd

    gdf = gpd.GeoDataFrame({"pin": ["P0", "P1"]}, crs="EPSG:26915",
                           geometry=[shapely.MultiPolygon([square(i)]) for i in range(2)])
    for name, driver in [("a;b!c.shp", "ESRI Shapefile"), ("x;y\r.geojson", "GeoJSON")]:
        for part in tmp_path.glob("plain.*"):
            part.unlink()
        gdf.to_file(tmp_path / f"plain{Path(name).suffix}", driver=driver, engine="pyogrio")
        for part in tmp_path.glob("plain.*"):
            part.rename(tmp_path / (Path(name).stem + part.suffix))
        result = ingest(db_url, "parcel", tmp_path / name)
        assert (result.status, result.features, result.inserted, result.closed) == \
            ("loaded", 2, 0, 0), result.message
    csv_path = write_csv(tmp_path / "p;q.csv", ["pin", "wkt"],
                         [["P0", square(0).wkt], ["P1", square(1).wkt]])
    result = ingest(db_url, "parcel", csv_path, crs="EPSG:26915")
    assert (result.features, result.inserted, result.closed) == (2, 0, 0), result.message
    assert scalar(engine, "SELECT count(*) FROM core.parcel WHERE valid_to IS NULL") == 2


# --- 6. two db init racing to create the group roles --------------------------------------

def test_two_inits_racing_to_create_a_group_role_both_succeed(admin_url: URL) -> None:
    """sql/001_roles.sql's block, for a throw-away role (the real ones are shared by every
    database of the test cluster): the first creates the role and holds its transaction open;
    the second, checking meanwhile, does not see it, and its CREATE ROLE waits for the first;
    when the first commits, the second must go on (it failed with a duplicate key before)."""
    role = f"rulem_race_{os.getpid()}"
    text = (SQL_DIR / "001_roles.sql").read_text()
    shared = ("ARRAY['rulem_etl', 'rulem_staff', 'rulem_gis', 'rulem_restricted',\n"
              "                       'rulem_editor']")
    assert shared in text
    block = text.replace(shared, f"ARRAY['{role}']")
    eng = sa.create_engine(admin_url.set(database="postgres"))
    watch = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    errors: list[BaseException] = []
    pids: list[int] = []

    def second() -> None:
        try:
            with eng.connect() as conn:
                pids.append(conn.execute(sa.text("SELECT pg_backend_pid()")).scalar_one())
                conn.connection.dbapi_connection.cursor().execute(block)
                conn.commit()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            errors.append(exc)

    try:
        with eng.connect() as first:
            first.begin()
            first.connection.dbapi_connection.cursor().execute(block)
            t = threading.Thread(target=second)
            t.start()

            def waiting() -> bool:
                if not t.is_alive():
                    return True  # it failed (or, wrongly, did not wait): reported below
                with watch.connect() as conn:
                    return bool(pids) and conn.execute(sa.text(
                        "SELECT wait_event_type = 'Lock' FROM pg_stat_activity "
                        "WHERE pid = :p"), {"p": pids[0]}).scalar() is True
            wait_for("the second CREATE ROLE to wait for the first", waiting, timeout=30)
            first.commit()
        t.join(30)
        assert not t.is_alive()
        assert not errors, f"the second init failed: {errors[0]}"
        with watch.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM pg_roles WHERE rolname = :r"),
                                {"r": role}).scalar_one() == 1
    finally:
        with watch.connect() as conn:
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
        eng.dispose()
        watch.dispose()

