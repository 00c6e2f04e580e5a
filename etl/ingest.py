"""Ingest one delivered file into one layer: the Python API that `rulem-db ingest` and the flows
call.

What happens, all in one transaction (so any refusal leaves every table exactly as it was):
1. the options are checked (etl.request), the file opened (etl.stage_file, etl.sources), its
   fields mapped to the layer's columns (etl.validate, etl.fields), its CRS found (etl.crs):
   problems of the whole file are refused before the database is written to (for a
   layer-wide file, the digests of the rows behind the layer's current versions are read
   meanwhile: etl.redelivery.PriorAhead);
2. the same file again (same SHA-256 and options as the last load of its scope) is a no-op,
   recorded as a batch with status 'duplicate' (etl.batch);
3. a batch row, then COPY of the features in bounded batches into staging.b<batch>
   (etl.stage_file); for a layer-wide file, the reader sets aside the rows delivered exactly as
   the rows behind their features' current versions (a re-delivery's unchanged features:
   etl.redelivery, sql/063), which never reach staging; the file is staged whole when the
   settings they were delivered under differ;
4. the spec of the staged file is built (etl.describe: a typed etl.spec.MergeSpec, the one
   description the SQL reads); ops.ingest_prepare (sql/061) validates every feature at once
   and records every problem; errors refuse the file, unless bad features are to be skipped;
5. ops.ingest_apply merges (etl.merge): new versions only for new and changed features, closes
   the features of the file's scope that it no longer holds (ops.ingest_keep_hashes when rows
   were set aside, and it records the row hashes of the current versions);
6. for `ingest delineation FILE`: the delineation record with its study area (sql/062).
Once the file is staged, its values are searched for NUL characters (etl.nul.Beside) beside
the validation and the merge; a file that holds one is refused before the commit, and that
refusal comes before any other the file met (a value GDAL cut short may be what failed).
See docs/ingest.md for the formats, the mapping file, the rules and the decisions behind them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa

from etl import batch, merge, nul
from etl import crs as crsmod
from etl.batch import IngestResult
from etl.describe import delineation_spec, merge_spec
from etl.fields import unmapped_line
from etl.problems import IngestRefused, refuse
from etl.progress import Progress, Silent
from etl.redelivery import Prior, PriorAhead
from etl.request import Request
from etl.sources import Source, file_sha256
from etl.spec import MergeSpec
from etl.stage_file import Staged, open_file, source_crs, stage, stage_study_area
from etl.validate import FilePlan, permit_conflict, plan_file
from rulem_db import db
from rulem_db.locks import reporting_wait

__all__ = ["IngestResult", "ingest"]


def ingest(url: str, layer: str, path: Path | str, *, crs: str | None = None,
           mapping: Path | str | None = None, permit: str | None = None,
           study_area: Path | str | None = None, skip_bad_features: bool = False,
           delineation: str | None = None, records: bool = False,
           source_layer: str | None = None, plan_area: str | None = None,
           progress: Progress | None = None) -> IngestResult:
    """Ingest the file at path into layer (see the module doc); raises IngestRefused with every
    problem, or IngestError, leaving the database as it was. plan_area is a code; without one
    the file goes to the database's only plan area, and is refused if it holds none or several."""
    req = Request.make(url, layer, Path(path), crs=crs,
                       mapping=None if mapping is None else Path(mapping), permit=permit,
                       study_area=None if study_area is None else Path(study_area),
                       skip=skip_bad_features, delineation=delineation, records=records,
                       source_layer=source_layer, plan_area=plan_area)
    return _Ingest(req, progress or Silent()).run()


