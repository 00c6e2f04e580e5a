"""The rules of ingest hold in the database, for every writer (sql/014_write_rules.sql).

As found: `UPDATE edit.permit SET decided_on = NULL` on an approved permit was accepted from
QGIS; the permit was then measured against today's wetland, where the wetland it filled is
gone, and its impact and certified credit both fell to zero. Ingest refuses that permit; now
the database refuses the write too, from the edit views (rulem_editor) and from a writer's own
SQL (rulem_etl), in ingest's words: `core.<layer>: feature <key>: <field>: <message>`, as
ingest says `<file>: feature <fid> (key <key>): <field>: <message>`. Each rule is tried both
ways (where the edit view does not refuse it first in words of its own), and the list of rules
is held to the layer catalogue and to etl/rules.py.

Site: plan boundary x, y -1000..5000 (local metres); wetland W1 (0..300); permit 24-001
(approved 2024-04-01) filling 100 m x 100 m = 2.4711 acres of W1 and replacing it with a
certified 100 m x 100 m basin (2.4711 acres of credit); permit 24-002 approved; permit 24-009
retired; permit 25-001 of another plan area.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import flows_fixtures as fx
import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from role_logins import as_login, role_logins
from sqlalchemy.engine import URL

from etl import rules
from rulem_db import ledger
from rulem_db.catalogue.layers import BY_NAME

at = fx.at
LAYERS = ("permit", "impact", "replacement", "credit_transfer")
WHY = ("without its decision date it is measured against today's wetland, not the wetland as "
       "of its decision (a baseline_on does not replace it)")
DECIDED = ("the permit is approved or expired but has no decision date (decided_on is empty); "
           f"{WHY}; give decided_on a value")


@pytest.fixture(scope="module")
def logins(admin_url: URL) -> Iterator[dict[str, URL]]:
    with role_logins(admin_url, ("rulem_editor", "rulem_etl"), "wr") as made:
        yield made


@pytest.fixture
def site(db_url: str, engine: sa.Engine) -> dict[str, int]:
    with engine.begin() as conn:
        s.plan_boundary(conn, at(-1000, -1000, 5000, 5000))
        d = s.delineation(conn, "D-1", at(0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d, "W1", at(0, 0, 300, 300))
        s.parcel(conn, "P-1", at(0, 0, 1000, 1000))
        ids = {"24-001": s.permit(conn, "24-001", pins=["P-1"]),
               "24-002": s.permit(conn, "24-002", pins=["P-1"]),
               "24-009": s.permit(conn, "24-009")}
        s.impact(conn, ids["24-001"], "fill", at(0, 0, 100, 100), "I-1")
        s.replacement(conn, ids["24-001"], at(500, 500, 600, 600), "R-1",
                      status_on="2024-09-01")
        conn.execute(sa.text("UPDATE core.permit SET valid_to = now() WHERE permit_id = :p "
                             "AND valid_to IS NULL"), {"p": ids["24-009"]})
        other = conn.execute(sa.text("SELECT core.ensure_plan_area('other', 'Another plan')"))
        other_id = other.scalar_one()
        ids["25-001"] = conn.execute(sa.text(
            "INSERT INTO core.permit (plan_area_id, permit_no, status, decided_on) "
            "VALUES (:pa, '25-001', 'approved', '2025-01-01') RETURNING permit_id"),
            {"pa": other_id}).scalar_one()
    ledger.recompute(db_url, workers=1)
    return ids


def _refusal(url: str, login: URL, sql: str, **params) -> str:
    eng = as_login(url, login)
    try:
        with pytest.raises(sa.exc.DBAPIError) as err, eng.begin() as conn:
            conn.execute(sa.text(sql), params)
        return str(err.value.orig).splitlines()[0]
    finally:
        eng.dispose()


def _state(engine: sa.Engine) -> tuple:
    with engine.connect() as conn:
        return tuple(conn.execute(sa.text(
            "SELECT (SELECT count(*) FROM core.permit), (SELECT count(*) FROM core.impact), "
            "(SELECT count(*) FROM core.replacement), "
            "(SELECT count(*) FROM core.credit_transfer), "
            "(SELECT count(*) FROM ledger.change_queue)")).one())


def _balance(engine: sa.Engine, permit: str = "24-001") -> tuple:
    with engine.connect() as conn:
        return tuple(conn.execute(sa.text(
            "SELECT impact_acres, required_acres, credit_acres FROM pub.permit_balance "
            "WHERE permit_no = :p"), {"p": permit}).one())


def test_the_decision_date_of_an_approved_permit_cannot_be_cleared(
        db_url: str, engine: sa.Engine, site: dict[str, int], logins: dict[str, URL]) -> None:
    """The issue as found, from QGIS's view and from a writer's own SQL: refused, and the
    permit, its impact and its credit stay as they were."""
    before, balance = _state(engine), _balance(engine)
    assert balance == (Decimal("2.4711"), Decimal("2.4711"), Decimal("2.4711"))
    line = "core.permit: feature 24-001: decided_on: " + DECIDED
    assert _refusal(db_url, logins["rulem_editor"],
                    "UPDATE edit.permit SET decided_on = NULL WHERE permit_no = '24-001'") == line
    assert _refusal(db_url, logins["rulem_etl"],
                    "UPDATE core.permit SET decided_on = NULL WHERE permit_no = '24-001' "
                    "AND valid_to IS NULL") == line
    assert _refusal(db_url, logins["rulem_etl"],
                    "INSERT INTO core.permit (plan_area_id, permit_no, status) "
                    "VALUES (1, '24-050', 'expired')") == \
        "core.permit: feature 24-050: decided_on: " + DECIDED
    assert _state(engine) == before
    ledger.recompute(db_url, workers=1)
    assert _balance(engine) == balance
    # what the rule allows still passes: a permit under review has no decision yet
    with as_login(db_url, logins["rulem_editor"]).begin() as conn:
        conn.execute(sa.text("UPDATE edit.permit SET status = 'under_review', "
                             "decided_on = NULL WHERE permit_no = '24-002'"))


# (rule, the edit through the view or None, the same write straight at core, the line)
CASES = [
    ("status_code",
     "UPDATE edit.permit SET status = 'granted' WHERE permit_no = '24-001'",
     "UPDATE core.permit SET status = 'granted' WHERE permit_no = '24-001' AND valid_to IS NULL",
     "core.permit: feature 24-001: status: 'granted' is not a status; expected one of applied, "
     "under_review, approved, denied, withdrawn, expired: correct it"),
    ("status_required", None,
     "UPDATE core.permit SET status = NULL WHERE permit_no = '24-001' AND valid_to IS NULL",
     "core.permit: feature 24-001: status: no value; every permit needs a status: fill it in"),
    ("permit_no_check",
     "INSERT INTO edit.permit (plan_area_id, permit_no, status) VALUES (1, '2024-1', "
     "'applied')",
     "INSERT INTO core.permit (plan_area_id, permit_no, status) VALUES (1, '2024-1', 'applied')",
     "core.permit: feature 2024-1: permit_no_check: fails the rule permit_no_check (permit_no ~ "
     "'^[0-9]{2}-[0-9]{3,4}$'); correct the values"),
    ("impact_completed_after_start",
     "UPDATE edit.permit SET impact_started_on = '2024-06-01', impact_completed_on = "
     "'2024-05-01' WHERE permit_no = '24-001'",
     "UPDATE core.permit SET impact_started_on = '2024-06-01', impact_completed_on = "
     "'2024-05-01' WHERE permit_no = '24-001' AND valid_to IS NULL",
     "core.permit: feature 24-001: impact_completed_after_start: fails the rule "
     "impact_completed_after_start (impact_completed_on IS NULL OR impact_started_on IS NULL "
     "OR impact_completed_on >= impact_started_on); correct the values"),
    ("kind_code",
     "UPDATE edit.impact SET kind = 'bulldoze' WHERE permit_no = '24-001'",
     "UPDATE core.impact SET kind = 'bulldoze' WHERE source_fid = 'I-1' AND valid_to IS NULL",
     "core.impact: feature I-1: kind: 'bulldoze' is not a kind; expected one of fill, "
     "excavate, drain_full, drain_partial: correct it"),
    ("permit_id_current (retired)", None,
     "UPDATE core.impact SET permit_id = {24-009} WHERE source_fid = 'I-1' AND valid_to IS NULL",
     "core.impact: feature I-1: permit_id: permit '24-009' is no longer current (it was "
     "retired); correct the key or deliver that permit again first"),
    ("permit_id_current (other plan area)",
     "UPDATE edit.impact SET permit_id = {25-001} WHERE permit_no = '24-001'",
     "UPDATE core.impact SET permit_id = {25-001} WHERE source_fid = 'I-1' AND valid_to IS NULL",
     "core.impact: feature I-1: permit_id: no permit '25-001' in this plan area; load that "
     "permit first, or correct the key"),
    ("impact geometry", None,
     "UPDATE core.impact SET geom = ST_Multi(ST_GeomFromText('POLYGON((490000 5002000, "
     "490100 5002100, 490100 5002000, 490000 5002100, 490000 5002000))', 26915)) "
     "WHERE source_fid = 'I-1' AND valid_to IS NULL",
     "core.impact: feature I-1: geometry: invalid (Self-intersection at POINT(490050 "
     "5002050)); fix it in a GIS and save it again"),
    ("impact inside_plan_area", None,
     "UPDATE core.impact SET geom = " + s.rect(at(6000, 0, 6100, 100))
     + " WHERE source_fid = 'I-1' AND valid_to IS NULL",
     "core.impact: feature I-1: geometry: lies outside the plan area (cwmp_area); correct its "
     "location"),
    ("replacement has_owner",
     "UPDATE edit.replacement SET permit_no = NULL WHERE permit_no = '24-001'",
     "UPDATE core.replacement SET permit_id = NULL WHERE source_fid = 'R-1' AND valid_to IS NULL",
     "core.replacement: feature R-1: has_owner: fails the rule has_owner (permit_id IS NOT "
     "NULL OR district_project IS NOT NULL); correct the values"),
    ("replacement certified_after_constructed",
     "UPDATE edit.replacement SET constructed_on = '2024-08-01', certified_on = '2024-07-01' "
     "WHERE permit_no = '24-001'",
     "UPDATE core.replacement SET constructed_on = '2024-08-01', certified_on = '2024-07-01' "
     "WHERE source_fid = 'R-1' AND valid_to IS NULL",
     "core.replacement: feature R-1: certified_after_constructed: fails the rule "
     "certified_after_constructed (certified_on IS NULL OR constructed_on IS NULL OR "
     "certified_on >= constructed_on); correct the values"),
    ("replacement status_code",
     "UPDATE edit.replacement SET status = 'built' WHERE permit_no = '24-001'",
     "UPDATE core.replacement SET status = 'built' WHERE source_fid = 'R-1' AND valid_to IS NULL",
     "core.replacement: feature R-1: status: 'built' is not a status; expected one of "
     "proposed, constructed, certified: correct it"),
    ("replacement planned_type_code",
     "UPDATE edit.replacement SET planned_type = '9' WHERE permit_no = '24-001'",
     "UPDATE core.replacement SET planned_type = '9' WHERE source_fid = 'R-1' "
     "AND valid_to IS NULL",
     "core.replacement: feature R-1: planned_type: '9' is not a planned_type; expected one of "
     "1, 2, 3, 4, 5, 6, 7, 8: correct it"),
    ("replacement component_code",
     "UPDATE edit.replacement SET component = 'pond' WHERE permit_no = '24-001'",
     "UPDATE core.replacement SET component = 'pond' WHERE source_fid = 'R-1' "
     "AND valid_to IS NULL",
     "core.replacement: feature R-1: component: 'pond' is not a component; expected one of "
     "wetland, upland: correct it"),
    ("replacement permit_id_current", None,
     "UPDATE core.replacement SET permit_id = {24-009} WHERE source_fid = 'R-1' "
     "AND valid_to IS NULL",
     "core.replacement: feature R-1: permit_id: permit '24-009' is no longer current (it was "
     "retired); correct the key or deliver that permit again first"),
    ("transfer acres_check", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
     "transferred_on, source_fid) VALUES (1, {24-001}, {24-002}, 0, '2025-01-01', 'T1')",
     "core.credit_transfer: feature T1: acres_check: fails the rule acres_check (acres > 0); "
     "correct the values"),
    ("transfer distinct_permits", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
     "transferred_on, source_fid) VALUES (1, {24-001}, {24-001}, 0.1, '2025-01-01', 'T1')",
     "core.credit_transfer: feature T1: distinct_permits: fails the rule distinct_permits "
     "(from_permit_id <> to_permit_id); correct the values"),
    ("transfer one_giver", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, from_district_project, "
     "to_permit_id, acres, transferred_on, source_fid) VALUES (1, {24-001}, 'DP-1', {24-002}, "
     "0.1, '2025-01-01', 'T1')",
     "core.credit_transfer: feature T1: one_giver: fails the rule one_giver ((from_permit_id "
     "IS NULL) <> (from_district_project IS NULL)); correct the values"),
    ("transfer from_permit_id_current", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
     "transferred_on, source_fid) VALUES (1, {24-009}, {24-002}, 0.1, '2025-01-01', 'T1')",
     "core.credit_transfer: feature T1: from_permit_id: permit '24-009' is no longer current "
     "(it was retired); correct the key or deliver that permit again first"),
    ("transfer to_permit_id_current", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
     "transferred_on, source_fid) VALUES (1, {24-001}, {25-001}, 0.1, '2025-01-01', 'T1')",
     "core.credit_transfer: feature T1: to_permit_id: no permit '25-001' in this plan area; "
     "load that permit first, or correct the key"),
    ("transfer transferred_on_required", None,
     "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, acres, "
     "source_fid) VALUES (1, {24-001}, {24-002}, 0.1, 'T1')",
     "core.credit_transfer: feature T1: transferred_on: no value; every credit_transfer needs "
     "a transferred_on: fill it in"),
]


def _fill(sql: str, ids: dict[str, int]) -> str:
    for no, pid in ids.items():
        sql = sql.replace("{" + no + "}", str(pid))
    return sql


@pytest.mark.parametrize(("rule", "edit", "direct", "line"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_is_refused_in_ingests_words_through_the_view_and_directly(
        db_url: str, engine: sa.Engine, site: dict[str, int], logins: dict[str, URL],
        rule: str, edit: str | None, direct: str, line: str) -> None:
    before = _state(engine)
    if edit is not None:
        assert _refusal(db_url, logins["rulem_editor"], _fill(edit, site)) == line
    assert _refusal(db_url, logins["rulem_etl"], _fill(direct, site)) == line
    assert _state(engine) == before


def test_the_rules_are_the_catalogues_and_ingests(engine: sa.Engine) -> None:
    """core.write_rules() holds, for each layer, every NOT NULL column, coded domain, CHECK
    rule and reference of the layer catalogue, the ingest rules of etl/rules.py (in
    stored_message's words), and the plan-area refusal of the layers whose
    outside_plan_area is 'error'; the messages are ingest's (ops.ingest_column_checks,
    sql/061) without the file's field and mapping-file hints."""
    with engine.connect() as conn:
        got = {(r.layer, r.kind, r.field, r.test, r.message) for r in conn.execute(sa.text(
            "SELECT * FROM core.write_rules()"))}
    want = set()
    for name in LAYERS:
        layer = BY_NAME[name]
        for c in layer.columns:
            if c.required:
                want.add((name, "required", c.name, None,
                          f"no value; every {name} needs a {c.name}: fill it in"))
            if c.codes:
                want.add((name, "code", c.name, ",".join(c.codes),
                          f"%s is not a {c.name}; expected one of {', '.join(c.codes)}: "
                          "correct it"))
            if c.ref_layer:
                want.add((name, "current_reference", c.name, c.ref_layer, None))
        for rule, expr in [(f"{c.name}_check", c.check) for c in layer.columns if c.check] \
                + list(layer.extra_checks):
            want.add((name, "check", rule, expr,
                      f"fails the rule {rule} ({expr}); correct the values"))
        for r in rules.RULES:
            if r.layer == name:
                want.add((name, "required_when", r.column, r.condition, rules.stored_message(r)))
        if layer.geometry:
            want.add((name, "geometry", "geometry", None, None))
        if layer.outside_plan_area == "error":
            want.add((name, "inside_plan_area", "geometry", None,
                      "lies outside the plan area (cwmp_area); correct its location"))
    assert got == want


