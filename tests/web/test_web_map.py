"""The web map in a real browser: Debian's headless Chromium, driven by Playwright,
on `rulem-db serve` over the reconciled demo.

Why a browser: the acceptance is what staff see. The page must draw the map (WebGL, software
rendered here), a click on a parcel must show the balance that the ledger publishes, the date
control must show an earlier balance, the permit search must open a permit, and the
pre-application screen must answer Rule M 2(a) for a drawn or uploaded footprint. Expected
figures come from SQL on the same database (pub.parcel_balance is what `rulem-db balance
--parcel` prints) and from hand-worked geometry (a 40 m square is 0.3954 acres).

One browser and one page per module (and one server: tests/support/web_server.py); the tests run in
file order on that page. The screenshot goes to pytest's tmp dir; with RULEM_DOCS_SCREENSHOT=1
it is also written to docs/web-map.png (the docs' picture, refreshed on purpose, not by every
test run).
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
from collections.abc import Iterator
from datetime import date, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from web_server import (
    start_serve,
    stop_serve,
    web_server_fixture,  # noqa: F401  (provides the `web_server` fixture)
)

from demo.cases import DEMO_CASES

CHROMIUM = Path("/usr/bin/chromium")
DOCS_PNG = Path(__file__).resolve().parents[2] / "docs" / "web-map.png"
WAIT_MS = 90_000  # deadline on a loaded machine, not a speed assertion
# Headless Chromium has no GPU here: WebGL runs on SwiftShader (software), which MapLibre needs.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
SQUARE_M = 40.0  # the screened footprint: 40 m x 40 m = 1600 m^2 = 0.3954 acres
SQUARE_ACRES = 0.3954
# The corners are clicked on screen pixels: at zoom 19 a pixel is about 0.2 m here, so each side
# may be off by that much (40.2 m x 40.2 m = 0.3994 acres).
CLICK_TOLERANCE_ACRES = 0.006
# The parcel clicked: the one holding permit 24-001's impact (demo/cases.toml, case 1), which
# has an impact, credit and a transfer out, so every figure of its balance is non-zero.
CASE = "24-001"
# The first view's tile requests at most: about one per tile in view (10 here), where one
# source per layer asked 74.
FIRST_VIEW_TILE_REQUESTS = 20


def _pin_display(pin: str) -> str:
    return f"{pin[0:2]}-{pin[2:4]}-{pin[4:6]}-{pin[6:8]}-{pin[8:]}"


@pytest.fixture(scope="module")
def db(web_server) -> Iterator[sa.Connection]:
    """The served database, read directly (superuser): the figures the page must show."""
    eng = sa.create_engine(web_server.url)
    with eng.connect() as conn:
        yield conn
    eng.dispose()


@pytest.fixture(scope="module")
def page(web_server) -> Iterator[Any]:
    """The map page at 1280 x 800, rendered (body[data-ready] set on MapLibre's first idle)."""
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} not found: run scripts/bootstrap (installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1280, "height": 800})
            pg.set_default_timeout(WAIT_MS)
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.goto(web_server.base_url + "/")
            pg.wait_for_selector("body[data-ready=true]", state="attached")
            pg.page_errors = errors  # type: ignore[attr-defined]
            yield pg
        finally:
            browser.close()


def _wait_idle(page: Any) -> None:
    """Until the map has loaded every tile and drawn them (MapLibre's loaded() and no move)."""
    page.wait_for_function(
        "() => window.rulemMap.loaded() && window.rulemMap.areTilesLoaded()"
        " && !window.rulemMap.isMoving()")


def _balance_row(db: sa.Connection, pin: str, on: date | None = None) -> dict[str, Any]:
    sql = ("SELECT * FROM pub.parcel_balance WHERE pin = :pin" if on is None else
           "SELECT * FROM pub.parcel_balance_as_of(:on) WHERE pin = :pin")
    return dict(db.execute(sa.text(sql), {"pin": pin, "on": on}).mappings().one())


