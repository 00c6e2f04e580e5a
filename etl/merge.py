"""Writing a staged file into its layer: the calls of the SQL side of ingest, each with its spec
(etl.spec), and the decision whether a file's rows are compared with the rows delivered before.

Why apart from the orchestration: these are the only places the spec crosses into SQL
(sql/061, sql/062, sql/063), so what each function is given, and when, reads in one page.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from etl.describe import scope_of
from etl.fields import key_field
from etl.request import Request
from etl.sources import Source
from etl.spec import DelineationSpec, MergeSpec
from etl.validate import FilePlan


def may_hash(req: Request, src: Source) -> bool:
    """What hash_candidate asks of the request and the file alone (known before the fields
    are mapped): whether the prior rows' digests may be needed."""
    return (req.mode == "layer" and not req.records
            and req.target.geometry is not None and src.has_geometry
            and (req.target.key != "source_fid"
                 or key_field(tuple(src.fields), req.mapping) is not None)
            and req.permit is None and req.delineation_no is None)


def hash_candidate(req: Request, plan: FilePlan, src: Source) -> bool:
    """`hashed`, known before the file is staged (from the file's fields and the column
    plans rather than the spec): whether the reader makes each row's digest."""
    return (may_hash(req, src) and scope_of(req.target, plan.patch) == "layer"
            and not any(p.col.ref_layer for p in plan.plans))


def hashed(req: Request, spec: MergeSpec) -> bool:
    """Whether this file's rows are compared with the rows behind the current versions
    before validation (sql/063): a layer-wide delivery with geometry, keyed by a field or
    a natural key, whose columns reference no other layer. There a row's outcome depends
    on the row and the settings alone, so a row delivered exactly as before is unchanged;
    elsewhere (a permit's or a delineation's features, references to check, keys that are
    positions in the file) every row is prepared."""
    return (req.mode == "layer" and not req.records and spec.scope == "layer"
            and spec.with_geometry and not spec.key.by_file_id
            and req.permit is None and req.delineation_no is None
            and not any(c.ref_layer for c in spec.columns))


def row_context(conn: sa.Connection, spec: MergeSpec) -> bytes:
    """The hash of what a row's outcome depends on besides the row (ops.ingest_row_context):
    rows set aside under another context must be staged after all."""
    return bytes(conn.execute(sa.text(
        "SELECT decode(ops.ingest_row_context(CAST(:s AS jsonb)), 'hex')"),
        {"s": spec.json()}).scalar_one())


def prepare(conn: sa.Connection, spec: MergeSpec) -> dict[str, int]:
    """ops.ingest_prepare: every feature validated, every problem recorded; the counts."""
    return conn.execute(sa.text("SELECT ops.ingest_prepare(CAST(:s AS jsonb))"),
                        {"s": spec.json()}).scalar_one()


def apply(conn: sa.Connection, spec: MergeSpec) -> dict[str, int]:
    """ops.ingest_apply: the good features merged; the counts."""
    return conn.execute(sa.text("SELECT ops.ingest_apply(CAST(:s AS jsonb))"),
                        {"s": spec.json()}).scalar_one()


def keep_hashes(conn: sa.Connection, spec: MergeSpec, set_aside: int) -> dict[str, int]:
    """ops.ingest_keep_hashes: the row hashes of the versions made current, and, when rows
    were set aside, the closing of what the file no longer holds."""
    return conn.execute(sa.text("SELECT ops.ingest_keep_hashes(CAST(:s AS jsonb), :n)"),
                        {"s": spec.json(), "n": set_aside}).scalar_one()


def open_delineation(conn: sa.Connection, req: Request, batch_id: int,
                     plan_area_id: int) -> dict[str, Any]:
    """ops.ingest_delineation_open: the id and number of the delineation the file delivers."""
    return conn.execute(sa.text("SELECT ops.ingest_delineation_open(:b, :pa, :n)"),
                        {"b": batch_id, "pa": plan_area_id,
                         "n": req.delineation_no}).scalar_one()


def record_delineation(conn: sa.Connection, spec: DelineationSpec) -> dict[str, Any]:
    """ops.ingest_delineation_record: the delineation record with its study area."""
    return conn.execute(sa.text("SELECT ops.ingest_delineation_record(CAST(:s AS jsonb))"),
                        {"s": spec.json()}).scalar_one()
