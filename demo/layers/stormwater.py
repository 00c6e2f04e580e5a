"""A permit's section 5 work: impervious surface (impervious), grading (grading), land cover
(land_cover), its subwatershed (subwatershed), BMPs (bmp) and the hydroperiod row
(hydroperiod), with the TR-55 runoff the stormwater figures of cases.toml are worked from.

Why together: the subwatershed is what the land cover fills and the BMPs drain, and the
runoff equation and curve numbers are the ones those figures use.
"""

from __future__ import annotations

from shapely.ops import unary_union

from demo.collector import Collector
from demo.geometry import polygonal, rect
from demo.sites import Site

# TR-55 Table 2-2a rows the demo's land_cover uses; core.tr55_cover must hold these codes.
# Curve numbers for hydrologic soil groups A, B, C, D.
TR55_COVER: dict[str, tuple[str, tuple[int, int, int, int]]] = {
    "impervious": ("Impervious areas: paved parking lots, roofs, driveways", (98, 98, 98, 98)),
    "open_space_good": ("Open space, good condition (grass cover > 75%)", (39, 61, 74, 80)),
}
BMP_DESIGN_STORM_IN = 2.8


def runoff_in(cn: int, p_in: float = BMP_DESIGN_STORM_IN) -> float:
    """TR-55 runoff depth (in) for a curve number, the spec's 5(c) equation."""
    s = 1000.0 / cn - 10.0
    if p_in <= 0.2 * s:
        return 0.0
    return (p_in - 0.2 * s) ** 2 / (p_in + 0.8 * s)


def curve_number(cover_class: str, group: str) -> int:
    """CN of a cover class on a soil group; a dual group counts as its undrained D class."""
    letter = "D" if "/" in group else group
    return TR55_COVER[cover_class][1]["ABCD".index(letter)]


def build_stormwater(c: Collector, s: Site) -> None:
    """Impervious, grading, land cover, subwatershed, BMPs and the hydroperiod row."""
    for condition, r in s.impervious:
        c.add("impervious", c.next_key("IS"), rect(r), permit_key=s.permit_no,
              condition=condition)
    graded = s.grading or s.subwatershed
    if graded:
        c.add("grading", c.next_key("G"), rect(graded), permit_key=s.permit_no,
              alters_runoff_to_wetland=s.grading_alters_runoff)
    for r in s.buffer_grading:
        c.add("grading", c.next_key("G"), rect(r), permit_key=s.permit_no,
              alters_runoff_to_wetland=False)
    if s.subwatershed is None:
        return
    sw = rect(s.subwatershed)
    hard = polygonal(unary_union([rect(r) for _, r in s.impervious]).intersection(sw))
    c.add("land_cover", c.next_key("LC"), hard, permit_key=s.permit_no,
          cover_class="impervious")
    open_space = sw.difference(hard)
    if s.land_cover_gap:
        open_space = open_space.difference(rect(s.land_cover_gap))
    c.add("land_cover", c.next_key("LC"), polygonal(open_space),
          permit_key=s.permit_no, cover_class="open_space_good")
    sw_key = c.add("subwatershed", f"SW-{s.permit_no[-3:]}", sw, permit_key=s.permit_no,
                   name=f"{s.permit_no} site", receiving_wetland_key=s.receiving)
    for kind, r, volume, roof in s.bmps:
        c.add("bmp", c.next_key("BMP"), rect(r), permit_key=s.permit_no,
              subwatershed_key=sw_key, kind=kind, volume_cuft=float(volume),
              roof_runoff_only=roof)
    if s.hydro is None:
        return
    b0, b1, d0, d1 = s.hydro
    c.add("hydroperiod", c.next_key("H"), None, permit_key=s.permit_no,
          wetland_key=s.receiving, existing_bounce_ft=b0, proposed_bounce_ft=b1,
          existing_inundation_days=d0, proposed_inundation_days=d1)
