"""Read a source in Arrow record batches of bounded size, geometry as WKB exactly as stored.

Why Arrow batches: pyogrio hands GDAL's columnar stream to Python without a Python object per
feature, so reading costs little next to the database work, and memory stays bounded by the
batch size whatever the file's size. Nothing is interpreted here: the CRS, curves, Z/M and
validity are the merge's business (sql/061), so the database sees what the file holds.

Every batch comes out with the same leading columns: `_fid` (the file's feature id, as text)
and `_geom` (WKB, or null), followed by the file's fields under their own names.

GDAL reads in a child process (etl.isolation, etl.gdal_read) that is killed when it gives no
batch for the stall limit (etl.limits); the batches come back as Arrow IPC, and the limits'
checks (Guard) run here, on what came back.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import shapely

from etl import gdal_read, isolation
from etl.gdal_read import ReadLog
from etl.limits import Limits, env_name
from etl.problems import IngestRefused, Problem, refuse
from etl.sources import Source

BATCH_SIZE = 25_000
MAX_PROBLEMS = 200  # problems kept for the refusal (the rest are counted)
AHEAD = 2  # batches read ahead of the database (memory stays bounded by AHEAD + 2 batches)
T = TypeVar("T")


# Which rows of a batch (numbered from first_row in the file) its reader will stage: a mask.
Staged = Callable[[pa.RecordBatch, int], np.ndarray]


def batches(src: Source, read_geometry: bool, log: ReadLog, batch_size: int = BATCH_SIZE,
            limits: Limits | None = None, staged: Staged | None = None
            ) -> Iterator[pa.RecordBatch]:
    """The source's features in batches of at most batch_size rows, each checked against the
    limits (etl.limits); after the last batch, every feature over a limit is refused at once.

    With staged (a re-delivery, etl.redelivery), the geometries checked are those of the rows
    it says will be staged: a row it sets aside was delivered exactly as the row behind one of
    the layer's current versions (same WKB, same fields), so its geometry was checked when it
    was loaded, and it never reaches the database. Parsing every geometry to count its
    vertices and look at its coordinates was the largest part of reading a re-delivery
    (1.5 s of 3.5 s for 1,000,000 parcels). The count of features and every attribute are
    still checked for every row."""
    limits = limits or Limits.from_env()
    guard = Guard(src, limits)
    inner = _parquet_batches(src, read_geometry, batch_size) if src.reader == "parquet" \
        else _gdal_batches(src, read_geometry, log, batch_size, limits)
    first = 0
    for batch in inner:
        guard.check(batch, None if staged is None else staged(batch, first))
        first += batch.num_rows
        yield batch
    guard.finish()


class _Fids:
    """Feature ids of a batch, turned into Python strings only for the features named."""

    def __init__(self, col: pa.Array) -> None:
        self.col = col

    def __getitem__(self, i: int) -> str | None:
        return self.col[int(i)].as_py()


class Guard:
    """Checks every feature read against the limits: the count of features (refused at once,
    so a runaway file is not read to its end), and per feature its vertices, its coordinates
    (a NaN, an infinity or 1e300 is a broken export, not a place) and the length of each
    attribute. Features over a limit are collected, so the refusal names every one of them."""

    def __init__(self, src: Source, limits: Limits) -> None:
        self.src, self.limits = src, limits
        self.rows = 0
        self.problems: list[Problem] = []
        self.total = 0
        self.skip_fields = {"_fid", "_geom", src.geometry_column}

    def check(self, batch: pa.RecordBatch, geometry_rows: np.ndarray | None = None) -> None:
        """Check a batch: its rows' count and attributes, and the geometries of geometry_rows
        (a mask; None for every row)."""
        self.rows += batch.num_rows
        if self.rows > self.limits.max_features:
            raise refuse(self.src.name, f"holds more than {self.limits.max_features:,} "
                         f"features, the limit; split it, or raise the limit with "
                         f"{env_name('max_features')}")
        names = batch.schema.names
        fids = _Fids(batch.column(names.index("_fid")))
        if "_geom" in names:
            some = batch if geometry_rows is None or geometry_rows.all() \
                else batch.filter(pa.array(geometry_rows))  # a first load stages every row
            self._geometry(some.column(names.index("_geom")),
                           _Fids(some.column(names.index("_fid"))))
        for name, col in zip(names, batch.columns, strict=True):
            if name not in self.skip_fields and (pa.types.is_string(col.type)
                                                 or pa.types.is_large_string(col.type)):
                self._attribute(name, col, fids)

    def _geometry(self, wkb: pa.Array, fids: _Fids) -> None:
        geoms = _parse(np.asarray(wkb.to_numpy(zero_copy_only=False), dtype=object))
        vertices = shapely.get_num_coordinates(geoms)
        for i in np.flatnonzero(vertices > self.limits.max_vertices):
            self._add(fids[i], f"has {vertices[i]:,} vertices, more than the limit of "
                      f"{self.limits.max_vertices:,} for one feature; simplify it, or raise "
                      f"the limit with {env_name('max_vertices')}")
        coords, index = shapely.get_coordinates(geoms, return_index=True)
        bad = ~np.isfinite(coords).all(axis=1) | (np.abs(np.nan_to_num(coords)) >
                                                  self.limits.max_abs_coordinate).any(axis=1)
        for i in np.unique(index[bad]):
            if len(self.problems) >= MAX_PROBLEMS:
                self.total += 1
                continue
            xy = coords[index == i]
            x, y = xy[~np.isfinite(xy).all(axis=1) | (np.abs(np.nan_to_num(xy)) >
                                                      self.limits.max_abs_coordinate)
                      .any(axis=1)][0]
            self._add(fids[i], f"has a coordinate ({x:g} {y:g}) that is {_coordinate_fault(x, y)}"
                      f"; the export is broken: fix the feature in a GIS and deliver it again")

    def _attribute(self, name: str, col: pa.Array, fids: _Fids) -> None:
        try:
            col.validate(full=True)
        except pa.ArrowInvalid:
            raise refuse(self.src.name, f"the text of field {name} is not in the encoding the "
                         "file declares (not UTF-8); for a shapefile, deliver a .cpg file "
                         "naming the encoding (e.g. UTF-8 or ISO-8859-1)") from None
        lengths = pc.utf8_length(col).to_numpy(zero_copy_only=False)
        lengths = np.nan_to_num(lengths.astype(float), nan=0.0)
        for i in np.flatnonzero(lengths > self.limits.max_attribute_chars):
            self._add(fids[i], f"a value of {int(lengths[i]):,} characters, more than the limit "
                      f"of {self.limits.max_attribute_chars:,}; a geometry or a document in "
                      f"an attribute? (raise the limit with {env_name('max_attribute_chars')})",
                      field=name)

    def _add(self, fid: str | None, message: str, field: str = "geometry") -> None:
        self.total += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(self.src.name, message, feature=fid, field=field))

    def finish(self) -> None:
        """Refuse the file, naming every feature over a limit (nothing is loaded)."""
        if self.problems:
            raise IngestRefused(self.src.name, self.problems, self.total,
                                "nothing was loaded (a broken or hostile feature is refused "
                                "even with --skip-bad-features)")


def _parse(wkb: np.ndarray) -> np.ndarray:
    """Shapely geometries of a batch's WKB; None where GEOS cannot parse one (a curve, a
    malformed value): those the database's validation reports."""
    with np.errstate(all="ignore"):  # NaN coordinates are what the guard looks for
        try:
            return shapely.from_wkb(wkb, on_invalid="ignore")
        except NotImplementedError:  # curves: one by one, the others still checked
            out = np.empty(len(wkb), dtype=object)
            for i, value in enumerate(wkb):
                try:
                    out[i] = shapely.from_wkb(value, on_invalid="ignore")
                except NotImplementedError:
                    out[i] = None
            return out


