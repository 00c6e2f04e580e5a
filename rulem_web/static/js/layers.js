// The layer list (a checkbox per published layer, toggling every style layer drawn from it)
// and the legend (/api/legend: one swatch per style layer or class, from the shared palette).

import { getJSON } from "./api.js";
import { el } from "./format.js";

/** A readable name for a group of style layers. */
function title(group) {
  const meta = group.layers[0].metadata || {};
  if (meta["rulem:title"]) return meta["rulem:title"];
  return group.key.replace(/^pub\./, "").replace(/_/g, " ");
}

/** The style's layers grouped by published layer: metadata "rulem:layer", else the source. */
function groups(style) {
  const byKey = new Map();
  for (const layer of style.layers || []) {
    if (layer.type === "background") continue;
    const meta = layer.metadata || {};
    const key = meta["rulem:layer"] || layer.source || layer.id;
    if (!byKey.has(key)) byKey.set(key, { key, layers: [] });
    byKey.get(key).layers.push(layer);
  }
  // Topmost first, as in a GIS layer list.
  return [...byKey.values()].reverse();
}

export function setupLayerList(list, map, style) {
  const items = groups(style).map((group, index) => {
    const id = `layer-toggle-${index}`;
    const visible = group.layers.some(
      (l) => !l.layout || l.layout.visibility !== "none",
    );
    const box = el("input", { type: "checkbox", id, "data-layer": group.key });
    box.checked = visible;
    box.addEventListener("change", () => {
      for (const layer of group.layers) {
        if (map.getLayer(layer.id)) {
          map.setLayoutProperty(layer.id, "visibility", box.checked ? "visible" : "none");
        }
      }
    });
    return el("li", {}, box, el("label", { for: id }, title(group)));
  });
  list.replaceChildren(...items);
}

export async function setupLegend(list) {
  let entries;
  try {
    entries = await getJSON("/api/legend");
  } catch (error) {
    list.replaceChildren(el("li", { class: "error-text" }, `Legend: ${error.message}`));
    return;
  }
  list.replaceChildren(...entries.map((entry) => {
    const swatch = el("span", { class: "swatch", "aria-hidden": "true" });
    swatch.style.background = entry.color || "transparent";
    if (entry.outline) swatch.style.borderColor = entry.outline;
    return el("li", { "data-layer": entry.layer }, swatch, el("span", {}, entry.label));
  }));
}