def _wait_tile_status(page: Any, pin: str, status: str) -> None:
    """Until every piece of the parcel in the map's loaded tiles has this status."""
    page.wait_for_function("""([pin, status]) => {
        const map = window.rulemMap;
        const f = map.querySourceFeatures('pub', {sourceLayer: 'parcel_balance',
            filter: ['==', ['get', 'pin'], pin]});
        return f.length > 0 && f.every((x) => x.properties.status === status);
    }""", arg=[pin, status])


def _panel_figure(page: Any, field: str) -> str:
    return page.locator(f"#panel tr[data-field={field}] td").inner_text().lstrip("+")


def _pixel_inside(page: Any, geojson: str, want: dict[str, str],
                  among: bool = False) -> tuple[float, float]:
    """A page pixel inside a polygon (lon/lat GeoJSON) where a click picks `want` (first, or
    `among` the permits and parcels there): points of a grid over the polygon, projected with
    map.project, tried from the middle outwards."""
    found = page.evaluate("""([geometry, want, among]) => {
        const map = window.rulemMap;
        const rect = map.getContainer().getBoundingClientRect();
        const pts = [];
        const walk = (c) => (typeof c[0] === "number" ? pts.push(c) : c.forEach(walk));
        walk(geometry.coordinates);
        const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
        const [w, e, s, n] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
        const steps = 24, cands = [];
        for (let i = 1; i < steps; i++) for (let j = 1; j < steps; j++) {
            cands.push([w + (e - w) * i / steps, s + (n - s) * j / steps,
                        Math.abs(i - steps / 2) + Math.abs(j - steps / 2)]);
        }
        cands.sort((a, b) => a[2] - b[2]);
        for (const [lng, lat] of cands) {
            const p = map.project([lng, lat]);
            if (p.x < 5 || p.y < 5 || p.x > rect.width - 5 || p.y > rect.height - 5) continue;
            const hits = among ? window.rulemPickAll(p.x, p.y) : [window.rulemPick(p.x, p.y)];
            if (hits.some((hit) => hit && Object.entries(want).every(([k, v]) => hit[k] === v))) {
                return [rect.left + p.x, rect.top + p.y];
            }
        }
        return null;
    }""", [json.loads(geojson), want, among])
    assert found, f"no pixel of the map picks {want}: is the layer drawn?"
    return found[0], found[1]


def _distinct_colours(png: Path, box: tuple[int, int, int, int]) -> int:
    """Colours (4 bits a channel) covering at least 0.5 % of the box each."""
    from PIL import Image

    with Image.open(png) as image:
        crop = image.convert("RGB").crop(box).point(lambda v: v & 0xF0)
    total = crop.width * crop.height
    counts = [count for count, _ in crop.getcolors(maxcolors=1 << 12) or []]
    return sum(1 for c in counts if c >= 0.005 * total)


