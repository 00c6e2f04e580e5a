"""The report of one reconciliation run, the page staff read in the morning.

Written to `<reports>/<date>-run-<id>/`:
- `index.html`: one self-contained page (inline CSS, maps embedded): the headline (what
  changed since the previous run), plan totals before and after, the balance map with
  findings, the findings by review (new, re-opened, resolved, still open, waived, each with
  its review state) and those whose measure changed, the parcels whose balance changed, the
  inbox files,
  the permits and parcels with their balances, and the current findings by check and by
  permit (long lists cut at MAX_ROWS: the files and the database hold them all);
- `parcel_balance.csv`: every current parcel of the plan area with its balance;
- `permit_balance.csv`: every permit with its balance;
- `findings.gpkg`: the run's findings with their geometry (one layer per geometry type:
  finding_area, finding_line, finding_point; findings without a place in finding_list);
- `balance_map.png`, `changes_map.png`: the pictures of the page, for slides and e-mail;
and `<reports>/index.html`, every run's report, newest first. A run that changed nothing (the
same balances and findings as the run before) gets only `index.html`: the headline, the plan
totals, its inbox files and a link to the last full report, which shows what it saw.

Everything is read back from the database (ops.run and its snapshots, pub.parcel_balance,
pub.permit_balance, checks.finding, ops.run_finding_review_first); nothing is computed
here but layout.
"""

from __future__ import annotations

import contextvars
import datetime as dt
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa

from rulem_db import db as dbmod
from rulem_db.reports import findings_ahead, prefetch
from rulem_db.reports import html as h
from rulem_db.reports.findings_file import write_findings_gpkg
from rulem_db.reports.frames import (
    PARCEL_COLUMNS,
    drawn_as_vectors,
    parcel_count,
    read_finding_frame,
    read_parcel_frame,
)
from rulem_db.reports.frames import read_geo as _read_geo

if TYPE_CHECKING:  # geopandas, pandas and matplotlib load only for a full report (1-2 s)
    import geopandas as gpd

MAX_ROWS = 400  # long lists are cut in the page; the CSV and the GeoPackage hold them all
TZ = "America/Chicago"  # the District's clock: folder names and times in the page
UNIT_PLACES = {"acres": 4, "ft": 2, "ft3": 0, "days": 1, "triggers": 0, "declarations": 0}

PLAN_FIGURES = (("impact_acres", "Wetland impact (memo)"),
                ("required_acres", "Replacement required"),
                ("credit_acres", "Credit counted (net of transfers)"),
                ("credit_constructed_acres", "Credit constructed (memo)"),
                ("credit_proposed_acres", "Credit proposed (memo)"),
                ("balance_acres", "Balance (credit - required)"),
                ("status", "Status"),
                ("parcels_in_deficit", "Parcels in deficit"),
                ("permits_in_deficit", "Permits in deficit"))


@dataclass(frozen=True)
class RunReport:
    """The files of a run's report."""

    folder: Path
    html: Path
    parcel_csv: Path
    permit_csv: Path | None
    findings_gpkg: Path
    balance_png: Path
    changes_png: Path | None


@dataclass
class _Data:
    run: dict[str, Any]
    previous: dict[str, Any] | None
    files: list[dict[str, Any]]
    finding_changes: list[dict[str, Any]]
    finding_review: list[dict[str, Any]]  # ops.run_finding_review_first: MAX_ROWS a section
    parcel_changes: list[dict[str, Any]]
    findings: list[dict[str, Any]]  # the first MAX_ROWS of the findings the run saw
    permits: list[dict[str, Any]]  # the first MAX_ROWS permits
    parcels: gpd.GeoDataFrame | None  # every parcel, for a plan area drawn as vectors
    finding_geo: gpd.GeoDataFrame | None
    outline: gpd.GeoDataFrame | None
    active: list[tuple] = field(default_factory=list)  # parcels with impact or credit
    active_count: int = 0
    parcel_count: int = 0
    finding_count: int = 0
    finding_checks: list[tuple] = field(default_factory=list)  # by check and severity
    finding_permits: list[tuple] = field(default_factory=list)  # by permit: first MAX_ROWS
    finding_permit_rows: int = 0
    permit_count: int = 0
    review_counts: dict[str, int] = field(default_factory=dict)  # rows of each section


def _rows(conn: sa.Connection, sql: str, **params: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sa.text(sql), params).mappings().all()]


def _read_run(conn: sa.Connection, run_id: int) -> dict[str, Any]:
    """The run's row with its plan area's code and name."""
    return _rows(conn, "SELECT r.*, pa.code AS plan_code, pa.name AS plan_name FROM ops.run r "
                 "JOIN core.plan_area pa USING (plan_area_id) WHERE r.run_id = :r", r=run_id)[0]


