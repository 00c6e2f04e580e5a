"""The ingest spec: one typed description of a staged file, read by ingest's Python and its SQL.

The SQL side of ingest takes a jsonb "spec" and reads its keys by name: ops.ingest_prepare and
ops.ingest_apply (sql/061_ingest_merge.sql), ops.ingest_row_context and ops.ingest_keep_hashes
(sql/063_ingest_unchanged.sql) take a MergeSpec, ops.ingest_delineation_record
(sql/062_ingest_delineation.sql) a DelineationSpec. A key misspelt on either side is no error
there, just a NULL; so every key is a field of a frozen dataclass here, built and read by
attribute in Python, turned into the SQL's JSON by one method (`json()`), and described by a
JSON Schema generated from these classes (`json_schema()`, committed as
docs/ingest-spec.schema.json; tests/unit/test_ingest_spec.py holds the file to the classes and
every key the SQL reads to the schema).

Why the JSON keeps its exact shape (a key that was left out stays left out, `omit_none`):
ops.ingest_row_context hashes the merge spec (without batch_id and skip_bad) into the row hash
of every feature a layer-wide ingest makes current (docs/ingest.md, "Keys, versions and what
'disappeared' means"); a key added, renamed or turned from absent to null would make every
stored row hash stale, and the next re-delivery of every layer would be staged whole.

    .venv/bin/python -m etl.spec > docs/ingest-spec.schema.json   # regenerate the schema
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Literal

#: The value kinds of the catalogue's columns (rulem_db/catalogue/layers.py, Col.kind) besides
#: ref:<layer>: what ops.ingest_typed_sql parses a delivered text into.
KINDS = ("text", "int", "numeric", "bool", "date", "text[]", "jsonb")

Geometry = Literal["MULTIPOLYGON", "MULTILINESTRING", "POINT"]
Scope = Literal["layer", "owner", "none"]
Outside = Literal["error", "warning"]


def _doc(text: str, *, omit_none: bool = False, schema: dict[str, Any] | None = None,
         default: Any = dataclasses.MISSING) -> Any:
    """A field with its description for the schema. omit_none: the key is left out of the JSON
    (and not required by the schema) when the value is None. schema: the field's schema, where
    its Python type says too little."""
    meta = {"doc": text, "omit_none": omit_none, "schema": schema}
    return field(default=default, metadata=meta)


class _Json:
    """The one serialisation of every spec class: `as_json()` (a dict of JSON values) and
    `json()` (its text, what the SQL functions take as jsonb)."""

    def as_json(self) -> dict[str, Any]:
        """The dataclass as JSON values: nested specs as objects, tuples as arrays, None as
        null except in an `omit_none` field, which is then left out."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_none"):
                continue
            out[f.name] = _plain(value)
        return out

    def json(self) -> str:
        """The spec as the JSON text the SQL functions read."""
        return json.dumps(self.as_json())


def _plain(value: Any) -> Any:
    if isinstance(value, _Json):
        return value.as_json()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class SpecField(_Json):
    """A field of the delivered file and the staging column that holds it (every field is kept
    in source_attributes under its own name, whether or not it feeds a column)."""

    name: str = _doc("the field's name in the file")
    col: str = _doc("its column in staging.b<batch>: c0, c1, ...")


@dataclass(frozen=True)
class KeySpec(_Json):
    """Where a feature's key comes from: one of {natural}, {col, field} or {fid: true}."""

    natural: str | None = _doc("the layer's natural key column (the key is its typed value)",
                               omit_none=True, default=None)
    col: str | None = _doc("the staging column of the file's key field", omit_none=True,
                           default=None)
    field: str | None = _doc("the file's key field, as problems name it", omit_none=True,
                             default=None)
    fid: bool | None = _doc("true: the key is the feature's id in the file (a shapefile's "
                            "record number, a GeoPackage fid, a CSV line)", omit_none=True,
                            default=None)

    @classmethod
    def natural_key(cls, column: str) -> KeySpec:
        """The layer's natural key (e.g. a parcel's pin)."""
        return cls(natural=column)

    @classmethod
    def from_field(cls, column: str, field_name: str) -> KeySpec:
        """The file's key field, staged in column."""
        return cls(col=column, field=field_name)

    @classmethod
    def file_id(cls) -> KeySpec:
        """No key field: each feature's position in the file."""
        return cls(fid=True)

    @property
    def by_file_id(self) -> bool:
        """Whether keys are the file's feature ids (which do not survive a re-export)."""
        return bool(self.fid)


_KIND_SCHEMA = {"anyOf": [{"enum": list(KINDS)},
                          {"type": "string", "pattern": "^ref:[a-z_][a-z0-9_]*$"}]}


