"""`rulem-db ingest LAYER FILE`: load a delivered GIS file (or an attribute CSV) into a layer,
validated and versioned, all or nothing. See docs/ingest.md.

On refusal every problem is printed, one line each, to stderr and the exit status is non-zero;
the database is exactly as it was. After every ingest, one line names the file's fields that
feed no column (they stay in source_attributes), with the mapping-file line for those that
look like a column the file does not deliver.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rulem_cli.output import add_format_option, emit
from rulem_db import config
from rulem_db.catalogue.layers import BY_NAME


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest", help="load a GIS file or CSV into a layer (validated, versioned, all or nothing)",
        description="Load FILE into LAYER. `ingest delineation FILE` records one delineation "
                    "(status submitted) with the wetland polygons in FILE and its study area; "
                    "an attribute CSV for delineation changes existing delineations (status, "
                    "TEP findings).")
    p.add_argument("layer", metavar="LAYER", choices=sorted(BY_NAME),
                   help="layer to load: " + ", ".join(sorted(BY_NAME)))
    p.add_argument("file", metavar="FILE", type=Path,
                   help="GeoPackage, Shapefile (or a zip of it), GeoJSON/TopoJSON, zipped File "
                        "Geodatabase, GeoParquet, or CSV (WKT column, or attributes only)")
    p.add_argument("--crs", metavar="EPSG:N", help="the file's CRS, when it declares none "
                   "(or declares a wrong one)")
    p.add_argument("--mapping", metavar="FILE", type=Path,
                   help="field mapping file (TOML or JSON): source fields and values to ours")
    p.add_argument("--permit", metavar="NO", help="the permit the file's features belong to")
    p.add_argument("--study-area", metavar="FILE", type=Path,
                   help="delineation only: the study area polygons (default: the parcels its "
                        "wetlands touch, else their convex hull)")
    p.add_argument("--delineation", metavar="NO",
                   help="delineation number (default: the next D-<year>-<nn>); an existing, "
                        "unapproved number revises that delineation")
    p.add_argument("--records", action="store_true",
                   help="delineation only: FILE holds delineation records with their study "
                        "areas, not one delineation's wetlands")
    p.add_argument("--source-layer", metavar="NAME",
                   help="the layer to read from a multi-layer file (default: the one named "
                        "like LAYER, else the biggest)")
    p.add_argument("--skip-bad-features", action="store_true",
                   help="load the good features and list the bad ones in the batch record, "
                        "instead of refusing the file")
    p.add_argument("--plan-area", metavar="CODE", default=None,
                   help="plan area code (default: the only one in the database)")
    add_format_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from etl.ingest import ingest
    from etl.problems import IngestRefused, printable
    from etl.progress import for_terminal

    url = config.database_url(args.db)
    try:
        result = ingest(url, args.layer, args.file, crs=args.crs, mapping=args.mapping,
                        permit=args.permit, study_area=args.study_area,
                        skip_bad_features=args.skip_bad_features, delineation=args.delineation,
                        records=args.records, source_layer=args.source_layer,
                        plan_area=args.plan_area, progress=for_terminal(printable(args.file.name)))
    except IngestRefused as exc:
        lines = exc.lines()
        if len(lines) > 1:
            for line in lines:
                print(line, file=sys.stderr)
        if exc.notice:
            print(printable(exc.notice), file=sys.stderr)
        raise
    rows = [("batch", result.batch_id), ("status", result.status), ("layer", result.layer),
            ("file", result.file), ("features", result.features),
            ("new", result.inserted), ("changed", result.changed), ("closed", result.closed),
            ("unchanged", result.unchanged), ("skipped", result.skipped),
            ("repaired", result.repaired), ("warnings", result.warnings)]
    if result.delineation_no:
        rows.append(("delineation", result.delineation_no))
    unmapped = result.unmapped_line
    if unmapped:
        rows.append(("unmapped", unmapped))
    if args.format == "table":
        print(printable(result.message))
        if unmapped:
            print(printable(unmapped))
        for note in result.notes[:20]:
            print(f"  {note.kind}: {note.line()}")
        if len(result.notes) > 20:
            print(f"  ... {len(result.notes) - 20} more notes: SELECT * FROM ops.batch_note "
                  f"WHERE batch_id = {result.batch_id}")
        return 0
    emit(("item", "value"), rows, args.format)
    return 0
