// The layer list (a checkbox per published layer and the basemap, toggling every style layer
// drawn from it) and the legend (/api/legend: one swatch per style rule, grouped by layer,
// from the same rules as QGIS).

import { getJSON } from "./api.js";
import { el } from "./format.js";

/** The layer a style layer draws: its source-layer (one published view each, all in one
 * vector source), else its source (the basemap). */
export function layerOf(layer) {
  return layer["source-layer"] || layer.source;
}

/** The style's layers grouped by the layer they draw, titled by the style's metadata
 * "rulem:layers" ([{layer, title}]); topmost first, as in a GIS layer list. */
function groups(style) {
  const titles = new Map(
    ((style.metadata && style.metadata["rulem:layers"]) || []).map((l) => [l.layer, l.title]),
  );
  const byLayer = new Map();
  for (const layer of style.layers || []) {
    if (!layer.source) continue;
    const key = layerOf(layer);
    if (!byLayer.has(key)) {
      byLayer.set(key, { key, title: titles.get(key) || key.replace(/_/g, " "), layers: [] });
    }
    byLayer.get(key).layers.push(layer);
  }
  return [...byLayer.values()].reverse();
}

export function setupLayerList(list, map, style) {
  const items = groups(style).map((group, index) => {
    const id = `layer-toggle-${index}`;
    const box = el("input", { type: "checkbox", id, "data-layer": group.key });
    box.checked = group.layers.some((l) => !l.layout || l.layout.visibility !== "none");
    box.addEventListener("change", () => {
      for (const layer of group.layers) {
        if (map.getLayer(layer.id)) {
          map.setLayoutProperty(layer.id, "visibility", box.checked ? "visible" : "none");
        }
      }
    });
    return el("li", {}, box, el("label", { for: id }, group.title));
  });
  list.replaceChildren(...items);
}

function swatch(entry) {
  const node = el("span", { class: "swatch", "aria-hidden": "true" });
  if (entry.color) {
    node.style.background = entry.color;
    // The map's fill opacity, on white: the swatch looks like the map.
    if (entry.opacity !== undefined && entry.opacity !== null) {
      node.style.background = `color-mix(in srgb, ${entry.color} ${Math.round(
        Number(entry.opacity) * (entry.hatched ? 35 : 100))}%, white)`;
    }
  }
  if (entry.outline) node.style.borderColor = entry.outline;
  if (entry.hatched) node.classList.add("hatched");
  return node;
}

export async function setupLegend(list) {
  let entries;
  try {
    entries = await getJSON("/api/legend");
  } catch (error) {
    list.replaceChildren(el("li", { class: "error-text" }, `Legend: ${error.message}`));
    return;
  }
  const items = [];
  let group = null;
  for (const entry of entries) {
    if (entry.group && entry.group !== group) {
      group = entry.group;
      items.push(el("li", { class: "legend-group" }, group));
    }
    items.push(el("li", { "data-layer": entry.layer }, swatch(entry), el("span", {}, entry.label)));
  }
  list.replaceChildren(...items);
}
