"""Findings have a life (docs/checks.md, "Finding review"): a finding keeps its identity from run
to run and carries a review state that staff set (acknowledged; waived with the variance or
decision it stands on, Rule M 7(g)) and the check runs move (resolved when a run that covered it no
longer finds it,
open again when it comes back), every change kept with the login that made it (sql/287).

On the demo plan area, loaded once for the module (the hardening tests' template) and
reconciled once by the nightly; each test reviews a finding of its own permit, so the order
of the tests does not matter:
- 24-008's 7(g) finding (a road crossing 40 m x 12 m = 480 m2 = 0.1186 acre of W-017, no
  variance; demo/cases.toml): the acceptance cycle, moving the road 3 km north (out of every
  wetland) and back;
- 24-004's findings: the QGIS form (edit.finding) as a real rulem_editor login, refused to
  rulem_gis;
- 24-009's findings: the command line; 24-016's: the open errors of pub.permit_compliance.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from flows import nightly
from rulem_cli import main as cli

ROAD_ACRES = 0.1186  # 480 m2 / 4046.8564224


@pytest.fixture(scope="module")
def demo_db(admin_url: URL, demo_template: DemoTemplate,  # noqa: F811
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A clone of the demo, reconciled once by the nightly (its first check run); the URL and
    the reports folder."""
    reports = tmp_path_factory.mktemp("finding_review_reports")
    with cloned(admin_url, demo_template.name) as url:
        nightly.reconcile_now(url, reports=reports, use_prefect=False)
        yield url, reports


@pytest.fixture(scope="module")
def logins(admin_url: URL, demo_db: tuple[str, Path]) -> Iterator[dict[str, URL]]:
    """A rulem_editor and a rulem_gis login (members of their group only), dropped after."""
    suffix = f"{os.getpid()}_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    made: dict[str, URL] = {}
    admin = sa.create_engine(admin_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    database = sa.engine.make_url(demo_db[0]).database
    try:
        with admin.connect() as conn:
            for group in ("rulem_editor", "rulem_gis"):
                name = f"{group}_fr_{suffix}"
                conn.execute(sa.text(
                    f"CREATE ROLE {name} LOGIN PASSWORD :pw IN ROLE {group}"), {"pw": password})
                made[group] = admin_url.set(username=name, password=password,
                                            database=database)
        yield made
    finally:
        with admin.connect() as conn:
            for url in made.values():
                conn.execute(sa.text(f"DROP ROLE IF EXISTS {url.username}"))
        admin.dispose()


def _one(url: str | URL, sql: str, **params: object) -> sa.Row:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.begin() as conn:  # a review commits
            return conn.execute(sa.text(sql), params).one()
    finally:
        eng.dispose()


def _all(url: str | URL, sql: str, **params: object) -> list[sa.Row]:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return list(conn.execute(sa.text(sql), params).all())
    finally:
        eng.dispose()


def _run(url: str, sql: str, **params: object) -> None:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(sql), params)
    finally:
        eng.dispose()


def _finding(url: str, permit: str, check: str) -> sa.Row:
    return _one(url, "SELECT * FROM pub.finding WHERE permit_no = :p AND check_code = :c",
                p=permit, c=check)


def _case(url: str, case_id: int) -> sa.Row:
    return _one(url, "SELECT * FROM checks.finding_case WHERE finding_case_id = :i", i=case_id)


REVIEW_COLUMNS = ("section, finding_case_id, review_state, waiver_reference, review_note, "
                  "reviewed_by, paragraph, check_code, severity, permit_no, pin, "
                  "measured_value, limit_value, unit, message")


