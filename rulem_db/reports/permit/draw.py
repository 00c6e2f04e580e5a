"""Drawing a permit's site map for its decision document (a PNG, matplotlib).

Why apart from the reading and the page: the map is a picture of what read.py read, drawn in
the palette of the nightly map and the web (rulem_db.reports.palette); its scale bar is in
feet, the unit the rule and the document are written in (the working CRS is in metres).
"""

from __future__ import annotations

import io
from typing import Any

from rulem_db.reports.palette import LAYER_COLOURS, SEVERITY_COLOURS
from rulem_db.reports.permit.read import PermitDocument

FOOT_M = 0.3048  # metres in an international foot (the working CRS, EPSG:26915, is in metres)
# What the map draws besides parcels and findings, bottom to top: (label, face, edge, hatch),
# in the colours QGIS and the web map draw the same layers with (palette.LAYER_COLOURS).
SITE_STYLE = {
    "wetland": ("wetland as of the baseline date", *LAYER_COLOURS["wetland"], None),
    "buffer": ("buffer", *LAYER_COLOURS["buffer"], None),
    "replacement": ("replacement", *LAYER_COLOURS["replacement certified"], None),
    "impact": ("impact", *LAYER_COLOURS["impact fill"], "xx"),
}
TRANSECT_COLOURS = {"pass": "#4d4d4d", "fail": None}  # a failing transect takes the error colour


def scale_bar_feet(ax: Any) -> None:
    """A scale bar of a round length in feet, below the drawing, so nothing hides it."""
    x0, x1 = ax.get_xlim()
    y0, y1 = ax.get_ylim()
    width = x1 - x0
    if not width or width != width:  # empty map
        return
    width_ft = width / FOOT_M
    length = next(v for v in (10_000, 5_000, 2_000, 1_000, 500, 200, 100, 50, 20, 10, 5, 1)
                  if v <= width_ft / 4 or v == 1)
    height = y1 - y0
    ax.set_ylim(y0 - height * 0.08, y1)
    bx, by = x0 + width * 0.01, y0 - height * 0.05
    ax.plot([bx, bx + length * FOOT_M], [by, by], color="black", linewidth=3, zorder=8,
            solid_capstyle="butt")
    ax.plot([bx + length * FOOT_M / 2] * 2, [by - height * 0.008, by + height * 0.008],
            color="black", linewidth=1, zorder=8)
    ax.text(bx + length * FOOT_M + width * 0.01, by, f"{length:,} ft", ha="left",
            va="center", fontsize=8, zorder=8)


def site_map(doc: PermitDocument, dpi: int = 150) -> bytes:
    """The PNG of the site map: parcels (own permit's coloured by balance) labelled with PINs
    and the permits on them, the wetland as of the baseline date, buffers with their transects,
    impacts and replacement, findings in the severity colours, legend and a scale bar in feet."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from rulem_db.reports.map import BALANCE_COLOURS

    s = doc.site
    fig, ax = plt.subplots(figsize=(7.2, 5.4), dpi=dpi)
    try:
        handles: list = []
        parcels = s["parcels"]
        if len(parcels):
            # the permit's parcels tinted by their balance, so what is drawn on them stays
            # readable; the figures are in the tables
            faces = [to_rgba(BALANCE_COLOURS.get(st or "none", "#ffffff"), 0.3) if own
                     else to_rgba("#f4f4f4")
                     for own, st in zip(parcels["own"], parcels["status"], strict=True)]
            parcels.plot(ax=ax, color=faces, edgecolor="#555555", linewidth=0.6, zorder=1)
            own = parcels[parcels["own"]]
            if len(own):
                own.boundary.plot(ax=ax, color="#000000", linewidth=1.6, zorder=6)
                handles.append(Patch(facecolor=to_rgba(BALANCE_COLOURS.get(
                    doc.balance["status"], "#ffffff"), 0.3), edgecolor="#000000", linewidth=1.6,
                    label=f"parcel of {doc.permit['permit_no']}: {doc.balance['status']}"))
            handles.append(Patch(facecolor="#f4f4f4", edgecolor="#555555",
                                 label="other parcel"))
        for z, (name, (label, face, edge, hatch)) in enumerate(SITE_STYLE.items(), start=2):
            layer = s[name]
            if len(layer) and layer.geometry.notna().any():
                layer.plot(ax=ax, facecolor=face, edgecolor=edge, linewidth=0.8, hatch=hatch,
                           alpha=0.6, zorder=z)
                handles.append(Patch(facecolor=face, edgecolor=edge, hatch=hatch, label=label))
        trails = s["trail"]
        if len(trails) and trails.geometry.notna().any():
            trails.plot(ax=ax, facecolor="#8c6d31", edgecolor="#5b4520", linewidth=0.6,
                        zorder=6)
            handles.append(Patch(facecolor="#8c6d31", edgecolor="#5b4520", label="trail"))
        markers = s["markers"]
        if len(markers):
            markers.plot(ax=ax, color="#000000", marker="^", markersize=14, zorder=9)
            handles.append(Line2D([0], [0], color="#000000", marker="^", lw=0, markersize=5,
                                  label="buffer marker"))
        transects = s["transects"]
        if len(transects):
            for outcome in ("pass", "fail"):
                part = transects[transects["outcome"] == outcome]
                colour = TRANSECT_COLOURS[outcome] or SEVERITY_COLOURS["error"]
                if len(part):
                    part.plot(ax=ax, color=colour, linewidth=0.5 if outcome == "pass" else 0.9,
                              zorder=7)
                    handles.append(Line2D([0], [0], color=colour, lw=1,
                                          label=f"buffer transect: {outcome}"))
        findings = s["findings"]
        for severity, colour in SEVERITY_COLOURS.items():
            part = findings[findings["severity"] == severity]
            if not len(part):
                continue
            kinds = part.geometry.geom_type.str.replace("Multi", "")
            if (kinds == "Polygon").any():
                part[kinds == "Polygon"].plot(ax=ax, facecolor="none", edgecolor=colour,
                                              hatch="////", linewidth=1.8, zorder=8)
            if (kinds == "LineString").any():
                part[kinds == "LineString"].plot(ax=ax, color=colour, linewidth=2.4, zorder=8)
            if (kinds == "Point").any():
                part[kinds == "Point"].plot(ax=ax, color=colour, markersize=30,
                                            edgecolor="white", zorder=9)
            handles.append(Patch(facecolor="none", edgecolor=colour, hatch="////",
                                 linewidth=1.8, label=f"finding: {severity}"))
        for _, r in parcels.iterrows():
            if r["geom"] is None or r["geom"].is_empty:
                continue
            point = r["geom"].representative_point()
            permits = r["permits"] if isinstance(r["permits"], str) else ""
            text = r["pin"] + (f"\n{permits}" if permits else "")
            ax.annotate(text, (point.x, point.y), ha="center", va="center", zorder=10,
                        fontsize=7 if r["own"] else 6,
                        fontweight="bold" if r["own"] else "normal",
                        bbox={"boxstyle": "round,pad=0.2", "facecolor": "white",
                              "alpha": 0.75, "linewidth": 0})
        bounds = s["site"].total_bounds
        if len(s["site"]) and all(v == v for v in bounds):
            ax.set_xlim(bounds[0], bounds[2])
            ax.set_ylim(bounds[1], bounds[3])
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7,
                  frameon=False)
        scale_bar_feet(ax)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=0.1)
        return buf.getvalue()
    finally:
        plt.close(fig)
