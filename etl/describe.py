"""Building the ingest spec (etl.spec) of a staged file from the layer catalogue, the column
plans and the staged fields.

Why apart from the merge: the spec is everything the SQL knows about the file and its layer;
built in one place from the catalogue (rulem_db/catalogue/layers.py) and the plans
(etl.validate), it is the same description whether it is hashed into row hashes, validated or
merged.
"""

from __future__ import annotations

import re

from etl import crs as crsmod
from etl import rules
from etl.fields import ColumnPlan, Mapping, key_field
from etl.spec import CheckSpec, ColumnSpec, DelineationSpec, KeySpec, MergeSpec, SpecField
from etl.staging import StagedField
from rulem_db.catalogue.layers import BY_NAME, Layer

MAX_AREA_CHANGE = 0.001  # a repair may change a polygon's area by at most 0.1 percent


def scope_of(layer: Layer, patch: bool) -> str:
    """Which current features a delivery replaces: the layer catalogue's ingest scope, or none
    for attribute-only changes to a layer with geometry (a patch)."""
    return "none" if patch else layer.ingest_scope


def merge_spec(target: Layer, mapping: Mapping, *, batch_id: int, plan_area_id: int,
               work_srid: int, source_crs: crsmod.SourceCRS | None,
               fields: list[StagedField], plans: list[ColumnPlan], patch: bool, skip: bool,
               likely: dict[str, str], notes: list[str]) -> MergeSpec:
    """The merge spec of a file staged with fields, for layer target. Notes when feature keys
    are the file's feature ids."""
    column_of = {f.name: f.column for f in fields}
    owner = target.owner
    key_name = key_field(tuple(column_of), mapping)
    if target.key != "source_fid":
        key = KeySpec.natural_key(target.key)
    elif key_name is not None:
        key = KeySpec.from_field(column_of[key_name], key_name)
    else:
        key = KeySpec.file_id()
        notes.append("no feature_key field: each feature's key is its feature id in "
                     "the file; deliver a feature_key field for keys that survive "
                     "re-export")
    delivered = {p.col.name for p in plans if p.delivered}
    return MergeSpec(
        batch_id=batch_id, layer=target.name, plan_area_id=plan_area_id,
        geometry=target.geometry,  # type: ignore[arg-type]
        with_geometry=target.geometry is not None and source_crs is not None,
        source_srid=source_crs.srid if source_crs else None,
        source_proj=source_crs.proj if source_crs else None, work_srid=work_srid,
        max_area_change=MAX_AREA_CHANGE,
        fields=tuple(SpecField(f.name, f.column) for f in fields),
        key=key, owner=owner,
        columns=tuple(_column(p, owner, column_of) for p in plans),
        checks=catalogue_checks(target, delivered) + tuple(rules.checks(
            target.name, {p.col.name: p.field for p in plans if p.delivered}, plan_area_id,
            likely)),
        scope=scope_of(target, patch),  # type: ignore[arg-type]
        outside=target.outside_plan_area,  # type: ignore[arg-type]
        skip_bad=skip)


def _column(p: ColumnPlan, owner: str | None, column_of: dict[str, str]) -> ColumnSpec:
    """One column's entry: where the file delivers it from, and what its values must be."""
    col = p.col
    prefix = None
    if col.ref_layer and owner == "permit_id" and BY_NAME[col.ref_layer].owner == "permit_id":
        prefix = "permit_id"
    return ColumnSpec(
        name=col.name, kind=col.kind, required=col.required,
        src=column_of.get(p.field) if p.field else None, field=p.field, const=p.const,
        const_id=p.const_id, derive_from=p.derive_from, values=p.values,
        code_map=p.code_map(), codes=tuple(col.codes) if col.codes else None,
        ref_layer=col.ref_layer, ref_prefix=prefix, references=col.references)


def catalogue_checks(layer: Layer, delivered: set[str]) -> tuple[CheckSpec, ...]:
    """The layer's CHECK rules whose columns the file delivers: checked per feature up front,
    so a violation is a line naming the feature, not a failed transaction."""
    names = {c.name for c in layer.columns}
    out = []
    checks = [(f"{c.name}_check", c.check) for c in layer.columns if c.check]
    for name, expr in checks + list(layer.extra_checks):
        used = set(re.findall(r"[a-z_][a-z0-9_]*", expr)) & names
        if used <= delivered:
            out.append(CheckSpec(name, expr))
    return tuple(out)


def delineation_spec(mapping: Mapping, *, batch_id: int, plan_area_id: int, work_srid: int,
                     delineation_id: int, delineation_no: str, file: str, sha: str,
                     permit: str | None,
                     study_crs: crsmod.SourceCRS | None) -> DelineationSpec:
    """The spec of a delivered delineation's record: the mapping file's [delineation] table,
    the file, --permit and the study area's CRS (None: no study area delivered)."""
    attrs = {k: v for k, v in mapping.delineation.items() if v is not None}
    attrs.update({"file_name": file, "file_sha256": sha})
    if permit:
        attrs["permit"] = permit
    return DelineationSpec(
        batch_id=batch_id, plan_area_id=plan_area_id, delineation_id=delineation_id,
        delineation_no=delineation_no, attributes=attrs, work_srid=work_srid,
        max_area_change=MAX_AREA_CHANGE,
        study_srid=study_crs.srid if study_crs else None,
        study_proj=study_crs.proj if study_crs else None)
