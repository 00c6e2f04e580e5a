"""The harness's results files: one per run, named by date and size, and the latest county and
state files found for the docs (bench/run.py). No database needed.

Why: the README and docs/scaling.md quote the latest county and state results; a second run of
a day must not overwrite the first, and the old one-file-per-date history must never be taken
for the latest.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ is scripts

from bench import run  # noqa: E402


def _at(hour: int, minute: int, day: int = 2) -> dt.datetime:
    return dt.datetime(2026, 12, day, hour, minute, tzinfo=dt.UTC)


def test_a_run_gets_its_own_file_and_a_later_one_that_day_its_time(tmp_path: Path) -> None:
    first = run.results_path(tmp_path, "county", _at(9, 5))
    assert first.name == "2026-12-02-county.md"
    first.write_text("# first\n")
    second = run.results_path(tmp_path, "county", _at(15, 40))
    assert second.name == "2026-12-02-county-1540.md"
    assert run.results_path(tmp_path, "state", _at(15, 40)).name == "2026-12-02-state.md"


def test_the_latest_file_of_a_size_by_date_then_time(tmp_path: Path) -> None:
    for name in ("2026-11-30.md", "2026-12-02.md", "2026-12-01-county.md",
                 "2026-12-02-county.md", "2026-12-02-county-1540.md",
                 "2026-12-02-county-0930.md", "2026-12-01-state.md", "2026-12-03-plan.md"):
        (tmp_path / name).write_text("x\n")
    assert run.latest_results(tmp_path, "county").name == "2026-12-02-county-1540.md"
    assert run.latest_results(tmp_path, "state").name == "2026-12-01-state.md"
    assert run.latest_results(tmp_path, "region") is None


def test_latest_quotes_the_facts_and_table_without_the_notes(tmp_path: Path) -> None:
    (tmp_path / "2026-12-02-county.md").write_text(
        "# Benchmark results, `--size county`\n\nWritten by ...\n\n- commit: abc\n\n"
        "| figure | ours |\n|---|---|\n| ingest | 6 s |\n\nNotes:\n\n- a note\n")
    text = run.quote_latest(tmp_path)
    assert "| ingest | 6 s |" in text and "- commit: abc" in text
    assert "a note" not in text
    assert "`--size state`: no results file" in text


def test_the_state_memory_file_is_capped_at_what_one_delivery_may_hold(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from bench import common

    monkeypatch.delenv("RULEM_MAX_FEATURES", raising=False)
    monkeypatch.delenv("RULEM_MAX_FILE_BYTES", raising=False)
    county = common.SIZES["county"]
    assert run.big_file_features(county, 30_000_000) == (1_000_000, None)  # 300 B a polygon
    # the state's 10 x file: 10,000,000 polygons, 3.0 GB: over both limits; 5,000,000 features
    n, why = run.big_file_features(common.SIZES["state"], 300_000_000)
    assert n == 5_000_000 and "not 10,000,000" in why and "2.0 GB" in why
    # bigger polygons: the 2 GB bound is the lower one (2 GiB x 0.95 at 1,000 B a polygon)
    n, _ = run.big_file_features(common.SIZES["state"], 1_000_000_000)
    assert n == int(2 * (1 << 30) * 0.95 / 1000)
