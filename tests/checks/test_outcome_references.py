"""checks.outcome's, checks.finding's and checks.finding_occurrence's references are checked
per statement (sql/281, revisions 0028 and 0047), not by foreign keys: a good row is taken, and
each kind of bad reference is refused in one line that names it, leaving the table as it was.
Findings and their identities, which occurrences name without a key, are never deleted."""

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
    _taken_or_refused(engine, FINDING, {**refs, **change}, message, "checks.finding")


def _taken_or_refused(engine: sa.Engine, insert: str, row: dict[str, object],
                      message: str | None, table: str) -> None:
    """The row is taken (message None), or refused with a first line matching message and
    the table left empty."""
    if message is None:
        with engine.begin() as conn:
            conn.execute(sa.text(insert), row)
    else:
        with pytest.raises(sa.exc.IntegrityError) as refused, engine.begin() as conn:
            conn.execute(sa.text(insert), row)
        first = str(refused.value.orig).splitlines()[0]
        assert re.match(message, first), first
    with engine.connect() as conn:
        count = conn.execute(sa.text(f"SELECT count(*) FROM {table}")).scalar_one()
    assert count == (1 if message is None else 0)


OCCURRENCE = ("INSERT INTO checks.finding_occurrence (finding_id, finding_case_id, run_id) "
              "VALUES (:finding, :case, :run)")


CASE = ("INSERT INTO checks.finding_case (plan_area_id, finding_key, paragraph, check_code, "
        "first_found_at, first_run_id, last_run_id) "
        "VALUES (:plan, 'k', :paragraph, :check, now(), :run, :run) RETURNING finding_case_id")


@pytest.fixture
def found(engine: sa.Engine, refs: dict[str, object]) -> dict[str, object]:
    """A finding of the run and an identity of its plan area, and another run and plan area."""
    with engine.begin() as conn:
        finding = conn.execute(sa.text(FINDING + " RETURNING finding_id"), refs).scalar_one()
        case = conn.execute(sa.text(CASE), refs).scalar_one()
        other_run = conn.execute(sa.text("INSERT INTO checks.run (plan_area_id) VALUES (:p) "
                                         "RETURNING run_id"), {"p": refs["plan"]}).scalar_one()
        other_plan = conn.execute(sa.text(
            "INSERT INTO core.plan_area (code, name) VALUES ('OTHER', 'Other') "
            "RETURNING plan_area_id")).scalar_one()
        other_case = conn.execute(sa.text(CASE), {**refs, "plan": other_plan}).scalar_one()
    return {"finding": finding, "case": case, "run": refs["run"], "other_run": other_run,
            "other_case": other_case}


@pytest.mark.parametrize(("change", "message"), [
    ({}, None),
    ({"finding": 999999},
     r"^checks\.finding_occurrence: finding_id 999999 is not a finding of check run \d+"),
    ({"run": "other_run"},
     r"^checks\.finding_occurrence: finding_id \d+ is not a finding of check run \d+"),
    ({"case": 999999},
     r"^checks\.finding_occurrence: finding_case_id 999999 is not a finding of plan area"),
    ({"case": "other_case"},
     r"^checks\.finding_occurrence: finding_case_id \d+ is not a finding of plan area"),
])
def test_an_occurrence_with_a_bad_reference_is_refused(engine, found, change, message):
    row = {k: found[k] for k in ("finding", "case", "run")}
    row.update({k: found[v] if isinstance(v, str) else v for k, v in change.items()})
    _taken_or_refused(engine, OCCURRENCE, row, message, "checks.finding_occurrence")


@pytest.mark.parametrize("statement", [
    "DELETE FROM checks.finding", "TRUNCATE checks.finding CASCADE",
    "DELETE FROM checks.finding_case", "TRUNCATE checks.finding_case CASCADE",
])
def test_findings_and_their_identities_are_not_deleted(engine, found, statement):
    """Even by the database's owner: what the occurrences and reviews name stays."""
    with engine.begin() as conn:
        conn.execute(sa.text(OCCURRENCE), {k: found[k] for k in ("finding", "case", "run")})
    with pytest.raises(sa.exc.DBAPIError, match="check results are a record"), \
            engine.begin() as conn:
        conn.execute(sa.text(statement))
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT (SELECT count(*) FROM checks.finding), "
            "(SELECT count(*) FROM checks.finding_case)")).one() == (1, 2)
