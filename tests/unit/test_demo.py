"""The demo plan area: deterministic, valid, inside Anoka County, and its stated numbers true.

Every number in ``demo.cases.DEMO_CASES`` is recomputed here from the written files (not from
the generator's tables), with shapely and the rules of docs/ledger.md and docs/checks.md, so the
ledger and check tests in other modules can assert against DEMO_CASES with confidence. No
database is needed.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import pyogrio
import pytest
from shapely import affinity
from shapely.geometry import LineString, Point, Polygon, box
from shapely.geometry.base import BaseGeometry
from shapely.ops import linemerge, unary_union

from demo import generate as demo
from demo.cases import DEMO_CASES, PLAN_FACTS
from demo.collector import file_field
from demo.county import (
    COUNTY_MARGIN_M,
    anoka_outline,
    counties_dump_path,
    parse_counties_dump,
    plan_area_geometry,
)
from demo.geometry import ACRE_M2, FT_M, PLAN_NAME, SQFT_PER_M2, to_local, to_world
from demo.layers.frame import PARCEL_LAYOUT, normalize_pin
from demo.layers.monitoring import MONITORING_DAY
from demo.layers.plan_records import UNBACKED_TRANSFERS
from demo.layers.stormwater import TR55_COVER, curve_number, runoff_in
from demo.layers.wetlands import UNASSESSED_WETLANDS
from demo.sites import CROSSES_PLAN, OUTSIDE_PLAN_MAX_M
from rulem_db.catalogue.layers import BY_NAME, FUNCTION_RATINGS, LAYERS, load_order

ACRE = ACRE_M2
FT = FT_M
FACTOR = {"fill": 1.0, "excavate": 1.0, "drain_full": 1.0, "drain_partial": 0.5}
RANKS = ("A", "AB", "B", "BC", "C", "CD", "D", "unranked")
AT_LEAST_BC = set(RANKS[: RANKS.index("BC") + 1])
LIMITS = {"high": (0.0, 0.0), "moderate": (0.5, 2.0), "slight": (1.0, 14.0),
          "least": (None, 21.0)}
BASELINE = "D-2019-01"
MARKER_TOL_M = 10 * FT
CASES = sorted(DEMO_CASES)


@dataclass
class Demo:
    """A generated demo read back from disk: spatial layers in local metres, CSV rows."""

    files: demo.DemoFiles
    world: dict[str, gpd.GeoDataFrame]
    local: dict[str, gpd.GeoDataFrame]
    rows: dict[str, list[dict[str, str]]]

    def features(self, layer: str) -> Iterator[dict]:
        """Each feature's fields (text as read) with its local geometry under 'geometry'."""
        if layer in self.local:
            yield from self.local[layer].to_dict("records")
        else:
            yield from self.rows[layer]

    def of_permit(self, layer: str, permit: str) -> list[dict]:
        return [f for f in self.features(layer) if f.get("permit_key") == permit]


def _read(files: demo.DemoFiles) -> Demo:
    world = {name: gpd.read_file(files.gpkg, layer=name) for name in files.gpkg_layers}
    local = {}
    for name, gdf in world.items():
        moved = gdf.copy()
        moved["geometry"] = [to_local(g) for g in gdf.geometry]
        local[name] = moved
    rows = {}
    for name, path in files.csv.items():
        with path.open(encoding="utf-8", newline="") as f:
            rows[name] = list(csv.DictReader(f))
    return Demo(files, world, local, rows)


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    return _read(demo.generate(tmp_path_factory.mktemp("demo")))


def _union(geoms) -> BaseGeometry:
    return unary_union(list(geoms))


def _baseline_wetland(d: Demo) -> BaseGeometry:
    return _union(f["geometry"] for f in d.features("wetland")
                  if f["delineation_key"] == BASELINE)


def _site_parcels(d: Demo, permit: str) -> BaseGeometry:
    by_pin = {f["feature_key"]: f["geometry"] for f in d.features("parcel")}
    pins = next(r for r in d.rows["permit"] if r["permit_no"] == permit)["parcel_pins"]
    return _union(by_pin[p] for p in pins.split(";"))


def _central(d: Demo) -> BaseGeometry:
    """Wetland connected to the seed by touching or through ditches touching both (3)."""
    wet = {f["feature_key"]: f["geometry"] for f in d.features("wetland")
           if f["delineation_key"] == BASELINE}
    ditches = [f["geometry"] for f in d.features("ditch")]
    reached = _union(f["geometry"] for f in d.features("central_wetland_seed"))
    found: set[str] = set()
    while True:
        new = {k for k, g in wet.items() if k not in found and g.intersects(reached)}
        via = {k for k, g in wet.items() if k not in found | new
               and any(x.intersects(g) and x.intersects(reached) for x in ditches)}
        if not new | via:
            return _union(wet[k] for k in found)
        found |= new | via
        reached = _union([reached, *(wet[k] for k in new | via)])


def _blank(value: object) -> bool:
    """None, '' or NaN: how an empty field comes back from CSV or GPKG."""
    return value is None or value == "" or (isinstance(value, float) and value != value)


def _close(a: float, b: float, tol: float = 0.00011) -> bool:
    return abs(a - b) <= tol


# ------------------------------------------------------------------------------------------
# Files, determinism, catalogue conformance
# ------------------------------------------------------------------------------------------
def _feature_dump(files: demo.DemoFiles) -> dict:
    out = {}
    for name in files.gpkg_layers:
        gdf = gpd.read_file(files.gpkg, layer=name)
        out[name] = [(g.wkt, json.dumps({k: v for k, v in r.items() if k != "geometry"},
                                         default=str, sort_keys=True))
                     for g, r in zip(gdf.geometry, gdf.to_dict("records"), strict=True)]
    for name, path in files.csv.items():
        out[name] = path.read_bytes()
    out["manifest"] = files.manifest.read_bytes()
    return out


def test_same_seed_same_features(tmp_path: Path, d: Demo) -> None:
    again = demo.generate(tmp_path / "again")
    assert _feature_dump(again) == _feature_dump(d.files)


def test_seed_changes_no_geometry_or_number(tmp_path: Path, d: Demo) -> None:
    other = _read(demo.generate(tmp_path / "other", seed=1))
    for name in d.files.gpkg_layers:
        assert list(other.world[name].geometry.to_wkt()) == list(d.world[name].geometry.to_wkt())
    assert other.rows["hydroperiod"] == d.rows["hydroperiod"]
    assert other.rows["credit_transfer"] == d.rows["credit_transfer"]
    assert other.rows["functional_assessment"] != d.rows["functional_assessment"]


def test_main_writes_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main([str(tmp_path / "cli")]) == 0
    printed = capsys.readouterr().out.split()
    assert str(tmp_path / "cli" / "manifest.json") in printed
    assert all(Path(p).exists() for p in printed)


def test_every_spatial_layer_with_catalogue_type_and_crs(d: Demo) -> None:
    spatial = {layer.name for layer in LAYERS if layer.geometry}
    assert set(d.files.gpkg_layers) == spatial
    kinds = {"MULTIPOLYGON": "MultiPolygon", "MULTILINESTRING": "MultiLineString",
             "POINT": "Point"}
    for name in spatial:
        info = pyogrio.read_info(d.files.gpkg, layer=name)
        assert info["geometry_type"] == kinds[BY_NAME[name].geometry], name
        assert info["crs"] == "EPSG:26915", name
        assert info["features"] > 0, name
        gdf = d.world[name]
        assert gdf.geometry.is_valid.all() and not gdf.geometry.is_empty.any(), name
        assert set(gdf.geometry.geom_type) == {kinds[BY_NAME[name].geometry]}, name


def test_fields_follow_the_catalogue(d: Demo) -> None:
    for layer in LAYERS:
        expected = ["feature_key"] + [file_field(c) for c in layer.columns]
        if layer.geometry:
            got = [c for c in d.world[layer.name].columns if c != "geometry"]
        else:
            got = list(d.rows[layer.name][0])
        assert got == expected, layer.name
        keys = [f["feature_key"] for f in d.features(layer.name)]
        assert len(keys) == len(set(keys)) and all(keys), layer.name


