"""Which plan area a file goes to: the one named with --plan-area, else the database's only one.

Why these tests: ingest used to default to the demo's plan area (acd-53-62), so a database set
up for another plan area was told about a plan area it never had, and one holding several
would have had files loaded where nobody asked. Now nothing is guessed: with several plan areas
(or none) the file is refused in one line that names it and the plan areas present, and the
database is exactly as it was. The same rule (rulem_db.db.plan_area) serves the statement and
the reconciliation flows.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from ingest_helpers import fingerprint, rows, scalar, square, write_gpkg

from etl.ingest import ingest
from etl.problems import IngestRefused
from rulem_db import db

SEVERAL = ("the database holds several plan areas (acd-53-62, ramsey-7): name one with "
           "--plan-area CODE")


def _parcels(tmp_path: Path, name: str = "parcels.gpkg") -> Path:
    return write_gpkg(tmp_path / name, [{"PIN": "P-1", "geometry": square(0)},
                                        {"PIN": "P-2", "geometry": square(1)}])


def _second_plan_area(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("SELECT core.ensure_plan_area('ramsey-7', 'Ramsey County 7')"))


def _plan_areas_of_parcels(engine: sa.Engine) -> list[tuple[str, int]]:
    return [tuple(r) for r in rows(
        engine, "SELECT pa.code, count(*) FROM core.parcel p JOIN core.plan_area pa "
                "USING (plan_area_id) GROUP BY pa.code ORDER BY pa.code")]


def test_without_plan_area_the_only_one_is_used(db_url: str, engine: sa.Engine,
                                                tmp_path: Path) -> None:
    result = ingest(db_url, "parcel", _parcels(tmp_path))
    assert (result.status, result.inserted) == ("loaded", 2)
    assert _plan_areas_of_parcels(engine) == [("acd-53-62", 2)]


def test_with_several_plan_areas_and_none_named_the_file_is_refused(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    _second_plan_area(engine)
    before = fingerprint(engine)
    with pytest.raises(IngestRefused) as refused:
        ingest(db_url, "parcel", _parcels(tmp_path))
    assert refused.value.lines() == [f"parcels.gpkg: {SEVERAL}"]
    assert fingerprint(engine) == before  # not even a batch record


def test_the_command_line_says_so_in_one_line(db_url: str, engine: sa.Engine, tmp_path: Path,
                                              capsys: pytest.CaptureFixture) -> None:
    from rulem_cli.main import main

    _second_plan_area(engine)
    before = fingerprint(engine)
    assert main(["--db", db_url, "ingest", "parcel", str(_parcels(tmp_path))]) == 1
    assert capsys.readouterr().err.splitlines() == [f"rulem-db ingest: parcels.gpkg: {SEVERAL}"]
    assert fingerprint(engine) == before


def test_with_plan_area_named_the_file_goes_there(db_url: str, engine: sa.Engine,
                                                  tmp_path: Path) -> None:
    from rulem_cli.main import main

    _second_plan_area(engine)
    result = ingest(db_url, "parcel", _parcels(tmp_path), plan_area="ramsey-7")
    assert (result.status, result.inserted) == ("loaded", 2)
    assert main(["--db", db_url, "ingest", "parcel", str(_parcels(tmp_path, "other.gpkg")),
                 "--plan-area", "acd-53-62"]) == 0
    assert _plan_areas_of_parcels(engine) == [("acd-53-62", 2), ("ramsey-7", 2)]


def test_an_unknown_or_missing_plan_area_names_those_present(db_url: str, engine: sa.Engine,
                                                            tmp_path: Path) -> None:
    path = _parcels(tmp_path)
    with pytest.raises(IngestRefused, match=r"^parcels.gpkg: no plan area 'nowhere' in this "
                       r"database \(known: acd-53-62\)$"):
        ingest(db_url, "parcel", path, plan_area="nowhere")
    assert scalar(engine, "SELECT count(*) FROM ops.batch") == 0
    # plan areas are permanent (a trigger refuses the DELETE), so the empty case is seen in a
    # transaction that sets triggers aside and is rolled back
    with engine.connect() as conn, conn.begin() as tx:
        conn.execute(sa.text("SET LOCAL session_replication_role = replica"))
        conn.execute(sa.text("DELETE FROM core.plan_area"))
        with pytest.raises(db.PlanAreaUnclear, match="^the database holds no plan area yet: "
                           "create one with rulem-db db init --plan-area CODE"):
            db.plan_area(conn, None)
        tx.rollback()


def test_the_statement_and_the_flows_resolve_it_the_same_way(db_url: str,
                                                             engine: sa.Engine) -> None:
    from flows import runs

    with engine.connect() as conn:
        assert db.plan_area_code(conn, None) == "acd-53-62"
    assert runs.plan_area(db_url, None).code == "acd-53-62"
    _second_plan_area(engine)
    with engine.connect() as conn, pytest.raises(db.PlanAreaUnclear, match=re.escape(SEVERAL)):
        db.plan_area_code(conn, None)
    with pytest.raises(ValueError, match=r"several plan areas \(acd-53-62, ramsey-7\)"):
        runs.plan_area(db_url, None)
    assert runs.plan_area(db_url, "ramsey-7").name == "Ramsey County 7"
