"""An incremental night gives what a full night gives on the same state (docs/checks.md,
"Incremental runs").

The demo plan area is reconciled once, then an impact and a structure are moved; the database is
copied, and one copy runs the nightly as shipped (only what changed: the ledger's queue, the
checks of the permits whose inputs changed, the others carried over) while the other runs it
with --full (every owner recomputed, every permit checked). Both copies have the same history,
so everything the two runs produce must be the same: the findings and outcomes of their check
runs, the findings each run saw, the report's parcel_balance.csv byte for byte, and every layer
of its findings.gpkg.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyogrio
import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from flows import nightly

# What is compared of a check run's rows: everything but the ids the runs gave them.
FINDINGS = ("SELECT f.paragraph, f.check_code, f.severity, f.permit_id, f.parcel_id, "
            "f.feature_id, f.measured_value, f.limit_value, f.unit, f.message, "
            "encode(ST_AsEWKB(f.geom), 'hex') AS geom FROM checks.finding f "
            "WHERE f.run_id = :c ORDER BY 1, 2, 4, 5, 6, 7, 10, 11")
OUTCOMES = ("SELECT o.permit_id, o.paragraph, o.check_code, o.outcome, o.measured_value, "
            "o.limit_value, o.unit, o.evaluated_count, o.finding_count, o.message "
            "FROM checks.run_outcome(:c) o ORDER BY 1, 2, 3")
SEEN = ("SELECT finding_key, paragraph, check_code, severity, permit_no, pin, measured_value, "
        "limit_value, unit, message FROM ops.run_finding "
        "WHERE run_id = ops.findings_seen_in(:r) ORDER BY finding_key")


def _quiet(admin_url: URL, url: str) -> None:
    """End every session of a database (pooled ones of the flows), so it can be copied."""
    eng = sa.create_engine(admin_url.set(database="postgres"), poolclass=NullPool,
                           isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            conn.execute(sa.text(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = :d AND pid <> pg_backend_pid()"),
                {"d": sa.engine.make_url(url).database})
    finally:
        eng.dispose()


def _change(url: str) -> dict[str, int]:
    """Move one impact a little (a new version, as an edit makes it): 24-007's drainage, which
    nothing else of the permit covers and no later permit files again (moving 24-001's W-010
    fill would hand the strip it leaves to 25-001, which files the same fill, on the same
    parcel; 24-002's grading covers all of W-011: no parcel balance would move); and move a
    structure of 24-008 that stands in a wetland, so a finding's measure changes."""
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.begin() as conn:
            impact = conn.execute(sa.text(
                "UPDATE core.impact SET geom = ST_Multi(ST_Translate(geom, 2.0, 1.0)) "
                "WHERE impact_id = (SELECT min(i.impact_id) FROM core.impact i "
                "JOIN core.permit p ON p.permit_id = i.permit_id AND p.valid_to IS NULL "
                "WHERE i.valid_to IS NULL AND p.permit_no = '24-007') "
                "RETURNING permit_id")).scalar_one()
            # and a structure of 24-008 in a wetland (7(g)): its finding's measure changes
            conn.execute(sa.text(
                "UPDATE core.structure SET geom = ST_Translate(geom, 0.0, 20.0) "
                "WHERE valid_to IS NULL AND structure_id = (SELECT f.feature_id "
                "FROM core.feature f WHERE f.layer = 'structure' "
                "AND f.feature_key = '24-008/ST-003')"))
    finally:
        eng.dispose()
    return {"permit": impact}


@pytest.fixture(scope="module")
def nights(admin_url: URL, demo_template: DemoTemplate,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple]]:
    """{'incremental': (url, summary), 'full': (url, summary)} on the same state."""
    base = tmp_path_factory.mktemp("nightly_incremental")
    with cloned(admin_url, demo_template.name, prefix="rulem_ni") as url:
        nightly.reconcile_now(url, reports=base / "first", use_prefect=False)
        _change(url)
        _quiet(admin_url, url)
        template = sa.engine.make_url(url).database
        with cloned(admin_url, template, prefix="rulem_ni") as url_full:
            inc = nightly.reconcile_now(url, reports=base / "incremental", use_prefect=False)
            full = nightly.reconcile_now(url_full, reports=base / "full", use_prefect=False,
                                         full=True)
            yield {"incremental": (url, inc), "full": (url_full, full)}


def _rows(url: str, sql: str, **params: object) -> list[tuple]:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(sql), params)]
    finally:
        eng.dispose()


def _run(url: str, run_id: int) -> sa.Row:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return conn.execute(sa.text(
                "SELECT o.check_run_id, c.base_run_id, c.rechecked_count, c.permit_count, "
                "c.rechecked_why "
                "FROM ops.run o JOIN checks.run c ON c.run_id = o.check_run_id "
                "WHERE o.run_id = :r"), {"r": run_id}).one()
    finally:
        eng.dispose()


