"""Which database to use: --db, else RULEM_DATABASE_URL, else the embedded default.

Why this order: a deployment names its database explicitly; a new user with nothing set up
gets a working local PostGIS without writing any configuration.
"""

from __future__ import annotations

import os

from sqlalchemy.engine import make_url


def normalize_url(url: str) -> str:
    """Accept the libpq forms people paste (postgresql://, postgres://) and use psycopg2."""
    u = make_url(url.replace("postgres://", "postgresql://", 1))
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg2")
    return u.render_as_string(hide_password=False)


def database_url(cli_value: str | None = None, owner: bool = False) -> str:
    """The database URL this invocation works on; starts the embedded cluster if needed.

    A URL given (`--db`, RULEM_DATABASE_URL) is used as it is. On the embedded default the
    day-to-day commands (ingest, recompute, check, reconcile, watch, reports) connect as the
    writer login, which owns nothing and so cannot switch off the append-only rules; only
    schema work, backup and restore (owner=True) connect as the owner."""
    url = cli_value or os.environ.get("RULEM_DATABASE_URL")
    if url:
        return normalize_url(url)
    from rulem_db.local import cluster  # only when the embedded default is wanted

    embedded = cluster.ensure_embedded()
    return embedded.owner_url if owner else embedded.writer_url


def redact(url: str) -> str:
    """The URL with its password hidden, for messages and logs."""
    return make_url(url).render_as_string(hide_password=True)
