"""QGIS as staff use it: Debian's QGIS 3.22 (python3-qgis), headless, logged in through a
pg_service entry as a member of rulem_gis. Every published layer opens valid, read-only and
with its default style from public.layer_styles; the shipped project opens every layer grouped
and styled, and renders the plan area to a PNG.

The set-up installs QGIS when it is missing (`apt-get install -y python3-qgis qgis-providers`,
about 1.5 minutes) if it runs as root, and skips with the reason otherwise.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
import sqlalchemy as sa
from publish_fixture import (  # noqa: F401  (fixtures)
    EXTENT,
    ORIGIN,
    SRID,
    Login,
    gis_login,
    published_url,
)
from qgis_run import drive, qgis_environment, qgis_python  # noqa: F401  (fixture)

from rulem_db.paths import ROOT

pytestmark = pytest.mark.qgis

PROJECT = ROOT / "qgis" / "rulem-db.qgs"
# Where the rendered plan area is written, for people to look at after the run.
PNG = Path(os.environ.get("RULEM_QGIS_PNG",
                          Path(tempfile.gettempdir()) / "rulem-db-qgis" / "plan-area.png"))


@pytest.fixture(scope="session")
def qgis_env(gis_login: Login, published_url: str, tmp_path_factory) -> dict[str, str]:  # noqa: F811
    """Environment for QGIS: service 'rulem' = the fixture database as a rulem_gis login."""
    return qgis_environment(gis_login, published_url, tmp_path_factory.mktemp("qgis"))


def _catalogue(url: str) -> list[dict]:
    """Every pub view QGIS should open, with what the database says it holds. A view of mixed
    geometry opens once per geometry type present (QGIS needs type= for it)."""
    eng = sa.create_engine(url)
    out = []
    try:
        with eng.connect() as conn:
            views = conn.execute(sa.text(
                "SELECT c.relname, g.f_geometry_column AS geom, upper(g.type) AS type, "
                "(SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attnum > 0 "
                "  AND NOT a.attisdropped ORDER BY a.attname = c.relname || '_id' DESC, "
                "  a.attname = 'row_key' DESC, "
                "  a.attname = 'version_id' AND c.relname LIKE '%\\_history' DESC, a.attnum "
                "  LIMIT 1) AS key "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "LEFT JOIN geometry_columns g ON g.f_table_schema = 'pub' "
                "  AND g.f_table_name = c.relname "
                "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') ORDER BY 1")).all()
            for v in views:
                base = (f"service='rulem' key='{v.key}' checkPrimaryKeyUnicity='0' "
                        f'table="pub"."{v.relname}"')
                if v.geom is None:
                    count = conn.execute(sa.text(f'SELECT count(*) FROM pub."{v.relname}"'))
                    out.append({"name": v.relname, "uri": base, "count": count.scalar()})
                    continue
                if v.type not in ("GEOMETRY", "GEOMETRYCOLLECTION"):
                    count = conn.execute(sa.text(f'SELECT count(*) FROM pub."{v.relname}"'))
                    out.append({"name": v.relname, "uri": f"{base} ({v.geom})",
                                "count": count.scalar(), "style_type": None})
                    continue
                present = conn.execute(sa.text(
                    f"SELECT replace(GeometryType({v.geom}), 'MULTI', '') AS t, count(*) "
                    f'FROM pub."{v.relname}" WHERE {v.geom} IS NOT NULL GROUP BY 1')).all()
                for kind, count in present:
                    qgis_type = {"POINT": "Point", "LINESTRING": "Line"}.get(kind, "Polygon")
                    wkb = {"Line": "LineString"}.get(qgis_type, qgis_type)
                    out.append({"name": f"{v.relname} ({qgis_type})",
                                "uri": f"{base.replace(' table=', f' type={wkb} table=')} "
                                       f"({v.geom})",
                                "count": count, "style_type": qgis_type, "view": v.relname})
    finally:
        eng.dispose()
    return out


def _style_labels(url: str) -> dict[tuple[str, str | None], list[str]]:
    """The rule labels of each default style row, read from the QML stored in layer_styles."""
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT f_table_name, type, (xpath('//rule/@label', styleqml))::text[] "
                "FROM public.layer_styles WHERE f_table_schema = 'pub' AND useasdefault")).all()
    finally:
        eng.dispose()
    return {(r[0], r[1]): list(r[2]) for r in rows}


def test_every_published_layer_opens_valid_read_only_and_styled(
        qgis_python: str, qgis_env: dict, published_url: str) -> None:  # noqa: F811
    layers = _catalogue(published_url)
    styles = _style_labels(published_url)
    report = drive(qgis_python, qgis_env, {"layers": [
        {"name": la["name"], "uri": la["uri"]} for la in layers]})
    got = {r["name"]: r for r in report["layers"]}
    problems = []
    for layer in layers:
        r = got[layer["name"]]
        if not r["valid"]:
            problems.append(f"{layer['name']}: invalid ({r.get('error', '')[:200]})")
            continue
        if r["feature_count"] != layer["count"]:
            problems.append(f"{layer['name']}: {r['feature_count']} features, "
                            f"database has {layer['count']}")
        if r["can_add"] or r["can_change"] or r["can_delete"]:
            problems.append(f"{layer['name']}: editable in QGIS")
        if "style_type" in layer:
            view = layer.get("view", layer["name"])
            want = styles.get((view, layer["style_type"]))
            if not r.get("style_loaded") or r["renderer"] != "RuleRenderer" or r["rules"] != want:
                problems.append(f"{layer['name']}: default style not applied "
                                f"({r.get('style_message')}; rules {r['rules']} != {want})")
    assert problems == []
    assert got["wetland"]["rules"][:2] == ["Approved delineation (counts)",
                                           "Under review (does not count yet)"]
    assert got["buffer_marker"]["geometry_type"] == "Point"
    assert got["parcel"]["crs"] == f"EPSG:{SRID}"


def test_the_shipped_project_opens_every_layer_grouped_and_renders_the_plan_area(
        qgis_python: str, qgis_env: dict, published_url: str) -> None:  # noqa: F811
    PNG.parent.mkdir(parents=True, exist_ok=True)
    PNG.unlink(missing_ok=True)
    ox, oy = ORIGIN
    xmin, ymin, xmax, ymax = EXTENT
    report = drive(qgis_python, qgis_env, {"project": str(PROJECT), "render": {
        "png": str(PNG), "epsg": SRID, "width": 1200, "height": 800,
        "extent": [xmin - 50, ymin - 50, xmax + 50, ymax + 50],
        "probes": {"impact": [ox + 200, oy + 75], "approved_wetland": [ox + 300, oy + 280],
                   "outside": [xmin - 25, ymin - 25]}}})
    project = report["project"]
    assert project["read"] and project["crs"] == f"EPSG:{SRID}"
    invalid = [la["name"] for la in project["layers"] if not la["valid"]]
    assert invalid == []
    in_project = {name.split(" (")[0] for names in project["groups"].values() for name in names}
    views = {la.get("view", la["name"]) for la in _catalogue(published_url)}
    published = {v for v in views if v.removesuffix("_history") == v
                 or v.removesuffix("_history") not in views}
    assert published - in_project == set(), "rebuild the project: qgis/build_project.py"
    assert list(project["groups"])[-1] == "Tables (no geometry)"
    assert "wetland" in project["groups"]["Wetlands"]
    assert all(la["renderer"] == "RuleRenderer" for la in project["layers"]
               if la["valid"] and la["geometry_type"] != "NoGeometry")
    render = report["render"]
    assert render["saved"] and PNG.stat().st_size > 10_000
    assert render["errors"] == []
    assert render["painted_share"] > 0.15  # not a blank map (0.22 without the balances)
    # fill impact: the palette's ochre (IMPACT_FILL, apart from the error red) over the wetland
    r, g, b = render["probes"]["impact"]
    assert r > b + 60 and r > g and g > b, render["probes"]
    r, g, b = render["probes"]["approved_wetland"]  # approved wetland: blue
    assert b > r + 40, render["probes"]
    assert render["probes"]["outside"] == [255, 255, 255]
