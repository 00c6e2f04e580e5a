"""The plan area's records that belong to no one permit's features: credit transfers between
permits (credit_transfer), the District's own replacement project (a replacement with no
permit) and a protected species record (species_record).

Why its own module: demo/generate.py's ``build`` makes these between the first eight permits
and the later ones, so that no key of either shifts.
"""

from __future__ import annotations

from demo.collector import Collector
from demo.geometry import Rect, rect
from demo.layers.impacts import milestones

TRANSFERS: tuple[tuple[str, str, float, str], ...] = (
    ("24-001", "24-002", 0.15, "2025-07-10"),
    ("24-001", "24-008", 0.15, "2025-07-10"),
    # within 24-005's surplus when recorded (1.4826 - 0.7413 = 0.7413), before its forcemain
    # (a structure, loaded later) was found to fill 0.0890 ac of W-003: 0.6523 left, so the
    # transfer does not stand and 24-017 gets 7(b) transfer_unbacked
    ("24-005", "24-017", 0.7, "2025-08-01"),
)
# Transfers recorded within their giver's surplus that no longer stand (docs/ledger.md
# decision 9): (giver, receiver).
UNBACKED_TRANSFERS: frozenset[tuple[str, str]] = frozenset({("24-005", "24-017")})

DISTRICT_PROJECT: tuple[str, Rect, str] = ("RCWD Lateral 2 wetland restoration",
                                           (1100, 1300, 1250, 1380), "2022-10-01")
SPECIES: tuple[str, Rect, str, str] = ("Emydoidea blandingii (Blanding's turtle)",
                                       (2040, 1340, 2160, 1460), "2023-06-12", "threatened")


def build_plan_records(c: Collector) -> None:
    """Credit transfers, the District's own replacement project and a species record."""
    for giver, taker, amount, on in TRANSFERS:
        c.add("credit_transfer", c.next_key("CT"), None, from_permit_key=giver,
              to_permit_key=taker, acres=amount, transferred_on=on)
    name, r, on = DISTRICT_PROJECT
    c.add("replacement", c.next_key("R"), rect(r), permit_key=None, district_project=name,
          component="wetland", status="certified", status_on=on,
          **milestones("certified", on))
    species, r, observed, status = SPECIES
    c.add("species_record", c.next_key("SR"), rect(r), permit_key="24-003", species=species,
          observed_on=observed, status=status)