def test_required_and_coded_values(d: Demo) -> None:
    for layer in LAYERS:
        for f in d.features(layer.name):
            for col in layer.columns:
                value = f[file_field(col)]
                empty = _blank(value)
                assert not (col.required and empty), (layer.name, f["feature_key"], col.name)
                if col.codes and not empty:
                    assert value in col.codes, (layer.name, f["feature_key"], col.name, value)


def test_text_conventions(d: Demo) -> None:
    iso = re.compile(r"^\d{4}-\d{2}-\d{2}$")
    for layer in LAYERS:
        for f in d.features(layer.name):
            for col in layer.columns:
                value = f[file_field(col)]
                if col.kind == "date" and not _blank(value):
                    assert iso.match(value), (layer.name, col.name, value)
                if col.kind == "bool" and not layer.geometry:
                    assert value in ("true", "false", ""), (layer.name, col.name, value)
    for row in d.rows["functional_assessment"]:
        ratings = json.loads(row["ratings"])
        assert ratings and set(ratings.values()) <= set(FUNCTION_RATINGS)
    for row in d.rows["permit"]:
        assert re.match(r"^[0-9]{2}-[0-9]{3,4}$", row["permit_no"])
        assert all(re.match(r"^\d{12}$", p) for p in row["parcel_pins"].split(";"))


def test_every_reference_resolves(d: Demo) -> None:
    keys = {layer.name: {f["feature_key"] for f in d.features(layer.name)} for layer in LAYERS}
    for layer in LAYERS:
        for col in layer.columns:
            if not col.ref_layer:
                continue
            for f in d.features(layer.name):
                value = f[file_field(col)]
                if not _blank(value):
                    assert value in keys[col.ref_layer], (layer.name, col.name, value)


def test_manifest_load_order_respects_references(d: Demo) -> None:
    manifest = json.loads(d.files.manifest.read_text())
    assert manifest["plan_area"] == PLAN_NAME and manifest["crs"] == "EPSG:26915"
    order = [e["layer"] for e in manifest["load_order"]]
    assert order[:11] == ["cwmp_area", "central_wetland_seed", "parcel", "heritage_area",
                          "figure5_area", "soil", "permit", "delineation", "wetland",
                          "functional_assessment", "ditch"]
    assert order == list(load_order())  # the inbox's order, from the catalogue
    assert sorted(order) == sorted(layer.name for layer in LAYERS)
    for entry in manifest["load_order"]:
        layer = BY_NAME[entry["layer"]]
        for col in layer.columns:
            if col.ref_layer:
                assert order.index(col.ref_layer) < order.index(layer.name), col.name
        assert (d.files.out_dir / entry["file"]).exists()
        assert entry["features"] == len(list(d.features(layer.name)))
    assert set(manifest["tr55_cover"]) == set(TR55_COVER)


# ------------------------------------------------------------------------------------------
# Placement and the parcel fabric
# ------------------------------------------------------------------------------------------
def test_plan_area_well_inside_anoka_county(d: Demo) -> None:
    path = counties_dump_path()
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    county = anoka_outline()
    plan = d.world["cwmp_area"].geometry.iloc[0]
    assert county.contains(plan)
    assert county.boundary.distance(plan) > COUNTY_MARGIN_M
    for name, gdf in d.world.items():  # even the replacement that crosses the plan's edge
        assert all(county.covers(g) for g in gdf.geometry), name
    assert json.loads(d.files.manifest.read_text())["inside_anoka_county_by_m"] > 1000


def test_only_the_designed_replacement_crosses_the_plan(d: Demo) -> None:
    """Everything lies inside the plan area but 24-011's basin (7(c)), and that only by a
    strip: ingest takes the part inside and warns."""
    plan = d.local["cwmp_area"].geometry.iloc[0]
    wide = plan.buffer(OUTSIDE_PLAN_MAX_M, join_style=2)
    for name, gdf in d.local.items():
        for r in gdf.to_dict("records"):
            if plan.covers(r["geometry"]):
                continue
            assert name == "replacement" and r["permit_key"] in CROSSES_PLAN, name
            assert wide.covers(r["geometry"]) and plan.intersects(r["geometry"])


def test_counties_dump_parses() -> None:
    import gzip

    path = counties_dump_path()
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = parse_counties_dump(f.read())
    assert len(rows) == 7
    attrs, geom = rows["003"]
    assert attrs["co_name"] == "ANOKA" and geom.is_valid
    assert abs(geom.area - float(attrs["shape_area"])) / geom.area < 1e-3


def test_plan_area_size() -> None:
    plan = to_local(plan_area_geometry())
    assert plan.equals(box(0, 0, 2500, 2000))


def test_parcels_tile_the_plan_without_overlap(d: Demo) -> None:
    parcels = list(d.local["parcel"].geometry)
    assert len(parcels) == PLAN_FACTS["parcel_count"]
    for i, a in enumerate(parcels):
        for b in parcels[i + 1:]:
            assert a.intersection(b).area < 1e-6
    roads = 2500 * 30 + 350 * 30  # Main Street, Lake Drive
    assert abs(sum(p.area for p in parcels) - (2500 * 2000 - roads)) < 1e-3


def test_pins_look_like_anoka_pins(d: Demo) -> None:
    raw = re.compile(r"^\d{2}[- ]31[- ]22[- ][1-4]{2}[- ]\d{4}$")
    for f in d.features("parcel"):
        assert raw.match(f["pin"]), f["pin"]
        assert f["pin_normalized"] == normalize_pin(f["pin"]) == f["feature_key"]
    assert any(" " in f["pin"] for f in d.features("parcel"))


# ------------------------------------------------------------------------------------------
# Wetlands, delineations, submittals
# ------------------------------------------------------------------------------------------
def test_central_and_isolated_wetlands(d: Demo) -> None:
    central = _central(d)
    wet = {f["feature_key"]: f["geometry"] for f in d.features("wetland")
           if f["delineation_key"] == BASELINE}
    is_central = {k for k, g in wet.items() if g.intersection(central).area > 0}
    assert is_central == set(PLAN_FACTS["central_wetlands"])
    assert set(wet) - is_central == set(PLAN_FACTS["isolated_wetlands"])
    seed = _union(f["geometry"] for f in d.features("central_wetland_seed"))
    assert not wet["W-006"].intersects(seed.buffer(50))  # central only through its ditch


def test_delineations_over_time(d: Demo) -> None:
    dl = {f["feature_key"]: f for f in d.features("delineation")}
    assert dl["D-2019-01"]["geometry"].equals(box(0, 0, 2500, 2000))
    assert dl["D-2025-03"]["status"] == "approved"
    assert dl["D-2025-03"]["approved_on"] > next(
        r["decided_on"] for r in d.rows["permit"] if r["permit_no"] == "24-001")
    assert dl["D-2025-07"]["status"] == "submitted" and _blank(dl["D-2025-07"]["approved_on"])
    for f in d.features("wetland"):
        assert dl[f["delineation_key"]]["geometry"].covers(f["geometry"]), f["feature_key"]
    later = {f["feature_key"] for f in d.features("wetland") if f["delineation_key"] == "D-2025-03"}
    assert later == {"W-101", "W-102"}
    # the re-delineation drops the filled W-010 and maps the replacement basin as wetland
    assert not dl["D-2025-03"]["geometry"].contains(Point(50, 500))
    repl = _union(f["geometry"] for f in d.of_permit("replacement", "24-001")
                  if f["component"] == "wetland")
    w102 = next(f["geometry"] for f in d.features("wetland") if f["feature_key"] == "W-102")
    assert w102.equals(repl)


def _permit_row(d: Demo, permit: str) -> dict[str, str]:
    return next(r for r in d.rows["permit"] if r["permit_no"] == permit)


