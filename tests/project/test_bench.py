"""A run of the benchmark harness at the plan size (its arithmetic and SQL reading, which need
no database, are tested in tests/unit/test_bench.py).

Why: docs/scaling.md quotes what the harness measures; a harness that no longer runs, or whose
recompute disagrees with geopandas, would leave wrong figures in the docs unnoticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ is scripts, not installed


@pytest.mark.slow
def test_harness_runs_the_plan_size(capsys: pytest.CaptureFixture[str]) -> None:
    """One run of the harness's database sections on one clone of the plan area (a run each
    made and dropped its own: 11 s apiece alone, 26-33 s in a full suite): the recompute
    against geopandas, the nightly section, which judges the 1 % night against a --full night
    on the same data (the same findings and outcomes) and times a full check run on 1 session
    and on 2, and the latency section."""
    from bench import run

    run.main(["--size", "plan", "--only", "recompute,nightly,latency", "--repeat", "1"])
    out = capsys.readouterr().out
    line = next((ln for ln in out.splitlines() if ln.startswith("  same acres as geopandas")),
                "")
    assert line.rstrip().endswith("PASS"), out
    assert "pub.parcel_balance by PIN, 8 clients" in out, out
    line = next((ln for ln in out.splitlines()
                 if ln.startswith("1 % night's findings and outcomes vs a --full night")), "")
    assert line.rstrip().endswith("PASS") and " 0 rows differ" in line, out
    assert "checks of every permit on 2 sessions (--workers 2)" in out, out
    assert "comparison and report of the 1 % night" in out, out
