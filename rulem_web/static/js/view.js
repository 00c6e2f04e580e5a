// The view in the URL: the open permit or parcel, the map's centre and
// zoom, and the date, in the fragment (#permit=24-001&zoom=16.2&lng=-93.1&lat=45.2&date=...),
// so a copied link opens the same view. The fragment never reaches the server; each value is
// checked before use (a date is YYYY-MM-DD, numbers are finite, a PIN or permit number is
// only ever passed to the JSON API as a query parameter and shown as text).

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function number(value, low, high) {
  const n = Number(value);
  return value !== null && value !== "" && Number.isFinite(n) && n >= low && n <= high ? n : null;
}

/** The view a link asks for: {target, zoom, center, date}, each null when absent or bad. */
export function readView(hash = window.location.hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ""));
  const permit = (p.get("permit") || "").slice(0, 60);
  const parcel = (p.get("parcel") || "").slice(0, 60);
  const zoom = number(p.get("zoom"), 0, 24);
  const lng = number(p.get("lng"), -180, 180);
  const lat = number(p.get("lat"), -85, 85);
  const date = DATE.test(p.get("date") || "") ? p.get("date") : null;
  return {
    target: permit ? { kind: "permit", no: permit } : parcel ? { kind: "parcel", pin: parcel } : null,
    zoom,
    center: lng !== null && lat !== null ? [lng, lat] : null,
    date,
  };
}

/** Write the current view into the URL (replacing the history entry: panning is no step). */
export function writeView(map, target, date) {
  const p = new URLSearchParams();
  if (target && target.kind === "permit") p.set("permit", target.no);
  if (target && target.kind === "parcel") p.set("parcel", target.pin);
  const c = map.getCenter();
  p.set("zoom", map.getZoom().toFixed(2));
  p.set("lng", c.lng.toFixed(6));
  p.set("lat", c.lat.toFixed(6));
  if (date) p.set("date", date);
  window.history.replaceState(null, "", `#${p.toString()}`);
}
