// What a click on the map means: the topmost feature that names a permit (its impact,
// replacement, buffer, finding, ...) opens the permit; otherwise the parcel under the pointer.
// The drawing and screening overlays of the pre-application screen are never picked.

const OWN_SOURCES = new Set(["screen-draw", "screen-wetland", "screen-buffer"]);

function isParcel(feature) {
  const source = String(feature.source || "") + " " + String(feature.layer && feature.layer.id);
  return /parcel/.test(source);
}

/** {kind: "permit", no} or {kind: "parcel", pin} at a screen point, or null. */
export function pick(map, point) {
  const features = map.queryRenderedFeatures(point).filter(
    (f) => !OWN_SOURCES.has(f.source),
  );
  for (const feature of features) {
    const props = feature.properties || {};
    if (!isParcel(feature) && props.permit_no) return { kind: "permit", no: String(props.permit_no) };
    if (isParcel(feature) && props.pin) return { kind: "parcel", pin: String(props.pin) };
  }
  return null;
}

window.rulemPick = (x, y) => pick(window.rulemMap, [x, y]);
