"""Problem lines escape control characters (etl.problems); the refusals of real files, which
need a database, are tested in tests/security/test_hardening_refusals.py.

Why: a file name or value carrying an escape sequence must never reach a terminal raw.
"""

from __future__ import annotations

from etl.problems import IngestRefused, Problem, printable


def test_problem_lines_escape_every_control_character() -> None:
    p = Problem("a\tb.gpkg", "value 'x\x00y\x9b' is not a code", feature="1", field="f\ng")
    assert p.line() == "a\\x09b.gpkg: feature 1: f\\x0ag: value 'x\\x00y\\x9b' is not a code"
    err = IngestRefused("a\tb.gpkg", [p], hint="nothing\x1b was loaded")
    assert str(err) == p.line() + "; nothing\\x1b was loaded"
    assert printable("Zoë, 24-017 / W-1 \\ ok") == "Zoë, 24-017 / W-1 \\ ok"
