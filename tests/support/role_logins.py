"""Real logins of the group roles, for tests that try the database as each kind of client would.

Why real logins over TCP and not SET ROLE: a superuser's session that sets a role keeps its
temporary schema and can set the role back; a login of a group is what staff, QGIS, the web
service and the nightly are. "web" is a login like the web service's (rulem_web.login): a member
of rulem_gis whose transactions are read-only by default.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.engine import URL, make_url
from sqlalchemy.pool import NullPool


@contextmanager
def role_logins(admin_url: URL, roles: tuple[str, ...], tag: str) -> Iterator[dict[str, URL]]:
    """One login per role of `roles` (a group role, or "web"), as URLs without a database;
    dropped afterwards with whatever they own."""
    suffix = f"{os.getpid()}_{secrets.token_hex(3)}"
    password = secrets.token_urlsafe(16)
    made: dict[str, URL] = {}
    admin = sa.create_engine(admin_url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            for role in roles:
                name = f"t_{tag}_{role.removeprefix('rulem_')}_{suffix}"
                group = "rulem_gis" if role == "web" else role
                conn.execute(sa.text(f"CREATE ROLE {name} LOGIN PASSWORD :pw IN ROLE {group}"),
                             {"pw": password})
                if role == "web":
                    conn.execute(sa.text(
                        f"ALTER ROLE {name} SET default_transaction_read_only = on"))
                made[role] = admin_url.set(username=name, password=password)
        yield made
    finally:
        with admin.connect() as conn:
            for url in made.values():
                conn.execute(sa.text(f"DROP OWNED BY {url.username}"))
                conn.execute(sa.text(f"DROP ROLE IF EXISTS {url.username}"))
        admin.dispose()


def as_login(url: str, login: URL) -> sa.Engine:
    """An engine on database `url` as `login`."""
    return sa.create_engine(make_url(url).set(username=login.username, password=login.password),
                            poolclass=NullPool)


def as_login_url(url: str, login: URL) -> str:
    """Database `url` as `login`, as a URL string (for rulem-db's own functions)."""
    return make_url(url).set(username=login.username, password=login.password).render_as_string(
        hide_password=False)
