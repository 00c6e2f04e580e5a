"""Self-contained HTML pages for the reports staff read (nightly run, annual statement).

Why hand-written HTML: a report must open from an e-mail attachment or a file share with no
server, no network and no JavaScript, and print cleanly; one file with inline CSS and pictures
as data URIs does that. Every value is escaped here, so report code passes plain values.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import html
from collections.abc import Iterable, Sequence
from typing import Any

from rulem_db.reports.palette import SEVERITY_COLOURS

CSS = """
body { font-family: "Segoe UI", Helvetica, Arial, sans-serif; color: #1a1a1a; margin: 24px;
       max-width: 1300px; line-height: 1.35; }
h1 { font-size: 22px; margin: 0 0 4px 0; }
h2 { font-size: 17px; margin: 28px 0 8px 0; border-bottom: 2px solid #2b5d34;
     padding-bottom: 3px; }
h3 { font-size: 14px; margin: 18px 0 6px 0; }
p.sub { color: #555; margin: 0 0 14px 0; }
p.note { color: #555; font-size: 12px; }
.headline { font-size: 16px; padding: 10px 14px; border-radius: 4px; margin: 12px 0; }
.headline.same { background: #eef3ee; border-left: 5px solid #7a9a7e; }
.headline.changed { background: #fff6e0; border-left: 5px solid #e0a100; }
.headline.failed { background: #fde8e8; border-left: 5px solid #c62828; }
table { border-collapse: collapse; font-size: 12.5px; margin: 4px 0 10px 0; }
th, td { border: 1px solid #d0d0d0; padding: 3px 7px; vertical-align: top; }
th { background: #f0f2f0; text-align: left; }
td { white-space: nowrap; }
td:last-child { white-space: normal; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; background: #f7f7f7; }
.status { font-weight: 600; padding: 0 5px; border-radius: 3px; }
.s-deficit { background: #c51b7d; color: #fff; }
.s-balanced { background: #fee08b; }
.s-surplus { background: #1a9641; color: #fff; }
.s-none { background: #fff; border: 1px solid #bbb; }
.s-done { background: #31a354; color: #fff; }
.s-partial { background: #e0a100; }
.s-failed { background: #c62828; color: #fff; }
.kv td:first-child { color: #555; }
img.map { max-width: 100%; border: 1px solid #ccc; }
.grid { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
code { background: #f3f3f3; padding: 0 3px; }
@media print { body { margin: 8mm; } h2 { page-break-after: avoid; } }
""" + "".join(  # finding severities in the palette QGIS, the maps and the web share
    f".s-{severity} {{ background: {colour}; color: #fff; }}\n"
    for severity, colour in SEVERITY_COLOURS.items())

STATUS_WORDS = ("deficit", "balanced", "surplus", "none", "error", "warning", "info", "done",
                "partial", "failed")


def esc(value: Any) -> str:
    """A value as escaped HTML text."""
    return html.escape("" if value is None else str(value))


def fmt(value: Any, places: int = 4) -> str:
    """Numbers as staff read them: acres to 4 decimals, counts with separators."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | decimal.Decimal):
        return f"{value:,.{places}f}"
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def status(word: Any) -> str:
    """A status word as a coloured label."""
    text = esc(word)
    if word in STATUS_WORDS:
        return f'<span class="status s-{word}">{text}</span>'
    return text


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]],
          status_columns: Sequence[str] = ("status",), total: Sequence[Any] | None = None,
          empty: str = "none", numeric_columns: Sequence[str] = ()) -> str:
    """An HTML table; numbers (and the numeric_columns, pre-formatted) right-aligned, status
    columns as coloured labels, an optional total row in bold."""
    rows = [tuple(r) for r in rows]
    if not rows and total is None:
        return f'<p class="note">{esc(empty)}</p>'
    head = "".join(f"<th>{esc(c)}</th>" for c in columns)
    body = [_row(columns, r, status_columns, numeric_columns, "") for r in rows]
    if total is not None:
        body.append(_row(columns, tuple(total), status_columns, numeric_columns,
                         ' class="total"'))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _row(columns: Sequence[str], row: Sequence[Any], status_columns: Sequence[str],
         numeric_columns: Sequence[str], attrs: str) -> str:
    cells = []
    for c, v in zip(columns, row, strict=True):
        numeric = (isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool)
                   or c in numeric_columns)
        if c in status_columns:
            cells.append(f"<td>{status(v)}</td>")
        elif numeric:
            cells.append(f'<td class="num">{esc(fmt(v))}</td>')
        else:
            cells.append(f"<td>{esc(fmt(v))}</td>")
    return f"<tr{attrs}>{''.join(cells)}</tr>"


def key_values(pairs: Iterable[tuple[str, Any]]) -> str:
    """A two-column table of labels and values."""
    body = "".join(f"<tr><td>{esc(k)}</td><td>{status(v) if k == 'status' else esc(fmt(v))}"
                   f"</td></tr>" for k, v in pairs)
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def png_data_uri(png: bytes) -> str:
    """A PNG as a data: URI, so the page needs no file beside it."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def image(png: bytes, alt: str) -> str:
    """An embedded picture."""
    return f'<img class="map" alt="{esc(alt)}" src="{png_data_uri(png)}">'


def page(title: str, subtitle: str, body: str) -> str:
    """A complete page: inline CSS, no scripts, no external resources."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><p class=\"sub\">{esc(subtitle)}</p>{body}</body></html>\n")
