"""Drives Debian's QGIS (PyQGIS 3.22) headless against `rulem-db serve`, through its OAPIF
provider (the "OGC API - Features" connection of QGIS's Data Source Manager), for
tests/web/test_web_clients.py.

Run with /usr/bin/python3 (QGIS's Python, not the project's venv), QT_QPA_PLATFORM=offscreen
and HOME pointing at a scratch folder. Reads a JSON job on stdin, writes a JSON report on stdout;
the test compares it with SQL. Why a subprocess: PyQGIS lives in the system Python and its Qt
application must own the process (as tests/publish_qgis_driver.py).

Job: {"url": "http://127.0.0.1:PORT",
      "layers": [{"typename": "pub.parcel_balance", "sum": ["balance_acres", ...],
                  "key": "pin", "subset": "status = 'deficit'",
                  "expression": "balance_acres < 0"}]}
Report: {"qgis_version": "3.22...",
         "layers": [{typename, valid, error, feature_count, features, distinct_fids,
                     field_types: {name: QVariant type name}, sums: {field: float},
                     subset: {valid, feature_count, keys}, expression: {keys}}]}
"""

from __future__ import annotations

import json
import sys

LOG: list[str] = []  # QGIS's message log, for the reason a layer is invalid


def _keys(features, key: str) -> list:
    return sorted(f[key] for f in features)


def _layer(url: str, spec: dict) -> dict:
    from qgis.core import QgsFeatureRequest, QgsVectorLayer
    from qgis.PyQt.QtCore import QVariant

    uri = f"url='{url}' typename='{spec['typename']}'"
    layer = QgsVectorLayer(uri, spec["typename"], "OAPIF")
    out: dict = {"typename": spec["typename"], "valid": layer.isValid()}
    if not layer.isValid():
        out["error"] = " | ".join(LOG[-3:])
        return out
    features = list(layer.getFeatures())
    fids = {f.id() for f in features}
    out.update({
        "feature_count": layer.featureCount(),
        "features": len(features),
        "distinct_fids": len(fids),
        "field_types": {f.name(): QVariant.typeToName(f.type()) for f in layer.fields()},
        "sums": {name: sum(f[name] for f in features if f[name] is not None)
                 for name in spec.get("sum", [])},
    })
    key = spec.get("key")
    if spec.get("expression"):
        request = QgsFeatureRequest().setFilterExpression(spec["expression"])
        out["expression"] = {"keys": _keys(layer.getFeatures(request), key)}
    if spec.get("subset"):
        ok = layer.setSubsetString(spec["subset"])
        out["subset"] = {"accepted": ok, "valid": layer.isValid(),
                         "feature_count": layer.featureCount(),
                         "keys": _keys(layer.getFeatures(), key)}
    return out


def main() -> int:
    job = json.load(sys.stdin)
    from qgis.core import Qgis, QgsApplication

    app = QgsApplication([], False)
    app.initQgis()
    QgsApplication.messageLog().messageReceived.connect(
        lambda message, tag, level: LOG.append(f"{tag}: {' '.join(message.split())[:300]}"))
    report: dict = {"qgis_version": Qgis.QGIS_VERSION, "layers": []}
    try:
        for spec in job["layers"]:
            report["layers"].append(_layer(job["url"], spec))
    finally:
        json.dump(report, sys.stdout)
        sys.stdout.flush()
        app.exitQgis()
    return 0


if __name__ == "__main__":
    sys.exit(main())
