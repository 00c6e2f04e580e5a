"""The web map's MapLibre style and legend, translated from the QGIS default styles' rules.

Why translate and not write a second palette: the rules of sql/940 (web.style_rule(), sql/960)
are what QGIS, the reports and pub.severity_style already share; the browser drawing the same
layers in other colours would make two truths. A rule's QGIS filter is one of a few forms
("attr" = 'v', "attr" IN ('a', 'b'), "attr", ELSE, none), each of which has a MapLibre
expression. Hatched fills (QGIS patterns) have no sprite-free MapLibre equivalent: they are
drawn as a fainter fill with the rule's outline. No glyphs or sprites: nothing is fetched
from elsewhere, so the style has no text layers (labels: metadata "rulem:labels"). A basemap
only when a district configures one (rulem_web.basemap), drawn below every layer of ours.

One vector source, "pub", for all the layers: its tile holds one MVT layer per view
(rulem_web/tiles.py, /tiles/{z}/{x}/{y}.mvt), and each style layer names its view as
`source-layer`. One request per tile instead of one per view and tile. Clients group the
style's layers by `source-layer` (the layer list, the labels); metadata "rulem:layers" titles
them ([{layer, title}], bottom to top, the basemap first when there is one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rulem_web.basemap import Basemap

SOURCE = "pub"            # the style's vector source: every view of ours, one MVT layer each
BASEMAP = "basemap"       # the style's raster source and layer of a configured basemap
BASEMAP_TITLE = "Basemap"

# The map's layers, bottom to top: (view of pub, geometry kind, legend title).
WEB_LAYERS: tuple[tuple[str, str, str], ...] = (
    ("parcel_balance", "fill", "Parcels by 1:1 balance"),
    ("wetland", "fill", "Wetland"),
    ("replacement", "fill", "Replacement"),
    ("buffer", "fill", "Buffers"),
    ("impact", "fill", "Impacts"),
    ("finding", "any", "Findings by severity"),
    ("cwmp_area", "fill", "Plan boundary"),
)

# The views a click opens (rulem_web/static/js/pick.js): every feature of them is filled, an
# outline-only rule with an invisible fill, so a click inside it hits the feature.
CLICKABLE = frozenset({"parcel_balance", "impact", "replacement", "buffer"})

# Labels at site scales, for the map to draw (the style has no glyphs to draw text with).
LABELS: tuple[dict[str, Any], ...] = (
    {"layer": "parcel_balance", "property": "pin", "minzoom": 15},
    {"layer": "impact", "property": "permit_no", "minzoom": 15},
    {"layer": "replacement", "property": "permit_no", "minzoom": 15},
)

MM_TO_PX = 96 / 25.4
_EQ = re.compile(r'^"(\w+)"\s*=\s*\'((?:[^\']|\'\')*)\'$')
_IN = re.compile(r'^"(\w+)"\s+IN\s*\((.*)\)$')
_BOOL = re.compile(r'^"(\w+)"$')
_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def filter_expression(qgis: str | None) -> list[Any] | None:
    """A MapLibre expression for one rule's QGIS filter (None: every feature; ELSE is the
    caller's). Raises ValueError on a form the rules do not use, so a new rule is noticed."""
    if qgis is None:
        return None
    text = qgis.strip()
    if m := _EQ.match(text):
        return ["==", ["get", m.group(1)], m.group(2).replace("''", "'")]
    if m := _IN.match(text):
        values = [v.replace("''", "'") for v in _QUOTED.findall(m.group(2))]
        return ["in", ["get", m.group(1)], ["literal", values]]
    if m := _BOOL.match(text):
        return ["==", ["get", m.group(1)], True]
    raise ValueError(f"style filter {qgis!r} has no MapLibre translation (rulem_web/style.py)")


def _dash(line: str | None) -> list[float] | None:
    return {"dash": [3, 2], "dot": [1, 2]}.get(line or "solid")


def _width(mm: Any) -> float:
    return round(max(float(mm or 0) * MM_TO_PX, 0.5), 2)


