"""The reader thread of the ingest (etl.reading.ahead): order, errors and closing. The speed
work's database guarantees are tested in tests/ingest/test_ingest_speed.py.

Why: ahead() reads GDAL features in a thread of its own; an item lost or reordered, an error
swallowed, or a producer left open when the consumer stops would corrupt or hang an ingest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from etl.reading import ahead


def test_ahead_yields_every_item_in_order() -> None:
    assert list(ahead(iter(range(100)), depth=2)) == list(range(100))


def test_ahead_raises_the_producers_error_where_its_item_would_have_come() -> None:
    def items() -> Iterator[int]:
        yield 1
        yield 2
        raise ValueError("feature 3 is broken")

    got = []
    with pytest.raises(ValueError, match="feature 3 is broken"):
        for x in ahead(items()):
            got.append(x)
    assert got == [1, 2]


def test_ahead_stops_and_closes_the_producer_when_the_consumer_stops() -> None:
    closed_in: list[str] = []

    def items() -> Iterator[int]:
        try:
            yield from range(1_000_000)
        finally:
            closed_in.append(threading.current_thread().name)

    for x in ahead(items(), depth=2):
        if x == 3:
            break
    # the generator was closed in the reader thread (where a GDAL dataset would be open),
    # and that thread has ended
    assert closed_in == ["rulem-read-ahead"]
    assert not any(t.name == "rulem-read-ahead" for t in threading.enumerate())