def _read_places(conn: sa.Connection, run: dict[str, Any], url: str,
                 finding_geo: gpd.GeoDataFrame | None = None) -> dict[str, Any]:
    """What the maps and the GeoPackage draw and write (read in the report's own thread):
    the parcels of a plan area drawn as vectors, the findings with their places (unless read
    ahead: finding_geo), the outline, and the previous run and the inbox files, which the
    page shows."""
    run_id, plan = run["run_id"], run["plan_area_id"]
    previous = None
    if run["previous_run_id"]:
        previous = _rows(conn, "SELECT * FROM ops.run WHERE run_id = :r",
                         r=run["previous_run_id"])[0]
    count = parcel_count(conn, plan)
    parcels = None
    if drawn_as_vectors(count):
        # read ahead while the checks ran (flows.nightly), when it saw what the snapshot saw
        parcels = prefetch.take(url, run_id, run["balance_state"])
        if parcels is None:
            parcels = read_parcel_frame(conn, plan)
    else:
        prefetch.discard(url, run_id)
    outline = _read_geo(
        conn, "SELECT ST_AsEWKB(geom) AS geom FROM pub.plan_balance "
        "WHERE plan_area_id = :p AND geom IS NOT NULL",
        {"p": plan})
    files = _rows(conn, "SELECT * FROM ops.run_file WHERE run_id = :r ORDER BY run_file_id",
                  r=run_id)
    # the findings last (read ahead beside the run's snapshot when the nightly could:
    # rulem_db.reports.findings_ahead)
    if finding_geo is None:
        finding_geo = read_finding_frame(conn, run["check_run_id"], plan)
    return {"previous": previous, "parcel_count": count, "parcels": parcels,
            "finding_geo": finding_geo, "outline": outline, "files": files}


def _read_lists(conn: sa.Connection, run: dict[str, Any]) -> dict[str, Any]:
    """What the page lists and counts, all of it worked out by the server (read beside the
    drawing, see write_run_report): the changes, the findings by review section and by check,
    the permits and the parcels with a balance."""
    run_id, plan = run["run_id"], run["plan_area_id"]
    # the parcels with impact or credit as the run's snapshot kept them (what the run saw;
    # a state's 41,000 rows, where pub.parcel_balance reads 1,000,000 parcels: 0.6 s to count)
    seen = ("FROM ops.run_parcel_balance WHERE run_id = ops.parcels_seen_in(:r) "
            "AND status <> 'none'")
    active = conn.execute(sa.text(
        "SELECT pin, impact_acres, required_acres, credit_acres, credit_hosted_acres, "
        f"balance_acres, status {seen} ORDER BY pin LIMIT :n"),
        {"r": run_id, "n": MAX_ROWS}).all()
    active_count = conn.execute(sa.text(f"SELECT count(*) {seen}"),
                                {"r": run_id}).scalar_one()
    return {
        "finding_changes": _rows(conn, "SELECT * FROM ops.run_finding_change(:r)", r=run_id),
        "parcel_changes": _rows(conn, "SELECT * FROM ops.run_parcel_change(:r)", r=run_id),
        "findings": _rows(conn, "SELECT * FROM ops.run_finding "
                          "WHERE run_id = ops.findings_seen_in(:r) "
                          "ORDER BY permit_no, paragraph, check_code, finding_key LIMIT :n",
                          r=run_id, n=MAX_ROWS),
        "active": [tuple(r) for r in active], "active_count": int(active_count),
        **_finding_counts(conn, run_id), **_permits(conn, plan),
        **_finding_review(conn, run_id)}


def _finding_review(conn: sa.Connection, run_id: int) -> dict[str, Any]:
    """The first MAX_ROWS findings of each review section, in the page's order, and how many
    each section has, worked out by the server (ops.run_finding_review_first): "still open"
    is every finding the run saw, 240,000 at state size, of which the page shows 400."""
    rows = _rows(conn, "SELECT * FROM ops.run_finding_review_first(:r, :m)",
                 r=run_id, m=MAX_ROWS)
    counts = {}
    for r in rows:
        counts[r["section"]] = int(r.pop("section_rows"))
    return {"finding_review": rows, "review_counts": counts}


# The permits' columns, in the page and in permit_balance.csv.
PERMIT_COLUMNS = ("permit_no", "permit_status", "impact_acres", "required_acres",
                  "credit_acres", "transfer_in_acres", "transfer_out_acres",
                  "credit_proposed_acres", "balance_acres", "status")


def _permits(conn: sa.Connection, plan_area_id: int) -> dict[str, Any]:
    """The first MAX_ROWS permits with their balances, and how many there are."""
    rows = _rows(conn, f"SELECT {', '.join(PERMIT_COLUMNS)}, count(*) OVER () AS permits "
                 "FROM pub.permit_balance WHERE plan_area_id = :p ORDER BY permit_no LIMIT :n",
                 p=plan_area_id, n=MAX_ROWS)
    total = [r.pop("permits") for r in rows]
    return {"permits": rows, "permit_count": int(total[0]) if total else 0}


