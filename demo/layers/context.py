"""The CWMP's maps the checks read by place: soils (soil), Natural Heritage communities
(heritage_area) and the Figure 5 replacement zones (figure5_area).

Why together: plan-wide layers no permit owns, each a table of rectangles with their attributes.
"""

from __future__ import annotations

from demo.collector import Collector
from demo.geometry import Rect, rect

# Soils: key -> (rect, hole or None, mukey, musym, group, high groundwater, contaminated).
SoilRow = tuple[Rect, Rect | None, str, str, str, bool, bool]
SOILS: dict[str, SoilRow] = {
    "S-001": ((0, 860, 2500, 1140), None, "2427101", "1030", "A/D", True, False),  # muck
    "S-002": ((0, 0, 875, 860), None, "2427102", "NeB", "B", False, False),
    "S-003": ((875, 0, 1000, 860), None, "2427103", "KcA", "C", False, False),
    "S-004": ((1000, 0, 1750, 860), None, "2427104", "ZmB", "A", False, False),
    "S-005": ((1750, 0, 2500, 860), None, "2427102", "NeB", "B", False, False),
    "S-006": ((0, 1140, 1250, 2000), (100, 1800, 200, 1900), "2427103", "KcA", "C", False,
              False),
    "S-007": ((100, 1800, 200, 1900), None, "2427103", "KcA", "C", False, True),  # old dump
    "S-008": ((1250, 1140, 2000, 2000), None, "2427105", "GcA", "D", False, False),
    "S-009": ((2000, 1140, 2500, 2000), None, "2427106", "DuA", "A", True, False),
}

# Heritage: key -> (rect, rank, community kind, community name).
HERITAGE: dict[str, tuple[Rect, str, str, str]] = {
    "HA-001": ((1380, 60, 1500, 300), "BC", "upland", "Oak Savanna (Southern)"),
    "HA-002": ((780, 60, 960, 200), "C", "upland", "Oak Woodland-Brushland"),
    "HA-003": ((1270, 20, 1370, 100), "B", "wetland", "Tamarack Swamp (Southern)"),
    "HA-004": ((1300, 1050, 1500, 1180), "A", "wetland", "Sedge Meadow"),
}

FIGURE5: dict[str, tuple[Rect, str, str]] = {
    "F5-001": ((250, 690, 2000, 850), "South fringe restoration", "3"),
    "F5-002": ((700, 40, 1000, 300), "Main Street basin", "2"),
    "F5-003": ((1280, 130, 1440, 270), "Tamarack upland basin", "3"),
    "F5-004": ((2100, 1450, 2250, 1640), "North park basin", "3"),
    "F5-005": ((1050, 1250, 1350, 1450), "Lateral 2 restoration", "3"),
    "F5-006": ((2300, 1680, 2450, 1800), "East pasture basin", "3"),  # 24-011 digs type 2
}


def build_context(c: Collector) -> None:
    """Soils, Natural Heritage communities and Figure 5 zones (CWMP maps)."""
    for key, (r, hole, mukey, musym, group, high_gw, contaminated) in SOILS.items():
        c.add("soil", key, rect(r, hole), mukey=mukey, musym=musym, hydrologic_soil_group=group,
              high_groundwater=high_gw, contaminated=contaminated)
    for key, (r, rank, kind, name) in HERITAGE.items():
        c.add("heritage_area", key, rect(r), rank=rank, community_kind=kind,
              community_name=name, source_map="CWMP Map 1")
    for key, (r, zone, planned) in FIGURE5.items():
        c.add("figure5_area", key, rect(r), zone_name=zone, planned_type=planned)