def _baseline_on(row: dict[str, str]) -> str:
    """The baseline date (docs/ledger.md section 1): baseline_on, else the decision date, else
    today."""
    return row["baseline_on"] or row["decided_on"] or dt.date.today().isoformat()


def _fails(permit: str, check: str) -> bool:
    return check in DEMO_CASES[permit]["fails"]


def test_permit_status_and_dates(d: Demo) -> None:
    for permit in CASES:
        row, case = _permit_row(d, permit), DEMO_CASES[permit]
        assert row["status"] == case.get("status", "approved"), permit
        decided = row["status"] in ("approved", "expired")
        assert bool(row["decided_on"]) == bool(row["tep_on"]) == bool(row["expires_on"]) \
            == decided, permit
        assert row["applied_on"] <= (row["decided_on"] or "9999"), permit
        if "baseline_on" in case:
            assert row["baseline_on"] == case["baseline_on"], permit
    # checks.md: declarations and easements are warnings only before the decision
    for permit, case in DEMO_CASES.items():
        assert set(case.get("warnings", ())) <= set(case["fails"]), permit


@pytest.mark.parametrize("permit", CASES)
def test_delineation_as_of_the_baseline(d: Demo, permit: str) -> None:
    """3(e): the parcels lie inside study areas approved (after TEP review) by the baseline."""
    on = _baseline_on(_permit_row(d, permit))
    reviewed = _union(f["geometry"] for f in d.features("delineation")
                      if f["status"] == "approved" and f["approved_on"] <= on
                      and not _blank(f["tep_reviewed_on"]))
    outside = _site_parcels(d, permit).difference(reviewed).area / ACRE
    assert _close(outside, DEMO_CASES[permit].get("undelineated_acres", 0.0)), outside
    assert (outside > 0) == _fails(permit, "3(e) delineation_approved")


def _site_wetlands(d: Demo, permit: str) -> dict[str, dict]:
    """Baseline wetlands with at least 1 m^2 on the permit's parcels (the checks' rule)."""
    parcels = _site_parcels(d, permit)
    return {f["feature_key"]: f for f in d.features("wetland")
            if f["delineation_key"] == BASELINE
            and f["geometry"].intersection(parcels).area >= 1}


@pytest.mark.parametrize("permit", CASES)
def test_submittals(d: Demo, permit: str) -> None:
    case, row = DEMO_CASES[permit], _permit_row(d, permit)
    site = _site_wetlands(d, permit)
    assessed = {r["wetland_key"] for r in d.rows["functional_assessment"]}
    untyped = sorted(k for k, f in site.items() if _blank(f["circular39_type"]))
    unassessed = sorted(set(site) - assessed)
    assert tuple(untyped) == case.get("untyped_wetlands", ())
    assert tuple(unassessed) == case.get("unassessed_wetlands", ())
    assert bool(untyped) == _fails(permit, "3(e) type_determination")
    assert bool(unassessed) == _fails(permit, "3(e) functional_assessment")
    # 3(f): a determination on record (the permit's date or a ditch credited to it), and a
    # date on every ditch crossing the parcels
    ditches = list(d.features("ditch"))
    determined = bool(row["ditch_determined_on"]) or any(
        f["permit_key"] == permit and not _blank(f["determined_on"]) for f in ditches)
    parcels = _site_parcels(d, permit)
    undetermined = sum(1 for f in ditches
                       if _blank(f["determined_on"]) and f["geometry"].intersects(parcels))
    missing = int(not determined) + undetermined
    assert missing == case.get("missing_ditch_determinations", 0)
    assert (missing > 0) == _fails(permit, "3(f) ditch_determination")
    # 6(d): a permit with a buffer has an approved vegetation plan
    buffered = bool(d.of_permit("buffer", permit))
    assert (buffered and not row["vegetation_plan_on"]) == _fails(permit, "6(d) vegetation_plan")
    assert not row["vegetation_plan_on"] or buffered


def test_every_wetland_assessed_but_the_designed_gap(d: Demo) -> None:
    assessed = {r["wetland_key"] for r in d.rows["functional_assessment"]}
    wetlands = {f["feature_key"] for f in d.features("wetland")}
    assert wetlands - assessed == set(UNASSESSED_WETLANDS) == {"W-019"}
    untyped = {f["feature_key"] for f in d.features("wetland") if _blank(f["circular39_type"])}
    assert untyped == {"W-019"}
    keys = sorted(r["feature_key"] for r in d.rows["functional_assessment"])
    assert "FA-016" not in keys and keys[-1] == "FA-019"  # the gap keeps the others' keys


# ------------------------------------------------------------------------------------------
# The ledger
# ------------------------------------------------------------------------------------------
def _structures_as_fill(d: Demo, permit: str) -> list[BaseGeometry]:
    """A permit's structures, stormwater BMPs and grading are impact in wetland, drawn as
    impact or not (7(b), 7(g); docs/ledger.md decision 18): suspended or not."""
    return [f["geometry"] for layer in ("structure", "bmp", "grading")
            for f in d.of_permit(layer, permit)]


def _decided_before(d: Demo, other: str, permit: str) -> bool:
    """Ground charged to a permit decided earlier is not charged again (decision 25): the
    decision date, then the permit number (the demo's tie-break; undecided last)."""
    def key(p: str) -> tuple[str, str]:
        return (_permit_row(d, p)["decided_on"] or "9999-12-31", p)
    return _permit_row(d, other)["status"] not in ("denied", "withdrawn") and \
        key(other) < key(permit)


def _charged_before(d: Demo, permit: str) -> BaseGeometry:
    base = _baseline_wetland(d)
    others = {f["permit_key"] for layer in ("impact", "structure", "bmp", "grading")
              for f in d.features(layer) if f["permit_key"] != permit}
    return _union(g.intersection(base) for o in sorted(others)
                  if _decided_before(d, o, permit)
                  for g in [f["geometry"] for f in d.of_permit("impact", o)]
                  + _structures_as_fill(d, o))


def _impact_acres(d: Demo, permit: str) -> float:
    base = _baseline_wetland(d).difference(_charged_before(d, permit))
    drawn = d.of_permit("impact", permit)
    undrawn = _union(_structures_as_fill(d, permit)).difference(
        _union(f["geometry"] for f in drawn))
    return (sum(f["geometry"].intersection(base).area * FACTOR[f["kind"]] for f in drawn)
            + undrawn.intersection(base).area) / ACRE


def _claim(d: Demo, f: dict) -> tuple[bool, str]:
    """A wetland replacement feature's claim on its ground (docs/ledger.md decision 19):
    counted ground (certified) by the date it was counted, before any pending claim."""
    if f["status"] == "certified":
        return (False, f["certified_on"] or f["status_on"])
    return (True, "")


def _claimed_before(d: Demo, mine: dict) -> BaseGeometry:
    """Ground of other owners' wetland replacement whose claim is stronger than this
    feature's (the demo's features are recorded in one file: no two pending claims meet)."""
    owner = None if _blank(mine["permit_key"]) else mine["permit_key"]
    return _union(f["geometry"] for f in d.features("replacement")
                  if f["component"] == "wetland"
                  and (None if _blank(f["permit_key"]) else f["permit_key"]) != owner
                  and _claim(d, f) < _claim(d, mine))


def _as_built(d: Demo, f: dict) -> BaseGeometry:
    """A built feature measured by the delineations approved after it was built (7(c)(vii),
    decision 26): inside their study areas only what they map as wetland."""
    later = [x for x in d.features("delineation")
             if x["status"] == "approved" and not _blank(f["constructed_on"])
             and x["approved_on"] > f["constructed_on"]]
    if not later:
        return f["geometry"]
    study = _union(x["geometry"] for x in later)
    mapped = _union(w["geometry"] for w in d.features("wetland")
                    if w["delineation_key"] in {x["feature_key"] for x in later})
    return f["geometry"].difference(study).union(f["geometry"].intersection(mapped))


