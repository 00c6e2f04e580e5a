// PIN and permit labels at site scales, drawn as HTML markers.
//
// Why HTML: MapLibre draws text only from glyph files (PBF) fetched from a glyph server, and
// the map may load nothing from another host; no glyph package is available to install, so
// the style has no text layers. The browser's own fonts draw these labels instead: at zoom 15
// and closer, one label per parcel (its PIN) and per permit (its number) among the features
// in view. The style says what to label in metadata "rulem:labels" ([{layer, property,
// minzoom}]: the features of the style layers drawing that layer, by that property); without
// it: parcels' "pin" and any other layer's "permit_no".

import { layerOf } from "./layers.js";

const MAX_LABELS = 250;
const DEFAULT_MINZOOM = 15;
const MIN_PX = [60, 18]; // the least width and height of a feature's part in view to label

function rules(map) {
  const style = map.getStyle();
  const listed = style && style.metadata && style.metadata["rulem:labels"];
  if (Array.isArray(listed) && listed.length) {
    return listed.map((r) => ({
      layers: (style.layers || []).filter((l) => l.source && layerOf(l) === r.layer)
        .map((l) => l.id),
      field: r.property,
      minzoom: r.minzoom ?? DEFAULT_MINZOOM,
      kind: r.property === "pin" ? "pin" : "permit",
    }));
  }
  const layers = (style.layers || []).filter((l) => l.source && l.type !== "raster");
  const parcel = layers.filter((l) => /parcel/.test(`${layerOf(l)} ${l.id}`)).map((l) => l.id);
  const other = layers.filter((l) => !/parcel/.test(`${layerOf(l)} ${l.id}`)).map((l) => l.id);
  return [
    { layers: parcel, field: "pin", minzoom: DEFAULT_MINZOOM, kind: "pin" },
    { layers: other, field: "permit_no", minzoom: DEFAULT_MINZOOM, kind: "permit" },
  ];
}

/** Extend a [w, s, e, n] box by a GeoJSON geometry's coordinates. */
function extend(box, geometry) {
  const walk = (coords) => {
    if (typeof coords[0] === "number") {
      box[0] = Math.min(box[0], coords[0]);
      box[1] = Math.min(box[1], coords[1]);
      box[2] = Math.max(box[2], coords[0]);
      box[3] = Math.max(box[3], coords[1]);
    } else {
      for (const c of coords) walk(c);
    }
  };
  if (geometry && geometry.coordinates) walk(geometry.coordinates);
  return box;
}

export function setupLabels(map) {
  const maplibregl = window.maplibregl;
  const shown = new Map(); // key -> marker

  function update() {
    const zoom = map.getZoom();
    const wanted = new Map(); // key -> {text, kind, box}
    for (const rule of rules(map)) {
      if (zoom < rule.minzoom || rule.layers.length === 0) continue;
      const visible = rule.layers.filter(
        (id) => map.getLayoutProperty(id, "visibility") !== "none",
      );
      if (visible.length === 0) continue;
      for (const feature of map.queryRenderedFeatures({ layers: visible })) {
        const value = feature.properties && feature.properties[rule.field];
        if (value === undefined || value === null || value === "") continue;
        const key = `${rule.kind}:${value}`;
        if (!wanted.has(key)) {
          wanted.set(key, { text: String(value), kind: rule.kind,
                            box: [Infinity, Infinity, -Infinity, -Infinity] });
        }
        extend(wanted.get(key).box, feature.geometry);
      }
    }
    const bounds = map.getBounds();
    let count = 0;
    for (const [key, label] of wanted) {
      if (count >= MAX_LABELS || !Number.isFinite(label.box[0])) {
        wanted.delete(key);
        continue;
      }
      // The centre of the part in view; none where too little of it shows for a label.
      const w = Math.max(label.box[0], bounds.getWest());
      const south = Math.max(label.box[1], bounds.getSouth());
      const e = Math.min(label.box[2], bounds.getEast());
      const n = Math.min(label.box[3], bounds.getNorth());
      const a = map.project([w, n]);
      const b = map.project([e, south]);
      if (b.x - a.x < MIN_PX[0] || b.y - a.y < MIN_PX[1]) {
        wanted.delete(key);
        continue;
      }
      const lng = (w + e) / 2;
      const lat = (south + n) / 2;
      let marker = shown.get(key);
      if (!marker) {
        const node = document.createElement("div");
        node.className = `map-label ${label.kind}`;
        node.textContent = label.kind === "permit" ? `permit ${label.text}` : label.text;
        node.setAttribute("aria-hidden", "true");
        marker = new maplibregl.Marker({ element: node, anchor: label.kind === "permit" ? "top" : "center" });
        marker.setLngLat([lng, lat]).addTo(map);
        shown.set(key, marker);
      } else {
        marker.setLngLat([lng, lat]);
      }
      count += 1;
    }
    for (const [key, marker] of shown) {
      if (!wanted.has(key)) {
        marker.remove();
        shown.delete(key);
      }
    }
  }

  let pending = false;
  map.on("idle", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      update();
    });
  });
  map.on("zoomend", update);
}
