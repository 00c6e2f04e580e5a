"""Map pictures for the reports: parcel balance by colour, findings on top, the plan outline.

Why pictures and not a web map: the morning report must show, at a glance and offline, where
the plan area is in deficit and where the checks failed; a PNG does that in any mail client.
The data comes from the database (GeoDataFrames read back from pub and checks); this module
only draws. Colours follow the ledger's reading of a balance (docs/ledger.md section 4): deficit
red, balanced grey, surplus green, none white; findings are drawn by severity in the palette every
client shares (reports/palette.py: error red, warning orange, info blue, as QGIS and the web draw
them).
At site scale (1:10,000 or closer, as in the QGIS styles) parcels carry their PIN in display
form (rulem_db/pins.py), so a map of a permit's site reads like the table beside it.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import geopandas as gpd
import matplotlib

matplotlib.use("Agg")  # no display: reports are written by servers and tests

import matplotlib.patheffects as pe  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import shapely  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch, PathPatch  # noqa: E402
from matplotlib.path import Path  # noqa: E402

from rulem_db.pins import pin_display  # noqa: E402
from rulem_db.reports import frames  # noqa: E402
from rulem_db.reports.palette import SEVERITY_COLOURS  # noqa: E402

if TYPE_CHECKING:
    from rulem_db.reports.tiles import Raster

from rulem_db.reports.palette import BALANCE_COLOURS  # noqa: E402  (the one palette)

OUTLINE = "#111111"
# Parcels are labelled at 1:SITE_SCALE or closer, as the QGIS default styles label them
# (ops.layer_label_rule in sql/940_layer_styles.sql); beyond it labels would hide the map.
SITE_SCALE = 10_000
METRES_PER_INCH = 0.0254


def _legend_handles(parcels: gpd.GeoDataFrame, findings: gpd.GeoDataFrame | None,
                    outline: bool) -> list:
    handles: list = [Patch(facecolor=colour, edgecolor="#888888", label=f"parcel: {status}")
                     for status, colour in BALANCE_COLOURS.items()]
    if findings is not None and len(findings):
        for severity, colour in SEVERITY_COLOURS.items():
            if (findings["severity"] == severity).any():
                handles.append(Line2D([0], [0], color=colour, lw=2.5, marker="o",
                                      markersize=6, label=f"finding: {severity}"))
    if outline:
        handles.append(Line2D([0], [0], color=OUTLINE, lw=2, ls="--", label="plan area"))
    return handles


# The rings of the last parcel layer drawn: a report draws the same parcels twice (the balance
# map and the map of changes), and the nightly computes them ahead (reports/prefetch.py).
_LAST_RINGS: list[tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]] = []


def _rings(geoms: gpd.GeoSeries) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outer rings of the polygons, as one array of vertices: (coords, ring of each vertex,
    owner row of each ring). Holes are not kept: at the scale of a whole plan area a hole in a
    parcel is smaller than a pixel or two, and the findings drawn on top carry the detail."""
    values = np.asarray(geoms.values)
    for known, rings in _LAST_RINGS:
        if known is values:  # the same array of the same frame: the same rings
            return rings
    rings = _compute_rings(values)
    _LAST_RINGS[:] = [(values, rings)]
    return rings


def prepare(parcels: gpd.GeoDataFrame) -> None:
    """Compute the parcels' rings now (a thread reading ahead), for the maps drawn later."""
    _rings(parcels.geometry)


def forget() -> None:
    """Drop the rings kept for the last parcel layer (its report is written)."""
    _LAST_RINGS.clear()


