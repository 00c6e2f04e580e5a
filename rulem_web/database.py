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

Every connection is put back to these settings each time it returns to the pool (_reset):
RESET ALL, SET ROLE again, the settings again. A request can change nothing of its session
through the filter allow-list (rulem_web.filters); this is the second line, so that a role,
a timeout or a search path changed by any route never reaches the next request.

Numerics as doubles (NUMERIC_AS_FLOAT): GIS clients read acres as numbers, and tipg writes
asyncpg's Decimals as strings; the views publish acres rounded to 4 decimals, which a double
holds exactly enough to print the same digits.
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


def session_sql(set_role: str | None) -> str:
    """The statements that put a connection in the service's known state."""
    # RESET ALL leaves the role alone (it is not reset by it): set or reset it explicitly
    role = f'SET ROLE "{set_role}"; ' if set_role else "RESET ROLE; "
    return (f"RESET ALL; {role}"
            f"SELECT set_config('search_path', '{SEARCH_PATH}', false), "
            "set_config('default_transaction_read_only', 'on', false), "
            f"set_config('statement_timeout', '{STATEMENT_TIMEOUT_MS}', false), "
            "set_config('idle_in_transaction_session_timeout', "
            f"'{STATEMENT_TIMEOUT_MS}', false), "
            "set_config('plan_cache_mode', 'force_generic_plan', false), "
            "set_config('application_name', 'rulem-db serve', false)")


async def _init(conn: asyncpg.Connection, set_role: str | None) -> None:
    await conn.set_type_codec("json", encoder=orjson.dumps, decoder=orjson.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("jsonb", encoder=orjson.dumps, decoder=orjson.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("numeric", encoder=str, decoder=float, schema="pg_catalog",
                              format="text")
    await conn.execute(session_sql(set_role))


async def create_pool(settings: PoolSettings) -> asyncpg.Pool:
    """A pool of reader connections (the caller closes it)."""
    role = settings.set_role

    async def init(conn: asyncpg.Connection) -> None:
        await _init(conn, role)

    async def reset(conn: asyncpg.Connection) -> None:
        await _reset(conn, role)

    return await asyncpg.create_pool(settings.dsn, min_size=settings.min_size,
                                     max_size=settings.max_size, init=init, reset=reset)


async def _reset(conn: asyncpg.Connection, set_role: str | None) -> None:
    """Between requests: end a transaction left open and put the session back to the
    service's settings (role, search path, read-only, timeouts).

    Not asyncpg's default reset: it runs pg_advisory_unlock_all(), which readers may not
    call (sql/superuser/harden.sql), and its RESET ALL alone would leave the session as its
    login with no search path; nothing here takes locks, listens or keeps cursors."""
    if conn.is_in_transaction():
        await conn.execute("ROLLBACK")
    await conn.execute(session_sql(set_role))
