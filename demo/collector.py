"""Where the layer modules put the demo's features: one list per catalogue layer, in the order
made, which is the order written.

Why a collector and not each module writing its own file: keys are sequential per prefix across
permits (``next_key``), a field name the catalogue does not know is refused at once, and the
writer (demo/write.py) gets every layer in one place, in one deterministic order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shapely.geometry.base import BaseGeometry

from rulem_db.catalogue.layers import LAYERS, Col


def file_field(col: Col) -> str:
    """The file's field name for a catalogue column: a reference X_id travels as X_key."""
    if col.ref_layer:
        return col.name[: -len("_id")] + "_key" if col.name.endswith("_id") else col.name + "_key"
    return col.name


@dataclass
class Feature:
    """One feature of a demo layer: natural key, local geometry, attributes by file field."""

    key: str
    geom: BaseGeometry | None
    attrs: dict[str, Any]


class Collector:
    """Features by layer, in the order made (which is the order written: determinism)."""

    def __init__(self) -> None:
        self.layers: dict[str, list[Feature]] = {layer.name: [] for layer in LAYERS}
        self._fields = {layer.name: {file_field(c) for c in layer.columns} for layer in LAYERS}
        self._counters: dict[str, int] = {}

    def next_key(self, prefix: str, start: int = 1) -> str:
        """The next sequential key with prefix, e.g. 'I-003'."""
        n = self._counters.get(prefix, start - 1) + 1
        self._counters[prefix] = n
        return f"{prefix}-{n:03d}"

    def add(self, layer: str, key: str, geom: BaseGeometry | None = None, **attrs: Any) -> str:
        """Add a feature; unknown field names are an error so a typo cannot pass silently."""
        unknown = set(attrs) - self._fields[layer]
        if unknown:
            raise KeyError(f"layer {layer} has no fields {sorted(unknown)}")
        if any(f.key == key for f in self.layers[layer]):
            raise KeyError(f"duplicate feature_key {key!r} in layer {layer}")
        self.layers[layer].append(Feature(key, geom, attrs))
        return key

    def geoms(self, layer: str, **match: Any) -> list[BaseGeometry]:
        """Geometries of a layer's features whose attributes equal match."""
        return [f.geom for f in self.layers[layer]
                if f.geom is not None and all(f.attrs.get(k) == v for k, v in match.items())]