class _Ingest:
    """One ingest: the order of its steps, and what they hand on (the request, the notes for
    the batch). Each step's work is in the module of its job: reading and staging the file
    (etl.stage_file), validating it (etl.validate), building its spec (etl.describe), the
    merge (etl.merge) and the batch's record (etl.batch)."""

    def __init__(self, req: Request, progress: Progress) -> None:
        self.req, self.progress = req, progress
        self.notes: list[str] = []  # info notes of the batch, written once it is loaded
        self.ahead: PriorAhead | None = None  # the prior rows' digests, fetched meanwhile
        self.nul: nul.Beside | None = None  # the file's search for NULs, beside the merge

    def run(self) -> IngestResult:
        """Open and plan the file, then everything else in one transaction; a refusal raised
        inside the database becomes one naming the file."""
        self.progress.stage("opening")
        self.req, src = open_file(self.req, self.notes)
        eng = db.engine(self.req.url)
        if merge.may_hash(self.req, src):  # fetched while the file is checked
            self.ahead = PriorAhead(eng, self.req.target.name, self.req.layer.name,
                                    self.req.plan_area)
        try:
            try:
                plan = plan_file(self.req, src, self.notes)
                if self.ahead is not None and not merge.hash_candidate(self.req, plan, src):
                    self.ahead.close()
                    self.ahead = None
                sha = file_sha256(self.req.path)
                with eng.connect() as conn:
                    try:
                        with conn.begin():
                            result = self._in_transaction(conn, src, plan, sha)
                            refusal = self._nul_refusal(src)  # before the commit
                            if refusal is not None:
                                raise refusal
                    except sa.exc.DBAPIError as exc:
                        if not batch.refusal_from_database(exc):
                            raise  # a bug or a lost connection, not a property of the file
                        raise batch.database_error(self.req.file, exc) from None
                    except IngestRefused as exc:
                        if self.nul is None or exc is not self.nul.outcome():
                            exc.notice = unmapped_line(self.req.file, plan.unmapped,
                                                       plan.likely)
                        raise
            except Exception as exc:  # a NUL comes first: what GDAL cut short (or a driver
                # refused to send) may be what failed
                refusal = self._nul_refusal(src)
                if refusal is not None and refusal is not exc:
                    raise refusal from None
                raise
            result.unmapped, result.likely = plan.unmapped, plan.likely
            return result
        finally:
            if self.ahead is not None:
                self.ahead.close()
            self.progress.close()
            eng.dispose()

    def _search_nul(self, src: Source) -> None:
        """Start the file's search for NULs (etl.nul.Beside), once."""
        if self.nul is None:
            self.nul = nul.Beside(src)

    def _nul_refusal(self, src: Source) -> BaseException | None:
        """The file's refusal for a NUL, or None (the search started now if it was not)."""
        self._search_nul(src)
        assert self.nul is not None
        return self.nul.outcome()

    def _in_transaction(self, conn: sa.Connection, src: Source, plan: FilePlan,
                        sha: str) -> IngestResult:
        req = self.req
        work_srid = conn.execute(sa.text("SELECT ops.working_srid()")).scalar_one()
        try:
            plan_area_id = db.plan_area(conn, req.plan_area).plan_area_id
        except db.PlanAreaUnclear as exc:
            raise refuse(req.file, str(exc)) from None
        for name in sorted({req.layer.name, req.target.name}):
            with reporting_wait(conn, f"the ingest lock of layer {name} (another ingest of it)"):
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('rulem-ingest'), "
                                     "hashtext(:l))"), {"l": name})
        options = req.options(sha)
        dup = batch.duplicate(conn, req, plan_area_id, sha, options)
        if dup is not None:
            return dup
        if src.has_geometry:
            crsmod.require(req.file, src.crs, req.crs_given)
        batch_id = batch.open_batch(conn, req, plan_area_id, sha, options)
        candidate = self.ahead is not None
        prior = Prior()
        if self.ahead is not None:
            self.progress.stage("fetching row hashes")
            prior = self.ahead.take(conn, req.target.name, plan_area_id)
        staged = stage(conn, req, src, batch_id, prior, candidate, self.progress)
        if plan.permit_field is not None:
            permit_conflict(conn, req, plan.permit_field, batch_id, staged.fields)
        file_crs = None
        if src.has_geometry:
            file_crs = source_crs(conn, src, work_srid, req.crs_given, f"staging.b{batch_id}")
            conn.execute(sa.text("UPDATE ops.batch SET source_crs = :c WHERE batch_id = :b"),
                         {"c": file_crs.label, "b": batch_id})
        for w in staged.log.warnings:
            batch.note(conn, batch_id, "warning", None, f"GDAL: {w}")
        opened = None
        if req.mode == "delineation":
            opened = merge.open_delineation(conn, req, batch_id, plan_area_id)
            plan.plan_of("delineation_id").const_id = opened["delineation_id"]
        spec = self._spec(batch_id, plan_area_id, work_srid, file_crs, staged, plan)
        hashed = merge.hashed(req, spec)
        if hashed != candidate or staged.aside.count:
            context = merge.row_context(conn, spec)
            if hashed != candidate or not staged.aside.all_under(context):
                # rows were set aside under other settings, plan boundary or tolerance (or
                # the file is not one whose rows can be): read and stage it whole
                conn.execute(sa.text("SELECT ops.ingest_cleanup(:b)"), {"b": batch_id})
                staged = stage(conn, req, src, batch_id, Prior(), hashed, self.progress)
                if src.has_geometry:
                    file_crs = source_crs(conn, src, work_srid, req.crs_given,
                                          f"staging.b{batch_id}")
                spec = self._spec(batch_id, plan_area_id, work_srid, file_crs, staged, plan)
        set_aside = 0
        if hashed:
            self.progress.stage("comparing")
            set_aside = staged.aside.copy_to(conn, batch_id)
            if set_aside:
                self.notes.append(f"{set_aside:,} features delivered exactly as before (the "
                                  "rows behind their current versions) were set aside "
                                  "unchanged, without validation")
        self._search_nul(src)  # the file is read: the search runs beside the server's work
        self.progress.stage("validating")
        summary = merge.prepare(conn, spec)
        if summary["errors"] and not req.skip:
            raise batch.refusal(conn, req, batch_id)
        if summary["bad_rows"] >= staged.rows:
            raise batch.refusal(conn, req, batch_id, hint="no feature of the file could be loaded")
        self.progress.stage("merging")
        # rows set aside were not seen by apply: it must close nothing (sql/063 closes)
        counts = merge.apply(conn, spec.without_scope() if set_aside else spec)
        if hashed:
            kept = merge.keep_hashes(conn, spec, set_aside)
            if set_aside:
                counts = {**counts, "unchanged": counts["unchanged"] + set_aside,
                          "closed": kept["closed"]}
        record = None
        if opened is not None:
            record = self._delineation_record(conn, batch_id, plan_area_id, work_srid, opened,
                                              sha)
        for text in self.notes + ([file_crs.note] if file_crs and file_crs.note else []):
            batch.note(conn, batch_id, "info", None, text)
        result = batch.finish(conn, req, batch_id, staged.rows, counts, record)
        self.progress.stage("committing")
        return result

    def _spec(self, batch_id: int, plan_area_id: int, work_srid: int,
              file_crs: crsmod.SourceCRS | None, staged: Staged, plan: FilePlan) -> MergeSpec:
        return merge_spec(self.req.target, self.req.mapping, batch_id=batch_id,
                          plan_area_id=plan_area_id, work_srid=work_srid, source_crs=file_crs,
                          fields=staged.fields, plans=plan.plans, patch=plan.patch,
                          skip=self.req.skip, likely=plan.likely, notes=self.notes)

    def _delineation_record(self, conn: sa.Connection, batch_id: int, plan_area_id: int,
                            work_srid: int, opened: dict[str, Any], sha: str) -> dict[str, Any]:
        """The delineation record of `ingest delineation FILE`, with the study area delivered
        (staged here) or made from its wetlands and parcels."""
        req = self.req
        study_crs = None
        if req.study_area is not None:
            study_crs = stage_study_area(conn, req, batch_id, work_srid, self.notes)
        spec = delineation_spec(req.mapping, batch_id=batch_id, plan_area_id=plan_area_id,
                                work_srid=work_srid, delineation_id=opened["delineation_id"],
                                delineation_no=opened["delineation_no"], file=req.file,
                                sha=sha, permit=req.permit, study_crs=study_crs)
        self.progress.stage("recording the delineation")
        return merge.record_delineation(conn, spec)
