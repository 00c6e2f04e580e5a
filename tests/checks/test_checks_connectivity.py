"""6(a) connectivity, the central wetland: the search of the seed network (checks.seed_network,
used by checks.buffer_site_of) finds exactly what the clustering of the whole plan area
(checks.central_wetland, the rule's reading in docs/checks.md, "Buffers in detail") finds near
each permit, whatever the permit's fill cuts, its replacement bridges, the ditches join or the
delineations approved after its baseline date change.

Why a second way at all: clustering every wetland of a plan area once per permit cost about a
minute per permit on the county benchmark (30,000 wetlands); the search reads the network it
meets (docs/checks.md, "Performance").
"""

from __future__ import annotations

import random

import pytest
import sqlalchemy as sa
from checks_scenarios import (  # noqa: F401  (the fixtures)
    Site,
    checks_engine_fixture,
    line,
    rect,
    site_fixture,
)

# The clustering of the whole plan area near the permit, as checks.buffer_site read it before.
REFERENCE = """
SELECT ST_Union(c.geom) FROM checks.permit_site ps,
       LATERAL checks.central_wetland(1, :p, ps.baseline_on) c
WHERE ps.permit_id = :p AND c.geom && ST_Expand(ps.parcels, checks.reach_m())
"""
SEARCHED = "SELECT central FROM checks.buffer_site(1, :p)"


def central(site: Site, permit_id: int) -> tuple[object, object, bool]:
    """(reference, searched, equal): the two central wetlands of a permit and whether they are
    the same point set (both none counts as equal)."""
    ref = site.conn.execute(sa.text(REFERENCE), {"p": permit_id}).scalar()
    got = site.conn.execute(sa.text(SEARCHED), {"p": permit_id}).scalar()
    if ref is None or got is None:
        return ref, got, ref is None and got is None
    same = site.conn.execute(sa.text("SELECT ST_Equals(:a, :b)"), {"a": ref, "b": got}).scalar()
    return ref, got, bool(same)


def chain(site: Site, delineation_id: int, n: int, gap_at: int | None = None) -> list[int]:
    """n wetlands 300 ft long, 50 ft wide, side by side along y = 0 (touching), the first
    touching the seed at x = 0; a gap of 10 ft before the one at gap_at. The buffer checks
    look 1,000 ft around a parcel, so a permit at the far end sees only the last few."""
    ids = []
    x = 0.0
    for k in range(n):
        if k == gap_at:
            x += 10
        ids.append(site.wetland(rect(x, 0, x + 300, 50), delineation_id))
        x += 300
    return ids


def frame(site: Site) -> int:
    site.plan()
    site.seed(rect(-100, 0, 0, 50))
    return site.delineation(rect(-500, -500, 5000, 1500))


def permit_at(site: Site, pin: str, x: float, y: float, **cols: object) -> int:
    """A permit on a 100 x 100 ft parcel (PIN pin) south of (x, y)."""
    site.parcel(pin, rect(x, y - 100, x + 100, y))
    n = site.conn.execute(sa.text("SELECT count(*) + 1 FROM core.permit")).scalar_one()
    return site.permit(f"24-{n:03d}", [pin], **cols)


def test_a_chain_touching_the_seed_is_central_to_its_far_end(site: Site) -> None:
    d = frame(site)
    chain(site, d, 12)
    far = permit_at(site, "far", 3400, 0)
    ref, got, same = central(site, far)
    assert got is not None and same  # 3,400 ft from the seed, through eleven wetlands


def test_a_gap_in_the_chain_leaves_the_far_part_isolated_and_a_ditch_closes_it(
        site: Site) -> None:
    d = frame(site)
    chain(site, d, 12, gap_at=6)
    far = permit_at(site, "far", 3400, 0)
    ref, got, same = central(site, far)
    assert got is None and same
    site.add("ditch", line((1790, 25), (1820, 25)), status="abandoned")  # over the gap
    ref, got, same = central(site, far)
    assert got is not None and same


def test_a_fill_that_cuts_the_chain_disconnects_what_lies_beyond(site: Site) -> None:
    d = frame(site)
    chain(site, d, 12)
    far = permit_at(site, "far", 3400, 0)
    # the permit fills wetland 5 (x 1500..1800) and the ends of its neighbours: its own
    # central wetland stops there; another permit's central wetland does not change. (A fill
    # across the middle of one wetland would not do: the two parts stay one feature, and one
    # feature is one piece of the network, as in checks.central_wetland.)
    cut = permit_at(site, "cut", 3300, 0)
    site.add("impact", rect(1490, -10, 1810, 60), permit_id=cut, kind="fill")
    ref, got, same = central(site, cut)
    assert got is None and same
    ref, got, same = central(site, far)
    assert got is not None and same
    # a partial drainage leaves wetland behind: still connected
    site.update("impact", site.conn.execute(sa.text(
        "SELECT impact_id FROM core.impact WHERE permit_id = :p"), {"p": cut}).scalar_one(),
        kind="drain_partial")
    ref, got, same = central(site, cut)
    assert got is not None and same


