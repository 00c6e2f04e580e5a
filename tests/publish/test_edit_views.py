"""Editing the supported way, without QGIS: schema edit's views as a real rulem_editor login.

An edit through edit.impact is a new version in core recorded with the editor's login, reaches
the ledger's change queue, and a recompute (or `rulem-db watch`, on its own) posts the
hand-worked acres; what breaks a rule
(invalid geometry, a feature wholly outside the plan area, an unknown permit) is refused with
one clear message and writes nothing; rulem_gis and rulem_staff may not edit at all.

The data are the publishing fixture (tests/support/publish_fixture.py): permit 24-101's fill impact
I-1 is 100 m x 50 m (x 150-250, y 50-100) inside the approved wetland W-3 (x 150-250,
y 50-120): 5,000 m^2 = 1.2355 acres of impact, 1.2355 acres required at 1:1.
One database for the module: each test edits its own features, or is refused and edits none.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from clones import cloned
from ledger_watching import next_event, watching
from publish_fixture import Login, _login, box, load_and_reconcile
from sqlalchemy.engine import URL, make_url

from rulem_db import ledger

ACRE_M2 = 4046.8564224


@pytest.fixture(scope="module")
def edit_url(admin_url: URL, template_db: str) -> Iterator[str]:
    """The publishing fixture, reconciled, in a database of this module's own."""
    with cloned(admin_url, template_db, "rulem_edit") as url:
        load_and_reconcile(url)
        yield url


@pytest.fixture(scope="module")
def editor(admin_url: URL) -> Iterator[Login]:
    yield from _login(admin_url, "rulem_editor")


@pytest.fixture(scope="module")
def readers(admin_url: URL) -> Iterator[list[Login]]:
    gis, staff = _login(admin_url, "rulem_gis"), _login(admin_url, "rulem_staff")
    yield [next(gis), next(staff)]
    for gen in (gis, staff):
        next(gen, None)


def _engine(url: str, login: Login) -> sa.Engine:
    return sa.create_engine(make_url(url).set(username=login.user, password=login.password))


def _one(url: str, sql: str, **params) -> sa.Row:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            return conn.execute(sa.text(sql), params).one()
    finally:
        eng.dispose()


def _refused(url: str, login: Login, sql: str, **params) -> str:
    """The database's message for a statement that must fail (first line)."""
    eng = _engine(url, login)
    try:
        with pytest.raises(sa.exc.DBAPIError) as err, eng.begin() as conn:
            conn.execute(sa.text(sql), params)
        return str(err.value.orig).splitlines()[0]
    finally:
        eng.dispose()


def _versions(url: str) -> int:
    return _one(url, "SELECT (SELECT count(*) FROM core.impact) + (SELECT count(*) FROM "
                     "core.feature) + (SELECT count(*) FROM ledger.change_queue) AS n").n


def test_an_editor_inserts_changes_and_retires_an_impact_and_the_ledger_follows(
        edit_url: str, editor: Login) -> None:
    eng = _engine(edit_url, editor)
    try:
        # Shrink I-1 to its lower half: 100 m x 25 m = 2,500 m^2 = 0.6178 acres.
        with eng.begin() as conn:
            fid, before = conn.execute(sa.text(
                "SELECT impact_id, version_id FROM edit.impact WHERE permit_no = '24-101'")).one()
            conn.execute(sa.text(f"UPDATE edit.impact SET geom = {box(150, 50, 250, 75)} "
                                 "WHERE impact_id = :f"), {"f": fid})
        current = _one(edit_url, "SELECT version_id, created_by, ST_Area(geom) AS m2 "
                                 "FROM core.impact WHERE impact_id = :f AND valid_to IS NULL",
                       f=fid)
        assert current.version_id != before and current.created_by == editor.user
        assert current.m2 == pytest.approx(2500.0)
        closed = _one(edit_url, "SELECT closed_by FROM core.impact WHERE version_id = :v",
                      v=before)
        assert closed.closed_by == editor.user
        queued = _one(edit_url, "SELECT count(*) AS n, min(reason) AS reason "
                                "FROM ledger.change_queue WHERE processed_at IS NULL "
                                "AND layer = 'impact' AND feature_id = :f", f=fid)
        assert queued.n >= 1 and "changed" in queued.reason
        ledger.recompute(edit_url, workers=1)
        balance = _one(edit_url, "SELECT impact_acres, required_acres FROM pub.permit_balance "
                                 "WHERE permit_no = '24-101'")
        assert float(balance.impact_acres) == pytest.approx(round(2500 / ACRE_M2, 4))  # 0.6178
        assert float(balance.required_acres) == pytest.approx(round(2500 / ACRE_M2, 4))

        # A new drain impact by permit number: 20 m x 20 m = 400 m^2 = 0.0988 acres, in W-3.
        with eng.begin() as conn:
            new = conn.execute(sa.text(
                "INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('24-101', 'drain_full', "
                f"{box(200, 90, 220, 110)}) RETURNING impact_id, permit_id, created_by")).one()
        assert new.created_by == editor.user and new.impact_id is not None
        permit = _one(edit_url, "SELECT permit_id FROM pub.permit WHERE permit_no = '24-101'")
        assert new.permit_id == permit.permit_id
        ledger.recompute(edit_url, workers=1)
        balance = _one(edit_url, "SELECT impact_acres FROM pub.permit_balance "
                                 "WHERE permit_no = '24-101'")
        assert float(balance.impact_acres) == pytest.approx(round(2900 / ACRE_M2, 4))  # 0.7166

        # DELETE retires it: the version is closed by the editor, nothing is removed.
        with eng.begin() as conn:
            conn.execute(sa.text("DELETE FROM edit.impact WHERE impact_id = :f"),
                         {"f": new.impact_id})
        gone = _one(edit_url, "SELECT count(*) AS n, min(closed_by) AS by, "
                              "count(*) FILTER (WHERE valid_to IS NULL) AS current "
                              "FROM core.impact WHERE impact_id = :f", f=new.impact_id)
        assert (gone.n, gone.by, gone.current) == (1, editor.user, 0)
        ledger.recompute(edit_url, workers=1)
        balance = _one(edit_url, "SELECT impact_acres FROM pub.permit_balance "
                                 "WHERE permit_no = '24-101'")
        assert float(balance.impact_acres) == pytest.approx(round(2500 / ACRE_M2, 4))
    finally:
        eng.dispose()