def test_a_click_on_a_parcel_shows_its_balance_and_the_map_is_drawn(
        page: Any, db: sa.Connection, tmp_path_factory: pytest.TempPathFactory) -> None:
    pin = _pin_display(DEMO_CASES[CASE]["pins"][0])
    expected = _balance_row(db, pin)
    assert float(expected["balance_acres"]) != 0  # the case holds impact and credit
    _wait_idle(page)
    geometry = db.execute(sa.text(
        "SELECT ST_AsGeoJSON(ST_Transform(geom, 4326)) FROM pub.parcel_balance WHERE pin = :p"),
        {"p": pin}).scalar_one()
    x, y = _pixel_inside(page, geometry, {"kind": "parcel", "pin": pin})
    page.mouse.click(x, y)
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin", arg=pin)
    for field in ("impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
                  "credit_hosted_acres", "balance_acres"):
        assert _panel_figure(page, field) == f"{expected[field]:.4f}", field
    assert page.locator("#panel [data-field=status]").inner_text().startswith(expected["status"])

    # The screenshot, and proof that the canvas is drawn: the plan area's pixels hold several
    # distinct colours (parcels by status, wetland, impacts, replacement, lines), not a blank.
    _wait_idle(page)
    png = tmp_path_factory.mktemp("web_map") / "web-map.png"
    page.screenshot(path=str(png))
    if os.environ.get("RULEM_DOCS_SCREENSHOT") == "1":
        DOCS_PNG.write_bytes(png.read_bytes())
    w, s, e, n = db.execute(sa.text(
        "SELECT ST_XMin(b), ST_YMin(b), ST_XMax(b), ST_YMax(b) FROM ("
        "SELECT ST_Transform(geom, 4326)::box2d AS b FROM pub.cwmp_area) x")).one()
    box = page.evaluate("""([w, s, e, n]) => {
        const map = window.rulemMap, rect = map.getContainer().getBoundingClientRect();
        const a = map.project([w, n]), b = map.project([e, s]);
        const x = (v) => Math.round(Math.min(Math.max(rect.left + v, rect.left), rect.right));
        const y = (v) => Math.round(Math.min(Math.max(rect.top + v, rect.top), rect.bottom));
        return [x(a.x), y(a.y), x(b.x), y(b.y)];
    }""", [w, s, e, n])
    assert box[2] - box[0] > 100 and box[3] - box[1] > 100, f"plan area off screen: {box}"
    assert _distinct_colours(png, tuple(box)) >= 4, f"the map looks blank: {png}"


def test_the_date_control_shows_the_balance_before_the_impact(
        page: Any, db: sa.Connection) -> None:
    pin = _pin_display(DEMO_CASES[CASE]["pins"][0])
    first = db.execute(sa.text(
        "SELECT min(effective_on) FROM pub.ledger_entry WHERE pin = :p AND measure = 'impact'"),
        {"p": pin}).scalar_one()
    before = first - timedelta(days=1)
    expected = _balance_row(db, pin, before)
    now = _balance_row(db, pin)
    assert expected["required_acres"] != now["required_acres"]  # the date changes the figures
    page.fill("#as-of", before.isoformat())
    page.dispatch_event("#as-of", "change")
    page.wait_for_function(
        "when => document.querySelector('#panel .hint')?.textContent.includes('as of ' + when)",
        arg=before.isoformat())
    for field in ("impact_acres", "required_acres", "credit_acres", "balance_acres"):
        assert _panel_figure(page, field) == f"{expected[field]:.4f}", field
    # The map recolours too: the parcel's tile is read as of the date.
    assert expected["status"] != now["status"]
    _wait_tile_status(page, pin, expected["status"])
    page.click("#as-of-today")
    page.wait_for_function(
        "() => document.querySelector('#panel .hint')?.textContent.includes('today')")
    assert _panel_figure(page, "balance_acres") == f"{now['balance_acres']:.4f}"
    # ... and back: today's colours again, not the date's kept from the tiles it reloaded
    _wait_tile_status(page, pin, now["status"])


def test_permit_search_opens_the_permit(page: Any, db: sa.Connection) -> None:
    expected = db.execute(sa.text(
        "SELECT required_acres, balance_acres FROM pub.permit_balance WHERE permit_no = :no"),
        {"no": CASE}).mappings().one()
    page.fill("#search-q", CASE)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "no => document.querySelector('#panel h3')?.textContent === 'Permit ' + no", arg=CASE)
    assert _panel_figure(page, "required_acres") == f"{expected['required_acres']:.4f}"
    assert _panel_figure(page, "balance_acres") == f"{expected['balance_acres']:.4f}"
    assert f"{float(expected['balance_acres']):.4f}" == f"{DEMO_CASES[CASE]['balance_acres']:.4f}"


def test_a_pin_in_the_search_box_opens_the_parcel(page: Any, db: sa.Connection) -> None:
    raw = DEMO_CASES[CASE]["pins"][0]  # as delivered: 12 digits, no dashes
    expected = _balance_row(db, _pin_display(raw))
    page.fill("#search-q", raw)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin",
        arg=_pin_display(raw))
    assert _panel_figure(page, "balance_acres") == f"{expected['balance_acres']:.4f}"


