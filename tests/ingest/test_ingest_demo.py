"""The generated demo plan area goes through the ordinary ingest path: every layer, in the
manifest's order, references resolved by key; the same files again change nothing."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import geopandas as gpd
import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from ingest_helpers import fingerprint, rows, scalar
from sqlalchemy.engine import URL

from demo import generate as demo
from demo.load import load_demo


def test_demo_loads_every_layer_and_loading_again_changes_nothing(
        db_url: str, engine: sa.Engine, tmp_path: Path) -> None:
    files = demo.generate(tmp_path / "demo")
    said: list[str] = []
    results = load_demo(db_url, files.out_dir, progress=said.append)
    manifest = json.loads(files.manifest.read_text())["load_order"]
    expected = {e["layer"]: e["features"] for e in manifest if e["features"]}
    assert {r.layer: r.inserted for r in results} == expected
    assert all(r.status == "loaded" and r.skipped == 0 for r in results)
    assert len(said) == len(manifest)
    with engine.connect() as conn:
        for layer, n in expected.items():
            schema = "restricted" if layer == "species_record" else "pub"
            assert conn.execute(sa.text(f"SELECT count(*) FROM {schema}.{layer}")).scalar() \
                == n, layer
    # delineation records keep their statuses and approval dates
    assert [tuple(r) for r in rows(engine, "SELECT delineation_no, status, approved_on "
                                           "FROM pub.delineation ORDER BY 1")] == [
        ("D-2019-01", "approved", dt.date(2019, 8, 6)),
        ("D-2025-03", "approved", dt.date(2025, 9, 16)),
        ("D-2025-07", "submitted", None)]
    # references resolved by the referenced feature's key, within its owner where it has one
    assert scalar(engine, "SELECT wf.feature_key FROM pub.functional_assessment a "
                          "JOIN core.feature f ON f.feature_id = a.functional_assessment_id "
                          "JOIN core.feature wf ON wf.feature_id = a.wetland_id "
                          "WHERE f.feature_key LIKE '%/FA-001'") == "D-2019-01/W-001"
    mismatched = scalar(engine, "SELECT count(*) FROM pub.bmp b JOIN pub.subwatershed s "
                                "USING (subwatershed_id) WHERE s.permit_id <> b.permit_id")
    assert mismatched == 0
    # the parcels are where the generator put them: 1 acre = 4046.8564224 m^2
    total = scalar(engine, "SELECT round(sum(ST_Area(geom))::numeric / 4046.8564224, 4) "
                           "FROM core.parcel")
    gdf = gpd.read_file(files.gpkg, layer="parcel")
    assert float(total) == round(gdf.geometry.area.sum() / 4046.8564224, 4)

    before = fingerprint(engine)
    again = load_demo(db_url, files.out_dir)
    assert {r.status for r in again} == {"duplicate"}
    after = fingerprint(engine)
    assert {t for t in after if after[t] != before[t]} == {"ops.batch"}


@pytest.mark.slow
def test_regenerated_demo_files_load_with_no_change(admin_url: URL, demo_template: DemoTemplate,
                                                    tmp_path: Path) -> None:
    """Files the generator writes again (new files, new timestamps) onto the demo the session
    loaded from its own generation."""
    with cloned(admin_url, demo_template.name, prefix="rulem_idemo") as url:
        engine = sa.create_engine(url)
        try:
            before = fingerprint(engine)
            results = load_demo(url, demo.generate(tmp_path / "two").out_dir)
            assert {r.status for r in results} <= {"loaded", "duplicate"}
            assert all(r.inserted == r.changed == r.closed == 0 for r in results)
            after = fingerprint(engine)
        finally:
            engine.dispose()
    assert not {t for t in after if t.startswith("core.") and after[t] != before[t]}
