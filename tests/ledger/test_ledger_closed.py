"""Closed years stay closed (docs/ledger.md section 4b).

`rulem-db statement --year 2024 --issue` records the issue (who, when, the digest of the
figures); afterwards the balances as of any date in 2024 (plan, parcel, permit; CLI and pub
functions) and the 2024 statement return exactly the issued figures, whatever is recorded
later; a late fact shows only as a prior-period adjustment of 2025, and `--restated` shows
2024 as now known.

Figures by hand on the metre grid (1 acre = 4046.8564224 m2): a 100 m square is 2.4711 ac,
100 m x 50 m 1.2355 ac, 50 m x 50 m 0.6178 ac. The site, all recorded before the issue:
  delineation D-1 over (0,0)-(1000,1000) approved 2020-01-01: W1 (0,0)-(300,300) on P-1,
  W2 (600,0)-(800,200) on P-2; parcels P-1 (0,0)-(500,500), P-2 (500,0)-(1000,500).
  24-001 decided 2024-03-01: fill (0,0)-(100,100) in W1, 2.4711 required on P-1; basin r1
    (400,0)-(500,50) certified 2024-07-01, 1.2355 credit.
  24-002 decided 2024-05-01: fill (600,0)-(700,50) in W2, 1.2355 required on P-2; basin r2
    (900,0)-(1000,100) certified 2024-08-01, 2.4711 credit.
  24-003 decided 2024-06-01: fill (200,200)-(300,300) in W1, 2.4711 required on P-1.
Issued, as of 2024-12-31: required 6.1777, credit 3.7066, balance -2.4711 (P-1 4.9422,
1.2355, -3.7067; P-2 1.2355, 2.4711, 1.2356); as of 2024-06-30 required 6.1777, no credit.

Late filings, recorded after the issue, every one a fact of 2024 or earlier:
  a late impact: 24-001 fill (100,0)-(200,50) in W1, +5,000 m2 (SQL, as QGIS would);
  a late certification: 24-002 basin r3 (800,300)-(900,350) certified 2024-10-01, +1.2355;
  a changed delineation: D-2 approved 2022-01-01 over (550,0)-(1000,500), its wetland W3
    (600,0)-(650,200) replaces W2 there: 24-002's fill in wetland falls to 50 x 50 m;
  a withdrawn permit: 24-003 withdrawn (rulem-db ingest permit);
  a transfer: 0.5 ac from 24-002 to 24-001 on 2024-11-01 (rulem-db ingest credit_transfer);
  a parameter change: replacement_ratio 1.5 from 2024-01-01;
  a District project: basin Pond (400,400)-(500,500) on P-1 certified 2023-05-01, 2.4711.
Restated (as now known), as of 2024-12-31:
  24-001 impact 15,000 m2, required x 1.5 = 22,500 m2 = 5.5599; credit 1.2355 + 0.5 in.
  24-002 impact 2,500 m2, required 3,750 m2 = 0.9266; credit 10,000 + 5,000 m2 = 3.7066 - 0.5.
  Pond 2.4711 on P-1 (no impact: surplus where it lies).
  plan: required 6.4865, credit 3.7066 + 1.2355 + 2.4711 = 7.4132, balance 0.9267;
  P-1: required 5.5599, credit 1.7355 + 2.4711 = 4.2066, balance -1.3533;
  P-2: required 0.9266, credit 3.2066, balance 2.2800.
The 2025 statement: opening -2.4711 (2024 as issued), prior-period adjustments
0.9267 - (-2.4711) = +3.3978, closing 0.9267 = pub.plan_balance now.
"""

from __future__ import annotations

import csv
import json
import re
from decimal import Decimal
from pathlib import Path

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from ingest_helpers import write_csv

from rulem_cli import main as cli
from rulem_db import ledger

PLAN = "acd-53-62"
DATES = ("2023-12-31", "2024-03-31", "2024-06-30", "2024-12-31")
D = Decimal