def test_ingest_refuses_a_transfer_in_the_same_words(db_url: str, engine: sa.Engine,
                                                     site: dict[str, int], tmp_path) -> None:
    """The line ingest gives for a delivered feature and the one the database gives for the
    same feature written another way differ only in where it came from."""
    from ingest_helpers import write_csv

    from etl.ingest import ingest
    from etl.problems import IngestRefused

    write_csv(tmp_path / "t.csv",
              ["feature_key", "from_permit_key", "to_permit_key", "acres", "transferred_on"],
              [["T1", "24-001", "24-002", "0", "2025-07-10"]])
    with pytest.raises(IngestRefused) as err:
        ingest(db_url, "credit_transfer", tmp_path / "t.csv", plan_area="acd-53-62")
    words = ("acres_check: fails the rule acres_check (acres > 0); correct the values")
    assert err.value.lines()[0] == f"t.csv: feature 1 (key 24-001/T1): {words}"
    with engine.begin() as conn, pytest.raises(sa.exc.DBAPIError) as db_err:
        conn.execute(sa.text(
            "INSERT INTO core.credit_transfer (plan_area_id, from_permit_id, to_permit_id, "
            "acres, transferred_on, source_fid) VALUES (1, :f, :t, 0, '2025-07-10', "
            "'24-001/T1')"), {"f": site["24-001"], "t": site["24-002"]})
    assert str(db_err.value.orig).splitlines()[0] == \
        f"core.credit_transfer: feature 24-001/T1: {words}"
