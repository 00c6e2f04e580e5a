"""The annual ledger statement (sql/310_ledger_statement.sql, rulem-db statement).

Ledger entries across three years are posted here with the posting times and effective dates
an auditor would see, so every line is worked out by hand below; a second test goes through a
real recompute. Since revision 0019 a statement goes by effective year, and entries for the
year posted after it ended (in the statement's time zone) are its prior-period adjustments.
"""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_cli import main as cli

CHICAGO = "America/Chicago"


def _feature(conn: sa.Connection, layer: str, key: str) -> int:
    return conn.execute(sa.text(
        "INSERT INTO core.feature (layer, plan_area_id, feature_key) VALUES (:l, 1, :k) "
        "RETURNING feature_id"), {"l": layer, "k": key}).scalar_one()


def _existing(conn: sa.Connection, layer: str, key: str) -> int:
    return conn.execute(sa.text(
        "SELECT feature_id FROM core.feature WHERE layer = :l AND feature_key = :k"),
        {"l": layer, "k": key}).scalar_one()


class Book:
    """Posts entries with a chosen posting time, as the ledger would have."""

    def __init__(self, conn: sa.Connection, again: bool = False) -> None:
        """again: post more to the book made before (its permit and parcel)."""
        self.conn = conn
        self.run_id = conn.execute(sa.text(
            "INSERT INTO ledger.run (mode, status) VALUES ('all', 'done') RETURNING run_id")
        ).scalar_one()
        make = _existing if again else _feature
        self.permit = make(conn, "permit", "23-001")
        self.parcel = make(conn, "parcel", "PIN1")

    def post(self, at: str, measure: str, acres: str, reverses: int | None = None,
             project: bool = False, on: str | None = None) -> int:
        """Posted at `at`, effective `on` (default: the local date of `at`; a reversal: the
        date of the entry it reverses, filled by the database)."""
        if on is None and reverses is None:
            on = at[:10]
        kind = {"required": "debit", "transfer_out": "debit", "credit": "credit",
                "transfer_in": "credit"}.get(measure, "memo")
        return self.conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, district_project, "
            "parcel_id, measure, entry_kind, acres, reverses_entry_id, reason, inputs, "
            "posted_at, effective_on) VALUES (:r, 1, :p, :dp, :parcel, :m, :k, :a, :rev, "
            "'test', '{}', CAST(:at AS timestamptz), CAST(:on AS date)) RETURNING entry_id"),
            {"r": self.run_id, "p": None if project else self.permit,
             "dp": "District pond" if project else None, "parcel": self.parcel, "m": measure,
             "k": kind, "a": Decimal(acres), "rev": reverses, "at": at, "on": on}).scalar_one()


@pytest.fixture
def book(engine: sa.Engine) -> dict[str, int]:
    """Three years of entries; times in Chicago local time (UTC-6 in winter, -5 in summer)."""
    with engine.begin() as conn:
        b = Book(conn)
        e = {}
        e["req1"] = b.post("2023-03-01 10:00-06", "required", "2.0")
        e["imp1"] = b.post("2023-03-01 10:00-06", "impact", "2.0")
        e["cred1"] = b.post("2023-06-01 10:00-05", "credit", "1.5", project=True)
        e["prop1"] = b.post("2023-06-01 10:00-05", "credit_proposed", "0.7")
        e["rev_req1"] = b.post("2023-09-01 10:00-05", "required", "-2.0", e["req1"])
        e["req2"] = b.post("2023-09-01 10:00-05", "required", "2.5")
        # The 2023 credit corrected in 2024: the reversal and the new entry are 2023's facts.
        e["rev_cred1"] = b.post("2024-02-01 10:00-06", "credit", "-1.5", e["cred1"],
                                project=True)
        e["cred2"] = b.post("2024-02-01 10:00-06", "credit", "1.8", project=True,
                            on="2023-06-01")
        e["out"] = b.post("2024-04-01 10:00-05", "transfer_out", "0.3", project=True)
        e["in"] = b.post("2024-04-01 10:00-05", "transfer_in", "0.3")
        # 23:30 on New Year's Eve in Chicago is already 2025 in UTC.
        e["late"] = b.post("2024-12-31 23:30-06", "credit", "0.2", project=True)
        e["y2025"] = b.post("2025-01-01 00:30-06", "credit", "0.4", project=True)
        # A permit decided in 2024, loaded in 2025.
        e["req2024"] = b.post("2025-03-01 10:00-06", "required", "0.5", on="2024-06-01")
    return e


