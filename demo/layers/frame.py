"""The frame everything else sits in: the plan area (cwmp_area), the central wetland seed
(central_wetland_seed) and the parcels (parcel), with the PINs the parcels are delivered with,
their site addresses and owners.

The plan area is 2,500 m x 2,000 m; local coordinates are metres east and north
of ``ORIGIN`` (its south-west corner). Layout, south to north: parcel row R1 (y 0-340), Main
Street right of way (340-370, a gap), row R2 (370-1000), row R3 (1000-1650), row R4 (1650-2000,
split by the Lake Drive right of way at x 1235-1265). The central wetland complex is a band
W-001..W-004 at y 880-1120/1190 from x 200 to 2300 with ACD 53-62 along y = 990; the R2/R3 lot
line (y = 1000) runs through it, so every band polygon straddles two parcels. W-005 touches the
band; W-006 is central only through ACD 53-62 Lateral 1; W-010..W-019 are isolated.

Why together: the parcel layout is what every permit is placed on (``Site.parcels`` are layout
ids), and its PINs are what cases.toml's ``pins`` are matched on.
"""

from __future__ import annotations

import re

from shapely.geometry import Polygon, box

from demo.collector import Collector
from demo.geometry import PLAN_NAME, PLAN_SIZE, Rect, Ring, rect

CENTRAL_SEED: Rect = (220, 895, 2280, 1105)


def _r(x0: float, y0: float, x1: float, y1: float) -> Ring:
    """A rectangle as a ring; the parcel table reads better with corners than with boxes."""
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _row_r2_r3() -> list[tuple[str, Ring]]:
    """R2 (y 370-1000) and R3 (y 1000-1650): ten 250 m columns each, quarter-quarter style."""
    out: list[tuple[str, Ring]] = []
    for row, (y0, y1) in (("R2", (370.0, 1000.0)), ("R3", (1000.0, 1650.0))):
        out += [(f"{row}-{i:02d}", _r(250.0 * i, y0, 250.0 * (i + 1), y1)) for i in range(10)]
    return out


PARCEL_LAYOUT: tuple[tuple[str, Ring], ...] = (
    ("R1-01", _r(0, 0, 180, 340)),
    ("R1-02", _r(180, 0, 430, 340)),
    ("R1-03", ((430, 0), (640, 0), (700, 340), (430, 340))),  # slanted lot line
    ("R1-04", ((640, 0), (1000, 0), (1000, 340), (700, 340))),
    ("R1-05", _r(1000, 0, 1250, 340)),
    ("R1-06", _r(1250, 0, 1500, 340)),
    ("R1-07", _r(1500, 0, 1760, 340)),
    ("R1-08", ((1760, 0), (2000, 0), (2000, 240), (1900, 240), (1900, 340), (1760, 340))),
    ("R1-09", _r(1900, 240, 2000, 340)),  # homestead cut out of R1-08
    ("R1-10", _r(2000, 0, 2260, 340)),
    ("R1-11", _r(2260, 0, 2500, 340)),
    *_row_r2_r3(),
    ("R4-01", _r(0, 1650, 220, 2000)),
    ("R4-02", _r(220, 1650, 480, 2000)),
    ("R4-03", ((480, 1650), (740, 1650), (700, 2000), (480, 2000))),
    ("R4-04", ((740, 1650), (1000, 1650), (1000, 2000), (700, 2000))),
    ("R4-05", _r(1000, 1650, 1235, 2000)),
    ("R4-06", _r(1265, 1650, 1520, 2000)),
    ("R4-07", _r(1520, 1650, 1780, 2000)),
    ("R4-08", _r(1780, 1650, 2040, 2000)),
    ("R4-09", _r(2040, 1650, 2280, 2000)),
    ("R4-10", _r(2280, 1650, 2500, 2000)),
)
SPACED_PIN = "R1-09"  # delivered with spaces instead of dashes, to exercise normalization
# Site addresses: the street each row fronts, the house number from the lot's position (even
# on the south side of Main Street, odd on the north); owners are invented, several owning
# more than one lot (the map's search finds a parcel by either).
STREET_BY_ROW = {"R1": "Main Street", "R2": "Main Street", "R3": "Marsh View Lane",
                 "R4": "County Road 14"}