def test_an_address_in_the_search_box_lists_the_street_and_opens_a_parcel(
        page: Any, db: sa.Connection) -> None:
    """A street's name lists its parcels (address, owner, PIN); choosing one opens its panel,
    which names the address and the owner."""
    pin, address, owner = db.execute(sa.text(
        "SELECT pin_display, site_address, owner_name FROM pub.parcel "
        "WHERE site_address LIKE '%Marsh View Lane' ORDER BY pin_display LIMIT 1")).one()
    on_street = db.execute(sa.text(
        "SELECT count(*) FROM pub.parcel WHERE site_address ILIKE '%marsh view%' "
        "OR owner_name ILIKE '%marsh view%'")).scalar()
    page.fill("#search-q", "marsh view")
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('#search-results li button').length === n",
        arg=min(on_street, 20))
    page.click(f"#search-results li button:has-text('PIN {pin}')")
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin", arg=pin)
    assert page.inner_text("#panel [data-field=place]") == f"{address} · {owner}"


def test_a_click_inside_an_outline_only_parcel_opens_it(page: Any, db: sa.Connection) -> None:
    """A parcel with nothing required or counted is drawn as an outline
    only, yet a click well inside it (not on its line) opens it."""
    pin, geometry = db.execute(sa.text(
        "SELECT pin, ST_AsGeoJSON(ST_Transform(geom, 4326)) FROM pub.parcel_balance "
        "WHERE status = 'none' ORDER BY ST_Area(geom) DESC LIMIT 1")).one()
    outline_only = page.evaluate("""() => window.rulemMap.getStyle().layers.filter(
        (l) => l['source-layer'] === 'parcel_balance' && l.type === 'fill'
        && l.paint['fill-opacity'] === 0).length""")
    assert outline_only >= 1  # the status none rule draws no colour, only a hit area
    page.evaluate("g => { const xs = [], ys = [];"
                  " const walk = (c) => typeof c[0] === 'number' ? (xs.push(c[0]), ys.push(c[1]))"
                  " : c.forEach(walk); walk(g.coordinates);"
                  " window.rulemMap.fitBounds([[Math.min(...xs), Math.min(...ys)],"
                  " [Math.max(...xs), Math.max(...ys)]], {padding: 120, duration: 0}); }",
                  json.loads(geometry))
    _wait_idle(page)
    x, y = _pixel_inside(page, geometry, {"kind": "parcel", "pin": pin})
    page.mouse.click(x, y)
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin", arg=pin)


def test_a_parcel_in_deficit_shows_why(page: Any, db: sa.Connection) -> None:
    """The panel lists the ledger entries behind the figures (their effects
    sum to the balance) and the permit findings that shape them, so a parcel in deficit
    whose cause is permit-level does not read "Findings (0)"."""
    pin = db.execute(sa.text(
        "SELECT pin FROM pub.parcel_balance WHERE status = 'deficit' ORDER BY pin LIMIT 1"
    )).scalar_one()
    causes = {r[0] for r in db.execute(sa.text(
        "SELECT finding_id FROM pub.balance_explain(p_parcel => :p) WHERE row_kind = 'finding'"),
        {"p": pin})}
    own = {r[0] for r in db.execute(sa.text(
        "SELECT f.finding_id FROM pub.finding f JOIN pub.parcel_balance p USING (parcel_id) "
        "WHERE p.pin = :p"), {"p": pin})}
    entries = db.execute(sa.text(
        "SELECT count(*), sum(balance_effect_acres) FROM pub.balance_explain(p_parcel => :p) "
        "WHERE row_kind = 'entry'"), {"p": pin}).one()
    assert causes, f"demo parcel {pin} is in deficit with no permit finding behind it"
    page.fill("#search-q", pin)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin", arg=pin)
    assert page.inner_text("#panel .findings-head") == f"Findings ({len(own | causes)})"
    assert page.locator("#panel .findings li.cause").count() == len(causes - own)
    assert page.locator("#panel table.entries tbody tr").count() == entries[0]
    effects = page.eval_on_selector_all(
        "#panel table.entries tbody tr td:last-child", "tds => tds.map((t) => t.textContent)")
    assert f"{sum(float(e) for e in effects):.4f}" == f"{entries[1]:.4f}"
    assert f"{entries[1]:.4f}" == _panel_figure(page, "balance_acres")


