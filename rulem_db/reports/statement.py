"""The annual ledger statement of a plan area, as CSV and HTML (sql/310_ledger_statement.sql
computes it; this module only reads and renders).

Files, in the output folder:
- `statement-<plan>-<year>.csv`: the statement lines (opening balance, impacts, required,
  credit by status, transfers, reversals, adjustments, closing balance) with the ids of the
  ledger entries behind each line;
- `statement-<plan>-<year>-entries.csv`: every entry on the statement (effective in the year,
  or a prior-period adjustment of an earlier one) with the line it falls on;
- `statement-<plan>-<year>.html`: both, as one page to print or send.

A year whose statement was issued (`rulem-db statement --issue`, pub.ledger_statement_issue)
is read as issued; restated (the year as now known) the files are named
`statement-<plan>-<year>-restated...`, so they never overwrite the issued ones
(docs/ledger.md section 4b).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from rulem_db.reports import html as h

LINE_COLUMNS = ("line_no", "line_code", "line", "debit_acres", "credit_acres", "memo_acres",
                "balance_acres", "entry_count", "entry_ids")
ENTRY_COLUMNS = ("line_no", "line_code", "entry_id", "effective_on", "posted_at", "run_id",
                 "permit_no",
                 "district_project", "pin", "measure", "entry_kind", "acres", "balance_acres",
                 "reverses_entry_id", "reversed_posted_at", "reason")
MAX_HTML_ENTRIES = 2000


@dataclass
class Statement:
    """A statement read from the database."""

    plan_area: str
    plan_name: str
    year: int
    tz: str
    lines: list[dict[str, Any]]
    entries: list[dict[str, Any]]
    restated: bool = False
    issue: dict[str, Any] | None = None   # the pub.ledger_statement_issue row, when issued
    closed_by: dict[str, Any] | None = None  # not issued itself: the later issue closing it

    @property
    def verified(self) -> bool | None:
        """Whether the statement reads now as issued (same digest); None when not issued."""
        return None if self.issue is None else bool(self.issue["figures_unchanged"])

    @property
    def opening(self) -> Any:
        return next(r["balance_acres"] for r in self.lines if r["line_code"] == "opening_balance")

    @property
    def closing(self) -> Any:
        return next(r["balance_acres"] for r in self.lines if r["line_code"] == "closing_balance")

    @property
    def year_to_date(self) -> bool:
        """Whether the year is not over yet (the closing balance is a balance to date)."""
        return self.year >= dt.datetime.now(ZoneInfo(self.tz)).year


@dataclass(frozen=True)
class StatementFiles:
    """The files written for a statement."""

    csv: Path
    entries_csv: Path
    html: Path


DEFAULT_TZ = "America/Chicago"


def read_issue(conn: sa.Connection, plan_area: str, year: int) -> dict[str, Any] | None:
    """The issue of a year's statement (pub.ledger_statement_issue), or None."""
    row = conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement_issue WHERE plan_area = :c AND year = :y"),
        {"c": plan_area, "y": year}).mappings().one_or_none()
    return dict(row) if row else None


def read_statement(conn: sa.Connection, plan_area: str, year: int,
                   tz: str | None = None, restated: bool = False) -> Statement:
    """The statement's lines and entries (pub.ledger_statement, pub.ledger_statement_entry):
    as issued when the year was issued (in its time zone), else as now recorded; restated,
    as now known."""
    name = conn.execute(sa.text("SELECT name FROM core.plan_area WHERE code = :c"),
                        {"c": plan_area}).scalar()
    if name is None:
        raise ValueError(f"no plan area {plan_area!r} in this database")
    issue = read_issue(conn, plan_area, year)
    params = {"c": plan_area, "y": year, "tz": tz, "r": restated}
    lines = [dict(r) for r in conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement(:c, :y, :tz, :r)"), params).mappings()]
    entries = [dict(r) for r in conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement_entry(:c, :y, :tz, :r)"), params).mappings()]
    used = issue["tz"] if issue and not restated else (tz or DEFAULT_TZ)
    closed_by = None
    if issue is None:   # a year before the first issued one is closed by it
        row = conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement_issue WHERE plan_area = :c AND year > :y "
            "ORDER BY year LIMIT 1"), {"c": plan_area, "y": year}).mappings().one_or_none()
        closed_by = dict(row) if row else None
    return Statement(plan_area, name, year, used, lines, entries, restated, issue, closed_by)


def issue_statement(conn: sa.Connection, plan_area: str, year: int,
                    tz: str | None = None) -> dict[str, Any]:
    """Issue a year's statement (ledger.issue_statement, sql/311): returns the issue row.
    Refused in one line when the year has not ended, was issued, is out of order, or the
    ledger's change queue holds changes; needs a login of rulem_etl."""
    row = conn.execute(sa.text("SELECT * FROM ledger.issue_statement(:c, :y, :tz)"),
                       {"c": plan_area, "y": year, "tz": tz or DEFAULT_TZ}).mappings().one()
    return dict(row)


