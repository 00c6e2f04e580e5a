"""The web map's style is the QGIS rules translated (rulem_web/style.py): each filter form the
rules use has its MapLibre expression, ELSE is "none of the earlier rules", and an unknown
form is refused rather than drawn wrong."""

from __future__ import annotations

import pytest

from rulem_web import style


def test_filter_forms() -> None:
    assert style.filter_expression(None) is None
    assert style.filter_expression('"status" = \'deficit\'') == [
        "==", ["get", "status"], "deficit"]
    assert style.filter_expression('"rank" IN (\'A\', \'AB\', \'B\')') == [
        "in", ["get", "rank"], ["literal", ["A", "AB", "B"]]]
    assert style.filter_expression('"alters_runoff_to_wetland"') == [
        "==", ["get", "alters_runoff_to_wetland"], True]
    assert style.filter_expression('"kind" = \'o\'\'brien\'') == ["==", ["get", "kind"],
                                                                  "o'brien"]
    with pytest.raises(ValueError, match="no MapLibre translation"):
        style.filter_expression('"a" > 3')


def _rule(layer: str, pos: int, flt: str | None, fill: str | None) -> dict:
    return {"layer": layer, "pos": pos, "attr": "status", "label": f"r{pos}", "filter": flt,
            "fill": fill, "alpha": 255, "pattern": "solid", "outline": "#000000",
            "width": 0.3, "line": "dash", "size": None, "shape": None}


def test_else_is_none_of_the_earlier_rules_and_sources_are_on_this_service() -> None:
    rules = [_rule("parcel_balance", 1, '"status" = \'deficit\'', "#d7191c"),
             _rule("parcel_balance", 2, "ELSE", "#1a9641")]
    doc = style.style("http://h:1/base/", rules, [-93.2, 45.1, -93.0, 45.2])
    # one source of this service's own tiles, each view a layer of it (source-layer)
    assert doc["sources"]["pub"]["tiles"] == ["http://h:1/base/tiles/{z}/{x}/{y}.mvt"]
    assert {lay.get("source-layer") for lay in doc["layers"] if "source" in lay} == {
        "parcel_balance"}
    fills = {lay["id"]: lay for lay in doc["layers"] if lay["type"] == "fill"}
    assert fills["parcel_balance-1-fill"]["filter"] == ["==", ["get", "status"], "deficit"]
    assert fills["parcel_balance-2-fill"]["filter"] == [
        "!", ["any", ["==", ["get", "status"], "deficit"]]]
    line = next(lay for lay in doc["layers"] if lay["id"] == "parcel_balance-1-line")
    assert line["paint"]["line-dasharray"] == [3, 2]
    assert [e["color"] for e in style.legend(rules)] == ["#d7191c", "#1a9641"]
