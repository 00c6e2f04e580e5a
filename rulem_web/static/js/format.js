// Figures as the ledger publishes them (acres to 4 decimals, never rounded again here), and
// DOM building without innerHTML, so no text from the database is ever read as markup.

/** Acres as published (numeric(12,4) arrives as a string or a number). */
export function acres(value) {
  if (value === null || value === undefined || value === "") return "–";
  const n = Number(value);
  return Number.isFinite(n) ? n.toFixed(4) : String(value);
}

/** Element helper: tag, attributes, children (strings become text). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** One CSV field: quoted when it holds a comma, quote or line break; text that a spreadsheet
 * would run as a formula (=, +, -, @ first, not a number) is prefixed with an apostrophe. */
export function csvField(value) {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text) && !Number.isFinite(Number(text))) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** Rows (arrays) as CSV text, CRLF line ends (RFC 4180). */
export function csv(rows) {
  return rows.map((row) => row.map(csvField).join(",")).join("\r\n") + "\r\n";
}
