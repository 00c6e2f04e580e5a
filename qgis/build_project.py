"""Builds qgis/rulem-db.qgs: every published layer of a rulem-db database, grouped, in a
sensible drawing order, each with its default style from the database (public.layer_styles).

Run with QGIS's Python (Debian: `apt-get install python3-qgis qgis-providers`):

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 qgis/build_project.py [--service rulem]

Why generated and committed: the project must open the layers that exist, so it is built from
the database's catalogue, not written by hand; and the committed copy is what staff open. The
layers point at the pg_service entry (default `rulem`, see docs/pg_service.conf.example), so
the same project opens any rulem-db database: each user's service file says which, and with
which login. The layer URIs carry the working CRS of the database the project was built from
(EPSG:26915 by default); rebuild it for a database with another working CRS.

Every layer here is read-only, and its abstract says so: editing goes through the edit project
qgis/rulem-db-edit.qgs (qgis/build_edit_project.py), as a member of rulem_editor.

History views (pub.<layer>_history) are left out (add them from the browser: they open with
their layer's style); restricted layers are left out (they need the rulem_restricted role).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(HERE.parent))  # the layer catalogue: stdlib only, QGIS's Python reads it
from rulem_db.catalogue.layers import LAYERS  # noqa: E402

# Legend groups from top to bottom. A layer's group and its place in it (1 = drawn on top) are
# catalogue facts (Layer.legend); the published views that are not layers are placed here.
LEGEND_GROUPS = ("Rule checks", "Permits: buffers and easements",
                 "Permits: impact and replacement", "Permits: site and stormwater", "Wetlands",
                 "1:1 replacement ledger", "Plan and parcels")
VIEW_LEGEND: dict[str, tuple[str, int]] = {
    "finding": ("Rule checks", 1), "buffer_transect": ("Rule checks", 2),
    "permit_compliance": ("Rule checks", 3), "stormwater_volume": ("Rule checks", 4),
    # The balances colour whole parcels: below the features that make them.
    "plan_balance": ("1:1 replacement ledger", 1), "parcel_balance": ("1:1 replacement ledger", 2),
}


def _groups() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(group, names in drawing order) from the catalogue's legend and VIEW_LEGEND."""
    legend = {layer.name: layer.legend for layer in LAYERS
              if layer.legend and not layer.restricted}
    legend.update(VIEW_LEGEND)
    unknown = {group for group, _ in legend.values()} - set(LEGEND_GROUPS)
    if unknown:
        raise SystemExit(f"build_project: legend groups {sorted(unknown)} are not in "
                         "LEGEND_GROUPS")
    return tuple((group, tuple(name for name, _ in sorted(
        ((n, pos) for n, (g, pos) in legend.items() if g == group), key=lambda x: x[1])))
        for group in LEGEND_GROUPS)


GROUPS = _groups()
OTHER_GROUP = "Other layers"
TABLE_GROUP = "Tables (no geometry)"
# In the project but unchecked: the catalogue's Layer.legend_unchecked, and the plan balance
# (a view colouring every parcel, under the parcel balances).
HIDDEN = {layer.name for layer in LAYERS if layer.legend_unchecked} | {"plan_balance"}
# Every layer's abstract ends with where editing happens.
EDIT_NOTE = ("Read-only here: editing goes through the edit project qgis/rulem-db-edit.qgs "
             "(schema edit, as a member of rulem_editor).")
WKB_NAMES = {"POINT": "Point", "MULTIPOINT": "MultiPoint", "LINESTRING": "LineString",
             "MULTILINESTRING": "MultiLineString", "POLYGON": "Polygon",
             "MULTIPOLYGON": "MultiPolygon"}
# Views whose geometry is of mixed type by nature: a layer for each type even when the data at
# hand lacks one (findings are areas, lines or points, or none: a missing declaration).
MIXED = {"finding"}
GENERIC_TYPES = (("Point", "points"), ("LineString", "lines"), ("Polygon", "areas"))

CATALOGUE_SQL = """
SELECT c.relname::text,
       coalesce(g.f_geometry_column::text, ''), coalesce(upper(g.type), ''),
       coalesce(g.srid, 0),
       (SELECT a.attname::text FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY a.attname = c.relname || '_id' DESC, a.attname = 'row_key' DESC, a.attnum
         LIMIT 1),
       coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN geometry_columns g ON g.f_table_schema = n.nspname AND g.f_table_name = c.relname
WHERE n.nspname = 'pub' AND c.relkind IN ('v', 'm', 'r')
  AND NOT (c.relname LIKE '%\\_history'
           AND to_regclass(format('pub.%I', left(c.relname, -8))) IS NOT NULL)
ORDER BY c.relname
"""


def _catalogue(service: str) -> tuple[list[dict], dict]:
    from qgis.core import QgsProviderRegistry

    conn = QgsProviderRegistry.instance().providerMetadata("postgres").createConnection(
        f"service='{service}'", {})
    rows = conn.executeSql(CATALOGUE_SQL)
    views = [{"name": r[0], "geom": r[1], "type": r[2], "srid": int(r[3] or 0), "key": r[4],
              "doc": r[5]} for r in rows]
    srids = [v["srid"] for v in views if v["srid"]]
    srid = max(set(srids), key=srids.count) if srids else 26915  # the working CRS
    info = conn.executeSql("SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM ("
                           "SELECT ST_Extent(geom) AS e FROM pub.cwmp_area) x")[0]
    extent = [float(x) for x in info] if info[0] is not None else None
    types: dict[str, list[str]] = {}
    for v in views:
        if v["type"] in ("GEOMETRY", "GEOMETRYCOLLECTION"):
            try:
                present = conn.executeSql(
                    f'SELECT DISTINCT coalesce(replace(upper(GeometryType("{v["geom"]}")), '
                    f'\'MULTI\', \'\'), \'NONE\') FROM pub."{v["name"]}"')
            except Exception:  # unreadable: every type gets a layer, and the load reports it
                present = []
            types[v["name"]] = sorted(r[0] for r in present)
    return views, {"srid": srid, "extent": extent, "generic_types": types}


