"""Read a source in Arrow record batches of bounded size, geometry as WKB exactly as stored.

Why Arrow batches: pyogrio hands GDAL's columnar stream to Python without a Python object per
feature, so reading costs little next to the database work, and memory stays bounded by the
batch size whatever the file's size. Nothing is interpreted here: the CRS, curves, Z/M and
validity are the merge's business (sql/061), so the database sees what the file holds.

Every batch comes out with the same leading columns: `_fid` (the file's feature id, as text)
and `_geom` (WKB, or null), followed by the file's fields under their own names.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import pyarrow as pa
import pyogrio.errors
import pyogrio.raw

from etl.problems import refuse
from etl.sources import Source

BATCH_SIZE = 25_000


@dataclass
class ReadLog:
    """What GDAL said while reading (warnings worth keeping with the batch)."""

    warnings: list[str] = field(default_factory=list)

    def add(self, messages: list[warnings.WarningMessage]) -> None:
        for m in messages:
            text = " ".join(str(m.message).split())
            if text not in self.warnings and len(self.warnings) < 20:
                self.warnings.append(text)


def batches(src: Source, read_geometry: bool, log: ReadLog,
            batch_size: int = BATCH_SIZE) -> Iterator[pa.RecordBatch]:
    """The source's features in batches of at most batch_size rows."""
    if src.reader == "parquet":
        yield from _parquet_batches(src, read_geometry, batch_size)
    else:
        yield from _gdal_batches(src, read_geometry, log, batch_size)


def _gdal_batches(src: Source, read_geometry: bool, log: ReadLog,
                  batch_size: int) -> Iterator[pa.RecordBatch]:
    # Warnings are caught around each step only, never across a yield (the filters are global).
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            stream = pyogrio.raw.open_arrow(
                src.dataset, layer=src.layer, read_geometry=read_geometry and src.has_geometry,
                return_fids=True, batch_size=batch_size, use_pyarrow=True,
                datetime_as_string=True, **src.open_options)
            meta, reader = stream.__enter__()
        log.add(caught)
        try:
            fid_col = meta.get("fid_column") or "OGC_FID"
            geom_col = (meta.get("geometry_name") or "wkb_geometry") if read_geometry else None
            it = iter(reader)
            while True:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    batch = next(it, None)
                log.add(caught)
                if batch is None:
                    break
                yield _normalise(batch, fid_col, geom_col, src)
        finally:
            stream.__exit__(None, None, None)
    except pyogrio.errors.DataSourceError as exc:
        raise refuse(src.name, f"GDAL cannot read it ({' '.join(str(exc).split())})") from None
    except (pyogrio.errors.DataLayerError, OSError) as exc:
        raise refuse(src.name, f"GDAL stopped reading it ({' '.join(str(exc).split())}); the "
                     "file may be truncated or corrupt: deliver it again") from None
    except (UnicodeDecodeError, pa.ArrowInvalid) as exc:
        raise refuse(src.name, f"its text is not in the encoding it declares ({exc}); for a "
                     "shapefile, deliver a .cpg file naming the encoding (e.g. UTF-8 or "
                     "ISO-8859-1)") from None


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


def _normalise(batch: pa.RecordBatch, fid_col: str, geom_col: str | None,
               src: Source) -> pa.RecordBatch:
    names = batch.schema.names
    types = batch.schema.types
    # A CSV's WKT column comes twice: as the geometry (WKB) and as the text it was read from.
    geom_at = next((i for i, n in enumerate(names)
                    if n == geom_col and (pa.types.is_binary(types[i])
                                          or pa.types.is_large_binary(types[i]))), None)
    fids = batch.column(names.index(fid_col)).cast(pa.string()) if fid_col in names \
        else pa.array([None] * batch.num_rows, pa.string())
    cols = [fids]
    out = ["_fid"]
    if geom_at is not None:
        cols.append(batch.column(geom_at).cast(pa.binary()))
        out.append("_geom")
    for n in src.fields:
        at = next((i for i, m in enumerate(names) if m == n and i != geom_at), None)
        if at is not None:
            cols.append(batch.column(at))
            out.append(n)
    return pa.RecordBatch.from_arrays(cols, names=out)
