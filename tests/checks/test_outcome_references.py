"""checks.outcome's references are checked per statement (sql/281, revision 0028), not by
foreign keys: a good row is taken, and each kind of bad reference is refused in one line that
names it, leaving the table as it was."""

from __future__ import annotations

import re

import pytest
import sqlalchemy as sa

INSERT = ("INSERT INTO checks.outcome (run_id, plan_area_id, permit_id, paragraph, check_code, "
          "outcome, evaluated_count, finding_count) "
          "VALUES (:run, :plan, :permit, :paragraph, :check, 'pass', 1, 0)")


@pytest.fixture
def refs(engine: sa.Engine) -> dict[str, object]:
    with engine.begin() as conn:
        plan = conn.execute(sa.text("SELECT min(plan_area_id) FROM core.plan_area")).scalar_one()
        permit = conn.execute(sa.text("SELECT core.register_feature('permit', :p, '25-001')"),
                              {"p": plan}).scalar_one()
        parcel = conn.execute(sa.text("SELECT core.register_feature('parcel', :p, 'P-1')"),
                              {"p": plan}).scalar_one()
        run = conn.execute(sa.text("INSERT INTO checks.run (plan_area_id) VALUES (:p) "
                                   "RETURNING run_id"), {"p": plan}).scalar_one()
        paragraph, check = conn.execute(sa.text(
            "SELECT paragraph, check_code FROM checks.rule_check ORDER BY 1, 2 LIMIT 1")).one()
    return {"run": run, "plan": plan, "permit": permit, "parcel": parcel,
            "paragraph": paragraph, "check": check}


def _insert(engine: sa.Engine, **row: object) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text(INSERT), row)


def _count(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.text("SELECT count(*) FROM checks.outcome")).scalar_one()


def test_a_good_outcome_is_recorded(engine, refs):
    _insert(engine, **{k: v for k, v in refs.items() if k != "parcel"})
    assert _count(engine) == 1


@pytest.mark.parametrize(("change", "message"), [
    ({"run": 999999}, r"^checks\.outcome: run_id 999999 is not a check run of plan area \d+"),
    ({"permit": 999999}, r"^checks\.outcome: permit_id 999999 is not a permit of plan area"),
    ({"permit": "parcel"}, r"^checks\.outcome: permit_id \d+ is not a permit of plan area"),
    ({"check": "no_such_check"},
     r"^checks\.outcome: check \S+ no_such_check is not in the catalogue"),
])
def test_a_bad_reference_is_refused_in_one_line(engine, refs, change, message):
    row = {k: v for k, v in refs.items() if k != "parcel"}
    row.update({k: refs["parcel"] if v == "parcel" else v for k, v in change.items()})
    with pytest.raises(sa.exc.IntegrityError) as refused:
        _insert(engine, **row)
    first = str(refused.value.orig).splitlines()[0]
    assert re.match(message, first), first
    assert _count(engine) == 0


FINDING = ("INSERT INTO checks.finding (run_id, plan_area_id, paragraph, check_code, severity, "
           "permit_id, parcel_id, message) "
           "VALUES (:run, :plan, :paragraph, :check, 'error', :permit, :parcel, 'x')")


@pytest.mark.parametrize(("change", "message"), [
    ({}, None),
    ({"run": 999999}, r"^checks\.finding: run_id 999999 is not a check run of plan area \d+"),
    ({"parcel": 999999}, r"^checks\.finding: parcel_id 999999 is not a feature"),
    ({"check": "no_such_check"},
     r"^checks\.finding: check \S+ no_such_check is not in the catalogue"),
])
def test_a_finding_with_a_bad_reference_is_refused(engine, refs, change, message):
    row = {**refs, **change}
    if message is None:
        with engine.begin() as conn:
            conn.execute(sa.text(FINDING), row)
        expected = 1
    else:
        with pytest.raises(sa.exc.IntegrityError) as refused, engine.begin() as conn:
            conn.execute(sa.text(FINDING), row)
        first = str(refused.value.orig).splitlines()[0]
        assert re.match(message, first), first
        expected = 0
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM checks.finding")).scalar_one() == expected