def _credit_geometry(d: Demo, permit: str | None) -> BaseGeometry:
    repl = _union(_as_built(d, f).difference(_claimed_before(d, f))
                  for f in d.features("replacement")
                  if (_blank(f["permit_key"]) if permit is None else f["permit_key"] == permit)
                  and f["component"] == "wetland"
                  and f["status"] == "certified")
    heritage = _union(f["geometry"] for f in d.features("heritage_area")
                      if f["community_kind"] == "upland" and f["rank"] in AT_LEAST_BC)
    buffers = _union(f["geometry"] for f in d.features("buffer"))
    plan = d.local["cwmp_area"].geometry.iloc[0]
    return repl.difference(_baseline_wetland(d)).difference(buffers).difference(
        heritage).intersection(plan)


def _standing(d: Demo) -> list[dict]:
    """The transfers that stand (decision 9): each within its giver's surplus, in date order,
    after the transfers it gave before."""
    used: dict[str, float] = {}
    out = []
    for r in sorted(d.rows["credit_transfer"],
                    key=lambda r: (r["transferred_on"], r["feature_key"])):
        giver = r["from_permit_key"]
        surplus = _credit_geometry(d, giver).area / ACRE - _impact_acres(d, giver)
        if float(r["acres"]) <= surplus - used.get(giver, 0.0) + 0.00005:
            used[giver] = used.get(giver, 0.0) + float(r["acres"])
            out.append(r)
    return out


def _transfers(d: Demo, permit: str) -> tuple[float, float]:
    rows = _standing(d)
    return (sum(float(r["acres"]) for r in rows if r["to_permit_key"] == permit),
            sum(float(r["acres"]) for r in rows if r["from_permit_key"] == permit))


@pytest.mark.parametrize("permit", CASES)
def test_ledger_numbers(d: Demo, permit: str) -> None:
    case = DEMO_CASES[permit]
    impact = _impact_acres(d, permit)
    credit = _credit_geometry(d, permit).area / ACRE
    t_in, t_out = _transfers(d, permit)
    assert _close(impact, case["impact_acres"]), impact
    assert _close(credit, case["credit_acres"]), credit
    assert _close(t_in, case["transfers_in_acres"]) and _close(t_out, case["transfers_out_acres"])
    assert _close(credit + t_in - t_out - impact, case["balance_acres"])
    for wetland, (kind, area) in case["impacts"].items():
        w = next(f["geometry"] for f in d.features("wetland") if f["feature_key"] == wetland)
        hit = [(f["kind"], f["geometry"]) for f in d.of_permit("impact", permit)
               if f["geometry"].intersects(w)]
        drawn = _union(f["geometry"] for f in d.of_permit("impact", permit))
        hit += [("fill", g.difference(drawn)) for g in _structures_as_fill(d, permit)
                if g.difference(drawn).intersection(w).area > 0]
        assert [k for k, _ in hit] == [kind]
        assert abs(hit[0][1].intersection(w).area - area) < 1e-6
    upland = sum(f["geometry"].area for f in d.of_permit("replacement", permit)
                 if f["component"] == "upland")
    assert _close(upland / ACRE, case["upland_replacement_acres"])


@pytest.mark.parametrize("permit", CASES)
def test_credit_by_parcel(d: Demo, permit: str) -> None:
    credit = _credit_geometry(d, permit)
    layout = dict(PARCEL_LAYOUT)
    hosted = {pid: credit.intersection(Polygon(layout[pid])).area / ACRE
              for pid in DEMO_CASES[permit]["parcels"]}
    hosted = {k: v for k, v in hosted.items() if v > 0}
    expected = DEMO_CASES[permit]["credit_by_parcel_acres"]
    assert set(hosted) == set(expected)
    assert all(_close(hosted[k], expected[k]) for k in expected)


def test_other_replacement_states_and_district_project(d: Demo) -> None:
    def area(permit: str, status: str) -> float:
        return sum(f["geometry"].area for f in d.of_permit("replacement", permit)
                   if f["status"] == status) / ACRE

    assert _close(area("24-005", "constructed"), DEMO_CASES["24-005"]["constructed_acres"])
    assert _close(area("24-007", "proposed"), DEMO_CASES["24-007"]["proposed_acres"])
    district = [f for f in d.features("replacement") if not _blank(f["district_project"])]
    assert len(district) == 1 and _blank(district[0]["permit_key"])
    assert _close(_credit_geometry(d, None).area / ACRE,
                  PLAN_FACTS["district_project_credit_acres"])


def test_replacement_records(d: Demo) -> None:
    """Monitoring and sureties (cases.toml [plan_facts] and the cases), from the files: every
    certified wetland replacement (the District's too) monitored in each of its
    monitoring_years years from the year of certification whose visit has come by today, both
    standards each year, but the years a case says were missed; one surety per wetland
    replacement feature of a decided permit, posted at issuance (or when the case says) and
    held but where the case says it was released; the milestone dates in order."""
    today = dt.date.today().isoformat()
    replacement = {f["feature_key"]: f for f in d.features("replacement")
                   if f["component"] == "wetland"}
    wetland = {k: f for k, f in replacement.items() if not _blank(f["permit_key"])}
    certified = {k for k, f in replacement.items() if f["status"] == "certified"}
    monitoring = d.rows["replacement_monitoring"]
    assert {m["replacement_key"] for m in monitoring} == certified
    years = PLAN_FACTS["monitoring_years"]
    for key in certified:
        f = replacement[key]
        first = int(f["certified_on"][:4])
        case = DEMO_CASES.get(f["permit_key"], {}) if not _blank(f["permit_key"]) else {}
        skipped = set(case.get("monitoring_missing_years", ()))
        visits = {y: max(f"{y}-{MONITORING_DAY}", f["certified_on"] if y == first else "")
                  for y in range(first, first + years)}
        expected = sorted(y for y, on in visits.items() if on <= today and y not in skipped)
        got = [m for m in monitoring if m["replacement_key"] == key]
        assert sorted({int(m["monitoring_year"]) for m in got}) == expected, key
        assert len(got) == 2 * len(expected), key
        assert all(m["observed_on"] == visits[int(m["monitoring_year"])] for m in got), key
        assert all(f["certified_on"] <= m["observed_on"] <= today for m in got), key
    not_met = [m for m in monitoring if m["outcome"] == "not_met"]
    assert len(not_met) == PLAN_FACTS["monitoring_not_met"]
    for case_no, case in DEMO_CASES.items():
        failed = [f"{m['monitoring_year']} {m['performance_standard'].split(':')[0]}"
                  for m in not_met if wetland[m["replacement_key"]]["permit_key"] == case_no]
        assert tuple(failed) == case.get("monitoring_not_met", ())
        assert bool(failed) == ("7(e) replacement_certification" in case["fails"])
        assert bool(case.get("monitoring_missing_years")) == _fails(case_no,
                                                                    "7(e) monitoring_due")
    sureties = d.rows["financial_assurance"]
    assert len(sureties) == PLAN_FACTS["sureties"]
    assert sorted(s["replacement_key"] for s in sureties) == sorted(wetland)
    held = [s for s in sureties if _blank(s["released_on"])]
    assert len(held) == PLAN_FACTS["sureties_held"]
    [surety_4] = [s for s in held if s["permit_key"] == "24-004"]
    assert float(surety_4["amount"]) == DEMO_CASES["24-004"]["surety_held_usd"]
    for s in sureties:
        permit, case = _permit_row(d, s["permit_key"]), DEMO_CASES[s["permit_key"]]
        assert s["posted_on"] == case.get("surety_posted_on", permit["decided_on"])
        if not _blank(s["released_on"]):  # released before its monitoring years were met
            assert s["released_on"] == wetland[s["replacement_key"]]["certified_on"]
            assert _fails(s["permit_key"], "7(e) surety_held")
        # 7(e) impact_surety: the impact began before the basin was built, the surety later
        late = s["posted_on"] > (permit["impact_started_on"] or "9999")
        assert late == _fails(s["permit_key"], "7(e) impact_surety")
        if late:
            assert permit["impact_started_on"] == case["impact_started_on"]
    for f in wetland.values():
        if f["status"] == "certified":
            assert f["constructed_on"] < f["certified_on"] == f["status_on"]
        elif f["status"] == "constructed":
            assert f["constructed_on"] == f["status_on"] and _blank(f["certified_on"])