def _coordinate_fault(x: float, y: float) -> str:
    if np.isnan(x) or np.isnan(y):
        return "not a number (NaN)"
    if np.isinf(x) or np.isinf(y):
        return "infinite"
    return "beyond any place on earth in any CRS"


def _gdal_batches(src: Source, read_geometry: bool, log: ReadLog, batch_size: int,
                  limits: Limits) -> Iterator[pa.RecordBatch]:
    """GDAL's batches, read in a child process that is killed (and the file refused) when it
    gives no batch for limits.read_stall_seconds (etl.isolation)."""
    for item in isolation.stream(gdal_read.stream, (src, read_geometry, batch_size), src.name,
                                 limits, "reading"):
        if isinstance(item, list):
            log.extend(item)
        else:
            yield item


def _parquet_batches(src: Source, read_geometry: bool,
                     batch_size: int) -> Iterator[pa.RecordBatch]:
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(src.dataset)
    start = 0
    for batch in pf.iter_batches(batch_size=batch_size):
        fids = pa.array([str(i) for i in range(start, start + batch.num_rows)], pa.string())
        start += batch.num_rows
        cols = [fids]
        names = ["_fid"]
        if read_geometry and src.geometry_column:
            cols.append(batch.column(src.geometry_column).cast(pa.binary()))
            names.append("_geom")
        for n in src.fields:
            cols.append(batch.column(n))
            names.append(n)
        yield pa.RecordBatch.from_arrays(cols, names=names)


_DONE = object()


def ahead(items: Iterable[T], depth: int = AHEAD) -> Iterator[T]:
    """The items of an iterable, produced by a background thread up to depth items ahead of
    the consumer.

    Why: reading a file (GDAL, the limits' checks, the CSV for COPY) and the database's work
    on the batch before (COPY parsing, validation) then run at the same time on two cores;
    GDAL, shapely, numpy, pyarrow and psycopg2 release the GIL in their long calls. The
    producer's exception (a refusal, a GDAL error) is raised in the consumer at the point the
    item would have come; a consumer that stops early (its COPY failed) stops the producer,
    which closes its iterator in its own thread (so a GDAL dataset is closed where it was
    opened), and waits for it; a reader child the producer waits on is killed first
    (etl.isolation.stop_readers), so a spinning GDAL never holds the consumer up."""
    box: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        it = iter(items)
        try:
            for item in it:
                if not put((item, None)):
                    break
        except BaseException as exc:  # handed to the consumer, raised there
            put((_DONE, exc))
            return
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        put((_DONE, None))

    worker = threading.Thread(target=produce, name="rulem-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item, exc = box.get()
            if item is _DONE:
                if exc is not None:
                    raise exc
                return
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # a child started after one pass is killed by the next
            isolation.stop_readers(worker.ident)
            worker.join(0.05)
