"""Ingest one delivered file into one layer: the Python API that `rulem-db ingest` and the flows
call.

What happens, all in one transaction (so any refusal leaves every table exactly as it was):
1. open the file (etl.sources), map its fields (etl.fields), find its CRS (etl.crs): problems of
   the whole file are refused before the database is touched;
2. the same file again (same SHA-256 and options as the last load of its scope) is a no-op,
   recorded as a batch with status 'duplicate';
3. a batch row, then COPY of the features in bounded batches into staging.b<batch>;
   for a layer-wide file, the reader sets aside the rows delivered exactly as the rows behind
   their features' current versions (a re-delivery's unchanged features: etl.redelivery,
   sql/063), which never reach staging; the file is staged whole when the settings they were
   delivered under differ;
4. ops.ingest_prepare (sql/061) validates every feature at once and records every problem;
   errors refuse the file, unless bad features are to be skipped;
5. ops.ingest_apply merges: new versions only for new and changed features, closes the
   features of the file's scope that it no longer holds (ops.ingest_keep_hashes when rows
   were set aside, and it records the row hashes of the current versions);
6. for `ingest delineation FILE`: the delineation record with its study area (sql/062).
See docs/ingest.md for the formats, the mapping file, the rules and the decisions behind them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import sqlalchemy as sa

from etl import crs as crsmod
from etl import nul, rules, staging
from etl.fields import (
    ColumnPlan,
    Mapping,
    key_field,
    layer_of,
    load_mapping,
    plan_columns,
    unmapped_fields,
    unmapped_line,
)
from etl.memory import release_free_memory
from etl.problems import IngestError, IngestRefused, Problem, refuse
from etl.progress import Progress, Silent
from etl.reading import ReadLog, ahead, batches
from etl.redelivery import Aside, Prior
from etl.row_digest import digests
from etl.sources import Source, file_sha256, open_source
from rulem_db import db
from rulem_db.catalogue.layers import BY_NAME, Layer
from rulem_db.locks import reporting_wait

MAX_AREA_CHANGE = 0.001  # a repair may change a polygon's area by at most 0.1 percent
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


def scope_of(layer: Layer, patch: bool) -> str:
    """Which current features a delivery replaces: the layer catalogue's ingest scope, or none
    for attribute-only changes to a layer with geometry (a patch)."""
    return "none" if patch else layer.ingest_scope


def ingest(url: str, layer: str, path: Path | str, *, crs: str | None = None,
           mapping: Path | str | None = None, permit: str | None = None,
           study_area: Path | str | None = None, skip_bad_features: bool = False,
           delineation: str | None = None, records: bool = False,
           source_layer: str | None = None, plan_area: str | None = None,
           progress: Progress | None = None) -> IngestResult:
    """Ingest the file at path into layer (see the module doc); raises IngestRefused with every
    problem, or IngestError, leaving the database as it was. plan_area is a code; without one
    the file goes to the database's only plan area, and is refused if it holds none or several."""
    return _Ingest(url, layer, Path(path), crs=crs,
                   mapping=None if mapping is None else Path(mapping), permit=permit,
                   study_area=None if study_area is None else Path(study_area),
                   skip=skip_bad_features, delineation=delineation, records=records,
                   source_layer=source_layer, plan_area=plan_area,
                   progress=progress or Silent()).run()


