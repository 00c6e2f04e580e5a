"""The service's connection pool: asyncpg connections that create nothing.

Why not tipg's own connect_to_db: its connection init runs tipg's catalog SQL, which creates
functions in pg_temp and so needs the TEMPORARY privilege that readers do not have here
(rulem_db.db._no_temporary_objects_for_readers). Revision 0026 installs those functions once
in schema `web`; each connection here only sets its JSON codecs, its search path (web for
tipg's functions, then pub) and read-only transactions, so even a bug in a query cannot
write.

Generic plans (plan_cache_mode): asyncpg prepares every statement once per connection, but
PostgreSQL still plans a parameterised query afresh at each execution while its custom plans
look cheaper, and planning the views behind a parcel's panel (pub.finding joins half the
checks schema) costs 5-8 ms against 1 ms of execution. The service's queries are lookups by
key and tiles by envelope, whose generic plans use the same indexes.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg
import orjson

SEARCH_PATH = "web, pub, public"
STATEMENT_TIMEOUT_MS = 30_000  # one runaway request must not hold a connection for long


@dataclass(frozen=True)
class PoolSettings:
    """Where and how to connect: the reader's DSN, an optional SET ROLE, the pool size."""

    dsn: str
    set_role: str | None = None
    min_size: int = 1
    max_size: int = 10


async def _init(conn: asyncpg.Connection, set_role: str | None) -> None:
    await conn.set_type_codec("json", encoder=orjson.dumps, decoder=orjson.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("jsonb", encoder=orjson.dumps, decoder=orjson.loads,
                              schema="pg_catalog")
    if set_role:
        await conn.execute(f'SET ROLE "{set_role}"')
    await conn.execute(
        f"SELECT set_config('search_path', '{SEARCH_PATH}', false), "
        "set_config('default_transaction_read_only', 'on', false), "
        f"set_config('statement_timeout', '{STATEMENT_TIMEOUT_MS}', false), "
        "set_config('plan_cache_mode', 'force_generic_plan', false), "
        "set_config('application_name', 'rulem-db serve', false)")


async def create_pool(settings: PoolSettings) -> asyncpg.Pool:
    """A pool of reader connections (the caller closes it)."""
    role = settings.set_role

    async def init(conn: asyncpg.Connection) -> None:
        await _init(conn, role)

    return await asyncpg.create_pool(settings.dsn, min_size=settings.min_size,
                                     max_size=settings.max_size, init=init, reset=_reset)


async def _reset(conn: asyncpg.Connection) -> None:
    """Between requests: end a transaction left open, keep the session's settings.

    asyncpg's default reset runs pg_advisory_unlock_all(), which readers may not call here
    (sql/superuser/harden.sql), and RESET ALL, which would undo the search path, the
    read-only default and SET ROLE; nothing here takes locks, listens or keeps cursors."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")