def issue_note(statement: Statement) -> str:
    """One line on the statement's standing: issued (and verified), restated, or not
    issued."""
    issue = statement.issue
    if issue is None and statement.closed_by is not None:
        later = statement.closed_by
        when = later["issued_at"].astimezone(ZoneInfo(later["tz"])).isoformat(
            sep=" ", timespec="minutes")
        return (f"{statement.year} not issued itself, closed with the {later['year']} "
                f"statement issued {when} by {later['issued_by']}: "
                + ("restated, as now known" if statement.restated
                   else "figures as recorded then"))
    if issue is None:
        return (f"{statement.year} not issued: figures as now recorded "
                "(rulem-db statement --issue closes the year)")
    when = issue["issued_at"].astimezone(ZoneInfo(issue["tz"])).isoformat(
        sep=" ", timespec="minutes")
    head = f"{statement.year} issued {when} by {issue['issued_by']}, digest {issue['digest']}"
    if statement.restated:
        return f"restated: {statement.year} as now known ({head})"
    check = ("figures read now have the same digest" if statement.verified
             else f"FIGURES READ NOW DIFFER: digest now {issue['digest_now']}")
    return f"{head}; {check}"


def stem(statement: Statement) -> str:
    """The file name stem: statement-<plan>-<year>, with -restated for the year as now
    known."""
    return (f"statement-{statement.plan_area}-{statement.year}"
            + ("-restated" if statement.restated else ""))


def _csv_value(value: Any) -> Any:
    """A CSV value as the statement's tables print it: acres to 4 decimals (also a sum that
    came back as 0), entry ids space separated."""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | float):
        return f"{value:.4f}"
    return "" if value is None else value


def write_csv(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow([_csv_value(r[c]) for c in columns])
    return path


def line_label(statement: Statement, row: dict[str, Any]) -> str:
    if (row["line_code"] == "closing_balance" and statement.year_to_date
            and statement.issue is None and statement.closed_by is None):
        now = dt.datetime.now(ZoneInfo(statement.tz)).isoformat(sep=" ", timespec="minutes")
        return f"Balance to date ({now}; the year is not over)"
    return row["line"]


def render_html(statement: Statement) -> str:
    """The statement as one self-contained page."""
    lines = []
    for r in statement.lines:
        ids = r["entry_ids"]
        trace = (" ".join(str(i) for i in ids[:40]) + (" ..." if len(ids) > 40 else "")
                 if ids else ("all entries posted before" if r["line_code"].endswith("balance")
                              else ""))
        lines.append((line_label(statement, r), r["debit_acres"], r["credit_acres"],
                      r["memo_acres"], r["balance_acres"], r["entry_count"], trace))
    entries = [(e["entry_id"], e["effective_on"],
                e["posted_at"].astimezone(ZoneInfo(statement.tz)), e["line_code"],
                e["permit_no"] or e["district_project"], e["pin"], e["measure"], e["entry_kind"],
                e["acres"], e["balance_acres"], e["reverses_entry_id"], e["run_id"], e["reason"])
               for e in statement.entries[:MAX_HTML_ENTRIES]]
    more = ""
    if len(statement.entries) > MAX_HTML_ENTRIES:
        more = (f'<p class="note">First {MAX_HTML_ENTRIES} of {len(statement.entries)} entries; '
                f"all are in {h.esc(stem(statement))}-entries.csv.</p>")
    body = [
        "<h2>Statement (acres)</h2>",
        h.table(("line", "debit", "credit", "memo", "effect on balance", "entries",
                 "ledger entry ids"), lines, status_columns=()),
        f'<p class="note">{h.esc(issue_note(statement))}.</p>',
        '<p class="note">Balance = credit minus debit (Rule M 7(b), one acre replaced for each '
        "acre impacted). The statement holds the entries whose fact took effect in the year "
        "(a permit's decision, a credit's status, a transfer: the entry's effective date). "
        "Entries posted after the year ended (31 December, "
        f"{h.esc(statement.tz)}) are late postings: a permit decided in the year and "
        "loaded later, a correction of the year's figures (its reversal keeps the date of the "
        "entry it corrects). Once a year's statement is issued its figures never change: a "
        "fact of it recorded later is a prior-period adjustment of the next year not yet "
        "issued. A reversal posted within the year cancels an entry when a "
        "recompute found different figures. Opening balance + effects of the lines = closing "
        "balance; the opening balance is the closing balance of the year before as its "
        "statement reads it (as issued once issued). Memo lines (impact, constructed, proposed "
        "and hosted credit) do not move the balance.</p>",
        f"<h2>Ledger entries on the statement of {statement.year} "
        f"({len(statement.entries)})</h2>",
        h.table(("entry", "effective", "posted", "line", "permit / project", "parcel",
                 "measure", "kind", "acres", "effect", "reverses", "run", "reason"), entries,
                status_columns=(),
                empty="No entries took effect this year."),
        more,
    ]
    title = (f"Rule M ledger statement {statement.year}"
             + (" (restated)" if statement.restated else "") + f": {statement.plan_name}")
    sub = (f"Plan area {statement.plan_area}; produced "
           f"{dt.datetime.now(ZoneInfo(statement.tz)).isoformat(sep=' ', timespec='minutes')}")
    return h.page(title, sub, "".join(body))


def write_statement(statement: Statement, out: Path) -> StatementFiles:
    """Write the statement's CSVs and HTML page into out."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    base = stem(statement)
    lines = [dict(r, line=line_label(statement, r)) for r in statement.lines]
    csv_path = write_csv(out / f"{base}.csv", LINE_COLUMNS, lines)
    entries_path = write_csv(out / f"{base}-entries.csv", ENTRY_COLUMNS, statement.entries)
    html_path = out / f"{base}.html"
    html_path.write_text(render_html(statement), encoding="utf-8")
    return StatementFiles(csv_path, entries_path, html_path)