@dataclass(frozen=True)
class ColumnSpec(_Json):
    """One column of the layer and where the file delivers it from (a field, a constant, an id
    or a derivation; none of them: the column is not delivered, and keeps its stored value)."""

    name: str = _doc("the column of core.<layer>")
    kind: str = _doc("its kind in the layer catalogue: a value kind, or ref:<layer> (the "
                     "stable id of a feature of that layer)", schema=_KIND_SCHEMA)
    required: bool = _doc("whether every feature needs a value")
    src: str | None = _doc("the staging column of the field that delivers it")
    field: str | None = _doc("that field's name in the file, as problems name it")
    const: str | None = _doc("a constant delivered for every feature (a mapping file's value, "
                             "--permit, --delineation)")
    const_id: int | None = _doc("a stable feature id delivered for every feature (the "
                                "delineation of `ingest delineation FILE`)")
    derive_from: str | None = _doc("the column it is derived from (pin_normalized from pin)")
    values: dict[str, str] | None = _doc("a mapping file's value table: delivered -> stored")
    code_map: dict[str, str] | None = _doc("recognised spellings of its coded values: "
                                           "letters and digits, upper case -> code")
    codes: tuple[str, ...] | None = _doc("the coded values it may hold")
    ref_layer: str | None = _doc("the layer a ref column's keys name")
    ref_prefix: str | None = _doc("the column whose feature key prefixes a delivered reference "
                                  "key (permit_id: 'SW-1' in a permit's file is "
                                  "'<permit_no>/SW-1')")
    references: str | None = _doc("a reference table its values must be in, "
                                  "schema.table.column")

    @property
    def delivered(self) -> bool:
        """Whether the file delivers the column (ops.ingest_delivered says the same)."""
        return (self.src is not None or self.const is not None or self.const_id is not None
                or self.derive_from is not None)


@dataclass(frozen=True)
class CheckSpec(_Json):
    """A rule checked per feature before the merge: a CHECK of the catalogue, or a rule of
    etl.rules (which names its field and says its own message)."""

    name: str = _doc("the rule's name (the constraint's, or etl.rules')")
    expr: str = _doc("SQL over the prepared row p, bare column names; false = a problem")
    field: str | None = _doc("the field a problem names (default: the rule's name)",
                             omit_none=True, default=None)
    message: str | None = _doc("what a problem says (default: 'fails the rule ...')",
                               omit_none=True, default=None)


@dataclass(frozen=True)
class MergeSpec(_Json):
    """How a file staged in staging.b<batch> is validated and merged into core.<layer>
    (ops.ingest_prepare, ops.ingest_apply, ops.ingest_keep_hashes)."""

    batch_id: int = _doc("the ops.batch of this ingest; its staging tables are b<batch>...")
    layer: str = _doc("the layer merged into, core.<layer>")
    plan_area_id: int = _doc("the plan area the file goes to")
    geometry: Geometry | None = _doc("the layer's geometry type (null: attributes only)")
    with_geometry: bool = _doc("whether the file carries geometry for a layer that has one "
                               "(false: a patch of attributes)")
    source_srid: int | None = _doc("the file's CRS as an EPSG code PostGIS knows")
    source_proj: str | None = _doc("the file's CRS as a PROJ definition (used when "
                                   "source_srid is null)")
    work_srid: int = _doc("the working CRS (ops.working_srid())")
    max_area_change: float = _doc("the largest change of area (or length) a repair may make, "
                                  "a fraction (0.001 = 0.1 percent)")
    fields: tuple[SpecField, ...] = _doc("every field of the file, in order")
    key: KeySpec = _doc("where a feature's key comes from")
    owner: str | None = _doc("the column whose feature owns the layer's features and "
                             "prefixes their keys (permit_id, delineation_id, ...)")
    columns: tuple[ColumnSpec, ...] = _doc("every column of the layer")
    checks: tuple[CheckSpec, ...] = _doc("the rules checked per feature whose columns the file "
                                         "delivers")
    scope: Scope = _doc("which current features the file replaces: the whole layer, those of "
                        "its owners, or none (nothing is closed)")
    outside: Outside | None = _doc("what a feature outside the plan area is: an error, a "
                                   "warning, or not checked (null)")
    skip_bad: bool = _doc("whether bad features are skipped (--skip-bad-features) rather than "
                          "refusing the file")

    def without_scope(self) -> MergeSpec:
        """The spec for a merge that must close nothing (rows were set aside, and
        ops.ingest_keep_hashes closes what the file no longer holds)."""
        return dataclasses.replace(self, scope="none")


