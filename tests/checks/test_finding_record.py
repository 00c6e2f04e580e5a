"""Findings as a record a reviewer can trust (docs/checks.md, "Finding review" and "A fresh
ledger"):

1. a check run never judges 7(b) on a stale ledger: it brings the ledger up to date first, or
   refuses in one line naming what waits;
2. an acknowledgement or waiver holds for what was reviewed: found worse (by the catalogue's
   worse direction, beyond 1 %) or with a new version of an input, the finding re-opens, with
   the reason in its history and in the nightly report;
3. one finding, one ID: the ID the map, QGIS, the reports and `rulem-db check` show is the one
   `rulem-db finding` takes; the run's row is `occurrence_id`;
4. review notes are at most 4,000 characters, waiver references 200, in the database.

Each test copies the demo as the nightly reconciled it (once for the module), then edits it
the way a reviewer would. Hand-worked figures (demo/cases.toml; 1 acre = 4046.8564224 m2):
- 24-017 fills 50 m x 50 m of W-018 (100 m x 100 m at x 491800-491900, y 5003750-5003850):
  2500 m2 = 0.6178 acres, all owed (its basin R-013, 100 m x 80 m at x 491150-491250, lies on
  the District's older Lateral 2 restoration R-011, x 491100-491250: 1.9768 acres of overlap).
  The fill drawn over all of W-018 is 10,000 m2 = 2.4711 acres owed, fourfold.
  R-011 cut back to x 491100-491245 frees 5 m x 80 m = 400 m2 = 0.0988 acres of the basin:
  24-017 then owes 0.6178 - 0.0988 = 0.5190, and overlaps 1.9768 - 0.0988 = 1.8780.
- 24-008's road crosses W-017 (x 491320-491360) 40 m x 12 m = 480 m2 = 0.1186 acres; widened
  tenfold to 120 m (y 5003724-5003844, W-017 runs to 5003960): 4800 m2 = 1.1861 acres.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool
from web_server import web_server_fixture  # noqa: F401  (provides `web_server`)

from flows import nightly
from rulem_cli import main as cli

SRID = 26915
DEFICIT = 0.6178
FOURFOLD = 2.4711
FREED = 0.5190        # 24-017's deficit with 400 m2 of its basin freed
OVERLAP = 1.9768
OVERLAP_FREED = 1.8780
ROAD = 0.1186
ROAD_TENFOLD = 1.1861
W018 = "ST_Multi(ST_MakeEnvelope(491800, 5003750, 491900, 5003850, 26915))"
ROAD_WIDE = "ST_Multi(ST_MakeEnvelope(491265, 5003724, 491420, 5003844, 26915))"


@pytest.fixture(scope="module")
def reconciled(admin_url: URL, demo_template: DemoTemplate,  # noqa: F811
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The demo reconciled once by the nightly, for the module's tests to copy: its database
    name and reports folder. (One nightly for the module instead of one per test.)"""
    reports = tmp_path_factory.mktemp("finding_record") / "reports"
    with cloned(admin_url, demo_template.name, prefix="rulem_fr") as url:
        nightly.reconcile_now(url, reports=reports, use_prefect=False)
        yield sa.engine.make_url(url).database, reports


