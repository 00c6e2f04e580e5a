"""The permit facts that decide a baseline are never silently missing (docs/ingest.md): an
approved or expired permit without a decision date is refused, fields that map to no column are
named after every ingest (with the mapping line for a likely one), and --permit does not
silently move features that carry another permit's number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, scalar, square, write_csv, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused
from rulem_cli.main import main

NO_DATE = ("the permit is approved or expired but has no decision date")
WHY = ("without its decision date it is measured against today's wetland, not the wetland as "
       "of its decision (a baseline_on does not replace it)")


def _refused_cli(url: str, engine: sa.Engine, capsys: pytest.CaptureFixture, layer: str,
                 path: Path, *options: str) -> list[str]:
    """`rulem-db ingest`: exit 1, nothing changed; returns stderr's lines (the last is the
    one-line summary)."""
    before = fingerprint(engine)
    assert main(["--db", url, "ingest", layer, str(path), *options]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err and err[-1].startswith(f"rulem-db ingest: {path.name}: "), err
    assert fingerprint(engine) == before, "a refusal changed the database"
    return err


def _permits(engine: sa.Engine) -> list[tuple[str, str, str | None]]:
    return [tuple(r) for r in rows(engine, "SELECT permit_no, status, decided_on::text "
                                           "FROM pub.permit ORDER BY 1")]


# --- 1. an approved or expired permit needs its decision date --------------------------------

def test_an_approved_permit_with_an_empty_decision_date_is_refused_in_one_line(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_csv(tmp_path / "permits.csv",
                     ["permit_no", "status", "decided_on", "baseline_on"],
                     [["24-001", "approved", "2024-04-09", ""],
                      ["24-002", "under_review", "", ""],
                      ["24-017", "approved", "", "2019-06-15"]])
    err = _refused_cli(db_url, engine, capsys, "permit", path)
    assert err == [
        "rulem-db ingest: permits.csv: feature 3 (key 24-017): decided_on: "
        f"{NO_DATE} (field decided_on is empty); {WHY}; fill in decided_on; nothing was "
        "loaded (--skip-bad-features loads the rest)"]
    assert scalar(engine, "SELECT count(*) FROM core.permit") == 0
    # an expired permit too; every such permit is named
    write_csv(path, ["permit_no", "status", "decided_on"],
              [["24-001", "expired", ""], ["24-002", "approved", ""], ["24-003", "denied", ""]])
    with pytest.raises(IngestRefused) as err2:
        ingest(db_url, "permit", path)
    assert [line.split(": ", 3)[1:3] for line in err2.value.lines()] == [
        ["feature 1 (key 24-001)", "decided_on"], ["feature 2 (key 24-002)", "decided_on"]]
    # with the dates, the same file loads
    write_csv(path, ["permit_no", "status", "decided_on"],
              [["24-001", "expired", "2021-03-01"], ["24-002", "approved", "2024-05-14"],
               ["24-003", "denied", ""]])
    assert ingest(db_url, "permit", path).inserted == 3
    assert _permits(engine) == [("24-001", "expired", "2021-03-01"),
                                ("24-002", "approved", "2024-05-14"), ("24-003", "denied", None)]
    # a later delivery may not empty a stored decision date
    write_csv(path, ["permit_no", "status", "decided_on"], [["24-002", "approved", ""]])
    err = _refused_cli(db_url, engine, capsys, "permit", path)
    assert "feature 1 (key 24-002): decided_on: " + NO_DATE in err[-1]


def test_a_permit_file_without_a_decision_date_column_is_refused_with_the_likely_field(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_csv(tmp_path / "permits.csv", ["permit_no", "status", "decision_date"],
                     [["24-001", "approved", "2024-04-09"], ["24-009", "under_review", ""]])
    err = _refused_cli(db_url, engine, capsys, "permit", path)
    assert err[-1] == (
        "rulem-db ingest: permits.csv: feature 1 (key 24-001): decided_on: "
        f"{NO_DATE} (the file has no decided_on field (and none is stored)); {WHY}; the file's "
        "field decision_date looks like it: map it with [fields] decided_on = \"decision_date\"; "
        "nothing was loaded (--skip-bad-features loads the rest)")
    assert err[0] == ("permits.csv: 1 field maps to no column (kept in source_attributes): "
                      "decision_date (likely decided_on: [fields] decided_on = "
                      "\"decision_date\")")
    # a whole-layer delivery with no date column at all
    bare = write_csv(tmp_path / "bare.csv", ["permit_no", "status"],
                     [["24-009", "under_review"], ["24-010", "approved"]])
    err = _refused_cli(db_url, engine, capsys, "permit", bare)
    assert err == [
        "rulem-db ingest: bare.csv: feature 2 (key 24-010): decided_on: "
        f"{NO_DATE} (the file has no decided_on field (and none is stored)); {WHY}; deliver a "
        "decided_on field, or map the file's field for it in a mapping file ([fields] "
        "decided_on = \"<field>\"); nothing was loaded (--skip-bad-features loads the rest)"]
    # mapped as the line says, the first file loads
    mapping = tmp_path / "permits.toml"
    mapping.write_text('[fields]\ndecided_on = "decision_date"\n')
    assert ingest(db_url, "permit", path, mapping=mapping).inserted == 2
    assert _permits(engine) == [("24-001", "approved", "2024-04-09"),
                                ("24-009", "under_review", None)]
    # a file without the column leaves a stored date as it is: a status change loads...
    write_csv(bare, ["permit_no", "status"], [["24-001", "expired"], ["24-009", "approved"]])
    with pytest.raises(IngestRefused, match=r"feature 2 \(key 24-009\): decided_on: "):
        ingest(db_url, "permit", bare)  # ...but not for a permit with no date stored
    write_csv(bare, ["permit_no", "status"], [["24-001", "expired"]])
    assert ingest(db_url, "permit", bare).changed == 1
    assert _permits(engine) == [("24-001", "expired", "2024-04-09"),
                                ("24-009", "under_review", None)]


def test_skip_bad_features_skips_a_permit_without_a_decision_date(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_csv(tmp_path / "permits.csv", ["permit_no", "status", "decided_on"],
                     [["24-001", "approved", "2024-04-09"], ["24-002", "approved", ""],
                      ["24-003", "applied", ""]])
    assert main(["--db", db_url, "ingest", "permit", str(path), "--skip-bad-features"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("permits.csv: 3 features into permit: 2 new, 0 changed, 0 closed, "
                             "0 unchanged, 1 skipped"), out
    assert out[1].startswith("  skipped: permits.csv: feature 2 (key 24-002): decided_on: "
                             f"skipped: {NO_DATE} (field decided_on is empty)"), out
    assert [p[0] for p in _permits(engine)] == ["24-001", "24-003"]
    # a file none of whose features can be loaded is refused all the same
    write_csv(path, ["permit_no", "status"], [["24-004", "approved"]])
    _refused_cli(db_url, engine, capsys, "permit", path, "--skip-bad-features")


# --- 2. fields that map to no column are named ---------------------------------------------

def test_unmapped_fields_are_named_after_every_ingest_with_likely_mappings(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = write_csv(tmp_path / "permits.csv",
                     ["permit_no", "status", "decided_on", "approval_date", "expiration_date",
                      "notes"],
                     [["24-001", "approved", "2024-04-09", "2024-04-09", "2027-04-09", "x"]])
    assert main(["--db", db_url, "ingest", "permit", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    line = ("permits.csv: 3 fields map to no column (kept in source_attributes): approval_date, "
            "expiration_date (likely expires_on: [fields] expires_on = \"expiration_date\"), "
            "notes")  # decided_on is delivered: approval_date is not suggested for it
    assert out[1] == line, out
    assert json.loads(scalar(engine, "SELECT source_attributes::text FROM core.permit")) == {
        "permit_no": "24-001", "status": "approved", "decided_on": "2024-04-09",
        "approval_date": "2024-04-09", "expiration_date": "2027-04-09", "notes": "x"}
    assert line in [r[0] for r in rows(engine, "SELECT message FROM ops.batch_note "
                                               "WHERE kind = 'info'")]
    # the same file again: nothing loaded, the fields named all the same
    result = ingest(db_url, "permit", path)
    assert result.status == "duplicate"
    assert (result.unmapped, result.likely, result.unmapped_line) == (
        ["approval_date", "expiration_date", "notes"], {"expiration_date": "expires_on"}, line)
    # the date synonyms, and a reference's number
    names = {"decision_date": "decided_on", "decided": "decided_on", "approved_on": "decided_on",
             "application_date": "applied_on", "baseline_date": "baseline_on"}
    for name, column in names.items():
        write_csv(path, ["permit_no", "status", name], [["24-002", "applied", "2024-01-02"]])
        assert ingest(db_url, "permit", path).likely == {name: column}, name
    impacts = write_gpkg(tmp_path / "impacts.gpkg", [
        {"feature_key": "I1", "permit_number": "24-001", "kind": "fill", "geometry": square(0)}])
    with pytest.raises(IngestRefused, match=r"layer impact needs permit_id, but the file has no "
                       r"field for it \(its fields are: feature_key, permit_number, kind\); "
                       r"rename the field, or map it in a mapping file \(\[fields\] permit_id "
                       r"= \"permit_number\"\)"):
        ingest(db_url, "impact", impacts)
    assert main(["--db", db_url, "ingest", "impact", str(impacts), "--permit", "24-001",
                 "--format", "json"]) == 0
    out = {r["item"]: r["value"] for r in json.loads(capsys.readouterr().out)}
    assert out["new"] == 1
    assert out["unmapped"] == ("impacts.gpkg: 1 field maps to no column (kept in "
                               "source_attributes): permit_number")
    # every field mapped: no line
    write_csv(path, ["permit_no", "status"], [["24-003", "applied"]])
    result = ingest(db_url, "permit", path)
    assert (result.unmapped, result.unmapped_line) == ([], None)


# --- 3. --permit does not move another permit's features ------------------------------------

def test_permit_option_refuses_features_that_carry_another_permit(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    write_csv(tmp_path / "permits.csv", ["permit_no", "status", "decided_on"],
              [["24-001", "approved", "2024-04-09"], ["24-002", "approved", "2024-05-14"]])
    ingest(db_url, "permit", tmp_path / "permits.csv")
    path = write_gpkg(tmp_path / "impacts.gpkg", [
        {"feature_key": "I1", "permit_key": "24-001", "kind": "fill", "geometry": square(0)},
        {"feature_key": "I2", "permit_key": None, "kind": "fill", "geometry": square(1)},
        {"feature_key": "I3", "permit_key": "24-002", "kind": "fill", "geometry": square(2)},
        {"feature_key": "I4", "permit_key": "24-002", "kind": "fill", "geometry": square(3)}])
    err = _refused_cli(db_url, engine, capsys, "impact", path, "--permit", "24-001")
    assert err == [
        "rulem-db ingest: impacts.gpkg: feature 3 (key I3): permit_id: carries permit 24-002 "
        "(field permit_key), but --permit 24-001 assigns every feature to permit 24-001 (and 1 "
        "more feature); load the file without --permit, or deliver one permit's features per "
        "file"]
    with pytest.raises(IngestRefused, match="carries permit 24-002"):
        ingest(db_url, "impact", path, permit="24-001", skip_bad_features=True)
    assert scalar(engine, "SELECT count(*) FROM core.impact") == 0
    # features with the same number, or none, are fine
    same = write_gpkg(tmp_path / "same.gpkg", [
        {"feature_key": "I1", "permit_key": "24-001", "kind": "fill", "geometry": square(0)},
        {"feature_key": "I2", "permit_key": "", "kind": "fill", "geometry": square(1)}])
    assert ingest(db_url, "impact", same, permit="24-001").inserted == 2
    assert [tuple(r) for r in rows(engine, "SELECT f.feature_key, p.permit_no FROM pub.impact i "
                                           "JOIN core.feature f ON f.feature_id = i.impact_id "
                                           "JOIN pub.permit p USING (permit_id) ORDER BY 1")] == [
        ("24-001/I1", "24-001"), ("24-001/I2", "24-001")]
