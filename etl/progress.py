"""Progress of an ingest: a bar on a terminal for files that take more than a moment, nothing
otherwise (scripts, tests, the nightly flow).

Why a tiny protocol: the ingest API is called by the CLI (a person watching), by flows and by
tests; each passes what suits it, and the ingest code only says what it is doing.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol


class Progress(Protocol):
    """What ingest reports: stages, and rows read out of a known (or unknown) total."""

    def stage(self, text: str) -> None: ...

    def rows(self, done: int, total: int | None) -> None: ...

    def close(self) -> None: ...


class Silent:
    """No output at all."""

    def stage(self, text: str) -> None:
        pass

    def rows(self, done: int, total: int | None) -> None:
        pass

    def close(self) -> None:
        pass


class Bar:
    """A rich progress bar on stderr, shown only after `delay` seconds (quick files stay quiet)."""

    def __init__(self, label: str, delay: float = 0.5) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                  MofNCompleteColumn(), TimeElapsedColumn(), transient=True,
                                  console=Console(stderr=True),
                                  disable=not sys.stderr.isatty())
        self._label = label
        self._task = None
        self._started = time.monotonic()
        self._delay = delay
        self._shown = False
        self._done, self._total = 0, None

    def _show(self) -> None:
        if not self._shown and time.monotonic() - self._started >= self._delay:
            self._progress.start()
            self._task = self._progress.add_task(self._label, total=self._total,
                                                 completed=self._done)
            self._shown = True

    def stage(self, text: str) -> None:
        self._show()
        if self._task is not None:
            self._progress.update(self._task, description=f"{self._label}: {text}")

    def rows(self, done: int, total: int | None) -> None:
        self._done, self._total = done, total
        self._show()
        if self._task is not None:
            self._progress.update(self._task, completed=done, total=total)

    def close(self) -> None:
        if self._shown:
            self._progress.stop()


def for_terminal(label: str) -> Progress:
    """A bar when stderr is a terminal, else silence."""
    return Bar(label) if sys.stderr.isatty() else Silent()