def _assert_review_page(url: str, run_id: int) -> set[str]:
    """The report's page of the review sections (ops.run_finding_review_first) holds the
    rows of ops.run_finding_review: all of them when the page is long enough, each section's
    first ones by permit, paragraph and check when it is not, with every section's count.
    Returns the sections the run has."""
    every = [tuple(r) for r in _all(url, f"SELECT {REVIEW_COLUMNS} "
                                         "FROM ops.run_finding_review(:r)", r=run_id)]
    whole = _all(url, f"SELECT section_rows, {REVIEW_COLUMNS} "
                      "FROM ops.run_finding_review_first(:r, 100000)", r=run_id)
    assert sorted(map(repr, (tuple(r)[1:] for r in whole))) == sorted(map(repr, every))
    counts = {s: sum(1 for r in every if r[0] == s) for s in {r[0] for r in every}}
    assert {r.section: r.section_rows for r in whole} == counts
    short = _all(url, f"SELECT section_rows, {REVIEW_COLUMNS} "
                      "FROM ops.run_finding_review_first(:r, 2)", r=run_id)
    for section, count in counts.items():
        page = [r for r in short if r.section == section]
        assert len(page) == min(2, count) and {r.section_rows for r in page} == {count}

        def order(r: sa.Row | tuple) -> tuple:
            permit, paragraph, check = (r[9], r[6], r[7]) if isinstance(r, tuple) else (
                r.permit_no, r.paragraph, r.check_code)
            return (permit is None, permit or "", paragraph or "", check or "")
        firsts = sorted(order(r) for r in every if r[0] == section)[:len(page)]
        assert [order(r) for r in page] == firsts
    return set(counts)


MOVE_ROAD = ("UPDATE core.structure s SET geom = ST_Translate(s.geom, 0, :dy) "
             "FROM core.permit p WHERE p.permit_no = '24-008' AND p.valid_to IS NULL "
             "AND s.permit_id = p.permit_id AND s.kind = 'road' AND s.valid_to IS NULL")


def test_a_waived_finding_stays_waived_resolves_and_reopens(demo_db: tuple[str, Path]) -> None:
    """The acceptance: waive 24-008's road in wetland under a variance, reconcile again (every
    permit evaluated again): still waived, the same identity; move the road out of the
    wetland: resolved; move it back: open again, with the whole history in the database."""
    url, reports = demo_db
    road = _finding(url, "24-008", "structure_in_wetland")
    assert (road.paragraph, road.review_state, float(road.measured_value)) == \
        ("7(g)", "open", ROAD_ACRES)
    case_id = road.finding_case_id
    first_run = _case(url, case_id).first_run_id

    _one(url, "SELECT checks.review_finding(:i, 'waived', 'V-2024-03', 'Board granted "
              "variance for the crossing')", i=case_id)
    full = nightly.reconcile_now(url, reports=reports, use_prefect=False, full=True)
    again = _finding(url, "24-008", "structure_in_wetland")
    assert (again.finding_case_id, again.review_state, again.waiver_reference) == \
        (case_id, "waived", "V-2024-03")
    assert again.run_id != road.run_id  # found again by a new run, not the old row
    assert "waived" in _assert_review_page(url, full.run_id)
    assert _case(url, case_id).last_run_id == again.run_id

    _run(url, MOVE_ROAD, dy=3000)  # the cause removed: no road in wetland
    gone = nightly.reconcile_now(url, reports=reports, use_prefect=False)
    case = _case(url, case_id)
    assert (case.review_state, case.waiver_reference) == ("resolved", None)
    assert _all(url, "SELECT 1 FROM pub.finding WHERE finding_case_id = :i", i=case_id) == []
    # the other findings of the permit were carried over, not resolved
    assert _finding(url, "24-008", "bounce").review_state == "open"
    sections = {r.section for r in _all(url, "SELECT * FROM ops.run_finding_review(:r) "
                                             "WHERE finding_case_id = :i",
                                        r=gone.run_id, i=case_id)}
    assert sections == {"resolved"}
    assert "resolved" in _assert_review_page(url, gone.run_id)

    _run(url, MOVE_ROAD, dy=-3000)  # the cause restored
    back = nightly.reconcile_now(url, reports=reports, use_prefect=False)
    row = _finding(url, "24-008", "structure_in_wetland")
    assert (row.finding_case_id, row.review_state, row.waiver_reference) == \
        (case_id, "open", None)
    assert [r.section for r in _all(url, "SELECT * FROM ops.run_finding_review(:r) "
                                         "WHERE finding_case_id = :i",
                                    r=back.run_id, i=case_id)] == ["reopened"]
    assert {"reopened", "still_open"} <= _assert_review_page(url, back.run_id)
    page = back.report_path.read_text(encoding="utf-8")
    assert "Re-opened findings (1)" in page and "New findings (0)" in page

    login = sa.engine.make_url(url).username
    history = [(r.event, r.review_state, r.waiver_reference, r.changed_by)
               for r in _all(url, "SELECT * FROM pub.finding_review_history "
                                  "WHERE finding_case_id = :i ORDER BY review_id", i=case_id)]
    assert history == [("found", "open", None, login),
                       ("waived", "waived", "V-2024-03", login),
                       ("resolved", "resolved", None, login),
                       ("reopened", "open", None, login)]
    runs = [r.run_id for r in _all(url, "SELECT run_id FROM checks.finding_review "
                                        "WHERE finding_case_id = :i ORDER BY review_id",
                                   i=case_id)]
    check_runs = [_one(url, "SELECT check_run_id FROM ops.run WHERE run_id = :r",
                       r=s.run_id).check_run_id for s in (gone, back)]
    assert runs == [first_run, None, *check_runs]
    assert full.findings == gone.findings + 1 == back.findings


