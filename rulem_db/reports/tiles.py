"""The parcel layer of a large plan area's balance map as a raster kept between nights, redrawn
only where parcels changed.

Why: a night report drew every parcel of the plan area twice (the balance map and the map of
changes), after reading every parcel's polygon: on a state's 1,000,000 parcels that was most of
the report's minute and a half, on a night when 1 % of them changed. Here the parcels are drawn
once into a raster of fixed size over the plan area's frame (RASTER_PX on the long side,
TILE_PX tiles), kept in the reports folder (`<reports>/.parcel-raster/<plan code>/`) with the
run whose balances it shows. The next report redraws, in each tile, only the pixels of the
parcels whose balance status changed since that run (the two runs' kept balances,
ops.run_parcel_balance) or whose polygon changed (versions opened or closed since that run
began), each with its neighbours: a patch is clipped to whole pixels and draws every parcel
that reaches it in the tile's own transform and the same order, so it comes out pixel for pixel
as a redraw of the whole tile would (tests/publish/test_report_tiles.py). The maps then show the
raster under the plan outline and the findings (rulem_db.reports.map).

Colours are the balance map's (map.BALANCE_COLOURS); parcels carry no edge at this scale (an
edge narrower than a pixel, as frames.MAX_EDGED_PARCELS decides for the vector map). Statuses are
those the run's snapshot kept (ops.parcels_seen_in: what its comparison saw), 'none' for a
parcel it does not list. A 'none' parcel is white on the white ground, so only the parcels with a
balance are read and drawn, and only their changes are redrawn: a plan area's parcels with a
balance follow its permits, not its size (41,000 of a state's 1,000,000).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import sqlalchemy as sa

RASTER_PX = 2048  # pixels on the frame's long side
TILE_PX = 256
STYLE = 1  # bump when the drawing changes: a kept raster of another style is redrawn whole
MARGIN_PX = 2  # a changed parcel's patch reaches this far around its box (antialiasing)
# the colour groups always in this order, so that a patch composes a pixel as the whole tile
ORDER = ("none", "balanced", "surplus", "deficit")


@dataclass(frozen=True)
class Frame:
    """The raster's ground frame: lower-left corner, metres per pixel, size in tiles."""

    x0: float
    y1: float
    px: float
    cols: int
    rows: int

    @classmethod
    def over(cls, box: tuple[float, float, float, float]) -> Frame:
        xmin, ymin, xmax, ymax = box
        px = max(xmax - xmin, ymax - ymin, 1.0) / RASTER_PX
        cols = max(1, math.ceil((xmax - xmin) / px / TILE_PX))
        rows = max(1, math.ceil((ymax - ymin) / px / TILE_PX))
        return cls(xmin, ymax, px, cols, rows)

    def key(self) -> list[float]:
        return [self.x0, self.y1, self.px, self.cols, self.rows]

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(left, right, bottom, top) of the whole raster, for imshow."""
        return (self.x0, self.x0 + self.cols * TILE_PX * self.px,
                self.y1 - self.rows * TILE_PX * self.px, self.y1)

    def tile_box(self, i: int, j: int) -> tuple[float, float, float, float]:
        """Ground box of tile column i, row j (row 0 at the top)."""
        side = TILE_PX * self.px
        return (self.x0 + i * side, self.y1 - (j + 1) * side,
                self.x0 + (i + 1) * side, self.y1 - j * side)

    def pixels(self, box: tuple[float, float, float, float]) -> tuple[int, int, int, int]:
        """The raster's pixel rows and columns (c0, r0, c1, r1, ends excluded) covering a ground
        box widened by MARGIN_PX, clamped to the raster."""
        xmin, ymin, xmax, ymax = box
        c0 = math.floor((xmin - self.x0) / self.px) - MARGIN_PX
        c1 = math.ceil((xmax - self.x0) / self.px) + MARGIN_PX
        r0 = math.floor((self.y1 - ymax) / self.px) - MARGIN_PX
        r1 = math.ceil((self.y1 - ymin) / self.px) + MARGIN_PX
        w, h = self.cols * TILE_PX, self.rows * TILE_PX
        return max(c0, 0), max(r0, 0), min(c1, w), min(r1, h)


def _drawn_parcels(conn: sa.Connection, plan_area_id: int, seen: int | None):
    """Every parcel the raster draws, with its status, in parcel order (the drawing order):
    those the run's snapshot lists (ops.run_parcel_balance keeps only statuses other than
    'none'). A 'none' parcel is white on the white ground and its group is drawn first
    (ORDER), so it leaves every pixel as it was: skipping it gives the same pixels while
    reading and drawing a state's 41,000 parcels with a balance instead of its 1,000,000."""
    from rulem_db.reports.frames import read_geo as _read_geo

    return _read_geo(conn, (
        "SELECT p.parcel_id, s.status, ST_AsEWKB(p.geom) AS geom "
        "FROM ops.run_parcel_balance s JOIN core.parcel p ON p.parcel_id = s.parcel_id "
        "WHERE s.run_id = :seen AND s.status <> 'none' "
        "AND p.valid_to IS NULL AND p.plan_area_id = :p ORDER BY p.parcel_id"),
        {"seen": seen or -1, "p": plan_area_id})