def _statement(conn: sa.Connection, year: int, tz: str = CHICAGO) -> dict[str, dict]:
    rows = conn.execute(sa.text("SELECT * FROM pub.ledger_statement('acd-53-62', :y, :tz)"),
                        {"y": year, "tz": tz}).mappings().all()
    return {r["line_code"]: dict(r) for r in rows}


def test_lines_by_hand_and_opening_is_previous_closing(engine, book):
    with engine.connect() as conn:
        y23, y24, y25 = (_statement(conn, y) for y in (2023, 2024, 2025))
    # 2023: required 2.0 then recomputed to 2.5 (reversal in the same year); credit 1.5,
    # corrected to 1.8 in 2024 (a prior-period adjustment of 2023: -1.5 + 1.8).
    assert y23["opening_balance"]["balance_acres"] == 0
    assert y23["required"]["debit_acres"] == Decimal("4.5")  # 2.0 and its successor 2.5
    assert y23["required"]["entry_ids"] == [book["req1"], book["req2"]]
    assert y23["reversal"]["debit_acres"] == Decimal("-2.0")
    assert y23["reversal"]["balance_acres"] == Decimal("2.0")
    assert y23["reversal"]["entry_ids"] == [book["rev_req1"]]
    assert y23["credit"]["balance_acres"] == Decimal("1.5")
    assert y23["impact"]["memo_acres"] == Decimal("2.0")
    assert y23["impact"]["balance_acres"] is None  # memo: never in the balance
    assert y23["credit_proposed"]["memo_acres"] == Decimal("0.7")
    assert y23["adjustment"]["entry_ids"] == [book["rev_cred1"], book["cred2"]]
    assert y23["adjustment"]["balance_acres"] == Decimal("0.3")
    assert y23["closing_balance"]["balance_acres"] == Decimal("-0.7")  # 1.8 - 2.5
    # 2024: transfers net to zero, credit 0.2 on New Year's Eve, and 0.5 required of a permit
    # decided in 2024 and loaded in 2025 (an adjustment).
    assert y24["opening_balance"]["balance_acres"] == y23["closing_balance"]["balance_acres"]
    assert y24["adjustment"]["balance_acres"] == Decimal("-0.5")
    assert y24["adjustment"]["entry_ids"] == [book["req2024"]]
    assert y24["reversal"]["entry_count"] == 0
    assert y24["credit"]["balance_acres"] == Decimal("0.2")
    assert y24["credit"]["entry_ids"] == [book["late"]]
    assert y24["transfer_in"]["balance_acres"] == Decimal("0.3")
    assert y24["transfer_out"]["balance_acres"] == Decimal("-0.3")
    assert y24["closing_balance"]["balance_acres"] == Decimal("-1.0")
    # 2025
    assert y25["opening_balance"]["balance_acres"] == y24["closing_balance"]["balance_acres"]
    assert y25["credit"]["entry_ids"] == [book["y2025"]]
    assert y25["adjustment"]["entry_count"] == 0
    assert y25["closing_balance"]["balance_acres"] == Decimal("-0.6")


def test_lines_add_up_and_cover_every_entry(engine, book):
    with engine.connect() as conn:
        for year in (2022, 2023, 2024, 2025):
            lines = _statement(conn, year)
            effects = sum(r["balance_acres"] for k, r in lines.items()
                          if r["balance_acres"] is not None and not k.endswith("_balance"))
            assert (lines["opening_balance"]["balance_acres"] + effects
                    == lines["closing_balance"]["balance_acres"])
            listed = [i for k, r in lines.items() if not k.endswith("_balance")
                      for i in r["entry_ids"]]
            effective = conn.execute(sa.text(
                "SELECT entry_id FROM ledger.entry WHERE effective_on >= make_date(:y, 1, 1) "
                "AND effective_on < make_date(:y + 1, 1, 1)"), {"y": year}).scalars().all()
            assert sorted(listed) == sorted(effective)
            # The ledger's own exact balance as of the end of the year agrees, and so does
            # the published plan balance as of that date.
            ledger_balance = conn.execute(sa.text(
                "SELECT balance FROM ledger.plan_measures(1, 'infinity', make_date(:y, 12, 31))"
            ), {"y": year}).scalar_one()
            assert lines["closing_balance"]["balance_acres"] == ledger_balance
            published = conn.execute(sa.text(
                "SELECT balance_acres FROM pub.plan_balance_as_of(make_date(:y, 12, 31))"),
                {"y": year}).scalar_one()
            assert lines["closing_balance"]["balance_acres"] == published


