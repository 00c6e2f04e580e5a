"""A ledger watcher (`rulem-db watch`, rulem_db/ledger/watch.py) run on a thread in a test, its
events read from a queue: shared by the watch tests and the edit views' (an edit through QGIS
reaches the ledger through the watcher)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from rulem_db.ledger.watch import LedgerWatch, WatchEvent

WAIT = 30.0  # seconds a test waits for an event before failing (a run takes well under 1 s)


@contextmanager
def watching(url: str, **kw) -> Iterator[tuple[LedgerWatch, queue.Queue[WatchEvent]]]:
    """A watcher on its own thread, its events in a queue; stopped and joined at the end."""
    events: queue.Queue[WatchEvent] = queue.Queue()
    watch = LedgerWatch(url, debounce=kw.pop("debounce", 0.05),
                        retry_seconds=kw.pop("retry_seconds", 0.2), on_event=events.put, **kw)
    thread = threading.Thread(target=watch.run, name="ledger-watch", daemon=True)
    thread.start()
    try:
        assert watch.listening.wait(WAIT), "the watcher never listened"
        yield watch, events
    finally:
        watch.stop.set()
        thread.join(WAIT)
        assert not thread.is_alive(), "the watcher did not stop"


def next_event(events: queue.Queue[WatchEvent]) -> WatchEvent:
    try:
        return events.get(timeout=WAIT)
    except queue.Empty:
        raise AssertionError(f"no watch event within {WAIT:g} s") from None