def _parcels(conn: sa.Connection, plan_area_id: int, seen: int | None,
             boxes: list[tuple[float, float, float, float]]):  # -> gpd.GeoDataFrame
    """The parcels the raster draws (_drawn_parcels) whose box meets one of some ground boxes.

    The ids near the boxes are found once, in a materialized step: as a semi-join in a
    parallel plan every process searched the spatial index for every box (62,000 searches for
    a state's 20,700 boxes, 4.1 s). Each is then looked up in the snapshot by its key, one
    probe per id (LATERAL ... OFFSET 0): the snapshot is written moments before, so its
    statistics count none of its rows, and a join the planner may turn around scanned every
    near id for each of a state's 41,000 snapshot rows (41 s instead of 0.5 s)."""
    from rulem_db.reports.frames import read_geo as _read_geo

    return _read_geo(conn, (
        "WITH near AS MATERIALIZED ("
        "  SELECT DISTINCT q.parcel_id FROM unnest(CAST(:x0 AS float8[]),"
        "    CAST(:y0 AS float8[]), CAST(:x1 AS float8[]), CAST(:y1 AS float8[]))"
        "    b(x0, y0, x1, y1)"
        "  JOIN core.parcel q"
        "    ON q.geom && ST_MakeEnvelope(b.x0, b.y0, b.x1, b.y1, ops.working_srid())"
        "  WHERE q.valid_to IS NULL AND q.plan_area_id = :p) "
        "SELECT p.parcel_id, s.status, ST_AsEWKB(p.geom) AS geom FROM near "
        "CROSS JOIN LATERAL (SELECT s.status FROM ops.run_parcel_balance s"
        "  WHERE s.run_id = :seen AND s.parcel_id = near.parcel_id AND s.status <> 'none'"
        "  OFFSET 0) s "
        "JOIN core.parcel p ON p.parcel_id = near.parcel_id "
        "WHERE p.valid_to IS NULL AND p.plan_area_id = :p ORDER BY p.parcel_id"),
        {"seen": seen or -1, "p": plan_area_id, "x0": [float(b[0]) for b in boxes],
         "y0": [float(b[1]) for b in boxes], "x1": [float(b[2]) for b in boxes],
         "y1": [float(b[3]) for b in boxes]})


class _Painter:
    """Draws tiles: one figure and axes of a tile's size, used for every tile of a draw.

    A pixel's value depends only on the parcels that reach it (Agg's coverage is integer
    arithmetic, a closed ring beside a pixel adds nothing to it) and on the order of the
    colour groups (ORDER): drawing only the parcels near some pixels gives those pixels
    exactly as the whole tile does. Why one figure: a new figure and axes per tile (pyplot,
    with ticks and spines made even when hidden) took 15 ms of a tile's 20; each tile now
    removes the last one's patches and sets its own limits, and draws on a cleared canvas.
    """

    def __init__(self) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        self.fig = Figure(figsize=(TILE_PX / 100, TILE_PX / 100), dpi=100, facecolor="white")
        FigureCanvasAgg(self.fig)
        self.ax = self.fig.add_axes((0, 0, 1, 1))
        self.ax.set_axis_off()
        self.ax.set_autoscale_on(False)
        self.drawn: list = []

    def tile(self, frame: Frame, i: int, j: int, parcels) -> np.ndarray:  # gpd.GeoDataFrame
        """RGBA pixels of tile (i, j) with these parcels drawn on white, in the tile's own
        transform."""
        from matplotlib.patches import PathPatch

        from rulem_db.reports.map import BALANCE_COLOURS, _compound_path, _compute_rings

        for artist in self.drawn:
            artist.remove()
        self.drawn = []
        x0, y0, x1, y1 = frame.tile_box(i, j)
        self.ax.set_xlim(x0, x1)
        self.ax.set_ylim(y0, y1)
        if len(parcels):
            coords, ring, owner = _compute_rings(np.asarray(parcels.geometry.values))
            faces = parcels["status"].to_numpy(dtype=object)[owner][ring]
            for status in ORDER:
                mask = faces == status
                if mask.any():
                    self.drawn.append(self.ax.add_artist(PathPatch(
                        _compound_path(coords[mask], ring[mask]),
                        facecolor=BALANCE_COLOURS[status], edgecolor="none", linewidth=0,
                        zorder=1)))
        self.fig.canvas.draw()
        return np.asarray(self.fig.canvas.buffer_rgba()).copy()