def test_the_first_report_follows_the_time_zone(engine, book):
    """New Year's Eve 23:30 in Chicago is 05:30 on 1 January in UTC: posted before 2024 was
    first reported in Chicago, after it in UTC (an adjustment there)."""
    with engine.connect() as conn:
        chicago = _statement(conn, 2024)
        utc = _statement(conn, 2024, "UTC")
    assert book["late"] in chicago["credit"]["entry_ids"]
    assert book["late"] in utc["adjustment"]["entry_ids"]
    assert book["late"] not in utc["credit"]["entry_ids"]
    assert utc["closing_balance"] == chicago["closing_balance"]


def test_detail_names_line_permit_parcel_and_reversed_entry(engine, book):
    with engine.connect() as conn:
        rows = conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement_entry('acd-53-62', 2023)")).mappings().all()
        rows24 = conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement_entry('acd-53-62', 2024)")).mappings().all()
    by_id = {r["entry_id"]: r for r in rows}
    adj = by_id[book["rev_cred1"]]
    assert adj["line_code"] == "adjustment"
    assert adj["reverses_entry_id"] == book["cred1"]
    assert adj["reversed_posted_at"].year == 2023
    assert adj["posted_at"].year == 2024
    assert str(adj["effective_on"]) == "2023-06-01"  # the date of the entry it reverses
    assert adj["district_project"] == "District pond"
    by_id = {r["entry_id"]: r for r in rows24}
    transfer_in = by_id[book["in"]]
    assert (transfer_in["permit_no"], transfer_in["pin"]) == ("23-001", "PIN1")
    assert transfer_in["balance_acres"] == Decimal("0.3")
    assert by_id[book["out"]]["balance_acres"] == Decimal("-0.3")


def test_unknown_plan_area_is_refused(engine):
    with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="no plan area"):
        conn.execute(sa.text("SELECT * FROM pub.ledger_statement('nowhere', 2024)")).all()


def test_staff_may_run_the_statement_but_not_read_the_book(engine, book):
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE rulem_staff"))
        lines = _statement(conn, 2024)
        assert lines["closing_balance"]["balance_acres"] == Decimal("-1.0")
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            conn.execute(sa.text("SELECT count(*) FROM ledger.entry"))


def test_statement_after_a_real_recompute_matches_the_plan_balance(engine, db_url, tmp_path,
                                                                   capsys):
    """Fill 100 m x 100 m of wetland (2.4711 ac required), certify a 100 m x 50 m replacement
    (1.2355 ac credit), permit decided and replacement certified today: the statement of this
    year shows both and closes at the plan balance."""
    from rulem_db import ledger

    with engine.begin() as conn:
        s.base_site(conn, {"W1": (0, 0, 300, 300)})
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        today = conn.execute(sa.text("SELECT current_date")).scalar_one().isoformat()
        permit = s.permit(conn, "25-001", pins=["P-1"], decided_on=today)
        s.impact(conn, permit, "fill", (0, 0, 100, 100), "i1")
        s.replacement(conn, permit, (400, 0, 500, 50), "r1", status_on=today)
    ledger.recompute(db_url, all=True)
    with engine.connect() as conn:
        year = conn.execute(sa.text(
            "SELECT extract(year FROM now() AT TIME ZONE 'America/Chicago')::int")).scalar_one()
        plan = s.plan_row(conn)
    out = tmp_path / "statements"
    code = cli.main(["--db", db_url, "statement", "--year", str(year), "--out", str(out),
                     "--format", "csv"])
    assert code == 0
    printed = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    closing = next(r for r in printed if r["line"].startswith(("Closing", "Balance to date")))
    assert round(Decimal(closing["balance_acres"]), 4) == plan["balance_acres"]
    # Published: 1.2355 credit - 2.4711 required = -1.2356 (the exact -1.23552691 rounded on
    # its own was -1.2355, a row that did not add up; docs/ledger.md section 4).
    assert Decimal(closing["balance_acres"]) == plan["balance_acres"] == Decimal("-1.2356")
    with (out / f"statement-acd-53-62-{year}.csv").open() as f:
        lines = {r["line_code"]: r for r in csv.DictReader(f)}
    assert round(Decimal(lines["required"]["debit_acres"]), 4) == Decimal("2.4711")
    assert round(Decimal(lines["credit"]["credit_acres"]), 4) == Decimal("1.2355")
    assert Decimal(lines["opening_balance"]["balance_acres"]) == 0
    with (out / f"statement-acd-53-62-{year}-entries.csv").open() as f:
        entries = list(csv.DictReader(f))
    assert {e["entry_id"] for e in entries} == {
        i for r in lines.values() for i in r["entry_ids"].split()}
    html = (out / f"statement-acd-53-62-{year}.html").read_text()
    assert "Replacement required, debited" in html and "25-001" in html
    # Next year opens where this one closes.
    with engine.connect() as conn:
        following = _statement(conn, year + 1)
    assert following["opening_balance"]["balance_acres"] == Decimal(closing["balance_acres"])


