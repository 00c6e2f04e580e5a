"""COPY Arrow batches into the batch's staging table, staging.b<batch> (UNLOGGED).

Why COPY of CSV text: it is the fastest way into PostgreSQL that needs no extension, and
pyarrow writes CSV in C++, so Python touches no feature one by one. Geometry travels as hex
WKB straight into a geometry column (no SRID yet: the merge decides the CRS); each field of the
file gets a column c0..cN of the nearest PostgreSQL type, so the original attributes keep
their types in source_attributes.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from etl.problems import refuse

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_HEX_PAIRS = np.stack([_HEX[np.arange(256) >> 4], _HEX[np.arange(256) & 15]], axis=1)


# A PostgreSQL table has at most 1600 columns (MaxHeapAttributeNumber); the staging table
# holds _row, _fid and _geom besides one column per field of the file.
MAX_TABLE_COLUMNS = 1600
OWN_COLUMNS = ("_row", "_fid", "_geom")
MAX_FIELDS = MAX_TABLE_COLUMNS - len(OWN_COLUMNS)


@dataclass(frozen=True)
class StagedField:
    """A field of the file and its staging column."""

    name: str  # as in the file
    column: str  # c0, c1, ...
    pg_type: str


def pg_type(t: pa.DataType) -> str:
    """The staging column type for an Arrow type (anything unusual is kept as text or JSON)."""
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "numeric" if t == pa.uint64() else "bigint"
    if pa.types.is_floating(t):
        return "double precision"
    if pa.types.is_decimal(t):
        return "numeric"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_dictionary(t):
        return pg_type(t.value_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t) \
            or pa.types.is_map(t) or pa.types.is_fixed_size_list(t):
        return "jsonb"
    return "text"


def plan_fields(schema: pa.Schema) -> list[StagedField]:
    """Staging columns for the fields of a normalised batch schema (after _fid and _geom)."""
    fields = [f for f in schema if f.name not in ("_fid", "_geom")]
    return [StagedField(f.name, f"c{i}", pg_type(f.type)) for i, f in enumerate(fields)]


def check_field_count(file: str, count: int) -> None:
    """A file with more fields than a staging table can hold is refused before anything is
    staged, rather than failing in CREATE TABLE with the database's words."""
    if count > MAX_FIELDS:
        raise refuse(file, f"has {count:,} fields, more than the {MAX_FIELDS:,} ingest can "
                     f"stage (PostgreSQL tables have at most {MAX_TABLE_COLUMNS:,} columns, "
                     f"{len(OWN_COLUMNS)} of them ingest's own); deliver only the fields the "
                     "layer needs")


def create_table(cur, table: str, fields: list[StagedField]) -> None:
    """CREATE UNLOGGED TABLE for one batch (it lives and dies in the ingest's transaction)."""
    cols = ", ".join(f"{f.column} {f.pg_type}" for f in fields)
    cur.execute(f"CREATE UNLOGGED TABLE {table} (_row bigint, _fid text, _geom geometry"
                f"{', ' + cols if cols else ''})")


def copy_batch(cur, table: str, fields: list[StagedField], batch: pa.RecordBatch,
               first_row: int) -> None:
    """COPY one batch into table; rows are numbered from first_row (their order in the file)."""
    copy_csv(cur, table, fields, csv_rows(fields, batch, first_row))


def csv_rows(fields: list[StagedField], batch: pa.RecordBatch, first_row: int,
             row_numbers: np.ndarray | None = None) -> io.BytesIO:
    """One batch as the CSV text COPY reads (no header), rows numbered from first_row (or by
    row_numbers: their places in the file, when rows set aside were taken out). Apart from
    copy_csv so that a reader thread can build the next batch's text while the database
    parses this one's (etl.reading.ahead)."""
    n = batch.num_rows
    buf = io.BytesIO()
    if n == 0:
        return buf
    names = batch.schema.names
    numbers = np.arange(first_row, first_row + n, dtype=np.int64) if row_numbers is None \
        else row_numbers.astype(np.int64)
    cols: list[pa.Array] = [pa.array(numbers), batch.column(names.index("_fid"))]
    geom = batch.column(names.index("_geom")) if "_geom" in names else None
    cols.append(wkb_hex(geom) if geom is not None else pa.nulls(n, pa.string()))
    for f in fields:
        cols.append(csv_ready(batch.column(names.index(f.name)), f.pg_type))
    pacsv.write_csv(pa.Table.from_arrays(cols, names=_columns(fields)), buf,
                    pacsv.WriteOptions(include_header=False))
    buf.seek(0)
    return buf


def copy_csv(cur, table: str, fields: list[StagedField], buf: io.BytesIO) -> None:
    """COPY the text of csv_rows into table, in 1 MiB pieces (psycopg2's default of 8 KiB
    makes 4,000 Python calls for 100,000 parcels)."""
    if buf.getbuffer().nbytes == 0:
        return
    cur.copy_expert(f"COPY {table} ({', '.join(_columns(fields))}) FROM STDIN WITH (FORMAT csv)",
                    buf, size=1 << 20)


def _columns(fields: list[StagedField]) -> list[str]:
    return list(OWN_COLUMNS) + [f.column for f in fields]


def wkb_hex(arr: pa.Array) -> pa.Array:
    """Hex text of a WKB column, vectorised (no Python object per geometry)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = pa.concat_arrays(arr.chunks) if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_large_binary(arr.type):
        arr = arr.cast(pa.binary())
    if arr.offset:
        arr = pa.concat_arrays([arr])  # a copy starting at offset 0
    validity, offsets_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int32)[: len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(
        0, np.uint8)
    start = int(offsets[0])
    hexed = _HEX_PAIRS[data[start:int(offsets[-1])]].tobytes()
    new_offsets = ((offsets - start) * 2).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(arr),
                                 [validity, pa.py_buffer(new_offsets), pa.py_buffer(hexed)],
                                 null_count=arr.null_count)


def csv_ready(arr: pa.Array, pg: str) -> pa.Array:
    """A column in a form pyarrow's CSV writer takes and PostgreSQL's COPY reads back (also
    what a row's digest is made of, etl.row_digest)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = pa.concat_arrays(arr.chunks)
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pg == "jsonb":
        return pa.array([None if v is None else json.dumps(v, default=str)
                         for v in arr.to_pylist()], pa.string())
    if pa.types.is_float16(t):
        return arr.cast(pa.float32())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return wkb_hex(arr.cast(pa.binary()))
    if pg == "text" and not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return pc.cast(arr, pa.string()) if _castable(t) else pa.array(
            [None if v is None else str(v) for v in arr.to_pylist()], pa.string())
    return arr


def _castable(t: pa.DataType) -> bool:
    return (pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t)
            or pa.types.is_null(t))
