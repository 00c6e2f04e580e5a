"""Rule M section 6 as the rule words it (docs/rule-m.md, section 6), on hand-built sites.

* 6(f)(iv): a trail's surface "shall not count toward buffer width"; the buffer beyond it does.
* 6(b): on public land an approved vegetation (maintenance) plan stands in for markers.
* 6: a public-land agreement stands in for the buffer declaration only on public land.
* 6(f), 6(f)(iii): stormwater features other than infiltration features may not lie in a
  buffer.

The standard site (tests/support/checks_scenarios.py) has a straight protected edge 300 ft long
along y = 0 (x 0..300 ft), wetland to the north, upland to the south, one parcel x 0..300 ft, y
-200..50 ft, and by default a 60 ft x 300 ft buffer; coordinates are in feet, 1 ft = 0.3048 m,
43,560 ft2 = 1 acre. Every transect runs due south from y = 0.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    FT,
    Site,
    checks_engine_fixture,
    only,
    rect,
    rects,
    site_fixture,
    sqft_to_acres,
)

FIVE_M_FT = 5 / FT  # 16.4042 ft
BUFFER_FT = 82.0
TRAIL_FT = 8.0


def widths(site: Site) -> list[float]:
    return [float(w) for w in site.conn.execute(sa.text(
        "SELECT width_ft FROM checks.buffer_transects(1, :p) ORDER BY edge_no, transect_no"),
        {"p": site.permit_id}).scalars()]


def transect_lengths_ft(site: Site) -> list[float]:
    return [float(v) / FT for v in site.conn.execute(sa.text(
        "SELECT ST_Length(geom) FROM checks.buffer_transects(1, :p)"),
        {"p": site.permit_id}).scalars()]


# -- 6(f)(iv): the trail's surface is left out, the buffer beyond it counts ---------------------
def test_an_8_ft_trail_5_m_out_of_an_82_ft_buffer_leaves_74_ft(site: Site) -> None:
    # Acceptance example. Buffer y -82..0 ft; trail from 5 m = 16.4042 ft to 24.4042 ft out,
    # across all 60 transects. Each transect: 16.4042 ft of buffer, 8 ft of trail (left
    # out), 57.5958 ft of buffer out to the outer edge at 82 ft: 16.4042 + 57.5958 = 74 ft =
    # 82 - 8. Minimum 74 >= 25 and mean 74 >= 50: 6(c) passes. Stopping at the trail (the
    # old reading) gave 16.40 ft, failing both.
    site.standard(buffer=rect(0, -BUFFER_FT, 300, 0))
    site.add("trail", rect(0, -(FIVE_M_FT + TRAIL_FT), 300, -FIVE_M_FT),
             permit_id=site.permit_id, width_ft=TRAIL_FT)
    w = widths(site)
    assert len(w) == 60
    assert min(w) == pytest.approx(74.0, abs=0.01) and max(w) == pytest.approx(74.0, abs=0.01)
    # the transects are drawn out to the buffer's outer edge, 82 ft
    assert min(transect_lengths_ft(site)) == pytest.approx(82.0, abs=0.01)
    rows = site.evaluate("check_buffer_width")
    low, mean = only(rows, "buffer_min_width"), only(rows, "buffer_avg_width")
    assert low["passed"] and float(low["measured_value"]) == pytest.approx(74.0, abs=0.01)
    assert mean["passed"] and float(mean["measured_value"]) == pytest.approx(74.0, abs=0.01)


def test_a_buffer_drawn_around_the_trail_counts_the_same(site: Site) -> None:
    # The same 82 ft buffer digitized as two strips with the trail between them (y -16.4042
    # to -24.4042 ft left out of the buffer polygon): still 16.4042 + 57.5958 = 74 ft.
    site.standard(buffer=rects((0, -FIVE_M_FT, 300, 0),
                               (0, -BUFFER_FT, 300, -(FIVE_M_FT + TRAIL_FT))))
    site.add("trail", rect(0, -(FIVE_M_FT + TRAIL_FT), 300, -FIVE_M_FT),
             permit_id=site.permit_id, width_ft=TRAIL_FT)
    w = widths(site)
    assert min(w) == pytest.approx(74.0, abs=0.01) and max(w) == pytest.approx(74.0, abs=0.01)


def test_a_trail_on_the_edge_leaves_the_buffer_beyond_it(site: Site) -> None:
    # Trail y -8..0 ft right on the wetland edge of the 60 ft buffer: 60 - 8 = 52 ft (the old
    # reading gave 0: the first step was on the trail).
    site.standard()
    site.add("trail", rect(0, -8, 300, 0), permit_id=site.permit_id, width_ft=8)
    w = widths(site)
    assert min(w) == pytest.approx(52.0, abs=0.01) and max(w) == pytest.approx(52.0, abs=0.01)


def test_a_trail_on_half_the_edge_lowers_only_that_half(site: Site) -> None:
    # 8 ft trail 5 m out along x 0..150 only: 30 transects of 82 - 8 = 74 ft and 30 of 82 ft,
    # mean (30 x 74 + 30 x 82) / 60 = 78 ft.
    site.standard(buffer=rect(0, -BUFFER_FT, 300, 0))
    site.add("trail", rect(0, -(FIVE_M_FT + TRAIL_FT), 150, -FIVE_M_FT),
             permit_id=site.permit_id, width_ft=TRAIL_FT)
    mean = only(site.evaluate("check_buffer_width"), "buffer_avg_width")
    assert float(mean["measured_value"]) == pytest.approx(78.0, abs=0.01)


def test_other_wetland_across_a_strip_of_upland_still_ends_the_transect(site: Site) -> None:
    # 82 ft buffer, the 8 ft trail 5 m out, and an isolated wetland strip y -50..-45 ft inside
    # the buffer: each transect crosses 45 ft of upland (16.4042 ft buffer, 8 ft trail,
    # 20.5958 ft buffer) and stops at the wetland: 45 - 8 = 37 ft. The buffer beyond the
    # other wetland (y -82..-50) is not this edge's.
    site.standard(buffer=rect(0, -BUFFER_FT, 300, 0))
    site.add("trail", rect(0, -(FIVE_M_FT + TRAIL_FT), 300, -FIVE_M_FT),
             permit_id=site.permit_id, width_ft=TRAIL_FT)
    site.wetland(rect(0, -50, 300, -45), site.delineation_id)
    w = widths(site)
    assert len(w) == 60  # the isolated strip is not central: no edge of its own
    assert min(w) == pytest.approx(37.0, abs=0.01) and max(w) == pytest.approx(37.0, abs=0.01)


def test_a_buffer_beyond_a_gap_is_not_measured(site: Site) -> None:
    # The 60 ft buffer with the 8 ft trail 5 m out, then no buffer at all from 60 to 100 ft
    # and another buffer y -140..-100 ft (another permit's): the transects end at the first
    # buffer's outer edge, 60 - 8 = 52 ft; the far strip adds nothing.
    site.standard()
    site.add("trail", rect(0, -(FIVE_M_FT + TRAIL_FT), 300, -FIVE_M_FT),
             permit_id=site.permit_id, width_ft=TRAIL_FT)
    other = site.permit("24-002", ["P1"])
    site.add("buffer", rect(0, -140, 300, -100), permit_id=other, declaration_no="DOC-2")
    w = widths(site)
    assert min(w) == pytest.approx(52.0, abs=0.01) and max(w) == pytest.approx(52.0, abs=0.01)
    assert max(transect_lengths_ft(site)) == pytest.approx(60.0, abs=0.01)


def test_a_trail_outside_the_buffer_beyond_a_gap_adds_nothing(site: Site) -> None:
    # A trail y -90..-82 ft, 22 ft beyond the 60 ft buffer's outer edge: not enclosed, no
    # bridge across the gap: the width stays 60 ft.
    site.standard()
    site.add("trail", rect(0, -90, 300, -82), permit_id=site.permit_id, width_ft=8)
    site.add("buffer", rect(0, -140, 300, -90), permit_id=site.permit_id)
    w = widths(site)
    assert min(w) == pytest.approx(60.0, abs=0.01) and max(w) == pytest.approx(60.0, abs=0.01)


# -- 6(b): on public land an approved vegetation maintenance plan stands in for markers -------
def _marker_rows(site: Site) -> list[dict]:
    return site.evaluate("check_marker_lot_line") + site.evaluate("check_marker_gap")


def test_public_land_with_an_approved_plan_needs_no_markers(site: Site) -> None:
    # No markers at all. The standard permit's vegetation plan was approved 2024-05-01. On
    # private land the upland edge (x = 0 side 60 ft + 300 ft + x = 300 side 60 ft = 420 ft,
    # less the 5 cm = 0.164 ft next to the wetland at each end: 419.67 ft) is one gap > 200
    # ft, and both lot-line crossings (x = 0 and x = 300, y = -60) lack a marker.
    site.standard()
    private = _marker_rows(site)
    assert [r for r in private if not r["passed"]]
    assert float(only(private, "marker_gap")["measured_value"]) == pytest.approx(
        420 - 2 * 0.05 / FT, abs=0.01)
    site.update("permit", site.permit_id, public_land=True)
    public = _marker_rows(site)
    assert len(public) == 2 and all(r["passed"] for r in public)
    assert all("vegetation plan approved 2024-05-01" in r["message"] for r in public)


def test_public_land_without_an_approved_plan_still_needs_markers(site: Site) -> None:
    site.standard(public_land=True, vegetation_plan_on=None)
    rows = _marker_rows(site)
    assert not only(rows, "marker_gap")["passed"]
    assert [r for r in rows if r["check_code"] == "marker_lot_line" and not r["passed"]]


def test_an_agreement_buffer_on_private_land_is_not_public_land(site: Site) -> None:
    # Flush markers at x 0, 150, 300 on the upland edge count only on public land; a buffer
    # flagged as documented by public-land agreement does not make private land public.
    site.standard(vegetation_plan_on=None)
    site.update("buffer", site.buffer_id, public_land_agreement=True)
    site.markers([(0, -60), (150, -60), (300, -60)], marker_type="flush")
    assert all(not r["passed"] for r in site.evaluate("check_marker_lot_line"))
    site.update("permit", site.permit_id, public_land=True)
    assert all(r["passed"] for r in site.evaluate("check_marker_lot_line"))


# -- 6: a public-land agreement is a buffer declaration only on public land --------------------
def _buffer_declaration(site: Site) -> dict:
    return only(site.evaluate("check_declarations"), "declaration_missing", paragraph="6")


def test_a_public_land_agreement_on_private_land_is_no_declaration(site: Site) -> None:
    site.standard(declarations=False)
    site.declare("buffer", recorded=False, public_land_agreement=True)
    bad = _buffer_declaration(site)
    assert not bad["passed"] and bad["severity"] == "error"
    assert float(bad["measured_value"]) == 0
    assert "only on public land" in bad["message"]
    site.update("permit", site.permit_id, public_land=True)
    ok = _buffer_declaration(site)
    assert ok["passed"] and float(ok["measured_value"]) == 1


def test_a_recorded_declaration_counts_on_any_land(site: Site) -> None:
    site.standard()
    assert _buffer_declaration(site)["passed"]


# -- 6(f): stormwater features other than infiltration may not lie in a buffer ----------------
def _bmp(site: Site, kind: str, box: tuple[float, float, float, float]) -> int:
    sw = site.add("subwatershed", rect(0, -200, 300, 0), permit_id=site.permit_id,
                  name=f"S-{kind}-{box[0]}")
    return site.add("bmp", rect(*box), permit_id=site.permit_id, subwatershed_id=sw,
                    kind=kind, volume_cuft=1000, roof_runoff_only=False)


def test_a_wet_pond_in_the_buffer_is_an_encroachment(site: Site) -> None:
    # Wet pond x 200..240, y -80..-40: its part inside the 60 ft buffer is y -60..-40,
    # 40 x 20 = 800 ft2 = 0.018365 acres -> 0.0184; the polygon drawn is that part.
    site.standard()
    pond = _bmp(site, "wet_pond", (200, -80, 240, -40))
    bad = only(site.evaluate("check_buffer_encroachment"), "buffer_encroachment")
    assert bad["feature_id"] == pond and not bad["passed"]
    assert bad["severity"] == "error" and bad["paragraph"] == "6(f)"
    assert float(bad["measured_value"]) == pytest.approx(round(sqft_to_acres(800), 4))
    assert bad["area_m2"] == pytest.approx(800 * FT * FT, rel=1e-6)
    assert "stormwater pond" in bad["message"] and "800 ft2" in bad["message"]


def test_biofiltration_in_the_buffer_is_an_encroachment_but_not_outside(site: Site) -> None:
    # Biofiltration basin x 50..80, y -50..-30 (600 ft2, all inside the buffer) and a wet pond
    # x 50..90, y -150..-100 (outside): one failure of 600 ft2 = 0.0138 acres, one pass.
    site.standard()
    bio = _bmp(site, "biofiltration", (50, -50, 80, -30))
    _bmp(site, "wet_pond", (50, -150, 90, -100))
    rows = site.evaluate("check_buffer_encroachment")
    bad = only(rows, "buffer_encroachment", passed=False)
    assert bad["feature_id"] == bio
    assert float(bad["measured_value"]) == pytest.approx(round(sqft_to_acres(600), 4))
    assert float(only(rows, "buffer_encroachment", passed=True)["measured_value"]) == 0


def test_infiltration_in_the_outer_buffer_is_allowed(site: Site) -> None:
    # 6(f)(iii): an infiltration basin 30..50 ft from the edge is in the buffer but beyond
    # the inner 25 ft: no 6(f) evaluation, and 6(f)(iii) passes at 30 ft.
    site.standard()
    _bmp(site, "infiltration", (100, -50, 120, -30))
    assert site.evaluate("check_buffer_encroachment") == []
    ok = only(site.evaluate("check_infiltration_in_buffer"), "infiltration_in_buffer")
    assert ok["passed"] and float(ok["measured_value"]) == 30.0