_ATTRIBUTES_SCHEMA = {
    "type": "object",
    "properties": {
        "permit": {"type": "string", "description": "--permit: the permit number"},
        "consultant": {"type": "string"},
        "field_on": {"type": "string", "description": "the field visit, YYYY-MM-DD"},
        "method": {"type": "string"},
        "submitted_on": {"type": "string", "description": "YYYY-MM-DD (default: today)"},
        "file_name": {"type": "string", "description": "the delivered file's name"},
        "file_sha256": {"type": "string", "description": "its SHA-256"},
    },
    "additionalProperties": {"type": "string"},
}


@dataclass(frozen=True)
class DelineationSpec(_Json):
    """The delineation record a file of wetlands makes (ops.ingest_delineation_record; the
    study area, when delivered, staged in staging.b<batch>_study)."""

    batch_id: int = _doc("the ops.batch of this ingest")
    plan_area_id: int = _doc("the plan area")
    delineation_id: int = _doc("the delineation's stable id (ops.ingest_delineation_open)")
    delineation_no: str = _doc("its number, e.g. D-2024-01")
    attributes: dict[str, str] = _doc("the record's attributes: the mapping file's "
                                      "[delineation] table, --permit, the file's name and "
                                      "SHA-256; kept in source_attributes",
                                      schema=_ATTRIBUTES_SCHEMA)
    work_srid: int = _doc("the working CRS")
    max_area_change: float = _doc("the largest change of area a repair of the study area "
                                  "may make, a fraction")
    study_srid: int | None = _doc("the study area file's CRS as an EPSG code (null: none "
                                  "delivered, or see study_proj)", default=None)
    study_proj: str | None = _doc("the study area file's CRS as a PROJ definition",
                                  default=None)


# --- the JSON Schema, generated from the classes ------------------------------------------
_SCALARS = {int: "integer", str: "string", bool: "boolean", float: "number"}
TOP_LEVEL = (MergeSpec, DelineationSpec)


def json_schema() -> dict[str, Any]:
    """The JSON Schema (2020-12) of the specs, from the classes' fields, types and docs."""
    defs: dict[str, Any] = {}
    for cls in TOP_LEVEL:
        _define(cls, defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "rulem-db ingest spec",
        "description": (__doc__ or "").split("\n\n")[0],
        "oneOf": [{"$ref": f"#/$defs/{c.__name__}"} for c in TOP_LEVEL],
        "$defs": dict(sorted(defs.items())),
    }


def _define(cls: type, defs: dict[str, Any]) -> None:
    if cls.__name__ in defs:
        return
    defs[cls.__name__] = {}  # taken, for nested references
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if f.metadata.get("omit_none") and _optional(hint):  # absent, never null
            (hint,) = [a for a in typing.get_args(hint) if a is not type(None)]
        schema = dict(f.metadata.get("schema") or _type_schema(hint, defs))
        if f.metadata.get("schema") and _optional(hint):
            schema = {"anyOf": [schema, {"type": "null"}]}
        props[f.name] = {"description": f.metadata["doc"], **schema}
        if not f.metadata.get("omit_none"):
            required.append(f.name)
    defs[cls.__name__] = {"type": "object", "description": " ".join((cls.__doc__ or "").split()),
                          "properties": props, "required": required,
                          "additionalProperties": False}


def _optional(hint: Any) -> bool:
    return (typing.get_origin(hint) in (typing.Union, types.UnionType)
            and type(None) in typing.get_args(hint))


def _type_schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    args = typing.get_args(hint)
    if _optional(hint):
        (inner,) = [a for a in args if a is not type(None)]
        schema = _type_schema(inner, defs)
        if "enum" in schema:
            return {"enum": [*schema["enum"], None]}
        if "type" in schema and isinstance(schema["type"], str) and len(schema) == 1:
            return {"type": [schema["type"], "null"]}
        return {"anyOf": [schema, {"type": "null"}]}
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin = typing.get_origin(hint)
    if origin is Literal:
        return {"enum": list(args)}
    if origin is tuple:
        return {"type": "array", "items": _type_schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(args[1], defs)}
    if dataclasses.is_dataclass(hint):
        _define(hint, defs)  # type: ignore[arg-type]
        return {"$ref": f"#/$defs/{hint.__name__}"}
    raise TypeError(f"no JSON Schema for {hint!r}")


def schema_text() -> str:
    """The schema as committed in docs/ingest-spec.schema.json."""
    return json.dumps(json_schema(), indent=2) + "\n"


if __name__ == "__main__":
    print(schema_text(), end="")
