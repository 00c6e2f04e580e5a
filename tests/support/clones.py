"""A test module's own database: a copy of a template (the migrated session template, or the
demo loaded once per session), dropped afterwards.

Why one helper: every module that shares a database among its tests makes it the same way,
with pytest-postgresql's janitor (which also ends the template's idle connections before
copying it). A test's own database is conftest.py's db_url.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager

from pytest_postgresql.janitor import DatabaseJanitor
from sqlalchemy.engine import URL

_counter = itertools.count()


@contextmanager
def cloned(admin_url: URL, template: str, prefix: str = "rulem_m") -> Iterator[str]:
    """URL (superuser) of a fresh copy of database `template`, dropped afterwards."""
    name = f"{prefix}_{os.getpid()}_{next(_counter)}"
    janitor = DatabaseJanitor(user=admin_url.username, password=admin_url.password,
                              host=admin_url.host or "", port=admin_url.port or 5432,
                              dbname=name, template_dbname=template)
    janitor.init()
    try:
        yield admin_url.set(database=name).render_as_string(hide_password=False)
    finally:
        janitor.drop()