def test_a_waiver_needs_its_reference_and_resolved_is_the_runs(
        demo_db: tuple[str, Path]) -> None:
    url, _ = demo_db
    case_id = _finding(url, "24-008", "bounce").finding_case_id
    for reference in (None, "", "   "):
        with pytest.raises(sa.exc.DBAPIError, match="a waiver needs the reference"):
            _one(url, "SELECT checks.review_finding(:i, 'waived', :r)", i=case_id,
                 r=reference)
    with pytest.raises(sa.exc.DBAPIError, match="resolved is set by the check run"):
        _one(url, "SELECT checks.review_finding(:i, 'resolved')", i=case_id)
    with pytest.raises(sa.exc.DBAPIError, match="a note needs its text"):
        _one(url, "SELECT checks.review_finding(:i, NULL)", i=case_id)
    # nothing was written
    assert _finding(url, "24-008", "bounce").review_state == "open"
    assert [r.event for r in _all(url, "SELECT event FROM checks.finding_review "
                                       "WHERE finding_case_id = :i", i=case_id)] == ["found"]


def test_open_errors_count_what_is_neither_acknowledged_nor_waived(
        demo_db: tuple[str, Path]) -> None:
    url, _ = demo_db
    rows = _all(url, "SELECT finding_case_id, check_code FROM pub.finding "
                     "WHERE permit_no = '24-016' AND severity = 'error' ORDER BY 1")
    assert rows
    check = rows[0].check_code
    sql = ("SELECT open_errors, finding_count FROM pub.permit_compliance "
           "WHERE permit_no = '24-016' AND check_code = :c")
    errors = len([r for r in rows if r.check_code == check])
    before = _one(url, sql, c=check)
    assert before.open_errors == errors
    _one(url, "SELECT checks.review_finding(:i, 'acknowledged')", i=rows[0].finding_case_id)
    after = _one(url, sql, c=check)
    assert (after.open_errors, after.finding_count) == (errors - 1, before.finding_count)


