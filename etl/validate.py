"""What ingest refuses in Python: the file's fields against the layer, before the database is
touched, and --permit against the permits the staged file carries.

Why here and not in ops.ingest_prepare: these are properties of the whole file (a column no
field delivers, geometry a layer needs, a file of several permits loaded as one), refused in one
line naming the file and what to change; the per-feature checks are the SQL's, set-based, in
ops.ingest_prepare (sql/061).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import sqlalchemy as sa

from etl.fields import ColumnPlan, key_field, plan_columns, unmapped_fields, unmapped_line
from etl.problems import IngestRefused, Problem, refuse
from etl.request import Request
from etl.sources import Source, file_sha256
from etl.staging import StagedField


@dataclass
class FilePlan:
    """Which field (or constant) delivers each column of the layer, and what the file leaves
    over: its fields that feed no column, and the column some of them probably are."""

    plans: list[ColumnPlan]
    patch: bool  # a file without geometry for a layer with geometry (attributes only)
    permit_field: str | None  # the file's own permit field, when --permit replaces it
    unmapped: list[str] = field(default_factory=list)
    likely: dict[str, str] = field(default_factory=dict)

    def plan_of(self, column: str) -> ColumnPlan:
        """The plan of one column of the layer."""
        return next(p for p in self.plans if p.col.name == column)


def plan_file(req: Request, src: Source, notes: list[str]) -> FilePlan:
    """The column plans of the file (the mapping file, then recognised names; the options'
    constants), or a refusal when the layer needs geometry or a column that no field
    delivers. Notes how each column was found, and the fields that feed no column."""
    target = req.target
    plans = plan_columns(target, src.fields, req.mapping, req.file)
    by = {p.col.name: p for p in plans}
    for p in plans:
        if p.field:
            notes.append(f"{p.col.name} from field {p.field} ({p.how})")
    if req.mode == "delineation":
        by["delineation_id"].field = None
        by["delineation_id"].const_id = -1  # set once the delineation is opened
    elif req.delineation_no and "delineation_id" in by:
        by["delineation_id"].field, by["delineation_id"].const = None, req.delineation_no
    permit_field = None
    if req.permit and "permit_id" in by:
        if by["permit_id"].field:
            # checked after staging: every value must be the same permit, or empty
            permit_field = by["permit_id"].field
            notes.append(f"--permit {req.permit} used instead of field "
                         f"{by['permit_id'].field}")
        by["permit_id"].field, by["permit_id"].const = None, req.permit
    if "pin_normalized" in by and not by["pin_normalized"].delivered:
        by["pin_normalized"].derive_from = "pin"
    patch = target.geometry is not None and not src.has_geometry
    if req.layer.name == "delineation" and req.mode == "layer" and not patch:
        for name, value in (("file_name", req.file), ("file_sha256", None)):
            if not by[name].delivered:
                by[name].const = value if value else file_sha256(req.path)
    missing = [p.col.name for p in plans if p.col.required and not p.delivered]
    unmapped, likely = unmapped_fields(
        target, src.fields, plans, req.mapping,
        used=(key_field(src.fields, req.mapping), src.geometry_column, permit_field))
    if target.geometry and not src.has_geometry and target.name != "delineation":
        hint = ("; name a CSV's WKT column in a mapping file (geometry = \"...\")"
                if src.driver == "CSV" else "")
        raise refuse(req.file, f"has no geometry, and layer {target.name} needs "
                     f"{geometry_noun(target.geometry)}{hint}")
    if missing:
        have = ", ".join(src.fields) or "no fields"
        first = next((f for f, c in likely.items() if c == missing[0]), "<field>")
        raise refuse(req.file, f"layer {target.name} needs {', '.join(missing)}, but "
                     f"the file has no field for {'it' if len(missing) == 1 else 'them'} "
                     f"(its fields are: {have}); rename the field, or map it in a mapping "
                     f"file ([fields] {missing[0]} = {json.dumps(first)})")
    line = unmapped_line(req.file, unmapped, likely)
    if line:
        notes.append(line)
    return FilePlan(plans, patch, permit_field, unmapped, likely)


def permit_conflict(conn: sa.Connection, req: Request, permit_field: str, batch_id: int,
                    fields: list[StagedField]) -> None:
    """--permit NO assigns every feature to permit NO: a file whose features carry their
    own, different permit numbers is refused (the first such feature named), since the
    option would silently move them to NO. The same number, or none, is fine."""
    column = {f.name: f.column for f in fields}
    value = f"btrim(s.{column[permit_field]}::text)"
    key = key_field(tuple(column), req.mapping)
    key_sql = f"nullif(btrim(s.{column[key]}::text), '')" if key else "NULL::text"
    found = conn.execute(sa.text(
        f"SELECT s._fid AS fid, {key_sql} AS key, {value} AS v, count(*) OVER () AS n "
        f"FROM staging.b{batch_id} s WHERE {value} <> '' AND {value} <> :p "
        "ORDER BY s._row LIMIT 1"), {"p": req.permit}).one_or_none()
    if found is None:
        return
    more = found.n - 1
    also = f" (and {more} more feature{'s' * (more > 1)})" if more > 0 else ""
    raise IngestRefused(req.file, [Problem(
        req.file, f"carries permit {found.v} (field {permit_field}), but --permit "
        f"{req.permit} assigns every feature to permit {req.permit}{also}; load the file "
        f"without --permit, or deliver one permit's features per file",
        feature=found.fid, key=found.key, field="permit_id")])


def geometry_noun(geometry: str) -> str:
    """A geometry type in words, as problems say it."""
    return {"MULTIPOLYGON": "polygons", "MULTILINESTRING": "lines", "POINT": "points"}.get(
        geometry, "geometry")
