// The balance panel: a parcel's or a permit's 1:1 balance and its findings, read from the API
// (/api/parcel, /api/permit) as of the date control, in the ledger's own words and figures.

import { getJSON } from "./api.js";
import { acres, el } from "./format.js";

// The figures shown, in this order, when the answer has them (pub.parcel_balance's and
// pub.permit_balance's columns).
const FIGURES = [
  ["impact_acres", "Impact (wetland filled, excavated or drained)"],
  ["required_acres", "Replacement required (1:1)"],
  ["transfer_in_acres", "Credit transferred in"],
  ["transfer_out_acres", "Credit transferred out"],
  ["credit_acres", "Credit counted"],
  ["credit_proposed_acres", "Credit proposed (not yet counted)"],
  ["credit_constructed_acres", "Credit constructed (not yet certified)"],
  ["credit_hosted_acres", "Credit hosted on this ground"],
  ["balance_acres", "Balance (credit minus required)"],
];

const STATUS_WORDS = {
  deficit: "deficit: replacement short of the impact",
  balanced: "balanced",
  surplus: "surplus",
  none: "none: nothing required or counted",
};

function signed(value) {
  const n = Number(value);
  const text = acres(value);
  return Number.isFinite(n) && n > 0 ? `+${text}` : text;
}

export class Panel {
  constructor(node, map, asOf) {
    this.node = node;
    this.map = map;
    this.asOf = asOf;
    this.current = null;
    this.request = 0;
  }

  /** Open a parcel ({kind:"parcel", pin}) or a permit ({kind:"permit", no}). */
  async open(target, { fly = false } = {}) {
    this.current = target;
    const ticket = ++this.request;
    const asOf = this.asOf();
    this.node.setAttribute("aria-busy", "true");
    try {
      const data = target.kind === "parcel"
        ? await getJSON("/api/parcel", { pin: target.pin, as_of: asOf })
        : await getJSON("/api/permit", { no: target.no, as_of: asOf });
      if (ticket !== this.request) return;
      this.render(target, data, asOf);
      if (fly && data.bbox) {
        const [w, s, e, n] = data.bbox;
        this.map.fitBounds([[w, s], [e, n]], { padding: 60, maxZoom: 17, duration: 600 });
      }
    } catch (error) {
      if (ticket !== this.request) return;
      const what = target.kind === "parcel" ? `parcel ${target.pin}` : `permit ${target.no}`;
      this.node.replaceChildren(el("p", { class: "error-text" }, `${what}: ${error.message}`));
    } finally {
      if (ticket === this.request) this.node.removeAttribute("aria-busy");
    }
  }

  /** Read the open parcel or permit again (the date control changed). */
  refresh() {
    if (this.current) this.open(this.current);
  }

  render(target, data, asOf) {
    const title = target.kind === "parcel"
      ? `Parcel ${data.pin || target.pin}`
      : `Permit ${data.permit_no || target.no}`;
    const when = asOf ? `as of ${asOf}` : "today";
    const rows = FIGURES.filter(([key]) => key in data).map(([key, label]) =>
      el("tr", { "data-field": key },
        el("th", { scope: "row" }, label),
        el("td", {}, key === "balance_acres" ? signed(data[key]) : acres(data[key])),
      ));
    const statusText = data.status ? (STATUS_WORDS[data.status] || data.status) : null;
    const findings = Array.isArray(data.findings) ? data.findings : [];
    const parts = [
      el("h3", {}, title),
      el("p", { class: "hint" }, `1:1 replacement balance ${when}, in acres`),
      el("table", { class: "balance" }, el("tbody", {}, rows)),
    ];
    if (statusText) {
      parts.push(el("p", {}, "Status: ",
        el("span", { class: `status-${data.status}`, "data-field": "status" }, statusText)));
    }
    if (target.kind === "permit" && data.permit_status) {
      parts.push(el("p", {}, `Permit status: ${data.permit_status}`));
    }
    parts.push(el("h3", {}, `Findings (${findings.length})`));
    if (findings.length === 0) {
      parts.push(el("p", { class: "hint" }, "No open findings."));
    } else {
      parts.push(el("ul", { class: "findings" }, findings.map((f) =>
        el("li", { class: f.severity || "" },
          el("div", {}, f.title ? el("strong", {}, `${f.title}: `) : null, f.message || ""),
          el("div", { class: "meta" },
            // the finding's ID: the one staff review it by (rulem-db finding ack ID)
            [f.finding_id != null ? `finding ${f.finding_id}` : null,
             `paragraph ${f.paragraph || "?"}`, f.check, f.severity,
             f.permit_no && target.kind === "parcel" ? `permit ${f.permit_no}` : null,
             f.pin && target.kind === "permit" ? `parcel ${f.pin}` : null,
             f.review_state ? `review: ${f.review_state}` : null]
              .filter(Boolean).join(" · "))))));
    }
    this.node.replaceChildren(...parts);
  }

  /** The header's plan-wide line from /api/plan. */
  renderPlanLine(node, plan) {
    const when = this.asOf() ? ` as of ${this.asOf()}` : "";
    node.textContent = `Plan-wide${when}: required ${acres(plan.required_acres)} ac, ` +
      `credit ${acres(plan.credit_acres)} ac, balance ${signed(plan.balance_acres)} ac` +
      (plan.status ? ` (${plan.status})` : "");
  }
}
