// Permit search by number (/api/permits?q=): one match flies to the permit and opens its
// panel; several are listed as buttons (keyboard reachable) to choose from. A county PIN
// (12 digits, dashes optional) opens that parcel instead: the keyboard's way to a parcel.

import { getJSON } from "./api.js";
import { el } from "./format.js";

const PIN = /^\d{2}-?\d{2}-?\d{2}-?\d{2}-?\d{4}$/;

export function setupSearch(form, list, map, panel) {
  const input = form.querySelector("input");

  function choose(no) {
    list.replaceChildren();
    panel.open({ kind: "permit", no }, { fly: true });
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = input.value.trim();
    if (!q) return;
    if (PIN.test(q)) {
      list.replaceChildren();
      panel.open({ kind: "parcel", pin: q }, { fly: true });
      return;
    }
    list.replaceChildren(el("li", { class: "hint" }, "Searching…"));
    let found;
    try {
      found = await getJSON("/api/permits", { q });
    } catch (error) {
      list.replaceChildren(el("li", { class: "error-text" }, error.message));
      return;
    }
    const permits = (Array.isArray(found) ? found : found.permits || [])
      .map((p) => (typeof p === "string" ? { permit_no: p } : p));
    const exact = permits.find((p) => String(p.permit_no).toLowerCase() === q.toLowerCase());
    if (exact || permits.length === 1) {
      choose(String((exact || permits[0]).permit_no));
    } else if (permits.length === 0) {
      list.replaceChildren(el("li", { class: "hint" }, `No permit number contains "${q}".`));
    } else {
      list.replaceChildren(...permits.map((p) => el("li", {},
        el("button", { type: "button", onclick: () => choose(String(p.permit_no)) },
          [p.permit_no, p.status ? ` (${p.status})` : ""].join("")))));
    }
  });
}