def test_conditions_and_tep_dates(d: Demo) -> None:
    """10: a condition of issuance open past its due date is what the cases fail (warnings);
    7(f): the TEP reviewed every decided permit with impact before its decision, but 24-006."""
    today = dt.date.today().isoformat()
    for permit in CASES:
        conditions = [c for c in d.rows["permit_condition"] if c["permit_key"] == permit]
        overdue = [c for c in conditions if c["state"] == "open" and c["due_on"] < today]
        assert bool(overdue) == _fails(permit, "10 condition_overdue"), permit
        assert all(c["due_on"] < today or c["state"] != "open" for c in conditions), permit
        row = _permit_row(d, permit)
        if row["decided_on"] and d.of_permit("impact", permit):
            late = row["tep_on"] > row["decided_on"]
            assert late == _fails(permit, "7(f) tep_before_decision"), permit
            if late:
                days = (dt.date.fromisoformat(row["tep_on"])
                        - dt.date.fromisoformat(row["decided_on"])).days
                assert days == DEMO_CASES[permit]["tep_after_decision_days"]


def _records(d: Demo, permit: str, kind: str) -> list[dict[str, str]]:
    return [r for r in d.rows["permit_record"]
            if r["permit_key"] == permit and r["kind"] == kind]


@pytest.mark.parametrize("permit", CASES)
def test_permit_records(d: Demo, permit: str) -> None:
    """The permit records (docs/rule-m.md) a case needs, from the files: each designed gap or
    figure is a check the case fails, and none other."""
    case, row = DEMO_CASES[permit], _permit_row(d, permit)
    decided = row["status"] in ("approved", "expired")
    impacts = d.of_permit("impact", permit)
    corps = [r for r in _records(d, permit, "corps_approval") if r["approved_on"]]
    assert (bool(impacts) and not corps) == _fails(permit, "3(h) corps_approval")
    plans = [r for r in _records(d, permit, "erosion_control_plan")
             if r["approved_on"] or (not decided and r["submitted_on"])]
    assert (not plans) == _fails(permit, "4 erosion_control")
    for design in _records(d, permit, "site_design"):
        facts = json.loads(design["facts"])
        missing = [k for k in ("minimize_impervious", "maximize_infiltration",
                               "reduce_peak_flow", "reduce_pollutant_transport")
                   if not facts.get(k)]
        assert tuple(missing) == case.get("site_design_missing_aims", ())
    assert bool(case.get("site_design_missing_aims")) == _fails(permit, "5(a) site_design")
    rises = [json.loads(r["facts"]) for r in _records(d, permit, "rate_control")]
    rise = max((round(f["proposed_cfs"][e] - f["existing_cfs"][e], 2)
                for f in rises for e in ("2", "10", "100")), default=None)
    if rise is not None and rise > 0:
        assert rise == case["peak_flow_increase_cfs"]
    assert ((rise or 0) > 0 or (rise is None and _fails(permit, "5(d) bounce")
                                and not d.of_permit("hydroperiod", permit))) \
        == _fails(permit, "5(b)(ii) peak_flow")
    for r in _records(d, permit, "groundwater"):
        f = json.loads(r["facts"])
        ratio = round(f["proposed_flow"] / f["existing_flow"], 2)
        assert (ratio < 1.0) == _fails(permit, "5(f) groundwater_flow")
        assert ratio == case.get("groundwater_ratio", 1.0)
    for r in _records(d, permit, "lot_monumentation"):
        f = json.loads(r["facts"])
        assert (f["lots_created"], f["lots_monumented"]) == (
            case.get("lots_created", 2), case.get("lots_monumented", 2))
        assert (f["lots_monumented"] < f["lots_created"]) == _fails(
            permit, "6(b) lot_monumentation")
    own_buffer = bool(d.of_permit("buffer", permit))
    approved = [r for r in _records(d, permit, "marker_design") if r["approved_on"]]
    assert (own_buffer and not approved) == _fails(permit, "6(b) marker_design")
    assert all(r["approved_by"] == "staff" and r["approved_on"] > row["decided_on"]
               for r in approved)  # 10: following issuance, staff approve in writing
    requests = {(r["kind"], bool(r["submitted_on"])) for r in d.rows["permit_record"]
                if r["permit_key"] == permit and r["requested_on"]}
    unanswered = {kind for kind, answered in requests if not answered}
    assert unanswered == {kind for kind, answered in case.get("requests", ()) if not answered}
    for kind, check in (("species_assessment", "3(d) species_assessment"),
                        ("requested_submittal", "3(g) requested_submittal"),
                        ("abandonment_petition", "9 abandonment_petition")):
        assert (kind in unanswered) == _fails(permit, check), kind
    graded_buffer = bool(case.get("buffer_grading_m2"))
    disturbance = _records(d, permit, "buffer_disturbance")
    assert (graded_buffer and not disturbance) == _fails(permit, "6(e)(i) disturbance_erosion_plan")
    assert (graded_buffer and not disturbance) == _fails(permit, "6(g) buffer_material")


def test_permit_record_count() -> None:
    assert len(demo.build()["permit_record"]) == PLAN_FACTS["permit_records"]


def test_transfers_within_surplus(d: Demo) -> None:
    """Every transfer was within its giver's surplus when recorded (the layers loaded after
    credit_transfer, structures among them, not yet there); those that no longer stand are
    the designed ones (decision 9)."""
    for giver in {r["from_permit_key"] for r in d.rows["credit_transfer"]}:
        base = _baseline_wetland(d)
        recorded = sum(f["geometry"].intersection(base).area * FACTOR[f["kind"]]
                       for f in d.of_permit("impact", giver)) / ACRE
        surplus = _credit_geometry(d, giver).area / ACRE - recorded
        given = sum(float(r["acres"]) for r in d.rows["credit_transfer"]
                    if r["from_permit_key"] == giver)
        assert given <= surplus + 0.00005, giver
    fallen = {(r["from_permit_key"], r["to_permit_key"]) for r in d.rows["credit_transfer"]} - {
        (r["from_permit_key"], r["to_permit_key"]) for r in _standing(d)}
    assert fallen == UNBACKED_TRANSFERS
    for _giver, taker in fallen:
        assert _fails(taker, "7(b) transfer_unbacked")


@pytest.mark.parametrize("permit", [*CASES, None])
def test_replacement_location_and_type(d: Demo, permit: str | None) -> None:
    """7(c): outside the plan area (any component), outside Figure 5 and inside a Figure 5 zone
    planned for another type (wetland component); None is the District project."""
    zones = list(d.features("figure5_area"))
    everywhere = _union(f["geometry"] for f in zones)
    plan = d.local["cwmp_area"].geometry.iloc[0]
    out_plan = out_zones = other_type = 0.0
    for f in d.features("replacement"):
        owner = None if _blank(f["permit_key"]) else f["permit_key"]
        if owner != permit:
            continue
        g = f["geometry"]
        out_plan += g.difference(plan).area
        if f["component"] == "wetland":
            out_zones += g.difference(everywhere).area
            if not _blank(f["planned_type"]):
                other = _union(z["geometry"] for z in zones
                               if not _blank(z["planned_type"])
                               and z["planned_type"] != f["planned_type"])
                other_type += g.intersection(other).area
    case = DEMO_CASES[permit] if permit else {"fails": ()}
    for area, key, check in ((out_plan, "outside_plan_acres", "replacement_outside_plan_area"),
                             (out_zones, "outside_figure5_acres", "replacement_outside_figure5"),
                             (other_type, "other_type_acres", "replacement_type_figure5")):
        assert _close(area / ACRE, case.get(key, 0.0)), (key, area / ACRE)
        assert (area > 1) == (f"7(c) {check}" in case["fails"]), check