def test_the_incremental_night_rechecked_only_some_permits(nights):
    url, summary = nights["incremental"]
    run = _run(url, summary.run_id)
    # carried over from the first night's check run
    assert run.base_run_id is not None, run.rechecked_why
    assert 0 < run.rechecked_count < run.permit_count
    full_url, full = nights["full"]
    assert _run(full_url, full.run_id).base_run_id is None  # every permit evaluated


def test_findings_and_outcomes_equal_a_full_nights(nights):
    (url, inc), (full_url, full) = nights["incremental"], nights["full"]
    a, b = _run(url, inc.run_id), _run(full_url, full.run_id)
    findings = _rows(url, FINDINGS, c=a.check_run_id)
    assert findings  # the demo has findings: an empty comparison would prove nothing
    assert findings == _rows(full_url, FINDINGS, c=b.check_run_id)
    assert _rows(url, OUTCOMES, c=a.check_run_id) == _rows(full_url, OUTCOMES,
                                                              c=b.check_run_id)
    assert _rows(url, SEEN, r=inc.run_id) == _rows(full_url, SEEN, r=full.run_id)
    assert (inc.findings, inc.findings_new, inc.findings_resolved, inc.parcels_changed) == (
        full.findings, full.findings_new, full.findings_resolved, full.parcels_changed)


def test_the_snapshot_of_carried_findings_is_their_sources_rows(nights):
    """ops.snapshot_run copies a carried-over finding's row from the previous run's snapshot
    (sql/300) and keys only the findings evaluated again: the rows, with the check run's own
    finding ids, are what keying every finding of the run gives (ops.run_finding_rows)."""
    url, inc = nights["incremental"]
    run = _run(url, inc.run_id)
    assert _rows(url, "SELECT count(*) FROM checks.finding WHERE run_id = :c "
                      "AND carried_from_id IS NOT NULL", c=run.check_run_id)[0][0] > 0
    columns = ("finding_key, finding_id, paragraph, check_code, severity, permit_no, pin, "
               "measured_value, limit_value, unit, message")
    kept = _rows(url, f"SELECT {columns} FROM ops.run_finding WHERE run_id = :r "
                      "ORDER BY finding_key", r=inc.run_id)
    keyed = _rows(url, f"SELECT {columns} FROM ops.run_finding_rows(:c, (SELECT plan_area_id "
                       "FROM ops.run WHERE run_id = :r), false) ORDER BY finding_key",
                  c=run.check_run_id, r=inc.run_id)
    assert kept and kept == keyed


def test_the_finding_changes_compare_only_permits_evaluated_again(nights):
    """ops.run_finding_change leaves out the permits whose snapshot rows are copies of the
    previous snapshot's (carried over, sql/300): what it gives is what comparing every finding
    gives, the --full night's comparison on the same history, in the same order."""
    (url, inc), (full_url, full) = nights["incremental"], nights["full"]
    check_run = _run(url, inc.run_id).check_run_id
    carried = _rows(url, "SELECT count(*) FROM checks.run_permit "
                         "WHERE run_id = :c AND outcome_run_id <> :c", c=check_run)[0][0]
    # permits were left out of the comparison: carried over from the previous snapshot's run
    assert carried > 0
    assert _rows(url, "SELECT c.base_run_id = (SELECT s.check_run_id FROM ops.run s "
                      "WHERE s.run_id = ops.findings_seen_in(o.previous_run_id)) "
                      "FROM ops.run o JOIN checks.run c ON c.run_id = o.check_run_id "
                      "WHERE o.run_id = :r", r=inc.run_id) == [(True,)]
    changes = _rows(url, "SELECT * FROM ops.run_finding_change(:r)", r=inc.run_id)
    assert changes  # the moved impact changed what its permit's checks found
    assert changes == _rows(full_url, "SELECT * FROM ops.run_finding_change(:r)",
                            r=full.run_id)


def test_the_pages_parcels_with_a_balance_are_what_the_run_saw(nights):
    """The page lists the parcels with impact or credit from the run's snapshot
    (ops.run_parcel_balance): with nothing changed since, what pub.parcel_balance has now, in
    the same order, and their count in the heading."""
    from rulem_db.reports import run as report_run

    url, inc = nights["incremental"]
    now = _rows(url, "SELECT pin, impact_acres, required_acres, credit_acres, "
                     "credit_hosted_acres, balance_acres, status FROM pub.parcel_balance "
                     "WHERE status <> 'none' ORDER BY pin")
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            lists = report_run._read_lists(conn, report_run._read_run(conn, inc.run_id))
    finally:
        eng.dispose()
    assert now and lists["active"] == now[:report_run.MAX_ROWS]
    assert lists["active_count"] == len(now)
    page = Path(inc.report_path).read_text(encoding="utf-8")
    assert f"Parcels with impact or credit ({len(now)};" in page