def _compute_rings(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    parts, owner = shapely.get_parts(values, return_index=True)
    keep = ~shapely.is_empty(parts)
    parts, owner = parts[keep], owner[keep]
    coords, ring = shapely.get_coordinates(shapely.get_exterior_ring(parts), return_index=True)
    return coords, ring, owner


def _compound_path(coords: np.ndarray, ring: np.ndarray) -> Path:
    """Every ring as one matplotlib path (MOVETO at each ring's first vertex, CLOSEPOLY at its
    last), built with array operations: no Python object per polygon."""
    codes = np.full(len(coords), Path.LINETO, dtype=Path.code_type)
    if len(coords):
        starts = np.r_[0, np.flatnonzero(np.diff(ring)) + 1]
        ends = np.r_[starts[1:] - 1, len(coords) - 1]
        codes[starts] = Path.MOVETO
        codes[ends] = Path.CLOSEPOLY
    return Path(coords, codes)


def _polygons(ax, geoms: gpd.GeoSeries, facecolors: object, zorder: int, **style) -> None:
    """Polygons as one compound path per face colour.

    Why not GeoDataFrame.plot: it builds one matplotlib patch per polygon, 30-80 s for the
    100,000 parcels of a county (bench/report_map.py); and a PolyCollection still builds one
    path object per polygon (1-2 s a map). One path per colour, made of vertex arrays, draws
    the same picture (parcels of a plan area do not overlap) in a fraction of that.
    """
    coords, ring, owner = _rings(geoms)
    if not len(coords):
        return
    if isinstance(facecolors, str):
        groups = [(facecolors, np.ones(len(coords), dtype=bool))]
    else:
        faces = np.asarray(list(facecolors), dtype=object)[owner]  # a colour per ring
        per_vertex = faces[ring]
        groups = [(colour, per_vertex == colour) for colour in dict.fromkeys(faces.tolist())]
    for colour, mask in groups:
        path = _compound_path(coords[mask], ring[mask])
        ax.add_artist(PathPatch(path, facecolor=colour, zorder=zorder, fill=colour != "none",
                                **_patch_style(style)))
    (x0, y0), (x1, y1) = coords.min(axis=0), coords.max(axis=0)
    ax.update_datalim([(x0, y0), (x1, y1)])  # add_patch would walk every segment in Python
    ax.autoscale_view()


def _patch_style(style: dict) -> dict:
    """A collection's style keywords (plural) as a patch's (singular)."""
    names = {"edgecolors": "edgecolor", "linewidths": "linewidth", "facecolors": "facecolor"}
    return {names.get(k, k): v for k, v in style.items()}


def _draw_findings(ax, findings: gpd.GeoDataFrame) -> None:
    """Findings by severity: areas hatched and outlined, lines thick, points as dots."""
    for severity, colour in SEVERITY_COLOURS.items():
        part = findings[(findings["severity"] == severity) & findings.geometry.notna()]
        if part.empty:
            continue
        kinds = part.geometry.geom_type.str.replace("Multi", "")
        areas, lines, points = (part[kinds == "Polygon"], part[kinds == "LineString"],
                                part[kinds == "Point"])
        # collections drawn directly: GeoDataFrame.plot redraws the whole figure (every
        # parcel) after each call
        if len(areas):
            _polygons(ax, areas.geometry, "none", zorder=4, edgecolors=colour, linewidths=1.8,
                      hatch="////")
        if len(lines):
            parts = shapely.get_parts(np.asarray(lines.geometry.values))
            ax.add_collection(LineCollection(
                [shapely.get_coordinates(g) for g in parts if not g.is_empty], colors=colour,
                linewidths=2.2, zorder=5))
        if len(points):
            xy = shapely.get_coordinates(np.asarray(points.geometry.values))
            ax.scatter(xy[:, 0], xy[:, 1], s=28, c=colour, edgecolors="white", linewidths=0.6,
                       zorder=6)


def map_scale(ax, fig) -> float:
    """The scale denominator of a drawn map (the working CRS is in metres): ground metres per
    metre of paper across the axes, once their aspect is fixed."""
    ax.apply_aspect()
    width_in = ax.get_position().width * fig.get_figwidth()
    x0, x1 = ax.get_xlim()
    if not width_in or not (x1 - x0) or x1 - x0 != x1 - x0:
        return float("inf")
    return abs(x1 - x0) / (width_in * METRES_PER_INCH)


def parcel_labels(parcels: gpd.GeoDataFrame) -> list[tuple[float, float, str]]:
    """(x, y, PIN in display form) of each parcel with a PIN: at a point inside the parcel
    (a centroid can fall outside an L-shaped lot)."""
    if "pin" not in parcels.columns or not len(parcels):
        return []
    have = parcels[parcels["pin"].notna() & parcels.geometry.notna()
                   & ~parcels.geometry.is_empty]
    points = shapely.point_on_surface(np.asarray(have.geometry.values))
    return [(p.x, p.y, pin_display(str(pin)))
            for p, pin in zip(points, have["pin"], strict=True)]


def _label_parcels(ax, fig, parcels: gpd.GeoDataFrame) -> int:
    """PIN labels when the map is at site scale; returns how many were drawn."""
    if not len(parcels) or "pin" not in parcels.columns or map_scale(ax, fig) > SITE_SCALE:
        return 0
    labels = parcel_labels(parcels)
    halo = [pe.withStroke(linewidth=2.2, foreground="white")]
    for x, y, text in labels:
        ax.text(x, y, text, ha="center", va="center", fontsize=6.5, color="#252525",
                zorder=9, path_effects=halo, clip_on=True)
    return len(labels)


def shown_pixels(pixels: np.ndarray, shown: tuple[float, float]) -> np.ndarray:
    """The parcel raster averaged over blocks of k x k pixels, k the largest power of two that
    keeps it at least as many pixels as it is shown on (shown: its width and height on the
    map, in the figure's pixels), so the map looks the same (antialiased either way).

    Why: matplotlib resamples an image through masked float64 arrays, over 100 MB for the kept
    raster's 2048 x 2048 pixels: a report's first map took 0.95 s, 0.37 s with the raster
    averaged to 1024 x 1024 for its 900 pixels on the map (later maps 0.32-0.60 s and
    0.33-0.51 s). A power of two divides the raster's sides (whole tiles of 256 pixels), so
    its extent is unchanged.
    """
    h, w = pixels.shape[:2]
    k = 1
    while (w / (k * 2) >= shown[0] and h / (k * 2) >= shown[1]
           and h % (k * 2) == 0 and w % (k * 2) == 0):
        k *= 2
    if k == 1:
        return pixels
    # the k x k strided views summed in integers: numpy's mean over a reshaped block axis
    # goes through float64 and took 0.2 s for the 2048 x 2048 raster, this 20 ms
    total = np.zeros((h // k, w // k, pixels.shape[2]), np.uint32)
    for dy in range(k):
        for dx in range(k):
            total += pixels[dy::k, dx::k]
    return ((total + k * k // 2) // (k * k)).astype(pixels.dtype)


def _shown_size(ax, extent: tuple[float, float, float, float]) -> tuple[float, float]:
    """Width and height, in the figure's pixels, that a ground extent (left, right, bottom,
    top) takes on the axes as they are laid out now."""
    ax.apply_aspect()
    (x0, y0), (x1, y1) = ax.transData.transform([(extent[0], extent[2]),
                                                 (extent[1], extent[3])])
    return abs(x1 - x0), abs(y1 - y0)


def balance_map(parcels: gpd.GeoDataFrame | None, findings: gpd.GeoDataFrame | None,
                outline: gpd.GeoDataFrame | None, title: str,
                highlight: set[int] | None = None, size: tuple[float, float] = (11, 8.5),
                dpi: int = 110, raster: Raster | None = None,
                highlighted: gpd.GeoDataFrame | None = None) -> bytes:
    """The PNG of a balance map.

    parcels needs columns status and geometry (parcel_id for highlight, pin for the labels
    a map at site scale carries); findings severity and geometry; outline a geometry.
    highlight: parcel ids drawn with a thick black edge (the parcels that changed since the
    previous run). A large plan area gives, instead of its parcels, the parcel raster kept
    between nights (reports/tiles.py) and the highlighted parcels themselves.
    """
    fig, ax = plt.subplots(figsize=size, dpi=dpi)
    image = None
    if parcels is None:
        parcels = gpd.GeoDataFrame({"status": [], "pin": []}, geometry=[])
    try:
        if raster is not None:
            image = ax.imshow(raster.pixels, extent=raster.frame.extent, origin="upper",
                              interpolation="antialiased", zorder=1)
            ax.update_datalim([raster.frame.extent[::2], raster.frame.extent[1::2]])
            if highlight and highlighted is not None and len(highlighted):
                _polygons(ax, highlighted.geometry, "none", zorder=3, edgecolors="#000000",
                          linewidths=2.4)
        if len(parcels):
            colours = parcels["status"].map(BALANCE_COLOURS).fillna(BALANCE_COLOURS["none"])
            # parcel edges only where they can be seen: at tens of thousands of parcels an
            # edge is narrower than a pixel and drawing it doubles the time
            edge = 0.4 if frames.drawn_as_vectors(len(parcels)) else 0.0
            _polygons(ax, parcels.geometry, colours, zorder=1, edgecolors="#8c8c8c",
                      linewidths=edge)
            if highlight:
                changed = parcels[parcels["parcel_id"].isin(highlight)]
                if len(changed):
                    _polygons(ax, changed.geometry, "none", zorder=3, edgecolors="#000000",
                              linewidths=2.4)
        has_outline = outline is not None and len(outline) and outline.geometry.notna().any()
        if has_outline:
            rings = shapely.get_parts(shapely.boundary(np.asarray(
                outline.geometry.dropna().values)))
            ax.add_collection(LineCollection(
                [shapely.get_coordinates(r) for r in rings if not r.is_empty], colors=OUTLINE,
                linewidths=1.6, linestyles="--", zorder=7))
            ax.autoscale_view()
        if findings is not None and len(findings):
            _draw_findings(ax, findings)
        ax.set_axis_off()
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=12, loc="left")
        handles = _legend_handles(parcels, findings, bool(has_outline))
        if highlight:
            handles.append(Patch(facecolor="none", edgecolor="#000000", linewidth=2.4,
                                 label="changed since previous run"))
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=9,
                  frameon=False)
        _scale_bar(ax)
        fig.tight_layout()
        if image is not None:  # its size on the map is known once the map is laid out
            image.set_data(shown_pixels(raster.pixels,
                                        _shown_size(ax, raster.frame.extent)))
        _label_parcels(ax, fig, parcels)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.15)
        return buf.getvalue()
    finally:
        plt.close(fig)


def _scale_bar(ax) -> None:
    """A scale bar of a round length, in metres (the working CRS is projected in metres)."""
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    width = x1 - x0
    if not width or width != width:  # empty map
        return
    length = next(v for v in (10_000, 5_000, 2_000, 1_000, 500, 200, 100, 50, 20, 10, 5, 1)
                  if v <= width / 4 or v == 1)
    height = y1 - y0
    ax.set_ylim(y0 - height * 0.08, y1)  # room below the data, so nothing hides the bar
    bx, by = x0, y0 - height * 0.06
    ax.plot([bx, bx + length], [by, by], color="black", linewidth=3, zorder=8)
    label = f"{length / 1000:g} km" if length >= 1000 else f"{length} m"
    ax.text(bx + length + width * 0.01, by, label, ha="left", va="center", fontsize=8,
            zorder=8)
