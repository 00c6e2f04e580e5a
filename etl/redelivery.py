"""A re-delivered layer-wide file: which of its rows were delivered exactly as before, decided
in the reader so that they never reach the database (docs/ingest.md).

Why: staging every row of a weekly parcel refresh (100,000 rows, 1 % changed) to compare it in
SQL cost more than ogr2ogr's whole reload of the file. Before reading, the digests of the rows
behind the layer's current versions are fetched (ops.ingest_current_hashes, sql/063: 32 bytes
and an id a feature), with the current features that have none; as each Arrow batch is read,
each row's digest (etl.row_digest) is looked up there. A row whose digest names a current
version, and that is its digest's first row in the file, is set aside: it is counted, and
nothing of it is sent. What the database is told instead is the other side, about the size of
the change: the current features whose rows were not set aside (staging.b<batch>_unseen), among
which are the ones the file no longer holds. Every other row is staged as always, with its
digest (staging.b<batch>_hash) for the hashes kept after the merge. A digest counts only under
the same settings, plan boundary and tolerance (ops.ingest_row_context), which are known once
the file is staged: etl.ingest stages the file whole when they differ.
"""

from __future__ import annotations

import io
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sqlalchemy as sa

DIGEST = 16  # bytes of a row's digest (etl.row_digest: XXH3-128)
CHUNK = 100_000  # rows a COPY statement: the text of one chunk is held at once, not the file's


@dataclass
class Prior:
    """The digests of the rows behind a layer's current versions, each with the context it
    counts under and the feature it made current (by position); and the current
    features without a digest (loaded without one, or changed since by other means), which no
    row can be set aside for.

    Looked up a batch at a time with numpy (find): the digests' first 8 bytes, sorted, and a
    binary search, each hit checked against the whole digest. A dict of a state's 1,000,000
    digests took 0.4 s to build and held a Python object per row."""

    digests: np.ndarray = field(default_factory=lambda: np.zeros((0, DIGEST), np.uint8))
    contexts: np.ndarray = field(default_factory=lambda: np.zeros((0, DIGEST), np.uint8))
    feature_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    unhashed: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    keys: np.ndarray = field(init=False)  # first 8 bytes of each digest, sorted
    order: np.ndarray = field(init=False)  # the position of each key

    def __post_init__(self) -> None:
        firsts = _firsts(self.digests)
        self.order = np.argsort(firsts, kind="stable")
        self.keys = firsts[self.order]

    def __len__(self) -> int:
        return len(self.digests)

    def find(self, digests: np.ndarray) -> np.ndarray:
        """The position of each digest (rows of 16 bytes) among the prior rows, -1 where it
        is none of them. (Two prior digests with the same first 8 bytes, about one chance in
        10**7 for a million: only the first is found, so the other's row is staged and
        compared in full, never set aside wrongly.)"""
        if not len(self) or not len(digests):
            return np.full(len(digests), -1, dtype=np.int64)
        firsts = _firsts(digests)
        # searched in ascending order (numpy then starts each search where the last ended:
        # 0.05 s per 1,000,000 against 0.22 s in the file's order), put back in it after
        order = np.argsort(firsts)
        at = np.empty(len(firsts), dtype=np.intp)
        at[order] = np.minimum(np.searchsorted(self.keys, firsts[order]), len(self) - 1)
        pos = self.order[at]
        hit = (self.keys[at] == firsts) & (self.digests[pos] == digests).all(axis=1)
        return np.where(hit, pos, -1)

    @classmethod
    def fetch(cls, conn: sa.Connection, layer: str, plan_area_id: int) -> Prior:
        """One query, three packed values, sent as binary COPY: no Python object per row in
        the driver, and no hex text of 48 MB (a state's parcels) made by the server and
        decoded here (0.2-0.3 s)."""
        cur = conn.connection.dbapi_connection.cursor()
        try:
            out = io.BytesIO()
            cur.copy_expert(cur.mogrify(
                "COPY (SELECT * FROM ops.ingest_current_hashes(%s, %s)) TO STDOUT "
                "(FORMAT binary)", (layer, plan_area_id)).decode(), out, size=1 << 20)
        finally:
            cur.close()
        hashes, fids, unhashed = _binary_row(out.getbuffer())
        pairs = np.frombuffer(hashes if hashes is not None else b"",
                              dtype=np.uint8).reshape(-1, 2 * DIGEST)
        return cls(pairs[:, DIGEST:].copy(), pairs[:, :DIGEST].copy(), _ids(fids),
                   _ids(unhashed))


