// The pre-application screen (Rule M 2(a)): draw or upload a proposed footprint, ask
// POST /api/screen (pub.screen_footprint), show whether a Rule M permit is needed and why,
// and highlight the CWMP wetland and buffer the footprint meets.
//
// Drawing is a few lines of our own rather than a drawing library: one polygon, corners by
// click (or "Add corner at centre" from the keyboard), Finish / Enter / double click to close,
// Backspace to take back a corner, Escape to stop.

import { postJSON } from "./api.js";
import { acres, el } from "./format.js";

const EMPTY = { type: "FeatureCollection", features: [] };
const DRAW_COLOUR = "#5b1a7a";

function addOverlays(map) {
  map.addSource("screen-draw", { type: "geojson", data: EMPTY });
  map.addSource("screen-wetland", { type: "geojson", data: EMPTY });
  map.addSource("screen-buffer", { type: "geojson", data: EMPTY });
  map.addLayer({ id: "screen-buffer-fill", type: "fill", source: "screen-buffer",
    paint: { "fill-color": "#ffd92f", "fill-opacity": 0.45 } });
  map.addLayer({ id: "screen-buffer-line", type: "line", source: "screen-buffer",
    paint: { "line-color": "#b8860b", "line-width": 3, "line-dasharray": [2, 1] } });
  map.addLayer({ id: "screen-wetland-fill", type: "fill", source: "screen-wetland",
    paint: { "fill-color": "#00bfff", "fill-opacity": 0.55 } });
  map.addLayer({ id: "screen-wetland-line", type: "line", source: "screen-wetland",
    paint: { "line-color": "#00509e", "line-width": 4 } });
  map.addLayer({ id: "screen-draw-fill", type: "fill", source: "screen-draw",
    filter: ["==", ["geometry-type"], "Polygon"],
    paint: { "fill-color": DRAW_COLOUR, "fill-opacity": 0.25 } });
  map.addLayer({ id: "screen-draw-line", type: "line", source: "screen-draw",
    filter: ["in", ["geometry-type"], ["literal", ["Polygon", "LineString"]]],
    paint: { "line-color": DRAW_COLOUR, "line-width": 3 } });
  map.addLayer({ id: "screen-draw-corner", type: "circle", source: "screen-draw",
    filter: ["==", ["geometry-type"], "Point"],
    paint: { "circle-radius": 5, "circle-color": "#fff", "circle-stroke-color": DRAW_COLOUR,
             "circle-stroke-width": 2 } });
}

/** The polygons of an uploaded GeoJSON document as one Polygon or MultiPolygon geometry. */
export function footprintOf(doc) {
  const geometries = [];
  const take = (g) => {
    if (!g) return;
    if (g.type === "Polygon") geometries.push(g.coordinates);
    else if (g.type === "MultiPolygon") geometries.push(...g.coordinates);
    else if (g.type === "GeometryCollection") (g.geometries || []).forEach(take);
  };
  if (doc.type === "FeatureCollection") (doc.features || []).forEach((f) => take(f.geometry));
  else if (doc.type === "Feature") take(doc.geometry);
  else take(doc);
  if (geometries.length === 0) throw new Error("it holds no polygon: the footprint is an area");
  for (const ring of geometries.flat()) {
    for (const [x, y] of ring) {
      if (!(Math.abs(x) <= 180 && Math.abs(y) <= 90)) {
        throw new Error("its coordinates are not longitude/latitude (EPSG:4326): reproject it");
      }
    }
  }
  return geometries.length === 1
    ? { type: "Polygon", coordinates: geometries[0] }
    : { type: "MultiPolygon", coordinates: geometries };
}

