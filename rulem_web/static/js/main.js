// The web map's start: the style from the server (the shared palette, translated by
// rulem-db serve), then the controls. Everything the page reads comes from the same origin,
// but for the tiles of an XYZ basemap a district configures (RULEM_BASEMAP_URL).
//
// For tests and for staff who script the page: window.rulemMap is the MapLibre map, and
// <body data-ready="true"> is set once the map has drawn its first complete frame ("idle").

import { getJSON } from "./api.js";
import { setupLayerList, setupLegend } from "./layers.js";
import { setupLabels } from "./labels.js";
import { Panel } from "./panel.js";
import { setupSearch } from "./search.js";
import { setupScreen } from "./screen.js";
import { pick, pickAll } from "./pick.js";
import { readView, writeView } from "./view.js";

const maplibregl = window.maplibregl;
const status = document.getElementById("status");
const DATA_SOURCE = "pub"; // the style's vector source: every layer, one tile (rulem_web/style.py)

/** A district's PMTiles basemap is read through the pmtiles library (from the npm install,
 * served by rulem-db serve like MapLibre), loaded only when the style has one. */
async function basemapProtocol(style) {
  const wanted = Object.values(style.sources || {}).some(
    (s) => typeof s.url === "string" && s.url.startsWith("pmtiles://"),
  );
  if (!wanted) return;
  if (!window.pmtiles) {
    await new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/static/vendor/pmtiles/pmtiles.js";
      script.onload = resolve;
      script.onerror = () => reject(new Error("the pmtiles library is not installed on the server"));
      document.head.append(script);
    });
  }
  maplibregl.addProtocol("pmtiles", new window.pmtiles.Protocol().tile);
}

function say(text) {
  status.textContent = text;
}

/** The date control's value, or "" for today. */
function asOf() {
  return document.getElementById("as-of").value;
}

async function start() {
  if (!maplibregl) {
    say("MapLibre GL JS is not installed on the server: run scripts/bootstrap (npm ci).");
    return;
  }
  let style;
  try {
    style = await getJSON("/api/style.json");
    await basemapProtocol(style);
  } catch (error) {
    say(`The map style could not be read: ${error.message}`);
    return;
  }
  const map = new maplibregl.Map({
    container: "map",
    style,
    attributionControl: false,
    // Raster tiles (a district's XYZ basemap) as images, not fetch(): the page's CSP lets the
    // basemap's origin serve images only (rulem_web/guard.py). Our tiles' no-cache never
    // expires a tile, so nothing is lost.
    refreshExpiredTiles: false,
    // Keyboard: the map container takes focus, arrows pan, +/- zoom (MapLibre's handlers).
    keyboard: true,
    // kept after drawing, so that the browser's print (the print layout) shows the map
    canvasContextAttributes: { preserveDrawingBuffer: true },
  });
  window.rulemMap = map;
  map.addControl(new maplibregl.NavigationControl({ showCompass: false }), "top-left");
  map.addControl(new maplibregl.ScaleControl({ unit: "imperial" }), "bottom-left");
  if (style.sources.basemap) {
    // the basemap's attribution (RULEM_BASEMAP_ATTRIBUTION, escaped by the server)
    map.addControl(new maplibregl.AttributionControl({ compact: false }), "top-right");
  }
  map.on("error", (event) => {
    const message = event && event.error ? event.error.message : "unknown error";
    say(`Map: ${message}`);
  });

  const panel = new Panel(document.getElementById("panel"), map, asOf);
  window.rulemPanel = panel;
  const asked = readView();
  if (asked.date) document.getElementById("as-of").value = asked.date;
  let restoring = true; // no URL writes until the asked view is shown
  function saveView() {
    if (!restoring) writeView(map, panel.current, asOf());
  }
  map.on("moveend", saveView);
  const phone = window.matchMedia("(max-width: 600px)");
  if (phone.matches) document.getElementById("legend-box").open = false;
  document.getElementById("panel").addEventListener("panel-open", () => {
    saveView();
    if (phone.matches) {
      // the bottom sheet grows and shows the panel's head
      document.getElementById("side").classList.add("open");
      document.getElementById("h-detail").scrollIntoView({ block: "start" });
    }
  });
  const planBalance = document.getElementById("plan-balance");

  async function showPlan() {
    try {
      const plan = await getJSON("/api/plan", { as_of: asOf() });
      panel.renderPlanLine(planBalance, plan);
      return plan;
    } catch (error) {
      planBalance.textContent = `Plan-wide balance: ${error.message}`;
      return null;
    }
  }

  map.once("load", async () => {
    // The whole plan area in view to start with.
    const plan = await showPlan();
    const bbox = plan && plan.bbox;
    if (asked.center && asked.zoom !== null) {
      map.jumpTo({ center: asked.center, zoom: asked.zoom });
    } else if (bbox) {
      map.fitBounds([[bbox[0], bbox[1]], [bbox[2], bbox[3]]], { padding: 20, duration: 0 });
    }
    recolour();
    if (asked.target) await panel.open(asked.target, { fly: !asked.center });
    restoring = false;
    setupLayerList(document.getElementById("layer-list"), map, style);
    await setupLegend(document.getElementById("legend"));
    setupLabels(map);
    setupSearch(document.getElementById("search-form"), document.getElementById("search-results"),
      map, panel);
    setupScreen(map);
    map.once("idle", () => {
      document.body.dataset.ready = "true";
      say("");
    });
    // A frame after the set-up, so that "idle" comes even if nothing moved meanwhile.
    map.triggerRepaint();
  });

  map.on("click", (event) => {
    if (map.getContainer().classList.contains("drawing")) return;
    const [hit, ...others] = pickAll(map, event.point);
    if (hit) panel.open(hit, { others });
  });
  map.on("mousemove", (event) => {
    if (map.getContainer().classList.contains("drawing")) return;
    map.getCanvas().style.cursor = pick(map, event.point) ? "pointer" : "";
  });

  const dateInput = document.getElementById("as-of");
  window.rulemView = () => readView();
  // The parcels' colours follow the date: the map's tiles as of it (rulem_web/tiles.py).
  const dataTiles = style.sources[DATA_SOURCE] && style.sources[DATA_SOURCE].tiles;
  let tilesAsOf = "";
  function recolour() {
    const source = map.getSource(DATA_SOURCE);
    const when = asOf();
    if (!source || !dataTiles || when === tilesAsOf) return;
    tilesAsOf = when;
    // Each date's tiles carry their own ETag (rulem_web/etag.py): MapLibre keeps a reloaded
    // tile's old data when the new answer's ETag is the old one's.
    source.setTiles(dataTiles.map((t) => (when ? `${t}?as_of=${encodeURIComponent(when)}` : t)));
  }
  function dateChanged() {
    recolour();
    panel.refresh();
    showPlan();
    saveView();
  }
  dateInput.addEventListener("change", dateChanged);
  document.getElementById("as-of-today").addEventListener("click", () => {
    dateInput.value = "";
    dateChanged();
  });
}

start();
