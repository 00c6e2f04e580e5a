"""Why a balance is what it is: pub.balance_explain and `rulem-db balance --explain`
(sql/312_ledger_explain.sql, docs/ledger.md section 5).

Figures by hand on the metre grid (1 acre = 4046.8564224 m2; a 100 m square 2.4711 ac, 100 m
x 50 m 1.2355 ac). Wetlands of D-1 (approved 2020-01-01): W1 (0,0)-(300,300), W2
(1000,0)-(1200,200). Parcels P-1 (0,0)-(40,1000), P-2 (40,0)-(1000,1000), P-3
(1000,0)-(2000,1000), P-4 (2000,0)-(3000,1000).
  24-001 decided 2024-03-01: fill (0,0)-(100,100) in W1, 4,000 m2 on P-1 and 6,000 m2 on
    P-2: 0.98842 + 1.48263 = 2.47105 ac; published by largest remainder (2.4711 in all,
    the unit to the larger remainder) 0.9884 on P-1 and 1.4827 on P-2. Basin r1 (400,0)-
    (500,100) on P-2, certified 2024-07-01: 2.4711 credit shared like the impact, 0.9884 +
    1.4827. 0.3 ac transferred in from the District's Pond on 2024-09-01 (ingested from
    transfers.csv): 0.12 and 0.18.
  Pond, a District project: basin (2500,0)-(2600,100) on P-4 certified 2023-05-01: 2.4711.
  24-002 decided 2024-05-01: fill (1000,0)-(1100,50) in W2 on P-3, 1.2355 required; its
    basin r2 is Pond's ground, counted first by the District: no credit, and the findings
    7(b) credit_overlap and replacement_deficit. So P-3 is in deficit, -1.2355, and its
    explanation names them.
P-1: impact 0.9884, required 0.9884, credit 0.9884 + 0.12 = 1.1084, balance 0.1200.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from decimal import Decimal

import ledger_scenarios as s
import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from hardening_helpers import DemoTemplate
from ingest_helpers import write_csv
from sqlalchemy.engine import URL

from rulem_cli import main as cli
from rulem_db import checks, ledger

D = Decimal
FIGURES = ("impact_acres", "required_acres", "credit_acres", "credit_proposed_acres",
           "credit_constructed_acres", "credit_hosted_acres", "balance_acres")


@pytest.fixture
def site(engine: sa.Engine, db_url: str, tmp_path) -> dict[str, int]:
    with engine.begin() as conn:
        s.plan_boundary(conn, (-1000, -1000, 5000, 5000))
        d1 = s.delineation(conn, "D-1", (0, 0, 3000, 1000), "2020-01-01")
        s.wetland(conn, d1, "W1", (0, 0, 300, 300))
        s.wetland(conn, d1, "W2", (1000, 0, 1200, 200))
        for pin, r in (("P-1", (0, 0, 40, 1000)), ("P-2", (40, 0, 1000, 1000)),
                       ("P-3", (1000, 0, 2000, 1000)), ("P-4", (2000, 0, 3000, 1000))):
            s.parcel(conn, pin, r)
        ids = {"24-001": s.permit(conn, "24-001", decided_on="2024-03-01", pins=["P-1"]),
               "24-002": s.permit(conn, "24-002", decided_on="2024-05-01", pins=["P-3"])}
        s.impact(conn, ids["24-001"], "fill", (0, 0, 100, 100), "f1")
        s.replacement(conn, ids["24-001"], (400, 0, 500, 50), "r1", status_on="2024-07-01")
        s.replacement(conn, None, (2500, 0, 2600, 100), "pond-1", district_project="Pond",
                      status_on="2023-05-01")
        s.impact(conn, ids["24-002"], "fill", (1000, 0, 1100, 50), "f2")
        s.replacement(conn, ids["24-002"], (2500, 0, 2600, 100), "r2", status_on="2024-06-01")
    ledger.recompute(db_url)
    transfers = write_csv(
        tmp_path / "transfers.csv",
        ["feature_key", "from_district_project", "to_permit_key", "acres", "transferred_on"],
        [["CT-1", "Pond", "24-001", "0.3", "2024-09-01"]])
    assert cli.main(["--db", db_url, "ingest", "credit_transfer", str(transfers)]) == 0
    with engine.begin() as conn:  # r1 grown to a 100 m square: its entries are re-posted
        conn.execute(sa.text(
            "UPDATE core.replacement SET geom = ST_Multi(ST_MakeEnvelope(400, 0, 500, 100, "
            "26915)) WHERE source_fid = 'r1' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    checks.run_checks(db_url)
    return ids


def explained(conn: sa.Connection, **args) -> list[dict]:
    names = ", ".join(f"p_{k} => :{k}" for k in args)
    return [dict(r) for r in conn.execute(
        sa.text(f"SELECT * FROM pub.balance_explain({names})"), args).mappings()]


def sums(rows: list[dict]) -> dict[str, Decimal]:
    """The published figures the entry rows add up to."""
    by = defaultdict(lambda: D(0))
    for r in rows:
        if r["row_kind"] == "entry":
            by[r["measure"]] += r["acres"]
            by["balance_acres"] += r["balance_effect_acres"]
    return {"impact_acres": by["impact"], "required_acres": by["required"],
            "credit_acres": by["credit"] + by["transfer_in"] - by["transfer_out"],
            "credit_proposed_acres": by["credit_proposed"],
            "credit_constructed_acres": by["credit_constructed"],
            "credit_hosted_acres": by["credit_hosted"], "balance_acres": by["balance_acres"]}


def assert_every_figure_explained(conn: sa.Connection, as_of: str | None = None) -> int:
    """For every parcel and permit, the explanation's entries sum to each published figure
    (now, or as of a date); returns how many were compared."""
    n = 0
    for level, key in (("parcel", "pin"), ("permit", "permit_no")):
        src = (f"pub.{level}_balance_as_of(CAST(:on AS date))" if as_of
               else f"pub.{level}_balance")
        for row in conn.execute(sa.text(f"SELECT * FROM {src}"), {"on": as_of}).mappings():
            rows = explained(conn, **{level: row[key], "as_of": as_of})
            assert sums(rows) == {f: row[f] for f in FIGURES}, (level, row[key], as_of)
            assert all(r["level"] == level for r in rows)
            n += 1
    return n


def test_the_rows_sum_to_every_figure_and_name_their_sources(engine, db_url, site):
    with engine.connect() as conn:
        assert assert_every_figure_explained(conn) == 4 + 2
        assert assert_every_figure_explained(conn, "2024-06-30") == 4 + 2
        p1 = explained(conn, parcel="P1")  # any punctuation
        p3 = explained(conn, parcel="p-3")
        login = conn.execute(sa.text("SELECT session_user")).scalar_one()
        keys = dict(conn.execute(sa.text(
            "SELECT source_fid, f.feature_key FROM core.replacement r JOIN core.feature f "
            "ON f.feature_id = r.replacement_id WHERE r.valid_to IS NULL")).all())
        keys.update(conn.execute(sa.text(
            "SELECT source_fid, f.feature_key FROM core.impact i JOIN core.feature f "
            "ON f.feature_id = i.impact_id")).all())
    assert {(r["measure"], r["permit_no"], r["acres"]) for r in p1} == {
        ("impact", "24-001", D("0.9884")), ("required", "24-001", D("0.9884")),
        ("credit", "24-001", D("0.9884")), ("transfer_in", "24-001", D("0.1200"))}
    by_measure = {r["measure"]: r for r in p1}
    assert by_measure["required"]["feature_keys"] == [keys["f1"]]
    assert by_measure["required"]["wetland_keys"] == ["W1"] or by_measure["required"][
        "wetland_keys"][0].endswith("W1")
    assert by_measure["credit"]["feature_keys"] == [keys["r1"]]
    assert by_measure["credit"]["effective_on"].isoformat() == "2024-07-01"
    transfer = by_measure["transfer_in"]
    assert transfer["source_files"][-1] == "transfers.csv"
    assert transfer["loaded_by"][-1] == login
    assert {x["layer"] for x in transfer["sources"]} >= {"credit_transfer", "permit"}
    # the re-posted credit stands; the entry it replaced and its reversal are not listed
    assert "changed" in by_measure["credit"]["reason"]
    # P-3: in deficit because 24-002's basin lies on ground the District counted first
    entries = [r for r in p3 if r["row_kind"] == "entry"]
    findings = {r["check_code"]: r for r in p3 if r["row_kind"] == "finding"}
    assert sums(p3)["balance_acres"] == D("-1.2355")
    assert {(r["measure"], r["acres"]) for r in entries} == {
        ("impact", D("1.2355")), ("required", D("1.2355"))}
    assert set(findings) == {"credit_overlap", "replacement_deficit"}
    assert "District project Pond" in findings["credit_overlap"]["finding_message"]
    assert all(f["permit_no"] == "24-002" and f["acres"] is None and f["pin"] == "P-3"
               for f in findings.values())


def test_a_closed_year_is_explained_as_issued(engine, db_url, site):
    """After 2024 is issued, 24-001's fill grows; explained as of 2024-12-31 the rows still
    sum to the issued figures, restated to the figures as now known."""
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT * FROM ledger.issue_statement('acd-53-62', 2024)"))
        conn.execute(sa.text(
            "UPDATE core.impact SET geom = ST_Multi(ST_MakeEnvelope(0, 0, 100, 200, 26915)) "
            "WHERE source_fid = 'f1' AND valid_to IS NULL"))
    ledger.recompute(db_url)
    with engine.connect() as conn:
        issued = sums(explained(conn, permit="24-001", as_of="2024-12-31"))
        restated = sums(explained(conn, permit="24-001", as_of="2024-12-31", restated=True))
        rows = {r["permit_no"]: r for r in conn.execute(sa.text(
            "SELECT * FROM pub.permit_balance_as_of('2024-12-31')")).mappings()}
        rows_restated = {r["permit_no"]: r for r in conn.execute(sa.text(
            "SELECT * FROM pub.permit_balance_as_of('2024-12-31', 'infinity', true)"
        )).mappings()}
    assert issued["required_acres"] == rows["24-001"]["required_acres"] == D("2.4711")
    assert restated["required_acres"] == rows_restated["24-001"]["required_acres"] \
        == D("4.9421")
    assert issued == {f: rows["24-001"][f] for f in FIGURES}
    assert restated == {f: rows_restated["24-001"][f] for f in FIGURES}


def test_restricted_layers_never_show(engine, db_url, site):
    """An entry whose inputs name a species record (3(d), restricted) explains without it:
    neither its key nor its batch."""
    with engine.begin() as conn:
        species = conn.execute(sa.text(
            "INSERT INTO core.species_record (plan_area_id, permit_id, species, source_fid, geom) "
            "VALUES (1, :p, 'Blanding''s turtle', 'secret-owl', "
            "ST_Multi(ST_MakeEnvelope(5, 5, 10, 10, 26915))) "
            "RETURNING version_id, batch_id"), {"p": site["24-001"]}).one()
        run = conn.execute(sa.text(
            "INSERT INTO ledger.run (mode, status) VALUES ('queue', 'done') RETURNING run_id")
        ).scalar_one()
        conn.execute(sa.text(
            "INSERT INTO ledger.entry (run_id, plan_area_id, permit_id, parcel_id, measure, "
            "entry_kind, acres, reason, inputs, effective_on) "
            "SELECT :r, 1, :p, f.feature_id, 'credit_proposed', 'memo', 0.5, 'test', "
            "jsonb_build_object('species_record', jsonb_build_array(:v), 'restricted_species_"
            "record', :v), '2024-02-01' FROM core.feature f WHERE f.layer = 'parcel' "
            "AND f.feature_key = 'P1'"), {"r": run, "p": site["24-001"], "v": species.version_id})
    with engine.begin() as conn:
        conn.execute(sa.text("SET LOCAL ROLE rulem_gis"))
        rows = explained(conn, parcel="P-1") + [dict(r) for r in conn.execute(sa.text(
            "SELECT * FROM pub.balance_explain WHERE pin = 'P-1'")).mappings()]
        with pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
            conn.execute(sa.text("SELECT * FROM ledger.feature_version LIMIT 1"))
    proposed = [r for r in rows if r["measure"] == "credit_proposed"]
    assert len(proposed) == 3 and all(r["acres"] == D("0.5") for r in proposed)
    text = json.dumps(rows, default=str)
    assert "secret-owl" not in text and "Blanding" not in text
    assert all(species.batch_id not in (r["source_batch_ids"] or []) for r in proposed)
    assert all(r["sources"] is None for r in proposed)


def test_staff_and_gis_read_it_and_unknown_keys_are_refused(engine, site):
    for role in ("rulem_staff", "rulem_gis"):
        with engine.begin() as conn:
            conn.execute(sa.text(f"SET LOCAL ROLE {role}"))
            assert explained(conn, permit="24-002")
            assert conn.execute(sa.text("SELECT count(*) FROM pub.balance_explain")).scalar()
    for args, message in (({"parcel": "X-9"}, "no parcel with PIN X-9"),
                          ({"permit": "99-999"}, "no permit 99-999"),
                          ({}, "name one parcel"),
                          ({"parcel": "P-1", "permit": "24-001"}, "name one parcel")):
        with engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match=message):
            explained(conn, **args)


def test_cli_explain_table_csv_json(db_url, site, capsys):
    assert cli.main(["--db", db_url, "balance", "--parcel", "P-3", "--explain"]) == 0
    table = capsys.readouterr().out
    assert "deficit" in table and "credit_overlap" in table and "replacement_deficit" in table
    assert "entries behind it (2;" in table
    assert cli.main(["--db", db_url, "balance", "--permit", "24-001", "--explain",
                     "--format", "csv"]) == 0
    rows = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert {r["level"] for r in rows} == {"permit"}
    credit = sum(D(r["acres"]) for r in rows if r["measure"] in ("credit", "transfer_in"))
    assert credit == D("2.7711")   # 2.4711 + 0.3
    transfer = next(r for r in rows if r["measure"] == "transfer_in")
    assert transfer["source_files"].endswith("transfers.csv")
    assert json.loads(transfer["sources"])[0]["layer"]
    assert cli.main(["--db", db_url, "balance", "--parcel", "P-1", "--explain",
                     "--as-of", "2024-06-30", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["measure"], r["acres"]) for r in rows} == {("impact", 0.9884),
                                                          ("required", 0.9884)}
    for argv, message in ((["--explain"], "--explain explains one parcel or one permit"),
                          (["--parcels", "--explain"], "--explain explains one parcel"),
                          (["--restated"], "--restated reads a date of an issued year"),
                          (["--permit", "99-999", "--explain"], "no permit 99-999")):
        assert cli.main(["--db", db_url, "balance", *argv]) == 1
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def demo_checked(admin_url: URL, demo_template: DemoTemplate):
    """The demo recomputed and checked once (a clone of the session's loaded demo)."""
    with cloned_database(admin_url, demo_template.name) as engine:
        url = engine.url.render_as_string(hide_password=False)
        ledger.recompute(url, all=True)
        checks.run_checks(url)
        yield engine


@pytest.mark.slow
def test_the_demo_is_explained_to_the_last_digit(demo_checked):
    with demo_checked.connect() as conn:
        assert assert_every_figure_explained(conn) > 50
        assert assert_every_figure_explained(conn, "2025-06-30") > 50
        # the view is the same rows, a level at a time
        view = [dict(r) for r in conn.execute(sa.text(
            "SELECT * FROM pub.balance_explain WHERE level = 'parcel' "
            "AND pin = '14-31-22-12-0001'")).mappings()]
        rows = explained(conn, parcel="14-31-22-12-0001")
        deficit = conn.execute(sa.text(
            "SELECT balance_acres, status FROM pub.parcel_balance "
            "WHERE pin = '14-31-22-12-0001'")).one()
    key = ("row_kind", "entry_id", "finding_id")
    assert sorted(tuple(str(r[k]) for k in key) for r in view) == sorted(
        tuple(str(r[k]) for k in key) for r in rows)
    assert tuple(deficit) == (D("-0.6178"), "deficit")
    findings = {r["check_code"]: r for r in rows if r["row_kind"] == "finding"}
    assert set(findings) >= {"credit_overlap", "replacement_deficit"}
    assert "RCWD Lateral 2" in findings["credit_overlap"]["finding_message"]
    assert {r["permit_no"] for r in findings.values()} == {"24-017"}