def test_an_issued_year_reads_as_issued_and_late_entries_adjust_the_next(engine, book):
    """The book above, 2024 issued now (2023 is closed with it). Two facts recorded after the
    issue: 0.25 credit effective 2024-05-01 and 0.1 required effective 2023-02-01. 2023 and
    2024 read as issued (closing -0.7 and -1.0, the same lines, entries and digest); 2025
    opens at -1.0, adjusts by +0.25 - 0.1 = +0.15 (prior-period) and closes at -1.0 + 0.15
    + 0.4 = -0.45. Restated: 2023 closes at -0.7 - 0.1 = -0.8, 2024 at -1.0 + 0.15 = -0.85."""
    with engine.begin() as conn:
        issue = conn.execute(sa.text(
            "SELECT * FROM ledger.issue_statement('acd-53-62', 2024)")).mappings().one()
    with engine.connect() as conn:
        before = {y: _statement(conn, y) for y in (2023, 2024)}
    assert before[2024]["closing_balance"]["balance_acres"] == issue["closing_balance_acres"] \
        == Decimal("-1.0")
    assert before[2024]["adjustment"]["entry_ids"] == [book["req2024"]]  # posted before issue
    # a back-dated posting before the issue moment is refused
    with pytest.raises(sa.exc.DBAPIError, match="falls in a closed year"), \
            engine.begin() as conn:
        Book(conn, again=True).post("2025-06-01 10:00-05", "credit", "1", project=True,
                                    on="2024-05-01")
    with engine.begin() as conn:
        late = Book(conn, again=True)
        late_credit = late.post(str(issue["issued_at"] + dt.timedelta(seconds=1)), "credit",
                                "0.25", project=True, on="2024-05-01")
        late_required = late.post(str(issue["issued_at"] + dt.timedelta(seconds=1)),
                                  "required", "0.1", on="2023-02-01")
    with engine.connect() as conn:
        after = {y: _statement(conn, y) for y in (2023, 2024)}
        y25 = _statement(conn, 2025)
        restated = {y: {r["line_code"]: r for r in conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement('acd-53-62', :y, NULL, true)"),
            {"y": y}).mappings()} for y in (2023, 2024)}
        digest = conn.execute(sa.text(
            "SELECT pub.ledger_statement_digest('acd-53-62', 2024)")).scalar_one()
        as_of = conn.execute(sa.text(
            "SELECT (SELECT balance_acres FROM pub.plan_balance_as_of('2024-12-31')), "
            "(SELECT balance_acres FROM pub.plan_balance_as_of('2024-12-31', 'infinity', "
            "true))")).one()
    assert after == before and digest == issue["digest"]
    assert y25["opening_balance"]["balance_acres"] == Decimal("-1.0")
    assert y25["prior_period"]["entry_ids"] == sorted([late_credit, late_required])
    assert y25["prior_period"]["balance_acres"] == Decimal("0.15")
    assert y25["prior_period"]["debit_acres"] == Decimal("0.1")
    assert y25["credit"]["entry_ids"] == [book["y2025"]]
    assert y25["closing_balance"]["balance_acres"] == Decimal("-0.45")
    assert restated[2023]["closing_balance"]["balance_acres"] == Decimal("-0.8")
    assert restated[2024]["opening_balance"]["balance_acres"] == Decimal("-0.8")
    assert restated[2024]["closing_balance"]["balance_acres"] == Decimal("-0.85")
    assert restated[2024]["prior_period"]["entry_count"] == 0
    assert tuple(as_of) == (Decimal("-1.0"), Decimal("-0.85"))
