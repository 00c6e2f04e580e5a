"""A tablespace in a new folder on the memory file system (tmpfs), for test databases.

Why one helper: each test process makes one for its own databases (tests/conftest.py) and a
run's first worker makes one for what the workers share (shared_templates.py), the same way.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import sqlalchemy as sa


def create(conn: sa.Connection, name: str, memory_fs: Path, data_directory: Path) -> Path | None:
    """Make tablespace `name` in a new folder under `memory_fs`, owned like the server's data
    directory (which must be on this machine); its folder, or None when the server cannot use
    one (no rights to hand it over or to make the tablespace)."""
    folder = Path(tempfile.mkdtemp(prefix=f"{name}_", dir=memory_fs))
    try:
        owner = data_directory.stat()
        os.chown(folder, owner.st_uid, owner.st_gid)
        conn.exec_driver_sql(f"CREATE TABLESPACE \"{name}\" LOCATION '{folder}'")
    except (OSError, sa.exc.DBAPIError):
        shutil.rmtree(folder, ignore_errors=True)
        return None
    return folder
