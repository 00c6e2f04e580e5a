"""Where the project's own files are: the repository is the install (editable), so sql/,
migrations/ and the shared data folder are found relative to this package."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SQL_DIR = ROOT / "sql"
HARDEN_SQL = SQL_DIR / "superuser" / "harden.sql"  # run by a superuser (catalogue/hardening.py)
MIGRATIONS_DIR = ROOT / "migrations"
ALEMBIC_INI = ROOT / "alembic.ini"


def shared_dir() -> Path:
    """The team's read-only shared folder (rule text, design notes, real data sets)."""
    return Path(os.environ.get("RULEM_SHARED_DIR", ROOT.parent / "shared"))
