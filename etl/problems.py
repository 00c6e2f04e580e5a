"""What goes wrong with a delivered file, said so that the person holding it can fix it.

Why a type of its own: ingest finds problems in two places (Python, while opening and reading
the file; SQL, while validating every feature) and reports them the same way: one line per
problem naming the file, the feature, the field or geometry, and what to do about it. A
refusal carries every line (the CLI prints them) and a one-line summary as its message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Characters that must not reach a terminal raw: C0 and C1 controls (ESC starts ANSI escape
# sequences, CR rewrites the line, LF splits it), DEL, the line and paragraph separators, and
# the bidirectional overrides and isolates that reorder what is shown.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """text with every control character written as its escape (\\x1b, \\r, \\u202e), so
    that a file name, a field name or a value echoed in a message can neither forge nor hide
    output on the terminal of the person reading it, and a problem stays one line."""
    return _UNPRINTABLE.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return f"\\x{ord(c):02x}" if ord(c) <= 0xFF else f"\\u{ord(c):04x}"


@dataclass(frozen=True)
class Problem:
    """One problem: where (file, feature, field) and what to do (message)."""

    file: str
    message: str
    feature: str | None = None  # the file's feature id
    key: str | None = None  # the feature's key, when it has one
    field: str | None = None  # a field, a column, or 'geometry'
    kind: str = "error"  # error, skipped, warning, repaired or info

    def line(self) -> str:
        """The problem as one line: file: feature F (key K): field: message (control
        characters escaped: etl.problems.printable)."""
        where = [self.file]
        if self.feature is not None:
            feature = f"feature {self.feature}"
            if self.key is not None and self.key != self.feature:
                feature += f" (key {self.key})"
            where.append(feature)
        if self.field:
            where.append(self.field)
        return printable(": ".join(where + [self.message]))


class IngestError(Exception):
    """A file that cannot be ingested; the message is one line that says why and what to do."""

    exit_code = 1


class IngestRefused(IngestError):
    """A file refused for the problems listed; the database was left exactly as it was."""

    def __init__(self, file: str, problems: list[Problem], total: int | None = None,
                 hint: str | None = None) -> None:
        self.file = file
        self.problems = problems
        self.total = total if total is not None else len(problems)
        # a line the CLI prints with the problems (the file's fields that map to no column)
        self.notice: str | None = None
        first = problems[0].line() if problems else f"{printable(file)}: refused"
        more = self.total - 1
        summary = first if more <= 0 else f"{first} (and {more} more problem{'s' * (more > 1)})"
        if hint:
            summary += f"; {printable(hint)}"
        super().__init__(summary)

    def lines(self) -> list[str]:
        """Every problem, one line each (at most those kept; total says how many there were)."""
        out = [p.line() for p in self.problems]
        if self.total > len(self.problems):
            out.append(f"{printable(self.file)}: ... and {self.total - len(self.problems)} "
                       "more problems of the kinds above")
        return out


def refuse(file: str, message: str, field: str | None = None) -> IngestRefused:
    """A refusal for a problem of the whole file (no feature)."""
    return IngestRefused(file, [Problem(file, message, field=field)])
