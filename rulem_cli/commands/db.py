"""`rulem-db db init|migrate|status|start|stop|standby`: the database itself, and a hot
standby of it on this machine (rulem_db/local/standby.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import sqlalchemy as sa

from demo import DEMO_PLAN_AREA
from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db import db as dbmod
from rulem_db.catalogue import hardening


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="create, migrate, start, stop and inspect the database")
    dsub = p.add_subparsers(dest="db_command", metavar="ACTION", required=True)

    init = dsub.add_parser("init", help="create or migrate the schema (idempotent)")
    init.add_argument("--srid", type=int, default=None,
                      help="working CRS as an EPSG code, fixed at first init (default 26915)")
    init.add_argument("--plan-area", default=DEMO_PLAN_AREA[0],
                      help="code of the plan area to register (default: %(default)s)")
    init.add_argument("--plan-name", default=DEMO_PLAN_AREA[1], help="its name")
    init.set_defaults(func=_init)

    mig = dsub.add_parser("migrate", help="bring the schema and SQL functions up to date")
    mig.set_defaults(func=_migrate)

    st = dsub.add_parser("status", help="where the database is and what it holds")
    add_format_option(st)
    st.set_defaults(func=_status)
    dsub.add_parser("start", help="start the embedded cluster").set_defaults(func=_start)
    dsub.add_parser("stop", help="stop the embedded cluster").set_defaults(func=_stop)

    sb = dsub.add_parser(
        "standby", help="a read-only hot standby of the database on this machine",
        description="A second PostgreSQL cluster that follows the primary by streaming "
                    "replication and answers reads (GIS, BI, balance, export) while the "
                    "primary recomputes; rulem-db refuses its writing commands there. The "
                    "primary is --db (a superuser URL), else the embedded default.")
    ssub = sb.add_subparsers(dest="standby_command", metavar="ACTION", required=True)
    create = ssub.add_parser("create", help="copy the primary (pg_basebackup) and start it")
    create.add_argument("--port", type=int, required=True, help="the standby's port")
    create.add_argument("--host", default="127.0.0.1",
                        help="address it listens on (default: %(default)s)")
    create.add_argument("--dir", type=Path, required=True,
                        help="new or empty folder for its data")
    create.set_defaults(func=_standby)
    for action, text in (("start", "start the standby"), ("stop", "stop the standby"),
                         ("remove", "stop it, delete its folder, drop its slot on the primary")):
        q = ssub.add_parser(action, help=text)
        q.add_argument("--dir", type=Path, required=True, help="its data folder")
        q.set_defaults(func=_standby)


def _init(args: argparse.Namespace) -> int:
    url = config.database_url(args.db, owner=True)
    dbmod.migrate(url, srid=args.srid, plan_area=(args.plan_area, args.plan_name))
    with dbmod.connect(url) as conn:
        srid = conn.execute(sa.text("SELECT ops.working_srid()")).scalar()
        gaps = hardening.gaps(conn)
    print(f"database ready: {config.redact(url)} (working CRS EPSG:{srid}, "
          f"plan area {args.plan_area})")
    if gaps:
        print(f"warning: {hardening.advice(gaps)}", file=sys.stderr)
    return 0


def _migrate(args: argparse.Namespace) -> int:
    url = config.database_url(args.db, owner=True)
    dbmod.migrate(url)
    print(f"schema up to date: {config.redact(url)}")
    return 0


def _status(args: argparse.Namespace) -> int:
    rows: list[tuple[str, object]] = []
    if not (args.db or _env_url()):
        from rulem_db.local import cluster

        for key, value in cluster.status().items():
            rows.append((f"embedded.{key}", value))
    try:
        url = config.database_url(args.db, owner=True)
        with dbmod.connect(url) as conn:
            rows.append(("url", config.redact(url)))
            rows.append(("server", conn.execute(sa.text("SHOW server_version")).scalar()))
            rows.append(("postgis", conn.execute(sa.text(
                "SELECT extversion FROM pg_extension WHERE extname = 'postgis'")).scalar()))
            standby, replayed = conn.execute(sa.text(
                "SELECT pg_is_in_recovery(), pg_last_xact_replay_timestamp()")).one()
            rows.append(("role", "primary" if not standby else
                         f"read-only standby, last transaction replayed {replayed}"))
            initialised = conn.execute(sa.text("SELECT to_regclass('ops.setting')")).scalar()
            if initialised:
                rows.append(("schema_revision", conn.execute(sa.text(
                    "SELECT version_num FROM ops.alembic_version")).scalar()))
                rows.append(("working_srid", conn.execute(sa.text(
                    "SELECT ops.working_srid()")).scalar()))
                gaps = hardening.gaps(conn)
                rows.append(("hardening", hardening.advice(gaps) if gaps else "applied"))
                for code, name in conn.execute(sa.text(
                        "SELECT code, name FROM core.plan_area ORDER BY plan_area_id")):
                    rows.append((f"plan_area.{code}", name))
            else:
                rows.append(("schema", "not initialised: run rulem-db db init"))
    except Exception as exc:  # status reports, it does not fail on a stopped server
        rows.append(("error", " ".join(str(exc).split())))
    emit(("item", "value"), rows, args.format)
    return 0


def _env_url() -> str | None:
    import os

    return os.environ.get("RULEM_DATABASE_URL")


def _start(args: argparse.Namespace) -> int:
    from rulem_db.local import cluster

    emb = cluster.ensure_embedded(progress=print)  # creates it on first use
    print(f"embedded cluster running on {emb.host}:{emb.port}, database {emb.database}")
    return 0


def _stop(args: argparse.Namespace) -> int:
    from rulem_db.local import cluster

    cluster.stop()
    print("embedded cluster stopped")
    return 0


def _standby(args: argparse.Namespace) -> int:
    from rulem_db.local import standby

    action = args.standby_command
    if action in ("start", "stop"):
        getattr(standby, action)(standby.load(args.dir))
        print(f"standby in {args.dir} {'running' if action == 'start' else 'stopped'}")
        return 0
    primary = _primary_superuser(args.db)
    if action == "remove":
        standby.remove(primary, standby.load(args.dir))
        print(f"standby in {args.dir} removed, its slot on the primary dropped")
        return 0
    made = standby.create(primary, args.dir, args.port, host=args.host, progress=print)
    example = sa.engine.make_url(standby.reader_url(config.database_url(args.db), made)) \
        .set(drivername="postgresql").render_as_string(hide_password=True)
    print(f"standby ready: read-only on {made.host}:{made.port}, data in {made.data_dir}, "
          f"log {made.log_file}")
    print(f"the primary's logins work on it, e.g. --db {example}")
    return 0


def _primary_superuser(cli_value: str | None) -> str:
    """--db (or $RULEM_DATABASE_URL) as given, else the embedded default's superuser."""
    url = cli_value or _env_url()
    if url:
        return config.normalize_url(url)
    from rulem_db.local import cluster

    return cluster.ensure_embedded().admin_url
