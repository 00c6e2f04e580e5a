"""GDAL's side of reading a delivered file: its features as Arrow record batches, geometry as WKB
exactly as stored. Runs in a reader child (etl.isolation; etl.reading drives it), so it imports
only pyogrio and pyarrow.

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


@dataclass
class ReadLog:
    """What GDAL said while reading (warnings worth keeping with the batch)."""

    warnings: list[str] = field(default_factory=list)

    def add(self, messages: list[warnings.WarningMessage]) -> None:
        self.extend(" ".join(str(m.message).split()) for m in messages)

    def extend(self, texts: Iterator[str] | list[str]) -> None:
        for text in texts:
            if text not in self.warnings and len(self.warnings) < 20:
                self.warnings.append(text)


def stream(src: Source, read_geometry: bool, batch_size: int) -> Iterator[object]:
    """In a reader child: the batches, each preceded by the warnings GDAL gave since the batch
    before (a list of lines), for the parent's ReadLog."""
    log = ReadLog()
    sent = 0
    for batch in gdal_batches(src, read_geometry, log, batch_size):
        if len(log.warnings) > sent:
            yield list(log.warnings[sent:])
            sent = len(log.warnings)
        yield batch
    if len(log.warnings) > sent:
        yield list(log.warnings[sent:])


def gdal_batches(src: Source, read_geometry: bool, log: ReadLog,
                 batch_size: int) -> Iterator[pa.RecordBatch]:
    """The source's features through GDAL (pyogrio's Arrow stream), normalised."""
    # Warnings are caught around each step only, never across a yield (the filters are global).
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            opened = pyogrio.raw.open_arrow(
                src.dataset, layer=src.layer, read_geometry=read_geometry and src.has_geometry,
                return_fids=True, batch_size=batch_size, use_pyarrow=True,
                datetime_as_string=True, **src.open_options)
            meta, reader = opened.__enter__()
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
            opened.__exit__(None, None, None)
    except pyogrio.errors.DataSourceError as exc:
        raise refuse(src.name, f"GDAL cannot read it ({' '.join(str(exc).split())})") from None
    except (pyogrio.errors.DataLayerError, OSError) as exc:
        raise refuse(src.name, f"GDAL stopped reading it ({' '.join(str(exc).split())}); the "
                     "file may be truncated or corrupt: deliver it again") from None
    except (UnicodeDecodeError, pa.ArrowInvalid) as exc:
        raise refuse(src.name, f"its text is not in the encoding it declares ({exc}); for a "
                     "shapefile, deliver a .cpg file naming the encoding (e.g. UTF-8 or "
                     "ISO-8859-1)") from None


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