def test_site_scale_labels_and_the_layer_list(page: Any, db: sa.Connection) -> None:
    pin = _pin_display(DEMO_CASES[CASE]["pins"][0])
    x, y = db.execute(sa.text(
        "SELECT ST_X(p), ST_Y(p) FROM (SELECT ST_Transform(ST_PointOnSurface(geom), 4326) AS p "
        "FROM pub.parcel_balance WHERE pin = :p) x"), {"p": pin}).one()
    page.evaluate("c => window.rulemMap.jumpTo({center: c, zoom: 16})", [x, y])
    _wait_idle(page)
    labels = page.locator(".map-label", has_text=pin)
    labels.first.wait_for()
    page.locator(".map-label.permit", has_text=f"permit {CASE}").first.wait_for()
    # The layer list: unticking the parcels hides every style layer drawn from them.
    box = page.locator("#layer-list input[data-layer=parcel_balance]")
    box.uncheck()
    hidden = page.evaluate("""() => window.rulemMap.getStyle().layers
        .filter((l) => l['source-layer'] === 'parcel_balance')
        .map((l) => window.rulemMap.getLayoutProperty(l.id, 'visibility'))""")
    assert hidden and set(hidden) == {"none"}
    box.check()
    # A click on the permit's impact (drawn above the parcels) opens a permit; where another
    # permit's impact lies on the same ground (demo case 25-001), the panel offers the other.
    impact = db.execute(sa.text(
        "SELECT ST_AsGeoJSON(ST_Transform(ST_Union(geom), 4326)) FROM pub.impact "
        "WHERE permit_no = :no"), {"no": CASE}).scalar_one()
    page.mouse.click(*_pixel_inside(page, impact, {"kind": "permit", "no": CASE}, among=True))
    page.wait_for_function("() => /^Permit /.test(document.querySelector('#panel h3')"
                           "?.textContent || '')")
    if page.locator("#panel h3").first.inner_text() != f"Permit {CASE}":
        page.click(f"#panel button.also-here[data-key='{CASE}']")
    page.wait_for_function(
        "no => document.querySelector('#panel h3')?.textContent === 'Permit ' + no", arg=CASE)
    # A PIN that is no parcel: one line saying so, in the panel.
    page.fill("#search-q", "99-99-99-99-9999")
    page.press("#search-q", "Enter")
    page.locator("#panel .error-text", has_text="99-99-99-99-9999").wait_for()