def test_the_qgis_form_reviews_as_the_editor_and_is_refused_to_gis(
        demo_db: tuple[str, Path], logins: dict[str, URL]) -> None:
    """edit.finding, as the QGIS edit project's finding form writes it: an UPDATE of the
    review columns is a review recorded with the editor's login; any other column, or a
    waiver without its reference, is refused; rulem_gis cannot even read it."""
    url, _ = demo_db
    editor = sa.create_engine(logins["rulem_editor"], poolclass=NullPool)
    ids = [r.finding_case_id for r in _all(url, "SELECT finding_case_id FROM pub.finding "
                                                "WHERE permit_no = '24-004' "
                                                "AND geom IS NOT NULL ORDER BY 1")]
    assert len(ids) >= 2
    try:
        with editor.begin() as conn:
            n = conn.execute(sa.text(
                "UPDATE edit.finding SET review_state = 'waived', waiver_reference = 'V-77', "
                "review_note = 'variance of 2024-05-01' WHERE finding_case_id = :i"),
                {"i": ids[0]}).rowcount
            assert n == 1
            conn.execute(sa.text("UPDATE edit.finding SET review_note = 'called the owner' "
                                 "WHERE finding_case_id = :i"), {"i": ids[1]})
        for sql, match in (
                ("UPDATE edit.finding SET message = 'fine' WHERE finding_case_id = :i",
                 "only review_state, waiver_reference and review_note can change"),
                ("UPDATE edit.finding SET geom = NULL WHERE finding_case_id = :i",
                 "only review_state, waiver_reference and review_note can change"),
                ("UPDATE edit.finding SET review_state = 'waived' WHERE finding_case_id = :i",
                 "a waiver needs the reference")):
            with pytest.raises(sa.exc.DBAPIError, match=match), editor.begin() as conn:
                conn.execute(sa.text(sql), {"i": ids[1]})
        with editor.connect() as conn:
            rows = conn.execute(sa.text(
                "SELECT finding_case_id, review_state, waiver_reference, review_note "
                "FROM edit.finding WHERE finding_case_id = ANY(:i) ORDER BY 1"),
                {"i": ids[:2]}).all()
    finally:
        editor.dispose()
    assert [tuple(r) for r in rows] == [(ids[0], "waived", "V-77", "variance of 2024-05-01"),
                                        (ids[1], "open", None, "called the owner")]
    who = logins["rulem_editor"].username
    history = [(r.finding_case_id, r.event, r.changed_by) for r in _all(
        url, "SELECT * FROM pub.finding_review_history WHERE finding_case_id = ANY(:i) "
             "AND event <> 'found' ORDER BY review_id", i=ids[:2])]
    assert history == [(ids[0], "waived", who), (ids[1], "noted", who)]

    gis = sa.create_engine(logins["rulem_gis"], poolclass=NullPool)
    try:
        for sql in ("SELECT count(*) FROM edit.finding",
                    "UPDATE edit.finding SET review_state = 'acknowledged'"):
            with pytest.raises(sa.exc.DBAPIError, match="permission denied"), \
                    gis.begin() as conn:
                conn.execute(sa.text(sql))
        with pytest.raises(sa.exc.DBAPIError, match="permission denied"), gis.begin() as conn:
            conn.execute(sa.text("SELECT checks.review_finding(:i, 'acknowledged')"),
                         {"i": ids[1]})
        with gis.connect() as conn:  # the auditors' view is published
            assert conn.execute(sa.text(
                "SELECT count(*) FROM pub.finding_review_history WHERE finding_case_id = :i"),
                {"i": ids[0]}).scalar_one() == 2
    finally:
        gis.dispose()


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_line_lists_and_reviews(demo_db: tuple[str, Path],
                                            capsys: pytest.CaptureFixture) -> None:
    url, _ = demo_db
    code, out, _ = _cli(capsys, "--db", url, "finding", "list", "--permit", "24-009",
                        "--format", "json")
    assert code == 0
    listed = json.loads(out)
    assert listed and {r["permit_no"] for r in listed} == {"24-009"}
    assert {r["review_state"] for r in listed} == {"open"}
    first, second = listed[0]["finding_id"], listed[1]["finding_id"]

    code, out, err = _cli(capsys, "--db", url, "finding", "ack", str(first), "--note", "seen")
    assert (code, err) == (0, "") and "acknowledged" in out
    code, out, err = _cli(capsys, "--db", url, "finding", "waive", str(second),
                          "--reference", "Board decision 2024-11")
    assert (code, err) == (0, "") and "Board decision 2024-11" in out
    code, out, err = _cli(capsys, "--db", url, "finding", "note", str(second), "--note",
                          "owner informed")
    assert code == 0 and "noted" in out
    code, out, _ = _cli(capsys, "--db", url, "finding", "list", "--permit", "24-009",
                        "--state", "waived", "--format", "csv")
    lines = out.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith(f"{second},24-009,")
    assert "Board decision 2024-11" in lines[1] and "owner informed" in lines[1]

    for argv, match in (
            (("waive", str(first), "--reference", " "), "a waiver needs the reference"),
            (("ack", "999999999"), "finding 999999999 does not exist")):
        code, out, err = _cli(capsys, "--db", url, "finding", *argv)
        assert code == 1 and out == ""
        assert err.startswith("rulem-db finding: ") and match in err
        assert len(err.strip().splitlines()) == 1
    state = _case(url, first)
    assert (state.review_state, state.review_note) == ("acknowledged", "seen")
