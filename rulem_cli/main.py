"""The `rulem-db` command line: one parser, one subcommand module each under
rulem_cli/commands, one error policy (exit 0 on success; otherwise a one-line reason on stderr
and a non-zero status, with the traceback only under --debug)."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from rulem_cli import commands, read_only

EXIT_ERROR = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rulem-db",
        description="System of record for Rice Creek Watershed District Rule M: versioned "
                    "wetland layers, the 1:1 area-basis replacement ledger and the rule checks.")
    parser.add_argument("--db", metavar="URL",
                        help="database URL (default: $RULEM_DATABASE_URL, else the embedded "
                             "local PostGIS cluster)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        read_only.refuse_on_standby(args)  # a writing command on a standby: one line, nothing done
        result = args.func(args)
    except KeyboardInterrupt:
        print("rulem-db: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line for people, the traceback on request
        if args.debug:
            raise
        code = getattr(exc, "exit_code", EXIT_ERROR)
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"rulem-db {args.command}: {message}", file=sys.stderr)
        return code
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
