"""The layering of the packages holds (docs/design.md, "Layout and imports"), checked by
import-linter with the contracts in pyproject.toml ([tool.importlinter]): rulem_cli on top, then
flows and demo (apart from each other), then etl, then the core rulem_db.

Why a test: an import in the wrong direction (the core reaching for the ingest, the ingest for
the flows) ties the layers together and goes unnoticed until one of them cannot be used
without the other. The contracts must pass on the real tree and must fail, naming the import,
when a forbidden one is added: checked on a copy of the packages in tmp_path.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("rulem_db", "etl", "flows", "rulem_cli", "demo", "rulem_web")
LINT = ("import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """import-linter on the packages under root, with root's pyproject.toml.

    In a child process started in root: import-linter puts the working directory first on
    sys.path, so it reads the packages there (a copy included) rather than the installed ones.
    No cache, so no .import_linter_cache folder is left behind.
    """
    return subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache", "--no-logo", str(root / "pyproject.toml")],
        cwd=root, capture_output=True, text=True, timeout=120)


def test_the_tree_keeps_every_contract() -> None:
    done = _lint(REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout, done.stdout


@pytest.mark.parametrize(("module", "added", "contract", "named"), [
    ("rulem_db/db.py", "import flows", "the core (rulem_db) imports neither",
     "rulem_db.db -> flows"),
    ("etl/limits.py", "import flows.runs", "etl does not import flows",
     "etl.limits -> flows.runs"),
    ("flows/runs.py", "from rulem_cli import main", "rulem_cli > flows | demo | rulem_web",
     "flows.runs -> rulem_cli.main"),
])
def test_a_forbidden_import_breaks_its_contract_naming_it(
        tmp_path: Path, module: str, added: str, contract: str, named: str) -> None:
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / module
    target.write_text(target.read_text() + f"\n{added}  # forbidden, added by the test\n")

    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    broken = [line for line in done.stdout.splitlines() if line.endswith(" BROKEN")]
    assert any(line.startswith(contract) for line in broken), done.stdout
    assert named in done.stdout, done.stdout


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (function-local imports included)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_the_run_report_and_its_read_ahead_import_no_circle() -> None:
    """rulem_db/reports/run.py imports prefetch.py and findings_ahead.py; they, frames.py
    that they read with and findings_file.py that writes the findings' file import run.py
    back nowhere, not even inside a function."""
    reports = REPO / "rulem_db" / "reports"
    assert {"rulem_db.reports.prefetch", "rulem_db.reports.findings_ahead"} <= _imports(
        reports / "run.py")
    for module in ("prefetch.py", "findings_ahead.py", "frames.py", "findings_file.py"):
        assert not {m for m in _imports(reports / module)
                    if m.startswith("rulem_db.reports.run")}, module
    assert not {m for m in _imports(reports / "frames.py") if m.startswith("rulem_db.reports.")}
