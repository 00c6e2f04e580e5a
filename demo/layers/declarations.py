"""The recorded instruments of a permit: its declarations (declaration, sections 6 and 10) and
its easement (easement, section 8), with the County Recorder's document numbers they carry.

Why together: both are recorded a month after the decision (``demo.sites.recorded_on``) from the
same seeded run of document numbers.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from shapely.geometry.base import BaseGeometry
from shapely.ops import unary_union

from demo.collector import Collector
from demo.geometry import fill_holes, polygonal, rect
from demo.layers.frame import parcel_geometry
from demo.layers.wetlands import BASELINE_WETLANDS
from demo.sites import Site, recorded_on


def recording_numbers(rng: random.Random, n: int) -> list[str]:
    """Anoka County Recorder-style document numbers, unique, seeded."""
    return [f"{d}.001" for d in rng.sample(range(2_090_000, 2_100_000), n)]


def build_declarations(c: Collector, s: Site, docs: Iterable[str],
                       buffer_doc: str | None) -> None:
    """A permit's declarations, recorded a month after the decision: the buffer's carries the
    number drawn with the buffer; a public-land agreement in its place is executed, not
    recorded, so it has no number."""
    docs = iter(docs)
    for kind in s.declarations:
        public = kind == "buffer" and s.buffer_public
        number = buffer_doc if kind == "buffer" else next(docs)
        c.add("declaration", c.next_key("DC"), None, permit_key=s.permit_no, kind=kind,
              recording_no=None if public else number,
              recorded_on=None if public else recorded_on(s), public_land_agreement=public,
              subdivision_clause=s.subdivision_clause if kind == "buffer" and not public
              else None,
              conveyance_clause=True if public else None,
              executed_by=s.agreement_executed_by if public else None)


def site_parcels(s: Site) -> BaseGeometry:
    """Union of a site's parcels, local metres."""
    return unary_union([parcel_geometry(p) for p in s.parcels])


def build_easement(c: Collector, s: Site, doc: str) -> None:
    """Easement over, per permitted parcel, all baseline wetland (holes filled, impact
    footprints included so the 8 check passes whether or not it subtracts impacts), the buffer
    and the replacement areas; minus the designed gap of case 7. None where the parcels hold
    none of these, or for a site that records none (24-009: an easement is recorded at
    issuance, and it is undecided)."""
    parcels = site_parcels(s)
    wet = unary_union([fill_holes(rect(r, h)) for r, h, *_ in BASELINE_WETLANDS.values()])
    parts = [wet.intersection(parcels)]
    parts += [rect(r) for r in s.buffer] + [rect(r[2]) for r in s.replacements]
    need = unary_union(parts).intersection(parcels)
    if s.easement_gap:
        need = need.difference(rect(s.easement_gap))
    if not s.easement or need.area == 0:
        return
    c.add("easement", c.next_key("E"), polygonal(need), permit_key=s.permit_no,
          grantor=s.applicant, recording_no=doc, recorded_on=recorded_on(s))