def test_a_footprint_drawn_on_a_wetland_needs_a_permit(page: Any, db: sa.Connection) -> None:
    # A 40 m square well inside the largest current wetland, its corners in lon/lat.
    corners = db.execute(sa.text(
        "WITH w AS (SELECT geom FROM pub.wetland ORDER BY ST_Area(geom) DESC LIMIT 1), "
        "c AS (SELECT ST_PointOnSurface(ST_Buffer(geom, -:h * 2)) AS p FROM w), "
        "sq AS (SELECT ST_MakeEnvelope(ST_X(p) - :h, ST_Y(p) - :h, ST_X(p) + :h, ST_Y(p) + :h, "
        "ST_SRID(p)) AS g FROM c) "
        "SELECT ST_AsGeoJSON(ST_Transform(g, 4326), 9) FROM sq"),
        {"h": SQUARE_M / 2}).scalar_one()
    ring = json.loads(corners)["coordinates"][0][:4]
    page.evaluate("""(ring) => {
        const xs = ring.map((p) => p[0]), ys = ring.map((p) => p[1]);
        window.rulemMap.jumpTo({center: [(Math.min(...xs) + Math.max(...xs)) / 2,
                                         (Math.min(...ys) + Math.max(...ys)) / 2], zoom: 19});
    }""", ring)
    _wait_idle(page)
    page.click("#draw-start")
    rect = page.evaluate("() => window.rulemMap.getContainer().getBoundingClientRect().toJSON()")
    for lng, lat in ring:
        p = page.evaluate("ll => window.rulemMap.project(ll)", [lng, lat])
        page.mouse.click(rect["left"] + p["x"], rect["top"] + p["y"])
    page.click("#draw-finish")
    answer = page.locator("#screen-result .answer")
    answer.wait_for()
    assert answer.get_attribute("data-permit-needed") == "true"
    assert "permit is needed" in answer.inner_text()
    # The reason: the wetland acres touched, hand-worked (1600 m^2), within the clicks' precision.
    reason = re.search(r"([0-9.]+) acres of CWMP wetland", page.inner_text("#screen-result"))
    assert reason, page.inner_text("#screen-result")
    assert abs(float(reason.group(1)) - SQUARE_ACRES) <= CLICK_TOLERANCE_ACRES, reason.group(0)
    # The District's notice: a screen is no decision, other rules and WCA, whom to ask.
    notice = page.inner_text("#screen-result .notice")
    assert "not a permit decision" in notice and "Wetland Conservation Act" in notice
    assert "Contact:" in notice
    # The wetland it meets is highlighted on the map.
    page.wait_for_function(
        "() => window.rulemMap.querySourceFeatures('screen-wetland').length > 0")


def test_an_uploaded_footprint_outside_the_plan_area_needs_no_permit(
        page: Any, db: sa.Connection, tmp_path: Path) -> None:
    # 1 km west of the plan area's west edge: Rule M does not apply there.
    square = db.execute(sa.text(
        "SELECT ST_AsGeoJSON(ST_Transform(ST_MakeEnvelope(ST_XMin(b) - 1040, ST_YMin(b), "
        "ST_XMin(b) - 1000, ST_YMin(b) + 40, ST_SRID(geom)), 4326), 9) "
        "FROM (SELECT geom, geom::box2d AS b FROM pub.cwmp_area) x")).scalar_one()
    upload = tmp_path / "footprint.geojson"
    upload.write_text(json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {}, "geometry": json.loads(square)}]}))
    page.click("#draw-clear")
    page.set_input_files("#screen-file", str(upload))
    page.wait_for_selector("#screen-result .answer[data-permit-needed=false]")
    assert "outside the CWMP area" in page.inner_text("#screen-result")
    # A file in the working CRS (metres), not longitude/latitude: one line naming the file.
    utm = tmp_path / "footprint-utm.geojson"
    utm.write_text(json.dumps({"type": "Polygon", "coordinates": [[
        [487000, 4993000], [487040, 4993000], [487040, 4993040], [487000, 4993000]]]}))
    page.set_input_files("#screen-file", str(utm))
    page.locator("#screen-result .error-text", has_text="footprint-utm.geojson").wait_for()
    assert "not longitude/latitude" in page.inner_text("#screen-result .error-text")
    assert page.page_errors == []


def _new_page(page: Any, width: int, height: int, url: str) -> Any:
    """A second page of the module's browser, at another size, ready."""
    other = page.context.browser.new_page(viewport={"width": width, "height": height})
    other.set_default_timeout(WAIT_MS)
    other.goto(url)
    other.wait_for_selector("body[data-ready=true]", state="attached")
    return other


