"""What the reader keeps of a file's rows while it decides which to stage (etl.redelivery.Aside):
nothing per staged row (their digests go to the database with each batch), and for a
re-delivery only the rows it set aside.

Why: a first load stages every row; keeping each one's number and digest (24 bytes) made the
ingest's peak memory grow with the file (95 MB more for 5,000,000 polygons than for
1,000,000), where the target is flat.
"""

from __future__ import annotations

import hashlib

import numpy as np

from etl.redelivery import Aside, Prior


def _digest(text: str) -> bytes:
    return hashlib.md5(text.encode()).digest()


def _copy_rows(text: bytes) -> list[tuple[int, str]]:
    rows = []
    for line in text.decode().splitlines():
        number, value = line.split("\t")
        assert value.startswith("\\\\x")  # COPY text of a bytea in hex: \\x...
        rows.append((int(number), value[3:]))
    return rows


def test_a_first_load_stages_every_row_and_keeps_nothing_per_row() -> None:
    aside = Aside()
    batch = [_digest(f"row {i}") for i in range(5)]
    keep, hashes = aside.split(batch, 100)
    assert keep.tolist() == [True] * 5
    assert _copy_rows(hashes.getvalue()) == [(100 + i, d.hex()) for i, d in enumerate(batch)]
    assert aside.count == len(aside.matches) == 0
    assert aside.copy_to(None, 1) == 0  # nothing set aside: no table, no connection needed


def test_a_redelivery_sets_aside_each_prior_row_once() -> None:
    same, moved = _digest("same"), _digest("moved")
    ctx, other = _digest("ctx"), _digest("other")
    prior = Prior(np.frombuffer(same, np.uint8).reshape(1, -1),
                  np.frombuffer(ctx, np.uint8).reshape(1, -1), np.array([7], np.int64))
    aside = Aside(prior=prior)
    # the unchanged row, a changed one, and a copy of the unchanged row (its second copy is
    # staged: one prior row stands for one row of the file)
    keep, hashes = aside.split([same, moved, same], 0)
    assert keep.tolist() == [False, True, True]
    assert _copy_rows(hashes.getvalue()) == [(1, moved.hex()), (2, same.hex())]
    assert aside.count == 1 and list(aside.matches) == [0]
    assert aside.all_under(ctx) and not aside.all_under(other)


def test_the_whole_digest_decides_and_a_prior_row_stands_for_one_row_across_batches() -> None:
    digests = [_digest(f"row {i}") for i in range(1000)]
    n = len(digests)
    prior = Prior(np.frombuffer(b"".join(digests), np.uint8).reshape(n, -1),
                  np.zeros((n, 16), np.uint8), np.arange(n, dtype=np.int64))
    near = digests[5][:8] + bytes(8)  # the first 8 bytes of a prior digest, not the rest
    assert prior.find(np.frombuffer(near + digests[5], np.uint8).reshape(2, -1)).tolist() == \
        [-1, 5]
    aside = Aside(prior=prior)
    keep, _ = aside.split([digests[3], near, digests[999], _digest("new")], 0)
    assert keep.tolist() == [False, True, False, True]
    # the next batch: row 3's prior row stood for a row already, row 4's has not
    keep, hashes = aside.split([digests[3], digests[4], digests[4]], 4)
    assert keep.tolist() == [True, False, True]
    assert _copy_rows(hashes.getvalue()) == [(4, digests[3].hex()), (6, digests[4].hex())]
    assert sorted(aside.matches) == [3, 4, 999] and aside.count == 3


def test_a_rows_digest_is_xxh3_128_of_its_wkb_and_its_fields_as_staged() -> None:
    """The one definition of a row's digest (etl.row_digest), worked out by hand: the WKB, the
    unit separator, then each field's COPY text with NUL for a null. Stored digests are
    compared with it at every re-delivery: a change of definition, on purpose or not, makes
    the next re-delivery of every layer stage and compare every row again."""
    import pyarrow as pa
    import shapely
    from xxhash import xxh3_128_digest

    from etl import staging
    from etl.row_digest import digests

    wkb = shapely.to_wkb(shapely.box(0, 0, 100, 100))
    batch = pa.RecordBatch.from_pydict({
        "_fid": pa.array(["1", "2"]), "_geom": pa.array([wkb, None], pa.binary()),
        "PIN": pa.array(["P-1", "P-2"]), "OWNER": pa.array(["Ann", None]),
        "ACRES": pa.array([2.4711, 0.5])})
    fields = staging.plan_fields(batch.schema)
    assert [f.name for f in fields] == ["PIN", "OWNER", "ACRES"]
    assert digests(fields, batch) == [
        xxh3_128_digest(wkb + b"\x1fP-1\x1fAnn\x1f2.4711"),
        xxh3_128_digest(b"\x1fP-2\x1f\x00\x1f0.5")]
