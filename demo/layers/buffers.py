"""What a permit draws on or in its buffer: the buffer (buffer), its trails (trail), its markers
(buffer_marker) and the structures it allows (structure: boardwalks, utilities, roads, sheds).

Why together: the section 6 checks read these against each other (markers along the buffer's
edge, trails and structures inside it), and the buffer's declaration number is drawn here.
"""

from __future__ import annotations

from collections.abc import Iterable

from shapely.geometry import Point
from shapely.ops import unary_union

from demo.collector import Collector
from demo.geometry import polygonal, rect
from demo.sites import Site


def build_buffer(c: Collector, s: Site, docs: Iterable[str]) -> str | None:
    """Buffer, trails and markers; returns the buffer declaration's recording number."""
    if not s.buffer:
        return None
    doc = None if s.buffer_public or not s.buffer_declared else next(iter(docs))
    c.add("buffer", c.next_key("B"), polygonal(unary_union([rect(r) for r in s.buffer])),
          permit_key=s.permit_no, declaration_no=doc, public_land_agreement=s.buffer_public)
    for r, width_ft in s.trails:
        c.add("trail", c.next_key("T"), rect(r), permit_key=s.permit_no, width_ft=width_ft)
    for xy in s.markers:
        c.add("buffer_marker", c.next_key("M"), Point(xy), permit_key=s.permit_no,
              marker_type=s.marker_type)
    return doc


def build_structures(c: Collector, s: Site) -> None:
    """A permit's structures, each with the variance and the 6(f) exception it claims."""
    for kind, r, variance, exception in s.structures:
        c.add("structure", c.next_key("ST"), rect(r), permit_key=s.permit_no, kind=kind,
              variance_ref=variance, buffer_exception=exception)
