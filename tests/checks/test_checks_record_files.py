"""Permit records (docs/rule-m.md, "Permit records") arrive like every layer: from a delivered
file through ingest, with their facts as JSON text, or drawn by staff through edit.permit_record;
the checks read them either way, and a bad record is refused in one line that changes nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, write_csv

from etl.ingest import ingest
from rulem_cli.main import main

HEADER = ["feature_key", "permit_no", "kind", "title", "requested_on", "submitted_on",
          "approved_on", "approved_by", "document_ref", "facts"]


def _permit(url: str, tmp_path: Path) -> None:
    ingest(url, "permit", write_csv(tmp_path / "permits.csv",
                                    ["permit_no", "status", "decided_on"],
                                    [["24-001", "approved", "2024-06-01"]]))


def test_records_load_from_a_file_and_the_checks_read_their_facts(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    _permit(db_url, tmp_path)
    ingest(db_url, "permit_record", write_csv(tmp_path / "records.csv", HEADER, [
        ["PR-1", "24-001", "groundwater", "Groundwater flow analysis", "", "2024-03-01", "", "",
         "GWA-1", '{"existing_flow": 850, "proposed_flow": 680, "unit": "gpd"}'],
        ["PR-2", "24-001", "species_assessment", "Turtle survey", "2024-04-01", "", "", "", "",
         ""],
        ["PR-3", "24-001", "marker_design", "Markers", "", "2024-03-01", "2024-06-15", "staff",
         "MDA-1", ""]]))
    published = rows(engine, "SELECT kind, approved_by, facts ->> 'unit' AS unit "
                             "FROM pub.permit_record ORDER BY kind")
    assert [tuple(r) for r in published] == [("groundwater", None, "gpd"),
                                             ("marker_design", "staff", None),
                                             ("species_assessment", None, None)]
    with engine.begin() as conn:  # grading: the work 5(f) asks the analysis of
        conn.execute(sa.text(
            "INSERT INTO core.cwmp_area (plan_area_id, name, geom) VALUES (1, 'Test CWMP', "
            "ST_Multi(ST_MakeEnvelope(499000, 4999000, 501000, 5001000, 26915)))"))
        conn.execute(sa.text(
            "INSERT INTO core.grading (plan_area_id, permit_id, alters_runoff_to_wetland, geom) "
            "SELECT 1, permit_id, false, ST_Multi(ST_MakeEnvelope(500000, 5000000, 500100, "
            "5000100, 26915)) FROM core.permit WHERE valid_to IS NULL"))
    with engine.connect() as conn:
        flow = conn.execute(sa.text(
            "SELECT passed, measured_value FROM checks.check_stormwater_records(1, NULL) "
            "WHERE check_code = 'groundwater_flow'")).one()
        asked = conn.execute(sa.text(
            "SELECT passed, message FROM checks.check_requests(1, NULL)")).one()
    assert (flow.passed, float(flow.measured_value)) == (False, 0.8)  # 680 / 850
    assert not asked.passed and "on 2024-04-01; none is on record" in asked.message


@pytest.mark.parametrize(("record", "problem"), [
    (["PR-1", "24-001", "bridge_plan", "", "", "", "", "", "", ""], "kind"),
    (["PR-1", "24-001", "marker_design", "", "", "", "2024-06-15", "mayor", "", ""],
     "approved_by"),
])
def test_a_bad_record_is_refused_in_one_line(db_url: str, engine: sa.Engine, tmp_path: Path,
                                             capsys: pytest.CaptureFixture, record: list[str],
                                             problem: str) -> None:
    _permit(db_url, tmp_path)
    path = write_csv(tmp_path / "records.csv", HEADER, [record])
    before = fingerprint(engine)
    assert main(["--db", db_url, "ingest", "permit_record", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"rulem-db ingest: {path.name}: feature 1 "), err
    assert problem in err[0] and "nothing was loaded" in err[0], err
    assert fingerprint(engine) == before


def test_staff_record_an_approval_through_the_edit_view(db_url: str, engine: sa.Engine,
                                                        tmp_path: Path) -> None:
    """edit.permit_record (sql/950, from the catalogue's editable flag): a record staff add
    and then correct is a first version and a new one in core, nothing overwritten."""
    _permit(db_url, tmp_path)
    with engine.begin() as conn:
        conn.execute(sa.text(
            "INSERT INTO edit.permit_record (permit_no, kind, approved_on, approved_by, "
            "document_ref) VALUES ('24-001', 'buffer_equivalence', '2024-06-15', 'board', "
            "'BEQ-1')"))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE edit.permit_record SET document_ref = 'BEQ-1a'"))
    versions = rows(engine, "SELECT document_ref, valid_to IS NULL AS current "
                            "FROM core.permit_record ORDER BY version_id")
    assert [tuple(v) for v in versions] == [("BEQ-1", False), ("BEQ-1a", True)]