class _Ingest:
    """One ingest; its steps are methods so each stays short."""

    def __init__(self, url: str, layer: str, path: Path, *, crs: str | None,
                 mapping: Path | None, permit: str | None, study_area: Path | None, skip: bool,
                 delineation: str | None, records: bool, source_layer: str | None,
                 plan_area: str | None, progress: Progress) -> None:
        self.url, self.path, self.crs_given, self.permit = url, path, crs, permit
        self.study_area, self.skip, self.records = study_area, skip, records
        self.delineation_no, self.plan_area, self.progress = delineation, plan_area, progress
        self.layer = layer_of(layer)
        self.file = path.name
        # `ingest delineation FILE`: FILE holds one delineation's wetlands (docs/ingest.md,
        # "Delineations").
        self.mode = "delineation" if self.layer.name == "delineation" and not records else "layer"
        self.target = BY_NAME["wetland"] if self.mode == "delineation" else self.layer
        self._check_options()
        self.mapping: Mapping = load_mapping(mapping)
        if self.mapping.layer and self.mapping.layer not in (self.layer.name, self.target.name):
            raise refuse(self.mapping.path.name if self.mapping.path else self.file,
                         f"the mapping file is for layer {self.mapping.layer}, not "
                         f"{self.layer.name}")
        self.source_layer = source_layer or self.mapping.source_layer
        self.notes: list[str] = []
        self.patch = False  # a file without geometry for a layer with geometry
        self.permit_field: str | None = None  # the file's own permit field, when --permit
        self.unmapped: list[str] = []
        self.likely: dict[str, str] = {}

    def _check_options(self) -> None:
        names = {c.name for c in self.target.columns}
        if self.permit and "permit_id" not in names and self.mode != "delineation":
            raise refuse(self.file, f"--permit was given, but layer {self.layer.name} has no "
                         "permit")
        if self.study_area and self.mode != "delineation":
            raise refuse(self.file, "--study-area goes with `ingest delineation FILE` only")
        if self.delineation_no and self.mode != "delineation" and self.target.name != "wetland":
            raise refuse(self.file, "--delineation goes with the delineation and wetland layers")

    # --- the steps -----------------------------------------------------------------------
    def run(self) -> IngestResult:
        self.progress.stage("opening")
        src = open_source(self.path, source_layer=self.source_layer, layer_name=self.target.name,
                          wants_geometry=self.target.geometry is not None,
                          geometry_field=self.mapping.geometry)
        self.notes += list(src.notes)
        if self.mode == "delineation" and src.driver == "CSV" and not src.has_geometry:
            # a CSV of delineation records: status changes, TEP findings (no geometry)
            self.mode, self.target, self.records = "layer", self.layer, True
            src = open_source(self.path, wants_geometry=True, geometry_field=self.mapping.geometry)
        if src.feature_count == 0:
            raise refuse(self.file, "holds no features, so there is nothing to load (an empty "
                         "delivery never retires features); check the export")
        staging.check_field_count(self.file, len(src.fields))
        if src.has_geometry:
            src = self._declared_crs(src)
        nul.check_source(src)
        plans = self._plan(src)
        sha = file_sha256(self.path)
        eng = db.engine(self.url)
        try:
            with eng.connect() as conn:
                try:
                    with conn.begin():
                        result = self._in_transaction(conn, src, plans, sha)
                except sa.exc.DBAPIError as exc:
                    if not _refusal_from_database(exc):
                        raise  # a bug or a lost connection, not a property of the file
                    raise self._database_error(exc) from None
                except IngestRefused as exc:
                    exc.notice = unmapped_line(self.file, self.unmapped, self.likely)
                    raise
            result.unmapped, result.likely = self.unmapped, self.likely
            return result
        finally:
            self.progress.close()
            eng.dispose()

    def _declared_crs(self, src: Source) -> Source:
        """A file declaring a CRS that PROJ does not know is refused, unless --crs names the
        CRS (then the declaration is set aside, and that is noted): it must not be read as
        WGS 84, or as a file without a CRS."""
        unknown = crsmod.unknown_declared(src)
        if unknown is None:
            return src
        if self.crs_given is None:
            raise refuse(src.name, f"declares the CRS {unknown}, which PROJ does not know; name "
                         "the file's CRS with --crs (e.g. --crs EPSG:26915)")
        self.notes.append(f"{src.name} declares the CRS {unknown}, which PROJ does not know; "
                          f"--crs {self.crs_given} was used")
        return dataclasses.replace(src, crs=None)

    def _plan(self, src: Source) -> list[ColumnPlan]:
        plans = plan_columns(self.target, src.fields, self.mapping, self.file)
        by = {p.col.name: p for p in plans}
        for p in plans:
            if p.field:
                self.notes.append(f"{p.col.name} from field {p.field} ({p.how})")
        if self.mode == "delineation":
            by["delineation_id"].field = None
            by["delineation_id"].const_id = -1  # set once the delineation is opened
        elif self.delineation_no and "delineation_id" in by:
            by["delineation_id"].field, by["delineation_id"].const = None, self.delineation_no
        if self.permit and "permit_id" in by:
            if by["permit_id"].field:
                # checked after staging: every value must be the same permit, or empty
                self.permit_field = by["permit_id"].field
                self.notes.append(f"--permit {self.permit} used instead of field "
                                  f"{by['permit_id'].field}")
            by["permit_id"].field, by["permit_id"].const = None, self.permit
        if "pin_normalized" in by and not by["pin_normalized"].delivered:
            by["pin_normalized"].derive_from = "pin"
        patch = self.target.geometry is not None and not src.has_geometry
        if self.layer.name == "delineation" and self.mode == "layer" and not patch:
            for name, value in (("file_name", self.file), ("file_sha256", None)):
                if not by[name].delivered:
                    by[name].const = value if value else file_sha256(self.path)
        missing = [p.col.name for p in plans if p.col.required and not p.delivered]
        self.unmapped, self.likely = unmapped_fields(
            self.target, src.fields, plans, self.mapping,
            used=(key_field(src.fields, self.mapping), src.geometry_column, self.permit_field))
        if self.target.geometry and not src.has_geometry and self.target.name != "delineation":
            hint = ("; name a CSV's WKT column in a mapping file (geometry = \"...\")"
                    if src.driver == "CSV" else "")
            raise refuse(self.file, f"has no geometry, and layer {self.target.name} needs "
                         f"{geometry_noun(self.target.geometry)}{hint}")
        if missing:
            have = ", ".join(src.fields) or "no fields"
            likely = next((f for f, c in self.likely.items() if c == missing[0]), "<field>")
            raise refuse(self.file, f"layer {self.target.name} needs {', '.join(missing)}, but "
                         f"the file has no field for {'it' if len(missing) == 1 else 'them'} "
                         f"(its fields are: {have}); rename the field, or map it in a mapping "
                         f"file ([fields] {missing[0]} = {json.dumps(likely)})")
        self.patch = patch
        line = unmapped_line(self.file, self.unmapped, self.likely)
        if line:
            self.notes.append(line)
        return plans

    def _in_transaction(self, conn: sa.Connection, src: Source, plans: list[ColumnPlan],
                        sha: str) -> IngestResult:
        work_srid = conn.execute(sa.text("SELECT ops.working_srid()")).scalar_one()
        try:
            plan_area_id = db.plan_area(conn, self.plan_area).plan_area_id
        except db.PlanAreaUnclear as exc:
            raise refuse(self.file, str(exc)) from None
        for name in sorted({self.layer.name, self.target.name}):
            with reporting_wait(conn, f"the ingest lock of layer {name} (another ingest of it)"):
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('rulem-ingest'), "
                                     "hashtext(:l))"), {"l": name})
        options = self._options(sha)
        dup = self._duplicate(conn, plan_area_id, sha, options)
        if dup is not None:
            return dup
        if src.has_geometry:
            crsmod.require(self.file, src.crs, self.crs_given)
        batch_id = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, file_sha256, file_size, "
            "options) VALUES (:pa, :layer, :name, :sha, :size, CAST(:options AS jsonb)) "
            "RETURNING batch_id"),
            {"pa": plan_area_id, "layer": self.layer.name, "name": self.file, "sha": sha,
             "size": _size(self.path), "options": json.dumps(options)}).scalar_one()
        conn.execute(sa.text("SELECT set_config('rulem.batch_id', :b, true)"),
                     {"b": str(batch_id)})
        candidate = self._hash_candidate(src, plans)
        prior = Prior()
        if candidate:
            self.progress.stage("fetching row hashes")
            prior = Prior.fetch(conn, self.target.name, plan_area_id)
        fields, rows, log, aside = self._stage(conn, src, batch_id, prior, candidate)
        if self.permit_field is not None:
            self._permit_conflict(conn, batch_id, fields)
        source_crs = None
        if src.has_geometry:
            source_crs = self._source_crs(conn, src, work_srid, self.crs_given,
                                          f"staging.b{batch_id}")
            conn.execute(sa.text("UPDATE ops.batch SET source_crs = :c WHERE batch_id = :b"),
                         {"c": source_crs.label, "b": batch_id})
        for w in log.warnings:
            self._note(conn, batch_id, "warning", None, f"GDAL: {w}")
        opened = None
        if self.mode == "delineation":
            opened = conn.execute(sa.text("SELECT ops.ingest_delineation_open(:b, :pa, :n)"),
                                  {"b": batch_id, "pa": plan_area_id,
                                   "n": self.delineation_no}).scalar_one()
            next(p for p in plans if p.col.name == "delineation_id").const_id = \
                opened["delineation_id"]
        spec = self._spec(batch_id, plan_area_id, work_srid, source_crs, fields, plans)
        hashed = self._hashed(spec)
        set_aside = 0
        if hashed != candidate or aside.rows:
            context = bytes(conn.execute(sa.text(
                "SELECT decode(ops.ingest_row_context(CAST(:s AS jsonb)), 'hex')"),
                {"s": json.dumps(spec)}).scalar_one())
            if hashed != candidate or not aside.all_under(context):
                # rows were set aside under other settings, plan boundary or tolerance (or
                # the file is not one whose rows can be): read and stage it whole
                conn.execute(sa.text("SELECT ops.ingest_cleanup(:b)"), {"b": batch_id})
                fields, rows, log, aside = self._stage(conn, src, batch_id, Prior(), hashed)
                if src.has_geometry:
                    source_crs = self._source_crs(conn, src, work_srid, self.crs_given,
                                                  f"staging.b{batch_id}")
                spec = self._spec(batch_id, plan_area_id, work_srid, source_crs, fields, plans)
        if hashed:
            self.progress.stage("comparing")
            set_aside = aside.copy_to(conn, batch_id)
            if set_aside:
                self.notes.append(f"{set_aside:,} features delivered exactly as before (the "
                                  "rows behind their current versions) were set aside "
                                  "unchanged, without validation")
        self.progress.stage("validating")
        summary = conn.execute(sa.text("SELECT ops.ingest_prepare(CAST(:s AS jsonb))"),
                               {"s": json.dumps(spec)}).scalar_one()
        if summary["errors"] and not self.skip:
            raise self._refusal(conn, batch_id)
        if summary["bad_rows"] >= rows:
            raise self._refusal(conn, batch_id, hint="no feature of the file could be loaded")
        self.progress.stage("merging")
        # rows set aside were not seen by apply: it must close nothing (sql/063 closes)
        merge = {**spec, "scope": "none"} if set_aside else spec
        counts = conn.execute(sa.text("SELECT ops.ingest_apply(CAST(:s AS jsonb))"),
                              {"s": json.dumps(merge)}).scalar_one()
        if hashed:
            kept = conn.execute(sa.text(
                "SELECT ops.ingest_keep_hashes(CAST(:s AS jsonb), :n)"),
                {"s": json.dumps(spec), "n": set_aside}).scalar_one()
            if set_aside:
                counts = {**counts, "unchanged": counts["unchanged"] + set_aside,
                          "closed": kept["closed"]}
        record = None
        if self.mode == "delineation":
            record = self._delineation_record(conn, batch_id, plan_area_id, work_srid, opened,
                                              sha)
        for text in self.notes + ([source_crs.note] if source_crs and source_crs.note else []):
            self._note(conn, batch_id, "info", None, text)
        return self._finish(conn, batch_id, rows, counts, record)

    def _hash_candidate(self, src: Source, plans: list[ColumnPlan]) -> bool:
        """_hashed, known before the file is staged (from the file's fields and the column
        plans rather than the spec): whether the reader makes each row's digest."""
        return (self.mode == "layer" and not self.records
                and scope_of(self.target, self.patch) == "layer"
                and self.target.geometry is not None and src.has_geometry
                and (self.target.key != "source_fid"
                     or key_field(tuple(src.fields), self.mapping) is not None)
                and self.permit is None and self.delineation_no is None
                and not any(p.col.ref_layer for p in plans))

    def _hashed(self, spec: dict[str, Any]) -> bool:
        """Whether this file's rows are compared with the rows behind the current versions
        before validation (sql/063): a layer-wide delivery with geometry, keyed by a field or
        a natural key, whose columns reference no other layer. There a row's outcome depends
        on the row and the settings alone, so a row delivered exactly as before is unchanged;
        elsewhere (a permit's or a delineation's features, references to check, keys that are
        positions in the file) every row is prepared."""
        return (self.mode == "layer" and not self.records and spec["scope"] == "layer"
                and bool(spec["with_geometry"]) and "fid" not in spec["key"]
                and self.permit is None and self.delineation_no is None
                and not any(c["ref_layer"] for c in spec["columns"]))

    def _options(self, sha: str) -> dict[str, Any]:
        """The options of this ingest; the fingerprint says when two ingests are the same."""
        mapping_sha = hashlib.sha256(self.mapping.text.encode()).hexdigest() \
            if self.mapping.path else None
        study_sha = file_sha256(self.study_area) if self.study_area else None
        same = {"mode": self.mode, "crs": self.crs_given, "mapping_sha256": mapping_sha,
                "permit": self.permit, "delineation": self.delineation_no,
                "source_layer": self.source_layer, "study_area_sha256": study_sha}
        scope = f"{self.mode}|{self.permit or ''}|{self.delineation_no or ''}"
        if self.mode == "delineation" and not self.delineation_no:
            scope += f"|{sha}"  # a new delineation each time: the file itself is the scope
        return {**same, "mapping": self.mapping.path.name if self.mapping.path else None,
                "study_area": self.study_area.name if self.study_area else None,
                "skip_bad_features": self.skip, "scope_key": scope,
                "fingerprint": hashlib.sha256(json.dumps(same, sort_keys=True).encode())
                .hexdigest()}

    def _duplicate(self, conn: sa.Connection, plan_area_id: int, sha: str,
                   options: dict[str, Any]) -> IngestResult | None:
        """The same file as the last one loaded for the same scope: a no-op that says so."""
        last = conn.execute(sa.text(
            "SELECT batch_id, file_sha256, options ->> 'fingerprint' AS fp, started_at "
            "FROM ops.batch WHERE plan_area_id = :pa AND layer = :layer AND status = 'loaded' "
            "AND options ->> 'scope_key' = :scope ORDER BY batch_id DESC LIMIT 1"),
            {"pa": plan_area_id, "layer": self.layer.name,
             "scope": options["scope_key"]}).one_or_none()
        if last is None or last.file_sha256 != sha or last.fp != options["fingerprint"]:
            return None
        message = (f"{self.file} is the same file (SHA-256 {sha[:12]}...) as batch "
                   f"{last.batch_id}, loaded {last.started_at:%Y-%m-%d %H:%M}: nothing changed")
        batch_id = conn.execute(sa.text(
            "INSERT INTO ops.batch (plan_area_id, layer, file_name, file_sha256, file_size, "
            "status, options, message, finished_at) VALUES (:pa, :layer, :name, :sha, :size, "
            "'duplicate', CAST(:options AS jsonb), :message, clock_timestamp()) "
            "RETURNING batch_id"),
            {"pa": plan_area_id, "layer": self.layer.name, "name": self.file, "sha": sha,
             "size": _size(self.path), "options": json.dumps(options),
             "message": message}).scalar_one()
        return IngestResult(batch_id, "duplicate", self.layer.name, self.file, message)

    def _source_crs(self, conn: sa.Connection, src: Source, work_srid: int,
                    given: str | None, table: str) -> crsmod.SourceCRS:
        """The file's CRS, checked against the extent of what was staged (so every format is
        checked the same way, from the geometries' bounding boxes)."""
        def known(code: int) -> bool:
            return conn.execute(sa.text(
                "SELECT EXISTS (SELECT 1 FROM spatial_ref_sys WHERE srid = :s "
                "AND auth_name = 'EPSG' AND auth_srid = :s)"), {"s": code}).scalar_one()

        extent = conn.execute(sa.text(
            f"SELECT ST_XMin(e), ST_YMin(e), ST_XMax(e), ST_YMax(e) FROM "
            f"(SELECT ST_Extent(_geom) AS e FROM {table}) x")).one()
        bounds = None if extent[0] is None else tuple(float(v) for v in extent)
        return crsmod.resolve(src.name, src.crs, given, work_srid, known, bounds)

    def _stage(self, conn: sa.Connection, src: Source, batch_id: int, prior: Prior,
               hashed: bool) -> tuple[list[staging.StagedField], int, ReadLog, Aside]:
        """Read the file and COPY it into staging.b<batch>: a reader thread reads and converts
        the next batch while the database parses this one (etl.reading.ahead). With hashed,
        each row's digest is made as it is read, and the rows delivered as the prior rows
        (etl.redelivery) are set aside there instead of staged. Returns the rows read."""
        self.progress.stage("reading")
        table = f"staging.b{batch_id}"
        log = ReadLog()
        aside = Aside(prior=prior)
        cur = conn.connection.dbapi_connection.cursor()
        fields: list[staging.StagedField] | None = None
        rows = 0
        try:
            for batch_fields, n, text in ahead(self._csv_batches(src, log,
                                                                 aside if hashed else None)):
                if fields is None:
                    fields = batch_fields
                    staging.create_table(cur, table, fields)
                staging.copy_csv(cur, table, fields, text)
                del text
                release_free_memory()
                rows += n
                self.progress.rows(rows, src.feature_count)
        finally:
            cur.close()
        if fields is None or rows == 0:
            raise refuse(self.file, "holds no features that GDAL could read; check the export")
        return fields, rows, log, aside

    def _csv_batches(self, src: Source, log: ReadLog, aside: Aside | None) -> Iterator[
            tuple[list[staging.StagedField], int, io.BytesIO]]:
        """The file's batches as COPY text, with the staging columns (from the first batch)
        and the number of rows read; with aside, only the rows not set aside."""
        fields: list[staging.StagedField] | None = None
        first = 0
        found = nul.Found(src.name)
        for batch in batches(src, read_geometry=self.target.geometry is not None, log=log):
            if src.reader == "parquet":  # GDAL's text can hold no NUL (etl.nul)
                nul.check_batch(found, batch)
                found.refuse()
            if fields is None:
                fields = staging.plan_fields(batch.schema)
            n = batch.num_rows
            if aside is None:
                yield fields, n, staging.csv_rows(fields, batch, first)
            else:
                keep = aside.split(digests(fields, batch), first)
                numbers = np.flatnonzero(keep) + first
                yield fields, n, staging.csv_rows(fields, batch.filter(pa.array(keep)), first,
                                                  numbers)
            first += n

    def _spec(self, batch_id: int, plan_area_id: int, work_srid: int,
              source_crs: crsmod.SourceCRS | None, fields: list[staging.StagedField],
              plans: list[ColumnPlan]) -> dict[str, Any]:
        column_of = {f.name: f.column for f in fields}
        target = self.target
        owner = target.owner
        key_name = key_field(tuple(column_of), self.mapping)
        if target.key != "source_fid":
            key: dict[str, Any] = {"natural": target.key}
        elif key_name is not None:
            key = {"col": column_of[key_name], "field": key_name}
        else:
            key = {"fid": True}
            self.notes.append("no feature_key field: each feature's key is its feature id in "
                              "the file; deliver a feature_key field for keys that survive "
                              "re-export")
        delivered = {p.col.name for p in plans if p.delivered}
        columns = []
        for p in plans:
            col = p.col
            prefix = None
            if col.ref_layer and owner == "permit_id" \
                    and BY_NAME[col.ref_layer].owner == "permit_id":
                prefix = "permit_id"
            columns.append({
                "name": col.name, "kind": col.kind, "required": col.required,
                "src": column_of.get(p.field) if p.field else None, "field": p.field,
                "const": p.const, "const_id": p.const_id, "derive_from": p.derive_from,
                "values": p.values, "code_map": p.code_map(),
                "codes": list(col.codes) if col.codes else None, "ref_layer": col.ref_layer,
                "ref_prefix": prefix, "references": col.references})
        return {
            "batch_id": batch_id, "layer": target.name, "plan_area_id": plan_area_id,
            "geometry": target.geometry,
            "with_geometry": target.geometry is not None and source_crs is not None,
            "source_srid": source_crs.srid if source_crs else None,
            "source_proj": source_crs.proj if source_crs else None, "work_srid": work_srid,
            "max_area_change": MAX_AREA_CHANGE,
            "fields": [{"name": f.name, "col": f.column} for f in fields],
            "key": key, "owner": owner, "columns": columns,
            "checks": _checks(target, delivered) + rules.checks(
                target.name, {p.col.name: p.field for p in plans if p.delivered},
                plan_area_id, self.likely),
            "scope": scope_of(target, self.patch),
            "outside": target.outside_plan_area,
            "skip_bad": self.skip,
        }

    def _permit_conflict(self, conn: sa.Connection, batch_id: int,
                         fields: list[staging.StagedField]) -> None:
        """--permit NO assigns every feature to permit NO: a file whose features carry their
        own, different permit numbers is refused (the first such feature named), since the
        option would silently move them to NO. The same number, or none, is fine."""
        column = {f.name: f.column for f in fields}
        value = f"btrim(s.{column[self.permit_field]}::text)"
        key = key_field(tuple(column), self.mapping)
        key_sql = f"nullif(btrim(s.{column[key]}::text), '')" if key else "NULL::text"
        found = conn.execute(sa.text(
            f"SELECT s._fid AS fid, {key_sql} AS key, {value} AS v, count(*) OVER () AS n "
            f"FROM staging.b{batch_id} s WHERE {value} <> '' AND {value} <> :p "
            "ORDER BY s._row LIMIT 1"), {"p": self.permit}).one_or_none()
        if found is None:
            return
        more = found.n - 1
        also = f" (and {more} more feature{'s' * (more > 1)})" if more > 0 else ""
        raise IngestRefused(self.file, [Problem(
            self.file, f"carries permit {found.v} (field {self.permit_field}), but --permit "
            f"{self.permit} assigns every feature to permit {self.permit}{also}; load the file "
            f"without --permit, or deliver one permit's features per file",
            feature=found.fid, key=found.key, field="permit_id")])

    def _delineation_record(self, conn: sa.Connection, batch_id: int, plan_area_id: int,
                            work_srid: int, opened: dict[str, Any], sha: str) -> dict[str, Any]:
        attrs = {k: v for k, v in self.mapping.delineation.items() if v is not None}
        attrs.update({"file_name": self.file, "file_sha256": sha})
        if self.permit:
            attrs["permit"] = self.permit
        spec: dict[str, Any] = {"batch_id": batch_id, "plan_area_id": plan_area_id,
                                "delineation_id": opened["delineation_id"],
                                "delineation_no": opened["delineation_no"],
                                "attributes": attrs, "work_srid": work_srid,
                                "max_area_change": MAX_AREA_CHANGE}
        if self.study_area is not None:
            src = self._declared_crs(open_source(self.study_area, wants_geometry=True))
            if not src.has_geometry or src.feature_count == 0:
                raise refuse(src.name, "the study area file holds no polygons; deliver the "
                             "study area as polygons")
            given = self.crs_given if src.crs is None else None
            crsmod.require(src.name, src.crs, given)
            table = f"staging.b{batch_id}_study"
            cur = conn.connection.dbapi_connection.cursor()
            try:
                staging.create_table(cur, table, [])
                first = 0
                for batch in batches(src, read_geometry=True, log=ReadLog()):
                    staging.copy_batch(cur, table, [], batch.select(["_fid", "_geom"]), first)
                    first += batch.num_rows
            finally:
                cur.close()
            study_crs = self._source_crs(conn, src, work_srid, given, table)
            spec.update({"study_srid": study_crs.srid, "study_proj": study_crs.proj})
        self.progress.stage("recording the delineation")
        return conn.execute(sa.text("SELECT ops.ingest_delineation_record(CAST(:s AS jsonb))"),
                            {"s": json.dumps(spec)}).scalar_one()

    def _refusal(self, conn: sa.Connection, batch_id: int,
                 hint: str | None = None) -> IngestRefused:
        rows = conn.execute(sa.text(
            "SELECT source_fid, detail ->> 'key' AS key, field, message FROM ops.batch_note "
            "WHERE batch_id = :b AND kind IN ('error', 'skipped') ORDER BY batch_note_id "
            "LIMIT :n"), {"b": batch_id, "n": MAX_PROBLEMS_SHOWN}).all()
        total = conn.execute(sa.text(
            "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b "
            "AND kind IN ('error', 'skipped')"), {"b": batch_id}).scalar_one()
        problems = [Problem(self.file, r.message, feature=r.source_fid, key=r.key,
                            field=r.field) for r in rows]
        if hint is None and not self.skip:
            hint = "nothing was loaded (--skip-bad-features loads the rest)"
        return IngestRefused(self.file, problems, total, hint)

    def _finish(self, conn: sa.Connection, batch_id: int, rows: int, counts: dict[str, int],
                record: dict[str, Any] | None) -> IngestResult:
        into = self.layer.name if self.mode == "layer" else \
            f"delineation {record['delineation_no']} (wetland)"
        warnings = conn.execute(sa.text(
            "SELECT count(*) FROM ops.batch_note WHERE batch_id = :b AND kind = 'warning'"),
            {"b": batch_id}).scalar_one()
        message = (f"{self.file}: {rows:,} features into {into}: {counts['inserted']:,} new, "
                   f"{counts['changed']:,} changed, {counts['closed']:,} closed, "
                   f"{counts['unchanged']:,} unchanged, {counts['skipped']:,} skipped, "
                   f"{counts['repaired']:,} repaired, {warnings:,} warnings")
        conn.execute(sa.text(
            "UPDATE ops.batch SET status = 'loaded', feature_count = :n, message = :m, "
            "finished_at = clock_timestamp() WHERE batch_id = :b"),
            {"n": rows, "m": message, "b": batch_id})
        conn.execute(sa.text("SELECT ops.ingest_cleanup(:b)"), {"b": batch_id})
        notes = [Problem(self.file, r.message, feature=r.source_fid, key=r.key, field=r.field,
                         kind=r.kind)
                 for r in conn.execute(sa.text(
                     "SELECT source_fid, detail ->> 'key' AS key, field, message, kind "
                     "FROM ops.batch_note WHERE batch_id = :b AND kind <> 'info' "
                     "ORDER BY batch_note_id LIMIT :n"), {"b": batch_id, "n": MAX_PROBLEMS_SHOWN})]
        self.progress.stage("committing")
        return IngestResult(
            batch_id, "loaded", self.layer.name, self.file, message, features=rows,
            inserted=counts["inserted"], changed=counts["changed"], closed=counts["closed"],
            unchanged=counts["unchanged"], skipped=counts["skipped"],
            repaired=counts["repaired"], warnings=warnings,
            delineation_no=record["delineation_no"] if record else None, notes=notes)

    def _note(self, conn: sa.Connection, batch_id: int, kind: str, field_: str | None,
              message: str) -> None:
        conn.execute(sa.text("INSERT INTO ops.batch_note (batch_id, kind, field, message) "
                             "VALUES (:b, :k, :f, :m)"),
                     {"b": batch_id, "k": kind, "f": field_, "m": message})

    def _database_error(self, exc: sa.exc.DBAPIError) -> IngestError:
        """A refusal raised inside the database, as one line naming the file."""
        orig = getattr(exc, "orig", None)
        text = str(getattr(orig, "pgerror", None) or orig or exc)
        first = " ".join(text.strip().splitlines()[0].split()) if text.strip() else str(exc)
        first = re.sub(r"^ERROR:\s*", "", first)
        if "transform" in first.lower():
            return IngestRefused(self.file, [Problem(
                self.file, f"its coordinates could not be transformed to the working CRS "
                f"(PostGIS: {first}); check the CRS it declares, or give the right one with "
                "--crs", field="geometry")])
        return IngestRefused(self.file, [Problem(self.file, first)])


def _refusal_from_database(exc: sa.exc.DBAPIError) -> bool:
    """Whether the database refused the file's content (a data, integrity or rule error
    raised by a constraint or trigger) rather than failing (a bug, a lost connection)."""
    code = getattr(getattr(exc, "orig", None), "pgcode", None) or ""
    return code[:2] in ("22", "23", "P0") or (code == "XX000" and "transform" in str(exc))


def _checks(layer: Layer, delivered: set[str]) -> list[dict[str, str]]:
    """The layer's CHECK rules whose columns the file delivers: checked per feature up front,
    so a violation is a line naming the feature, not a failed transaction."""
    names = {c.name for c in layer.columns}
    out = []
    rules = [(f"{c.name}_check", c.check) for c in layer.columns if c.check]
    for name, expr in rules + list(layer.extra_checks):
        used = set(re.findall(r"[a-z_][a-z0-9_]*", expr)) & names
        if used <= delivered:
            out.append({"name": name, "expr": expr})
    return out


def geometry_noun(geometry: str) -> str:
    """A geometry type in words, as problems say it."""
    return {"MULTIPOLYGON": "polygons", "MULTILINESTRING": "lines", "POINT": "points"}.get(
        geometry, "geometry")


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size