def test_replacements_clear_of_buffers_and_wetland(d: Demo) -> None:
    buffers = _union(f["geometry"] for f in d.features("buffer"))
    base = _baseline_wetland(d)
    for f in d.features("replacement"):
        assert f["geometry"].distance(buffers) >= 24 - 1e-9, f["feature_key"]
        assert f["geometry"].intersection(base).area == 0, f["feature_key"]


def test_heritage_cases(d: Demo) -> None:
    ha = list(d.features("heritage_area"))
    wet_ha = _union(f["geometry"] for f in ha
                    if f["community_kind"] == "wetland" and f["rank"] in AT_LEAST_BC)
    up_bc = _union(f["geometry"] for f in ha
                   if f["community_kind"] == "upland" and f["rank"] in AT_LEAST_BC)
    up_c = _union(f["geometry"] for f in ha if f["community_kind"] == "upland"
                  and f["rank"] not in AT_LEAST_BC)
    assert {f["rank"] for f in ha} >= {"BC", "C", "B"}
    for permit in CASES:
        case = DEMO_CASES[permit]
        hit = _union(f["geometry"] for f in d.of_permit("impact", permit)).intersection(wet_ha)
        dug = _union(f["geometry"] for f in d.of_permit("replacement", permit)
                     if f["component"] == "wetland").intersection(up_bc)
        assert _close(hit.area / ACRE, case.get("heritage_b_impact_acres", 0.0)), permit
        assert _close(dug.area / ACRE, case.get("heritage_bc_overlap_acres", 0.0)), permit
    c_dug = _union(f["geometry"] for f in d.of_permit("replacement", "24-002")).intersection(up_c)
    assert _close(c_dug.area / ACRE, DEMO_CASES["24-002"]["heritage_c_overlap_acres"])


# ------------------------------------------------------------------------------------------
# Buffers, trails, markers, structures, easements, declarations
# ------------------------------------------------------------------------------------------
def _protected_edge(d: Demo, permit: str) -> BaseGeometry:
    central = _central(d)
    return central.boundary.intersection(_site_parcels(d, permit))


def _transects(d: Demo, permit: str) -> list[float]:
    """Buffer widths (ft) on outward normals at the middle of every 5 ft of protected edge:
    the length inside the buffer less its trails, out to the buffer's outer edge (6(f)(iv):
    the trail's surface does not count, the buffer beyond it does)."""
    buffer = _union(f["geometry"] for f in d.of_permit("buffer", permit))
    trails = _union(f["geometry"] for f in d.of_permit("trail", permit))
    effective = buffer.difference(trails)
    reach = buffer.union(trails)
    central = _central(d)
    widths = []
    for seg in _segments(_protected_edge(d, permit)):
        (x0, y0), (x1, y1) = seg.coords
        n = int(seg.length / (5 * FT))
        ux, uy = (x1 - x0) / seg.length, (y1 - y0) / seg.length
        for i in range(n):
            s = (i + 0.5) * 5 * FT
            px, py = x0 + ux * s, y0 + uy * s
            for nx, ny in ((-uy, ux), (uy, -ux)):
                if not central.contains(Point(px + nx * 0.01, py + ny * 0.01)):
                    break
            ray = LineString([(px, py), (px + nx * 200, py + ny * 200)])
            out = _first_run(ray.intersection(reach), Point(px, py))  # to the outer edge
            run = LineString([(px, py), (px + nx * out, py + ny * out)])
            widths.append(run.intersection(effective).length / FT)
    return widths


def _segments(geom: BaseGeometry) -> list[LineString]:
    lines = [g for g in getattr(geom, "geoms", [geom]) if isinstance(g, LineString)]
    return [LineString(pair) for line in lines for pair in zip(line.coords, line.coords[1:],
                                                               strict=False)]


def _first_run(hit: BaseGeometry, start: Point) -> float:
    for part in getattr(hit, "geoms", [hit]):
        if isinstance(part, LineString) and not part.is_empty and part.distance(start) < 1e-6:
            return part.length
    return 0.0


@pytest.mark.parametrize("permit", CASES)
def test_buffer_widths(d: Demo, permit: str) -> None:
    stated = DEMO_CASES[permit]["buffer"]
    if stated is None:
        assert not d.of_permit("buffer", permit)
        assert _protected_edge(d, permit).length == 0
        return
    widths = _transects(d, permit)
    edge = sum(s.length for s in _segments(_protected_edge(d, permit)))
    assert abs(edge - stated["edge_m"] - stated.get("island_edge_m", 0.0)) < 1e-6
    assert abs(min(widths) - stated["min_ft"]) < 0.01
    assert abs(sum(widths) / len(widths) - stated["mean_ft"]) < 0.3
    assert (min(widths) < 25) == _fails(permit, "6(c) buffer_min_width")
    assert (sum(widths) / len(widths) < 50) == _fails(permit, "6(c) buffer_avg_width")


def test_narrow_buffer_numbers(d: Demo) -> None:
    stated = DEMO_CASES["24-004"]["buffer"]
    buffer = _union(f["geometry"] for f in d.of_permit("buffer", "24-004"))
    narrow = buffer.intersection(box(1150, 0, 1250, 2000))
    assert abs(narrow.area / stated["narrow_length_m"] / FT - stated["narrow_width_ft"]) < 1e-6
    plain = (buffer.area / stated["edge_m"]) / FT
    assert abs(plain - stated["mean_ignoring_trail_ft"]) < 0.005
    # 24-013: 50 m at 6 m, the rest at 20 m; the exact mean is area / edge length
    stated = DEMO_CASES["24-013"]["buffer"]
    buffer = _union(f["geometry"] for f in d.of_permit("buffer", "24-013"))
    narrow = buffer.intersection(box(2200, 0, 2250, 2000))
    assert abs(narrow.area / stated["narrow_length_m"] / FT - stated["narrow_width_ft"]) < 0.005
    assert abs(buffer.area / stated["edge_m"] / FT - stated["mean_ft"]) < 0.005
    assert abs((buffer.area - narrow.area) / 200 / FT - stated["width_ft"]) < 0.005


def test_trails(d: Demo) -> None:
    for f in d.features("trail"):
        permit = f["permit_key"]
        buffer = _union(b["geometry"] for b in d.of_permit("buffer", permit))
        assert buffer.covers(f["geometry"])
        stated = DEMO_CASES[permit]["buffer"]["trail_width_ft"]
        minx, miny, maxx, maxy = f["geometry"].bounds
        assert abs(min(maxx - minx, maxy - miny) / FT - f["width_ft"]) < 1e-6
        assert f["width_ft"] == stated
        assert (f["width_ft"] > 10) == ("6(f)(iv) trail_width" in DEMO_CASES[permit]["fails"])


def _upland_edge(d: Demo, permit: str) -> LineString:
    buffer = _union(f["geometry"] for f in d.of_permit("buffer", permit))
    edge = buffer.boundary.difference(_central(d).buffer(0.01)).difference(
        _site_parcels(d, permit).boundary.buffer(0.01))
    merged = linemerge(edge) if edge.geom_type == "MultiLineString" else edge
    assert merged.geom_type == "LineString", permit
    return merged


def _crossings(d: Demo, edge: LineString) -> list[Point]:
    zone = edge.buffer(0.02)
    found: dict[tuple[float, float], Point] = {}
    for g in d.local["parcel"].geometry:
        hit = g.boundary.intersection(zone)
        for part in getattr(hit, "geoms", [hit]):
            if not part.is_empty:
                c = part.centroid
                found[(round(c.x, 1), round(c.y, 1))] = c
    return list(found.values())


