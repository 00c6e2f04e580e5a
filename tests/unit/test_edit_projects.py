"""The two shipped QGIS projects, read as the XML files they are (no QGIS, no database): every
layer of the read-only project says in its abstract that editing goes through the edit project,
and the edit project opens only views of schema edit, with a relation to permits.

Why here too: the QGIS tests (tests/publish/test_edit_qgis.py, tests/publish/test_publish_qgis.py)
need QGIS and skip without it; a project rebuilt without the note, or pointed at pub, fails here on
any machine.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rulem_db.catalogue.layers import LAYERS
from rulem_db.paths import ROOT

READ_ONLY = ROOT / "qgis" / "rulem-db.qgs"
EDIT = ROOT / "qgis" / "rulem-db-edit.qgs"


def _layers(path) -> list[ET.Element]:
    return ET.parse(path).getroot().findall(".//projectlayers/maplayer")


def test_every_read_only_layer_says_editing_goes_through_the_edit_project() -> None:
    layers = _layers(READ_ONLY)
    assert layers
    missing = [la.findtext("layername") for la in layers
               if "qgis/rulem-db-edit.qgs" not in (la.findtext("abstract") or "")
               or "qgis/rulem-db-edit.qgs" not in (la.findtext("resourceMetadata/abstract") or "")]
    assert missing == [], "rebuild qgis/rulem-db.qgs: qgis/build_project.py"


def test_the_edit_project_opens_every_editable_layer_from_schema_edit_through_the_service(
        ) -> None:
    layers = {la.findtext("layername"): la.findtext("datasource") for la in _layers(EDIT)}
    editable = {layer.name for layer in LAYERS if layer.editable and not layer.restricted}
    assert editable <= set(layers), "rebuild qgis/rulem-db-edit.qgs: qgis/build_edit_project.py"
    assert all(f'table="edit"."{name}"' in uri and "service='rulem'" in uri
               and "password" not in uri and "user=" not in uri
               for name, uri in layers.items())
    relations = {r.get("name") for r in ET.parse(EDIT).getroot().iter("relation")}
    assert "impact.permit_id -> permit" in relations