OWNERS = ("Anderson Family Trust", "Carlson, Erik & Maria", "Lindqvist Farms LLC",
          "Nguyen, Thanh", "Olson, Karen", "Rice Creek Holdings LLC", "Johnson, Peter & Ruth",
          "Schmidt Dairy Inc", "Peterson, Ole", "Hmong American Farmers Coop",
          "Bergstrom, Linnea", "Lino Lakes Land Co", "Kowalski, Anna", "Dahl, Marcus")


def pin_for(layout_id: str) -> str:
    """The raw Anoka-style PIN (section-township-range-quarter-parcel) of a layout parcel.

    The four plan quadrants stand for sections 15, 14 (north) and 22, 23 (south) of T31N
    R22W; the quarter and quarter-quarter digits (1 NE, 2 NW, 3 SW, 4 SE) follow from the
    parcel's centroid, and the last four digits count parcels within that quarter-quarter.
    """
    return _PINS[layout_id]


def _quarter(u: float, v: float) -> int:
    return (2 if u < 0.5 else 1) if v >= 0.5 else (3 if u < 0.5 else 4)


def _compute_pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    seq: dict[tuple[int, str], int] = {}
    for layout_id, ring in PARCEL_LAYOUT:
        c = Polygon(ring).centroid
        west, north = c.x < 1250.0, c.y >= 1000.0
        section = {(True, True): 15, (False, True): 14, (True, False): 22,
                   (False, False): 23}[(west, north)]
        u = (c.x - (0.0 if west else 1250.0)) / 1250.0
        v = (c.y - (1000.0 if north else 0.0)) / 1000.0
        qq = f"{_quarter(u, v)}{_quarter((u * 2) % 1, (v * 2) % 1)}"
        n = seq[(section, qq)] = seq.get((section, qq), 0) + 1
        sep = " " if layout_id == SPACED_PIN else "-"
        pins[layout_id] = sep.join((f"{section:02d}", "31", "22", qq, f"{n:04d}"))
    return pins


_PINS = _compute_pins()


def normalize_pin(pin: str) -> str:
    """The matching key of a PIN: punctuation and spaces removed, upper case."""
    return re.sub(r"[^0-9A-Za-z]", "", pin).upper()


def parcel_key(layout_id: str) -> str:
    """A layout parcel's feature_key, its normalized PIN."""
    return normalize_pin(pin_for(layout_id))


def parcel_geometry(layout_id: str) -> Polygon:
    """A layout parcel's polygon, local metres."""
    return Polygon(dict(PARCEL_LAYOUT)[layout_id])


def build_frame(c: Collector) -> None:
    """Plan area, central seed and parcels: the frame everything else sits in."""
    c.add("cwmp_area", PLAN_NAME, box(0.0, 0.0, *PLAN_SIZE), name=PLAN_NAME,
          adopted_on="2004-01-28")
    c.add("central_wetland_seed", "CWS-001", rect(CENTRAL_SEED),
          name="ACD 53-62 central wetland complex (CWMP Map 2)")
    for i, (layout_id, ring) in enumerate(PARCEL_LAYOUT):
        pin = pin_for(layout_id)
        c.add("parcel", normalize_pin(pin), Polygon(ring), pin=pin,
              pin_normalized=normalize_pin(pin), site_address=site_address(layout_id, ring),
              owner_name=OWNERS[i * 5 % len(OWNERS)])


def site_address(layout_id: str, ring: Ring) -> str:
    """A lot's invented address: its row's street, a number from its centre's position."""
    row = layout_id[:2]
    number = 100 + 2 * int(Polygon(ring).centroid.x // 10) + (row in ("R2", "R4"))
    return f"{number} {STREET_BY_ROW[row]}"
