"""A night's report in proportion to what changed (rulem_db.reports.tiles, docs/operations.md):
a large plan area's maps come from a parcel raster kept between nights and redrawn only where
parcels changed, and parcel_balance.csv is written by the server.

The demo plan area stands in for a large one (frames.MAX_EDGED_PARCELS lowered, so its report
takes the raster's path): the raster the second night patched equals, pixel for pixel, the one
drawn whole from the same state, and the CSV equals the one pandas wrote from the parcel frame
byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from clones import cloned
from hardening_helpers import DemoTemplate
from sqlalchemy.engine import URL
from sqlalchemy.pool import NullPool

from flows import nightly
from rulem_db.reports import frames, tiles
from rulem_db.reports import run as report_run


def _engine(url: str) -> sa.Engine:
    return sa.create_engine(url, poolclass=NullPool)


def _change(url: str) -> None:
    """Widen one impact over wetland (the ledger moves balances and statuses) and move one
    parcel. The impact is 24-017's, made to cover the demo wetland W-018 (100 m x 100 m), as
    tests/checks/test_finding_record.py does: more wetland filled, so its parcel's balance moves."""
    eng = _engine(url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text(
                "UPDATE core.impact i SET geom = ST_Multi(ST_MakeEnvelope(491800, 5003750, "
                "491900, 5003850, 26915)) FROM core.permit p WHERE p.permit_no = '24-017' "
                "AND p.valid_to IS NULL AND i.permit_id = p.permit_id AND i.valid_to IS NULL"))
            conn.execute(sa.text(
                "UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 8.0, 0.0)) "
                "WHERE parcel_id = (SELECT max(parcel_id) FROM core.parcel "
                "WHERE valid_to IS NULL)"))
    finally:
        eng.dispose()


def _raster_box(conn: sa.Connection, plan: int) -> tuple[float, float, float, float]:
    """The ground box the report's raster covers: the plan area's outline's."""
    outline = report_run._read_geo(
        conn, "SELECT ST_AsEWKB(geom) AS geom FROM pub.plan_balance "
        "WHERE plan_area_id = :p AND geom IS NOT NULL", {"p": plan})
    return report_run._frame_box(conn, plan, outline)


@pytest.fixture(scope="module")
def two_nights(admin_url: URL, demo_template: DemoTemplate,
               tmp_path_factory: pytest.TempPathFactory):
    """The demo reconciled twice as a large plan area, a change in between; yields (url,
    reports folder, the second night's summary, how many tiles were drawn whole then)."""
    reports = tmp_path_factory.mktemp("report_tiles")
    mp = pytest.MonkeyPatch()
    mp.setattr(frames, "MAX_EDGED_PARCELS", 0)
    whole_draws: list[int] = []
    real = tiles._draw_whole
    try:
        with cloned(admin_url, demo_template.name, prefix="rulem_rt") as url:
            nightly.reconcile_now(url, reports=reports, use_prefect=False)
            _change(url)
            mp.setattr(tiles, "_draw_whole",
                       lambda *a, **k: whole_draws.append(1) or real(*a, **k))
            second = nightly.reconcile_now(url, reports=reports, use_prefect=False)
            yield url, reports, second, len(whole_draws)
    finally:
        mp.undo()


def test_the_second_night_patched_the_raster_as_a_whole_drawing_would(two_nights,
                                                                       tmp_path) -> None:
    url, reports, second, whole = two_nights
    assert second.changed and second.parcels_changed > 0
    assert whole == 0  # patched where parcels changed, not drawn again
    [folder] = (reports / ".parcel-raster").iterdir()
    kept = np.load(folder / "raster.npy")
    eng = _engine(url)
    try:
        with eng.connect() as conn:
            plan = conn.execute(sa.text("SELECT plan_area_id FROM ops.run WHERE run_id = :r"),
                                {"r": second.run_id}).scalar_one()
            box = _raster_box(conn, plan)
            fresh = tiles.parcel_raster(conn, tmp_path, folder.name, plan, second.run_id, box)
    finally:
        eng.dispose()
    assert fresh.redrawn == "whole"
    assert fresh.pixels.shape == kept.shape
    assert np.array_equal(fresh.pixels, kept)
    # the maps were drawn from it: both pictures are in the report
    report = Path(second.report_path).parent
    assert (report / "balance_map.png").stat().st_size > 10_000
    assert (report / "changes_map.png").stat().st_size > 10_000


def _every_parcel(conn: sa.Connection, plan: int, seen: int):
    """Every current parcel of the plan area with the snapshot's status, 'none' where it lists
    none: what the raster drew before it skipped the parcels without a balance."""
    return report_run._read_geo(conn, (
        "SELECT p.parcel_id, coalesce(s.status, 'none') AS status, ST_AsEWKB(p.geom) AS geom "
        "FROM core.parcel p LEFT JOIN ops.run_parcel_balance s ON s.run_id = :seen "
        "AND s.parcel_id = p.parcel_id WHERE p.valid_to IS NULL AND p.plan_area_id = :p "
        "ORDER BY p.parcel_id"), {"seen": seen, "p": plan})