export function setupScreen(map) {
  addOverlays(map);
  const startButton = document.getElementById("draw-start");
  const pointButton = document.getElementById("draw-point");
  const finishButton = document.getElementById("draw-finish");
  const clearButton = document.getElementById("draw-clear");
  const fileInput = document.getElementById("screen-file");
  const impervious = document.getElementById("screen-impervious");
  const runoff = document.getElementById("screen-runoff");
  const result = document.getElementById("screen-result");
  const container = map.getContainer();
  let corners = [];
  let drawing = false;
  let footprint = null;

  function showDrawing() {
    const features = corners.map((c) => ({ type: "Feature", properties: {},
      geometry: { type: "Point", coordinates: c } }));
    if (corners.length >= 3) {
      features.push({ type: "Feature", properties: {},
        geometry: { type: "Polygon", coordinates: [[...corners, corners[0]]] } });
    } else if (corners.length === 2) {
      features.push({ type: "Feature", properties: {},
        geometry: { type: "LineString", coordinates: corners } });
    }
    map.getSource("screen-draw").setData({ type: "FeatureCollection", features });
    finishButton.disabled = !(drawing && corners.length >= 3);
  }

  function showFootprint(geometry) {
    map.getSource("screen-draw").setData({ type: "FeatureCollection",
      features: [{ type: "Feature", properties: {}, geometry }] });
  }

  function setDrawing(on) {
    drawing = on;
    container.classList.toggle("drawing", on);
    startButton.setAttribute("aria-pressed", String(on));
    startButton.textContent = on ? "Stop drawing" : "Draw footprint";
    pointButton.disabled = !on;
    if (on) map.doubleClickZoom.disable();
    else map.doubleClickZoom.enable();
    finishButton.disabled = !(on && corners.length >= 3);
  }

  function clearHighlights() {
    map.getSource("screen-wetland").setData(EMPTY);
    map.getSource("screen-buffer").setData(EMPTY);
  }

  function clearAll() {
    corners = [];
    footprint = null;
    setDrawing(false);
    showDrawing();
    clearHighlights();
    result.replaceChildren();
    fileInput.value = "";
  }

  async function screen(geometry) {
    footprint = geometry;
    showFootprint(geometry);
    clearHighlights();
    const properties = {};
    if (impervious.checked) properties.impervious = true;
    if (runoff.value) properties.alters_runoff = runoff.value === "true";
    result.replaceChildren(el("p", { class: "hint" }, "Screening the footprint…"));
    let answer;
    try {
      answer = await postJSON("/api/screen", { type: "Feature", properties, geometry });
    } catch (error) {
      result.replaceChildren(el("p", { class: "error-text" }, `The footprint: ${error.message}`));
      return;
    }
    map.getSource("screen-wetland").setData(answer.wetlands || EMPTY);
    map.getSource("screen-buffer").setData(answer.buffers || EMPTY);
    const needed = answer.permit_needed;
    const verdict = needed === true ? ["needed", "A Rule M permit is needed (2(a))."]
      : needed === false ? ["not-needed", "A Rule M permit is not needed (no 2(a) trigger)."]
        : ["depends", "A Rule M permit is needed if the grading alters the rate or volume of " +
           "runoff into a CWMP wetland (2(a)(iii)): say which above."];
    const wetlandCount = (answer.wetlands && answer.wetlands.features || []).length;
    const bufferCount = (answer.buffers && answer.buffers.features || []).length;
    result.replaceChildren(
      el("p", { class: `answer ${verdict[0]}`, "data-permit-needed": String(needed) }, verdict[1]),
      el("ul", {}, (answer.reasons || []).map((r) => el("li", {}, r))),
      el("p", { class: "hint" },
        `CWMP wetland in the footprint: ${acres(answer.wetland_acres)} acres; ` +
        `new impervious surface: ${answer.impervious_sqft ?? 0} ft²; ` +
        `wetlands met: ${wetlandCount} (highlighted blue), buffers met: ${bufferCount} ` +
        "(highlighted yellow)."),
      noticeOf(answer.notice),
    );
  }

  /** The District's notice (rulem_web/screen.py): disclaimer, other rules, WCA, contact. */
  function noticeOf(notice) {
    if (!notice) return null;
    return el("div", { class: "notice" },
      ["disclaimer", "other_rules", "wetland_law", "contact"].filter((k) => notice[k])
        .map((k) => el("p", { class: `notice-${k}` },
          k === "contact" ? el("strong", {}, "Contact: ") : null, notice[k])));
  }

  startButton.addEventListener("click", () => {
    if (drawing) {
      setDrawing(false);
      return;
    }
    corners = [];
    footprint = null;
    clearHighlights();
    result.replaceChildren(el("p", { class: "hint" },
      "Click the footprint's corners on the map; Finish (or Enter, or a double click) to screen it."));
    setDrawing(true);
    showDrawing();
  });
  pointButton.addEventListener("click", () => {
    const c = map.getCenter();
    corners.push([c.lng, c.lat]);
    showDrawing();
  });
  function finish() {
    if (corners.length < 3) return;
    const geometry = { type: "Polygon", coordinates: [[...corners, corners[0]]] };
    setDrawing(false);
    screen(geometry);
  }
  finishButton.addEventListener("click", finish);
  clearButton.addEventListener("click", clearAll);
  map.on("click", (event) => {
    if (!drawing) return;
    corners.push([event.lngLat.lng, event.lngLat.lat]);
    showDrawing();
  });
  map.on("dblclick", (event) => {
    if (!drawing) return;
    event.preventDefault();
    finish();
  });
  document.addEventListener("keydown", (event) => {
    if (!drawing) return;
    const typing = event.target && /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName);
    if (typing) return;
    if (event.key === "Enter") { event.preventDefault(); finish(); }
    else if (event.key === "Escape") { setDrawing(false); }
    else if (event.key === "Backspace") { event.preventDefault(); corners.pop(); showDrawing(); }
  });
  fileInput.addEventListener("change", async () => {
    const file = fileInput.files && fileInput.files[0];
    if (!file) return;
    setDrawing(false);
    corners = [];
    let geometry;
    try {
      geometry = footprintOf(JSON.parse(await file.text()));
    } catch (error) {
      result.replaceChildren(el("p", { class: "error-text" },
        `${file.name}: ${error instanceof SyntaxError ? "not a GeoJSON file" : error.message}`));
      return;
    }
    const box = [Infinity, Infinity, -Infinity, -Infinity];
    const coords = geometry.type === "Polygon" ? [geometry.coordinates] : geometry.coordinates;
    for (const [x, y] of coords.flat(2)) {
      box[0] = Math.min(box[0], x); box[1] = Math.min(box[1], y);
      box[2] = Math.max(box[2], x); box[3] = Math.max(box[3], y);
    }
    map.fitBounds([[box[0], box[1]], [box[2], box[3]]], { padding: 80, maxZoom: 17, duration: 0 });
    screen(geometry);
  });
  // The questions change the answer: screen the same footprint again.
  impervious.addEventListener("change", () => { if (footprint) screen(footprint); });
  runoff.addEventListener("change", () => { if (footprint) screen(footprint); });
}
