"""The service's outer guard: request size, Host and X-Forwarded-Prefix checked before any
route runs, security headers on every answer, and errors said in one line without the
database's or Python's own text.

Why here and not in each route: a request body is read by whichever route gets it, so its
size must be capped before (a 250 MB POST was held in memory before the screen refused
it); a Host or prefix reaches every link tipg writes; an asyncpg or Python message can carry
the server's version, the SQL tipg built or a file path, and none of that is for an
anonymous client. The limits and headers are listed in docs/publishing.md ("Web service").
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable

import asyncpg
import morecantile.errors
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from tipg import errors as tipg_errors

log = logging.getLogger("rulem_web")

MAX_BODY_BYTES = 1_048_576   # the largest request body read (the screen's footprint fits)
MAX_PREFIX_CHARS = 200
# A host name, IPv4 or bracketed IPv6 address, and an optional port; nothing else.
HOST = re.compile(r"^(?:[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,252})|\[[0-9A-Fa-f:.]{2,45}\])"
                  r"(?::[0-9]{1,5})?$")
# A base path: segments of unreserved URL characters.
PREFIX = re.compile(r"^(?:/[A-Za-z0-9._~-]+)*/?$")


def content_security_policy(image_origins: Iterable[str] = ()) -> str:
    """The policy of every answer: this origin only, plus the origins a configured basemap's
    images come from (rulem_web.basemap checks them: scheme://host[:port], nothing else)."""
    images = " ".join(("'self'", "data:", "blob:", *image_origins))
    return "; ".join((
        "default-src 'none'", "script-src 'self'", "style-src 'self'",
        f"img-src {images}", "font-src 'self'", "connect-src 'self'",
        "worker-src 'self' blob:", "child-src 'self' blob:", "manifest-src 'self'",
        "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"))


def security_headers(image_origins: Iterable[str] = ()) -> tuple[tuple[bytes, bytes], ...]:
    """The headers added to every answer."""
    return ((b"content-security-policy", content_security_policy(image_origins).encode()),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
            (b"x-frame-options", b"DENY"))


SECURITY_HEADERS = security_headers()


# Numeric query parameters of tipg's routes, with the range any sensible request stays in: a
# value past it (10**30, nan, -1) reached Python's int conversion, asyncpg or PostGIS as a
# 500. A parameter outside its range is a 400 before any route runs.
INT_PARAMS = {"limit": (0, 100_000), "offset": (0, 1_000_000_000), "minzoom": (0, 30),
              "maxzoom": (0, 30)}
FLOAT_PARAMS = {"simplify": (0.0, 1e6)}
MAX_ID = 2 ** 63 - 1
_ITEM = re.compile(r"/items/(?P<id>[0-9]+)/?$")


def parameter_problem(path: str, query: str) -> str | None:
    """Why the request's numeric parameters cannot be served, or None."""
    from urllib.parse import parse_qsl

    m = _ITEM.search(path)
    if m and int(m.group("id")) > MAX_ID:
        return "item id out of range"
    for name, value in parse_qsl(query, keep_blank_values=True):
        if name in INT_PARAMS:
            low, high = INT_PARAMS[name]
            if not (value.isdigit() and low <= int(value) <= high):
                return f"{name} is a whole number from {low} to {high}"
        elif name in FLOAT_PARAMS:
            low, high = FLOAT_PARAMS[name]
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not (math.isfinite(number) and low <= number <= high):
                return f"{name} is a number from {low:g} to {high:g}"
        elif name == "ids":
            for one in value.split(","):
                if len(one) > 100 or (one.isdigit() and int(one) > MAX_ID):
                    return "ids holds an id out of range"
    return None


class BodyTooLarge(Exception):
    """A request body went past MAX_BODY_BYTES while being read."""


def valid_prefix(prefix: str) -> bool:
    """A base path of safe characters (what may be written into links and pages)."""
    return len(prefix) <= MAX_PREFIX_CHARS and PREFIX.match(prefix) is not None


async def _answer(send: Send, status: int, message: str,
                  extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = JSONResponse({"detail": message}).body
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-cache"), *SECURITY_HEADERS, *extra]})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    """Refuses a bad Host (400) or a body over MAX_BODY_BYTES (413, by Content-Length before
    reading, or by counting a streamed/chunked body), and adds the security headers (images
    also from `image_origins`: a configured basemap's)."""

    def __init__(self, app: ASGIApp, max_body: int = MAX_BODY_BYTES,
                 image_origins: tuple[str, ...] = ()) -> None:
        self.app = app
        self.max_body = max_body
        self.headers = security_headers(image_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if host and not HOST.match(host):
            await _answer(send, 400, "the Host header is not a host name and port")
            return
        problem = parameter_problem(scope.get("path", ""),
                                    scope.get("query_string", b"").decode("latin-1"))
        if problem:
            await _answer(send, 400, problem)
            return
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit():
                await _answer(send, 400, "Content-Length is not a number")
                return
            if int(length) > self.max_body:
                await _answer(send, 413, f"the request body is larger than "
                                         f"{self.max_body} bytes", ((b"connection", b"close"),))
                return
        seen = 0
        started = False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge
            return message

        async def with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in self.headers if h[0] not in names)]
            await send(message)

        try:
            await self.app(scope, counted, with_headers)
        except BodyTooLarge:
            if not started:
                await _answer(send, 413, f"the request body is larger than {self.max_body} "
                                         "bytes", ((b"connection", b"close"),))


# Errors that are the request's fault, by tipg's exception class.
_CLIENT_ERRORS: dict[type[Exception], int] = {
    tipg_errors.NotFound: 404,
    tipg_errors.InvalidBBox: 400,
    tipg_errors.InvalidDatetime: 400,
    tipg_errors.InvalidLimit: 400,
    tipg_errors.InvalidPropertyName: 400,
    tipg_errors.InvalidGeometryColumnName: 400,
    tipg_errors.InvalidDatetimeColumnName: 400,
    tipg_errors.MissingDatetimeColumn: 400,
    tipg_errors.MissingGeometryColumn: 400,
    tipg_errors.NoPrimaryKey: 400,
    tipg_errors.MissingFunctionParameter: 400,
}


def _one_line(text: str, limit: int = 200) -> str:
    return " ".join(str(text).split())[:limit]


def _postgres_error(request: Request, exc: asyncpg.PostgresError) -> JSONResponse:
    """A database error, classified by its SQLSTATE and never quoted: the details (SQL,
    server version, object names) go to the service's log only."""
    state = getattr(exc, "sqlstate", "") or ""
    log.warning("database error %s on %s: %s", state, request.url.path, _one_line(str(exc)))
    if state.startswith("22"):
        return JSONResponse({"detail": "a value in the request does not fit the data "
                                       "(type or range)"}, status_code=400)
    if state.startswith("42") or state == "XX000":  # XX000: PostGIS refusing a geometry
        return JSONResponse({"detail": "the request does not fit this collection's "
                                       "properties (types or operators)"}, status_code=400)
    if state in ("57014", "55P03") or state.startswith("53"):
        return JSONResponse({"detail": "the database is busy or the request took too long; "
                                       "try a narrower request"}, status_code=503)
    return JSONResponse({"detail": "internal error (the service's log has the details)"},
                        status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """tipg's own errors with their status, everything else without internal text."""

    def client_error(status: int):
        def handler(request: Request, exc: Exception) -> JSONResponse:
            return JSONResponse({"detail": _one_line(str(exc))}, status_code=status)
        return handler

    for cls, status in _CLIENT_ERRORS.items():
        app.add_exception_handler(cls, client_error(status))

    def tipg_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("tipg error on %s: %s", request.url.path, _one_line(str(exc)))
        return JSONResponse({"detail": "internal error (the service's log has the details)"},
                            status_code=500)

    def tile_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": "tile outside the tile matrix set"}, status_code=404)

    def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for e in exc.errors()[:3]:
            where = ".".join(str(x) for x in e.get("loc", ())[1:]) or "request"
            parts.append(f"{where}: {e.get('msg', 'invalid')}")
        return JSONResponse({"detail": _one_line("; ".join(parts))}, status_code=400)

    def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else "bad request"
        return JSONResponse({"detail": _one_line(detail)}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s", request.url.path, exc_info=exc)
        return JSONResponse({"detail": "internal error (the service's log has the details)"},
                            status_code=500)

    app.add_exception_handler(tipg_errors.TiPgError, tipg_error)
    app.add_exception_handler(morecantile.errors.MorecantileError, tile_error)
    app.add_exception_handler(asyncpg.PostgresError, _postgres_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