def test_a_shared_link_reopens_the_view(page: Any, web_server) -> None:
    """The URL carries the open permit, the zoom and the date; the same
    link in another window opens the same view."""
    when = "2030-06-30"
    page.fill("#search-q", CASE)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "no => document.querySelector('#panel h3')?.textContent === 'Permit ' + no", arg=CASE)
    page.fill("#as-of", when)
    page.dispatch_event("#as-of", "change")
    _wait_idle(page)
    page.wait_for_function("when => location.hash.includes('date=' + when)", arg=when)
    link = page.url
    assert f"permit={CASE}" in link and "zoom=" in link
    zoom = page.evaluate("() => window.rulemMap.getZoom()")
    other = _new_page(page, 1280, 800, link)
    try:
        other.wait_for_function(
            "no => document.querySelector('#panel h3')?.textContent === 'Permit ' + no",
            arg=CASE)
        assert other.input_value("#as-of") == when
        assert "as of " + when in other.inner_text("#panel .hint")
        assert abs(other.evaluate("() => window.rulemMap.getZoom()") - zoom) < 0.01
        # The panel's CSV: the figures shown, one row each, formula-safe text.
        text = other.evaluate("() => window.rulemPanel.csvText()")
        assert text.startswith("section,subject,as_of,item")
        assert f"figure,permit {CASE},{when}," in text
    finally:
        other.close()
    page.click("#as-of-today")


def test_the_legend_is_in_the_first_view_at_1440x900(page: Any, web_server) -> None:
    """At 1440 x 900 the legend's every entry is on screen unscrolled."""
    other = _new_page(page, 1440, 900, web_server.base_url + "/")
    try:
        items = other.locator("#legend li")
        assert items.count() >= 10
        last = items.last.bounding_box()
        first = other.locator("#legend-box").bounding_box()
        assert first["y"] >= 0 and last["y"] + last["height"] <= 900, (first, last)
        assert other.locator("#legend-box").is_visible()
    finally:
        other.close()


def test_the_first_view_asks_one_request_per_tile(page: Any, web_server) -> None:
    """Every layer comes in one tile (/tiles/{z}/{x}/{y}.mvt), so the
    first view at 1280 x 800 asks the server for a few tiles, not one per layer and tile
    (74 requests when each of the seven layers was a source of its own)."""
    other = page.context.browser.new_page(viewport={"width": 1280, "height": 800})
    other.set_default_timeout(WAIT_MS)
    asked: list[str] = []
    other.on("request", lambda r: asked.append(urlsplit(r.url).path)
             if "/tiles/" in r.url else None)
    try:
        other.goto(web_server.base_url + "/")
        other.wait_for_selector("body[data-ready=true]", state="attached")
        _wait_idle(other)
        assert asked and all(re.fullmatch(r"/tiles/\d+/\d+/\d+\.mvt", p) for p in asked), asked
        assert len(asked) <= FIRST_VIEW_TILE_REQUESTS, asked
    finally:
        other.close()


BASEMAP_RGB = (120, 200, 230)