def _firsts(digests: np.ndarray) -> np.ndarray:
    """The first 8 bytes of each digest (rows of 16 bytes) as an unsigned integer."""
    return np.ascontiguousarray(digests[:, :8]).view(np.uint64).ravel()


class PriorAhead:
    """The prior digests, fetched in a thread on a connection of its own while the ingest
    checks and hashes the file (etl.ingest: a GeoPackage's NUL check and its SHA-256, 0.7 s
    of a state's 1,000,000 parcels, beside a fetch of 1.6 s on the server).

    The fetch and the layer's last batch are read in one snapshot (REPEATABLE READ, read
    only). The ingest takes the result once it holds the layer's ingest lock, and only if the
    layer's last batch is still that one: an ingest of the layer that committed in between
    (the only writer of row hashes) makes it fetch again, in its own transaction. Nothing is
    written here; a refused file cancels the fetch."""

    def __init__(self, eng: sa.Engine, layer: str, batch_layer: str,
                 plan_area: str | None) -> None:
        self.batch_layer = batch_layer  # the layer its batches name (ops.batch.layer)
        self._prior: Prior | None = None
        self._plan_area_id: int | None = None
        self._mark: int | None = None
        self._raw: Any = None
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._fetch, args=(eng, layer, plan_area),
                                        name="rulem-prior-ahead", daemon=True)
        self._thread.start()

    def _fetch(self, eng: sa.Engine, layer: str, plan_area: str | None) -> None:
        from rulem_db import db

        try:
            with eng.connect() as conn:
                self._raw = conn.connection.dbapi_connection
                if self._cancelled.is_set():
                    return
                with conn.execution_options(isolation_level="REPEATABLE READ").begin():
                    conn.execute(sa.text("SET TRANSACTION READ ONLY"))
                    plan_area_id = db.plan_area(conn, plan_area).plan_area_id
                    mark = last_batch(conn, self.batch_layer, plan_area_id)
                    prior = Prior.fetch(conn, layer, plan_area_id)
                self._prior, self._plan_area_id, self._mark = prior, plan_area_id, mark
        except Exception:  # noqa: BLE001 - the ingest fetches again, and reports what it meets
            self._prior = None

    def take(self, conn: sa.Connection, layer: str, plan_area_id: int) -> Prior:
        """The prior rows as of now (the caller holds the layer's ingest lock and has written
        nothing to the layer yet)."""
        self._thread.join()
        if self._prior is not None and self._plan_area_id == plan_area_id and \
                self._mark == last_batch(conn, self.batch_layer, plan_area_id):
            return self._prior
        return Prior.fetch(conn, layer, plan_area_id)

    def close(self) -> None:
        """Stop a fetch still running (a refused file) and wait for the thread."""
        if self._thread.is_alive():
            self._cancelled.set()
            if self._raw is not None:
                self._raw.cancel()
            self._thread.join()


def last_batch(conn: sa.Connection, layer: str, plan_area_id: int) -> int | None:
    """The layer's last batch in the plan area, as this transaction sees it (excluding one it
    opened itself; a transaction that wrote nothing has no id, -1 matches no batch)."""
    return conn.execute(sa.text(
        "SELECT max(batch_id) FROM ops.batch WHERE layer = :l AND plan_area_id = :pa "
        "AND opened_xact IS DISTINCT FROM "
        "coalesce(pg_current_xact_id_if_assigned()::text::bigint, -1)"),
        {"l": layer, "pa": plan_area_id}).scalar_one()


def _binary_row(data: memoryview) -> list[memoryview | None]:
    """The fields of the one row of a binary COPY (PostgreSQL's format: a signature, flags
    and a header extension, then per row a field count and each field's length, -1 for a
    null, and bytes)."""
    if bytes(data[:11]) != b"PGCOPY\n\xff\r\n\x00":
        raise ValueError("not a binary COPY")
    pos = 15
    (extension,) = struct.unpack_from(">i", data, pos)
    pos += 4 + extension
    (count,) = struct.unpack_from(">h", data, pos)
    pos += 2
    fields: list[memoryview | None] = []
    for _ in range(count):
        (length,) = struct.unpack_from(">i", data, pos)
        pos += 4
        fields.append(None if length < 0 else data[pos:pos + length])
        pos += max(length, 0)
    return fields


