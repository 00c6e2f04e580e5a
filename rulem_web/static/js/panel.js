// The balance panel: a parcel's or a permit's 1:1 balance and its findings, read from the API
// (/api/parcel, /api/permit) as of the date control, in the ledger's own words and figures;
// why each figure is what it is (the ledger entries standing at the date, and the permit
// findings that shape them, from pub.balance_explain); a CSV of those figures and entries;
// and a permit's decision document (/permits/{no}/document.pdf).

import { getJSON } from "./api.js";
import { acres, csv, el } from "./format.js";

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

const MEASURES = {
  impact: "Impact",
  required: "Required",
  credit: "Credit",
  credit_proposed: "Credit proposed",
  credit_constructed: "Credit constructed",
  credit_hosted: "Credit hosted",
  transfer_in: "Transfer in",
  transfer_out: "Transfer out",
};

/** The decision document of a permit, as `rulem-db serve` renders it. */
export function documentUrl(no) {
  return `/permits/${encodeURIComponent(no)}/document.pdf`;
}

/** The findings shown: the feature's own, then the permit findings behind its figures
 * (pub.balance_explain's finding rows) not already among them. */
function allFindings(data) {
  const own = Array.isArray(data.findings) ? data.findings : [];
  const seen = new Set(own.map((f) => f.finding_id));
  const causes = (Array.isArray(data.causes) ? data.causes : [])
    .filter((f) => !seen.has(f.finding_id))
    .map((f) => ({ ...f, cause: true }));
  return [...own, ...causes];
}

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

  /** Open a parcel ({kind:"parcel", pin}) or a permit ({kind:"permit", no}); `others` are
   * the other permits or parcel under the same click, offered as buttons. */
  async open(target, { fly = false, others = [] } = {}) {
    this.current = target;
    this.others = others;
    this.data = null;
    const ticket = ++this.request;
    const asOf = this.asOf();
    this.node.setAttribute("aria-busy", "true");
    try {
      const data = target.kind === "parcel"
        ? await getJSON("/api/parcel", { pin: target.pin, as_of: asOf })
        : await getJSON("/api/permit", { no: target.no, as_of: asOf });
      if (ticket !== this.request) return;
      this.data = data;
      this.render(target, data, asOf);
      this.node.dispatchEvent(new CustomEvent("panel-open", { bubbles: true, detail: target }));
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
    if (this.current) this.open(this.current, { others: this.others });
  }

  /** The panel's figures, entries and findings as CSV text (one table, a "section" column). */
  csvText() {
    const data = this.data || {};
    const target = this.current || {};
    const name = target.kind === "parcel" ? `parcel ${data.pin || target.pin}`
      : `permit ${data.permit_no || target.no}`;
    const rows = [["section", "subject", "as_of", "item", "acres", "balance_effect_acres",
      "effective_on", "permit_no", "pin", "detail"]];
    const asOf = data.as_of || new Date().toISOString().slice(0, 10);
    for (const [key, label] of FIGURES) {
      if (key in data) rows.push(["figure", name, asOf, label, data[key], "", "", "", "", key]);
    }
    if (data.status) rows.push(["figure", name, asOf, "Status", "", "", "", "", "", data.status]);
    for (const e of data.entries || []) {
      rows.push(["entry", name, asOf, `${e.measure} ${e.entry_kind}`, e.acres,
        e.balance_effect_acres, e.effective_on, e.permit_no || e.district_project || "",
        e.pin || "", e.reason || ""]);
    }
    for (const f of allFindings(data)) {
      rows.push(["finding", name, asOf, `${f.paragraph || ""} ${f.check || ""}`.trim(), "", "",
        "", f.permit_no || "", f.pin || "", `${f.severity || ""}: ${f.message || ""}`]);
    }
    return csv(rows);
  }

  /** Save the CSV (a download from a blob: nothing leaves the browser). */
  download() {
    const target = this.current || {};
    const stem = (target.kind === "parcel" ? `parcel-${target.pin}` : `permit-${target.no}`)
      .replace(/[^A-Za-z0-9._-]/g, "_");
    const url = URL.createObjectURL(new Blob([this.csvText()], { type: "text/csv" }));
    const link = el("a", { href: url, download: `${stem}-balance.csv` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
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
    const findings = allFindings(data);
    const parts = [el("h3", {}, title)];
    // the county's site address and owner, when its parcel file delivers them
    const place = target.kind === "parcel"
      ? [data.site_address, data.owner_name].filter(Boolean) : [];
    if (place.length) {
      parts.push(el("p", { class: "place", "data-field": "place" }, place.join(" · ")));
    }
    parts.push(
      el("p", { class: "hint" }, `1:1 replacement balance ${when}, in acres`),
      el("table", { class: "balance" }, el("tbody", {}, rows)),
    );
    if (statusText) {
      parts.push(el("p", {}, "Status: ",
        el("span", { class: `status-${data.status}`, "data-field": "status" }, statusText)));
    }
    if (target.kind === "permit" && data.permit_status) {
      parts.push(el("p", {}, `Permit status: ${data.permit_status}`));
    }
    const permitNos = target.kind === "permit" ? [data.permit_no || target.no]
      : [...new Set((data.entries || []).map((e) => e.permit_no).filter(Boolean))];
    const actions = [
      el("button", { type: "button", class: "csv", onclick: () => this.download() },
        "Download CSV"),
      el("button", { type: "button", class: "print", onclick: () => window.print() }, "Print"),
      ...permitNos.map((no) => el("a", { class: "document", href: documentUrl(no),
        target: "_blank", rel: "noopener" }, `Decision document, permit ${no} (PDF)`)),
    ];
    parts.push(el("p", { class: "row actions" }, actions));
    if (this.others && this.others.length) {
      parts.push(el("p", { class: "also" }, "Also at this point: ",
        this.others.map((o) => el("button", {
          type: "button", class: "also-here", "data-kind": o.kind,
          "data-key": o.kind === "parcel" ? o.pin : o.no,
          onclick: () => this.open(o, { others: [target, ...this.others.filter((x) => x !== o)] }),
        }, o.kind === "parcel" ? `parcel ${o.pin}` : `permit ${o.no}`))));
    }
    parts.push(el("h3", { class: "findings-head" }, `Findings (${findings.length})`));
    if (findings.length === 0) {
      parts.push(el("p", { class: "hint" }, "No open findings."));
    } else {
      parts.push(el("ul", { class: "findings" }, findings.map((f) =>
        el("li", { class: `${f.severity || ""}${f.cause ? " cause" : ""}`,
                   "data-finding": f.finding_id },
          f.cause ? el("div", { class: "meta" },
            `Shapes this figure: a finding on permit ${f.permit_no || "?"}`) : null,
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
    parts.push(...this.entries(data));
    this.node.replaceChildren(...parts);
  }

  /** Why the figures are what they are: the ledger entries standing at the date (their
   * balance effects add up to the balance), newest first. */
  entries(data) {
    const entries = Array.isArray(data.entries) ? data.entries : [];
    const head = el("h3", { class: "entries-head" }, `Ledger entries behind the figures (${entries.length})`);
    if (entries.length === 0) {
      return [head, el("p", { class: "hint" }, "No ledger entry: nothing required or counted.")];
    }
    const rows = entries.map((e) => el("tr", { "data-entry": e.entry_id },
      el("td", { class: "date" }, e.effective_on || ""),
      el("th", { scope: "row" },
        `${MEASURES[e.measure] || e.measure} (${e.entry_kind})`,
        e.permit_no ? ` · permit ${e.permit_no}` : "",
        e.district_project ? ` · ${e.district_project}` : "",
        e.pin && data.permit_no ? ` · ${e.pin}` : "",
        e.reason ? el("div", { class: "meta" }, e.reason) : null),
      el("td", {}, acres(e.acres)),
      el("td", {}, signed(e.balance_effect_acres))));
    return [head, el("table", { class: "entries" },
      el("thead", {}, el("tr", {}, el("th", {}, "Effective"), el("th", {}, "Entry"),
        el("th", {}, "Acres"), el("th", {}, "Effect"))),
      el("tbody", {}, rows))];
  }

  /** The header's plan-wide line from /api/plan. */
  renderPlanLine(node, plan) {
    const when = this.asOf() ? ` as of ${this.asOf()}` : "";
    node.textContent = `Plan-wide${when}: required ${acres(plan.required_acres)} ac, ` +
      `credit ${acres(plan.credit_acres)} ac, balance ${signed(plan.balance_acres)} ac` +
      (plan.status ? ` (${plan.status})` : "");
  }
}
