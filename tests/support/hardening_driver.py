"""A child process for the crash tests: runs `rulem-db` (or a recompute with a small chunk) so
the test can kill it at a known point.

Usage:
  hardening_driver.py cli [--stall-copy MARKER RELEASE] -- <rulem-db arguments>
  hardening_driver.py recompute URL CHUNK

--stall-copy makes the first COPY ... FROM STDIN stop after sending half its data: the driver
writes MARKER and waits (up to two minutes) for RELEASE to exist. Meanwhile the server backend
sits inside the COPY waiting for the rest (wait event ClientRead), which is where the test
kills it: deterministic, with no sleeping and hoping.

Why patch psycopg2.connect: ingest opens its own engine, and a cursor factory on the
connection is the one hook that reaches the COPY without touching the code under test.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path
from typing import Any

import psycopg2
import psycopg2.extensions


class _StallingReader(io.RawIOBase):
    """Hands out the first half of a COPY's data, then stalls until released."""

    def __init__(self, inner: Any, marker: Path, release: Path) -> None:
        super().__init__()
        self.inner, self.marker, self.release = inner, marker, release
        data = inner.read()
        self.data = data.encode() if isinstance(data, str) else data
        self.pos = 0
        self.stalled = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        half = max(1, len(self.data) // 2)
        if self.pos >= half and not self.stalled:
            self.stalled = True
            self.marker.write_text("stalled in COPY")
            deadline = time.monotonic() + 120
            while not self.release.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        end = len(self.data) if self.stalled else half
        if size is not None and size >= 0:
            end = min(end, self.pos + size)
        chunk = self.data[self.pos:end]
        self.pos = end
        return chunk


def _stall_first_copy(marker: Path, release: Path) -> None:
    state = {"done": False}

    class StallingCursor(psycopg2.extensions.cursor):
        def copy_expert(self, sql: str, file: Any, size: int = 8192) -> Any:
            if not state["done"] and "FROM STDIN" in sql.upper():
                state["done"] = True
                file = _StallingReader(file, marker, release)
            return super().copy_expert(sql, file, size)

    original = psycopg2.connect

    def connect(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("cursor_factory", StallingCursor)
        return original(*args, **kwargs)

    psycopg2.connect = connect


def main(argv: list[str]) -> int:
    if argv[0] == "recompute":
        from rulem_db import ledger

        summary = ledger.recompute(argv[1], all=True, workers=1, chunk=int(argv[2]))
        print(summary)
        return 0
    rest = argv[1:]
    if rest[0] == "--stall-copy":
        _stall_first_copy(Path(rest[1]), Path(rest[2]))
        rest = rest[3:]
    if rest[0] == "--":
        rest = rest[1:]
    from rulem_cli import main as cli

    return cli.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
