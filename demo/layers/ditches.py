"""The ditches (ditch): ACD 53-62 in segments along the central band, its laterals and two
private ditches, each with the on-site determination that found it (3(f)).

Why its own module: a ditch segment is credited to the permit whose determination found it, so
the ditches are the one plan-wide layer that reads the permits' table.
"""

from __future__ import annotations

from shapely.geometry import LineString, MultiLineString

from demo.collector import Collector
from demo.geometry import XY
from demo.sites import SITE_BY_PERMIT

# Ditches: key -> (line vertices, system id, permit or None, status).
MAIN_DITCH_PERMITS = (None, "24-001", "24-001", "24-002", "24-004", "24-005", "24-005",
                      "24-007", None, None)  # by R2 column: the site that determined it
EXTRA_DITCHES: dict[str, tuple[tuple[XY, ...], str | None, str | None, str]] = {
    "DT-011": (((660, 1100), (660, 1430)), "ACD 53-62 Lateral 1", None, "active"),
    "DT-012": (((900, 1150), (900, 1350)), "ACD 53-62 Lateral 2", None, "abandoned"),
    "DT-013": (((2200, 1100), (2200, 1300)), "ACD 53-62 Lateral 3", "24-003",
               "partially_abandoned"),
    "DT-014": (((1260, 330), (1490, 330)), None, "24-006", "active"),  # private field ditch
    "DT-015": (((1270, 1655), (1270, 1995)), None, "24-008", "active"),  # Lake Drive ditch
}


def build_ditches(c: Collector) -> None:
    """ACD 53-62 in segments (one per R2 column, each credited to the on-site determination
    that found it, 3(f)) and the laterals and private ditches."""
    for i, permit in enumerate(MAIN_DITCH_PERMITS):
        line = LineString([(250.0 * i, 990.0), (250.0 * (i + 1), 990.0)])
        _add_ditch(c, f"DT-{i + 1:03d}", line, "ACD 53-62", permit, "active")
    for key, (coords, system, permit, status) in EXTRA_DITCHES.items():
        _add_ditch(c, key, LineString(coords), system, permit, status)


def _add_ditch(c: Collector, key: str, line: LineString, system: str | None,
               permit: str | None, status: str) -> None:
    site = SITE_BY_PERMIT.get(permit) if permit else None
    c.add("ditch", key, MultiLineString([line]), system_id=system, permit_key=permit,
          determined_on=site.applied_on if site else "2003-06-30",
          determined_by=site.consultant if site else "CWMP field survey (2003)", status=status)