def _finding_counts(conn: sa.Connection, run_id: int) -> dict[str, Any]:
    """The findings the run saw, counted by the server: by check and severity (every row), by
    permit, check and severity (the first MAX_ROWS, in the order of the page). A state's
    240,000 findings read into Python to be counted took 2 s and made a page of 100,000
    rows nobody reads."""
    seen = "FROM ops.run_finding f WHERE f.run_id = ops.findings_seen_in(:r)"
    checks = conn.execute(sa.text(
        "SELECT f.paragraph, f.check_code, f.severity, count(*), "
        "count(DISTINCT f.permit_no) FROM ops.run_finding f "
        "LEFT JOIN checks.rule_check c USING (paragraph, check_code) "
        "WHERE f.run_id = ops.findings_seen_in(:r) "
        "GROUP BY f.paragraph, f.check_code, f.severity, c.sort_order "
        "ORDER BY c.sort_order, f.paragraph, f.check_code, f.severity"), {"r": run_id}).all()
    permits = conn.execute(sa.text(
        "SELECT coalesce(f.permit_no, :none) COLLATE \"C\", "
        "coalesce(f.paragraph, '') COLLATE \"C\", coalesce(f.check_code, '') COLLATE \"C\", "
        f"coalesce(f.severity, '') COLLATE \"C\", count(*), count(*) OVER () {seen} "
        "GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4 LIMIT :n"),
        {"r": run_id, "none": NO_PERMIT, "n": MAX_ROWS}).all()
    return {"finding_count": sum(int(r[3]) for r in checks),
            "finding_checks": [tuple(r) for r in checks],
            "finding_permits": [tuple(r)[:5] for r in permits],
            "finding_permit_rows": int(permits[0][5]) if permits else 0}


def folder_for(reports: Path, run: dict[str, Any]) -> Path:
    """`<reports>/<date>-run-<id>`: sorted by date, unique by run."""
    day = _local(run["started_at"]).date().isoformat()
    return Path(reports) / f"{day}-run-{run['run_id']}"


def _local(when: dt.datetime) -> dt.datetime:
    return when.astimezone(ZoneInfo(TZ))


def write_run_report(url: str, run_id: int, reports: Path, status: str,
                     message: str) -> RunReport:
    """Write the report of a run (status and message as the run will be closed with).

    A run that saw exactly what the run before saw (nothing loaded, posted or found anew)
    gets a short page that says so and links the last full report, whose balances, findings,
    maps and files are this run's too: rendering 100,000 parcels again to draw the same map
    would make a quiet night as long as a busy one.

    A full report works on both cores: two more threads have the server work out the page's
    lists and write the two CSV files (COPY) while this one reads the findings' places, draws
    the maps and writes the GeoPackage, which is mostly Python's work. One after the other
    they were 15 s of a state's 1 % night.
    """
    with dbmod.connect(url) as conn:
        same = _same_report(conn, run_id, status)
        if same is not None:
            prefetch.discard(url, run_id)
            findings_ahead.discard(url, run_id)
            return _write_same_report(conn, run_id, reports, status, message, same)
        run = _read_run(conn, run_id)
    folder = folder_for(reports, run)
    folder.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="rulem-report-lists") as beside:
        lists = beside.submit(contextvars.copy_context().run, _lists, url, run)
        tables = beside.submit(contextvars.copy_context().run, _tables, url, run, folder)
        return _draw_and_write(url, run, Path(reports), folder, status, message, lists,
                               tables)


def _lists(url: str, run: dict[str, Any]) -> dict[str, Any]:
    with dbmod.connect(url) as conn:
        return _read_lists(conn, run)


def _changed_ids(lists: dict[str, Any]) -> set[int]:
    return {int(r["parcel_id"]) for r in lists["parcel_changes"]}


