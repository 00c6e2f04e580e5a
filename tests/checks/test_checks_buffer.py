"""Rule M section 6 on hand-built sites: buffer width on transects (6(c)), what may stand in a
buffer (6(f)), markers (6(b)), and which wetland needs a buffer at all (6(a)).

The standard site (tests/support/checks_scenarios.py) has a straight protected edge 300 ft long
along y = 0, upland to the south, and a 60 ft x 300 ft buffer, so every width is read off the
drawing.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    FT,
    Site,
    checks_engine_fixture,
    line,
    only,
    polygon,
    rect,
    site_fixture,
    sqft_to_acres,
)

SQFT_M2 = FT * FT


def widths(site: Site) -> list[float]:
    return [float(w) for w in site.conn.execute(sa.text(
        "SELECT width_ft FROM checks.buffer_transects(1, :p) ORDER BY edge_no, transect_no"),
        {"p": site.permit_id}).scalars()]


# -- 6(c) width ----------------------------------------------------------------------------
def test_60_by_300_ft_buffer_has_minimum_and_mean_width_60_ft(site: Site) -> None:
    site.standard()
    w = widths(site)
    assert len(w) == 60  # 300 ft / 5 ft
    assert min(w) == pytest.approx(60.0, abs=0.01)
    rows = site.evaluate("check_buffer_width")
    low, mean = only(rows, "buffer_min_width"), only(rows, "buffer_avg_width")
    assert low["passed"] and float(low["measured_value"]) == pytest.approx(60.0, abs=0.01)
    assert float(low["limit_value"]) == 25
    assert mean["passed"] and float(mean["measured_value"]) == pytest.approx(60.0, abs=0.01)
    assert float(mean["limit_value"]) == 50
    assert low["wkt"] is None and mean["wkt"] is None


def test_one_40_ft_stretch_gives_minimum_40_ft_and_still_passes(site: Site) -> None:
    # 60 ft deep except x 100..150, where the buffer is 40 ft deep.
    site.standard(buffer=polygon([(0, 0), (300, 0), (300, -60), (150, -60), (150, -40),
                                  (100, -40), (100, -60), (0, -60)]))
    rows = site.evaluate("check_buffer_width")
    low, mean = only(rows, "buffer_min_width"), only(rows, "buffer_avg_width")
    assert float(low["measured_value"]) == pytest.approx(40.0, abs=0.01)
    assert low["passed"]
    # 250 ft at 60 + 50 ft at 40, over 300 ft
    assert float(mean["measured_value"]) == pytest.approx((250 * 60 + 50 * 40) / 300, abs=0.01)
    assert mean["passed"]


def test_a_20_ft_stretch_fails_the_minimum_with_the_deficit_drawn(site: Site) -> None:
    site.standard(buffer=polygon([(0, 0), (300, 0), (300, -60), (150, -60), (150, -20),
                                  (100, -20), (100, -60), (0, -60)]))
    low = only(site.evaluate("check_buffer_width"), "buffer_min_width")
    assert not low["passed"]
    assert float(low["measured_value"]) == pytest.approx(20.0, abs=0.01)
    assert "10 of 60 transects" in low["message"]  # x 100..150 holds 10 stations
    # the 25 ft band lacks 50 ft x 5 ft there
    assert low["area_m2"] == pytest.approx(50 * 5 * SQFT_M2, rel=1e-6)


def test_uniform_40_ft_buffer_fails_the_mean_and_draws_the_missing_10_ft(site: Site) -> None:
    site.standard(buffer=rect(0, -40, 300, 0))
    rows = site.evaluate("check_buffer_width")
    mean = only(rows, "buffer_avg_width")
    assert not mean["passed"]
    assert float(mean["measured_value"]) == pytest.approx(40.0, abs=0.01)
    assert mean["area_m2"] == pytest.approx(300 * 10 * SQFT_M2, rel=1e-6)
    assert only(rows, "buffer_min_width")["passed"]


def test_a_trail_does_not_count_toward_width(site: Site) -> None:
    site.standard()
    # a 10 ft trail 20 ft out: its surface is left out, the buffer beyond it counts (6(f)(iv)):
    # 20 + 30 = 50 ft (more in tests/checks/test_checks_buffer_rule.py)
    site.add("trail", rect(0, -30, 300, -20), permit_id=site.permit_id, width_ft=10)
    rows = site.evaluate("check_buffer_width")
    assert float(only(rows, "buffer_min_width")["measured_value"]) == pytest.approx(50, abs=0.01)
    assert float(only(rows, "buffer_avg_width")["measured_value"]) == pytest.approx(50, abs=0.01)


def test_no_buffer_means_width_zero_everywhere(site: Site) -> None:
    site.standard()
    site.retire("buffer", site.buffer_id)
    rows = site.evaluate("check_buffer_width")
    low = only(rows, "buffer_min_width")
    assert float(low["measured_value"]) == 0 and not low["passed"]
    assert low["area_m2"] == pytest.approx(300 * 25 * SQFT_M2, rel=1e-6)


def test_buffer_drawn_over_the_wetland_is_measured_from_the_edge(site: Site) -> None:
    site.standard(buffer=rect(0, -60, 300, 10))  # overlaps 10 ft of wetland
    assert min(widths(site)) == pytest.approx(60.0, abs=0.01)


# -- 6(a) which wetland ----------------------------------------------------------------------
def test_isolated_wetland_needs_no_buffer_but_a_ditch_connects_it(site: Site) -> None:
    site.standard()
    # an isolated wetland in the parcel's south, 40 x 40 ft, unbuffered
    site.wetland(rect(100, -180, 140, -140), site.delineation_id)
    assert len(widths(site)) == 60  # still only the 300 ft central edge
    # a ditch touching both makes it central: its 160 ft edge gets transects, width 0
    site.add("ditch", line((120, -140), (120, 10)), status="active")
    w = widths(site)
    assert len(w) == 60 + 32
    assert w.count(0.0) == 32


# -- 6(f) what may stand in a buffer -------------------------------------------------------
def test_impervious_in_the_buffer_is_an_encroachment(site: Site) -> None:
    site.standard()
    inside = site.add("impervious", rect(100, -30, 110, -20), permit_id=site.permit_id,
                      condition="proposed")
    site.add("impervious", rect(100, -150, 200, -100), permit_id=site.permit_id,
             condition="proposed")
    rows = site.evaluate("check_buffer_encroachment")
    bad = only(rows, "buffer_encroachment", passed=False)
    assert bad["feature_id"] == inside
    assert float(bad["measured_value"]) == pytest.approx(round(sqft_to_acres(100), 4))
    ok = only(rows, "buffer_encroachment", passed=True)
    assert float(ok["measured_value"]) == 0


def test_structure_with_a_6fi_exception_is_not_an_encroachment(site: Site) -> None:
    site.standard()
    site.add("structure", rect(100, -60, 104, 0), permit_id=site.permit_id,
             kind="passive_recreation", buffer_exception="suspended_6fi")
    assert site.evaluate("check_buffer_encroachment") == []
    site.add("structure", rect(200, -60, 204, 0), permit_id=site.permit_id, kind="other",
             buffer_exception="none")
    bad = only(site.evaluate("check_buffer_encroachment"), "buffer_encroachment")
    assert not bad["passed"]
    assert float(bad["measured_value"]) == pytest.approx(round(sqft_to_acres(240), 4))


def test_infiltration_within_the_inner_25_ft(site: Site) -> None:
    site.standard()
    sw = site.add("subwatershed", rect(0, -200, 300, 0), permit_id=site.permit_id, name="S")
    near = site.add("bmp", rect(100, -20, 120, -10), permit_id=site.permit_id,
                    subwatershed_id=sw, kind="infiltration", volume_cuft=100,
                    roof_runoff_only=True)
    site.add("bmp", rect(100, -100, 120, -90), permit_id=site.permit_id, subwatershed_id=sw,
             kind="infiltration", volume_cuft=100, roof_runoff_only=True)
    rows = site.evaluate("check_infiltration_in_buffer")
    bad = only(rows, "infiltration_in_buffer", passed=False)
    assert bad["feature_id"] == near
    assert float(bad["measured_value"]) == 10.0 and float(bad["limit_value"]) == 25
    assert bad["area_m2"] == pytest.approx(20 * 10 * SQFT_M2, rel=1e-6)
    assert float(only(rows, "infiltration_in_buffer", passed=True)["measured_value"]) == 90.0


def test_trail_wider_than_10_ft(site: Site) -> None:
    site.standard()
    site.add("trail", rect(0, -42, 300, -30), permit_id=site.permit_id, width_ft=12)
    bad = only(site.evaluate("check_trail_width"), "trail_width")
    assert not bad["passed"] and float(bad["measured_value"]) == 12
    assert float(bad["limit_value"]) == 10


def test_trail_width_is_estimated_when_not_recorded(site: Site) -> None:
    site.standard()
    site.add("trail", rect(0, -38, 300, -30), permit_id=site.permit_id)
    ok = only(site.evaluate("check_trail_width"), "trail_width")
    # 2 x area / perimeter = 2 x 2400 / 616 ft = 7.792 ft, to 2 decimals as every ft figure
    assert ok["passed"] and float(ok["measured_value"]) == pytest.approx(7.79)
    assert "estimated" in ok["message"]


# -- 6(b) markers ------------------------------------------------------------------------------
def test_markers_250_ft_apart_leave_a_250_ft_gap(site: Site) -> None:
    site.standard()
    site.markers([(0, -60), (25, -60), (275, -60), (300, -60)])
    rows = site.evaluate("check_marker_gap")
    bad = only(rows, "marker_gap", passed=False)
    assert float(bad["measured_value"]) == pytest.approx(250.0, abs=0.01)
    assert float(bad["limit_value"]) == 200
    assert bad["length_m"] == pytest.approx(250 * FT, abs=0.01)


def test_markers_at_most_200_ft_apart_pass(site: Site) -> None:
    site.standard()
    site.markers([(0, -60), (150, -60), (300, -60)])
    rows = site.evaluate("check_marker_gap")
    assert rows and all(r["passed"] for r in rows)
    assert max(float(r["measured_value"]) for r in rows) == pytest.approx(150.0, abs=0.01)


def test_every_lot_line_crossing_needs_a_marker(site: Site) -> None:
    site.standard()
    # split the site into two lots at x = 150: the upland edge crosses that lot line
    site.retire("parcel", site.parcel_id)
    site.parcel("P1", rect(0, -200, 150, 50))
    site.parcel("P2", rect(150, -200, 300, 50))
    site.update("permit", site.permit_id, parcel_pins=["P1", "P2"])
    site.markers([(0, -60), (120, -60), (300, -60)])
    rows = site.evaluate("check_marker_lot_line")
    assert len(rows) == 3  # x = 0, 150 and 300
    bad = only(rows, "marker_lot_line", passed=False)
    assert float(bad["measured_value"]) == pytest.approx(30.0, abs=0.01)
    assert float(bad["limit_value"]) == 10
    assert bad["geom_type"] == "ST_Point"
    site.markers([(152, -60)])
    assert all(r["passed"] for r in site.evaluate("check_marker_lot_line"))


def test_flush_markers_count_only_on_public_land(site: Site) -> None:
    site.standard()
    site.markers([(0, -60), (150, -60), (300, -60)], marker_type="flush")
    assert all(not r["passed"] for r in site.evaluate("check_marker_lot_line"))
    site.update("permit", site.permit_id, public_land=True)
    assert all(r["passed"] for r in site.evaluate("check_marker_lot_line"))