def test_a_replacement_that_bridges_the_gap_connects_the_far_part(site: Site) -> None:
    d = frame(site)
    chain(site, d, 12, gap_at=6)
    bridge = permit_at(site, "bridge", 3400, 0)
    site.add("replacement", rect(1795, 10, 1815, 40), permit_id=bridge, component="wetland",
             status="proposed")
    ref, got, same = central(site, bridge)
    assert got is not None and same
    # upland replacement is no wetland: no bridge
    site.update("replacement", site.conn.execute(sa.text(
        "SELECT replacement_id FROM core.replacement WHERE permit_id = :p"),
        {"p": bridge}).scalar_one(), component="upland")
    ref, got, same = central(site, bridge)
    assert got is None and same


def test_a_delineation_approved_after_the_baseline_date_is_not_in_its_layer(
        site: Site) -> None:
    d = frame(site)
    chain(site, d, 6)
    # wetlands 6..11 come with a delineation approved in 2025 (its study area supersedes the
    # first one's from x = 1800 on): a permit decided in 2024 sees none of them, one decided
    # in 2026 sees them all connected
    later = site.delineation(rect(1800, -300, 4500, 300), no="D-2", approved_on="2025-01-01")
    for k in range(6):
        site.wetland(rect(1800 + 300 * k, 0, 2100 + 300 * k, 50), later)
    old = permit_at(site, "old", 3400, 0, decided_on="2024-06-01")
    new = permit_at(site, "new", 3450, 0, decided_on="2026-06-01")
    ref, got, same = central(site, old)
    assert got is None and same
    ref, got, same = central(site, new)
    assert got is not None and same


@pytest.mark.parametrize("seed", range(6))
def test_random_plan_areas_give_the_same_central_wetland(site: Site, seed: int) -> None:
    """Wetlands scattered on a grid (touching neighbours or not), ditches, two delineations
    approved at different dates (the later one superseding part of the first), permits with
    different baseline dates, fills and drainage, wetland replacements: every permit's central
    wetland is the same both ways."""
    rnd = random.Random(seed)
    site.plan()
    site.seed(rect(-100, -100, 0, 100))
    first = site.delineation(rect(-500, -500, 2500, 2500), no="D-1", approved_on="2019-01-01")
    second = site.delineation(rect(800, -500, 2500, 900), no="D-2", approved_on="2023-01-01")
    for i in range(12):
        for j in range(12):
            if rnd.random() < 0.55:
                x, y = i * 150, j * 150
                grow = rnd.choice((0, 0, 10, 30))  # some touch their neighbours
                site.wetland(rect(x - grow, y - grow, x + 120 + grow, y + 120 + grow),
                             second if (x > 900 and y < 800 and rnd.random() < 0.6) else first,
                             assess=False)
    for _ in range(5):
        x, y = rnd.randrange(0, 1700), rnd.randrange(0, 1700)
        site.add("ditch", line((x, y), (x + rnd.choice((-1, 1)) * 300, y)), status="active")
    permits = []
    for k in range(8):
        x, y = rnd.randrange(0, 1600), rnd.randrange(100, 1700)
        decided_on = rnd.choice(("2020-06-01", "2024-06-01", None))
        status = rnd.choice(("approved", "under_review"))
        # an approved permit has a decision date (the write rules of docs/ingest.md)
        pid = permit_at(site, f"P{k}", x, y, decided_on=decided_on,
                        status="under_review" if decided_on is None else status)
        permits.append(pid)
        if rnd.random() < 0.7:
            ix, iy = rnd.randrange(0, 1700), rnd.randrange(0, 1700)
            site.add("impact", rect(ix, iy, ix + rnd.choice((20, 60, 200)), iy + 40),
                     permit_id=pid, kind=rnd.choice(("fill", "drain_full", "excavate")))
        if rnd.random() < 0.5:
            rx, ry = rnd.randrange(0, 1700), rnd.randrange(0, 1700)
            site.add("replacement", rect(rx, ry, rx + 60, ry + 60), permit_id=pid,
                     component="wetland", status="proposed")
    found = 0
    for pid in permits:
        ref, got, same = central(site, pid)
        assert same, (seed, pid, ref, got)
        found += got is not None
    # the random plan areas are not all trivially empty or all central
    print("central", found, "of", len(permits))
    assert 0 <= found <= len(permits)
