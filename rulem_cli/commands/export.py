"""`rulem-db export FILE.gpkg`: every published layer, the balances and the findings in one
GeoPackage, for people without database access."""

from __future__ import annotations

import argparse
from pathlib import Path

from rulem_cli.output import add_format_option, emit
from rulem_db import config


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write every published view to one GeoPackage")
    p.add_argument("file", type=Path, metavar="FILE.gpkg", help="GeoPackage to write")
    p.add_argument("--history", action="store_true",
                   help="also the history views (every version of every layer)")
    p.add_argument("--overwrite", action="store_true", help="replace FILE.gpkg if it exists")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rulem_db.reports import export

    url = config.database_url(args.db)
    layers = export.export(url, args.file, history=args.history, overwrite=args.overwrite)
    rows = [(layer.name, layer.geometry_type or "none",
             f"EPSG:{layer.srid}" if layer.srid else "", layer.features) for layer in layers]
    title = None
    if args.format == "table":
        title = f"{args.file}: {len(layers)} layers, {sum(r[3] for r in rows)} features"
    emit(("layer", "geometry", "crs", "features"), rows, args.format, title=title)
    return 0
