"""ETags for tiles and items: the layer's latest change, so browsers and proxies revalidate
cheaply and never keep a stale tile.

Why a stamp and not a hash of the body: a 304 must be answered without making the tile (that
is what saves the database). web.change_stamps() (sql/960) returns the latest layer write,
ledger posting, check run and finding review, each an id that only grows; a view of pub
follows the layer writes, plus the ledger when it reads the ledger, plus the checks when it
reads the checks (web.pub_view_kind(), read at start). Read before the response is made, so
a change that lands meanwhile makes the next request's tag new: a client may fetch once more,
never keep old data. Responses carry `Cache-Control: no-cache` (store, but ask first).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# /collections/{id}/items[/{itemId}] and /collections/{id}/tiles/{tms}/{z}/{x}/{y}
_CACHED = re.compile(
    r"^/collections/(?P<id>[^/]+)/(?:items(?:/[^/]+)?|tiles/[^/]+/\d+/\d+/\d+)/?$")
CACHE_CONTROL = "no-cache"


@dataclass(frozen=True)
class ViewKind:
    """Which kinds of change a published view follows."""

    reads_ledger: bool = False
    reads_checks: bool = False


def tag(kind: ViewKind, stamps: Mapping[str, int | None], variant: str = "") -> str:
    """The strong ETag of a view's responses, given web.change_stamps()."""
    parts = [stamps.get("layer_write") or 0]
    if kind.reads_ledger:
        parts.append(stamps.get("ledger_entry") or 0)
    if kind.reads_checks:
        parts += [stamps.get("check_run") or 0, stamps.get("finding_review") or 0]
    body = "-".join(str(p) for p in parts)
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

    def __init__(self, app: ASGIApp, stamps: Callable, kinds: Callable[[], Mapping[str,
                 ViewKind]]) -> None:
        self.app = app
        self.stamps = stamps   # async () -> Mapping[str, int | None]
        self.kinds = kinds     # () -> {"pub.parcel": ViewKind, ...}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        m = _CACHED.match(scope["path"])
        kind = self.kinds().get(m.group("id")) if m else None
        if kind is None:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        # the body differs by what the client accepts (JSON, GeoJSON, HTML, gzip)
        variant = format(zlib.crc32(f"{headers.get('accept', '')}|"
                                    f"{headers.get('accept-encoding', '')}".encode()), "08x")
        etag = tag(kind, await self.stamps(scope["app"]), variant)
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
