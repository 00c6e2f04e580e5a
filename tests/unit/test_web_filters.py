"""rulem_web.filters and rulem_web.guard without a server: the CQL2 walk refuses every
function outside the allow-list wherever it sits, keeps what the allow-list permits, and the
size checks run before the parser (docs/publishing.md, "Web service")."""

from __future__ import annotations

import json

import pytest

from rulem_web import filters, guard

COLUMNS = {"pin", "status", "impact_acres", "geom", "valid_from"}


def refused(text: str, lang: str | None = None) -> str:
    with pytest.raises(filters.FilterRefused) as info:
        filters.parse(text, COLUMNS, lang)
    assert info.value.status_code == 400 and "\n" not in info.value.detail
    return info.value.detail


@pytest.mark.parametrize("text", [
    "pin = 'a'", "upper(pin) LIKE 'A%'", "casei(status) = casei('x')",
    "impact_acres * 2 + 1 BETWEEN 0 AND 10", "status IN ('a', 'b') AND NOT pin IS NULL",
    "S_INTERSECTS(geom, POLYGON((0 0, 1 0, 1 1, 0 0)))",
    "T_AFTER(valid_from, TIMESTAMP('2024-01-01T00:00:00Z'))", "abs(impact_acres) > 1",
])
def test_the_allow_list_keeps_what_it_permits(text: str) -> None:
    sql = filters.parse(text, COLUMNS).to_sql()
    assert sql


@pytest.mark.parametrize("name", ["version", "pg_sleep", "set_config", "lo_from_bytea",
                                  "int4", "pg_catalog.version", "dblink", "Version"])
@pytest.mark.parametrize("place", ["{}() = 1", "pin = {}()", "upper({}()) = 'x'",
                                   "pin IN ('a', {}())", "NOT ({}() IS NULL)",
                                   "impact_acres + {}() > 1"])
def test_any_other_function_is_refused_by_name(name: str, place: str) -> None:
    if "." in name:
        place = place.replace("{}()", '"{}"()')
    detail = refused(place.format(name))
    assert name in detail and "not allowed" in detail


def test_cql2_json_is_walked_the_same() -> None:
    call = {"op": "pg_sleep", "args": [1]}
    for tree in ({"op": "=", "args": [call, 1]},
                 {"op": "s_intersects", "args": [{"property": "geom"}, call]},
                 {"op": "and", "args": [{"op": "=", "args": [{"property": "pin"}, "a"]},
                                        {"op": "in", "args": [{"property": "pin"}, [call]]}]}):
        assert "pg_sleep" in refused(json.dumps(tree), "cql2-json")
        assert "pg_sleep" in refused(json.dumps(tree))


def test_properties_and_literals_are_checked() -> None:
    assert "is not a property" in refused("nosuch = 1")
    assert "is not a property" in refused(json.dumps(
        {"op": "=", "args": [{"property": "pin) OR version() IS NOT NULL OR (pin"}, 1]}))
    assert "ISO" in refused(json.dumps(
        {"op": "=", "args": [{"property": "valid_from"}, {"timestamp": "x' || version()"}]}))
    assert "not finite" in refused("impact_acres = 1e400")
    clean = filters.parse(json.dumps({"op": "s_intersects", "args": [
        {"property": "geom"}, {"type": "Point", "coordinates": [1, 2], "crs": "x'"}]}),
        COLUMNS)
    assert "crs" not in json.dumps(clean.to_json())


def test_size_and_nesting_are_bounded_before_the_parser() -> None:
    assert "nests 2000" in refused("(" * 2000 + "pin = 'a'" + ")" * 2000)
    assert "characters long" in refused("pin = '" + "x" * 20_000 + "'")
    assert filters.nesting("pin = '((((('") == 0
    assert filters.nesting('{"a": "[[[", "b": [[1]]}') == 3


def test_parameters_outside_their_ranges() -> None:
    assert guard.parameter_problem("/collections/x/items", "offset=1e30")
    assert guard.parameter_problem("/collections/x/items", "limit=-1")
    assert guard.parameter_problem("/collections/x/items", "simplify=nan")
    assert guard.parameter_problem("/collections/x/items/" + "9" * 30, "")
    assert guard.parameter_problem("/collections/x/items", "ids=1," + "9" * 30)
    assert guard.parameter_problem("/collections/x/items", "limit=10&offset=20") is None
    assert guard.valid_prefix("/gis/rule-m") and not guard.valid_prefix('/a"><b')
    assert guard.HOST.match("rulem_web:8080") and not guard.HOST.match('a"b')
