"""The benchmark harness's own arithmetic and SQL reading (bench/common.py,
bench/plan_area_joins.py); the run of the harness itself is in tests/project/test_bench.py.

Why: docs/scaling.md quotes what these compute (percentiles of latencies, the joins that do
not equate plan_area_id); a wrong percentile or a join the reader misses would put wrong
figures in the docs without anyone noticing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench/ is scripts, not installed

from bench import common, plan_area_joins  # noqa: E402


def test_percentile_interpolates_between_ranks() -> None:
    values = [10.0, 1.0, 4.0, 2.0, 3.0]  # sorted: 1 2 3 4 10
    assert common.percentile(values, 50) == 3.0
    assert common.percentile(values, 0) == 1.0
    assert common.percentile(values, 100) == 10.0
    # rank (5 - 1) x 0.95 = 3.8: 4 + 0.8 x (10 - 4)
    assert common.percentile(values, 95) == pytest.approx(8.8)


def test_join_reader_flags_joins_without_plan_area(tmp_path: Path) -> None:
    (tmp_path / "100_x.sql").write_text(
        "-- a comment: JOIN core.parcel p ON nothing\n"
        "SELECT 1 FROM core.permit pm\n"
        "JOIN core.parcel p ON p.parcel_id = pm.permit_id AND p.valid_to IS NULL\n"
        "LEFT JOIN core.feature f ON f.feature_id = p.parcel_id\n"
        "  AND f.plan_area_id = p.plan_area_id\n"
        "JOIN core.heritage_rank r USING (rank)\n"
        "JOIN LATERAL (SELECT 1) x ON true\n"
        "WHERE (SELECT count(*) FROM core.impact i JOIN core.wetland w ON w.wetland_id = "
        "i.impact_id) > 0;\n")
    found = plan_area_joins.joins({"core.parcel", "core.feature", "core.wetland",
                                   "core.permit", "core.impact"}, tmp_path)
    assert [(j.line, j.table, j.keyed) for j in found] == [
        (3, "core.parcel", False), (4, "core.feature", True), (8, "core.wetland", False)]
    assert found[0].condition == "ON p.parcel_id = pm.permit_id AND p.valid_to IS NULL"
    assert found[2].condition == "ON w.wetland_id = i.impact_id"