def test_parcels_without_a_balance_leave_the_raster_as_drawing_them_would(two_nights,
                                                                          tmp_path) -> None:
    """The raster reads and draws only the parcels with a balance: every tile drawn from every
    parcel, the white 'none' ones included, comes out the same pixel for pixel, drawn by one
    painter in the reverse of the order the raster was drawn in."""
    url, reports, second, _ = two_nights
    [folder] = (reports / ".parcel-raster").iterdir()
    kept = np.load(folder / "raster.npy")
    eng = _engine(url)
    try:
        with eng.connect() as conn:
            plan, seen = conn.execute(sa.text(
                "SELECT plan_area_id, ops.parcels_seen_in(run_id) FROM ops.run "
                "WHERE run_id = :r"), {"r": second.run_id}).one()
            every = _every_parcel(conn, plan, seen)
            drawn = tiles._drawn_parcels(conn, plan, seen)
            box = _raster_box(conn, plan)
    finally:
        eng.dispose()
    assert (every["status"] == "none").sum() > len(drawn) > 0  # most are skipped
    frame = tiles.Frame.over(box)
    side = tiles.TILE_PX
    coloured = 0
    painter = tiles._Painter()  # one for every tile, in the reverse of the raster's order
    last = (0, 0)
    for j in reversed(range(frame.rows)):
        for i in reversed(range(frame.cols)):
            tile = painter.tile(frame, i, j, every)
            assert np.array_equal(tile, kept[j * side:(j + 1) * side, i * side:(i + 1) * side])
            coloured += int((tile[..., :3] != 255).any(axis=-1).sum())
            if (tile[..., :3] != 255).any():
                last = (i, j)
    assert coloured > 0  # the picture is not blank
    # the painter keeps nothing of a tile: the last coloured one again, without parcels, is white
    assert (painter.tile(frame, *last, every.iloc[:0]) == 255).all()


@pytest.mark.parametrize("with_balance", [False, True])
def test_only_a_moved_parcel_with_a_balance_redraws_the_kept_raster(two_nights, tmp_path,
                                                                    with_balance) -> None:
    """A parcel with no balance in either run is white on white: moving it redraws nothing.
    Moving one with a balance patches the raster. (The move is rolled back afterwards.)"""
    url, reports, second, _ = two_nights
    [folder] = (reports / ".parcel-raster").iterdir()
    copy = tmp_path / ".parcel-raster" / folder.name
    copy.mkdir(parents=True)
    for name in ("raster.npy", "raster.json"):
        (copy / name).write_bytes((folder / name).read_bytes())
    eng = _engine(url)
    try:
        with eng.connect() as conn:
            tx = conn.begin()
            plan, seen = conn.execute(sa.text(
                "SELECT plan_area_id, ops.parcels_seen_in(run_id) FROM ops.run "
                "WHERE run_id = :r"), {"r": second.run_id}).one()
            moved = conn.execute(sa.text(
                "UPDATE core.parcel SET geom = ST_Multi(ST_Translate(geom, 30.0, 0.0)) "
                "WHERE parcel_id = (SELECT min(p.parcel_id) FROM core.parcel p "
                "  WHERE p.valid_to IS NULL AND p.plan_area_id = :p AND "
                "  EXISTS (SELECT 1 FROM ops.run_parcel_balance s WHERE s.run_id = :seen"
                "          AND s.parcel_id = p.parcel_id) = :b)"
                " AND valid_to IS NULL RETURNING parcel_id"),
                {"p": plan, "seen": seen, "b": with_balance}).all()
            assert len(moved) == 1
            box = _raster_box(conn, plan)
            got = tiles.parcel_raster(conn, tmp_path, folder.name, plan, second.run_id, box)
            tx.rollback()
    finally:
        eng.dispose()
    before = np.load(folder / "raster.npy")
    if with_balance:
        assert got.redrawn.startswith("patched")
        assert not np.array_equal(got.pixels, before)
    else:
        assert got.redrawn == "kept"
        assert np.array_equal(got.pixels, before)


def test_a_raster_of_another_frame_or_style_is_drawn_whole(two_nights, tmp_path) -> None:
    url, reports, second, _ = two_nights
    [folder] = (reports / ".parcel-raster").iterdir()
    eng = _engine(url)
    try:
        with eng.connect() as conn:
            box = (0.0, 0.0, 1000.0, 1000.0)  # another frame than the kept one
            got = tiles.parcel_raster(conn, reports, folder.name, 1, second.run_id, box)
    finally:
        eng.dispose()
    assert got.redrawn == "whole"


def test_the_parcel_csv_written_by_the_server_equals_the_frame_writers(two_nights,
                                                                       tmp_path) -> None:
    url, _, second, _ = two_nights
    eng = _engine(url)
    try:
        with eng.connect() as conn:
            plan = conn.execute(sa.text("SELECT plan_area_id FROM ops.run WHERE run_id = :r"),
                                {"r": second.run_id}).scalar_one()
            # odd values too: a negative balance, a whole number, a long fraction
            frame = report_run.read_parcel_frame(conn, plan)
            changed = set(frame["parcel_id"].astype(int).tolist()[::3])
            ours = report_run.write_parcel_csv(conn, tmp_path / "ours.csv", plan, changed)
    finally:
        eng.dispose()
    theirs = report_run._write_parcel_csv(tmp_path / "theirs.csv", frame, changed)
    data = ours.read_bytes()
    assert data.count(b"\n") == len(frame) + 1 and b",true\n" in data
    assert data == theirs.read_bytes()
    assert any(float(v) < 0 for v in frame["balance_acres"])  # the demo has deficits
