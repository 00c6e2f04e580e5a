"""Acceptance on the demo plan area: every check a demo permit was built to fail finds it, on
that permit, with the figure the demo states; the permits built to pass have no finding.

The demo (etl/demo.py, DEMO_CASES) is loaded the ordinary way, through ingest in its
manifest's load order (etl/load_demo.py).
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from checks_scenarios import cloned_database
from sqlalchemy.engine import URL

from etl import demo, load_demo
from rulem_db import checks


@pytest.fixture(scope="module")
def demo_findings(tmp_path_factory: pytest.TempPathFactory, admin_url: URL, template_db: str):
    """The demo loaded into a fresh database and checked once; its findings by permit."""
    with cloned_database(admin_url, template_db) as engine:
        url = engine.url.render_as_string(hide_password=False)
        directory = tmp_path_factory.mktemp("demo")
        demo.generate(directory)
        load_demo.load_demo(url, directory)
        summary = checks.run_checks(url)
        found: dict[str, list[dict]] = {}
        for f in checks.findings(url):
            found.setdefault(f["permit_no"], []).append(f)
        with engine.connect() as conn:
            catalogue = {tuple(r) for r in conn.execute(sa.text(
                "SELECT paragraph, check_code FROM checks.rule_check"))}
        yield summary, found, catalogue


def _matches(expected: str, paragraph: str, code: str) -> bool:
    """'5(c) biofiltration_share' names the check by code and by its paragraph or a parent of
    it (the finding says 5(c)(iii))."""
    want_paragraph, want_code = expected.split(" ")
    return code == want_code and paragraph.startswith(want_paragraph)


@pytest.mark.slow
def test_each_permit_fails_exactly_the_checks_it_was_built_to_fail(demo_findings) -> None:
    summary, found, catalogue = demo_findings
    assert summary.permits == len(demo.DEMO_CASES)
    for permit, case in demo.DEMO_CASES.items():
        got = {(f["paragraph"], f["check_code"]) for f in found.get(permit, [])}
        for expected in case["fails"]:
            assert any(_matches(expected, p, c) for p, c in catalogue), expected
            assert any(_matches(expected, p, c) for p, c in got), (permit, expected, got)
        extra = {g for g in got if not any(_matches(e, *g) for e in case["fails"])}
        assert not extra, (permit, extra)
    assert set(found) <= set(demo.DEMO_CASES)  # nothing on District projects either


@pytest.mark.slow
def test_the_demo_figures(demo_findings) -> None:
    _, found, _ = demo_findings

    def measured(permit: str, code: str) -> list[float]:
        return sorted(float(f["measured_value"]) for f in found[permit]
                      if f["check_code"] == code)

    c4, c5, c6, c7 = (demo.DEMO_CASES[p] for p in ("24-004", "24-005", "24-006", "24-007"))
    (mean,) = measured("24-004", "buffer_avg_width")
    assert mean == pytest.approx(c4["buffer"]["mean_ft"], abs=0.1)  # transects vs exact
    assert measured("24-004", "trail_width") == [c4["buffer"]["trail_width_ft"]]
    assert measured("24-005", "marker_gap") == pytest.approx(
        list(c5["markers"]["gaps_over_200_ft"]), abs=0.01)
    assert len(measured("24-005", "marker_lot_line")) == c5["markers"]["unmarked_crossings"]
    assert measured("24-006", "heritage_wetland_impact") == [c6["heritage_b_impact_acres"]]
    assert measured("24-006", "heritage_upland_excavation") == [
        c6["heritage_bc_overlap_acres"]]
    assert measured("24-007", "easement_coverage") == [c7["easement_uncovered_acres"]]
    c8 = demo.DEMO_CASES["24-008"]
    bio = [f for f in found["24-008"] if f["check_code"] == "biofiltration_share"][0]
    sw = c8["stormwater"]["SW-008"]
    assert float(bio["measured_value"]) == sw["biofiltration"]
    assert float(bio["limit_value"]) == round(0.2 * sw["v_cd_cuft"])
    (bounce,) = measured("24-008", "bounce")
    assert bounce == pytest.approx(c8["hydroperiod"]["W-017"][1])
    (road,) = measured("24-008", "structure_in_wetland")
    assert road == pytest.approx(round(c8["road_in_wetland_m2"] / 4046.8564224, 4))
