"""`rulem-db serve [--host 127.0.0.1] [--port 8080]`: the web service (rulem_web) under
uvicorn: OGC API Features and Tiles over schema pub, the balance map at /, the 2(a) screen,
/healthz (docs/publishing.md).

Why the checks before uvicorn starts: a login that can write must never serve the web, and a
database without the web schema (or with another tipg's) would fail on the first request
instead of at start; both are refused here in one line.
"""

from __future__ import annotations

import argparse
import os
import sys

from rulem_db.config import redact


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="serve pub over OGC API Features/Tiles, the balance map "
                                     "and the 2(a) screen (read-only, as rulem_gis)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 behind a proxy "
                        "in a container)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--set-role", metavar="ROLE",
                   help="SET ROLE to this (e.g. rulem_gis) on every connection, for a NOINHERIT "
                        "login in it; a login that could switch back to anything wider "
                        "(a superuser, a writer) is refused")
    p.add_argument("--plan-area", metavar="CODE",
                   help="the plan area the screen answers for (default: the first)")
    p.add_argument("--cors-origin", action="append", default=[], metavar="ORIGIN",
                   help="a web origin allowed to call the service from a browser (repeat; "
                        "'*' for any)")
    p.add_argument("--root-path", default=os.environ.get("RULEM_WEB_ROOT_PATH", ""),
                   help="the base path a reverse proxy serves this under, if fixed (it may "
                        "also send X-Forwarded-Prefix)")
    p.add_argument("--forwarded-allow-ips", default="127.0.0.1,::1",
                   help="proxies trusted for X-Forwarded-Proto/-For/-Prefix (comma-separated)")
    p.add_argument("--connections", type=int, default=10,
                   help="database connections at most (default 10)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_web import basemap, login
    from rulem_web.guard import valid_prefix

    if not valid_prefix(args.root_path or "/"):
        print(f"rulem-db serve: --root-path {args.root_path[:60]!r} is not a path of letters, "
              "digits and . _ ~ -", file=sys.stderr)
        return 2
    try:  # read again by each worker (rulem_web.main); refused here, before anything starts
        basemap.from_environment()
    except basemap.BasemapError as exc:
        print(f"rulem-db serve: {exc}", file=sys.stderr)
        return 2
    url = args.db or os.environ.get("RULEM_DATABASE_URL")
    if not url:  # the embedded default: its own web login, made here if missing
        url = login.embedded_reader_url()
    role = login.check_reader(url, args.set_role)
    # the settings travel to uvicorn's factory (and to every worker) through the environment
    os.environ["RULEM_WEB_DSN"] = login.asyncpg_dsn(url)
    os.environ["RULEM_WEB_SET_ROLE"] = args.set_role or ""
    os.environ["RULEM_WEB_PLAN_AREA"] = args.plan_area or ""
    os.environ["RULEM_WEB_CORS"] = ",".join(args.cors_origin)
    os.environ["RULEM_WEB_ROOT_PATH"] = args.root_path
    os.environ["RULEM_WEB_PROXIES"] = args.forwarded_allow_ips
    os.environ["RULEM_WEB_CONNECTIONS"] = str(args.connections)
    import uvicorn

    print(f"rulem-db serve: http://{args.host}:{args.port}/ reading "
          f"{redact(login.sync_url(url))} as {role}", flush=True)
    uvicorn.run("rulem_web.main:app", factory=True, host=args.host, port=args.port,
                workers=args.workers, proxy_headers=True,
                forwarded_allow_ips=args.forwarded_allow_ips, log_level="warning",
                access_log=False)
    return 0
