"""Replacement and permit records (docs/rule-m.md, "Permit records") load from files like every
layer, with no code of their own: a permit's impact dates, a replacement's construction and
certification dates, its monitoring years, sureties and conditions of issuance. A bad record is
refused in
one line that names the file, the feature and the problem, and leaves the database as it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import SQUARE_ACRES, fingerprint, rows, square, write_csv, write_gpkg

from etl.ingest import ingest
from rulem_cli.main import main


def _load_site(url: str, tmp_path: Path) -> None:
    """Permit 24-001 with its impact dates, and its replacement basin R-1 (a 100 m square)."""
    ingest(url, "permit", write_csv(
        tmp_path / "permits.csv",
        ["permit_no", "status", "decided_on", "impact_started_on", "impact_completed_on"],
        [["24-001", "approved", "2024-04-09", "2024-05-09", "2024-06-08"]]))
    ingest(url, "replacement", write_gpkg(tmp_path / "replacement.gpkg", [{
        "feature_key": "R-1", "permit_no": "24-001", "component": "wetland",
        "status": "certified", "status_on": "2025-06-30", "constructed_on": "2025-05-01",
        "certified_on": "2025-06-30", "geometry": square(0)}]))


def test_records_load_from_files_and_are_published(db_url: str, engine: sa.Engine,
                                                   tmp_path: Path) -> None:
    _load_site(db_url, tmp_path)
    ingest(db_url, "replacement_monitoring", write_csv(
        tmp_path / "monitoring.csv",
        ["feature_key", "replacement_key", "monitoring_year", "performance_standard", "outcome",
         "observed_on"],
        [["M-1", "R-1", "2025", "hydrology", "met", "2025-09-20"],
         ["M-2", "R-1", "2025", "vegetation", "not_met", "2025-09-20"]]))
    ingest(db_url, "financial_assurance", write_csv(
        tmp_path / "sureties.csv",
        ["feature_key", "permit_no", "replacement_key", "amount", "instrument", "posted_on",
         "released_on"],
        [["S-1", "24-001", "R-1", "24800", "letter_of_credit", "2024-05-09", ""]]))
    ingest(db_url, "permit_condition", write_csv(
        tmp_path / "conditions.csv",
        ["feature_key", "permit_no", "condition", "kind", "state", "due_on", "met_on"],
        [["C-1", "24-001", "Record the easement", "easement", "met", "2024-05-09",
          "2024-05-09"],
         ["C-2", "24-001", "Post the surety", "surety", "open", "2024-05-09", ""]]))

    [permit] = rows(engine, "SELECT impact_started_on::text, impact_completed_on::text "
                            "FROM pub.permit")
    assert tuple(permit) == ("2024-05-09", "2024-06-08")
    [rep] = rows(engine, "SELECT replacement_id, constructed_on::text, certified_on::text, "
                         "area_acres FROM pub.replacement")
    assert (rep.constructed_on, rep.certified_on) == ("2025-05-01", "2025-06-30")
    assert float(rep.area_acres) == round(SQUARE_ACRES, 4) == 2.4711
    monitoring = rows(engine, "SELECT replacement_id, monitoring_year, performance_standard, "
                              "outcome FROM pub.replacement_monitoring ORDER BY 3")
    assert [tuple(m) for m in monitoring] == [
        (rep.replacement_id, 2025, "hydrology", "met"),
        (rep.replacement_id, 2025, "vegetation", "not_met")]
    [surety] = rows(engine, "SELECT replacement_id, amount, instrument, released_on "
                            "FROM pub.financial_assurance")
    assert tuple(surety) == (rep.replacement_id, 24800, "letter_of_credit", None)
    conditions = rows(engine, "SELECT kind, state, met_on::text FROM pub.permit_condition "
                              "ORDER BY kind")
    assert [tuple(c) for c in conditions] == [("easement", "met", "2024-05-09"),
                                              ("surety", "open", None)]

    # a monitoring year delivered again with its corrected outcome is a new version: the
    # failure stays in the history
    ingest(db_url, "replacement_monitoring", write_csv(
        tmp_path / "monitoring-2.csv",
        ["feature_key", "replacement_key", "monitoring_year", "performance_standard", "outcome",
         "observed_on"],
        [["M-2", "R-1", "2025", "vegetation", "met", "2025-10-30"]]))
    history = rows(engine, "SELECT outcome, is_current FROM pub.replacement_monitoring_history "
                           "WHERE performance_standard = 'vegetation' ORDER BY valid_from")
    assert [tuple(h) for h in history] == [("not_met", False), ("met", True)]
    # records are never retired by a delivery that leaves them out (ingest scope none)
    assert len(rows(engine, "SELECT 1 FROM pub.replacement_monitoring")) == 2


BAD_RECORDS = [  # (layer, header, the one record, the rule its line names)
    ("replacement_monitoring",
     ["feature_key", "replacement_key", "monitoring_year", "performance_standard", "outcome"],
     ["M-1", "R-1", "2025", "vegetation", "failed"],
     "outcome"),
    ("financial_assurance",
     ["feature_key", "permit_no", "amount", "instrument", "posted_on", "released_on"],
     ["S-1", "24-001", "24800", "letter_of_credit", "2025-06-30", "2024-05-09"],
     "released_after_posted"),
    ("permit_condition",
     ["feature_key", "permit_no", "condition", "kind", "state", "met_on"],
     ["C-1", "24-001", "Record the easement", "easement", "met", ""],
     "met_has_date"),
]


def test_a_bad_record_is_refused_in_one_line_and_changes_nothing(
        db_url: str, engine: sa.Engine, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _load_site(db_url, tmp_path)  # one site for the three files: each refusal changes nothing
    for layer, header, record, problem in BAD_RECORDS:
        path = write_csv(tmp_path / f"{layer}.csv", header, [record])
        before = fingerprint(engine)
        assert main(["--db", db_url, "ingest", layer, str(path)]) == 1
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1, err
        assert err[0].startswith(f"rulem-db ingest: {path.name}: feature 1 "), err
        assert problem in err[0] and "nothing was loaded" in err[0], err
        assert fingerprint(engine) == before, f"refusing {layer} changed the database"
