"""Which commands may run on a read-only standby (rulem_cli/read_only.py): every command the
parser knows is classified, and the argument-dependent ones go the right way."""

from __future__ import annotations

import argparse

import pytest

from rulem_cli import main as cli
from rulem_cli import read_only


def _names(parser: argparse.ArgumentParser) -> set[str]:
    """Every "command" and "command action" the parser accepts."""
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                inner = _names(sub)
                found |= {f"{name} {x}" for x in inner} if inner else {name}
    return found


def test_every_command_is_classified_as_reading_or_writing() -> None:
    names = _names(cli.build_parser())
    assert "recompute" in names and "finding list" in names
    unclassified = sorted(
        n for n in names
        if not {n, n.split()[0], " ".join(n.split()[:2])} & (read_only.READING | read_only.WRITING))
    assert unclassified == [], "say in rulem_cli/read_only.py whether these write"


@pytest.mark.parametrize(("argv", "writes"), [
    (["recompute"], True), (["check"], True), (["check", "--last"], False),
    (["finding", "ack", "3"], True), (["finding", "list"], False), (["balance"], False),
    (["schedule", "--dry-run"], False), (["schedule"], True), (["db", "status"], False),
    (["db", "migrate"], True), (["export", "x.gpkg"], False),
    (["statement", "--year", "2024"], False), (["statement", "--year", "2024", "--issue"], True),
])
def test_writing_follows_the_arguments(argv: list[str], writes: bool) -> None:
    assert read_only.writes(cli.build_parser().parse_args(argv)) is writes


def test_only_a_named_database_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The embedded default is a primary by construction: no extra connection for it."""
    asked: list[str] = []
    monkeypatch.setattr(read_only.dbmod, "refuse_standby", lambda url, doing: asked.append(doing))
    monkeypatch.delenv("RULEM_DATABASE_URL", raising=False)
    read_only.refuse_on_standby(cli.build_parser().parse_args(["recompute"]))
    assert asked == []
    read_only.refuse_on_standby(cli.build_parser().parse_args(
        ["--db", "postgresql://u@127.0.0.1:1/x", "finding", "waive", "1", "--reference", "V"]))
    assert asked == ["finding waive"]
