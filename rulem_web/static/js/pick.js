// What a click on the map means: the topmost feature that names a permit (its impact,
// replacement, buffer, finding, ...) opens the permit; otherwise the parcel under the pointer.
// The drawing and screening overlays of the pre-application screen are never picked.

const OWN_SOURCES = new Set(["screen-draw", "screen-wetland", "screen-buffer"]);

function isParcel(feature) {
  const layer = `${feature.sourceLayer || feature.source || ""} ${feature.layer && feature.layer.id}`;
  return /parcel/.test(layer);
}

/** Every permit and parcel at a screen point, topmost first, each once: [{kind: "permit",
 * no} | {kind: "parcel", pin}]. Overlapping permits (two impacts on one wetland) are all
 * there, so the panel can offer the ones under the first. */
export function pickAll(map, point) {
  const features = map.queryRenderedFeatures(point).filter(
    (f) => !OWN_SOURCES.has(f.source),
  );
  const found = new Map();
  for (const feature of features) {
    const props = feature.properties || {};
    if (!isParcel(feature) && props.permit_no) {
      const no = String(props.permit_no);
      if (!found.has(`permit ${no}`)) found.set(`permit ${no}`, { kind: "permit", no });
    } else if (isParcel(feature) && props.pin) {
      const pin = String(props.pin);
      if (!found.has(`parcel ${pin}`)) found.set(`parcel ${pin}`, { kind: "parcel", pin });
    }
  }
  // permits before parcels: a click on an impact means its permit
  const all = [...found.values()];
  return [...all.filter((t) => t.kind === "permit"), ...all.filter((t) => t.kind === "parcel")];
}

/** {kind: "permit", no} or {kind: "parcel", pin} at a screen point, or null. */
export function pick(map, point) {
  return pickAll(map, point)[0] || null;
}

window.rulemPick = (x, y) => pick(window.rulemMap, [x, y]);
window.rulemPickAll = (x, y) => pickAll(window.rulemMap, [x, y]);
