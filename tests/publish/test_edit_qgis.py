"""Editing in QGIS as staff do: Debian's QGIS 3.22 headless opens the shipped edit project
(qgis/rulem-db-edit.qgs) through a pg_service entry, as a rulem_editor login, finds its forms
(value maps, the relation to permits, defaults, constraints), changes an impact's geometry and
commits; the database versions the edit with that login, and a recompute moves the permit's
balance by the hand-worked acres. The same edit as a rulem_gis login is refused.

Data: the publishing fixture (tests/support/publish_fixture.py): permit 24-101's fill impact I-1 is
100 m x 50 m (x 150-250, y 50-100) inside the approved wetland W-3: 5,000 m^2 = 1.2355 acres
impact and required. The edit keeps its lower half, 100 m x 25 m = 2,500 m^2 = 0.6178 acres.
The QGIS set-up (its install, its environment) is tests/publish/test_publish_qgis.py's.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from clones import cloned
from publish_fixture import ORIGIN, Login, _login, gis_login, load_and_reconcile  # noqa: F401
from qgis_run import drive, qgis_environment, qgis_python  # noqa: F401
from sqlalchemy.engine import URL

from rulem_db import ledger
from rulem_db.catalogue.layers import IMPACT_KINDS
from rulem_db.paths import ROOT

pytestmark = pytest.mark.qgis

DRIVER = ROOT / "tests" / "support" / "edit_qgis_driver.py"
PROJECT = ROOT / "qgis" / "rulem-db-edit.qgs"
ACRE_M2 = 4046.8564224


def _wkt(x0: float, y0: float, x1: float, y1: float) -> str:
    ox, oy = ORIGIN
    a, b, c, d = ox + x0, oy + y0, ox + x1, oy + y1
    return f"MULTIPOLYGON((({a} {b},{c} {b},{c} {d},{a} {d},{a} {b})))"


# The edit: I-1 (x 150-250, y 50-100) keeps its lower half.
EDIT = {"layer": "impact", "where": "\"permit_no\" = '24-101'", "wkt": _wkt(150, 50, 250, 75)}


@pytest.fixture(scope="module")
def qgis_edit_url(admin_url: URL, template_db: str) -> Iterator[str]:
    """The publishing fixture, reconciled, in a database this module edits."""
    with cloned(admin_url, template_db, "rulem_qedit") as url:
        load_and_reconcile(url)
        yield url


@pytest.fixture(scope="module")
def editor_login(admin_url: URL) -> Iterator[Login]:
    yield from _login(admin_url, "rulem_editor")


def _row(url: str, sql: str) -> sa.Row:
    eng = sa.create_engine(url)
    try:
        with eng.connect() as conn:
            return conn.execute(sa.text(sql)).one()
    finally:
        eng.dispose()


def _impact(url: str) -> sa.Row:
    return _row(url, "SELECT i.version_id, i.created_by, ST_Area(i.geom) AS m2, "
                     "(SELECT count(*) FROM core.impact) AS versions "
                     "FROM core.impact i JOIN core.permit p ON p.permit_id = i.permit_id "
                     "AND p.valid_to IS NULL WHERE p.permit_no = '24-101' "
                     "AND i.valid_to IS NULL")


def test_a_gis_login_cannot_edit_through_the_edit_project(
        qgis_python: str, gis_login: Login, qgis_edit_url: str,  # noqa: F811
        tmp_path: Path) -> None:
    before = _impact(qgis_edit_url)
    env = qgis_environment(gis_login, qgis_edit_url, tmp_path / "gis")
    report = drive(qgis_python, env, {"project": str(PROJECT), "edit": EDIT}, DRIVER)
    assert report["edit"]["committed"] is False
    assert all(not la["valid"] for la in report["project"]["layers"])  # no right to read edit
    assert _impact(qgis_edit_url) == before


def test_an_editor_changes_an_impact_in_qgis_and_the_balance_moves_by_the_acres_removed(
        qgis_python: str, editor_login: Login, qgis_edit_url: str,  # noqa: F811
        tmp_path: Path) -> None:
    before = _impact(qgis_edit_url)
    assert before.m2 == pytest.approx(5000.0)
    balance = _row(qgis_edit_url, "SELECT impact_acres, required_acres, balance_acres "
                                  "FROM pub.permit_balance WHERE permit_no = '24-101'")
    assert float(balance.impact_acres) == pytest.approx(round(5000 / ACRE_M2, 4))  # 1.2355

    env = qgis_environment(editor_login, qgis_edit_url, tmp_path / "editor")
    report = drive(qgis_python, env, {"project": str(PROJECT), "edit": EDIT}, DRIVER)
    project = report["project"]
    layers = {la["name"]: la for la in project["layers"]}
    views = set(_row(qgis_edit_url, "SELECT array_agg(table_name::text) FROM "
                                    "information_schema.views WHERE table_schema = 'edit'")[0])
    assert views <= set(layers), "rebuild the edit project: qgis/build_edit_project.py"
    assert [name for name, la in layers.items() if not la["valid"]] == []
    impact = layers["impact"]
    assert impact["can_add"] and impact["can_change_geometry"] and impact["can_delete"]
    assert impact["widgets"]["permit_id"] == "RelationReference"
    assert impact["value_maps"]["kind"] == list(IMPACT_KINDS)
    assert {"kind", "permit_id"} <= set(impact["not_null"])
    assert {"impact_id", "permit_no", "version_id", "created_by"} <= set(impact["read_only"])
    assert "impact.permit_id -> permit" in project["relations"]
    assert layers["permit"]["defaults"]["status"] == "'applied'"
    assert "regexp_match" in layers["permit"]["expressions"]["permit_no"]
    assert "district_project" in layers["replacement"]["expressions"]["permit_id"]

    edit = report["edit"]
    assert (edit["found"], edit["started"], edit["changed"]) == (1, True, True)
    assert edit["committed"], edit["errors"]
    after = _impact(qgis_edit_url)
    assert after.version_id != before.version_id and after.versions == before.versions + 1
    assert after.created_by == editor_login.user          # versioned with the login's name
    assert after.m2 == pytest.approx(2500.0)
    ledger.recompute(qgis_edit_url, workers=1)            # what `rulem-db watch` runs
    moved = _row(qgis_edit_url, "SELECT impact_acres, required_acres, balance_acres "
                                "FROM pub.permit_balance WHERE permit_no = '24-101'")
    assert float(moved.impact_acres) == pytest.approx(round(2500 / ACRE_M2, 4))  # 0.6178
    # 1:1: the requirement falls by what the impact lost, and the balance rises by as much
    assert float(balance.required_acres - moved.required_acres) == pytest.approx(0.6177)
    assert float(moved.balance_acres - balance.balance_acres) == pytest.approx(0.6177)