def _tile_server() -> tuple[ThreadingHTTPServer, list[str]]:
    """A basemap's XYZ server on another origin (another port): one light-blue PNG for every
    tile, with the CORS header a tile server sends for WebGL to use its images."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (256, 256), BASEMAP_RGB).save(buffer, "PNG")
    png, asked = buffer.getvalue(), []

    class Tiles(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(png)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(png)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Tiles)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


def test_a_district_basemap_draws_under_the_layers(page: Any, web_server,
                                                   tmp_path: Path) -> None:
    """With RULEM_BASEMAP_URL the map draws the district's XYZ tiles from
    their host (the page's CSP lets that origin serve images, nothing more) under every
    layer, lists it among the layers and shows its attribution as text."""
    tiles, asked = _tile_server()
    origin = f"http://127.0.0.1:{tiles.server_port}"
    proc, base, _ = start_serve(web_server.gis_url, tmp_path / "serve.log", env={
        "RULEM_BASEMAP_URL": origin + "/ortho/{z}/{x}/{y}.png",
        "RULEM_BASEMAP_ATTRIBUTION": "Imagery <b>Test</b> County"})
    other = page.context.browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        other.set_default_timeout(WAIT_MS)
        other.add_init_script("window.blocked = []; document.addEventListener("
                              "'securitypolicyviolation',"
                              " (e) => window.blocked.push(e.blockedURI))")
        other.goto(base + "/")
        other.wait_for_selector("body[data-ready=true]", state="attached")
        _wait_idle(other)
        assert asked and all(re.fullmatch(r"/ortho/\d+/\d+/\d+\.png", p) for p in asked)
        assert other.evaluate("() => window.blocked") == []
        ids = other.evaluate("() => window.rulemMap.getStyle().layers.map((l) => l.id)")
        assert ids[:2] == ["background", "basemap"]
        assert other.locator("#layer-list li").last.inner_text() == "Basemap"
        attribution = other.locator(".maplibregl-ctrl-attrib-inner")
        assert attribution.inner_text() == "Imagery <b>Test</b> County"
        assert other.locator(".maplibregl-ctrl-attrib-inner b").count() == 0
        # Drawn: where no layer of ours fills (outline-only parcels), the basemap shows.
        png = tmp_path / "basemap.png"
        other.locator("#map").screenshot(path=str(png))
        from PIL import Image

        with Image.open(png) as image:
            total = image.width * image.height
            colours = image.convert("RGB").getcolors(maxcolors=total) or []
        near = sum(n for n, c in colours
                   if all(abs(a - b) <= 6 for a, b in zip(c, BASEMAP_RGB, strict=True)))
        assert near > 0.05 * total, near / total
        # Unticked in the layer list, it is gone.
        other.locator("#layer-list input[data-layer=basemap]").uncheck()
        assert other.evaluate(
            "() => window.rulemMap.getLayoutProperty('basemap', 'visibility')") == "none"
    finally:
        other.close()
        stop_serve(proc)
        tiles.shutdown()


def test_the_panel_is_usable_on_a_phone(page: Any, web_server) -> None:
    """At 390 x 844 the controls are a bottom sheet over the map; the
    search box, its results and the opened panel are in view, and the map still shows."""
    other = _new_page(page, 390, 844, web_server.base_url + "/")
    try:
        def in_view(selector: str) -> bool:
            box = other.locator(selector).first.bounding_box()
            return box is not None and box["y"] >= 0 and box["y"] + min(box["height"], 40) <= 844
        assert in_view("#search-q")
        other.fill("#search-q", "2")   # several permits: a list of results
        other.press("#search-q", "Enter")
        other.locator("#search-results li button").first.wait_for()
        assert in_view("#search-results li button")
        other.locator("#search-results li button").first.click()
        other.wait_for_function(
            "() => /^Permit /.test(document.querySelector('#panel h3')?.textContent || '')")
        assert in_view("#panel h3")
        assert in_view("#panel tr[data-field=balance_acres]")
        box = other.locator("#map").bounding_box()
        assert box["width"] == 390 and box["height"] > 400
        side = other.locator("#side").bounding_box()
        assert side["width"] <= 390
    finally:
        other.close()


def test_stored_text_is_shown_as_text(page: Any, db: sa.Connection) -> None:
    """Everything the panel shows from stored text is text, never markup: a ledger entry's
    reason holding a script and an image with an onerror handler shows as written and runs
    nothing (the panel builds DOM nodes, never innerHTML)."""
    pin = _pin_display(DEMO_CASES[CASE]["pins"][0])
    attack = '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 1">'
    db.execute(sa.text("SET session_replication_role = replica"))  # past the ledger's guards
    entry = db.execute(sa.text(
        "UPDATE ledger.entry SET reason = :a WHERE entry_id = (SELECT min(entry_id) FROM "
        "pub.ledger_entry WHERE pin = :p) RETURNING entry_id"), {"a": attack, "p": pin}).scalar()
    db.execute(sa.text("SET session_replication_role = DEFAULT"))
    db.commit()
    assert entry is not None
    page.fill("#search-q", pin)
    page.press("#search-q", "Enter")
    page.wait_for_function(
        "pin => document.querySelector('#panel h3')?.textContent === 'Parcel ' + pin", arg=pin)
    row = page.locator(f"#panel tr[data-entry='{entry}']")
    assert attack in row.inner_text()
    assert page.locator("#panel script, #panel img").count() == 0
    assert page.evaluate("() => window.pwned") is None
    assert '"' + attack.replace('"', '""') + '"' in page.evaluate(
        "() => window.rulemPanel.csvText()")  # one quoted CSV field
