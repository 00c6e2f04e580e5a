"""`rulem-db serve` over plain HTTP on the reconciled demo (docs/publishing.md, "Web service"): the
collections are exactly the relations of pub the GIS reader may read; items filtered by PIN
give what `rulem-db balance --parcel` prints; a tile decodes to features with their
attributes; GDAL's OAPIF driver lists the layers; /healthz; the 2(a) screen on a footprint of
known area; ETags answer 304 until an ingest changes the layer; a login that can write is
refused. One server for the module (tests/support/web_server.py); the ingest test goes last.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import httpx
import mapbox_vector_tile
import pytest
import sqlalchemy as sa
from web_server import (
    ROOT,
    start_serve,
    stop_serve,
    web_server_fixture,  # noqa: F401  (provides `web_server`)
)

from rulem_db.reports.palette import SEVERITY_COLOURS

PIN = "14-31-22-12-0001"            # demo parcel in deficit (an impact, no credit)
ACRES_PER_M2 = 1 / 4046.8564224
READABLE_SQL = """
SELECT 'pub.' || c.relname FROM pg_class c
WHERE c.relnamespace = 'pub'::regnamespace AND c.relkind IN ('r', 'v', 'm', 'f', 'p')
  AND has_table_privilege(c.oid, 'SELECT')"""


def get(server, path: str, **kw) -> httpx.Response:
    return httpx.get(server.base_url + path, timeout=60, **kw)


def tile_of(lon: float, lat: float, z: int) -> tuple[int, int]:
    """The WebMercatorQuad tile holding a point (the slippy-map formula)."""
    n = 2 ** z
    x = int((lon + 180) / 360 * n)
    y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
    return x, y


def test_collections_are_what_rulem_gis_may_read(web_server) -> None:
    eng = sa.create_engine(web_server.gis_url.replace("postgresql:", "postgresql+psycopg2:", 1))
    try:
        with eng.connect() as conn:
            readable = set(conn.execute(sa.text(READABLE_SQL)).scalars())
            temp = conn.execute(sa.text(
                "SELECT has_database_privilege(current_database(), 'TEMP')")).scalar()
    finally:
        eng.dispose()
    admin = sa.create_engine(web_server.url)
    try:
        with admin.connect() as conn:
            restricted = set(conn.execute(sa.text(
                "SELECT 'restricted.' || relname FROM pg_class "
                "WHERE relnamespace = 'restricted'::regnamespace AND relkind = 'v'")).scalars())
    finally:
        admin.dispose()
    body = get(web_server, "/collections", params={"limit": 1000}).json()
    history = get(web_server, "/history/collections", params={"limit": 1000}).json()
    current = {c["id"] for c in body["collections"]}
    versions = {c["id"] for c in history["collections"]}
    # the history views are listed apart (docs/publishing.md, "Web service")
    assert versions and all(c.endswith("_history") for c in versions)
    assert not any(c.endswith("_history") for c in current)
    served = current | versions
    assert temp is False  # the service works without TEMPORARY (schema web, revision 0026)
    assert "pub.parcel_balance" in served and "pub.severity_style" in served
    assert served == readable
    assert restricted and not served & restricted
    assert not any(c.split(".")[0] != "pub" for c in served)


def test_items_by_pin_give_the_cli_balance(web_server) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rulem_cli", "--db", web_server.url, "balance", "--parcel",
         PIN, "--format", "json"], cwd=ROOT, capture_output=True, text=True, check=True)
    cli = json.loads(out.stdout)[0]
    items = get(web_server, "/collections/pub.parcel_balance/items",
                params={"pin": PIN}).json()
    assert items["numberMatched"] == 1
    feature = items["features"][0]
    props = feature["properties"]
    assert feature["id"] == props["parcel_id"]  # the view's key, not a row number
    for field, value in cli.items():  # numeric columns travel as exact decimal text
        got = float(props[field]) if isinstance(value, float) else props[field]
        assert got == value, field
    assert cli["status"] == "deficit" and cli["balance_acres"] < 0
    panel = get(web_server, "/api/parcel", params={"pin": PIN.replace("-", "")}).json()
    for field, value in cli.items():
        assert panel[field] == value, field
    w, s, e, n = panel["bbox"]
    assert -94 < w < e < -93 and 45 < s < n < 46


def test_api_answers_404_and_400_in_one_line(web_server) -> None:
    r = get(web_server, "/api/parcel", params={"pin": "99-99-99-99-9999"})
    assert r.status_code == 404 and "99-99-99-99-9999" in r.json()["error"]
    r = get(web_server, "/api/permit", params={"no": "99-999"})
    assert r.status_code == 404 and "99-999" in r.json()["error"]
    r = get(web_server, "/api/parcel", params={"pin": PIN, "as_of": "2024-13-01"})
    assert r.status_code == 400 and "\n" not in r.json()["error"]


def test_permit_panel_search_and_plan(web_server) -> None:
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            row = conn.execute(sa.text(
                "SELECT permit_no, round(balance_acres, 4) AS b FROM pub.permit_balance "
                "ORDER BY permit_no LIMIT 1")).one()
            plan = conn.execute(sa.text(
                "SELECT round(balance_acres, 4) FROM pub.plan_balance")).scalar()
            findings = conn.execute(sa.text(
                "SELECT count(*) FROM pub.finding WHERE permit_no = :p"),
                {"p": row.permit_no}).scalar()
    finally:
        eng.dispose()
    permit = get(web_server, "/api/permit", params={"no": row.permit_no}).json()
    assert permit["balance_acres"] == float(row.b)
    assert len(permit["findings"]) == findings
    assert permit["bbox"] is not None
    found = get(web_server, "/api/permits", params={"q": row.permit_no[:4]}).json()
    assert row.permit_no in [p["permit_no"] for p in found] and len(found) <= 20
    assert get(web_server, "/api/plan").json()["balance_acres"] == float(plan)
    past = get(web_server, "/api/plan", params={"as_of": "2000-01-01"}).json()
    assert past["as_of"] == "2000-01-01" and past["required_acres"] == 0


def test_parcel_panel_lists_the_parcels_findings(web_server) -> None:
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            pin, ids = conn.execute(sa.text(
                "SELECT parcel_pin, array_agg(finding_id ORDER BY finding_id) FROM pub.finding "
                "WHERE parcel_pin IS NOT NULL GROUP BY parcel_pin ORDER BY count(*) DESC "
                "LIMIT 1")).one()
    finally:
        eng.dispose()
    panel = get(web_server, "/api/parcel", params={"pin": pin}).json()
    assert sorted(f["finding_id"] for f in panel["findings"]) == ids
    assert {"permit_no", "paragraph", "check", "severity", "message", "review_state"} <= set(
        panel["findings"][0])


def test_tile_decodes_to_parcels_with_their_balance(web_server) -> None:
    panel = get(web_server, "/api/parcel", params={"pin": PIN}).json()
    w, s, e, n = panel["bbox"]
    x, y = tile_of((w + e) / 2, (s + n) / 2, 14)
    r = get(web_server, f"/collections/pub.parcel_balance/tiles/WebMercatorQuad/14/{x}/{y}")
    assert r.status_code == 200
    layers = mapbox_vector_tile.decode(r.content)
    features = layers["parcel_balance"]["features"]
    ours = [f["properties"] for f in features if f["properties"]["pin"] == PIN]
    assert len(ours) == 1
    assert ours[0]["status"] == "deficit"
    # the view's own tile function (sql/930): numbers as doubles, no jsonb, the key as id
    assert ours[0]["balance_acres"] == pytest.approx(panel["balance_acres"], abs=1e-4)
    assert {"impact_acres", "required_acres", "credit_acres"} <= set(ours[0])
    assert "source_attributes" not in ours[0]
    assert panel["parcel_id"] in [f["id"] for f in features]
    # a history view has no tile function: tipg makes its tiles
    history = get(web_server, f"/collections/pub.parcel_history/tiles/WebMercatorQuad/14/{x}/{y}")
    assert history.status_code == 200
    assert PIN in [f["properties"]["pin"] for f in
                   mapbox_vector_tile.decode(history.content)["parcel_history"]["features"]]
    tilejson = get(web_server, "/collections/pub.parcel_balance/tiles/WebMercatorQuad/"
                               "tilejson.json").json()
    assert tilejson["tiles"][0].startswith(web_server.base_url + "/collections/")


def test_ogrinfo_lists_the_layers(web_server) -> None:
    out = subprocess.run(["ogrinfo", "-ro", "-so", f"OAPIF:{web_server.base_url}/"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    for layer in ("pub.parcel_balance", "pub.wetland", "pub.finding", "pub.permit_balance"):
        assert f": {layer} " in out.stdout, out.stdout[:2000]
    assert "restricted." not in out.stdout


def test_landing_is_the_map_for_browsers_and_json_for_gis(web_server) -> None:
    page = get(web_server, "/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 200 and "<html" in page.text.lower()
    landing = get(web_server, "/", headers={"Accept": "application/json"}).json()
    assert any(link["rel"] == "data" for link in landing["links"])
    assert get(web_server, "/", params={"f": "json"}).json()["links"]


def test_healthz(web_server) -> None:
    r = get(web_server, "/healthz")
    body = r.json()
    assert r.status_code == 200 and body["status"] == "ok" and body["database"] == "ok"
    assert body["latest_batch"]["status"] == "loaded"


def test_style_and_legend_use_the_qgis_palette(web_server) -> None:
    style = get(web_server, "/api/style.json", headers={"X-Forwarded-Prefix": "/rulem"}).json()
    assert style["version"] == 8 and "glyphs" not in style and "sprite" not in style
    tiles = style["sources"]["pub"]["tiles"][0]
    assert tiles == f"{web_server.base_url}/rulem/tiles/{{z}}/{{x}}/{{y}}.mvt"
    assert {"parcel_balance", "wetland", "impact", "replacement", "buffer", "finding",
            "cwmp_area"} <= {lay.get("source-layer") for lay in style["layers"]}
    legend = get(web_server, "/api/legend").json()
    findings = {e["label"].lower(): e["color"] for e in legend if e["layer"] == "finding"}
    assert findings == SEVERITY_COLOURS
    deficit = next(e for e in legend if e["layer"] == "parcel_balance"
                   and e["label"].startswith("Deficit"))
    colours = [lay["paint"].get("fill-color") for lay in style["layers"]
               if lay.get("source-layer") == "parcel_balance"]
    assert deficit["color"] in colours


def _inside_square(web_server, side: float) -> tuple[dict, int]:
    """A square of `side` metres inside the demo's largest approved wetland, as GeoJSON in
    EPSG:4326 (built in the working CRS), and that wetland's id."""
    eng = sa.create_engine(web_server.url)
    try:
        with eng.connect() as conn:
            row = conn.execute(sa.text("""
                WITH w AS (SELECT wetland_id, geom FROM pub.wetland
                           WHERE delineation_status = 'approved'
                           ORDER BY (ST_MaximumInscribedCircle(geom)).radius DESC LIMIT 1),
                     c AS (SELECT wetland_id, (ST_MaximumInscribedCircle(geom)).* FROM w)
                SELECT wetland_id, radius, ST_AsGeoJSON(ST_Transform(ST_Expand(center,
                       :h), 4326), 12) AS g FROM c"""), {"h": side / 2}).one()
    finally:
        eng.dispose()
    assert row.radius > side * 0.75  # the square fits inside the wetland
    return json.loads(row.g), row.wetland_id