def _uri(service: str, view: dict, srid: int, wkb: str | None) -> str:
    uri = (f"service='{service}' key='{view['key']}' checkPrimaryKeyUnicity='0' "
           f"estimatedmetadata=true")
    if view["geom"]:
        uri += f" srid={view['srid'] or srid} type={wkb}"
    uri += f' table="pub"."{view["name"]}"'
    if view["geom"]:
        uri += f' ({view["geom"]})'
    return uri


def _layer_specs(service: str, views: list[dict], meta: dict) -> list[tuple[str, str, str, dict]]:
    """(group, layer name, uri, view) in legend order."""
    wanted = {name: group for group, names in GROUPS for name in names}
    order = {name: i for i, (_, names) in enumerate(GROUPS) for name in [*names]}
    position = {name: j for _, names in GROUPS for j, name in enumerate(names)}
    specs = []
    for v in sorted(views, key=lambda v: (order.get(v["name"], len(GROUPS)),
                                          position.get(v["name"], 0), v["name"])):
        if not v["geom"]:
            specs.append((TABLE_GROUP, v["name"], _uri(service, v, meta["srid"], None), v))
            continue
        group = wanted.get(v["name"], OTHER_GROUP)
        if v["type"] in ("GEOMETRY", "GEOMETRYCOLLECTION"):
            # QGIS draws one geometry type per layer: one layer per type present, and the
            # whole view as a table too where some rows have no geometry.
            present = meta["generic_types"].get(v["name"]) or []
            if v["name"] in MIXED or "NONE" in present:
                table = dict(v, geom="")
                specs.append((TABLE_GROUP, f"{v['name']} (table)",
                              _uri(service, table, meta["srid"], None), table))
            if v["name"] in MIXED:
                present = []
            for wkb, label in GENERIC_TYPES:
                short = wkb.upper().replace("STRING", "")
                if present and not any(p.startswith(short) for p in present):
                    continue
                specs.append((group, f"{v['name']} ({label})",
                              _uri(service, v, meta["srid"], wkb), v))
        else:
            wkb = WKB_NAMES.get(v["type"], v["type"].title())
            specs.append((group, v["name"], _uri(service, v, meta["srid"], wkb), v))
    rank = {name: i for i, (name, _) in enumerate(GROUPS)}
    rank.update({OTHER_GROUP: len(GROUPS), TABLE_GROUP: len(GROUPS) + 1})
    return sorted(specs, key=lambda s: rank[s[0]])  # stable: keeps the order within a group


def build(service: str, out: Path) -> dict:
    """Write the project; returns what it holds (for the caller's report)."""
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsProject,
        QgsRectangle,
        QgsReferencedRectangle,
        QgsVectorLayer,
    )

    views, meta = _catalogue(service)
    project = QgsProject.instance()
    project.clear()
    project.setTitle("rulem-db: Rule M (RCWD) layers, ledger and checks")
    project.setCrs(QgsCoordinateReferenceSystem(f"EPSG:{meta['srid']}"))
    root = project.layerTreeRoot()
    groups: dict[str, object] = {}
    held: dict[str, list[str]] = {}
    problems = []
    for group_name, name, uri, view in _layer_specs(service, views, meta):
        layer = QgsVectorLayer(uri, name, "postgres")
        if not layer.isValid():
            problems.append(f"{name}: not a valid layer ({uri})")
            continue
        layer.loadDefaultStyle()
        abstract = f"{view['doc']}\n\n{EDIT_NOTE}".strip()
        layer.setAbstract(abstract)
        metadata = layer.metadata()  # what the layer's Information and Metadata tabs show
        metadata.setAbstract(abstract)
        layer.setMetadata(metadata)
        if group_name not in groups:
            groups[group_name] = root.addGroup(group_name)
        project.addMapLayer(layer, False)
        node = groups[group_name].addLayer(layer)
        node.setItemVisibilityChecked(view["name"] not in HIDDEN)
        held.setdefault(group_name, []).append(name)
    if TABLE_GROUP in groups:
        groups[TABLE_GROUP].setExpanded(False)
    if meta["extent"]:
        xmin, ymin, xmax, ymax = meta["extent"]
        pad = 0.05 * max(xmax - xmin, ymax - ymin)
        rect = QgsRectangle(xmin - pad, ymin - pad, xmax + pad, ymax + pad)
        project.viewSettings().setDefaultViewExtent(QgsReferencedRectangle(rect, project.crs()))
    project.writeEntry("Paths", "/Absolute", False)
    if not project.write(str(out)):
        raise RuntimeError(f"could not write {out}: {project.error()}")
    return {"out": str(out), "groups": held, "problems": problems, "srid": meta["srid"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", default="rulem", help="pg_service entry (default: rulem)")
    parser.add_argument("--out", type=Path, default=HERE / "rulem-db.qgs")
    args = parser.parse_args(argv)
    from qgis.core import QgsApplication

    app = QgsApplication([], False)
    app.initQgis()
    try:
        result = build(args.service, args.out)
    finally:
        app.exitQgis()
    for group, names in result["groups"].items():
        print(f"{group}: {', '.join(names)}")
    for problem in result["problems"]:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"wrote {result['out']} (EPSG:{result['srid']})")
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
