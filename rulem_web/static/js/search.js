// Search: a permit by its number (/api/permits?q=), a parcel by its site address or owner
// (/api/parcels?q=, when the county's parcel file delivers them). One match, or a permit
// whose number is exactly the query, flies there and opens its panel; several are listed as
// buttons (keyboard reachable) to choose from. A county PIN (12 digits, dashes optional)
// opens that parcel at once: the keyboard's way to a parcel.

import { getJSON } from "./api.js";
import { el } from "./format.js";

const PIN = /^\d{2}-?\d{2}-?\d{2}-?\d{2}-?\d{4}$/;
const PARCEL_QUERY_MIN = 3; // the server refuses shorter address/owner queries (api.py)

export function setupSearch(form, list, map, panel) {
  const input = form.querySelector("input");

  function open(target) {
    list.replaceChildren();
    panel.open(target, { fly: true });
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (!q) return;
    if (PIN.test(q)) {
      open({ kind: "parcel", pin: q });
      return;
    }
    list.replaceChildren(el("li", { class: "hint" }, "Searching…"));
    let permits;
    let parcels;
    try {
      [permits, parcels] = await Promise.all([
        getJSON("/api/permits", { q }),
        q.length >= PARCEL_QUERY_MIN ? getJSON("/api/parcels", { q }) : [],
      ]);
    } catch (error) {
      list.replaceChildren(el("li", { class: "error-text" }, error.message));
      return;
    }
    const found = [
      ...permits.map((p) => ({ kind: "permit", no: String(p.permit_no),
        label: `Permit ${p.permit_no}` })),
      ...parcels.map((p) => ({ kind: "parcel", pin: p.pin,
        label: [p.site_address, p.owner_name, `PIN ${p.pin}`].filter(Boolean).join(" · ") })),
    ];
    const exact = found.find((f) => f.kind === "permit" && f.no.toLowerCase() === q.toLowerCase());
    if (exact || found.length === 1) {
      open(exact || found[0]);
    } else if (found.length === 0) {
      list.replaceChildren(el("li", { class: "hint" },
        `No permit number, address or owner contains "${q}".`));
    } else {
      list.replaceChildren(...found.map((f) => el("li", {},
        el("button", { type: "button", "data-kind": f.kind,
          onclick: () => open(f) }, f.label))));
    }
  });
}
