"""ETags for tiles and items: a digest of the latest writes to the tables a collection reads,
so browsers and proxies revalidate cheaply and never keep stale data.

Why a stamp and not a hash of the body: a 304 must be answered without making the tile (that
is what saves the database). Which tables each view of pub reads is taken from the database
catalogue at start (web.pub_view_sources(), sql/961: pg_rewrite and pg_depend, recursively,
through views and recorded function bodies), not from a hand list; every write statement on
those tables leaves a row in web.table_change, and web.source_stamps() returns each table's
recent change ids. A collection's tag digests the stamps of its own tables (of all of them
when it reads through a function whose body the catalogue does not record), so it changes
when anything it shows changes, and only then. A collection with a source that carries no
change trigger gets no ETag at all (always answered in full). Stamps are read before the
response is made, so a change that lands meanwhile makes the next request's tag new: a
client may fetch once more, never keep old data. Responses carry `Cache-Control: no-cache`
(store, but ask first).
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Callable, Mapping

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# [/history]/collections/{id}/items[/{itemId}] and .../collections/{id}/tiles/{tms}/{z}/{x}/{y},
# and the web map's tile of all its layers, /tiles/{z}/{x}/{y}.mvt (its sources under "/tiles")
_CACHED = re.compile(
    r"^(?:(?:/history)?/collections/(?P<id>[^/]+)/(?:items(?:/[^/]+)?|tiles/[^/]+/\d+/\d+/\d+)/?"
    r"|(?P<map>/tiles)/\d+/\d+/\d+\.mvt)$")
CACHE_CONTROL = "no-cache"
ALL_SOURCES = "*"   # a view reading through an opaque function follows every table

Sources = frozenset[str]


def tag(sources: Sources, stamps: Mapping[str, str], variant: str = "") -> str:
    """The strong ETag of a collection's responses, given web.source_stamps()."""
    names = sorted(stamps) if ALL_SOURCES in sources else sorted(sources)
    text = "|".join(f"{s}={stamps.get(s, '')}" for s in names)
    body = hashlib.sha256(text.encode()).hexdigest()[:20]
    return f'"{body}{"-" + variant if variant else ""}"'


def matches(if_none_match: str, etag: str) -> bool:
    """RFC 9110 weak comparison of an If-None-Match header with our tag."""
    if if_none_match.strip() == "*":
        return True
    ours = etag.removeprefix("W/")
    return any(t.strip().removeprefix("W/") == ours for t in if_none_match.split(","))


class ETagMiddleware:
    """Answers 304 when If-None-Match holds the current tag; otherwise adds ETag and
    Cache-Control to 200 responses of items and tiles."""

    def __init__(self, app: ASGIApp, stamps: Callable,
                 sources: Callable[[], Mapping[str, Sources]]) -> None:
        self.app = app
        self.stamps = stamps     # async (app) -> Mapping[str, str]: web.source_stamps()
        self.sources = sources   # () -> {"pub.parcel": frozenset({"core.parcel"}), ...}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        m = _CACHED.match(scope["path"])
        sources = self.sources().get(m.group("id") or m.group("map")) if m else None
        if sources is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        # the body differs by what the client accepts (JSON, GeoJSON, HTML, gzip), by the
        # base path its links carry and by the query (a parcel tile as of a date, a filter):
        # MapLibre keeps a reloaded tile's old data when the new URL's ETag equals the old
        # one's, so one tag for two bodies showed yesterday's colours after "Today"
        variant = format(zlib.crc32(f"{headers.get('accept', '')}|"
                                    f"{headers.get('accept-encoding', '')}|"
                                    f"{scope.get('root_path', '')}|"
                                    f"{headers.get('host', '')}|".encode()
                                    + scope.get("query_string", b"")), "08x")
        etag = tag(sources, await self.stamps(scope["app"]), variant)
        inm = headers.get("if-none-match")
        if inm and matches(inm, etag):
            await send({"type": "http.response.start", "status": 304,
                        "headers": [(b"etag", etag.encode()),
                                    (b"cache-control", CACHE_CONTROL.encode()),
                                    (b"vary", b"Accept, Accept-Encoding")]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def send_with_tag(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                h = MutableHeaders(scope=message)
                h["ETag"] = etag
                h["Cache-Control"] = CACHE_CONTROL
                h["Vary"] = "Accept, Accept-Encoding"
            await send(message)

        await self.app(scope, receive, send_with_tag)
