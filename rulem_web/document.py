"""A permit's decision document on request: GET /permits/{permit_no}/document.pdf.

Why in the service: the web map's panel links a permit to the paper the District signs, so a
clerk or an applicant reads the decision where they read the map. The PDF is the one
`rulem-db permit report` writes (rulem_db.reports.permit), read from pub as the service's
reader login, over a connection of its own (the document's reader is synchronous) that is
read-only like the pool's.

Rendering takes seconds, so a document is kept, per permit, date and paper, with the data's
change stamp it was made at (web.source_stamps(), the ETags' stamps, all tables: the
document reads most of pub): the same stamp answers from memory, or 304 to a client that
holds the tag; any write to the data makes the next request render afresh. At most
RENDERS_AT_ONCE documents render at a time, so requests cannot take every core.

The permit number is request input: it must match the permit layer's own pattern (two
digits, a dash, three or four digits) before anything reads it, and it reaches SQL only as a
bound parameter. An unknown permit is a 404; a malformed one a 400.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections import OrderedDict
from typing import Any

import sqlalchemy as sa
from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from rulem_db.reports.permit.read import UnknownPermit
from rulem_web.api import error
from rulem_web.database import STATEMENT_TIMEOUT_MS, PoolSettings
from rulem_web.etag import ALL_SOURCES, CACHE_CONTROL, matches, tag

# The permit layer's CHECK on permit_no (rulem_db/catalogue/layers.py), anchored.
PERMIT_NO = re.compile(r"^[0-9]{2}-[0-9]{3,4}$")
DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")
PAPERS = ("letter", "a4")
CACHED_DOCUMENTS = 32
RENDERS_AT_ONCE = 2
PATH = "/permits/{permit_no}/document.pdf"


class DocumentCache:
    """The documents made, by (permit, date, paper), each with the ETag it was made at."""

    def __init__(self, size: int = CACHED_DOCUMENTS) -> None:
        self.size = size
        self.items: OrderedDict[tuple[str, str, str], tuple[str, bytes]] = OrderedDict()

    def get(self, key: tuple[str, str, str], etag: str) -> bytes | None:
        held = self.items.get(key)
        if held is None or held[0] != etag:
            return None
        self.items.move_to_end(key)
        return held[1]

    def put(self, key: tuple[str, str, str], etag: str, pdf: bytes) -> None:
        self.items[key] = (etag, pdf)
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)


def sync_engine(pool: PoolSettings) -> sa.Engine:
    """An engine on the service's reader login for the document's synchronous reader: no pool
    (a document is seconds of work; a connection is milliseconds), read-only, bounded."""
    url = sa.engine.make_url(pool.dsn).set(drivername="postgresql+psycopg2")
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args={
        "options": f"-c default_transaction_read_only=on "
                   f"-c statement_timeout={STATEMENT_TIMEOUT_MS * 2}",
        "application_name": "rulem-db serve (document)"})
    if pool.set_role:
        role = pool.set_role.replace('"', '""')

        @sa.event.listens_for(engine, "connect")
        def _set_role(dbapi_conn: Any, _record: Any) -> None:
            with dbapi_conn.cursor() as cur:
                cur.execute(f'SET ROLE "{role}"')
            dbapi_conn.commit()

    return engine


def _render(engine: sa.Engine, permit_no: str, as_of: dt.date | None, paper: str) -> bytes:
    from rulem_db.reports.permit import document_pdf

    with engine.connect() as conn:
        pdf, _pages = document_pdf(conn, permit_no, as_of, paper)
    return pdf


def register(app: FastAPI, pool: PoolSettings) -> None:
    """Add the document route to the service (rulem_web.app calls this once)."""
    cache = DocumentCache()
    renders = asyncio.Semaphore(RENDERS_AT_ONCE)
    engines: list[sa.Engine] = []

    @app.get(PATH, include_in_schema=True, tags=["Documents"],
             summary="A permit's decision document (PDF)")
    async def permit_document(request: Request, permit_no: str, as_of: str | None = None,
                              paper: str = "letter") -> Response:
        """The decision document of a permit as a tagged PDF; as_of (YYYY-MM-DD) reads the
        ledger and conditions as they stood then, paper is letter or a4."""
        if len(permit_no) > 12 or not PERMIT_NO.match(permit_no):
            return error(400, "a permit number is two digits, a dash and three or four "
                              "digits, e.g. 24-004")
        on = None
        if as_of is not None:
            try:
                on = dt.date.fromisoformat(as_of) if DATE.match(as_of) else None
            except ValueError:
                on = None
            if on is None:
                return error(400, "as_of is a date, YYYY-MM-DD")
        if paper not in PAPERS:
            return error(400, "paper is letter or a4")
        async with request.app.state.pool.acquire() as conn:
            known = await conn.fetchval("SELECT EXISTS (SELECT 1 FROM pub.permit "
                                        "WHERE permit_no = $1)", permit_no)
            stamps = {r["source"]: r["stamp"]
                      for r in await conn.fetch("SELECT source, stamp FROM web.source_stamps()")}
        if not known:
            return error(404, f"no permit {permit_no}")
        key = (permit_no, on.isoformat() if on else "", paper)
        etag = tag(frozenset({ALL_SOURCES}), stamps, "-".join(key))
        headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL}
        inm = request.headers.get("if-none-match")
        if inm and matches(inm, etag):
            return Response(status_code=304, headers=headers)
        pdf = cache.get(key, etag)
        if pdf is None:
            async with renders:
                pdf = cache.get(key, etag)     # made by the request we waited for
                if pdf is None:
                    if not engines:
                        engines.append(sync_engine(pool))
                    try:
                        pdf = await run_in_threadpool(_render, engines[0], permit_no, on,
                                                      paper)
                    except UnknownPermit:   # gone since the lookup above
                        return error(404, f"no permit {permit_no}")
                    cache.put(key, etag, pdf)
        headers["Content-Disposition"] = f'inline; filename="permit-{permit_no}.pdf"'
        return Response(pdf, media_type="application/pdf", headers=headers)
