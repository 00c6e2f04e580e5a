"""`rulem-db recompute` and `rulem-db balance` against a real database: what they print, in
the three formats, and their one-line errors."""

from __future__ import annotations

import datetime as dt
import json

import ledger_scenarios as s
import pytest
import sqlalchemy as sa

from rulem_cli import main as cli


@pytest.fixture
def site(engine: sa.Engine) -> None:
    """A-1 (0,0)-(300,600) with 10,000 m^2 of W1 filled by 24-001, replaced by 20,000 m^2 on
    B-1 (300,0)-(600,600): A-1 owes 2.4711 ac and holds 4.9421 ac, balance +2.4711."""
    with engine.begin() as conn:
        s.base_site(conn, {"W1": (50, 0, 150, 100)})
        s.parcel(conn, "01-31-23-11-0001", (0, 0, 300, 600))
        s.parcel(conn, "01-31-23-11-0002", (300, 0, 600, 600))
        p = s.permit(conn, "24-001")
        s.impact(conn, p, "fill", (50, 0, 150, 100), "fill-1")
        s.replacement(conn, p, (350, 400, 550, 500), "basin")


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_recompute_prints_what_it_posted_then_nothing(site: None, db_url: str,
                                                      capsys: pytest.CaptureFixture) -> None:
    code, out, _ = run(capsys, "--db", db_url, "recompute")
    assert code == 0
    assert "1 owners recomputed, 4 entries posted (4 new, 0 reversals)" in out
    assert "24-001  01-31-23-11-0001  required" in out
    code, out, _ = run(capsys, "--db", db_url, "recompute", "--all", "--format", "json")
    assert (code, json.loads(out)) == (0, [])


def test_balance_of_plan_parcel_and_permit(site: None, db_url: str,
                                           capsys: pytest.CaptureFixture) -> None:
    assert run(capsys, "--db", db_url, "recompute")[0] == 0
    code, out, _ = run(capsys, "--db", db_url, "balance", "--format", "json")
    plan = json.loads(out)
    assert code == 0 and len(plan) == 1
    assert (plan[0]["required_acres"], plan[0]["credit_acres"], plan[0]["balance_acres"],
            plan[0]["status"]) == (2.4711, 4.9421, 2.4710, "surplus")  # 4.9421 - 2.4711
    code, out, _ = run(capsys, "--db", db_url, "balance", "--parcel", "013123110001",
                       "--format", "json")
    assert json.loads(out) == [{
        "pin": "01-31-23-11-0001", "impact_acres": 2.4711, "required_acres": 2.4711,
        "credit_acres": 4.9421, "credit_proposed_acres": 0.0, "credit_constructed_acres": 0.0,
        "credit_hosted_acres": 0.0, "balance_acres": 2.4710, "status": "surplus"}]
    code, out, _ = run(capsys, "--db", db_url, "balance", "--parcels", "--format", "csv")
    lines = out.splitlines()
    assert lines[0].startswith("pin,impact_acres,required_acres")
    assert len(lines) == 2          # B-1 hosts the basin but owes and holds nothing: hidden
    code, out, _ = run(capsys, "--db", db_url, "balance", "--permit", "24-001")
    assert code == 0 and "24-001" in out and "surplus" in out and "2.4711" in out


def test_balance_as_of_a_date_and_as_recorded_at(site: None, db_url: str,
                                                 capsys: pytest.CaptureFixture) -> None:
    """--as-of goes by the date the facts took effect (24-001 decided 2024-04-01), so the
    permit loaded today shows as of yesterday and as of 2024-04-01, not as of 2024-03-31;
    --recorded-at yesterday is what the book held then: nothing (docs/ledger.md 4a)."""
    assert run(capsys, "--db", db_url, "recompute")[0] == 0
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    code, out, _ = run(capsys, "--db", db_url, "balance", "--as-of", yesterday,
                       "--format", "json")
    assert code == 0
    assert (json.loads(out)[0]["balance_acres"], json.loads(out)[0]["status"]) == (
        2.4710, "surplus")
    code, out, _ = run(capsys, "--db", db_url, "balance", "--as-of", "2024-04-01",
                       "--format", "json")
    assert json.loads(out)[0]["balance_acres"] == 2.4710
    code, out, _ = run(capsys, "--db", db_url, "balance", "--as-of", "2024-03-31",
                       "--format", "json")
    assert (json.loads(out)[0]["balance_acres"], json.loads(out)[0]["status"]) == (0, "none")
    code, out, _ = run(capsys, "--db", db_url, "balance", "--as-of", "2024-12-31",
                       "--recorded-at", yesterday, "--format", "json")
    assert (json.loads(out)[0]["balance_acres"], json.loads(out)[0]["status"]) == (0, "none")
    code, _, err = run(capsys, "--db", db_url, "balance", "--permit", "24-001",
                       "--recorded-at", yesterday)    # the permit was not in the database yet
    assert code == 1 and f"no permit 24-001 as recorded at {yesterday}" in err
    today = dt.date.today().isoformat()
    code, out, _ = run(capsys, "--db", db_url, "balance", "--permit", "24-001", "--as-of",
                       today, "--recorded-at", today, "--format", "json")
    assert (code, json.loads(out)[0]["balance_acres"]) == (0, 2.4710)


def test_balance_errors_are_one_line(site: None, db_url: str,
                                     capsys: pytest.CaptureFixture) -> None:
    code, _, err = run(capsys, "--db", db_url, "balance", "--parcel", "99-99")
    assert code == 1
    assert err.strip() == ("rulem-db balance: no parcel with PIN 99-99: check the number "
                           "(rulem-db balance --parcels lists them)")
    with pytest.raises(SystemExit):
        cli.main(["--db", db_url, "balance", "--as-of", "last tuesday"])
    with pytest.raises(SystemExit):
        cli.main(["--db", db_url, "balance", "--recorded-at", "yesterday"])