@dataclass
class Raster:
    """The parcel raster of a plan area (pixels RGBA, row 0 at the top) over its frame."""

    frame: Frame
    pixels: np.ndarray
    redrawn: str  # 'whole', 'patched (n parcels changed)' or 'kept'


def parcel_raster(conn: sa.Connection, reports: Path, plan_code: str, plan_area_id: int,
                  run_id: int, box: tuple[float, float, float, float]) -> Raster:
    """The parcel raster as of run_id's kept balances (see the module's docstring): the kept
    one patched where parcels changed since the run it shows, or drawn whole when there is
    none, of another frame or style, or that run's balances are gone."""
    folder = Path(reports) / ".parcel-raster" / plan_code
    frame = Frame.over(box)
    # what the raster is drawn from is what committed before this: a later change (a version
    # with valid_from from this on, or closed from this on) is looked for next time
    since = conn.execute(sa.text("SELECT checks.oldest_open_transaction()")).scalar_one()
    seen = conn.execute(sa.text("SELECT ops.parcels_seen_in(:r)"), {"r": run_id}).scalar()
    manifest_path, pixels_path = folder / "raster.json", folder / "raster.npy"
    kept = None
    if manifest_path.is_file() and pixels_path.is_file():
        try:
            kept = json.loads(manifest_path.read_text())
        except ValueError:
            kept = None
    usable = (kept is not None and kept.get("style") == STYLE and kept.get("frame") == frame.key()
              and kept.get("plan_area_id") == plan_area_id)
    boxes: list[tuple[float, float, float, float]] | None = None
    if usable:
        boxes = _changed_boxes(conn, plan_area_id, kept, seen)
    if boxes is None:
        pixels = _draw_whole(conn, frame, plan_area_id, seen)
        how = "whole"
    else:
        pixels = np.load(pixels_path)
        if boxes:
            _patch(conn, frame, plan_area_id, seen, pixels, boxes)
            how = f"patched ({len(boxes)} places changed)"
        else:
            how = "kept"
    folder.mkdir(parents=True, exist_ok=True)
    if how != "kept" or kept.get("seen") != seen or kept.get("since") != since.isoformat():
        np.save(pixels_path.with_suffix(".tmp.npy"), pixels)
        pixels_path.with_suffix(".tmp.npy").replace(pixels_path)
        manifest_path.write_text(json.dumps({
            "style": STYLE, "frame": frame.key(), "plan_area_id": plan_area_id,
            "run_id": run_id, "seen": seen, "since": since.isoformat()}))
    return Raster(frame, pixels, how)


def _changed_boxes(conn: sa.Connection, plan_area_id: int, kept: dict,
                   seen: int | None) -> list[tuple[float, float, float, float]] | None:
    """Ground boxes of what changed since the kept raster's run among the parcels either run's
    raster draws (_drawn_parcels): those whose kept status differs (old and new polygon) and their
    versions opened or closed since that run began. A parcel with no balance in either run is
    white on white in both, whatever its polygon did. None when that run's balances are not
    kept any more (draw the whole raster)."""
    if kept.get("seen") is None or seen is None:
        return None
    if not conn.execute(sa.text("SELECT EXISTS (SELECT 1 FROM ops.run WHERE run_id = :r)"),
                        {"r": kept["seen"]}).scalar():
        return None
    rows = conn.execute(sa.text(
        "WITH old AS (SELECT parcel_id, status FROM ops.run_parcel_balance"
        "             WHERE run_id = :old AND status <> 'none'),"
        " new AS (SELECT parcel_id, status FROM ops.run_parcel_balance"
        "         WHERE run_id = :new AND status <> 'none'),"
        " moved AS ("
        "  SELECT coalesce(a.parcel_id, b.parcel_id) AS parcel_id"
        "  FROM old a FULL JOIN new b ON b.parcel_id = a.parcel_id"
        "  WHERE a.status IS DISTINCT FROM b.status AND :old <> :new),"
        " drawn AS (SELECT parcel_id FROM old UNION SELECT parcel_id FROM new) "
        "SELECT ST_XMin(g), ST_YMin(g), ST_XMax(g), ST_YMax(g) FROM ("
        "  SELECT p.geom::box2d AS g FROM core.parcel p"
        "  WHERE p.plan_area_id = :p AND p.parcel_id IN (SELECT parcel_id FROM moved)"
        "    AND (p.valid_to IS NULL OR p.valid_to >= CAST(:since AS timestamptz))"
        "  UNION ALL"
        "  SELECT p.geom::box2d FROM core.parcel p"
        "  WHERE p.plan_area_id = :p AND p.parcel_id IN (SELECT parcel_id FROM drawn)"
        "    AND (p.valid_from >= CAST(:since AS timestamptz)"
        "         OR p.valid_to >= CAST(:since AS timestamptz))"
        ") x"), {"old": kept["seen"], "new": seen, "p": plan_area_id,
                 "since": kept["since"]}).all()
    return [tuple(float(v) for v in r) for r in rows]


