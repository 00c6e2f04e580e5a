"""Tabular output in the three forms people ask for: an aligned table on a terminal, CSV for
spreadsheets, JSON for scripts."""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import sys
from collections.abc import Iterable, Sequence
from typing import IO, Any

FORMATS = ("table", "csv", "json")


def add_format_option(parser) -> None:
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="output format (default: table)")


def _plain(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    return value


PLACES = 4  # acres, and every other decimal figure, as the published views round them


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, decimal.Decimal | float):
        return f"{value:,.{PLACES}f}"
    return str(_plain(value))


def _csv_cell(value: Any) -> Any:
    """A CSV value: a decimal figure rounded as the table prints it (no thousands separator,
    so spreadsheets read it as a number), so the CSV and the table show the same figure."""
    if isinstance(value, decimal.Decimal | float) and not isinstance(value, bool):
        return f"{value:.{PLACES}f}"
    return _plain(value)


def emit(columns: Sequence[str], rows: Iterable[Sequence[Any]], fmt: str = "table",
         out: IO[str] | None = None, title: str | None = None) -> None:
    """Write rows under the given column names in the chosen format."""
    out = out or sys.stdout
    rows = [tuple(r) for r in rows]
    if fmt == "json":
        json.dump([{c: _plain(v) for c, v in zip(columns, r, strict=True)} for r in rows], out,
                  indent=2)
        out.write("\n")
        return
    if fmt == "csv":
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows([[_csv_cell(v) for v in r] for r in rows])
        return
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [all(isinstance(r[i], int | float | decimal.Decimal) or r[i] is None for r in rows)
               and bool(rows) for i in range(len(columns))]
    if title:
        out.write(f"{title}\n")

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if n else v.ljust(w)
                         for v, w, n in zip(values, widths, numeric, strict=True)).rstrip()

    out.write(line(columns) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for r in cells:
        out.write(line(r) + "\n")
