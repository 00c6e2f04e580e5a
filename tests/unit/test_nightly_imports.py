"""What the nightly imports in its own thread before the rule checks (flows.nightly).

Why: the nightly asks, before its checks, whether the report will read every parcel's polygon
(reports.frames.drawn_as_vectors), and loads the report's drawing modules (matplotlib,
geopandas: about 0.9 s) in a thread beside the checks. When that question lived in map.py, the
asking imported matplotlib in the night's own thread and the thread beside the checks had
nothing left to do: 0.9 s of a county's 7 s night. Run in a fresh interpreter, since this
test process has long imported everything.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
import flows.nightly
from rulem_db.reports import run
from rulem_db.reports.frames import drawn_as_vectors
drawn_as_vectors(100_000)
print(sorted(m for m in ("matplotlib", "geopandas", "pandas", "shapely") if m in sys.modules))
"""


def test_asking_how_the_report_draws_parcels_loads_no_drawing_module() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "[]"