@pytest.fixture
def site(engine: sa.Engine) -> dict[str, int]:
    with engine.begin() as conn:
        s.plan_boundary(conn)
        d1 = s.delineation(conn, "D-1", (0, 0, 1000, 1000), "2020-01-01")
        s.wetland(conn, d1, "W1", (0, 0, 300, 300))
        s.wetland(conn, d1, "W2", (600, 0, 800, 200))
        s.parcel(conn, "P-1", (0, 0, 500, 500))
        s.parcel(conn, "P-2", (500, 0, 1000, 500))
        ids = {
            "24-001": s.permit(conn, "24-001", decided_on="2024-03-01", pins=["P-1"]),
            "24-002": s.permit(conn, "24-002", decided_on="2024-05-01", pins=["P-2"]),
            "24-003": s.permit(conn, "24-003", decided_on="2024-06-01", pins=["P-1"]),
        }
        s.impact(conn, ids["24-001"], "fill", (0, 0, 100, 100), "f1")
        s.replacement(conn, ids["24-001"], (400, 0, 500, 50), "r1", status_on="2024-07-01")
        s.impact(conn, ids["24-002"], "fill", (600, 0, 700, 50), "f2")
        s.replacement(conn, ids["24-002"], (900, 0, 1000, 100), "r2", status_on="2024-08-01")
        s.impact(conn, ids["24-003"], "fill", (200, 200, 300, 300), "f3")
    ledger.recompute(s_url(engine))
    return ids


def s_url(engine: sa.Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def readings(conn: sa.Connection, restated: bool = False) -> dict:
    """Every figure a reader gets for the dates of 2023-2024: plan, parcel and permit rows as
    of each date, and the 2024 statement with its entries."""
    out: dict = {}
    for on in DATES:
        for level, key in (("plan", "code"), ("parcel", "pin"), ("permit", "permit_no")):
            rows = conn.execute(sa.text(
                f"SELECT * FROM pub.{level}_balance_as_of(CAST(:on AS date), 'infinity', :r) "
                f"ORDER BY {key}"), {"on": on, "r": restated}).mappings().all()
            out[(level, on)] = [{k: v for k, v in r.items() if k != "geom"} for r in rows]
    out["statement"] = [dict(r) for r in conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement(:c, 2024, NULL, :r)"),
        {"c": PLAN, "r": restated}).mappings()]
    out["entries"] = [dict(r) for r in conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement_entry(:c, 2024, NULL, :r)"),
        {"c": PLAN, "r": restated}).mappings()]
    return out


def plan_as_of(conn: sa.Connection, on: str, restated: bool = False) -> dict:
    return dict(conn.execute(sa.text(
        "SELECT * FROM pub.plan_balance_as_of(CAST(:on AS date), 'infinity', :r)"),
        {"on": on, "r": restated}).mappings().one())


def parcels_as_of(conn: sa.Connection, on: str, restated: bool = False) -> dict[str, tuple]:
    return {r.pin: (r.required_acres, r.credit_acres, r.balance_acres) for r in conn.execute(
        sa.text("SELECT * FROM pub.parcel_balance_as_of(CAST(:on AS date), 'infinity', :r)"),
        {"on": on, "r": restated})}


def statement(conn: sa.Connection, year: int, restated: bool = False) -> dict[str, dict]:
    return {r["line_code"]: dict(r) for r in conn.execute(sa.text(
        "SELECT * FROM pub.ledger_statement(:c, :y, NULL, :r)"),
        {"c": PLAN, "y": year, "r": restated}).mappings()}


