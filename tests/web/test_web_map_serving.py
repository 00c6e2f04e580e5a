"""How `rulem-db serve` serves the web map (issue 28, points 10-11), without a browser: static
files compressed, parcel tiles as of a date, and one colour per meaning in every client.

Why apart from tests/web/test_web_map.py: these are HTTP facts (headers, bytes, the style JSON),
seconds to check; the browser test keeps to what needs a browser.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import httpx
import sqlalchemy as sa
from web_server import web_server_fixture  # noqa: F401  (provides the `web_server` fixture)

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


def test_parcel_tiles_as_of_a_date(web_server) -> None:
    """The tile holding permit 24-001's parcel differs before its impact (status none then)."""
    pin = DEMO_CASES["24-001"]["pins"][0]
    eng = sa.create_engine(web_server.url)
    with eng.connect() as conn:
        lon, lat, first = conn.execute(sa.text(
            "SELECT ST_X(p), ST_Y(p), (SELECT min(effective_on) FROM pub.ledger_entry "
            "WHERE pin = b.pin AND measure = 'impact') FROM (SELECT pin, ST_Transform("
            "ST_PointOnSurface(geom), 4326) AS p FROM pub.parcel_balance "
            "WHERE pin = core.pin_display(:p)) b"), {"p": pin}).one()
    eng.dispose()
    style = httpx.get(web_server.base_url + "/api/style.json").json()
    url = style["sources"]["parcel_balance"]["tiles"][0].format_map(
        dict(zip("zxy", _tile_of(lon, lat, 15), strict=True)))
    now = httpx.get(url)
    a_year_before = first.replace(day=1, year=first.year - 1).isoformat()
    before = httpx.get(url, params={"as_of": a_year_before})
    bad = httpx.get(url, params={"as_of": "'; DROP TABLE x; --"})   # not a date: ignored
    assert now.status_code == before.status_code == bad.status_code == 200
    assert now.content and before.content and now.content != before.content
    assert bad.content == now.content


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
    """Issue 28 point 12: a footprint in another state is told Rule M does not apply there,
    in words, not a coordinate-system error."""
    square = {"type": "Polygon", "coordinates": [[[-100.0, 40.0], [-99.999, 40.0],
                                                   [-99.999, 40.001], [-100.0, 40.0]]]}
    r = httpx.post(web_server.base_url + "/api/screen", json=square)
    assert r.status_code == 400
    said = r.json()["error"]
    assert "Rule M does not apply" in said and "CRS" not in said, said