def _draw_whole(conn: sa.Connection, frame: Frame, plan_area_id: int,
                seen: int | None) -> np.ndarray:
    """Every tile drawn from the parcels that reach it, read once for the whole raster."""
    pixels = np.empty((frame.rows * TILE_PX, frame.cols * TILE_PX, 4), dtype=np.uint8)
    parcels = _drawn_parcels(conn, plan_area_id, seen)
    bounds = (np.asarray(parcels.geometry.bounds.values) if len(parcels)
              else np.empty((0, 4)))
    painter = _Painter()
    for j in range(frame.rows):
        for i in range(frame.cols):
            x0, y0, x1, y1 = frame.tile_box(i, j)
            reach = np.flatnonzero((bounds[:, 0] <= x1) & (bounds[:, 2] >= x0)
                                   & (bounds[:, 1] <= y1) & (bounds[:, 3] >= y0))
            pixels[j * TILE_PX:(j + 1) * TILE_PX, i * TILE_PX:(i + 1) * TILE_PX] = \
                painter.tile(frame, i, j, parcels.iloc[reach])
    return pixels


def _patch(conn: sa.Connection, frame: Frame, plan_area_id: int, seen: int | None,
           pixels: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> None:
    """Redraw the pixels of the changed places, tile by tile: in each tile the union of their
    pixel rectangles, from every parcel that reaches them (the rest of what is drawn is not
    kept)."""
    per_tile: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
    for box in boxes:
        c0, r0, c1, r1 = frame.pixels(box)
        if c0 >= c1 or r0 >= r1:
            continue  # outside the frame
        for j in range(r0 // TILE_PX, (r1 - 1) // TILE_PX + 1):
            for i in range(c0 // TILE_PX, (c1 - 1) // TILE_PX + 1):
                tc0, tr0 = i * TILE_PX, j * TILE_PX
                per_tile.setdefault((i, j), []).append(
                    (max(c0, tc0) - tc0, max(r0, tr0) - tr0,
                     min(c1, tc0 + TILE_PX) - tc0, min(r1, tr0 + TILE_PX) - tr0))
    # every parcel that reaches a rectangle (its ground box, a pixel more), read at once
    ground = {}
    for (i, j), rects in per_tile.items():
        tx0, _, _, ty1 = frame.tile_box(i, j)
        ground[(i, j)] = np.array([
            (tx0 + (c0 - 1) * frame.px, ty1 - (r1 + 1) * frame.px,
             tx0 + (c1 + 1) * frame.px, ty1 - (r0 - 1) * frame.px)
            for c0, r0, c1, r1 in rects])
    if not ground:
        return
    near = _parcels(conn, plan_area_id, seen,
                    [tuple(b) for boxes_ in ground.values() for b in boxes_])
    bounds = (np.asarray(near.geometry.bounds.values) if len(near)
              else np.empty((0, 4)))
    painter = _Painter()
    for (i, j), rects in per_tile.items():
        g = ground[(i, j)]
        # the parcels in reach of the tile's rectangles' common box first, then of each
        # rectangle: every parcel against every rectangle of every tile was 23 s of a state's
        # 1 % night (20,000 places changed, 56 tiles)
        cand = np.flatnonzero((bounds[:, 0] <= g[:, 2].max()) & (bounds[:, 2] >= g[:, 0].min())
                              & (bounds[:, 1] <= g[:, 3].max()) & (bounds[:, 3] >= g[:, 1].min()))
        b = bounds[cand]
        reach = ((b[:, None, 0] <= g[None, :, 2]) & (b[:, None, 2] >= g[None, :, 0])
                 & (b[:, None, 1] <= g[None, :, 3]) & (b[:, None, 3] >= g[None, :, 1])
                 ).any(axis=1)
        drawn = painter.tile(frame, i, j, near.iloc[cand[reach]])
        mask = np.zeros((TILE_PX, TILE_PX), dtype=bool)
        for c0, r0, c1, r1 in rects:
            mask[r0:r1, c0:c1] = True
        tile = pixels[j * TILE_PX:(j + 1) * TILE_PX, i * TILE_PX:(i + 1) * TILE_PX]
        tile[mask] = drawn[mask]
