"""Load a generated demo plan area (demo/generate.py) through the ordinary ingest path, file by file
in the manifest's load order, exactly as a person would with `rulem-db ingest`.

Why no shortcut: the demo is the first thing a new user runs, and it should prove the real
path: every layer read from the GeoPackage or CSV, validated, keyed, versioned. Decisions:
* The demo's delineation layer holds delineation records with their study areas, statuses and
  approval dates (two approved, one submitted): it loads with `records=True`, as a District
  would load its register of past delineations; the wetlands follow from their own layer, keyed
  by their delineation. A live delineation arrives as `ingest delineation FILE` (submitted) and
  its approval as a status CSV (see docs/ingest.md).
* A layer the demo leaves empty is skipped (an empty delivery retires nothing and is refused).
* Loading the same files again is a no-op per file; regenerated files (new GeoPackage bytes,
  same features) load with nothing new, changed or closed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from demo import DEMO_PLAN_AREA
from etl.ingest import IngestResult, ingest

Say = Callable[[str], None]


def load_demo(url: str, directory: Path, progress: Say | None = None,
              plan_area: str = DEMO_PLAN_AREA[0]) -> list[IngestResult]:
    """Ingest every file of the demo in directory (its manifest.json gives the order)."""
    say = progress or (lambda message: None)
    directory = Path(directory)
    manifest = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    results: list[IngestResult] = []
    for entry in manifest["load_order"]:
        layer = entry["layer"]
        if not entry.get("features"):
            say(f"{layer}: nothing in the demo, skipped")
            continue
        options: dict[str, object] = {"plan_area": plan_area}
        if entry.get("layer_name"):
            options["source_layer"] = entry["layer_name"]
        if layer == "delineation":
            options["records"] = True
        result = ingest(url, layer, directory / entry["file"], **options)
        results.append(result)
        say(f"{layer}: {result.message}")
    return results
