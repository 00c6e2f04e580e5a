"""A check run on several sessions (`workers`, rulem_db.checks.parallel): the permits are split
over worker sessions that evaluate on the run's own snapshot; the run records the same
findings and outcomes as a run on one session, full or incremental, and a run that fails in a
worker leaves no run and nothing staged behind."""

from __future__ import annotations

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_db import checks
from rulem_db.checks import parallel

# four chunks of 27-28 with two workers (parallel.MIN_CHUNK 25), and two for the 55 permits
# an incremental run evaluates again
PERMITS = 110


def _plan(engine: sa.Engine) -> list[int]:
    """A row of PERMITS permits, each on its own parcel with a fill of its own wetland (a Rule
    M permit), every seventh with a fill on upland (2(a) fails), a central wetland seed and a
    buffer on every third (6(a), 6(c) evaluated)."""
    ids = []
    with engine.begin() as conn:
        s.plan_boundary(conn, (-1000, -1000, 200 * PERMITS + 1000, 2000))
        d = s.delineation(conn, "D-1", (-500, -500, 200 * PERMITS + 500, 1500), "2020-01-01")
        conn.execute(sa.text(
            f"INSERT INTO core.central_wetland_seed (plan_area_id, name, geom) VALUES "
            f"(1, 'band', {s.rect((-100, 300, 200 * PERMITS, 400))})"))
        for k in range(PERMITS):
            x = 200 * k
            s.wetland(conn, d, f"W{k}", (x, 300, x + 200, 400))  # the band, touching
            s.parcel(conn, f"P-{k}", (x, 100, x + 200, 300))
            pid = s.permit(conn, f"25-{k + 1:03d}", pins=[f"P-{k}"])
            ids.append(pid)
            if k % 7 == 0:
                s.impact(conn, pid, "fill", (x + 10, 110, x + 20, 120), f"i{k}")
            else:
                s.impact(conn, pid, "fill", (x + 10, 310, x + 30, 330), f"i{k}")
            if k % 3 == 0:
                s.buffer(conn, pid, (x, 280, x + 200, 300), f"b{k}")
    return ids


def _results(engine: sa.Engine, run_id: int) -> tuple[set, set]:
    with engine.connect() as conn:
        outcomes = set(conn.execute(sa.text(
            "SELECT permit_id, paragraph, check_code, outcome, measured_value, limit_value, "
            "evaluated_count, finding_count, message FROM checks.run_outcome(:r)"),
            {"r": run_id}).all())
        findings = set(conn.execute(sa.text(
            "SELECT permit_id, paragraph, check_code, severity, parcel_id, feature_id, "
            "measured_value, message, ST_AsEWKB(geom) FROM checks.finding WHERE run_id = :r"),
            {"r": run_id}).all())
    return outcomes, findings


def test_chunks_sample_the_plan_area_and_cover_every_permit_once() -> None:
    """Two chunks per worker, each every n-th permit (the dear permits of one corner of the
    plan area spread over all of them), none under MIN_CHUNK permits unless all are."""
    got = parallel.chunks(list(range(1000)), 2)
    assert [c[:3] for c in got] == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7, 11]]
    assert sorted(sum(got, [])) == list(range(1000))
    assert [len(c) for c in parallel.chunks(list(range(70)), 2)] == [35, 35]
    assert parallel.chunks(list(range(30)), 4) == [list(range(30))]  # one call: no split
    assert parallel.chunks([], 2) == []


def test_a_run_on_two_workers_records_what_one_session_does(db_url, engine) -> None:
    ids = _plan(engine)
    one = checks.run_checks(db_url)
    two = checks.run_checks(db_url, workers=2)
    assert two.permits == one.permits == PERMITS and two.findings == one.findings > 0
    assert _results(engine, two.run_id) == _results(engine, one.run_id)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT rechecked_count, base_run_id FROM checks.run "
                                   "WHERE run_id = :r"), {"r": two.run_id}).one()
        assert tuple(row) == (PERMITS, None)
        assert conn.execute(sa.text("SELECT count(*) FROM checks.evaluation_stage")).scalar() == 0
    # incremental: half of the permits change (two chunks); the rest is carried over
    assert len(parallel.chunks(ids[::2], 2)) == 2
    with engine.begin() as conn:
        for pid in ids[::2]:
            conn.execute(sa.text(
                f"INSERT INTO core.impervious (plan_area_id, permit_id, condition, source_fid, "
                f"geom) VALUES (1, :p, 'proposed', :k, {s.rect((0, 150, 120, 250))})"),
                {"p": pid, "k": f"roof-{pid}"})
    inc = checks.run_checks(db_url, since_last=True, workers=2)
    with engine.connect() as conn:
        row = conn.execute(sa.text("SELECT rechecked_count, base_run_id FROM checks.run "
                                   "WHERE run_id = :r"), {"r": inc.run_id}).one()
    assert tuple(row) == (len(ids[::2]), two.run_id)
    full = checks.run_checks(db_url)
    assert _results(engine, inc.run_id) == _results(engine, full.run_id)
    # nothing changed since: the run stands, on workers too
    assert checks.run_checks(db_url, since_last=True, workers=2).run_id == full.run_id


def test_a_worker_that_fails_leaves_no_run_and_nothing_staged(db_url, engine) -> None:
    ids = _plan(engine)
    with engine.begin() as conn:  # a check that fails on the last permit only
        conn.execute(sa.text(f"""
            CREATE FUNCTION checks.check_zz_fails(p_plan_area_id integer,
                                                  p_permit_ids bigint[] DEFAULT NULL)
            RETURNS SETOF checks.evaluation LANGUAGE sql STABLE AS $$
              SELECT 'T', 'fails', 'error', ps.permit_id, NULL::bigint, NULL::bigint, true,
                     0::numeric, 0::numeric, 'x', 'x',
                     CASE WHEN ps.permit_id = {ids[-1]} THEN ST_GeomFromText('POINT(0 0', 26915) END
              FROM checks.permit_site ps
              WHERE p_permit_ids IS NULL OR ps.permit_id IN (SELECT unnest(p_permit_ids))
            $$"""))
        conn.execute(sa.text(
            "INSERT INTO checks.rule_check (paragraph, check_code, evaluated_by, defined_in, "
            "severity, worse, unit, sort_order, title, measure, not_applicable_when) VALUES "
            "('T', 'fails', 'checks.check_zz_fails', 'test', 'error', 'higher', 'x', 999, "
            "'x', 'x', 'x')"))
    with pytest.raises(checks.CheckError, match="parse error"):
        checks.run_checks(db_url, workers=2)
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar() == 0
        assert conn.execute(sa.text("SELECT count(*) FROM checks.evaluation_stage")).scalar() == 0
