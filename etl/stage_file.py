"""Reading the delivered file: opening it, refusing what is wrong with the whole file, and
writing its features through COPY into staging.b<batch> (and a delineation's study area into
staging.b<batch>_study).

Why one module: it is all that touches the file itself (etl.sources opens it, etl.reading reads
it in a child process, etl.staging makes COPY text of each batch); what comes after reads only
the staging tables, the column plans and the spec.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import sqlalchemy as sa

from etl import crs as crsmod
from etl import nul, staging
from etl.memory import release_free_memory
from etl.problems import refuse
from etl.progress import Progress
from etl.reading import ReadLog, ahead, batches
from etl.redelivery import Aside, Prior, create_hash_table
from etl.request import Request
from etl.row_digest import digests
from etl.sources import Source, open_source


@dataclasses.dataclass
class Staged:
    """A file staged in staging.b<batch>: its fields' columns, the rows read, GDAL's warnings,
    and the rows set aside as delivered before (etl.redelivery)."""

    fields: list[staging.StagedField]
    rows: int
    log: ReadLog
    aside: Aside


def open_file(req: Request, notes: list[str]) -> tuple[Request, Source]:
    """The file opened for req, or refused before the database is touched: no features, too
    many fields, a CRS PROJ does not know. A delineation CSV without geometry turns the
    request into one of delineation records. (NUL characters are the caller's next check,
    etl.nul: it reads every value.)"""
    src = open_source(req.path, source_layer=req.source_layer, layer_name=req.target.name,
                      wants_geometry=req.target.geometry is not None,
                      geometry_field=req.mapping.geometry)
    notes += list(src.notes)
    if req.mode == "delineation" and src.driver == "CSV" and not src.has_geometry:
        # a CSV of delineation records: status changes, TEP findings (no geometry)
        req = req.as_records()
        src = open_source(req.path, wants_geometry=True, geometry_field=req.mapping.geometry)
    if src.feature_count == 0:
        raise refuse(req.file, "holds no features, so there is nothing to load (an empty "
                     "delivery never retires features); check the export")
    staging.check_field_count(req.file, len(src.fields))
    if src.has_geometry:
        src = declared_crs(src, req.crs_given, notes)
    return req, src


def declared_crs(src: Source, crs_given: str | None, notes: list[str]) -> Source:
    """A file declaring a CRS that PROJ does not know is refused, unless --crs names the
    CRS (then the declaration is set aside, and that is noted): it must not be read as
    WGS 84, or as a file without a CRS."""
    unknown = crsmod.unknown_declared(src)
    if unknown is None:
        return src
    if crs_given is None:
        raise refuse(src.name, f"declares the CRS {unknown}, which PROJ does not know; name "
                     "the file's CRS with --crs (e.g. --crs EPSG:26915)")
    notes.append(f"{src.name} declares the CRS {unknown}, which PROJ does not know; "
                 f"--crs {crs_given} was used")
    return dataclasses.replace(src, crs=None)


def stage(conn: sa.Connection, req: Request, src: Source, batch_id: int, prior: Prior,
          hashed: bool, progress: Progress) -> Staged:
    """Read the file and COPY it into staging.b<batch>: a reader thread reads and converts
    the next batch while the database parses this one (etl.reading.ahead). With hashed,
    each row's digest is made as it is read, and the rows delivered as the prior rows
    (etl.redelivery) are set aside there instead of staged."""
    progress.stage("reading")
    table = f"staging.b{batch_id}"
    log = ReadLog()
    aside = Aside(prior=prior)
    cur = conn.connection.dbapi_connection.cursor()
    fields: list[staging.StagedField] | None = None
    rows = 0
    try:
        read_geometry = req.target.geometry is not None
        hash_table = None
        for batch_fields, n, text, hashes in ahead(_csv_batches(
                src, log, aside if hashed else None, read_geometry)):
            if fields is None:
                fields = batch_fields
                staging.create_table(cur, table, fields)
            staging.copy_csv(cur, table, fields, text)
            if hashes is not None:  # the staged rows' digests, with their rows
                hash_table = hash_table or create_hash_table(cur, batch_id)
                cur.copy_expert(f"COPY {hash_table} FROM STDIN", hashes, size=1 << 20)
            del text, hashes
            release_free_memory()
            rows += n
            progress.rows(rows, src.feature_count)
    finally:
        cur.close()
    if fields is None or rows == 0:
        raise refuse(req.file, "holds no features that GDAL could read; check the export")
    return Staged(fields, rows, log, aside)


def _csv_batches(src: Source, log: ReadLog, aside: Aside | None, read_geometry: bool
                 ) -> Iterator[tuple[list[staging.StagedField], int, io.BytesIO,
                                     io.BytesIO | None]]:
    """The file's batches as COPY text, with the staging columns (from the first batch)
    and the number of rows read; with aside, only the rows not set aside, and the COPY text
    of their digests (decided as each batch is read, so that only the staged rows'
    geometries are checked against the limits: etl.reading.batches)."""
    fields: list[staging.StagedField] | None = None
    found = nul.Found(src.name)
    split: _Split | None = None if aside is None else _Split(aside)
    first = 0
    for batch in batches(src, read_geometry=read_geometry, log=log,
                         staged=None if split is None else split):
        if src.reader == "parquet":  # GDAL's text can hold no NUL (etl.nul)
            nul.check_batch(found, batch)
            found.refuse()
        if fields is None:
            fields = staging.plan_fields(batch.schema)
        n = batch.num_rows
        if split is None:
            yield fields, n, staging.csv_rows(fields, batch, first), None
        else:
            keep, hashes = split.last
            numbers = np.flatnonzero(keep) + first
            yield fields, n, staging.csv_rows(fields, batch.filter(pa.array(keep)), first,
                                              numbers), hashes
        first += n


class _Split:
    """Decides each batch as it is read (etl.redelivery.Aside.split) and keeps the batch's
    decision (the mask of the rows to stage, their digests' COPY text) for the batch's COPY."""

    def __init__(self, aside: Aside) -> None:
        self.aside = aside
        self.fields: list[staging.StagedField] | None = None
        self.last: tuple[np.ndarray, io.BytesIO] = (np.zeros(0, dtype=bool), io.BytesIO())

    def __call__(self, batch: pa.RecordBatch, first_row: int) -> np.ndarray:
        if self.fields is None:
            self.fields = staging.plan_fields(batch.schema)
        self.last = self.aside.split(digests(self.fields, batch), first_row)
        return self.last[0]


def stage_study_area(conn: sa.Connection, req: Request, batch_id: int, work_srid: int,
                     notes: list[str]) -> crsmod.SourceCRS:
    """The delivered study area (--study-area FILE) staged in staging.b<batch>_study, or
    refused when it holds no polygons or has no CRS; returns its CRS."""
    assert req.study_area is not None
    src = declared_crs(open_source(req.study_area, wants_geometry=True), req.crs_given, notes)
    if not src.has_geometry or src.feature_count == 0:
        raise refuse(src.name, "the study area file holds no polygons; deliver the "
                     "study area as polygons")
    given = req.crs_given if src.crs is None else None
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
    return source_crs(conn, src, work_srid, given, table)


def source_crs(conn: sa.Connection, src: Source, work_srid: int, given: str | None,
               table: str) -> crsmod.SourceCRS:
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