def test_report_files_equal_a_full_nights(nights):
    inc, full = nights["incremental"][1], nights["full"][1]
    a, b = Path(inc.report_path).parent, Path(full.report_path).parent
    csv = (a / "parcel_balance.csv").read_bytes()
    assert csv.count(b"\n") > 1 and b",true" in csv  # parcels, some changed since run 1
    assert csv == (b / "parcel_balance.csv").read_bytes()
    layers = [tuple(x) for x in pyogrio.list_layers(a / "findings.gpkg")]
    assert layers == [tuple(x) for x in pyogrio.list_layers(b / "findings.gpkg")]
    for name, _ in layers:
        x = pyogrio.read_dataframe(a / "findings.gpkg", layer=name)
        y = pyogrio.read_dataframe(b / "findings.gpkg", layer=name)
        # finding_id and occurrence_id are each database's own sequences; everything else
        # must match row for row
        ids = ["finding_id", "occurrence_id"]
        x, y = x.drop(columns=ids), y.drop(columns=ids)
        assert len(x) and x.equals(y), name


def test_parcels_read_ahead_are_used_only_when_the_snapshot_saw_them(nights):
    """The report's parcel layer read while the checks ran (rulem_db.reports.prefetch) is the
    one it would read itself, and is refused when the balances moved after it was read."""
    from rulem_db.reports import prefetch
    from rulem_db.reports.run import read_parcel_frame

    url, summary = nights["incremental"]
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            plan, state = conn.execute(sa.text(
                "SELECT plan_area_id, balance_state FROM ops.run WHERE run_id = :r"),
                {"r": summary.run_id}).one()
            own = read_parcel_frame(conn, plan)
    finally:
        eng.dispose()
    ahead = prefetch.read_parcels(url, plan)
    assert ahead.state == state and len(own) and ahead.frame.equals(own)
    prefetch.start(url, -1, plan)
    assert prefetch.take(url, -1, state).equals(own)
    prefetch.start(url, -2, plan)
    assert prefetch.take(url, -2, {**state, "entries": -1}) is None  # moved since: read again
    assert prefetch.take(url, -3, state) is None  # none started


def test_a_full_night_that_changed_nothing_links_the_last_full_report(nights, tmp_path):
    """--full makes a check run of its own; when its findings equal the last full report's
    row for row (and nothing was written since), the run's report is the short page."""
    url, before = nights["full"]
    again = nightly.reconcile_now(url, reports=Path(before.report_path).parents[1],
                                  use_prefect=False, full=True)
    assert not again.changed and again.run_id == before.run_id + 1
    folder = Path(again.report_path).parent
    assert folder != Path(before.report_path).parent
    assert not (folder / "balance_map.png").exists()  # no map drawn again
    assert f"{Path(before.report_path).parent.name}/index.html" in (
        folder / "index.html").read_text(encoding="utf-8")
    # the quiet nights after it see what the --full night saw (its snapshot of findings),
    # whose report is that short page: they link the full report behind it too, and do not
    # draw every map again night after night
    for n in (2, 3):
        quiet = nightly.reconcile_now(url, reports=Path(before.report_path).parents[1],
                                      use_prefect=False)
        assert not quiet.changed and quiet.run_id == before.run_id + n
        page = Path(quiet.report_path).parent
        assert not (page / "balance_map.png").exists()
        assert f"{Path(before.report_path).parent.name}/index.html" in (
            page / "index.html").read_text(encoding="utf-8")


def test_each_run_counts_the_findings_its_snapshot_holds(nights, tmp_path):
    """ops.snapshot_run records how many findings a run saw as it writes them (copied and
    keyed rows, or the previous run's count when its check run was the previous run's), which
    the summary and the report's review sections read instead of counting again: the count of
    the rows of the run's snapshot, for every run (keyed, incremental, --full, and a quiet
    night after the incremental one, which refers to its snapshot)."""
    url, _ = nights["incremental"]
    quiet = nightly.reconcile_now(url, reports=tmp_path / "quiet", use_prefect=False)
    assert not quiet.changed
    assert _rows(url, "SELECT findings_seen_in_run_id IS NOT NULL FROM ops.run "
                      "WHERE run_id = :r", r=quiet.run_id) == [(True,)]
    for url, _ in nights.values():
        runs = _rows(url, "SELECT r.run_id, r.finding_count, (SELECT count(*) FROM "
                          "ops.run_finding f WHERE f.run_id = ops.findings_seen_in(r.run_id)) "
                          "FROM ops.run r WHERE r.check_run_id IS NOT NULL ORDER BY r.run_id")
        assert len(runs) >= 2
        assert all(count == rows and count > 0 for _, count, rows in runs), runs
