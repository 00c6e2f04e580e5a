"""Drives Debian's QGIS (PyQGIS 3.22) headless for the publishing tests.

Run with /usr/bin/python3 (QGIS's Python, not the project's venv), QT_QPA_PLATFORM=offscreen
and HOME pointing at a scratch folder (QGIS writes a profile there). Reads a JSON job on stdin,
writes a JSON report on stdout; the test decides what passes. Why a subprocess: PyQGIS lives in
the system Python and its Qt application must own the process.

Job: {"layers": [{"uri": "...", "name": "..."}], "project": path or null,
      "render": {"png": path, "extent": [xmin, ymin, xmax, ymax], "epsg": 26915,
                 "width": 1200, "height": 800, "probes": {label: [x, y]}} or null}
Report: {"layers": [{name, valid, geometry_type, feature_count, crs, renderer, rules,
                     style_loaded, can_add, can_change, can_delete, error}],
         "project": {"read": bool, "groups": {group: [layer names]}, "layers": [...]} ,
         "render": {"png": path, "painted_share": 0..1, "probes": {label: [r, g, b]},
                    "errors": [...]} }
"""

from __future__ import annotations

import json
import sys

LOG: list[str] = []  # QGIS's message log, for the reason a layer is invalid


def _describe(layer) -> dict:
    from qgis.core import QgsVectorDataProvider, QgsWkbTypes

    out = {"name": layer.name(), "valid": layer.isValid(), "source": layer.source()}
    if not layer.isValid():  # (QgsError.summary() crashes PyQGIS 3.22: see LOG instead)
        out["error"] = " | ".join(LOG[-3:])
        return out
    provider = layer.dataProvider()
    caps = provider.capabilities()
    renderer = layer.renderer()
    out.update({
        "geometry_type": QgsWkbTypes.displayString(layer.wkbType()),
        "feature_count": layer.featureCount(),
        "crs": layer.crs().authid(),
        "renderer": renderer.type() if renderer else None,
        "rules": ([r.label() for r in renderer.rootRule().children()]
                  if renderer and renderer.type() == "RuleRenderer" else []),
        "style_name": layer.styleManager().currentStyle(),
        "can_add": bool(caps & QgsVectorDataProvider.AddFeatures),
        "can_change": bool(caps & QgsVectorDataProvider.ChangeAttributeValues),
        "can_delete": bool(caps & QgsVectorDataProvider.DeleteFeatures),
    })
    return out


def _load_layers(specs: list[dict]) -> tuple[list, list[dict]]:
    from qgis.core import QgsVectorLayer

    layers, report = [], []
    for spec in specs:
        layer = QgsVectorLayer(spec["uri"], spec["name"], "postgres")
        info = _describe(layer)
        if layer.isValid():
            # What QGIS does when a layer is added from the browser: apply the database default.
            message, loaded = layer.loadDefaultStyle()
            info["style_loaded"] = bool(loaded)
            info["style_message"] = message
            info.update({k: v for k, v in _describe(layer).items()
                         if k in ("renderer", "rules")})
        layers.append(layer)
        report.append(info)
    return layers, report


def _read_project(path: str) -> tuple[list, dict]:
    from qgis.core import QgsLayerTreeGroup, QgsLayerTreeLayer, QgsProject

    project = QgsProject.instance()
    ok = project.read(path)
    groups: dict[str, list[str]] = {}

    def walk(node, prefix: str) -> None:
        for child in node.children():
            if isinstance(child, QgsLayerTreeGroup):
                walk(child, (prefix + "/" if prefix else "") + child.name())
            elif isinstance(child, QgsLayerTreeLayer):
                groups.setdefault(prefix, []).append(child.name())

    walk(project.layerTreeRoot(), "")
    layers = [lyr for lyr in project.mapLayers().values()]
    return layers, {"read": ok, "groups": groups, "crs": project.crs().authid(),
                    "layers": [_describe(lyr) for lyr in layers]}


def _render(layers: list, job: dict) -> dict:
    from qgis.core import (
        QgsCoordinateReferenceSystem,
        QgsMapRendererParallelJob,
        QgsMapSettings,
        QgsRectangle,
    )
    from qgis.PyQt.QtCore import QSize
    from qgis.PyQt.QtGui import QColor

    settings = QgsMapSettings()
    drawable = [lyr for lyr in layers if lyr.isValid() and lyr.isSpatial()]
    settings.setLayers(drawable)
    settings.setDestinationCrs(QgsCoordinateReferenceSystem(f"EPSG:{job['epsg']}"))
    settings.setBackgroundColor(QColor(255, 255, 255))
    settings.setOutputSize(QSize(job.get("width", 1200), job.get("height", 800)))
    xmin, ymin, xmax, ymax = job["extent"]
    settings.setExtent(QgsRectangle(xmin, ymin, xmax, ymax))
    render = QgsMapRendererParallelJob(settings)
    render.start()
    render.waitForFinished()
    image = render.renderedImage()
    saved = image.save(job["png"], "png")
    # What the picture shows: share of non-white pixels, and the colour at given map points.
    step, painted, total = 4, 0, 0
    for px in range(0, image.width(), step):
        for py in range(0, image.height(), step):
            total += 1
            painted += image.pixelColor(px, py).name() != "#ffffff"
    to_pixel = settings.mapToPixel()
    probes = {}
    for label, (x, y) in job.get("probes", {}).items():
        pt = to_pixel.transform(x, y)
        c = image.pixelColor(int(pt.x()), int(pt.y()))
        probes[label] = [c.red(), c.green(), c.blue()]
    return {"png": job["png"], "saved": saved, "layers_drawn": len(drawable),
            "painted_share": painted / total, "probes": probes,
            "errors": [f"{e.layerID}: {e.message}" for e in render.errors()]}


def main() -> int:
    job = json.load(sys.stdin)
    from qgis.core import QgsApplication

    app = QgsApplication([], False)
    app.initQgis()
    QgsApplication.messageLog().messageReceived.connect(
        lambda message, tag, level: LOG.append(f"{tag}: {' '.join(message.split())[:300]}"))
    report: dict = {"qgis_version": __import__("qgis.core").core.Qgis.QGIS_VERSION}
    try:
        layers: list = []
        if job.get("layers"):
            layers, report["layers"] = _load_layers(job["layers"])
        if job.get("project"):
            project_layers, report["project"] = _read_project(job["project"])
            # Draw what the project shows: its checked layers, top of the legend on top.
            from qgis.core import QgsProject

            checked = QgsProject.instance().layerTreeRoot().checkedLayers()
            layers = checked or project_layers
        if job.get("render"):
            report["render"] = _render(layers, job["render"])
    finally:
        json.dump(report, sys.stdout)
        sys.stdout.flush()
        app.exitQgis()
    return 0


if __name__ == "__main__":
    sys.exit(main())
