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


@pytest.mark.filterwarnings("ignore:`keep_geom_type=True` is invalid")  # an empty status
def test_geopandas_model_charges_once_and_keeps_counted_claims() -> None:
    """bench/recompute.py's geopandas model of the ledger, on hand-worked layers (m^2, the
    plan area x >= 0): decision 25 (an acre charged once, the rest of an earlier partial
    drain, built replacement wetland, inside the plan area) and decision 19 (counted ground
    before a pending claim, whatever the decision dates). Why: the benchmark's cross-check
    is only as good as this model; a model that lags the ledger's rules reports false
    differences, one that copies a ledger mistake hides it."""
    import datetime as dt

    import geopandas as gpd
    import pandas as pd
    from shapely import box

    from bench import recompute

    def layer(rows: list[dict], geoms: list) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame(pd.DataFrame(rows), geometry=geoms, crs=26915)

    d = dt.date
    far = box(5000, 5000, 5001, 5001)
    rep = [  # id, permit, status, status_on, geometry
        (11, 4, "certified", d(2021, 6, 1), box(300, 0, 400, 100)),    # built after A's date
        (12, 1, "constructed", d(2021, 3, 1), box(600, 0, 700, 100)),  # A: pending
        (13, 2, "certified", d(2021, 5, 1), box(650, 0, 750, 100))]    # B: counted first
    L = {
        "cwmp": layer([{}], [box(0, 0, 1000, 1000)]),
        "parcel": layer([{"parcel_id": 1}, {"parcel_id": 2}],
                        [box(-500, 0, 500, 1000), box(500, 0, 1000, 1000)]),
        "delineation": layer([{"delineation_id": 1, "approved_on": d(2010, 1, 1)}],
                             [box(-500, 0, 1000, 1000)]),
        "wetland": layer([{"wetland_id": 1, "delineation_id": 1}], [box(-100, 0, 200, 100)]),
        "permit": gpd.GeoDataFrame(pd.DataFrame({
            "permit_id": [1, 2, 3, 4], "status": ["approved", "approved", "under_review",
                                                  "approved"],
            "decided_on": [d(2021, 1, 1), d(2022, 1, 1), None, d(2020, 6, 1)],
            "baseline_on": [None] * 4})),
        "impact": layer(
            [{"permit_id": 4, "kind": "drain_partial"}, {"permit_id": 1, "kind": "fill"},
             {"permit_id": 1, "kind": "fill"}, {"permit_id": 2, "kind": "fill"},
             {"permit_id": 3, "kind": "drain_partial"}, {"permit_id": 3, "kind": "fill"}],
            [box(100, 0, 150, 100), box(-50, 0, 100, 100), box(350, 0, 400, 100),
             box(50, 0, 150, 100), box(150, 0, 200, 100), box(300, 0, 350, 100)]),
        "replacement": layer(
            [{"replacement_id": i, "permit_id": float(p), "district_project": None,
              "component": "wetland", "status": s, "status_on": on, "constructed_on": None,
              "certified_on": None, "recorded": pd.Timestamp("2026-01-01", tz="UTC")}
             for i, p, s, on, _ in rep], [g for *_, g in rep]),
        "buffer": layer([{}], [far]),
        "heritage": layer([{}], [far]),
    }
    got = recompute.geopandas_figures(L)
    acre = recompute.ACRE_M2
    # D (4) drains 100-150 partially: 0.5 x 5,000. A (1): 0-100 of its fill (x < 0 is outside
    # the plan area; 350-400 was no wetland on its date). B (2): 50-100 was A's, 100-150 the
    # rest of D's partial drain, 0.5 x 5,000. C (3, undecided: as of today): a partial drain
    # 150-200, 0.5 x 5,000, and a fill of D's basin, built since: 5,000.
    expected = {4: 2_500, 1: 10_000, 2: 2_500, 3: 7_500}
    for permit, m2 in expected.items():
        assert got["impact"][permit] == pytest.approx(m2 / acre, abs=1e-9), permit
    assert got["required"].to_dict() == pytest.approx({1: 22_500 / acre})
    # B's certified basin keeps 650-700 from A's constructed one, though A was decided first
    assert got["credit"].to_dict() == pytest.approx({2: 10_000 / acre, 4: 10_000 / acre})
    assert got["credit_constructed"].to_dict() == pytest.approx({1: 5_000 / acre})
    assert got["credit_hosted"].to_dict() == pytest.approx({1: 10_000 / acre, 2: 10_000 / acre})
