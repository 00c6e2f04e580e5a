"""Drives Debian's QGIS (PyQGIS 3.22) headless for the editing test: opens the edit project,
describes its layers' forms, and edits one feature's geometry as a person would (start editing,
change the geometry, commit).

Run with /usr/bin/python3 (QGIS's Python), QT_QPA_PLATFORM=offscreen, HOME at a scratch folder
and PGSERVICEFILE naming the login (as tests/support/publish_qgis_driver.py). Reads a JSON job on
stdin, writes a JSON report on stdout; the test decides what passes.

Job: {"project": path, "edit": {"layer": name, "where": QGIS expression, "wkt": WKT} or null}
Report: {"project": {"read": bool, "relations": [names],
                     "layers": [{name, valid, can_add, can_change, can_delete,
                                 can_change_geometry, widgets: {field: type}, read_only: [..],
                                 not_null: [..], expressions: {field: expr},
                                 defaults: {field: expr}, value_maps: {field: [values]}}]},
         "edit": {"found": n, "started": bool, "changed": bool, "committed": bool,
                  "errors": [...]}}
"""

from __future__ import annotations

import json
import sys

LOG: list[str] = []


def _describe(layer) -> dict:
    from qgis.core import QgsFieldConstraints, QgsVectorDataProvider

    out = {"name": layer.name(), "valid": layer.isValid()}
    if not layer.isValid():
        out["error"] = " | ".join(LOG[-3:])
        return out
    caps = layer.dataProvider().capabilities()
    fields = layer.fields()
    config = layer.editFormConfig()
    out.update({
        "can_add": bool(caps & QgsVectorDataProvider.AddFeatures),
        "can_change": bool(caps & QgsVectorDataProvider.ChangeAttributeValues),
        "can_delete": bool(caps & QgsVectorDataProvider.DeleteFeatures),
        "can_change_geometry": bool(caps & QgsVectorDataProvider.ChangeGeometries),
        "widgets": {f.name(): layer.editorWidgetSetup(i).type() for i, f in enumerate(fields)},
        "read_only": [f.name() for i, f in enumerate(fields) if config.readOnly(i)],
        "not_null": [f.name() for f in fields
                     if f.constraints().constraints() & QgsFieldConstraints.ConstraintNotNull],
        "expressions": {f.name(): f.constraints().constraintExpression() for f in fields
                        if f.constraints().constraintExpression()},
        "defaults": {f.name(): f.defaultValueDefinition().expression() for f in fields
                     if f.defaultValueDefinition().isValid()},
        "value_maps": {f.name(): [next(iter(m.values())) for m in
                                  layer.editorWidgetSetup(i).config().get("map", [])]
                       for i, f in enumerate(fields)
                       if layer.editorWidgetSetup(i).type() == "ValueMap"},
    })
    return out


def _edit(project, job: dict) -> dict:
    from qgis.core import QgsFeatureRequest, QgsGeometry

    layers = project.mapLayersByName(job["layer"])
    if not layers or not layers[0].isValid():
        return {"found": 0, "started": False, "changed": False, "committed": False,
                "errors": [f"layer {job['layer']} not open: {' | '.join(LOG[-3:])}"]}
    layer = layers[0]
    features = list(layer.getFeatures(QgsFeatureRequest().setFilterExpression(job["where"])))
    out = {"found": len(features), "started": layer.startEditing()}
    out["changed"] = bool(features) and layer.changeGeometry(
        features[0].id(), QgsGeometry.fromWkt(job["wkt"]))
    out["committed"] = layer.commitChanges()
    out["errors"] = list(layer.commitErrors())
    if not out["committed"]:
        layer.rollBack()
    return out


def main() -> int:
    job = json.load(sys.stdin)
    from qgis.core import QgsApplication, QgsProject

    app = QgsApplication([], False)
    app.initQgis()
    QgsApplication.messageLog().messageReceived.connect(
        lambda message, tag, level: LOG.append(f"{tag}: {' '.join(message.split())[:300]}"))
    report: dict = {}
    try:
        project = QgsProject.instance()
        read = project.read(job["project"])
        report["project"] = {
            "read": read,
            "relations": sorted(r.name() for r in project.relationManager().relations().values()),
            "layers": [_describe(layer) for layer in project.mapLayers().values()]}
        if job.get("edit"):
            report["edit"] = _edit(project, job["edit"])
    finally:
        json.dump(report, sys.stdout)
        sys.stdout.flush()
        app.exitQgis()
    return 0


if __name__ == "__main__":
    sys.exit(main())
