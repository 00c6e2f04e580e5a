"""Give memory freed by a finished batch back to the operating system.

Why: the reader thread (etl.reading.ahead) and the COPY allocate each batch's buffers (Arrow
arrays, shapely geometries, the CSV text) in different threads, so glibc serves them from different
malloc arenas, and freed space fragments instead of being reused: the peak RSS of an ingest of
1,000,000 polygons grew to 1.24-1.26 times that of 100,000, where memory should stay flat
(docs/scaling.md). `malloc_trim` returns the arenas' free pages after each batch; it costs well
under a millisecond per 25,000-feature batch.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import lru_cache


@lru_cache(maxsize=1)
def _malloc_trim():  # noqa: ANN202 - a ctypes function or None
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def release_free_memory() -> None:
    """Return free heap pages to the operating system (glibc only; a no-op elsewhere)."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