@pytest.fixture
def demo(admin_url: URL, reconciled: tuple[str, Path],
         tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A copy of the reconciled demo and of its reports folder; its URL and reports folder.
    (The copy's runs still name the module's folder as their report's; its files are the
    same, and this test's nights write to its own folder.)"""
    template, kept = reconciled
    reports = tmp_path / "reports"
    shutil.copytree(kept, reports)
    with cloned(admin_url, template) as url:
        yield url, reports


@pytest.fixture
def editor(admin_url: URL, demo: tuple[str, Path]) -> Iterator[URL]:
    """A login in rulem_editor only (the QGIS edit project's), dropped afterwards."""
    name = f"rulem_editor_fr2_{os.getpid()}_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    admin = sa.create_engine(admin_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f"CREATE ROLE {name} LOGIN PASSWORD :pw IN ROLE rulem_editor"),
                         {"pw": password})
        yield admin_url.set(username=name, password=password,
                            database=sa.engine.make_url(demo[0]).database)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP ROLE IF EXISTS {name}"))
        admin.dispose()


def _all(url: str | URL, sql: str, **params: object) -> list[sa.Row]:
    eng = sa.create_engine(url, poolclass=NullPool)
    try:
        with eng.begin() as conn:
            result = conn.execute(sa.text(sql), params)
            return list(result.all()) if result.returns_rows else []
    finally:
        eng.dispose()


def _one(url: str | URL, sql: str, **params: object) -> sa.Row:
    (row,) = _all(url, sql, **params)
    return row


def _finding(url: str, permit: str, check: str) -> sa.Row:
    return _one(url, "SELECT * FROM pub.finding WHERE permit_no = :p AND check_code = :c",
                p=permit, c=check)


def _history(url: str, finding_id: int) -> list[sa.Row]:
    return _all(url, "SELECT * FROM pub.finding_review_history WHERE finding_id = :i "
                     "ORDER BY review_id", i=finding_id)


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _refused(capsys: pytest.CaptureFixture, url: str, *argv: str) -> str:
    """A command refused in one line on stderr, nothing on stdout; the line."""
    code, out, err = _cli(capsys, "--db", url, *argv)
    assert (code, out) == (1, ""), (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    return err.strip()


def _waiting(url: str) -> int:
    return _one(url, "SELECT count(*) AS n FROM ledger.change_queue "
                     "WHERE processed_at IS NULL").n


def _reconcile(url: str, reports: Path) -> nightly.RunSummary:
    return nightly.reconcile_now(url, reports=reports, use_prefect=False)


IMPACT_17 = ("UPDATE edit.impact SET geom = {geom} WHERE permit_no = '24-017'")
SET_R011 = ("UPDATE core.replacement r SET geom = ST_Multi(ST_MakeEnvelope(491100, 5003300, "
            ":x1, 5003380, 26915)) FROM core.feature f WHERE f.feature_id = r.replacement_id "
            "AND f.feature_key = 'R-011' AND r.valid_to IS NULL")
ROAD_SQL = ("UPDATE core.structure s SET geom = {geom} FROM core.permit p "
            "WHERE p.permit_no = '24-008' AND p.valid_to IS NULL AND s.permit_id = p.permit_id "
            "AND s.kind = 'road' AND s.valid_to IS NULL")


# -- 1. a fresh ledger ------------------------------------------------------------------------
def test_check_after_an_edit_in_the_edit_view_judges_the_new_7b_figure(
        demo: tuple[str, Path], editor: URL, capsys: pytest.CaptureFixture) -> None:
    """The reviewer draws 24-017's fill over all of W-018 in QGIS (edit.impact) and runs
    `rulem-db check --permit 24-017` at once: 7(b) reads 2.4711 acres owed, not the 0.6178 of
    the last posting, and the ledger's queue is empty after."""
    url, _ = demo
    assert float(_finding(url, "24-017", "replacement_deficit").measured_value) == DEFICIT
    _all(editor, IMPACT_17.format(geom=W018))
    assert _waiting(url) > 0
    code, out, err = _cli(capsys, "--db", url, "check", "--permit", "24-017")
    assert (code, err) == (0, "")
    assert "ledger brought up to date first by recompute run" in out
    assert "permit 24-017: impact" in out  # what waited, named
    code, out, _ = _cli(capsys, "--db", url, "check", "--last", "--permit", "24-017",
                        "--format", "json")
    deficit = [r for r in json.loads(out) if r["check_code"] == "replacement_deficit"]
    assert [r["measured_value"] for r in deficit] == [FOURFOLD]
    assert _waiting(url) == 0
    assert float(_one(url, "SELECT required_acres FROM pub.permit_balance "
                           "WHERE permit_no = '24-017'").required_acres) == FOURFOLD


def test_the_sql_entry_point_recomputes_first_or_refuses_naming_what_waits(
        demo: tuple[str, Path]) -> None:
    """checks.run_checks called in SQL: a role given the check entry points but not the
    ledger's functions is refused in one line naming the waiting change, and the database is
    as it was; the writer's run recomputes in its own transaction and judges 2.4711."""
    url, _ = demo
    _all(url, IMPACT_17.format(geom=W018))
    eng = sa.create_engine(url, poolclass=NullPool)
    role = f"rulem_checker_{secrets.token_hex(4)}"
    try:
        with eng.connect() as conn:
            with conn.begin():
                pid = conn.execute(sa.text("SELECT permit_id FROM pub.permit "
                                           "WHERE permit_no = '24-017'")).scalar_one()
                runs = conn.execute(sa.text("SELECT count(*) FROM checks.run")).scalar_one()
            trans = conn.begin()  # the role exists only in this transaction
            conn.execute(sa.text(f"CREATE ROLE {role} NOLOGIN"))
            conn.execute(sa.text(
                f"GRANT USAGE ON SCHEMA checks TO {role}; GRANT EXECUTE ON FUNCTION "
                "checks.run_checks(integer, bigint, jsonb), checks.ledger_behind(integer), "
                f"checks.bring_ledger_up_to_date(integer) TO {role}"))
            conn.execute(sa.text(f"SET LOCAL ROLE {role}"))
            with pytest.raises(sa.exc.DBAPIError) as refused:
                conn.execute(sa.text("SELECT checks.run_checks(1, :p)"), {"p": pid})
            trans.rollback()
            line = str(refused.value.orig).splitlines()[0]
            assert re.search(r"the ledger is not up to date: 1 change\(s\) wait in the "
                             r"ledger's change queue \(permit 24-017: impact \S+ changed "
                             rf"\(version \d+ -> \d+\)\); {role} may not recompute it", line)
            with conn.begin():
                assert conn.execute(sa.text("SELECT count(*) FROM checks.run")
                                    ).scalar_one() == runs
                conn.execute(sa.text("SET LOCAL ROLE rulem_etl"))
                run_id = conn.execute(sa.text("SELECT checks.run_checks(1, :p)"),
                                      {"p": pid}).scalar_one()
                measured = conn.execute(sa.text(
                    "SELECT measured_value FROM checks.finding WHERE run_id = :r "
                    "AND check_code = 'replacement_deficit'"), {"r": run_id}).scalar_one()
    finally:
        eng.dispose()
    assert float(measured) == FOURFOLD
    assert _waiting(url) == 0


def test_a_run_is_refused_while_another_recompute_posts_what_waits(
        demo: tuple[str, Path]) -> None:
    """A change another session is posting (its queue row locked) is not judged around: the
    run is refused in one line, and made once that session has ended."""
    url, _ = demo
    _all(url, IMPACT_17.format(geom=W018))
    holder = sa.create_engine(url, poolclass=NullPool)
    runner = sa.create_engine(url, poolclass=NullPool)
    try:
        with holder.connect() as hold:
            hold.begin()
            hold.execute(sa.text("SELECT 1 FROM ledger.change_queue WHERE processed_at IS NULL "
                                 "FOR UPDATE")).all()
            with pytest.raises(sa.exc.DBAPIError, match=r"another recompute is posting them"), \
                    runner.begin() as conn:
                # bounded: a drain that posts the transfer partners of the held rows again
                # and again never ends (it did, sql/170)
                conn.execute(sa.text("SET LOCAL statement_timeout = '60s'"))
                conn.execute(sa.text("SELECT checks.run_checks(1)"))
            hold.rollback()
        with runner.begin() as conn:
            run_id = conn.execute(sa.text("SELECT checks.run_checks(1)")).scalar_one()
            measured = conn.execute(sa.text(
                "SELECT measured_value FROM checks.finding WHERE run_id = :r "
                "AND check_code = 'replacement_deficit' AND permit_id IS NOT NULL"),
                {"r": run_id}).scalar_one()
    finally:
        holder.dispose()
        runner.dispose()
    assert float(measured) == FOURFOLD


# -- 2. a review holds for what was reviewed ---------------------------------------------------
def test_a_waived_road_widened_tenfold_reopens_with_the_reason(
        demo: tuple[str, Path], capsys: pytest.CaptureFixture) -> None:
    url, reports = demo
    road = _finding(url, "24-008", "structure_in_wetland")
    assert float(road.measured_value) == ROAD
    code, _, err = _cli(capsys, "--db", url, "finding", "waive", str(road.finding_id),
                        "--reference", "V-2024-03")
    assert (code, err) == (0, "")
    assert float(_finding(url, "24-008", "structure_in_wetland").review_measure) == ROAD
    quiet = _reconcile(url, reports)  # nothing changed: still waived
    assert _finding(url, "24-008", "structure_in_wetland").review_state == "waived"

    _all(url, ROAD_SQL.format(geom=ROAD_WIDE))
    run = _reconcile(url, reports)
    now = _finding(url, "24-008", "structure_in_wetland")
    assert (now.finding_id, now.review_state, now.waiver_reference, now.review_measure) == \
        (road.finding_id, "open", None, None)
    assert float(now.measured_value) == ROAD_TENFOLD
    last = _history(url, road.finding_id)[-1]
    check_run = _one(url, "SELECT check_run_id FROM ops.run WHERE run_id = :r",
                     r=run.run_id).check_run_id
    assert (last.event, last.review_state, last.run_id) == ("reopened", "open", check_run)
    assert f"measured {ROAD_TENFOLD} acres, worse than the {ROAD} acres it was waived for" \
        in last.note
    assert re.search(r"structure 24-008/ST-\d+ changed \(version \d+ -> \d+\)", last.note)
    assert "(waived V-2024-03)" in last.note and now.review_note == last.note
    # the nightly lists it as re-opened, with its ID and the reason
    sections = _all(url, "SELECT section, review_note FROM ops.run_finding_review(:r) "
                         "WHERE finding_case_id = :i", r=run.run_id, i=road.finding_id)
    assert [s.section for s in sections] == ["reopened"]
    page = run.report_path.read_text(encoding="utf-8")
    block = page[page.index("Re-opened findings (1)"):page.index("Resolved findings")]
    assert f">{road.finding_id}<" in block and "worse than the 0.1186 acres" in block
    assert quiet.run_id < run.run_id


def test_a_waived_deficit_reopens_when_the_shortfall_grows_fourfold(
        demo: tuple[str, Path], capsys: pytest.CaptureFixture) -> None:
    url, reports = demo
    deficit = _finding(url, "24-017", "replacement_deficit")
    code, _, _ = _cli(capsys, "--db", url, "finding", "waive", str(deficit.finding_id),
                      "--reference", "Board decision 2025-02")
    assert code == 0
    inputs = _one(url, "SELECT review_inputs FROM checks.finding_case WHERE "
                       "finding_case_id = :i", i=deficit.finding_id).review_inputs
    # a permit-level finding holds for the permit and every feature of it
    keys = {r.feature_key for r in _all(url, "SELECT feature_key FROM core.feature "
                                             "WHERE feature_id = ANY(:i)",
                                        i=[int(k) for k in inputs])}
    assert "24-017" in keys and any(k.startswith("24-017/I-") for k in keys)

    _all(url, IMPACT_17.format(geom=W018))
    _reconcile(url, reports)
    now = _finding(url, "24-017", "replacement_deficit")
    assert (now.review_state, float(now.measured_value)) == ("open", FOURFOLD)
    note = _history(url, deficit.finding_id)[-1].note
    assert f"measured {FOURFOLD} acres, worse than the {DEFICIT} acres it was waived for" \
        in note
    assert re.search(r"impact 24-017/I-\d+ changed \(version \d+ -> \d+\)", note)


def test_worse_alone_reopens_better_keeps_and_an_acknowledgement_holds_likewise(
        demo: tuple[str, Path], capsys: pytest.CaptureFixture) -> None:
    """Acknowledgements hold for what was seen, like waivers. The District cuts its Lateral 2
    restoration back (no feature of 24-017 changes): 24-017's overlap shrinks (better: its
    acknowledgement holds) and its deficit falls to 0.5190, acknowledged there; the District
    restores it: the deficit is 0.6178 again, worse by the measure alone, and re-opens; the
    overlap is back to what was acknowledged, and holds."""
    url, reports = demo
    overlap = _finding(url, "24-017", "credit_overlap")
    assert float(overlap.measured_value) == OVERLAP
    assert _cli(capsys, "--db", url, "finding", "ack", str(overlap.finding_id))[0] == 0

    _all(url, SET_R011, x1=491245)
    _reconcile(url, reports)
    now = _finding(url, "24-017", "credit_overlap")
    assert (now.review_state, float(now.measured_value)) == ("acknowledged", OVERLAP_FREED)
    deficit = _finding(url, "24-017", "replacement_deficit")
    assert float(deficit.measured_value) == FREED
    assert _cli(capsys, "--db", url, "finding", "ack", str(deficit.finding_id))[0] == 0

    _all(url, SET_R011, x1=491250)
    _reconcile(url, reports)
    assert _finding(url, "24-017", "credit_overlap").review_state == "acknowledged"
    again = _finding(url, "24-017", "replacement_deficit")
    assert (again.review_state, float(again.measured_value)) == ("open", DEFICIT)
    note = _history(url, deficit.finding_id)[-1].note
    assert note == (f"re-opened by check run {again.run_id} (acknowledged): measured "
                    f"{DEFICIT:.4f} acres, worse than the {FREED:.4f} acres it was "
                    "acknowledged for")


def test_a_new_version_alone_reopens(demo: tuple[str, Path]) -> None:
    """The waived road moved 1 m east: the same 480 m2 in W-017, a new version of the road."""
    url, reports = demo
    road = _finding(url, "24-008", "structure_in_wetland")
    _all(url, "SELECT checks.review_finding(:i, 'waived', 'V-1')", i=road.finding_id)
    _all(url, ROAD_SQL.format(geom="ST_Translate(s.geom, 1, 0)"))
    _reconcile(url, reports)
    now = _finding(url, "24-008", "structure_in_wetland")
    assert (now.review_state, float(now.measured_value)) == ("open", ROAD)
    assert "worse" not in now.review_note
    assert re.search(r"\(waived V-1\): structure 24-008/ST-\d+ changed \(version \d+ -> \d+\)$",
                     now.review_note)


def test_worse_is_by_the_catalogues_direction_beyond_one_percent(
        demo: tuple[str, Path]) -> None:
    url, _ = demo
    cases = [("higher", 0.1186, 0.1197, False), ("higher", 0.1186, 0.1198, True),
             ("higher", 0.1186, 0.0500, False), ("lower", 40.0, 39.7, False),
             ("lower", 40.0, 39.5, True), ("higher", 0, 0.0001, False),
             ("higher", 0, 0.0002, True), ("flag", 1, 5, False), ("higher", None, 5, False),
             ("higher", 1, None, False)]
    got = [_one(url, "SELECT checks.measured_worse(:w, :a, :b) AS x",
                w=w, a=a, b=b).x for w, a, b, _ in cases]
    assert got == [c[3] for c in cases]


# -- 3. one finding, one ID ----------------------------------------------------------------------
def test_the_id_every_reader_shows_is_the_one_the_review_commands_take(
        demo: tuple[str, Path], capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    url, reports = demo
    rows = _all(url, "SELECT f.finding_id, f.occurrence_id, f.finding_case_id, f.permit_id, "
                     "f.paragraph, f.check_code, f.run_id, c.permit_id AS case_permit, "
                     "c.check_code AS case_check, x.run_id AS row_run, x.check_code AS row_check "
                     "FROM pub.finding f "
                     "JOIN checks.finding_case c ON c.finding_case_id = f.finding_id "
                     "JOIN checks.finding x ON x.finding_id = f.occurrence_id")
    assert len(rows) == _one(url, "SELECT count(*) AS n FROM pub.finding").n > 40
    for r in rows:  # the ID names this finding; the occurrence is this run's row of it
        assert (r.finding_case_id, r.case_permit, r.case_check) == \
            (r.finding_id, r.permit_id, r.check_code)
        assert (r.row_run, r.row_check) == (r.run_id, r.check_code)
    # an ID read on the map (pub.finding) acknowledges that finding and no other
    target = _finding(url, "24-009", _all(url, "SELECT check_code FROM pub.finding "
                                               "WHERE permit_no = '24-009' LIMIT 1")[0][0])
    code, out, _ = _cli(capsys, "--db", url, "finding", "ack", str(target.finding_id),
                        "--format", "json")
    assert code == 0 and json.loads(out)[0]["permit_no"] == "24-009"
    assert _one(url, "SELECT review_state FROM pub.finding WHERE finding_id = :i",
                i=target.finding_id).review_state == "acknowledged"
    assert _one(url, "SELECT count(*) AS n FROM pub.finding WHERE review_state <> 'open'").n == 1
    # the QGIS form, `rulem-db check` and `finding list` show the same IDs
    edit = {r.finding_id for r in _all(url, "SELECT finding_id FROM edit.finding")}
    assert edit == {r.finding_id for r in rows}
    code, out, _ = _cli(capsys, "--db", url, "check", "--last", "--format", "json")
    assert {r["finding_id"] for r in json.loads(out)} == edit
    code, out, _ = _cli(capsys, "--db", url, "finding", "list", "--format", "json")
    assert {r["finding_id"] for r in json.loads(out)} == edit
    # the nightly report's findings.gpkg (the fixture's run: the findings have not changed)
    (gpkg,) = reports.glob("*/findings.gpkg")
    with sqlite3.connect(gpkg) as db:
        layers = [n for (n,) in db.execute(
            "SELECT table_name FROM gpkg_contents WHERE table_name LIKE 'finding%'")]
        ids = {i for layer in layers
               for (i,) in db.execute(f'SELECT finding_id FROM "{layer}"')}
        cols = {c[1] for c in db.execute(f'PRAGMA table_info("{layers[0]}")')}
    assert ids == edit and "occurrence_id" in cols
    # the map's tile: its feature id over the road is the road's finding_id
    road = _finding(url, "24-008", "structure_in_wetland")
    z, (x, y) = 16, _tile_of(url, 491340, 5003730)
    tile = _one(url, "SELECT pub.finding_tile(:z, :x, :y) AS tile", z=z, x=x,
               y=y).tile
    path = tmp_path / "finding.mvt"
    path.write_bytes(bytes(tile))
    decoded = subprocess.run(["ogrinfo", "-ro", "-al", "-oo", f"X={x}", "-oo", f"Y={y}",
                              "-oo", f"Z={z}", str(path)], capture_output=True, text=True,
                             check=True).stdout
    # (GDAL's MVT driver shows the tile's feature id as mvt_id)
    assert re.search(rf"mvt_id \(Integer64\) = {road.finding_id}\n\s+"
                     rf"occurrence_id \(Integer\d*\) = {road.occurrence_id}\n", decoded)


def test_the_web_maps_panel_gives_the_same_ids(web_server) -> None:  # noqa: F811
    """/api/permit (the web map's panel) lists a permit's findings by the ID the review
    commands take, not by the run's row."""
    rows = _all(web_server.url, "SELECT finding_id, occurrence_id FROM pub.finding "
                                "WHERE permit_no = '24-008'")
    panel = httpx.get(web_server.base_url + "/api/permit", params={"no": "24-008"},
                      timeout=60).json()
    ids = sorted(f["finding_id"] for f in panel["findings"])
    assert ids == sorted(r.finding_id for r in rows)
    assert ids != sorted(r.occurrence_id for r in rows)  # the two numbers differ here


def _tile_of(url: str, x: float, y: float) -> tuple[int, int]:
    """The XYZ tile at zoom 16 over a point of the working CRS."""
    half, size = 20037508.342789244, 2 * 20037508.342789244 / 2 ** 16
    mx, my = _one(url, "SELECT ST_X(p), ST_Y(p) FROM ST_Transform(ST_SetSRID("
                       "ST_MakePoint(:x, :y), 26915), 3857) p", x=x, y=y)
    return int((mx + half) // size), int((half - my) // size)


def test_reopen_and_ids_that_name_no_current_finding(
        demo: tuple[str, Path], capsys: pytest.CaptureFixture) -> None:
    url, reports = demo
    bounce = _finding(url, "24-008", "bounce").finding_id
    assert _cli(capsys, "--db", url, "finding", "ack", str(bounce))[0] == 0
    code, out, err = _cli(capsys, "--db", url, "finding", "reopen", str(bounce), "--note",
                          "the engineer disputes the bounce")
    assert (code, err) == (0, "") and "opened" in out
    assert [(h.event, h.review_state) for h in _history(url, bounce)] == [
        ("found", "open"), ("acknowledged", "acknowledged"),
        ("opened", "open")]
    assert "open already" in _refused(capsys, url, "finding", "reopen", str(bounce))
    assert _refused(capsys, url, "finding", "list", "--permit", "99-999") == (
        "rulem-db finding: no permit '99-999' (permit numbers as in pub.permit, e.g. 24-017)")
    assert "finding 999999999 does not exist" in _refused(capsys, url, "finding", "ack",
                                                          "999999999")
    # a permit withdrawn: its findings are no longer current; their IDs take notes only
    ids = [r.finding_id for r in _all(url, "SELECT finding_id FROM pub.finding "
                                           "WHERE permit_no = '24-009'")]
    _all(url, "UPDATE core.permit SET status = 'withdrawn' WHERE permit_no = '24-009' "
              "AND valid_to IS NULL")
    nightly.reconcile_now(url, reports=reports, use_prefect=False, full=True)
    assert _all(url, "SELECT 1 FROM pub.finding WHERE permit_no = '24-009'") == []
    line = _refused(capsys, url, "finding", "waive", str(ids[0]), "--reference", "V-2")
    assert f"finding {ids[0]} is not a current finding" in line and "24-009" in line
    assert _cli(capsys, "--db", url, "finding", "note", str(ids[0]), "--note", "withdrawn "
                "by the applicant")[0] == 0


# -- 4. review texts are bounded ---------------------------------------------------------------
def test_notes_and_references_are_bounded_for_every_writer(
        demo: tuple[str, Path], editor: URL, capsys: pytest.CaptureFixture) -> None:
    url, _ = demo
    fid = _finding(url, "24-008", "bounce").finding_id
    before = len(_history(url, fid))
    line = _refused(capsys, url, "finding", "note", str(fid), "--note", "x" * 4001)
    assert line == (f"rulem-db finding: finding {fid}: a note is at most 4,000 characters "
                    "(this one has 4,001)")
    line = _refused(capsys, url, "finding", "waive", str(fid), "--reference", "V" * 201)
    assert "a waiver reference is at most 200 characters (this one has 201)" in line
    big = "y" * (20 * 1024 * 1024)  # the 20 MB note, straight to the database
    with pytest.raises(sa.exc.DBAPIError,
                       match=r"a note is at most 4,000 characters \(this one has 20,971,520\)"):
        _all(url, "SELECT checks.review_finding(:i, NULL, NULL, :n)", i=fid, n=big)
    with pytest.raises(sa.exc.DBAPIError, match="a note is at most 4,000 characters"):
        _all(editor, "UPDATE edit.finding SET review_note = :n WHERE finding_id = :i",
             i=fid, n="z" * 4001)
    # the tables hold it for a writer that goes round the function
    for sql in ("UPDATE checks.finding_case SET review_note = repeat('x', 4001) "
                "WHERE finding_case_id = :i",
                "INSERT INTO checks.finding_review (finding_case_id, event, review_state, note) "
                "VALUES (:i, 'noted', 'open', repeat('x', 4001))",
                "UPDATE checks.finding_case SET review_state = 'waived', "
                "waiver_reference = repeat('x', 201) WHERE finding_case_id = :i"):
        with pytest.raises(sa.exc.IntegrityError, match="_length"):
            _all(url, sql, i=fid)
    assert len(_history(url, fid)) == before
    assert _cli(capsys, "--db", url, "finding", "note", str(fid), "--note", "n" * 4000)[0] == 0
    assert len(_finding(url, "24-008", "bounce").review_note) == 4000
