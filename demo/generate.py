"""A synthetic CWMP plan area for demos and tests: every Rule M layer, eighteen permits, each one
built to exercise one case of the ledger and the checks; together they fail every check of the
catalogue (``checks.rule_check``) at least once, and three of them pass every check.

Why synthetic: the real ACD 53-62 permit files are not public, and a demo must hold every case the
checks distinguish (docs/checks.md) with numbers a person can work out by hand. So the geometry is
rectangles with straight edges on a round-metre grid, placed in EPSG:26915 inside the real Anoka
County outline (Lino Lakes area), and every figure in ``cases.toml`` (read into ``DEMO_CASES`` and
``PLAN_FACTS`` by demo/cases.py) follows from those rectangles (1 acre = 4046.8564224 m^2,
1 ft = 0.3048 m).

Determinism: the seed varies only attributes that no check reads (MnRAM ratings, recording and
document numbers, the delineation files' SHA-256). Geometry, dates and every number in
``cases.toml`` are the same for every seed, and the same seed gives identical files (the GPKG's
own metadata timestamps aside; compare features, not bytes) on the same day: the yearly
monitoring visits on record are those made by the day the files are generated (``build``'s
``today``), as they would be in a District's records, so a certified basin is never shown with a
monitoring year overdue that the demo did not build to be.

Where things are: this module runs the builders in their order (``build``) and writes the files
(``generate``, ``python -m demo.generate OUT_DIR [--seed N]``); the permits are the table in
demo/sites.py, each layer's features are made in demo/layers/ (one module per theme), the figures
are in cases.toml (demo/cases.py), the shared geometry in demo/geometry.py, the file formats in
demo/write.py and the Anoka County check in demo/county.py.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path

from demo.collector import Collector, Feature
from demo.county import anoka_outline, check_inside_county, counties_dump_path
from demo.layers.buffers import build_buffer, build_structures
from demo.layers.context import build_context
from demo.layers.declarations import build_declarations, build_easement, recording_numbers
from demo.layers.ditches import build_ditches
from demo.layers.frame import build_frame
from demo.layers.impacts import build_impacts
from demo.layers.monitoring import build_permit_records
from demo.layers.permits import build_permits
from demo.layers.plan_records import build_plan_records
from demo.layers.records import build_records
from demo.layers.stormwater import build_stormwater
from demo.layers.wetlands import build_assessments, build_delineations
from demo.sites import FIRST_EDITION, SITES, Site
from demo.write import DemoFiles, validate, write_files

DEFAULT_SEED = 5362


def build_site(c: Collector, s: Site, docs: Iterable[str]) -> None:
    """Every feature of one permit."""
    docs = iter(docs)
    build_impacts(c, s)
    buffer_doc = build_buffer(c, s, docs)
    build_structures(c, s)
    build_declarations(c, s, docs, buffer_doc)
    build_easement(c, s, next(docs))
    build_stormwater(c, s)


def build(seed: int = DEFAULT_SEED, today: date | None = None) -> dict[str, list[Feature]]:
    """Every demo feature by layer, geometry in local metres (see ``demo.geometry.to_world``); the
    monitoring visits made by ``today`` (default: the date it runs) are on record."""
    rng = random.Random(seed)
    c = Collector()
    build_frame(c)
    build_context(c)
    build_permits(c)
    build_delineations(c, seed)
    build_assessments(c, rng)
    build_ditches(c)
    docs = recording_numbers(rng, 4 * len(SITES))
    # The first edition's permits, its plan records, then the permits added later: every
    # feature keeps the key it had before the additions, so a demo database loaded from the
    # first edition takes the new files as additions and one retired assessment.
    for i, s in enumerate(SITES[:FIRST_EDITION]):
        build_site(c, s, docs[4 * i: 4 * i + 4])
    build_plan_records(c)
    for i, s in enumerate(SITES[FIRST_EDITION:], start=FIRST_EDITION):
        build_site(c, s, docs[4 * i: 4 * i + 4])
    build_permit_records(c, today or date.today())
    build_records(c)
    return c.layers


def generate(out_dir: Path, seed: int = DEFAULT_SEED, today: date | None = None) -> DemoFiles:
    """Write the demo plan area to out_dir: demo.gpkg, the attribute CSVs and manifest.json.

    The Anoka County containment is checked when the shared data is present (it is not part of
    an installed package); the manifest records the margin found, or null.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    layers = build(seed, today)
    validate(layers)
    county_m = None
    if counties_dump_path().exists():
        county_m = check_inside_county(anoka_outline())
    return write_files(out_dir, layers, seed, county_m)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m demo.generate OUT_DIR [--seed N]``."""
    parser = argparse.ArgumentParser(prog="python -m demo.generate",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("out_dir", type=Path, help="directory to write the demo files into")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default 5362)")
    args = parser.parse_args(argv)
    try:
        files = generate(args.out_dir, args.seed)
    except (OSError, ValueError) as exc:
        print(f"demo.generate: {exc}", file=sys.stderr)
        return 1
    for path in files.files:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
