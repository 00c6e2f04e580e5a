"""What an ingest records and tells: its ops.batch row and notes, the duplicate of an earlier
file, the refusal of a file with its problems, and the result.

Why apart from the steps: a batch is the ingest's record in the database (docs/ingest.md, "How
it works"); every step adds to it, and these are the only statements that write it and the only
words the caller reads from it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from etl.fields import unmapped_line
from etl.problems import IngestError, IngestRefused, Problem
from etl.request import Request

MAX_PROBLEMS_SHOWN = 200


@dataclass
class IngestResult:
    """What an ingest did (status 'loaded' or 'duplicate')."""

    batch_id: int
    status: str
    layer: str
    file: str
    message: str
    features: int = 0
    inserted: int = 0
    changed: int = 0
    closed: int = 0
    unchanged: int = 0
    skipped: int = 0
    repaired: int = 0
    warnings: int = 0
    delineation_no: str | None = None
    notes: list[Problem] = field(default_factory=list)
    # the file's fields that feed no column (kept in source_attributes), and the column some
    # of them probably are (field -> column)
    unmapped: list[str] = field(default_factory=list)
    likely: dict[str, str] = field(default_factory=dict)

    @property
    def unmapped_line(self) -> str | None:
        """One line naming the unmapped fields, with a mapping-file line for each likely one
        (etl.fields.unmapped_line); None when every field feeds a column."""
        return unmapped_line(self.file, self.unmapped, self.likely)


def duplicate(conn: sa.Connection, req: Request, plan_area_id: int, sha: str,
              options: dict[str, Any]) -> IngestResult | None:
    """The same file as the last one loaded for the same scope: a no-op that says so."""
    last = conn.execute(sa.text(
        "SELECT batch_id, file_sha256, options ->> 'fingerprint' AS fp, started_at "
        "FROM ops.batch WHERE plan_area_id = :pa AND layer = :layer AND status = 'loaded' "
        "AND options ->> 'scope_key' = :scope ORDER BY batch_id DESC LIMIT 1"),
        {"pa": plan_area_id, "layer": req.layer.name,
         "scope": options["scope_key"]}).one_or_none()
    if last is None or last.file_sha256 != sha or last.fp != options["fingerprint"]:
        return None
    message = (f"{req.file} is the same file (SHA-256 {sha[:12]}...) as batch "
               f"{last.batch_id}, loaded {last.started_at:%Y-%m-%d %H:%M}: nothing changed")
    batch_id = conn.execute(sa.text(
        "INSERT INTO ops.batch (plan_area_id, layer, file_name, file_sha256, file_size, "
        "status, options, message, finished_at) VALUES (:pa, :layer, :name, :sha, :size, "
        "'duplicate', CAST(:options AS jsonb), :message, clock_timestamp()) "
        "RETURNING batch_id"),
        {"pa": plan_area_id, "layer": req.layer.name, "name": req.file, "sha": sha,
         "size": _size(req.path), "options": json.dumps(options),
         "message": message}).scalar_one()
    return IngestResult(batch_id, "duplicate", req.layer.name, req.file, message)


def open_batch(conn: sa.Connection, req: Request, plan_area_id: int, sha: str,
               options: dict[str, Any]) -> int:
    """The batch row of this ingest, set as the transaction's batch (rulem.batch_id: the
    versioning triggers stamp it on every version written)."""
    batch_id = conn.execute(sa.text(
        "INSERT INTO ops.batch (plan_area_id, layer, file_name, file_sha256, file_size, "
        "options) VALUES (:pa, :layer, :name, :sha, :size, CAST(:options AS jsonb)) "
        "RETURNING batch_id"),
        {"pa": plan_area_id, "layer": req.layer.name, "name": req.file, "sha": sha,
         "size": _size(req.path), "options": json.dumps(options)}).scalar_one()
    conn.execute(sa.text("SELECT set_config('rulem.batch_id', :b, true)"),
                 {"b": str(batch_id)})
    return batch_id


def note(conn: sa.Connection, batch_id: int, kind: str, field_: str | None,
         message: str) -> None:
    """One note of the batch (info, warning) not tied to a feature."""
    conn.execute(sa.text("INSERT INTO ops.batch_note (batch_id, kind, field, message) "
                         "VALUES (:b, :k, :f, :m)"),
                 {"b": batch_id, "k": kind, "f": field_, "m": message})


def refusal(conn: sa.Connection, req: Request, batch_id: int,
            hint: str | None = None) -> IngestRefused:
    """The refusal of a file whose features ops.ingest_prepare found errors in: the first
    problems recorded, and how many there are."""
    rows = conn.execute(sa.text(
        "SELECT source_fid, detail ->> 'key' AS key, field, message FROM ops.batch_note "
        "WHERE batch_id = :b AND kind IN ('error', 'skipped') ORDER BY batch_note_id "
        "LIMIT :n"), {"b": batch_id, "n": MAX_PROBLEMS_SHOWN}).all()
    total = conn.execute(sa.text(
        "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b "
        "AND kind IN ('error', 'skipped')"), {"b": batch_id}).scalar_one()
    problems = [Problem(req.file, r.message, feature=r.source_fid, key=r.key,
                        field=r.field) for r in rows]
    if hint is None and not req.skip:
        hint = "nothing was loaded (--skip-bad-features loads the rest)"
    return IngestRefused(req.file, problems, total, hint)


def finish(conn: sa.Connection, req: Request, batch_id: int, rows: int,
           counts: dict[str, int], record: dict[str, Any] | None) -> IngestResult:
    """The batch marked loaded with its summary line, its staging tables dropped, and the
    result with the batch's notes."""
    into = req.layer.name if req.mode == "layer" else \
        f"delineation {record['delineation_no']} (wetland)"
    warnings = conn.execute(sa.text(
        "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b AND kind = 'warning'"),
        {"b": batch_id}).scalar_one()
    message = (f"{req.file}: {rows:,} features into {into}: {counts['inserted']:,} new, "
               f"{counts['changed']:,} changed, {counts['closed']:,} closed, "
               f"{counts['unchanged']:,} unchanged, {counts['skipped']:,} skipped, "
               f"{counts['repaired']:,} repaired, {warnings:,} warnings")
    conn.execute(sa.text(
        "UPDATE ops.batch SET status = 'loaded', feature_count = :n, message = :m, "
        "finished_at = clock_timestamp() WHERE batch_id = :b"),
        {"n": rows, "m": message, "b": batch_id})
    conn.execute(sa.text("SELECT ops.ingest_cleanup(:b)"), {"b": batch_id})
    notes = [Problem(req.file, r.message, feature=r.source_fid, key=r.key, field=r.field,
                     kind=r.kind)
             for r in conn.execute(sa.text(
                 "SELECT source_fid, detail ->> 'key' AS key, field, message, kind "
                 "FROM ops.batch_note WHERE batch_id = :b AND kind <> 'info' "
                 "ORDER BY batch_note_id LIMIT :n"), {"b": batch_id, "n": MAX_PROBLEMS_SHOWN})]
    return IngestResult(
        batch_id, "loaded", req.layer.name, req.file, message, features=rows,
        inserted=counts["inserted"], changed=counts["changed"], closed=counts["closed"],
        unchanged=counts["unchanged"], skipped=counts["skipped"],
        repaired=counts["repaired"], warnings=warnings,
        delineation_no=record["delineation_no"] if record else None, notes=notes)


def refusal_from_database(exc: sa.exc.DBAPIError) -> bool:
    """Whether the database refused the file's content (a data, integrity or rule error
    raised by a constraint or trigger) rather than failing (a bug, a lost connection)."""
    code = getattr(getattr(exc, "orig", None), "pgcode", None) or ""
    return code[:2] in ("22", "23", "P0") or (code == "XX000" and "transform" in str(exc))


def database_error(file: str, exc: sa.exc.DBAPIError) -> IngestError:
    """A refusal raised inside the database, as one line naming the file."""
    orig = getattr(exc, "orig", None)
    text = str(getattr(orig, "pgerror", None) or orig or exc)
    first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else str(exc)
    first = re.sub(r"^ERROR:\s*", "", first)
    if "transform" in first.lower():
        return IngestRefused(file, [Problem(
            file, f"its coordinates could not be transformed to the working CRS "
            f"(PostGIS: {first}); check the CRS it declares, or give the right one with "
            "--crs", field="geometry")])
    return IngestRefused(file, [Problem(file, first)])


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size