@pytest.mark.parametrize("permit", CASES)
def test_markers(d: Demo, permit: str) -> None:
    stated = DEMO_CASES[permit]["markers"]
    markers = [f["geometry"] for f in d.of_permit("buffer_marker", permit)]
    if stated is None:
        assert not markers
        return
    edge = _upland_edge(d, permit)
    assert len(markers) == stated["count"]
    assert all(edge.distance(m) < 0.02 for m in markers)
    assert {f["marker_type"] for f in d.of_permit("buffer_marker", permit)} == {
        stated.get("type", "free_standing")}
    stops = sorted([0.0, edge.length, *(edge.project(m) for m in markers)])
    gaps = [(b - a) / FT for a, b in zip(stops, stops[1:], strict=False)]
    assert abs(max(gaps) - stated["max_gap_ft"]) < 0.1
    assert sorted(round(g, 2) for g in gaps if g > 200) == list(
        stated.get("gaps_over_200_ft", ()))
    crossings = _crossings(d, edge)
    unmarked = [c for c in crossings if min(c.distance(m) for m in markers) > MARKER_TOL_M]
    assert len(crossings) == stated["lot_line_crossings"]
    assert len(unmarked) == stated["unmarked_crossings"]
    if unmarked:
        assert abs(unmarked[0].x - stated["unmarked_crossing_x_m"]) < 0.05


@pytest.mark.parametrize("permit", CASES)
def test_structures_and_impervious_in_buffers(d: Demo, permit: str) -> None:
    """6(f) on any buffer: impervious surface and structures without an exception; 7(g)."""
    case = DEMO_CASES[permit]
    base = _baseline_wetland(d)
    buffers = _union(f["geometry"] for f in d.features("buffer"))
    inside = 0.0
    for f in d.of_permit("impervious", permit):
        inside += f["geometry"].intersection(buffers).area
    for f in d.of_permit("structure", permit):
        if f["buffer_exception"] in ("suspended_6fi", "public_utility_6fii"):
            continue
        inside += f["geometry"].intersection(buffers).area
    assert _close(inside / ACRE, case.get("shed_in_buffer_acres", 0.0)), inside / ACRE
    assert (inside > 1) == _fails(permit, "6(f) buffer_encroachment")
    for f in d.of_permit("structure", permit):
        in_wetland = f["geometry"].intersection(base).area
        violates = (in_wetland > 1 and f["kind"] in ("road", "utility", "other")
                    and _blank(f["variance_ref"]))
        assert violates == _fails(permit, "7(g) structure_in_wetland")
        if violates:
            assert abs(in_wetland - case["road_in_wetland_m2"]) < 1e-6


@pytest.mark.parametrize("permit", CASES)
def test_infiltration_offset_and_soils(d: Demo, permit: str) -> None:
    """6(f)(iii): infiltration BMPs at least 25 ft from the central wetland; 5(c)(ii): on A/B
    soil free of high groundwater and contamination."""
    case = DEMO_CASES[permit]
    central = _central(d)
    ab = _union(f["geometry"] for f in d.features("soil")
                if f["hydrologic_soil_group"] in ("A", "B") and not f["high_groundwater"]
                and not f["contaminated"])
    bmps = [f for f in d.of_permit("bmp", permit) if f["kind"] == "infiltration"]
    near = [round(f["geometry"].distance(central) / FT, 2) for f in bmps
            if f["geometry"].distance(central) < 25 * FT]
    off_ab = sum(f["geometry"].difference(ab).area for f in bmps) / ACRE
    assert near == ([case["rain_garden_offset_ft"]] if "rain_garden_offset_ft" in case else [])
    assert bool(near) == _fails(permit, "6(f)(iii) infiltration_in_buffer")
    assert _close(off_ab, case.get("rain_garden_acres", 0.0))
    assert (off_ab > 0) == _fails(permit, "5(c)(ii) infiltration_soils")


@pytest.mark.parametrize("permit", CASES)
def test_easement_coverage(d: Demo, permit: str) -> None:
    parcels = _site_parcels(d, permit)
    wet = _union(Polygon(p.exterior) for g in (f["geometry"] for f in d.features("wetland")
                                               if f["delineation_key"] == BASELINE)
                 for p in g.geoms)
    buffer = _union(f["geometry"] for f in d.features("buffer"))  # any permit's
    replacement = _union(f["geometry"] for f in d.of_permit("replacement", permit)
                         if f["component"] == "wetland")  # wetland once built (8)
    need = _union([wet.intersection(parcels), buffer.intersection(parcels),
                   replacement.intersection(parcels)])
    easement = _union(f["geometry"] for f in d.features("easement"))  # any recorded one
    assert all(not _blank(f["recording_no"]) for f in d.features("easement"))
    gap = need.difference(easement)
    case = DEMO_CASES[permit]
    assert _close(gap.area / ACRE, case["easement_uncovered_acres"])
    if "easement_uncovered_m2" in case:
        assert abs(gap.intersection(buffer).area - case["easement_uncovered_m2"]["buffer"]) < 1e-6
        assert abs(gap.intersection(wet).area - case["easement_uncovered_m2"]["wetland"]) < 1e-6
    assert ("8 easement_coverage" in case["fails"]) == (gap.area > 1)


DECLARATION_CHECKS = {"fertilizer_snow": "5(e) declaration_missing",
                      "buffer": "6 declaration_missing",
                      "buffer_restoration_3yr": "6(e)(v) declaration_missing"}


@pytest.mark.parametrize("permit", CASES)
def test_declarations(d: Demo, permit: str) -> None:
    """5(e), 6, 6(e)(v): the declarations a permit needs, recorded (or, for a buffer on
    public land, an agreement)."""
    case = DEMO_CASES[permit]
    rows = [r for r in d.rows["declaration"] if r["permit_key"] == permit]
    assert tuple(r["kind"] for r in rows) == case["declarations"]
    for r in rows:
        assert r["recording_no"] or r["public_land_agreement"] == "true"
    needed = set()
    proposed = [f for f in d.of_permit("impervious", permit) if f["condition"] == "proposed"]
    if d.of_permit("grading", permit) or proposed or \
            _permit_row(d, permit)["involves_subdivision"] == "true":
        needed.add("fertilizer_snow")
    buffers = d.of_permit("buffer", permit)
    if buffers or _protected_edge(d, permit).length > 0:
        needed.add("buffer")
    buffer = _union(f["geometry"] for f in buffers)
    recorded = {r["recording_no"] for r in rows if r["kind"] == "buffer" and r["recording_no"]}
    # 6: the declaration states the subdivision clause, an agreement the conveyance clause; 10:
    # an agreement executed by District staff stands in for nothing
    for r in rows:
        if r["kind"] == "buffer":
            stated = r["conveyance_clause" if r["public_land_agreement"] == "true"
                       else "subdivision_clause"] == "true"
            assert (not stated) == _fails(permit, "6 declaration_content")
            if r["public_land_agreement"] == "true":
                assert (r["executed_by"] == "staff") == _fails(permit, "10 agreement_executor")
    staff = {r["kind"] for r in rows if r["executed_by"] == "staff"}
    for f in buffers:  # the buffer names its recorded declaration, or has none
        if _blank(f["declaration_no"]):
            assert f["public_land_agreement"] or _fails(permit, "6 declaration_missing")
        else:
            assert f["declaration_no"] in recorded
    if any(f["geometry"].intersection(buffer).area > 1 for f in d.of_permit("grading", permit)):
        needed.add("buffer_restoration_3yr")
        graded = sum(f["geometry"].intersection(buffer).area
                     for f in d.of_permit("grading", permit))
        assert abs(graded - case["buffer_grading_m2"]) < 1e-6
    missing = needed - ({r["kind"] for r in rows} - staff)
    assert missing == set(case.get("missing_declarations", ()))
    for kind, check in DECLARATION_CHECKS.items():
        assert (kind in missing) == _fails(permit, check), kind


