"""GDAL as a GIS client logged in as a member of rulem_gis: every pub view is a layer with the
right geometry type, SRID and feature count, and no layer takes a write."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa
from publish_fixture import SRID, Login, gis_login, published_url  # noqa: F401  (fixtures)
from sqlalchemy.engine import make_url

pytestmark = pytest.mark.skipif(shutil.which("ogrinfo") is None, reason="GDAL not installed")

GDAL_TYPES = {"POINT": "Point", "MULTIPOINT": "Multi Point", "LINESTRING": "Line String",
              "MULTILINESTRING": "Multi Line String", "POLYGON": "Polygon",
              "MULTIPOLYGON": "Multi Polygon", "GEOMETRY": "Unknown (any)"}


def _truth(url: str) -> dict[str, dict]:
    """What the database says each pub view holds (read as the owner)."""
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            views = conn.execute(sa.text(
                "SELECT c.relname, g.type, g.srid FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "LEFT JOIN geometry_columns g ON g.f_table_schema = n.nspname "
                "  AND g.f_table_name = c.relname "
                "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') ORDER BY 1")).all()
            return {v.relname: {
                "geometry": GDAL_TYPES.get((v.type or "").upper(), "None"),
                "srid": v.srid, "count": conn.execute(sa.text(
                    f'SELECT count(*) FROM pub."{v.relname}"')).scalar()} for v in views}
    finally:
        eng.dispose()


def _ogrinfo_layers(login: Login, database: str) -> dict[str, dict]:
    proc = subprocess.run(
        ["ogrinfo", "-ro", "-so", "-al", f"PG:dbname='{database}' schemas=pub",
         "-oo", "LIST_ALL_TABLES=YES"],
        capture_output=True, text=True, env=login.env(database), timeout=120)
    assert proc.returncode == 0, proc.stderr
    layers = {}
    for block in proc.stdout.split("\nLayer name: ")[1:]:
        name = block.split("\n", 1)[0].strip()
        epsg = re.findall(r'^    ID\["EPSG",(\d+)\]\]$', block, re.M)
        layers[name] = {
            "geometry": re.search(r"^Geometry: (.*)$", block, re.M).group(1),
            "count": int(re.search(r"^Feature Count: (-?\d+)$", block, re.M).group(1)),
            "srid": int(epsg[-1]) if epsg else None,
        }
    errors = [line for line in proc.stderr.splitlines() if line.startswith("ERROR")]
    return layers, errors


def test_ogrinfo_as_gis_lists_every_layer_with_type_srid_and_count(
        published_url: str, gis_login: Login) -> None:  # noqa: F811
    database = make_url(published_url).database
    truth = _truth(published_url)
    listed, errors = _ogrinfo_layers(gis_login, database)
    assert errors == []
    assert sorted(listed) == sorted(truth)
    for name, want in truth.items():
        got = listed[name]
        assert got["geometry"] == want["geometry"], name
        assert got["count"] == want["count"], name
        if want["geometry"] != "None":
            assert got["srid"] == SRID, name
    # The fixture has something in every layer view (balances and checks may be empty).
    layers = [n for n in truth if n in {"parcel", "wetland", "ditch", "buffer_marker", "permit",
                                        "impact", "replacement", "soil", "bmp", "hydroperiod"}]
    assert all(truth[n]["count"] > 0 for n in layers)


def test_no_layer_takes_a_write_from_gis(published_url: str, gis_login: Login,  # noqa: F811
                                         tmp_path: Path) -> None:
    database = make_url(published_url).database
    truth = _truth(published_url)
    feature = tmp_path / "one.geojson"
    feature.write_text(json.dumps({"type": "FeatureCollection", "features": [{
        "type": "Feature", "properties": {"source_fid": "intruder"},
        "geometry": {"type": "Point", "coordinates": [487500, 4993300]}}]}))
    accepted = []
    for name in truth:
        if name.endswith("_history") and name.removesuffix("_history") in truth:
            continue
        proc = subprocess.run(
            ["ogr2ogr", "-update", "-append", "-a_srs", f"EPSG:{SRID}", "-nlt", "PROMOTE_TO_MULTI",
             "-doo", "LIST_ALL_TABLES=YES", f"PG:dbname='{database}' schemas=pub",
             str(feature), "-nln", name],
            capture_output=True, text=True, env=gis_login.env(database), timeout=60)
        if proc.returncode == 0 and "ERROR" not in proc.stderr:
            accepted.append(name)
    assert accepted == []
    # The refusals are privileges, not view mechanics: the same login may not even lock a row.
    eng = sa.create_engine(make_url(published_url).set(
        username=gis_login.user, password=gis_login.password))
    refused = []
    try:
        for name in truth:
            with eng.connect() as conn:
                try:
                    conn.execute(sa.text(f'SELECT 1 FROM pub."{name}" WHERE false FOR UPDATE'))
                except sa.exc.ProgrammingError as exc:
                    if "permission denied" in str(exc):
                        refused.append(name)
    finally:
        eng.dispose()
    assert sorted(refused) == sorted(truth)
    owner = sa.create_engine(published_url)
    with owner.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM core.parcel WHERE source_fid = 'intruder'")).scalar() == 0
    owner.dispose()
