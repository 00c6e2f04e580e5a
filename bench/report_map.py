"""Time the nightly report's balance map at county scale: N square parcels (random balance
status) with N/50 findings, drawn as rulem_db.reports.map draws them.

    python bench/report_map.py [N ...]      (default 10000 100000)

Prints seconds per map and the PNG size. No database: the query side is the ledger's view
(see bench/recompute.py); this measures the drawing, which is what grows with the parcels.
"""

from __future__ import annotations

import random
import sys
import time

import geopandas as gpd
from shapely.geometry import Point, box

from rulem_db.reports.map import balance_map


def frames(n: int) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame, gpd.GeoDataFrame]:
    rng = random.Random(5362)
    side = int(n ** 0.5) + 1
    statuses = ["none"] * 20 + ["deficit", "balanced", "surplus", "surplus"]
    parcels = gpd.GeoDataFrame(
        {"parcel_id": range(n), "status": [rng.choice(statuses) for _ in range(n)]},
        geometry=[box((i % side) * 100, (i // side) * 100, (i % side) * 100 + 95,
                      (i // side) * 100 + 95) for i in range(n)], crs=26915)
    findings = gpd.GeoDataFrame(
        {"severity": [rng.choice(["error", "warning", "info"]) for _ in range(n // 50)]},
        geometry=[Point(rng.uniform(0, side * 100), rng.uniform(0, side * 100)).buffer(40)
                  for _ in range(n // 50)], crs=26915)
    outline = gpd.GeoDataFrame(geometry=[box(0, 0, side * 100, side * 100)], crs=26915)
    return parcels, findings, outline


def main(sizes: list[int]) -> None:
    for n in sizes:
        parcels, findings, outline = frames(n)
        start = time.perf_counter()
        png = balance_map(parcels, findings, outline, f"{n} parcels")
        seconds = time.perf_counter() - start
        print(f"{n:>8,} parcels, {len(findings):>6,} findings: balance map {seconds:6.2f} s, "
              f"PNG {len(png) / 1024:,.0f} KiB")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10_000, 100_000])