def test_screen_a_footprint_in_a_wetland(web_server) -> None:
    square, wetland_id = _inside_square(web_server, 40.0)   # 1600 m2 = 0.3954 acres
    r = httpx.post(web_server.base_url + "/api/screen", timeout=60,
                   json={"type": "Feature", "geometry": square, "properties": {}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["permit_needed"] is True
    assert body["wetland_acres"] == pytest.approx(1600 * ACRES_PER_M2, abs=2e-4)
    assert [f["id"] for f in body["wetlands"]["features"]] == [wetland_id]
    assert body["wetlands"]["features"][0]["properties"]["touched_acres"] == pytest.approx(
        0.3954, abs=2e-4)
    assert body["buffers"]["type"] == "FeatureCollection"
    assert any("acres of CWMP wetland" in reason for reason in body["reasons"])


@pytest.mark.parametrize("body, words", [
    (b"{not json", "not JSON"),
    (json.dumps({"type": "Point", "coordinates": [-93.1, 45.18]}).encode(), "Polygon"),
    (json.dumps({"type": "Polygon", "coordinates": [[[-93.1, 45.18], [-93.09, 45.19],
                                                     [-93.1, 45.19], [-93.09, 45.18],
                                                     [-93.1, 45.18]]]}).encode(), "valid"),
    (json.dumps({"type": "Polygon", "coordinates": [[[10, 50], [10.01, 50], [10.01, 50.01],
                                                     [10, 50]]]}).encode(), "does not apply"),
    (json.dumps({"type": "Polygon", "coordinates": [[[200, 50], [201, 50], [201, 51],
                                                     [200, 50]]]}).encode(), "longitude"),
])
def test_screen_refuses_bad_footprints_in_one_line(web_server, body: bytes, words: str) -> None:
    r = httpx.post(web_server.base_url + "/api/screen", content=body, timeout=60,
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    message = r.json()["error"]
    assert words in message and "\n" not in message


def test_serve_refuses_a_login_that_can_write(web_server) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "rulem_cli", "--db", web_server.url, "serve", "--port", "9"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 1
    assert "can write" in out.stderr and "superuser" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_a_noinherit_login_serves_after_set_role_to_rulem_gis(web_server, admin_url,
                                                              tmp_path) -> None:
    """--set-role rulem_gis: a login in rulem_gis that does not inherit its rights serves,
    switched to the reader on every connection, and sees exactly what rulem_gis sees (a
    wider login is refused: tests/web/test_web_attack.py)."""
    user = f"t_web_noinherit_{tmp_path.name[-8:]}".replace("-", "_").lower()
    eng = sa.create_engine(admin_url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(f"CREATE ROLE {user} LOGIN NOINHERIT PASSWORD 'n0inherit' "
                                 "IN ROLE rulem_gis"))
        url = sa.engine.make_url(web_server.gis_url).set(
            username=user, password="n0inherit").render_as_string(hide_password=False)
        proc, base, _ = start_serve(url, tmp_path / "serve.log", ("--set-role", "rulem_gis"))
        try:
            wide = {c["id"] for c in httpx.get(base + "/collections",
                                               params={"limit": 1000},
                                               timeout=60).json()["collections"]}
        finally:
            stop_serve(proc)
    finally:
        with eng.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {user}"))
        eng.dispose()
    ours = {c["id"] for c in get(web_server, "/collections",
                                 params={"limit": 1000}).json()["collections"]}
    assert wide == ours


def test_etag_revalidates_until_an_ingest_changes_the_layer(web_server, demo_template,
                                                            tmp_path) -> None:
    """Last in the module: it ingests into the served database."""
    from hardening_helpers import parcels_changed

    from demo import DEMO_PLAN_AREA
    from etl.ingest import ingest

    panel = get(web_server, "/api/parcel", params={"pin": PIN}).json()
    w, s, e, n = panel["bbox"]
    x, y = tile_of((w + e) / 2, (s + n) / 2, 14)
    path = f"/collections/pub.parcel/tiles/WebMercatorQuad/14/{x}/{y}"
    first = get(web_server, path)
    etag = first.headers["etag"]
    assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
    again = get(web_server, path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    items = get(web_server, "/collections/pub.parcel/items")
    assert get(web_server, "/collections/pub.parcel/items",
               headers={"If-None-Match": items.headers["etag"]}).status_code == 304

    changed = parcels_changed(demo_template.directory, tmp_path / "parcels.gpkg")
    ingest(web_server.url, "parcel", changed, plan_area=DEMO_PLAN_AREA[0])
    after = get(web_server, path, headers={"If-None-Match": etag})
    assert after.status_code == 200 and after.headers["etag"] != etag


def test_embedded_default_reads_as_its_own_reader_login(web_server) -> None:
    """`rulem-db serve` with no URL makes rulem_gis_web (a rulem_gis member, read-only by
    default) and passes its own check; here pointed at the served clone."""
    import os

    from sqlalchemy.engine import make_url

    from rulem_web import login

    if os.environ.get("RULEM_TEST_ADMIN_URL"):
        pytest.skip("the embedded cluster is not the one under test")
    url = make_url(login.embedded_reader_url()).set(
        database=make_url(web_server.url).database)
    assert login.check_reader(url.render_as_string(hide_password=False)) == login.WEB_LOGIN
    admin = sa.create_engine(web_server.url)
    try:
        with admin.connect() as conn:
            config, groups = conn.execute(sa.text(
                "SELECT r.rolconfig, (SELECT array_agg(g.rolname::text) FROM pg_auth_members m "
                "JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid) "
                "FROM pg_roles r WHERE r.rolname = :r"), {"r": login.WEB_LOGIN}).one()
    finally:
        admin.dispose()
    assert groups == ["rulem_gis"]
    assert "default_transaction_read_only=on" in config


def test_healthz_says_503_when_the_database_refuses(web_server) -> None:
    """Last: it takes the server's login away (its connections ended, logins refused)."""
    from sqlalchemy.engine import make_url

    user = make_url(web_server.gis_url).username
    admin = sa.create_engine(web_server.url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"ALTER ROLE {user} NOLOGIN"))
            conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE usename = :u"), {"u": user})
        r = get(web_server, "/healthz")
        with admin.connect() as conn:
            conn.execute(sa.text(f"ALTER ROLE {user} LOGIN"))
    finally:
        admin.dispose()
    assert r.status_code == 503
    body = r.json()
    assert body["status"] == "error" and body["database"] and "\n" not in body["database"]
