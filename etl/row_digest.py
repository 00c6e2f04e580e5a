"""The digest of a delivered row, made in the reader (docs/ingest.md): XXH3-128 of the row's
geometry as WKB and its fields as the text staging COPYs, so a re-delivery can tell the rows
delivered exactly as before without sending them to the database.

Why here and not in SQL: a weekly refresh of 100,000 parcels of which 1 % changed spent more
on reading every row into staging than ogr2ogr's whole reload of the file; with the digests of
the rows behind the current versions fetched first (ops.ingest_row_hash, 16 bytes a feature),
only the changed rows reach the database, and of the others only how many they were. This
module is the one definition of a row's digest: sql/063 stores and compares what it makes,
never recomputes it. The ingest's settings, plan boundary and tolerance are not in the
digest: sql/063 keeps them beside it (ops.ingest_row_hash.context) and a digest counts only
under the same ones.

Why XXH3-128 and not MD5: the digest is made once per row in Python, and MD5 of a state's
1,000,000 parcels (170 MB of rows) took 0.6-0.75 s of the reader thread, the slowest part of
a re-delivery's read, where XXH3-128 takes 0.10-0.13 s. Both are 128 bits, so two different
rows share a digest by chance about once in 10**26 files of a million rows; neither resists a
deliverer who crafts a collision on purpose, and MD5 never did either (its collisions are
made in seconds). A database loaded under MD5 digests matches none of its rows at the first
re-delivery after the change: that file is staged and compared whole, as a first re-delivery
is, and its rows' digests replace the old ones (sql/063, ops.ingest_keep_hashes).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from xxhash import xxh3_128_digest

from etl.staging import StagedField, csv_ready

NULL = "\x00"  # a null field (a delivered text cannot hold NUL: etl.nul)
SEP = "\x1f"  # between fields (unit separator)


def digests(fields: list[StagedField], batch: pa.RecordBatch) -> list[bytes]:
    """Each row's 16-byte XXH3-128 (canonical, big-endian): its WKB (empty for none), then
    each field's COPY text, NULL for a null, separated by SEP. Joined in Arrow (C++); Python
    makes one call per row."""
    n = batch.num_rows
    names = batch.schema.names
    texts: list[pa.Array] = []
    for f in fields:
        col = csv_ready(batch.column(names.index(f.name)), f.pg_type)
        texts.append(col if pa.types.is_string(col.type) else pc.cast(col, pa.string()))
    joined = pc.binary_join_element_wise(*texts, SEP, null_handling="replace",
                                         null_replacement=NULL) if texts else \
        pa.array([""] * n, pa.string())
    geom = batch.column(names.index("_geom")) if "_geom" in names else pa.nulls(n, pa.binary())
    if isinstance(geom, pa.ChunkedArray):
        geom = pa.concat_arrays(geom.chunks)
    geom = pc.fill_null(geom.cast(pa.binary()), b"")
    rows = pc.binary_join_element_wise(geom, joined.cast(pa.binary()), SEP.encode())
    return list(map(xxh3_128_digest, rows.to_pylist()))
