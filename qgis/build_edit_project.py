"""Builds qgis/rulem-db-edit.qgs: every view of schema edit (the layers staff draw by hand, and
whatever else that schema holds), editable, with forms that know the database's rules.

Run with QGIS's Python (Debian: `apt-get install python3-qgis qgis-providers`), through a
pg_service entry whose login is a member of rulem_editor:

    QT_QPA_PLATFORM=offscreen /usr/bin/python3 qgis/build_edit_project.py [--service rulem]

Why generated and committed, like qgis/rulem-db.qgs (qgis/build_project.py): the project must
open the views that exist, so it is built from the database, and the committed copy is what
staff open, with their own pg_service entry (docs/pg_service.conf.example). Why forms: a form
that offers only the values the database accepts, and says what is missing before the edit is
sent, saves a refused commit. The database stays the judge (sql/950_edit_layers.sql): every
rule a form mirrors is enforced there too, and what a form cannot know (a geometry outside the
plan area, a permit number no permit has) is refused there with a clear message.

What the forms hold, per view:
- value maps for coded columns: the layer catalogue's codes (rulem_db/catalogue/layers.py), or
  for views the catalogue does not know (edit.finding), the `col IN (...)` CHECK constraints of
  the tables the view reads (through the views it reads);
- a relation from every permit reference (permit_id, ...) to the permit layer, edited with a
  relation reference widget that shows and searches permit numbers; the view's permit_no
  beside it is shown read-only (the database fills it from the id);
- not-null constraints for required columns, and expression constraints for the catalogue's
  CHECK rules (permit_no's pattern, positive widths, a replacement's owner, ...);
- default values (a new permit is 'applied' today, a new replacement 'proposed' wetland);
- read-only fields for what the database sets: the feature id, plan area, version, author.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

sys.path.insert(0, str(HERE.parent))  # the layer catalogue: stdlib only, QGIS's Python reads it
from rulem_db.catalogue.layers import BY_NAME  # noqa: E402

# Columns the database sets: shown, never edited in a form.
READ_ONLY = {"plan_area_id", "version_id", "version_from", "created_by"}
# Default values of new features, as QGIS expressions (view, column): expression.
DEFAULTS: dict[tuple[str, str], str] = {
    ("permit", "status"): "'applied'",
    ("permit", "applied_on"): "to_date(now())",
    ("replacement", "status"): "'proposed'",
    ("replacement", "component"): "'wetland'",
    ("buffer_marker", "marker_type"): "'free_standing'",
}
WKB_NAMES = {"POINT": "Point", "MULTIPOINT": "MultiPoint", "LINESTRING": "LineString",
             "MULTILINESTRING": "MultiLineString", "POLYGON": "Polygon",
             "MULTIPOLYGON": "MultiPolygon"}
GROUP = "Edit (rulem_editor)"
TABLE_GROUP = "Edit: tables (no geometry)"

VIEWS_SQL = """
SELECT c.relname::text,
       coalesce(g.f_geometry_column::text, ''), coalesce(upper(g.type), ''),
       coalesce(g.srid, 0),
       (SELECT a.attname::text FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         ORDER BY a.attname = c.relname || '_id' DESC, a.attnum LIMIT 1),
       coalesce(obj_description(c.oid, 'pg_class'), '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN geometry_columns g ON g.f_table_schema = n.nspname AND g.f_table_name = c.relname
WHERE n.nspname = 'edit' AND c.relkind IN ('v', 'm', 'r')
ORDER BY c.relname
"""

# For each view column: the one-column CHECK constraints of the same-named column of the
# tables the view reads, through the views it reads (what a view the catalogue does not know
# is checked against: edit.finding's review_state is checks.finding_case's, through pub.finding).
BASE_SQL = """
WITH RECURSIVE src (view, rel, col) AS (
  SELECT v.relname::text, v.oid, a.attname::text
  FROM pg_class v
  JOIN pg_namespace n ON n.oid = v.relnamespace AND n.nspname = 'edit'
  JOIN pg_attribute a ON a.attrelid = v.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE v.relkind = 'v'
  UNION
  SELECT s.view, d.refobjid, s.col
  FROM src s
  JOIN pg_rewrite r ON r.ev_class = s.rel
  JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
   AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> s.rel AND d.refobjsubid > 0
  JOIN pg_attribute b ON b.attrelid = d.refobjid AND b.attnum = d.refobjsubid
   AND b.attname = s.col
)
SELECT DISTINCT s.view, s.col, pg_get_constraintdef(k.oid)
FROM src s
JOIN pg_attribute b ON b.attrelid = s.rel AND b.attname = s.col
JOIN pg_constraint k ON k.conrelid = s.rel AND k.contype = 'c' AND k.conkey = ARRAY[b.attnum]
ORDER BY 1, 2, 3
"""
_CODES = re.compile(r"= ANY \(+ARRAY\[(.*?)\]")
_LITERAL = re.compile(r"'((?:[^']|'')*)'")


def _codes_of(constraint: str) -> list[str] | None:
    """The values of a `col IN ('a', 'b')` CHECK constraint (as PostgreSQL prints it)."""
    match = _CODES.search(constraint)
    if not match or "NULL" in constraint.upper().split("ARRAY")[0]:
        return None
    return [v.replace("''", "'") for v in _LITERAL.findall(match.group(1))]


def _qgis_check(sql: str) -> str:
    """A catalogue CHECK expression as a QGIS expression: the same, but `col ~ 're'`, which
    QGIS writes regexp_match(col, 're')."""
    return re.sub(r"(\w+)\s*~\s*('(?:[^']|'')*')", r'regexp_match("\1", \2)', sql)


def _catalogue(service: str) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    from qgis.core import QgsProviderRegistry

    conn = QgsProviderRegistry.instance().providerMetadata("postgres").createConnection(
        f"service='{service}'", {})
    views = [{"name": r[0], "geom": r[1], "type": r[2], "srid": int(r[3] or 0), "key": r[4],
              "doc": r[5]} for r in conn.executeSql(VIEWS_SQL)]
    base: dict[str, dict[str, dict]] = {}
    for view, column, constraint in conn.executeSql(BASE_SQL):
        codes = _codes_of(constraint)
        if codes:
            base.setdefault(view, {})[column] = {"codes": codes}
    return views, base


def _uri(service: str, view: dict, srid: int) -> str:
    uri = f"service='{service}' key='{view['key']}' checkPrimaryKeyUnicity='0'"
    if view["type"] in ("GEOMETRY", "GEOMETRYCOLLECTION"):
        view["geom"] = ""  # of mixed type (a finding's place): its attributes are edited
    if view["geom"]:
        wkb = WKB_NAMES.get(view["type"], view["type"].title())
        uri += f" srid={view['srid'] or srid} type={wkb}"
    uri += f' table="edit"."{view["name"]}"'
    if view["geom"]:
        uri += f' ({view["geom"]})'
    return uri


def _rules(view: str, base: dict[str, dict]) -> dict[str, dict]:
    """Per column: codes (value map), required, checks (QGIS expressions), from the catalogue
    when it knows the layer, else from the database's constraints."""
    rules: dict[str, dict] = {}
    layer = BY_NAME.get(view)
    if layer is None:
        for column, info in base.items():  # (what is required there, the view's trigger says)
            rules[column] = {"codes": info["codes"], "required": False, "checks": []}
        return rules
    for col in layer.columns:
        checks = [_qgis_check(col.check)] if col.check else []
        rules[col.name] = {"codes": list(col.codes) if col.codes else None,
                           "required": col.required, "checks": checks}
    for _name, expr in layer.extra_checks:
        # a rule over several columns: on the first column it names
        first = min((c.name for c in layer.columns if re.search(rf"\b{c.name}\b", expr)),
                    key=lambda n: re.search(rf"\b{n}\b", expr).start(), default=None)
        if first:
            rules[first]["checks"].append(_qgis_check(expr))
    return rules


def _form(layer, view: dict, rules: dict[str, dict], key: str) -> list[str]:
    """Widgets, constraints, defaults and read-only fields of one layer; what it set."""
    from qgis.core import (
        QgsDefaultValue,
        QgsEditorWidgetSetup,
        QgsFieldConstraints,
    )

    done = []
    fields = layer.fields()
    config = layer.editFormConfig()
    for index, field in enumerate(fields):
        name = field.name()
        rule = rules.get(name, {})
        label = name not in rules and name.endswith("permit_no")  # the view's, beside an id
        if name in READ_ONLY or name == key or label:
            config.setReadOnly(index, True)
            done.append(f"{name}: read-only")
            continue
        if rule.get("codes"):
            values = [{code: code} for code in rule["codes"]]
            if not rule.get("required"):
                values.insert(0, {"(none)": "{2839923C-8B7D-419E-B84B-CA2FE9B80EC7}"})
            layer.setEditorWidgetSetup(index, QgsEditorWidgetSetup("ValueMap", {"map": values}))
            done.append(f"{name}: value map")
        if rule.get("required"):
            layer.setFieldConstraint(index, QgsFieldConstraints.ConstraintNotNull,
                                     QgsFieldConstraints.ConstraintStrengthHard)
            done.append(f"{name}: not null")
        checks = rule.get("checks") or []
        if checks:
            # a CHECK passes when its expression is NULL (a value left empty): so does this
            expr = " AND ".join(f"coalesce(({c}), true)" for c in checks)
            layer.setConstraintExpression(index, expr,
                                          f"the database's rule: {'; '.join(checks)}")
            layer.setFieldConstraint(index, QgsFieldConstraints.ConstraintExpression,
                                     QgsFieldConstraints.ConstraintStrengthHard)
            done.append(f"{name}: expression")
        default = DEFAULTS.get((view["name"], name))
        if default:
            layer.setDefaultValueDefinition(index, QgsDefaultValue(default, False))
            done.append(f"{name}: default {default}")
    layer.setEditFormConfig(config)
    return done


def _relations(project, layers: dict[str, object]) -> list[str]:
    """A relation from every permit reference to the permit layer, edited with a relation
    reference widget that shows the permit's number."""
    from qgis.core import QgsEditorWidgetSetup, QgsRelation

    permit = layers.get("permit")
    if permit is None:
        return []
    permit.setDisplayExpression('"permit_no"')
    made = []
    for name, layer in layers.items():
        for index, field in enumerate(layer.fields()):
            column = field.name()
            if not column.endswith("permit_id") or (name == "permit" and column == "permit_id"):
                continue
            relation = QgsRelation()
            relation.setId(f"{name}_{column}")
            relation.setName(f"{name}.{column} -> permit")
            relation.setReferencingLayer(layer.id())
            relation.setReferencedLayer(permit.id())
            relation.addFieldPair(column, "permit_id")
            if not relation.isValid():
                continue
            project.relationManager().addRelation(relation)
            layer.setEditorWidgetSetup(index, QgsEditorWidgetSetup("RelationReference", {
                "Relation": relation.id(), "AllowNULL": True, "ShowForm": False,
                "ShowOpenFormButton": True, "MapIdentification": False, "ReadOnly": False,
                "AllowAddFeatures": False, "OrderByValue": True, "ChainFilters": False}))
            made.append(relation.name())
    return made


def build(service: str, out: Path) -> dict:
    """Write the project; returns what it holds (for the caller's report)."""
    from qgis.core import QgsCoordinateReferenceSystem, QgsProject, QgsVectorLayer

    views, base = _catalogue(service)
    srids = [v["srid"] for v in views if v["srid"]]
    srid = max(set(srids), key=srids.count) if srids else 26915  # the working CRS
    project = QgsProject.instance()
    project.clear()
    project.setTitle("rulem-db: editing the layers staff draw by hand (rulem_editor)")
    project.setCrs(QgsCoordinateReferenceSystem(f"EPSG:{srid}"))
    root = project.layerTreeRoot()
    groups: dict[str, object] = {}
    layers: dict[str, object] = {}
    forms: dict[str, list[str]] = {}
    problems = []
    # drawn layers first (points over lines over areas), tables last
    order = {"POINT": 0, "MULTIPOINT": 0, "LINESTRING": 1, "MULTILINESTRING": 1}
    uris = {v["name"]: _uri(service, v, srid) for v in views}
    for view in sorted(views, key=lambda v: (not v["geom"], order.get(v["type"], 2),
                                             v["name"])):
        uri = uris[view["name"]]
        layer = QgsVectorLayer(uri, view["name"], "postgres")
        if not layer.isValid():
            problems.append(f"{view['name']}: not a valid layer ({uri})")
            continue
        layer.loadDefaultStyle()
        layer.setAbstract(view["doc"])
        metadata = layer.metadata()  # what the layer's Information and Metadata tabs show
        metadata.setAbstract(view["doc"])
        layer.setMetadata(metadata)
        forms[view["name"]] = _form(layer, view, _rules(view["name"], base.get(view["name"], {})),
                                    view["key"])
        group = GROUP if view["geom"] else TABLE_GROUP
        if group not in groups:
            groups[group] = root.addGroup(group)
        project.addMapLayer(layer, False)
        groups[group].addLayer(layer)
        layers[view["name"]] = layer
    relations = _relations(project, layers)
    project.writeEntry("Paths", "/Absolute", False)
    if not project.write(str(out)):
        raise RuntimeError(f"could not write {out}: {project.error()}")
    return {"out": str(out), "layers": list(layers), "forms": forms, "relations": relations,
            "problems": problems, "srid": srid}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--service", default="rulem", help="pg_service entry (default: rulem)")
    parser.add_argument("--out", type=Path, default=HERE / "rulem-db-edit.qgs")
    args = parser.parse_args(argv)
    from qgis.core import QgsApplication

    app = QgsApplication([], False)
    app.initQgis()
    try:
        result = build(args.service, args.out)
    finally:
        app.exitQgis()
    for name in result["layers"]:
        print(f"{name}: {', '.join(result['forms'][name]) or 'no form rules'}")
    for relation in result["relations"]:
        print(f"relation: {relation}")
    for problem in result["problems"]:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"wrote {result['out']} (EPSG:{result['srid']})")
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
