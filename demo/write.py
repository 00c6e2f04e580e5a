"""Writing the collected demo to files: the checks that refuse anything invalid, the GeoPackage
and CSV formats, and the manifest.

Files: ``demo.gpkg`` (one layer per spatial layer), CSV for the attribute-only layers, and
``manifest.json`` (load order). Field convention: ``feature_key`` is each feature's natural key
(parcel: the normalized PIN; permit: permit_no; delineation: delineation_no; cwmp_area: the
name); a ``ref:L`` column ``X_id`` is written as ``X_key`` holding the referenced feature's
``feature_key``; text[] as ';'-joined text; jsonb as JSON text; dates as ISO text; booleans as
true/false.

Why its own module: the file convention is what ingest reads (docs/ingest.md), the same for
every layer; no layer module knows how its features are written.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd
from shapely.geometry import LineString, MultiLineString, box
from shapely.geometry.base import BaseGeometry

from demo.collector import Feature, file_field
from demo.geometry import CRS, ORIGIN, PLAN_NAME, PLAN_SIZE, polygonal, to_world
from demo.layers.stormwater import TR55_COVER
from demo.sites import CROSSES_PLAN, OUTSIDE_PLAN_MAX_M
from rulem_db.catalogue.layers import BY_NAME, Col, Layer, load_order

GPKG_NAME = "demo.gpkg"

# Load order: every layer after the layers it references, as the inbox ingests a night's files
# (the catalogue's load_order(); manifest.json repeats it).
LOAD_ORDER: tuple[str, ...] = load_order()


@dataclass(frozen=True)
class DemoFiles:
    """What ``generate`` wrote."""

    out_dir: Path
    gpkg: Path
    csv: dict[str, Path]
    manifest: Path
    gpkg_layers: tuple[str, ...]
    plan_name: str = PLAN_NAME

    @property
    def files(self) -> list[Path]:
        """Every written file."""
        return [self.gpkg, *self.csv.values(), self.manifest]


def _fields(layer: Layer) -> list[tuple[str, Col]]:
    return [(file_field(col), col) for col in layer.columns]


def _file_value(value: Any, col: Col) -> Any:
    """A value as the file convention wants it (the GPKG keeps booleans and numbers typed)."""
    if value is None:
        return None
    if col.kind == "numeric":
        return float(value)
    return value


def _shape(geom: BaseGeometry, geometry_type: str) -> BaseGeometry:
    """The catalogue's geometry type, in EPSG:26915."""
    world = to_world(geom)
    if geometry_type == "MULTIPOLYGON":
        return polygonal(world)
    if geometry_type == "MULTILINESTRING" and isinstance(world, LineString):
        return MultiLineString([world])
    return world


def _frame(layer: Layer, features: Sequence[Feature]) -> gpd.GeoDataFrame:
    data: dict[str, Any] = {"feature_key": [f.key for f in features]}
    for name, col in _fields(layer):
        values = [_file_value(f.attrs.get(name), col) for f in features]
        if col.kind == "bool" and all(v is not None for v in values):
            data[name] = pd.Series(values, dtype=bool)
        elif col.kind in ("numeric", "int"):
            data[name] = pd.Series(values, dtype="float64")
        else:
            data[name] = pd.Series(values, dtype=object)
    geoms = [_shape(f.geom, layer.geometry or "") for f in features]
    return gpd.GeoDataFrame(data, geometry=geoms, crs=CRS)


def _csv_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _write_csv(path: Path, layer: Layer, features: Sequence[Feature]) -> None:
    names = ["feature_key"] + [name for name, _ in _fields(layer)]
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(names)
        for feat in features:
            w.writerow([feat.key] + [_csv_text(feat.attrs.get(n)) for n in names[1:]])


def _manifest(seed: int, layers: dict[str, list[Feature]], county_m: float | None) -> dict:
    order = []
    for name in LOAD_ORDER:
        layer = BY_NAME[name]
        order.append({
            "layer": name,
            "file": GPKG_NAME if layer.geometry else f"{name}.csv",
            "layer_name": name if layer.geometry else None,
            "format": "gpkg" if layer.geometry else "csv",
            "geometry": layer.geometry,
            "features": len(layers[name]),
            "key_field": "feature_key",
            "restricted": layer.restricted,
        })
    return {
        "plan_area": PLAN_NAME,
        "crs": CRS,
        "seed": seed,
        "generator": "demo.generate",
        "origin": list(ORIGIN),
        "inside_anoka_county_by_m": None if county_m is None else round(county_m, 1),
        "field_convention": {
            "key": "feature_key", "reference": "X_id -> X_key (referenced feature_key)",
            "text[]": "';'-joined", "jsonb": "JSON text", "date": "ISO 8601 text",
            "bool": "true/false",
        },
        "tr55_cover": {k: {"description": d, "cn": dict(zip("ABCD", cn, strict=True))}
                       for k, (d, cn) in TR55_COVER.items()},
        "load_order": order,
    }


def validate(layers: dict[str, list[Feature]]) -> None:
    """Refuse to write anything invalid: every geometry valid, non-empty, inside the plan;
    only a replacement built to fail 7(c) may cross the plan boundary, and by no more than
    OUTSIDE_PLAN_MAX_M (ingest takes the part inside and warns)."""
    plan = box(0.0, 0.0, *PLAN_SIZE)
    for name, feats in layers.items():
        for f in feats:
            if f.geom is None:
                continue
            if f.geom.is_empty or not f.geom.is_valid:
                raise ValueError(f"{name} {f.key}: geometry empty or invalid")
            if plan.covers(f.geom):
                continue
            crossing = (name == "replacement" and f.attrs.get("permit_key") in CROSSES_PLAN
                        and plan.intersects(f.geom)
                        and plan.buffer(OUTSIDE_PLAN_MAX_M, join_style=2).covers(f.geom))
            if not crossing:
                raise ValueError(f"{name} {f.key}: geometry outside the plan")


def write_files(out_dir: Path, layers: dict[str, list[Feature]], seed: int,
                county_m: float | None) -> DemoFiles:
    """Write demo.gpkg (every spatial layer), one CSV per attribute-only layer and manifest.json
    into out_dir, layer by layer in the load order."""
    gpkg = out_dir / GPKG_NAME
    gpkg.unlink(missing_ok=True)
    csvs: dict[str, Path] = {}
    written: list[str] = []
    for name in LOAD_ORDER:
        layer = BY_NAME[name]
        if layer.geometry:
            _frame(layer, layers[name]).to_file(gpkg, layer=name, driver="GPKG",
                                                engine="pyogrio")
            written.append(name)
        else:
            csvs[name] = out_dir / f"{name}.csv"
            _write_csv(csvs[name], layer, layers[name])
    manifest = out_dir / "manifest.json"
    manifest.write_text(json.dumps(_manifest(seed, layers, county_m), indent=2) + "\n",
                        encoding="utf-8")
    return DemoFiles(out_dir, gpkg, csvs, manifest, tuple(written))