def _layers_for(view: str, kind: str, rules: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The MapLibre layers of one view: per rule a fill and an outline (polygons), or a line
    and a circle (findings, whose geometries are of every kind)."""
    out: list[dict[str, Any]] = []
    earlier: list[list[Any]] = []
    for rule in rules:
        expr = filter_expression(None if rule["filter"] in (None, "ELSE") else rule["filter"])
        if rule["filter"] == "ELSE":
            expr = ["!", ["any", *earlier]] if earlier else None
        elif expr is not None:
            earlier.append(expr)
        base = f"{view}-{rule['pos']}"
        common: dict[str, Any] = {"source": SOURCE, "source-layer": view,
                                  "metadata": {"rulem:label": rule["label"]}}
        hatched = rule["pattern"] not in (None, "solid")
        fill_opacity = round((rule["alpha"] or 0) / 255 * (0.35 if hatched else 1), 3)
        outline = rule["outline"] or rule["fill"] or "#000000"
        line_paint: dict[str, Any] = {"line-color": outline, "line-width": _width(rule["width"])}
        if dash := _dash(rule["line"]):
            line_paint["line-dasharray"] = dash
        polygon = ["match", ["geometry-type"], ["Polygon", "MultiPolygon"], True, False]
        fill_filter = [polygon] if kind == "any" else []
        if rule["fill"] and fill_opacity > 0:
            out.append({**common, "id": f"{base}-fill", "type": "fill",
                        "filter": _all(expr, *fill_filter),
                        "paint": {"fill-color": rule["fill"], "fill-opacity": fill_opacity}})
        elif view in CLICKABLE and kind == "fill":
            # An outline-only rule still answers a click inside: a fill nobody sees, which
            # MapLibre's queryRenderedFeatures hits like any other.
            out.append({**common, "id": f"{base}-hit", "type": "fill",
                        "filter": _all(expr),
                        "paint": {"fill-color": outline, "fill-opacity": 0}})
        out.append({**common, "id": f"{base}-line", "type": "line",
                    "filter": _all(expr, *([["!=", ["geometry-type"], "Point"]]
                                           if kind == "any" else [])),
                    "paint": line_paint})
        if kind == "any":
            out.append({**common, "id": f"{base}-point", "type": "circle",
                        "filter": _all(expr, ["==", ["geometry-type"], "Point"]),
                        "paint": {"circle-color": rule["fill"] or outline,
                                  "circle-radius": _width(rule["size"] or 2.4) / 2 + 1,
                                  "circle-stroke-color": "#ffffff",
                                  "circle-stroke-width": 1}})
    return out


def _all(*parts: list[Any] | None) -> list[Any]:
    kept = [p for p in parts if p is not None]
    if not kept:
        return ["all"]
    return kept[0] if len(kept) == 1 else ["all", *kept]


def _by_layer(rules: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    for r in rules:
        grouped.setdefault(r["layer"], []).append(r)
    for rs in grouped.values():
        rs.sort(key=lambda r: r["pos"])
    return grouped


def map_tile_url(base_url: str) -> str:
    """The URL template of the web map's tile of all its layers (rulem_web/tiles.py)."""
    return f"{base_url.rstrip('/')}/tiles/{{z}}/{{x}}/{{y}}.mvt"


def map_views(rules: Iterable[Mapping[str, Any]], readable: Iterable[str] | None = None
              ) -> list[str]:
    """The views the map draws, bottom to top: those of WEB_LAYERS with style rules (and, when
    `readable` is given, that the login may read: the others are left out, never an error)."""
    grouped = _by_layer(rules)
    allowed = None if readable is None else set(readable)
    return [v for v, _, _ in WEB_LAYERS
            if v in grouped and (allowed is None or v in allowed)]


def style(base_url: str, rules: Iterable[Mapping[str, Any]],
          bounds: list[float] | None = None, *, readable: Iterable[str] | None = None,
          basemap: Basemap | None = None) -> dict[str, Any]:
    """The MapLibre style (version 8) of the web map, its sources on this service (and a
    configured basemap's)."""
    rules = list(rules)
    grouped = _by_layer(rules)
    views = map_views(rules, readable)
    sources: dict[str, Any] = {}
    layers: list[dict[str, Any]] = [{"id": "background", "type": "background",
                                     "paint": {"background-color": "#f7f7f4"}}]
    titles: list[dict[str, str]] = []
    if basemap is not None:
        sources[BASEMAP] = basemap.source(base_url)
        layers.append({"id": BASEMAP, "type": "raster", "source": BASEMAP})
        titles.append({"layer": BASEMAP, "title": BASEMAP_TITLE})
    if views:
        sources[SOURCE] = {"type": "vector", "tiles": [map_tile_url(base_url)],
                           "minzoom": 0, "maxzoom": 22}
        if bounds:
            sources[SOURCE]["bounds"] = bounds
    for view, kind, title in WEB_LAYERS:
        if view in views:
            layers += _layers_for(view, kind, grouped[view])
            titles.append({"layer": view, "title": title})
    out: dict[str, Any] = {
        "version": 8, "name": "rulem-db: Rule M balance map", "sources": sources,
        "layers": layers,
        "metadata": {"rulem:labels": [lab for lab in LABELS if lab["layer"] in views],
                     "rulem:layers": titles},
    }
    if bounds:
        w, s, e, n = bounds
        out["center"] = [(w + e) / 2, (s + n) / 2]
        out["zoom"] = 13
    return out


def legend(rules: Iterable[Mapping[str, Any]], readable: Iterable[str] | None = None
           ) -> list[dict[str, Any]]:
    """The legend entries of the web map's layers, in drawing order, from the same rules:
    only the layers the map draws (map_views: those the login may read)."""
    rules = list(rules)
    grouped = _by_layer(rules)
    drawn = set(map_views(rules, readable))
    entries = []
    for view, _, title in WEB_LAYERS:
        for r in grouped.get(view, []) if view in drawn else []:
            entries.append({"layer": view, "group": title, "label": r["label"],
                            "color": r["fill"], "outline": r["outline"],
                            "opacity": round((r["alpha"] or 0) / 255, 3),
                            "hatched": r["pattern"] not in (None, "solid")})
    return entries
