"""The clients against the demo plan area (demo/generate.py loaded through ingest, the ledger
recomputed, the checks run): GDAL lists and exports every layer with all its features, tiles
hold the demo's features, and QGIS renders the demo plan area from the shipped project.
Slow (about 20 s to build the demo database), so marked slow; the QGIS part is marked qgis."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from publish_fixture import Login, gis_login  # noqa: F401  (fixture)
from sqlalchemy.engine import URL, make_url

from rulem_db import db
from rulem_db.paths import ROOT
from rulem_db.reports.export import read_layers

pytestmark = pytest.mark.slow
HALF = 20037508.342789244
PNG = Path(os.environ.get("RULEM_QGIS_DEMO_PNG",
                          Path(tempfile.gettempdir()) / "rulem-db-qgis" / "demo-plan-area.png"))


@pytest.fixture(scope="module")
def demo_url(admin_url: URL, demo_template: DemoTemplate) -> Iterator[str]:
    with cloned(admin_url, demo_template.name, "rulem_pubdemo") as url:
        from rulem_db import ledger

        ledger.recompute(url, all=True, workers=1)
        with db.connect(url) as conn:
            conn.execute(sa.text("SELECT checks.run_checks(1)"))
            conn.execute(sa.text("SELECT ops.seed_layer_styles()"))  # a copy: its own name
        yield url


def _counts(url: str) -> dict[str, int]:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            views = conn.execute(sa.text(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm') AND NOT (c.relname LIKE "
                "'%\\_history' AND to_regclass(format('pub.%I', left(c.relname, -8))) IS NOT NULL)"
            )).scalars().all()
            return {v: conn.execute(sa.text(f'SELECT count(*) FROM pub."{v}"')).scalar()
                    for v in views}
    finally:
        eng.dispose()


def test_demo_exports_every_layer_with_all_its_features(demo_url: str, tmp_path: Path) -> None:
    target = tmp_path / "demo.gpkg"
    proc = subprocess.run([sys.executable, "-m", "rulem_cli.main", "--db", demo_url, "export",
                           str(target)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    counts = _counts(demo_url)
    exported = {layer.name: layer.features for layer in read_layers(target)}
    # findings are split by geometry type (areas, lines, points, and a table of the rest)
    split = {name: exported.pop(name) for name in
             ("finding_area", "finding_line", "finding_point", "finding_list")}
    exported["finding"] = sum(split.values())
    assert exported == counts
    assert exported["parcel"] == 41 and exported["wetland"] == 19
    assert all(n > 0 for n in split.values()), split


def test_ogrinfo_as_gis_counts_the_demo_layers(demo_url: str, gis_login: Login) -> None:  # noqa: F811
    database = make_url(demo_url).database
    proc = subprocess.run(["ogrinfo", "-ro", "-so", "-al", f"PG:dbname='{database}' schemas=pub",
                           "-oo", "LIST_ALL_TABLES=YES"], capture_output=True, text=True,
                          env=gis_login.env(database), timeout=300)
    listed = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^Layer name: (\S+)\n(?:.*\n)*?Feature Count: (-?\d+)$", proc.stdout, re.M)}
    counts = _counts(demo_url)
    # Readability of every view by rulem_gis is tested on its own (test_publish_roles); here
    # the demo's layers that GDAL can read must show the database's counts.
    layers = {"parcel", "wetland", "ditch", "buffer_marker", "impact", "replacement", "soil",
              "bmp", "permit", "delineation", "finding", "buffer_transect"}
    assert {name: listed.get(name) for name in layers} == {name: counts[name] for name in layers}


def test_every_key_the_shipped_qgis_project_declares_names_one_row(demo_url: str) -> None:
    """QGIS takes a layer's declared key as its feature id, one id one feature: a key that
    repeats (a view's first column, plan_area_id, before row_key) showed one feature of 1,134.
    Every layer of the shipped project, on the reconciled and checked demo."""
    import re

    sources = re.findall(r"key='([^']+)'[^<]*table=\"pub\"\.\"(\w+)\"",
                         (ROOT / "qgis" / "rulem-db.qgs").read_text())
    assert len(sources) > 30
    eng = sa.create_engine(demo_url)
    try:
        with eng.connect() as conn:
            repeated = {view: key for key, view in set(sources) if conn.execute(sa.text(
                f'SELECT count(*) <> count(DISTINCT "{key}") OR count("{key}") <> count(*) '
                f'FROM pub."{view}"')).scalar()}
    finally:
        eng.dispose()
    assert repeated == {}, "rebuild the project: qgis/build_project.py"


def test_demo_tiles_hold_the_demo_features(demo_url: str) -> None:
    eng = sa.create_engine(demo_url)
    try:
        with eng.connect() as conn:
            for view in ("parcel", "wetland", "ditch", "buffer_marker", "impact", "finding"):
                x, y = conn.execute(sa.text(
                    f"SELECT ST_X(p), ST_Y(p) FROM (SELECT ST_Transform(ST_PointOnSurface(geom), "
                    f"3857) p FROM pub.{view} WHERE geom IS NOT NULL LIMIT 1) t")).one()
                size = 2 * HALF / 2 ** 15
                tile = conn.execute(sa.text(f"SELECT pub.{view}_tile(15, :x, :y)"), {
                    "x": int((x + HALF) // size), "y": int((HALF - y) // size)}).scalar()
                far = conn.execute(sa.text(f"SELECT pub.{view}_tile(15, 0, 0)")).scalar()
                assert len(tile) > 0 and far == b"", view
    finally:
        eng.dispose()


@pytest.mark.qgis
def test_qgis_renders_the_demo_plan_area_from_the_shipped_project(
        demo_url: str, gis_login: Login, tmp_path: Path) -> None:  # noqa: F811
    if subprocess.run(["/usr/bin/python3", "-c", "import qgis.core"],
                      capture_output=True).returncode != 0:
        pytest.skip("QGIS not installed (tests/publish/test_publish_qgis.py installs it)")
    service = gis_login.service_file(tmp_path / "pg_service.conf",
                                     make_url(demo_url).database)
    (tmp_path / "home").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PG", "VIRTUAL_ENV"))}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"),
               PGSERVICEFILE=str(service), XDG_RUNTIME_DIR=str(tmp_path))
    eng = sa.create_engine(demo_url)
    with eng.connect() as conn:
        extent = conn.execute(sa.text(
            "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM "
            "(SELECT ST_Extent(geom) e FROM pub.cwmp_area) t")).one()
    eng.dispose()
    PNG.parent.mkdir(parents=True, exist_ok=True)
    job = {"project": str(ROOT / "qgis" / "rulem-db.qgs"), "render": {
        "png": str(PNG), "epsg": 26915, "width": 1500, "height": 1200,
        "extent": [extent[0] - 50, extent[1] - 50, extent[2] + 50, extent[3] + 50]}}
    driver = ROOT / "tests" / "support" / "publish_qgis_driver.py"
    proc = subprocess.run(["/usr/bin/python3", str(driver)], input=json.dumps(job),
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    render = json.loads(proc.stdout)["render"]
    assert render["saved"] and render["errors"] == []
    assert render["painted_share"] > 0.15