# ------------------------------------------------------------------------------------------
# Stormwater and hydroperiod
# ------------------------------------------------------------------------------------------
def _is_cd(soil: dict) -> bool:
    return (soil["hydrologic_soil_group"] not in ("A", "B") or bool(soil["high_groundwater"])
            or bool(soil["contaminated"]))


def _volumes(d: Demo, permit: str, sw: BaseGeometry) -> tuple[float, float]:
    v_ab = v_cd = 0.0
    for cover in d.of_permit("land_cover", permit):
        for soil in d.features("soil"):
            piece = cover["geometry"].intersection(sw).intersection(soil["geometry"]).area
            if piece <= 0:
                continue
            cn = curve_number(cover["cover_class"], soil["hydrologic_soil_group"])
            v = runoff_in(cn) / 12 * piece * SQFT_PER_M2
            if _is_cd(soil):
                v_cd += v
            else:
                v_ab += v
    return v_ab, v_cd


def test_runoff_oracles() -> None:
    for cn, q in ((98, 2.569), (80, 1.102), (74, 0.784), (61, 0.292), (39, 0.0)):
        assert abs(runoff_in(cn) - q) < 0.0005


@pytest.mark.parametrize("permit", CASES)
def test_stormwater(d: Demo, permit: str) -> None:
    """5(c): V_AB and V_CD per subwatershed by TR-55, and each condition against the checks
    the permit was built to fail (volumes compare in whole ft^3, as the checks do)."""
    case = DEMO_CASES[permit]
    covers = _union(f["geometry"] for f in d.of_permit("land_cover", permit))
    sws = d.of_permit("subwatershed", permit)
    assert set(case["stormwater"]) == {f["feature_key"] for f in sws}
    active = bool(d.of_permit("grading", permit)) or any(
        f["condition"] == "proposed" for f in d.of_permit("impervious", permit))
    assert (active and not sws) == _fails(permit, "5(c) stormwater_subwatersheds")
    failed: set[str] = set()
    for sw in sws:
        stated = case["stormwater"][sw["feature_key"]]
        blank = sw["geometry"].difference(covers).area
        assert blank / ACRE == pytest.approx(case.get("uncovered_acres", 0.0), abs=5e-5)
        if blank >= 1:  # 5(c)(i) cannot be computed: the volume checks are not evaluated
            failed |= {"5(c)(i) land_cover_coverage", "5(c)(ii) infiltration_volume",
                       "5(c)(iii) biofiltration_share", "5(c)(iii) cd_volume"}
            continue
        v_ab, v_cd = _volumes(d, permit, sw["geometry"])
        assert abs(v_ab - stated["v_ab_cuft"]) <= 0.5 and abs(v_cd - stated["v_cd_cuft"]) <= 0.5
        v_ab, v_cd = round(v_ab), round(v_cd)
        vol = {k: 0.0 for k in ("infiltration", "pretreatment", "biofiltration", "wet_pond")}
        takes_paved = False
        for b in d.features("bmp"):
            if b["subwatershed_key"] == sw["feature_key"]:
                assert sw["geometry"].covers(b["geometry"])
                vol[b["kind"]] += b["volume_cuft"]
                takes_paved |= b["kind"] == "infiltration" and not b["roof_runoff_only"]
        assert {k: v for k, v in vol.items() if v} == {
            k: stated[k] for k in vol if k in stated}
        paved = any(f["cover_class"] == "impervious" and f["geometry"].intersects(sw["geometry"])
                    for f in d.of_permit("land_cover", permit))
        # the 20 % shares are of "the volume required by paragraph 5(c)(i)": all of it
        if v_ab and vol["infiltration"] + min(vol["pretreatment"], 0.2 * (v_ab + v_cd)) < v_ab:
            failed.add("5(c)(ii) infiltration_volume")
        if paved and takes_paved and not vol["pretreatment"]:
            failed.add("5(c)(ii) pretreatment")
        if v_cd and vol["biofiltration"] < round(0.2 * (v_ab + v_cd)):
            failed.add("5(c)(iii) biofiltration_share")
        if v_cd and vol["biofiltration"] + vol["wet_pond"] < v_cd:
            failed.add("5(c)(iii) cd_volume")
        if v_cd and "biofiltration_share" in stated:
            assert abs(vol["biofiltration"] / v_cd - stated["biofiltration_share"]) < 0.0005
    volume_checks = {"5(c)(i) land_cover_coverage", "5(c)(ii) infiltration_volume",
                     "5(c)(ii) pretreatment", "5(c)(iii) biofiltration_share",
                     "5(c)(iii) cd_volume"}
    assert failed == volume_checks & set(case["fails"])


@pytest.mark.parametrize("permit", CASES)
def test_triggers(d: Demo, permit: str) -> None:
    found = set()
    if _impact_acres(d, permit) * ACRE > 1:  # 2(a)(i) is the impact the ledger counts
        found.add("2(a)(i)")
    new = sum(f["geometry"].area for f in d.of_permit("impervious", permit)
              if f["condition"] == "proposed") * SQFT_PER_M2
    if new > 10_000:
        found.add("2(a)(ii)")
    if any(f["alters_runoff_to_wetland"] for f in d.of_permit("grading", permit)):
        found.add("2(a)(iii)")
    case = DEMO_CASES[permit]
    assert found == set(case["triggers"])
    assert (not found) == _fails(permit, "2(a) applicability")
    assert case["pins"] == tuple(_permit_row(d, permit)["parcel_pins"].split(";"))


@pytest.mark.parametrize("permit", CASES)
def test_new_impervious(d: Demo, permit: str) -> None:
    new = sum(f["geometry"].area for f in d.of_permit("impervious", permit)
              if f["condition"] == "proposed") * SQFT_PER_M2
    assert abs(new - DEMO_CASES[permit]["new_impervious_sqft"]) <= 0.5
    assert (new > 10_000) == ("2(a)(ii)" in DEMO_CASES[permit].get("triggers", ()))


@pytest.mark.parametrize("permit", CASES)
def test_hydroperiod(d: Demo, permit: str) -> None:
    classes = {f["feature_key"]: f["susceptibility_class"] for f in d.features("wetland")}
    rows = [r for r in d.rows["hydroperiod"] if r["permit_key"] == permit]
    stated = DEMO_CASES[permit]["hydroperiod"]
    assert {r["wetland_key"] for r in rows} == set(stated)
    receiving = {f["receiving_wetland_key"] for f in d.of_permit("subwatershed", permit)
                 if not _blank(f["receiving_wetland_key"])}
    assert receiving == set(stated)
    bounce_over = days_over = False
    for r in rows:
        cls, bounce, days = stated[r["wetland_key"]]
        assert classes[r["wetland_key"]] == cls
        up = float(r["proposed_bounce_ft"]) - float(r["existing_bounce_ft"])
        more = float(r["proposed_inundation_days"]) - float(r["existing_inundation_days"])
        assert abs(up - bounce) < 1e-9 and abs(more - days) < 1e-9
        max_up, max_days = LIMITS[cls]
        bounce_over |= max_up is not None and up > max_up + 1e-9
        days_over |= more > max_days + 1e-9
    # 5 applies to subdivision, grading or impervious surface of a permit 2(a) requires
    needs = bool(DEMO_CASES[permit]["triggers"]) and (
        _permit_row(d, permit)["involves_subdivision"] in ("true", "True", "1")
        or bool(d.of_permit("grading", permit))
        or any(f["condition"] == "proposed" for f in d.of_permit("impervious", permit)))
    missing = needs and not rows
    assert (bounce_over or missing) == _fails(permit, "5(d) bounce")
    assert (days_over or missing) == _fails(permit, "5(d) inundation")


def test_species_record_is_restricted_layer(d: Demo) -> None:
    assert BY_NAME["species_record"].restricted
    assert len(d.local["species_record"]) == 1


def test_local_geometry_round_trips() -> None:
    g = box(1, 2, 3, 4)
    assert to_local(to_world(g)).equals(g)
    assert affinity.translate(g, 0, 0).equals(g)