def _ids(packed: memoryview | None) -> np.ndarray:
    """8-byte big-endian integers (int8send), as int64."""
    if packed is None:
        return np.zeros(0, np.int64)
    return np.frombuffer(packed, dtype=">i8").astype(np.int64)


@dataclass
class Aside:
    """What the reader decided: the prior rows its rows were set aside for (a flag per prior
    row, not a Python object per row).

    The digests of the rows it staged are not kept: each batch's go to the database with the
    batch (split's text, copied by stage_file.stage), so a first load, which stages every row,
    holds nothing per row here. Kept, they were 24 bytes a row: 95 MB more peak memory for
    5,000,000 polygons than for 1,000,000 (the memory figure of bench/run.py)."""

    prior: Prior = field(default_factory=Prior)
    _used: np.ndarray = field(init=False)  # by position in Prior: a row was set aside for it

    def __post_init__(self) -> None:
        self._used = np.zeros(len(self.prior), dtype=bool)

    @property
    def count(self) -> int:
        """How many rows were set aside."""
        return int(np.count_nonzero(self._used))

    @property
    def matches(self) -> np.ndarray:
        """The positions in Prior of the rows set aside for, ascending."""
        return np.flatnonzero(self._used)

    def split(self, digests: list[bytes], first_row: int) -> tuple[np.ndarray, io.BytesIO]:
        """Decide a batch: the mask of the rows to stage (the rest is recorded here), and the
        COPY text of the staged rows' digests for staging.b<batch>_hash. A prior row stands
        for one row of the file: the first with its digest."""
        keep = np.ones(len(digests), dtype=bool)
        if len(self.prior) and digests:  # a re-delivery (a first load stages every row)
            pos = self.prior.find(np.frombuffer(b"".join(digests), dtype=np.uint8)
                                  .reshape(-1, DIGEST))
            rows = np.flatnonzero(pos >= 0)
            rows = rows[~self._used[pos[rows]]]
            _, first = np.unique(pos[rows], return_index=True)  # first row of each digest
            rows = rows[first]
            keep[rows] = False
            self._used[pos[rows]] = True
        return keep, _lines(f"{first_row + i}\t\\\\x{digests[i].hex()}\n"
                            for i in np.flatnonzero(keep).tolist())

    def all_under(self, context: bytes) -> bool:
        """Whether every row set aside was delivered under this context."""
        mine = np.frombuffer(context, dtype=np.uint8)
        return bool((self.prior.contexts[self._used] == mine).all())

    def copy_to(self, conn: sa.Connection, batch_id: int) -> int:
        """staging.b<batch>_unseen: the current features whose rows were not set aside (the
        prior rows not matched, and the features without a digest), and the number set aside
        as the batch's unchanged count so far; returns that number."""
        if not self.count:
            return 0
        prior = self.prior
        unseen = np.concatenate([prior.feature_ids[~self._used], prior.unhashed])
        cur = conn.connection.dbapi_connection.cursor()
        try:
            table = f"staging.b{batch_id}_unseen"
            cur.execute(f"CREATE UNLOGGED TABLE {table} (feature_id bigint)")
            for start in range(0, len(unseen), CHUNK):
                cur.copy_expert(f"COPY {table} FROM STDIN", _lines(
                    f"{f}\n" for f in unseen[start:start + CHUNK].tolist()), size=1 << 20)
            cur.execute(f"CREATE INDEX ON {table} (feature_id)")
            cur.execute(f"ANALYZE {table}")
            # read by ops.ingest_few (sql/061) to tell a few changed rows from many
            cur.execute("UPDATE ops.batch SET unchanged_count = %s WHERE batch_id = %s",
                        (self.count, batch_id))
        finally:
            cur.close()
        return self.count


def create_hash_table(cur: Any, batch_id: int) -> str:
    """staging.b<batch>_hash, which the staged rows' digests are copied into batch by batch
    (its name)."""
    table = f"staging.b{batch_id}_hash"
    cur.execute(f"CREATE UNLOGGED TABLE {table} (_row bigint, h bytea)")
    return table


def _lines(lines: Iterator[str]) -> io.BytesIO:
    return io.BytesIO("".join(lines).encode())
