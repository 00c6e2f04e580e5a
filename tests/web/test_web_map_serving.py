"""How `rulem-db serve` serves the web map, without a browser: static
files compressed, parcel tiles as of a date, and one colour per meaning in every client.

Why apart from tests/web/test_web_map.py: these are HTTP facts (headers, bytes, the style JSON),
seconds to check; the browser test keeps to what needs a browser.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import mapbox_vector_tile
import sqlalchemy as sa
from web_server import (
    start_serve,
    stop_serve,
    web_server_fixture,  # noqa: F401  (provides the `web_server` fixture)
)

from demo.cases import DEMO_CASES
from rulem_db.reports.palette import (
    BALANCE_COLOURS,
    IMPACT_FILL,
    LAYER_COLOURS,
    MEANINGS,
    SEVERITY_COLOURS,
)
from rulem_db.reports.permit.draw import SITE_STYLE

ROOT = Path(__file__).resolve().parents[2]


def test_static_files_are_served_gzipped(web_server) -> None:
    url = web_server.base_url + "/static/vendor/maplibre-gl/maplibre-gl.js"
    raw = httpx.get(url, headers={"Accept-Encoding": "identity"})
    packed = httpx.get(url, headers={"Accept-Encoding": "gzip"})
    assert raw.status_code == packed.status_code == 200
    assert packed.headers["content-encoding"] == "gzip"
    assert packed.content == raw.content                      # httpx inflates it
    with httpx.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as r:
        size = sum(len(chunk) for chunk in r.iter_raw())       # bytes on the wire
    assert len(packed.content) > 1_000_000 and size < 0.4 * len(packed.content), size


def _tile_of(lon: float, lat: float, z: int) -> tuple[int, int, int]:
    x = int((lon + 180) / 360 * 2 ** z)
    y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * 2 ** z)
    return z, x, y


def _case_parcel(web_server) -> tuple[float, float, date]:
    """Where permit 24-001's parcel is (a point on it, lon/lat) and its first impact's date."""
    pin = DEMO_CASES["24-001"]["pins"][0]
    eng = sa.create_engine(web_server.url)
    with eng.connect() as conn:
        lon, lat, first = conn.execute(sa.text(
            "SELECT ST_X(p), ST_Y(p), (SELECT min(effective_on) FROM pub.ledger_entry "
            "WHERE pin = b.pin AND measure = 'impact') FROM (SELECT pin, ST_Transform("
            "ST_PointOnSurface(geom), 4326) AS p FROM pub.parcel_balance "
            "WHERE pin = core.pin_display(:p)) b"), {"p": pin}).one()
    eng.dispose()
    return lon, lat, first


def test_parcel_tiles_as_of_a_date(web_server) -> None:
    """The tile holding permit 24-001's parcel differs before its impact (status none then),
    at the parcels' own tile path and in the map's tile of all layers."""
    lon, lat, first = _case_parcel(web_server)
    style = httpx.get(web_server.base_url + "/api/style.json").json()
    zxy = dict(zip("zxy", _tile_of(lon, lat, 15), strict=True))
    for url in (style["sources"]["pub"]["tiles"][0].format_map(zxy),
                web_server.base_url + "/collections/pub.parcel_balance/tiles/WebMercatorQuad/"
                "{z}/{x}/{y}".format_map(zxy)):
        now = httpx.get(url)
        a_year_before = first.replace(day=1, year=first.year - 1).isoformat()
        before = httpx.get(url, params={"as_of": a_year_before})
        bad = httpx.get(url, params={"as_of": "'; DROP TABLE x; --"})   # not a date: ignored
        assert now.status_code == before.status_code == bad.status_code == 200
        assert now.content and before.content and now.content != before.content
        assert bad.content == now.content
        # each answer its own tag: MapLibre keeps a reloaded tile's data on an equal tag
        assert now.headers["etag"] != before.headers["etag"]
        assert httpx.get(url, params={"as_of": a_year_before}, headers={
            "If-None-Match": before.headers["etag"]}).status_code == 304


def _layers(body: bytes) -> dict[str, Any]:
    return {name: layer["features"] for name, layer in mapbox_vector_tile.decode(body).items()}


def test_the_map_reads_every_layer_in_one_tile(web_server) -> None:
    """The style has one vector source; its tile holds one MVT layer per
    view drawn, each the same as that view's own tile (which GIS clients keep reading)."""
    style = httpx.get(web_server.base_url + "/api/style.json").json()
    assert list(style["sources"]) == ["pub"]   # and no basemap unless a district sets one
    template = style["sources"]["pub"]["tiles"][0]
    assert template == web_server.base_url + "/tiles/{z}/{x}/{y}.mvt"
    drawn = [layer for layer in style["layers"] if layer["type"] != "background"]
    assert {layer["source"] for layer in drawn} == {"pub"}
    views = {layer["source-layer"] for layer in drawn}
    assert views == {"parcel_balance", "wetland", "replacement", "buffer", "impact", "finding",
                     "cwmp_area"}
    assert [e["layer"] for e in style["metadata"]["rulem:layers"]] == [
        "parcel_balance", "wetland", "replacement", "buffer", "impact", "finding", "cwmp_area"]
    lon, lat, _ = _case_parcel(web_server)
    zxy = dict(zip("zxy", _tile_of(lon, lat, 14), strict=True))
    whole = httpx.get(template.format_map(zxy))
    assert whole.status_code == 200
    assert whole.headers["content-type"] == "application/vnd.mapbox-vector-tile"
    layers = _layers(whole.content)
    assert {"parcel_balance", "wetland", "impact", "cwmp_area"} <= set(layers) <= views
    for view in views:
        own = httpx.get(web_server.base_url + f"/collections/pub.{view}/tiles/WebMercatorQuad/"
                        "{z}/{x}/{y}".format_map(zxy))
        assert own.status_code == 200
        assert layers.get(view, []) == _layers(own.content).get(view, []), view
    # cached like the views' tiles: a strong tag, revalidated with 304
    assert whole.headers["cache-control"] == "no-cache"
    again = httpx.get(template.format_map(zxy), headers={"If-None-Match": whole.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    outside = httpx.get(template.format_map({"z": 2, "x": 9, "y": 9}))
    assert outside.status_code == 404


def test_a_view_the_login_cannot_read_is_left_out_of_the_map(web_server, tmp_path) -> None:
    """A login that may not read pub.finding gets a style and tiles without findings, and no
    error (the privilege is taken from rulem_gis in this module's copy, then given back;
    the service reads what its login may read at start, as it reads its catalog)."""
    eng = sa.create_engine(web_server.url, isolation_level="AUTOCOMMIT")
    proc = None
    try:
        with eng.connect() as conn:
            conn.execute(sa.text("REVOKE SELECT ON pub.finding FROM rulem_gis"))
        proc, base, _ = start_serve(web_server.gis_url, tmp_path / "serve.log")
        style = httpx.get(base + "/api/style.json").json()
        drawn = {layer.get("source-layer") for layer in style["layers"]}
        assert "finding" not in drawn and "parcel_balance" in drawn
        assert "finding" not in {e["layer"] for e in style["metadata"]["rulem:layers"]}
        legend = {e["layer"] for e in httpx.get(base + "/api/legend").json()}
        assert "finding" not in legend and "parcel_balance" in legend
        lon, lat, _ = _case_parcel(web_server)
        zxy = dict(zip("zxy", _tile_of(lon, lat, 14), strict=True))
        tile = httpx.get(style["sources"]["pub"]["tiles"][0].format_map(zxy))
        assert tile.status_code == 200
        layers = _layers(tile.content)
        assert "finding" not in layers and "parcel_balance" in layers
        assert httpx.get(base + "/collections/pub.finding").status_code == 404
    finally:
        if proc is not None:
            stop_serve(proc)
        with eng.connect() as conn:
            conn.execute(sa.text("GRANT SELECT ON pub.finding TO rulem_gis"))
        eng.dispose()


def test_one_colour_per_meaning_in_every_client(web_server) -> None:
    """No two meanings share a colour, and the web style (from sql/940's rules, which QGIS's
    styles are made of), the web page's CSS, the nightly report and the permit's decision
    document use palette.py's."""
    assert len(set(MEANINGS.values())) == len(MEANINGS), MEANINGS
    style = httpx.get(web_server.base_url + "/api/style.json").json()
    fills = {layer["filter"][2] if layer["filter"][0] == "==" else "else":
             layer["paint"]["fill-color"] for layer in style["layers"]
             if layer.get("source-layer", layer.get("source")) == "parcel_balance"
             and layer["type"] == "fill" and layer["paint"].get("fill-opacity", 1) > 0}
    assert fills == {k: v for k, v in BALANCE_COLOURS.items() if k != "none"}
    impact = [layer["paint"]["fill-color"] for layer in style["layers"]
              if layer["id"] == "impact-1-fill"]
    assert impact == [IMPACT_FILL]
    # the site's layers: the same fills on the web (sql/940's rules, which QGIS draws with)
    # and on the permit's decision document
    web_fills = {layer["id"]: layer["paint"].get("fill-color") for layer in style["layers"]
                 if layer["type"] == "fill"}
    for meaning, layer_id in (("wetland", "wetland-1-fill"), ("buffer", "buffer-1-fill"),
                              ("replacement certified", "replacement-2-fill"),
                              ("replacement constructed", "replacement-3-fill"),
                              ("impact fill", "impact-1-fill")):
        assert web_fills[layer_id] == LAYER_COLOURS[meaning][0], meaning
    document = {name: face for name, (_, face, _, _) in SITE_STYLE.items()}
    assert document == {"wetland": LAYER_COLOURS["wetland"][0],
                        "buffer": LAYER_COLOURS["buffer"][0],
                        "replacement": LAYER_COLOURS["replacement certified"][0],
                        "impact": IMPACT_FILL}
    legend = httpx.get(web_server.base_url + "/api/legend").json()
    assert {e["color"] for e in legend if e["layer"] == "finding"} == set(SEVERITY_COLOURS.values())
    css = (ROOT / "rulem_web/static/app.css").read_text()
    for name, colour in (("error", SEVERITY_COLOURS["error"]),
                         ("warning", SEVERITY_COLOURS["warning"]),
                         ("info", SEVERITY_COLOURS["info"]),
                         ("deficit", BALANCE_COLOURS["deficit"])):
        assert re.search(rf"--{name}:\s*{colour};", css), name
    report = (ROOT / "rulem_db/reports/html.py").read_text()
    for status in ("deficit", "balanced", "surplus"):
        assert re.search(rf"\.s-{status} {{ background: {BALANCE_COLOURS[status]};", report)


def test_a_footprint_far_from_the_plan_area_gets_a_plain_sentence(web_server) -> None:
    """A footprint in another state is told Rule M does not apply there,
    in words, not a coordinate-system error."""
    square = {"type": "Polygon", "coordinates": [[[-100.0, 40.0], [-99.999, 40.0],
                                                   [-99.999, 40.001], [-100.0, 40.0]]]}
    r = httpx.post(web_server.base_url + "/api/screen", json=square)
    assert r.status_code == 400
    said = r.json()["error"]
    assert "Rule M does not apply" in said and "CRS" not in said, said


def _pmtiles(path: Path) -> bytes:
    """A tiny raster PMTiles file (one PNG tile at zoom 0), as a district might host."""
    import io

    from PIL import Image
    from pmtiles.tile import Compression, TileType, zxy_to_tileid
    from pmtiles.writer import Writer

    png = io.BytesIO()
    Image.new("RGB", (256, 256), (200, 220, 240)).save(png, "PNG")
    with path.open("wb") as f:
        writer = Writer(f)
        writer.write_tile(zxy_to_tileid(0, 0, 0), png.getvalue())
        writer.finalize({"tile_type": TileType.PNG, "tile_compression": Compression.NONE,
                         "min_zoom": 0, "max_zoom": 0, "min_lon_e7": -1_800_000_000,
                         "min_lat_e7": -850_000_000, "max_lon_e7": 1_800_000_000,
                         "max_lat_e7": 850_000_000, "center_zoom": 0, "center_lon_e7": 0,
                         "center_lat_e7": 0}, {})
    return path.read_bytes()


def _csp(base: str) -> dict[str, list[str]]:
    header = httpx.get(base + "/", headers={"Accept": "text/html"}).headers[
        "content-security-policy"]
    return {d.split()[0]: d.split()[1:] for d in header.split("; ")}


def test_a_basemap_the_district_configures(web_server, tmp_path) -> None:
    """RULEM_BASEMAP_URL as an XYZ template puts a raster source under
    every layer and lets exactly its origin serve images; as a PMTiles file the service
    serves the file itself, by Range requests, and the page stays on its own origin."""
    xyz = "https://tiles.example.org:8443/wmts/1.0.0/ortho/default/WebMercatorQuad/{z}/{y}/{x}.png"
    env = {"RULEM_BASEMAP_URL": xyz, "RULEM_BASEMAP_ATTRIBUTION": "Imagery <b>County</b>"}
    proc, base, _ = start_serve(web_server.gis_url, tmp_path / "xyz.log", env=env)
    try:
        style = httpx.get(base + "/api/style.json").json()
        assert style["sources"]["basemap"] == {
            "type": "raster", "tileSize": 256, "tiles": [xyz],
            "attribution": "Imagery &lt;b&gt;County&lt;/b&gt;"}
        assert [layer["id"] for layer in style["layers"][:2]] == ["background", "basemap"]
        assert style["metadata"]["rulem:layers"][0] == {"layer": "basemap", "title": "Basemap"}
        policy = _csp(base)
        assert policy["img-src"] == ["'self'", "data:", "blob:", "https://tiles.example.org:8443"]
        others = {k: v for k, v in policy.items() if k != "img-src"}
        assert others == {k: v for k, v in _csp(web_server.base_url).items() if k != "img-src"}
        assert httpx.get(base + "/basemap.pmtiles").status_code == 404
    finally:
        stop_serve(proc)

    data = _pmtiles(tmp_path / "district.pmtiles")
    env = {"RULEM_BASEMAP_URL": str(tmp_path / "district.pmtiles")}
    proc, base, _ = start_serve(web_server.gis_url, tmp_path / "pmtiles.log", env=env)
    try:
        style = httpx.get(base + "/api/style.json").json()
        assert style["sources"]["basemap"] == {"type": "raster", "tileSize": 256,
                                               "url": f"pmtiles://{base}/basemap.pmtiles"}
        assert _csp(base) == _csp(web_server.base_url)   # nothing from another host
        part = httpx.get(base + "/basemap.pmtiles", headers={"Range": "bytes=0-126"})
        assert part.status_code == 206 and part.content == data[:127]
        assert part.headers["content-range"] == f"bytes 0-126/{len(data)}"
        tail = httpx.get(base + "/basemap.pmtiles", headers={"Range": f"bytes={len(data) - 10}-",
                                                              "Accept-Encoding": "gzip"})
        assert tail.status_code == 206 and tail.content == data[-10:]
        assert httpx.get(base + "/static/vendor/pmtiles/pmtiles.js").status_code == 200
    finally:
        stop_serve(proc)


def test_a_hostile_basemap_setting_is_refused_at_start(web_server, tmp_path) -> None:
    """A basemap URL that could break out of the style or the CSP stops `rulem-db serve`
    before it listens, in one line (every hostile value: tests/unit/test_basemap.py, on
    rulem_web.basemap.parse, which serve calls)."""
    for value in ("https://user:secret@tiles.example.org/{z}/{x}/{y}.png",
                  "https://tiles.example.org/{z}/{x}/{y}.png\nimg-src *"):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["RULEM_BASEMAP_URL"] = value
        out = subprocess.run(
            [sys.executable, "-m", "rulem_cli", "--db", web_server.gis_url, "serve", "--port",
             "9"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, (value, out.stdout, out.stderr)
        said = out.stderr.strip()
        assert said.startswith("rulem-db serve: RULEM_BASEMAP_URL") and "\n" not in said, said
        assert "secret" not in said