def _tables(url: str, run: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """parcel_balance.csv and permit_balance.csv, written by the server. The parcels that
    changed are asked for here (0.1 s at state size) rather than taken from the lists, so
    the files are written beside the lists instead of after them: after them they were the
    last 3.7 s of a state report."""
    with dbmod.connect(url) as conn:
        changed = {int(r[0]) for r in conn.execute(sa.text(
            "SELECT parcel_id FROM ops.run_parcel_change(:r)"), {"r": run["run_id"]})}
        return (write_parcel_csv(conn, folder / "parcel_balance.csv", run["plan_area_id"],
                                 changed),
                write_permit_csv(conn, folder / "permit_balance.csv", run["plan_area_id"]))


def _draw_and_write(url: str, run: dict[str, Any], reports: Path, folder: Path, status: str,
                    message: str, lists: Future[dict[str, Any]],
                    tables: Future[tuple[Path, Path]]) -> RunReport:
    """The report's own thread (see write_run_report): the maps, the GeoPackage, the page."""
    from rulem_db.reports.map import balance_map

    run_id = run["run_id"]
    gpkg = folder / "findings.gpkg"
    ahead = findings_ahead.take(url, run_id, run["check_run_id"])
    if ahead is not None:  # written beside the snapshot: placed at once, nothing left over
        ahead.place(gpkg)
    with dbmod.connect(url) as conn:
        places = _read_places(conn, run, url, ahead.frame if ahead else None)
    title = f"Rule M nightly reconciliation: {run['plan_name']}"
    raster = None
    if places["parcels"] is None:  # a large plan area: the kept raster, redrawn where it changed
        from rulem_db.reports import tiles

        with dbmod.connect(url) as conn:
            raster = tiles.parcel_raster(conn, reports, run["plan_code"], run["plan_area_id"],
                                         run_id, _frame_box(conn, run["plan_area_id"],
                                                            places["outline"]))
    # the GeoPackage, unless written ahead, beside the map: GDAL writes it mostly outside
    # Python's lock (a state's 240,000 findings: 1.35-1.54 s for both where one after the
    # other took 1.44-1.90 s)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="rulem-report-gpkg") as beside:
        gpkg_written = None if ahead else beside.submit(
            contextvars.copy_context().run, write_findings_gpkg, gpkg, places["finding_geo"])
        balance_png = folder / "balance_map.png"
        balance_png.write_bytes(balance_map(
            places["parcels"], places["finding_geo"], places["outline"],
            f"Parcel balance and findings, run {run_id}", raster=raster))
        if gpkg_written is not None:
            gpkg_written.result()
    data = _Data(run=run, **places, **lists.result())
    changed_ids = _changed_ids(lists.result())
    changes_png = None
    if changed_ids:
        changed = None
        if raster is not None:
            with dbmod.connect(url) as conn:
                changed = _parcels_by_id(conn, changed_ids)
        changes_png = folder / "changes_map.png"
        since = (f"since run {run['previous_run_id']}" if run["previous_run_id"]
                 else "(first run: every parcel with a balance)")
        changes_png.write_bytes(balance_map(
            data.parcels, None, data.outline, f"Parcels whose balance changed {since}",
            highlight=changed_ids, raster=raster, highlighted=changed))
    parcel_csv, permit_csv = tables.result()
    html_path = folder / "index.html"
    html_path.write_text(_html(data, status, message, title, balance_png, changes_png),
                         encoding="utf-8")
    write_index(url, reports, {run_id: (status, message)})
    from rulem_db.reports.map import forget

    forget()
    return RunReport(folder, html_path, parcel_csv, permit_csv, gpkg, balance_png,
                     changes_png)


def _same_report(conn: sa.Connection, run_id: int, status: str) -> Path | None:
    """The folder of the full report that shows what this run saw, when nothing changed and
    that report is still there; None when this run needs its own."""
    row = conn.execute(sa.text(
        "SELECT r.changed, r.previous_run_id, s.report_path FROM ops.run r "
        "JOIN ops.run s ON s.run_id = greatest(r.parcels_seen_in_run_id, "
        "r.findings_seen_in_run_id) "
        "WHERE r.run_id = :r AND r.parcels_seen_in_run_id IS NOT NULL "
        "AND r.findings_seen_in_run_id IS NOT NULL"), {"r": run_id}).first()
    if status == "failed":
        return None
    if row is None:  # a check run of its own: the same findings as a full report's?
        return _same_as_earlier_report(conn, run_id)
    if row.changed or not row.report_path:
        return None
    folder = Path(row.report_path)
    if _full_report(folder):
        return folder
    # that run's report is a short page itself (a --full night that found what the night
    # before found): the full report it links shows what this run saw too. Without this,
    # every quiet night after such a night drew every map again.
    paths = conn.execute(sa.text(
        _UNCHANGED_BEFORE + "SELECT b.report_path FROM back b ORDER BY b.depth"),
        {"r": run_id}).scalars()
    return next((Path(p) for p in paths if p and _full_report(Path(p))), None)


def _full_report(folder: Path) -> bool:
    return (folder / "index.html").is_file() and (folder / "balance_map.png").is_file()


# A check run's findings as a report shows them (everything but their ids).
_FINDING_ROWS = ("SELECT paragraph, check_code, severity, permit_id, parcel_id, feature_id, "
                 "measured_value, limit_value, unit, message, ST_AsEWKB(geom) "
                 "FROM checks.finding WHERE run_id = {}")


# The runs before a run, newest first, back to the latest that changed something (that one
# included) when the run changed nothing itself: each of them saw what the one before it saw.
_UNCHANGED_BEFORE = (
    "WITH RECURSIVE back AS ("
    "  SELECT p.*, 1 AS depth FROM ops.run r JOIN ops.run p ON p.run_id = r.previous_run_id"
    "  WHERE r.run_id = :r AND NOT r.changed"
    "  UNION ALL"
    "  SELECT p.*, b.depth + 1 FROM back b JOIN ops.run p ON p.run_id = b.previous_run_id"
    "  WHERE NOT b.changed AND b.depth < 100) ")


def _same_as_earlier_report(conn: sa.Connection, run_id: int) -> Path | None:
    """The folder of the latest full report before this run when this run changed nothing and
    shows exactly what it shows, though the run made a check run of its own (`--full`, or
    permits checked again whose results came out the same): the same balance fingerprint
    (ops.balance_state: the same pub.parcel_balance and ledger), no layer written since that
    report's run began, and findings equal row for row (places and messages included). Drawing
    100,000 parcels again for the same picture would make such a night as long as a busy one.
    """
    runs = conn.execute(sa.text(
        _UNCHANGED_BEFORE + "SELECT b.run_id, b.report_path, b.check_run_id, b.started_at, "
        "       b.balance_state = r.balance_state AS same_balances, r.check_run_id AS own_checks "
        "FROM back b CROSS JOIN ops.run r WHERE r.run_id = :r ORDER BY b.depth"),
        {"r": run_id}).all()
    target = next((t for t in runs if t.report_path and _full_report(Path(t.report_path))),
                  None)
    if target is None or not target.same_balances or target.check_run_id is None \
            or target.own_checks is None:
        return None
    a, b = int(target.own_checks), int(target.check_run_id)
    same = conn.execute(sa.text(
        "SELECT NOT EXISTS (SELECT 1 FROM ops.layer_write w WHERE w.written_at >= :t) "
        f"AND NOT EXISTS (({_FINDING_ROWS.format(a)} EXCEPT ALL {_FINDING_ROWS.format(b)}) "
        f"UNION ALL ({_FINDING_ROWS.format(b)} EXCEPT ALL {_FINDING_ROWS.format(a)}))"),
        {"t": target.started_at}).scalar()
    return Path(target.report_path) if same else None


def _write_same_report(conn: sa.Connection, run_id: int, reports: Path, status: str,
                       message: str, same: Path) -> RunReport:
    """The short page of a run that changed nothing (see write_run_report)."""
    run = _read_run(conn, run_id)
    previous = _rows(conn, "SELECT * FROM ops.run WHERE run_id = :r",
                     r=run["previous_run_id"])[0]
    files = _rows(conn, "SELECT * FROM ops.run_file WHERE run_id = :r ORDER BY run_file_id",
                  r=run_id)
    data = _Data(run=run, previous=previous, files=files, finding_changes=[],
                 finding_review=[], parcel_changes=[], findings=[], permits=[], parcels=None,
                 finding_geo=None, outline=None)
    folder = folder_for(reports, run)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        link = Path("..") / same.relative_to(Path(reports).resolve())
    except ValueError:  # the full report is in another reports folder
        link = same
    day = _local(run["started_at"]).date().isoformat()
    body = "".join([
        _headline(data, status),
        '<div class="grid"><div>', "<h2>Run</h2>", _run_facts(data, status, message),
        "</div><div>", "<h2>Plan totals (acres)</h2>", _plan_table(data), "</div></div>",
        "<h2>Balances, findings and maps</h2>",
        f'<p>The same as in <a href="{h.esc(str(link))}/index.html">the report of '
        f"{h.esc(same.name)}</a>: its balance map, balance and finding tables, "
        f'<a href="{h.esc(str(link))}/parcel_balance.csv">parcel_balance.csv</a> and '
        f'<a href="{h.esc(str(link))}/findings.gpkg">findings.gpkg</a> are what this run '
        "saw.</p>",
        "<h2>Inbox</h2>", _files(data),
        f'<p class="note">In the database: <code>SELECT * FROM pub.reconciliation_run WHERE '
        f"run_id = {run_id}</code>.</p>",
    ])
    html_path = folder / "index.html"
    html_path.write_text(h.page(f"Rule M nightly reconciliation: {run['plan_name']}",
                                f"Run {run_id} of {day}, plan area {run['plan_code']}", body),
                         encoding="utf-8")
    write_index_with(conn, Path(reports), {run_id: (status, message)})
    permits = same / "permit_balance.csv"
    return RunReport(folder, html_path, same / "parcel_balance.csv",
                     permits if permits.is_file() else None, same / "findings.gpkg",
                     same / "balance_map.png", None)


def write_index(url: str, reports: Path, pending: dict[int, tuple[str, str]]) -> Path:
    """`<reports>/index.html`: every run's report in the folder, newest first, so the
    morning's page is one click from the folder staff bookmark."""
    with dbmod.connect(url) as conn:
        return write_index_with(conn, reports, pending)


def write_index_with(conn: sa.Connection, reports: Path,
                     pending: dict[int, tuple[str, str]]) -> Path:
    """write_index on an open connection."""
    folders = {}
    for path in Path(reports).glob("*-run-*/index.html"):
        try:
            folders[int(path.parent.name.rsplit("-run-", 1)[1])] = path.parent.name
        except ValueError:
            continue
    rows = {r.run_id: r for r in conn.execute(sa.text(
        "SELECT run_id, plan_area, status, started_at, changed, message "
        "FROM pub.reconciliation_run WHERE run_id = ANY(:ids)"),
        {"ids": list(folders)})}
    lines = []
    for run_id in sorted(folders, reverse=True):
        r = rows.get(run_id)
        status, message = pending.get(run_id, (r.status, r.message) if r else ("", ""))
        link = f'<a href="{h.esc(folders[run_id])}/index.html">run {run_id}</a>'
        lines.append(f"<tr><td>{link}</td><td>{h.esc(h.fmt(_local(r.started_at)) if r else '')}"
                     f"</td><td>{h.esc(r.plan_area if r else '')}</td><td>{h.status(status)}"
                     f"</td><td>{h.esc(message)}</td></tr>")
    body = ("<table><thead><tr><th>report</th><th>started</th><th>plan area</th>"
            "<th>status</th><th>outcome</th></tr></thead><tbody>" + "".join(lines)
            + "</tbody></table>")
    index = Path(reports) / "index.html"
    index.write_text(h.page("Rule M nightly reconciliation reports", "Newest first", body),
                     encoding="utf-8")
    return index


def _frame_box(conn: sa.Connection, plan_area_id: int,
               outline: gpd.GeoDataFrame | None) -> tuple[float, float, float, float]:
    """The ground box a large plan area's raster covers: its outline's, else its parcels'."""
    if outline is not None and len(outline):
        return tuple(float(v) for v in outline.total_bounds)  # type: ignore[return-value]
    row = conn.execute(sa.text(
        "SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM (SELECT ST_Extent(geom) "
        "AS e FROM core.parcel WHERE valid_to IS NULL AND plan_area_id = :p) x"),
        {"p": plan_area_id}).one()
    return tuple(float(v) for v in row)  # type: ignore[return-value]


def _parcels_by_id(conn: sa.Connection, ids: set[int]) -> gpd.GeoDataFrame:
    """Some current parcels by id (the changed ones, drawn over the raster)."""
    return _read_geo(conn, "SELECT parcel_id, ST_AsEWKB(geom) AS geom FROM core.parcel "
                     "WHERE valid_to IS NULL AND parcel_id = ANY (:ids) ORDER BY parcel_id",
                     {"ids": sorted(ids)})


# parcel_balance.csv as pandas wrote it from the parcel frame (floats in their shortest form,
# 0 as 0.0; text quoted only where it must be): the same bytes, formatted by the server and
# streamed by COPY, without reading every parcel's polygon into Python. Zero first: most of a
# plan area's parcels have no balance, and its constant halved a state's file (4.7 to 2.4 s).
def _csv_number(column: str) -> str:
    return (f"CASE WHEN {column} = 0 THEN '0.0' WHEN {column} IS NULL THEN NULL "
            f"WHEN {column} = trunc({column}) AND abs({column}) < 1e15 "
            f"THEN trunc({column})::bigint::text || '.0' "
            f"ELSE ({column})::float8::text END AS {column}")


def write_parcel_csv(conn: sa.Connection, path: Path, plan_area_id: int,
                     changed: set[int]) -> Path:
    """Every parcel with its balance (PARCEL_COLUMNS, by PIN) and whether it changed since
    the previous run. Why COPY: reading a state's 1,000,000 parcels into Python to write them
    out again took longer than the server takes to write the file."""
    numbers = [c for c in PARCEL_COLUMNS if c.endswith("_acres")]
    columns = ", ".join(
        _csv_number(c) if c in numbers else c for c in PARCEL_COLUMNS)
    query = (f"SELECT {columns}, CASE WHEN parcel_id IN (SELECT unnest(%(ids)s::bigint[])) "
             "THEN 'true' ELSE 'false' END AS changed_since_previous_run "
             "FROM pub.parcel_balance WHERE plan_area_id = %(p)s ORDER BY pin")
    return _copy_csv(conn, path, query, {"ids": sorted(changed), "p": plan_area_id})


def _copy_csv(conn: sa.Connection, path: Path, query: str, params: dict[str, Any]) -> Path:
    """A query's rows written to a CSV file by the server (COPY), parameters bound by the
    driver."""
    raw = conn.connection.dbapi_connection
    with raw.cursor() as cur:
        sql = cur.mogrify(query, params).decode()
        with open(path, "wb") as out:
            cur.copy_expert(f"COPY ({sql}) TO STDOUT WITH (FORMAT csv, HEADER)", out)
    return path


def write_permit_csv(conn: sa.Connection, path: Path, plan_area_id: int) -> Path:
    """Every permit with its balance (PERMIT_COLUMNS, by permit number): the page shows the
    first MAX_ROWS."""
    columns = ", ".join(_csv_number(c) if c.endswith("_acres") else c
                        for c in PERMIT_COLUMNS)
    query = (f"SELECT {columns} FROM pub.permit_balance WHERE plan_area_id = %(p)s "
             "ORDER BY permit_no")
    return _copy_csv(conn, path, query, {"p": plan_area_id})


def _write_parcel_csv(path: Path, parcels: gpd.GeoDataFrame, changed: set[int]) -> Path:
    """The same file written by pandas from the parcel frame (what write_parcel_csv must
    equal byte for byte: tests/publish/test_report_tiles.py)."""
    frame = parcels[list(PARCEL_COLUMNS)].copy()
    frame["changed_since_previous_run"] = frame["parcel_id"].astype("int64").isin(
        changed).map({True: "true", False: "false"})
    frame.to_csv(path, index=False, lineterminator="\n", na_rep="", encoding="utf-8")
    return path


# --- the page --------------------------------------------------------------------------------
def _headline(data: _Data, status: str) -> str:
    run = data.run
    if status == "failed":
        return f'<div class="headline failed">The run failed: {h.esc(run["message"])}</div>'
    prev = data.previous
    since = (f"run {prev['run_id']} ({h.fmt(_local(prev['started_at']))})" if prev
             else "the start (this is the first run)")
    if not run["changed"]:
        return (f'<div class="headline same">Nothing changed since {h.esc(since)}: no file '
                'loaded, nothing posted to the ledger, the same findings and balances.</div>')
    parts = [
        f"{run['files_loaded'] or 0} file(s) loaded",
        f"{run['files_quarantined'] or 0} quarantined",
    ] if run["inbox"] else []
    between = (run["changes"] or {}).get("entries_posted_between") or 0
    parts += [
        f"{run['entries_posted'] or 0} ledger entries posted"
        + (f" (and {between} by other recomputes in between: rulem-db watch, rulem-db "
           "recompute)" if between else ""),
    ]
    if data.review_counts:  # by the findings' identities (sql/287)
        counts = data.review_counts
        parts += [f"{counts.get('new', 0)} new finding(s)",
                  f"{counts.get('reopened', 0)} re-opened",
                  f"{counts.get('resolved', 0)} resolved"]
    else:
        parts += [f"{run['findings_new'] or 0} new finding(s)",
                  f"{run['findings_resolved'] or 0} resolved"]
    moved = (run["changes"] or {}).get("findings_changed") or 0
    if moved:
        parts.append(f"{moved} with a changed measure")
    parts += [
        f"{run['parcels_changed'] or 0} parcel(s) whose balance changed",
    ]
    return (f'<div class="headline changed">Since {h.esc(since)}: '
            f'{h.esc(", ".join(parts))}.</div>')


def _run_facts(data: _Data, status: str, message: str) -> str:
    run = data.run
    finished = _local(dt.datetime.now(dt.UTC))
    started = _local(run["started_at"])
    return h.key_values([
        ("status", status),
        ("run", run["run_id"]),
        ("plan area", f"{run['plan_code']} ({run['plan_name']})"),
        ("started", started),
        ("report written", finished),
        ("started via", run["started_via"]),
        ("host, pid", f"{run['host']}, {run['pid']}"),
        ("compared with run", run["previous_run_id"] or "none (first run)"),
        ("ledger recompute run", run["ledger_run_id"]),
        ("rule check run", run["check_run_id"]),
        ("outcome", message),
    ])


def _plan_table(data: _Data) -> str:
    changes = data.run["changes"] or {}
    before, after = changes.get("plan_before") or {}, changes.get("plan_after") or {}
    rows = []
    for key, label in PLAN_FIGURES:
        b, a = before.get(key), after.get(key)
        diff = None
        if isinstance(a, int | float) and isinstance(b, int | float) and key != "status":
            diff = a - b
        rows.append((label, b, a, diff))
    return h.table(("figure", "previous run", "this run", "change"), rows,
                   status_columns=())


def _measure(value: Any, unit: str | None) -> str:
    """A measured value or limit to the precision its unit is read in."""
    if value is None:
        return ""
    return f"{value:,.{UNIT_PLACES.get(unit or '', 4)}f}"


# A finding without a permit belongs to a District project (7(c)) or to the plan area as a whole.
NO_PERMIT = "(no permit)"


def _finding_rows(rows: list[dict[str, Any]]) -> list[tuple]:
    return [(r["permit_no"] or NO_PERMIT, r["paragraph"], r["check_code"], r["severity"],
             r["pin"],
             _measure(r["measured_value"], r["unit"]), _measure(r["limit_value"], r["unit"]),
             r["unit"], r["message"])
            for r in rows[:MAX_ROWS]]


FINDING_HEAD = ("permit", "paragraph", "check", "severity", "parcel", "measured", "limit",
                "unit", "message")


def _findings_table(rows: list[dict[str, Any]], empty: str = "none") -> str:
    return h.table(FINDING_HEAD, _finding_rows(rows), status_columns=("severity",),
                   numeric_columns=("measured", "limit"), empty=empty)


# The review sections of a run's findings (ops.run_finding_review_first), in the page's order.
REVIEW_SECTIONS = (("new", "New findings"), ("reopened", "Re-opened findings"),
                   ("resolved", "Resolved findings"),
                   ("still_open", "Still open (open or acknowledged)"),
                   ("waived", "Waived (still found)"))
REVIEW_HEAD = ("ID", "permit", "paragraph", "check", "severity", "parcel", "measured",
               "limit", "unit", "message", "review state", "waiver reference", "note")


def _review_sections(data: _Data) -> dict[str, list[dict[str, Any]]]:
    """The run's findings by section (the first MAX_ROWS of each), every section present (an
    empty one still shows its heading: "none" is news too)."""
    out: dict[str, list[dict[str, Any]]] = {key: [] for key, _ in REVIEW_SECTIONS}
    for r in data.finding_review:
        out.setdefault(r["section"], []).append(r)
    return out


def _review_table(rows: list[dict[str, Any]]) -> str:
    """A section's findings with their ID (what `rulem-db finding` takes) and review state."""
    body = [(r["finding_case_id"], r["permit_no"] or NO_PERMIT, r["paragraph"],
             r["check_code"], r["severity"], r["pin"],
             _measure(r["measured_value"], r["unit"]), _measure(r["limit_value"], r["unit"]),
             r["unit"], r["message"], r["review_state"], r["waiver_reference"],
             r["review_note"]) for r in rows]
    return h.table(REVIEW_HEAD, body, status_columns=("severity",),
                   numeric_columns=("measured", "limit"), empty="none")


def _changes(data: _Data) -> str:
    moved = [r for r in data.finding_changes if r["change"] == "changed"]
    parcels = [(r["pin"], r["status_before"], r["status_after"], r["balance_before"],
                r["balance_after"], r["balance_change"]) for r in data.parcel_changes]
    sections = _review_sections(data)
    out = []
    for key, title in REVIEW_SECTIONS:
        total = data.review_counts.get(key, 0)
        out += [f"<h3>{h.esc(title)} ({total:,})</h3>", _review_table(sections[key]),
                _first(len(sections[key]), total, "findings",
                       "pub.finding_review_history" if key == "resolved"
                       else "findings.gpkg and pub.finding")]
    out += [f"<h3>Findings whose measure changed ({len(moved)})</h3>",
            _findings_table(moved),
            f"<h3>Parcels whose balance changed ({len(parcels)})</h3>",
            h.table(("parcel", "status before", "status after", "balance before (ac)",
                     "balance after (ac)", "change (ac)"), parcels[:MAX_ROWS],
                    status_columns=("status before", "status after"))]
    return "".join(out)


def _files(data: _Data) -> str:
    rows = [(f["file_name"], f["layer"], f["outcome"], f["batch_id"], f["moved_to"],
             f["message"]) for f in data.files]
    if not data.run["inbox"]:
        return '<p class="note">No inbox was read in this run.</p>'
    note = (f'<p class="note">Inbox: <code>{h.esc(data.run["inbox"])}</code>. Quarantined '
            "files have their error report beside them (<code>&lt;file&gt;.error.txt</code>)."
            "</p>")
    return note + h.table(("file", "layer", "outcome", "batch", "now at", "message"), rows,
                          status_columns=(), empty="The inbox was empty.")


def _first(shown: int, total: int, what: str, where: str) -> str:
    """The note under a list cut at MAX_ROWS."""
    if total <= shown:
        return ""
    return f'<p class="note">First {shown:,} of {total:,} {what}; all are in {where}.</p>'


def _findings_now(data: _Data) -> str:
    by_check = h.table(("paragraph", "check", "severity", "findings", "permits"),
                       data.finding_checks, status_columns=("severity",),
                       empty="No findings.")
    by_permit = h.table(("permit", "paragraph", "check", "severity", "findings"),
                        data.finding_permits, status_columns=("severity",),
                        empty="No findings.")
    gpkg = '<a href="findings.gpkg">findings.gpkg</a>'
    return ("<h3>By check</h3>" + by_check + "<h3>By permit and check</h3>" + by_permit
            + _first(len(data.finding_permits), data.finding_permit_rows, "rows",
                     f"{gpkg} and pub.finding")
            + f"<h3>Every finding ({data.finding_count:,})</h3>"
            + _findings_table(data.findings, empty="No findings.")
            + _first(len(data.findings), data.finding_count, "findings", gpkg))


def _balances(data: _Data) -> str:
    permits = [tuple(p.values()) for p in data.permits]
    none = data.parcel_count - data.active_count
    return (
        f"<h3>Permits ({data.permit_count:,})</h3>"
        + h.table(("permit", "permit status", "impact", "required", "credit", "transfer in",
                   "transfer out", "proposed", "balance", "status"), permits,
                  status_columns=("status",), empty="No permits.")
        + _first(len(permits), data.permit_count, "permits",
                 '<a href="permit_balance.csv">permit_balance.csv</a>')
        + f"<h3>Parcels with impact or credit ({data.active_count}; {none} others have none)"
          "</h3>"
        + h.table(("parcel", "impact", "required", "credit", "credit hosted", "balance",
                   "status"), data.active, empty="No parcel has impact or credit."))


def _html(data: _Data, status: str, message: str, title: str, balance_png: Path,
          changes_png: Path | None) -> str:
    run = data.run
    day = _local(run["started_at"]).date().isoformat()
    body = [
        _headline(data, status),
        '<div class="grid"><div>', "<h2>Run</h2>", _run_facts(data, status, message),
        "</div><div>", "<h2>Plan totals (acres)</h2>", _plan_table(data), "</div></div>",
        "<h2>Balance map</h2>",
        h.image(balance_png.read_bytes(), "parcel balance map with findings"),
        '<p class="note">Parcels by balance: deficit red, balanced grey, surplus green, no '
        "impact or credit white. Findings drawn on top by severity; the dashed line is the "
        "plan area.</p>",
        "<h2>What changed since the previous run</h2>", _changes(data),
    ]
    if changes_png is not None:
        body.append(h.image(changes_png.read_bytes(), "parcels whose balance changed"))
    body += [
        "<h2>Inbox</h2>", _files(data),
        "<h2>Balances now</h2>", _balances(data),
        "<h2>Findings now</h2>", _findings_now(data),
        "<h2>Files of this report</h2>",
        '<p class="note">Beside this page: <a href="parcel_balance.csv">parcel_balance.csv'
        '</a> (every parcel), <a href="permit_balance.csv">permit_balance.csv</a> (every '
        'permit), <a href="findings.gpkg">findings.gpkg</a> (findings with '
        'geometry, for QGIS), <a href="balance_map.png">balance_map.png</a>. In the database: '
        f"<code>SELECT * FROM pub.reconciliation_run WHERE run_id = {run['run_id']}</code>."
        "</p>",
    ]
    return h.page(title, f"Run {run['run_id']} of {day}, plan area {run['plan_code']}",
                  "".join(body))