def cli_json(capsys: pytest.CaptureFixture, *argv: str) -> list[dict]:
    assert cli.main(list(argv) + ["--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def late_filings(engine: sa.Engine, url: str, ids: dict[str, int], tmp_path: Path) -> None:
    """Seven kinds of late fact about 2023-2024, recorded now, each recomputed."""
    with engine.begin() as conn:  # a late impact
        s.impact(conn, ids["24-001"], "fill", (100, 0, 200, 50), "f1b")
    ledger.recompute(url)
    with engine.begin() as conn:  # a late certification
        s.replacement(conn, ids["24-002"], (800, 300, 900, 350), "r3", status_on="2024-10-01")
    ledger.recompute(url)
    with engine.begin() as conn:  # a changed delineation
        d2 = s.delineation(conn, "D-2", (550, 0, 1000, 500), "2022-01-01")
        s.wetland(conn, d2, "W3", (600, 0, 650, 200))
    ledger.recompute(url)
    permits = write_csv(tmp_path / "permits.csv", ["permit_no", "status", "decided_on"],
                        [["24-003", "withdrawn", "2024-06-01"]])
    assert cli.main(["--db", url, "ingest", "permit", str(permits)]) == 0  # withdrawn
    ledger.recompute(url)
    transfers = write_csv(
        tmp_path / "transfers.csv",
        ["feature_key", "from_permit_key", "to_permit_key", "acres", "transferred_on"],
        [["CT-1", "24-002", "24-001", "0.5", "2024-11-01"]])
    assert cli.main(["--db", url, "ingest", "credit_transfer", str(transfers)]) == 0
    ledger.recompute(url)
    with engine.begin() as conn:  # a parameter change, in force from 2024
        conn.execute(sa.text(
            "INSERT INTO core.parameter (plan_area_id, name, value_num, unit, rule_ref, "
            "effective_on, note) SELECT plan_area_id, name, 1.5, unit, rule_ref, '2024-01-01', "
            "'test: a ratio changed late' FROM core.parameter "
            "WHERE name = 'replacement_ratio' ORDER BY effective_on DESC LIMIT 1"))
    ledger.recompute(url)
    with engine.begin() as conn:  # a District project certified in 2023
        s.replacement(conn, None, (400, 400, 500, 500), "d1", district_project="Pond",
                      status_on="2023-05-01")
    ledger.recompute(url)


def test_an_issued_year_keeps_its_figures_after_late_filings_of_every_kind(
        engine, db_url, site, tmp_path, capsys):
    out = tmp_path / "reports"
    assert cli.main(["--db", db_url, "statement", "--year", "2024", "--issue",
                     "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    with engine.connect() as conn:
        issue = dict(conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement_issue")).mappings().one())
        login = conn.execute(sa.text("SELECT session_user")).scalar_one()
        issued = readings(conn)
        issued_plan = plan_as_of(conn, "2024-12-31")
        issued_parcels = parcels_as_of(conn, "2024-12-31")
        entries_at_issue = conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar()
        mid = plan_as_of(conn, "2024-06-30")
    assert (issue["plan_area"], issue["year"], issue["tz"], issue["issued_by"]) == (
        PLAN, 2024, "America/Chicago", login)
    assert issue["figures_unchanged"] and re.fullmatch("[0-9a-f]{64}", issue["digest"])
    assert issue["digest"] in printed and "figures read now have the same digest" in printed
    assert issue["closing_balance_acres"] == D("-2.4711")
    assert (issued_plan["required_acres"], issued_plan["credit_acres"],
            issued_plan["balance_acres"]) == (D("6.1777"), D("3.7066"), D("-2.4711"))
    assert issued_parcels == {"P-1": (D("4.9422"), D("1.2355"), D("-3.7067")),
                              "P-2": (D("1.2355"), D("2.4711"), D("1.2356"))}
    assert (mid["required_acres"], mid["credit_acres"]) == (D("6.1777"), 0)
    balance_cli = {a: cli_json(capsys, "--db", db_url, "balance", "--as-of", "2024-12-31", *a)
                   for a in (("--parcel", "P-1"), ("--permit", "24-002"), ())}

    late_filings(engine, db_url, site, tmp_path)
    capsys.readouterr()

    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM ledger.entry")).scalar() \
            > entries_at_issue + 10   # the late facts were posted ...
        assert readings(conn) == issued  # ... and no figure of 2024 moved
        issue_now = dict(conn.execute(sa.text(
            "SELECT * FROM pub.ledger_statement_issue")).mappings().one())
        digest_now = conn.execute(sa.text(
            "SELECT pub.ledger_statement_digest(:c, 2024)"), {"c": PLAN}).scalar_one()
        # restated: 2024 as now known, worked out in the module docstring
        restated = plan_as_of(conn, "2024-12-31", restated=True)
        restated_parcels = parcels_as_of(conn, "2024-12-31", restated=True)
        end_2023 = (plan_as_of(conn, "2023-12-31"),
                    plan_as_of(conn, "2023-12-31", restated=True))
        y2025 = statement(conn, 2025)
        y2024_restated = statement(conn, 2024, restated=True)
        now = s.plan_row(conn)
        late = conn.execute(sa.text(
            "SELECT entry_id FROM ledger.entry WHERE effective_on < '2025-01-01' "
            "AND posted_at > :at ORDER BY entry_id"), {"at": issue["issued_at"]}).scalars().all()
    assert digest_now == issue["digest"] == issue_now["digest"]
    assert issue_now["figures_unchanged"] and issue_now["issued_at"] == issue["issued_at"]
    assert (restated["required_acres"], restated["credit_acres"], restated["balance_acres"],
            restated["district_project_credit_acres"]) == (
        D("6.4865"), D("7.4132"), D("0.9267"), D("2.4711"))
    assert restated_parcels == {"P-1": (D("5.5599"), D("4.2066"), D("-1.3533")),
                                "P-2": (D("0.9266"), D("3.2066"), D("2.2800"))}
    # years before the first issued one are closed by it: Pond's 2023 credit came later
    assert (end_2023[0]["credit_acres"], end_2023[1]["credit_acres"]) == (0, D("2.4711"))
    # 2025: opens at 2024 as issued, the late facts are its prior-period adjustments
    assert y2025["opening_balance"]["balance_acres"] == D("-2.4711")
    assert y2025["prior_period"]["balance_acres"] == D("3.3978")
    assert y2025["prior_period"]["entry_ids"] == late
    assert y2025["closing_balance"]["balance_acres"] == D("0.9267") == now["balance_acres"]
    assert y2024_restated["closing_balance"]["balance_acres"] == D("0.9267")
    assert y2024_restated["opening_balance"]["balance_acres"] == D("2.4711")  # Pond, 2023
    assert "prior_period" in y2024_restated and y2024_restated["prior_period"][
        "entry_count"] == 0
    # the CLI reads the same: issued by default, as now known with --restated
    for argv, rows in balance_cli.items():
        assert cli_json(capsys, "--db", db_url, "balance", "--as-of", "2024-12-31",
                        *argv) == rows
    p1 = cli_json(capsys, "--db", db_url, "balance", "--as-of", "2024-12-31", "--parcel",
                  "P-1", "--restated")
    assert (p1[0]["required_acres"], p1[0]["balance_acres"]) == (5.5599, -1.3533)
    assert cli.main(["--db", db_url, "statement", "--year", "2024", "--out", str(out),
                     "--format", "csv"]) == 0
    capsys.readouterr()
    with (out / f"statement-{PLAN}-2024.csv").open() as f:
        closing = next(r for r in csv.DictReader(f) if r["line_code"] == "closing_balance")
    assert closing["balance_acres"] == "-2.4711"
    assert cli.main(["--db", db_url, "statement", "--year", "2024", "--restated", "--out",
                     str(out)]) == 0
    assert "restated: 2024 as now known" in capsys.readouterr().out
    with (out / f"statement-{PLAN}-2024-restated.csv").open() as f:
        closing = next(r for r in csv.DictReader(f) if r["line_code"] == "closing_balance")
    assert closing["balance_acres"] == "0.9267"


def test_issuing_is_refused_in_one_line_when_it_cannot_stand(engine, db_url, site, capsys):
    def refused(*argv: str) -> str:
        assert cli.main(["--db", db_url, "statement", *argv]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        return err

    with engine.connect() as conn:
        this_year = conn.execute(sa.text(
            "SELECT extract(year FROM now() AT TIME ZONE 'America/Chicago')::int")).scalar()
    assert f"{this_year} has not ended (in time zone America/Chicago)" in refused(
        "--year", str(this_year), "--issue")
    with engine.begin() as conn:  # an edit waits in the queue
        s.impact(conn, site["24-001"], "fill", (100, 0, 200, 50), "f1b")
    assert "1 change(s) wait in the ledger's change queue of acd-53-62" in refused(
        "--year", "2023", "--issue")
    ledger.recompute(db_url)
    assert cli.main(["--db", db_url, "statement", "--year", "2023", "--issue"]) == 0
    capsys.readouterr()
    assert re.search(r"the 2023 statement of acd-53-62 was issued on \d{4}-\d\d-\d\d \d\d:\d\d"
                     r" by \w+ \(digest [0-9a-f]{16}\): an issued year is never issued again",
                     refused("--year", "2023", "--issue"))
    assert "issue the 2024 statement of acd-53-62 first" in refused(
        "--year", "2025", "--issue")
    assert "the 2023 statement of acd-53-62 is issued already" in refused(
        "--year", "2022", "--issue")
    assert "was issued in time zone America/Chicago, not UTC" in refused(
        "--year", "2023", "--tz", "UTC")
    assert "argument --restated: not allowed with argument --issue" in _usage(
        capsys, db_url, "--year", "2024", "--issue", "--restated")
    with engine.connect() as conn:
        assert conn.execute(sa.text(
            "SELECT count(*) FROM ledger.statement_issue")).scalar() == 1


def _usage(capsys, db_url: str, *argv: str) -> str:
    with pytest.raises(SystemExit):
        cli.main(["--db", db_url, "statement", *argv])
    return capsys.readouterr().err


def test_the_issue_record_is_append_only_and_staff_cannot_issue(engine, db_url, site):
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT * FROM ledger.issue_statement('acd-53-62', 2024)"))
    for sql in ("UPDATE ledger.statement_issue SET digest = repeat('0', 64)",
                "DELETE FROM ledger.statement_issue", "TRUNCATE ledger.statement_issue"):
        with pytest.raises(sa.exc.DBAPIError), engine.begin() as conn:
            conn.execute(sa.text(sql))
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE rulem_staff"))
        rows = conn.execute(sa.text(
            "SELECT year, figures_unchanged FROM pub.ledger_statement_issue")).all()
        assert [tuple(r) for r in rows] == [(2024, True)]
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            conn.execute(sa.text("SELECT * FROM ledger.issue_statement('acd-53-62', 2025)"))


def test_nothing_is_posted_into_a_closed_year_after_its_issue(engine, db_url, site):
    """A recompute whose transaction began before the issue and posts after it would add
    entries dated before the issue moment: refused (the figures issued would move)."""
    with engine.connect() as early:
        tx = early.begin()
        early.execute(sa.text("SELECT now()"))  # its posting time is fixed here
        with engine.begin() as conn:
            conn.execute(sa.text("SELECT * FROM ledger.issue_statement('acd-53-62', 2024)"))
        run = early.execute(sa.text(
            "INSERT INTO ledger.run (mode, status) VALUES ('queue', 'done') RETURNING run_id")
        ).scalar_one()
        with pytest.raises(sa.exc.DBAPIError, match="falls in a closed year: the 2024 "
                                                    "statement of acd-53-62 was issued"):
            early.execute(sa.text(
                "INSERT INTO ledger.entry (run_id, plan_area_id, district_project, measure, "
                "entry_kind, acres, reason, inputs, effective_on) VALUES (:r, 1, 'Pond', "
                "'credit', 'credit', 1, 'test', '{}', '2024-05-01')"), {"r": run})
        tx.rollback()
    with engine.begin() as conn:  # posted now, a 2024 fact is an adjustment of 2025
        run = conn.execute(sa.text(
            "INSERT INTO ledger.run (mode, status) VALUES ('queue', 'done') RETURNING run_id")
        ).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, district_project, measure, "
            "entry_kind, acres, reason, inputs, effective_on) VALUES (:r, 1, 'Pond', "
            "'credit', 'credit', 1, 'test', '{}', '2024-05-01')"), {"r": run})
    with engine.connect() as conn:
        assert statement(conn, 2025)["prior_period"]["balance_acres"] == 1
        assert plan_as_of(conn, "2024-12-31")["balance_acres"] == D("-2.4711")
        assert plan_as_of(conn, "2024-12-31", restated=True)["balance_acres"] == D("-1.4711")


def test_the_statement_says_how_it_is_read(engine, db_url, site, tmp_path, capsys):
    """Before the issue: not issued; after issuing 2024: 2024 issued and verified, 2023
    closed with it, 2025 not issued."""
    out = str(tmp_path)
    assert cli.main(["--db", db_url, "statement", "--year", "2024", "--out", out]) == 0
    assert "2024 not issued: figures as now recorded" in capsys.readouterr().out
    assert cli.main(["--db", db_url, "statement", "--year", "2024", "--issue", "--out",
                     out]) == 0
    assert re.search(r"2024 issued \d{4}-\d\d-\d\d \d\d:\d\d-0[56]:00 by \w+, digest "
                     r"[0-9a-f]{64}; figures read now have the same digest",
                     capsys.readouterr().out)
    assert cli.main(["--db", db_url, "statement", "--year", "2023", "--out", out]) == 0
    assert "2023 not issued itself, closed with the 2024 statement issued" in \
        capsys.readouterr().out
    html = (tmp_path / f"statement-{PLAN}-2024.html").read_text()
    assert "figures read now have the same digest" in html
