"""A re-delivered layer-wide file: which of its rows were delivered exactly as before, decided
in the reader so that they never reach the database (docs/ingest.md).

Why: staging every row of a weekly parcel refresh (100,000 rows, 1 % changed) to compare it in
SQL cost more than ogr2ogr's whole reload of the file. Before reading, the digests of the rows
behind the layer's current versions are fetched (ops.ingest_current_hashes, sql/063: 16 bytes
and two ids a feature); as each Arrow batch is read, each row's digest (etl.row_digest) is
looked up there. A row whose digest names a current version, and that is its digest's first
row in the file, is set aside: only its place in the file and its feature are sent
(staging.b<batch>_same); every other row is staged as always, with its digest
(staging.b<batch>_hash) for the hashes kept after the merge. A digest counts only under the
same settings, plan boundary and tolerance (ops.ingest_row_context), which are known once the
file is staged: etl.ingest stages the file whole when they differ.
"""

from __future__ import annotations

import io
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

DIGEST = 16  # bytes of an MD5
CHUNK = 100_000  # rows a COPY statement: the text of one chunk is held at once, not the file's


@dataclass
class Prior:
    """The digests of the rows behind a layer's current versions, each with the context it
    counts under and the feature and version it made current."""

    index: dict[bytes, int] = field(default_factory=dict)  # digest -> position
    contexts: list[bytes] = field(default_factory=list)
    feature_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    version_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @classmethod
    def fetch(cls, conn: sa.Connection, layer: str, plan_area_id: int) -> Prior:
        """One query, three packed values (no Python object per row in the driver)."""
        hashes, fids, vids = conn.execute(sa.text(
            "SELECT * FROM ops.ingest_current_hashes(:l, :pa)"),
            {"l": layer, "pa": plan_area_id}).one()
        if not hashes:
            return cls()
        packed = bytes(hashes)
        n = len(packed) // (2 * DIGEST)
        pairs = [packed[i:i + 2 * DIGEST] for i in range(0, n * 2 * DIGEST, 2 * DIGEST)]
        return cls({p[DIGEST:]: i for i, p in enumerate(pairs)}, [p[:DIGEST] for p in pairs],
                   np.frombuffer(bytes(fids), dtype=">i8").astype(np.int64),
                   np.frombuffer(bytes(vids), dtype=">i8").astype(np.int64))


@dataclass
class Aside:
    """What the reader decided: the rows set aside (place in the file, and the prior row they
    match), packed (8 bytes a number), not as Python objects.

    The digests of the rows it staged are not kept: each batch's go to the database with the
    batch (split's text, copied by stage_file.stage), so a first load, which stages every row, holds
    nothing per row here. Kept, they were 24 bytes a row: 95 MB more peak memory for
    5,000,000 polygons than for 1,000,000 (the memory figure of bench/run.py)."""

    rows: array = field(default_factory=lambda: array("q"))
    matches: array = field(default_factory=lambda: array("q"))  # positions in Prior
    prior: Prior = field(default_factory=Prior)
    _used: set[int] = field(default_factory=set)

    def split(self, digests: list[bytes], first_row: int) -> tuple[np.ndarray, io.BytesIO]:
        """Decide a batch: the mask of the rows to stage (the rest is recorded here), and the
        COPY text of the staged rows' digests for staging.b<batch>_hash."""
        keep = np.ones(len(digests), dtype=bool)
        index, used = self.prior.index, self._used
        if index:  # a re-delivery (a first load stages every row)
            for i, d in enumerate(digests):
                j = index.get(d)
                if j is not None and j not in used:
                    used.add(j)
                    keep[i] = False
                    self.rows.append(first_row + i)
                    self.matches.append(j)
        return keep, _lines(f"{first_row + i}\t\\\\x{digests[i].hex()}\n"
                            for i in np.flatnonzero(keep).tolist())

    def all_under(self, context: bytes) -> bool:
        """Whether every row set aside was delivered under this context."""
        contexts = self.prior.contexts
        return all(contexts[j] == context for j in self.matches)

    def copy_to(self, conn: sa.Connection, batch_id: int) -> int:
        """staging.b<batch>_same (the rows set aside, with their features); returns how many
        were set aside."""
        if not self.rows:
            return 0
        cur = conn.connection.dbapi_connection.cursor()
        try:
            same = f"staging.b{batch_id}_same"
            m = np.asarray(self.matches, dtype=np.int64)
            fids, vids = self.prior.feature_ids[m], self.prior.version_ids[m]
            cur.execute(f"CREATE UNLOGGED TABLE {same} (_row bigint, feature_id bigint, "
                        "version_id bigint)")
            for start in range(0, len(self.rows), CHUNK):
                end = start + CHUNK
                cur.copy_expert(f"COPY {same} FROM STDIN", _lines(
                    f"{r}\t{f}\t{v}\n" for r, f, v in zip(
                        self.rows[start:end], fids[start:end].tolist(),
                        vids[start:end].tolist(), strict=True)), size=1 << 20)
            cur.execute(f"CREATE INDEX ON {same} (feature_id)")
            cur.execute(f"ANALYZE {same}")
        finally:
            cur.close()
        return len(self.rows)


def create_hash_table(cur: Any, batch_id: int) -> str:
    """staging.b<batch>_hash, which the staged rows' digests are copied into batch by batch
    (its name)."""
    table = f"staging.b{batch_id}_hash"
    cur.execute(f"CREATE UNLOGGED TABLE {table} (_row bigint, h bytea)")
    return table


def _lines(lines: Iterator[str]) -> io.BytesIO:
    return io.BytesIO("".join(lines).encode())
