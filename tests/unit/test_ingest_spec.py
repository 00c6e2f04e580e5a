"""The ingest spec (etl/spec.py), its JSON Schema and the SQL that reads it, checked without a
database.

Why: the spec crosses from Python to SQL as JSON, where a key one side writes and the other
does not read (or reads under another name) is no error, just a NULL. So the schema is
generated from the classes and committed (docs/ingest-spec.schema.json), every spec the
catalogue's layers make validates against it, and every key the SQL functions read from a spec
is one the schema describes: the three cannot drift apart.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from etl.crs import SourceCRS
from etl.describe import delineation_spec, merge_spec
from etl.fields import Mapping, plan_columns
from etl.spec import CheckSpec, KeySpec, MergeSpec, json_schema, schema_text
from etl.staging import StagedField
from rulem_db.catalogue.layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "ingest-spec.schema.json"
# the SQL files with a function that takes a spec (sql/061, sql/062, sql/063 today)
SPEC_SQL = sorted(p for p in (ROOT / "sql").glob("*.sql") if "p_spec jsonb" in p.read_text())
# a key read from a jsonb value: x ->> 'key', x -> 'key', x - 'key' (also chained)
KEY_READ = re.compile(r"(?:->>|->|\s-)\s*'([a-z_][a-z0-9_]*)'")


def _specs() -> list[MergeSpec]:
    """A merge spec of every layer of the catalogue: every column delivered by a field, with
    and without a key field, with geometry in an EPSG code and in a PROJ definition."""
    out = []
    for layer in LAYERS:
        for keyed, crs in ((True, SourceCRS("EPSG:26915", 26915, None)),
                           (False, SourceCRS("a file's own", None, "+proj=utm +zone=15"))):
            names = [c.name for c in layer.columns] + (["feature_key"] if keyed else [])
            fields = [StagedField(n, f"c{i}", "text") for i, n in enumerate(names)]
            plans = plan_columns(layer, tuple(names), Mapping(), "f.gpkg")
            out.append(merge_spec(layer, Mapping(), batch_id=1, plan_area_id=1,
                                  work_srid=26915, source_crs=crs if layer.geometry else None,
                                  fields=fields, plans=plans, patch=False, skip=not keyed,
                                  likely={}, notes=[]))
    return out


def _schema_keys(node: object) -> set[str]:
    """Every property name the schema describes, at any depth."""
    if isinstance(node, dict):
        found = set(node.get("properties", {})) if isinstance(node.get("properties"), dict) \
            else set()
        return found | {k for v in node.values() for k in _schema_keys(v)}
    if isinstance(node, list):
        return {k for v in node for k in _schema_keys(v)}
    return set()


def test_the_committed_schema_is_generated_from_the_classes() -> None:
    """docs/ingest-spec.schema.json is what `python -m etl.spec` writes."""
    assert SCHEMA_FILE.read_text() == schema_text(), (
        "docs/ingest-spec.schema.json is stale: .venv/bin/python -m etl.spec > "
        "docs/ingest-spec.schema.json")


def test_every_layer_makes_a_spec_the_schema_accepts() -> None:
    """The specs built from the catalogue (kinds, geometry types, scopes, checks) are valid."""
    validator = jsonschema.Draft202012Validator(json_schema())
    specs = _specs()
    assert {s.layer for s in specs} == {layer.name for layer in LAYERS}
    for spec in specs:
        errors = [e.message for e in validator.iter_errors(json.loads(spec.json()))]
        assert not errors, (spec.layer, errors)
    delineation = delineation_spec(Mapping(delineation={"consultant": "Wet & Co"}), batch_id=1,
                                   plan_area_id=1, work_srid=26915, delineation_id=9,
                                   delineation_no="D-2024-01", file="w.gpkg", sha="ab",
                                   permit="24-001", study_crs=None)
    assert not list(validator.iter_errors(json.loads(delineation.json())))


def test_the_schema_refuses_a_misspelt_or_missing_key() -> None:
    """A spec with a key the SQL does not read, or without one it does, is invalid."""
    validator = jsonschema.Draft202012Validator(json_schema())
    good = json.loads(_specs()[0].json())
    assert validator.is_valid(good)
    assert not validator.is_valid({**good, "skip_bad_features": True})
    assert not validator.is_valid({k: v for k, v in good.items() if k != "work_srid"})
    assert not validator.is_valid({**good, "scope": "all"})
    assert not validator.is_valid({**good, "columns": [{**good["columns"][0], "kind": "float"}]})


@pytest.mark.parametrize("path", SPEC_SQL, ids=lambda p: p.name)
def test_every_key_the_sql_reads_is_in_the_schema(path: Path) -> None:
    """Each key the SQL reads from a spec (or from its columns, fields, key, checks and a
    delineation's attributes) is a property of the schema."""
    described = _schema_keys(json_schema())
    read = set(KEY_READ.findall(path.read_text()))
    assert read, f"{path.name} reads no key: the pattern no longer finds them"
    assert read <= described, (
        f"{path.name} reads {sorted(read - described)}, which the spec does not have "
        "(etl/spec.py)")


def test_the_sql_reads_every_key_the_spec_writes() -> None:
    """No key of a spec goes unread: each is read by the SQL, but for the key's fid (the
    SQL takes a feature's id as its key when the key names neither a column nor a field;
    ingest's Python reads fid)."""
    assert [p.name for p in SPEC_SQL] == [
        "061_ingest_merge.sql", "062_ingest_delineation.sql", "063_ingest_unchanged.sql"]
    read = {k for path in SPEC_SQL for k in KEY_READ.findall(path.read_text())}
    written = _schema_keys(json_schema())
    assert written - read == {"fid"}, sorted(written - read)


def test_json_keeps_the_shape_the_row_hashes_were_made_with() -> None:
    """Optional keys of a key and a check are left out, not null (ops.ingest_row_context
    hashes the spec's text, so null in place of an absent key changes every row hash)."""
    assert KeySpec.natural_key("pin").as_json() == {"natural": "pin"}
    assert KeySpec.from_field("c3", "ID").as_json() == {"col": "c3", "field": "ID"}
    assert KeySpec.file_id().as_json() == {"fid": True}
    assert CheckSpec("a_check", "a > 0").as_json() == {"name": "a_check", "expr": "a > 0"}
    spec = _specs()[0]
    assert list(spec.as_json()) == [
        "batch_id", "layer", "plan_area_id", "geometry", "with_geometry", "source_srid",
        "source_proj", "work_srid", "max_area_change", "fields", "key", "owner", "columns",
        "checks", "scope", "outside", "skip_bad"]
    assert spec.without_scope().scope == "none" and spec.scope != "none"
