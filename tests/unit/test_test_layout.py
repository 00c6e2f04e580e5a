"""The layout of the database tests (README, "Tests"; docs/contributing.md): every test module
in a folder by area, what tests share in tests/support, and no test module importing a test
module of another folder. Why the last: pytest puts a test module's folder on the import path
only when it collects that module, so such an import works in the whole suite and fails when
a folder runs alone (tests/web once imported tests/publish's QGIS fixtures)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
AREAS = {"ingest", "ledger", "checks", "flows", "publish", "web", "security", "database",
         "project", "unit"}
IMPORT = re.compile(r"^\s*(?:from|import)\s+(test_\w+)", re.M)


def test_every_test_module_sits_in_an_area_folder() -> None:
    stray = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert stray == [], f"move into tests/<area>/ ({', '.join(sorted(AREAS))}): {stray}"
    folders = {p.parent.name for p in TESTS.glob("*/test_*.py")}
    assert folders <= AREAS | {"support"}, folders - AREAS
    assert not list((TESTS / "support").glob("test_*.py")), "tests/support holds no tests"


def test_no_test_module_imports_one_of_another_folder() -> None:
    where = {p.stem: p.parent.name for p in TESTS.glob("*/test_*.py")}
    crossing = sorted(
        f"{p.relative_to(TESTS)} imports {name} ({where[name]})"
        for p in TESTS.glob("*/test_*.py")
        for name in IMPORT.findall(p.read_text())
        if name in where and where[name] != p.parent.name)
    assert crossing == [], "move what they share into tests/support: " + "; ".join(crossing)


def test_the_modules_scheduled_first_exist() -> None:
    """tests/support/module_order.py names the longest modules, to start them first: a module
    renamed or removed there would quietly lose its place at the front."""
    from module_order import LONGEST

    root = TESTS.parent
    missing = sorted(name for name in LONGEST if not (root / name).is_file())
    assert missing == [], f"update tests/support/module_order.py's LONGEST: {missing}"
