"""A run of the benchmark harness at the plan size (its arithmetic and SQL reading, which need
no database, are tested in tests/unit/test_bench.py).

Why: docs/scaling.md quotes what the harness measures; a harness that no longer runs, or whose
recompute disagrees with geopandas, would leave wrong figures in the docs unnoticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/ is scripts, not installed


@pytest.mark.slow
def test_harness_runs_the_plan_size(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import run

    run.main(["--size", "plan", "--only", "recompute,latency"])
    out = capsys.readouterr().out
    assert "same acres as geopandas" in out
    line = next(ln for ln in out.splitlines() if ln.startswith("  same acres as geopandas"))
    assert line.rstrip().endswith("PASS")
    assert "pub.parcel_balance by PIN, 8 clients" in out