def test_rulem_db_watch_picks_up_an_edit(edit_url: str, editor: Login) -> None:
    """A new 20 m x 20 m fill for permit 24-102 in wetland W-1: 400 m^2 = 0.0988 acres more
    impact, posted by the watcher within its debounce, with nobody running a recompute."""
    with watching(edit_url) as (_, events):
        assert next_event(events).why == "start"
        before = _one(edit_url, "SELECT impact_acres FROM pub.permit_balance "
                                "WHERE permit_no = '24-102'").impact_acres
        eng = _engine(edit_url, editor)
        try:
            with eng.begin() as conn:
                conn.execute(sa.text("INSERT INTO edit.impact (permit_no, kind, geom) VALUES "
                                     f"('24-102', 'fill', {box(600, 260, 620, 280)})"))
        finally:
            eng.dispose()
        change = next_event(events)
        assert change.why == "change" and change.error is None and change.summary.entries > 0
    after = _one(edit_url, "SELECT impact_acres FROM pub.permit_balance "
                           "WHERE permit_no = '24-102'").impact_acres
    assert float(after - before) == pytest.approx(round(400 / ACRE_M2, 4))  # 0.0988


@pytest.mark.parametrize(("sql", "message"), [
    # A bow-tie: self-intersecting ring.
    ("INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('24-101', 'fill', "
     "ST_Multi(ST_GeomFromText('POLYGON((487150 4993050, 487250 4993100, 487250 4993050, "
     "487150 4993100, 487150 4993050))', 26915)))",
     "edit.impact: feature (new): invalid geometry: Self-intersection"),
    # 100 m west of the plan area (x 0-1000).
    (f"INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('24-101', 'fill', "
     f"{box(-200, 50, -100, 100)})",
     "edit.impact: feature (new) lies outside the plan area (cwmp_area)"),
    (f"INSERT INTO edit.replacement (permit_no, component, status, geom) VALUES ('24-101', "
     f"'wetland', 'proposed', {box(1100, 50, 1200, 100)})",
     "edit.replacement: feature (new) lies outside the plan area (cwmp_area)"),
    (f"INSERT INTO edit.impact (permit_no, kind, geom) VALUES ('99-999', 'fill', "
     f"{box(150, 50, 160, 60)})",
     "edit.impact: unknown permit: no current permit has number '99-999'"),
    ("UPDATE edit.buffer_marker SET permit_no = '24-999' WHERE permit_no = '24-101'",
     "edit.buffer_marker: unknown permit: no current permit has number '24-999'"),
    (f"INSERT INTO edit.impact (kind, geom) VALUES ('fill', {box(150, 50, 160, 60)})",
     "edit.impact: feature (new): permit_no is required"),
])
def test_what_breaks_a_rule_is_refused_clearly_and_writes_nothing(
        edit_url: str, editor: Login, sql: str, message: str) -> None:
    before = _versions(edit_url)
    assert message in _refused(edit_url, editor, sql)
    assert _versions(edit_url) == before


def test_moving_an_impact_outside_the_plan_area_is_refused(edit_url: str, editor: Login) -> None:
    before = _versions(edit_url)
    got = _refused(edit_url, editor, f"UPDATE edit.impact SET geom = {box(-300, 0, -250, 50)} "
                                     "WHERE permit_no = '24-101'")
    assert "lies outside the plan area" in got and "edit.impact: feature " in got
    assert _versions(edit_url) == before


def test_readers_may_not_edit_nor_write_core(edit_url: str, readers: list[Login]) -> None:
    for login in readers:
        for sql in ("SELECT * FROM edit.impact",
                    "UPDATE edit.impact SET kind = 'fill'",
                    "UPDATE core.impact SET kind = 'fill'"):
            assert "permission denied" in _refused(edit_url, login, sql), (login.group, sql)


def test_the_editor_writes_only_the_editable_layers(edit_url: str, editor: Login) -> None:
    for sql in ("UPDATE core.wetland SET cowardin_code = 'X'",
                "INSERT INTO core.credit_transfer (plan_area_id, to_permit_id, acres, "
                "transferred_on, from_district_project) VALUES (1, 1, 1, now(), 'x')",
                "SELECT * FROM core.species_record",
                "DELETE FROM ledger.change_queue"):
        assert "permission denied" in _refused(edit_url, editor, sql), sql
